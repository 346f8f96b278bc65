"""A warm worker for the optimisation loop: one child process that checks and times request after request.

A fresh child per experiment spends most of its time importing torch, building the reference and
compiling; the table search (suite/optimize/table.py) asks hundreds of small questions of one problem
("is this bucket's candidate correct at these shapes, and faster than the best, side by side?"), so
one child keeps the problem, the float64 references and every compiled kernel between them. A crash,
a hang or a poisoned CUDA context costs one request: the parent kills the child and starts another.

Protocol: the parent writes one JSON request per line on the child's stdin and waits, with a timeout,
for the answer file the request names. A request of kind "same" asks only whether two files put the same
work on the GPU (nothing timed; the table search skips such a candidate).
Child: `python -m harness.jobs.tuning_session PROBLEM OPTIONS_JSON`.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.children.launcher import Child, child_env
from harness.spec import Options, ProblemRef

POLL_S = 0.02


@dataclass
class PairedShape:
    """One (shape, dtype): is the candidate correct, and per-round medians of best and candidate. best_error:
    why the best is wrong there, when the request asked to check it too (`ksuite ab`, where neither side is
    trusted); nothing is timed then."""

    shape: dict
    dtype: str
    correct: bool
    error: str | None = None
    best_us: list[float] = field(default_factory=list)
    cand_us: list[float] = field(default_factory=list)
    best_error: str | None = None


@dataclass
class SessionAnswer:
    status: str  # ok | crashed | timed-out
    shapes: list[PairedShape] = field(default_factory=list)
    message: str = ""
    seconds: float = 0.0


class TuningSession:
    """Parent side: start the child once, send requests, restart it after a crash or a hang."""

    def __init__(self, problem: ProblemRef, options: Options):
        self.problem, self.options = problem, options
        self.folder = Path(tempfile.mkdtemp(prefix="ksuite-session-"))
        self.child: Child | None = None
        self.requests = 0

    def _start(self) -> None:
        self.log = self.folder / f"stderr-{self.requests}.txt"
        opts = json.dumps({**asdict(self.options), "dtypes": list(self.options.dtypes), "done": []})
        self.child = Child("harness.jobs.tuning_session", [str(Path(self.problem.path).resolve()), opts],
                           child_env(self.options), self.log, stdin=True)

    def _stop(self) -> None:
        if self.child is not None:
            self.child.stop()  # its output stays on disk: the crash message was read from it
        self.child = None

    def _ask(self, request: dict, timeout_s: float) -> tuple[str, dict, str]:
        """Send one request and wait for its answer: (status ok | crashed | timed-out, the answer's data, why
        not ok). A crash, a hang or a fatal answer stops the child; the next request starts another."""
        if self.child is None or self.child.poll() is not None:
            self._start()
        self.requests += 1
        answer = self.folder / f"answer-{self.requests}.json"
        self.child.send(json.dumps({**request, "answer": str(answer), "n": self.requests}))  # a dead child: below
        started = time.monotonic()
        while not answer.is_file():
            if self.child.poll() is not None:
                message = self.child.exit_line()
                self._stop()
                return "crashed", {}, message
            if time.monotonic() - started > timeout_s:
                self._stop()
                return "timed-out", {}, f"timed out after {timeout_s:g} s (hang?)"
            time.sleep(POLL_S)
        data = json.loads(answer.read_text())
        answer.unlink()
        if data.get("fatal"):  # the child's CUDA context is gone: it exits, the next request starts anew
            self._stop()
            return "crashed", data, data["fatal"]
        return "ok", data, ""

    def compare(self, best: Path, candidate: Path, shapes: list[dict], dtypes: list[str], rounds: int,
                timeout_s: float, check_best: bool = False) -> SessionAnswer:
        """Check `candidate` (with check_best, `best` too) at every (shape, dtype), then time it against `best`,
        interleaved."""
        started = time.monotonic()
        status, data, message = self._ask({"best": str(best), "candidate": str(candidate), "shapes": shapes,
                                           "dtypes": dtypes, "rounds": rounds, "check_best": check_best}, timeout_s)
        seconds = time.monotonic() - started
        if status != "ok":
            return SessionAnswer(status, message=message, seconds=seconds)
        return SessionAnswer("ok", [PairedShape(**s) for s in data["shapes"]], seconds=seconds)

    def same_launches(self, best: Path, candidate: Path, shapes: list[dict], dtypes: list[str],
                      timeout_s: float) -> str | None:
        """Why `candidate` need not be timed against `best`: at every (shape, dtype) one forward call of each
        launches the same Triton kernels (PTX, grid, options, arguments) and the same torch operations
        (harness/machine_code/launch_record.py). None when anything differs, or cannot be told (no Triton
        launch, the interpreter, a failure: the comparison then reports it)."""
        status, data, _ = self._ask({"kind": "same", "best": str(best), "candidate": str(candidate),
                                     "shapes": shapes, "dtypes": dtypes}, timeout_s)
        return data.get("same") if status == "ok" else None

    def close(self) -> None:
        self._stop()


def paired_rounds(timer, best, cand, rounds: int, batch: int = 5) -> tuple[list[float], list[float]]:
    """Per-round medians of `batch` calls each, best and candidate in turn, the order flipped every
    round, so a drift (clocks, a neighbour) lands on both."""
    import statistics

    timer.prepare(best, cand)  # one spin before each call, long enough for the slower launch path
    best_us, cand_us = [], []
    for r in range(rounds):
        order = ((best, best_us), (cand, cand_us)) if r % 2 == 0 else ((cand, cand_us), (best, best_us))
        for fn, out in order:
            out.append(statistics.median(timer.time_batch(fn, batch)))
    return best_us, cand_us


class SessionChild:
    """Child side: the problem loaded once, candidates imported as files, answers written as files."""

    def __init__(self, problem_path: str, options: dict):
        from harness.loader import load_problem
        from harness.timing import CudaTimer

        self.options = Options(**{**options, "dtypes": tuple(options.get("dtypes", ())), "done": ()})
        self.device = "cpu" if self.options.interpret else "cuda"
        self.problem = load_problem(Path(problem_path), "ksuite_session_problem")
        o = self.options
        self.timer = CudaTimer(o.warmup_ms, o.min_runs, o.max_runs, o.target_rse, o.budget_s, o.flush) \
            if o.time and self.device == "cuda" else None
        self.classes: dict = {}
        self.prints: dict = {}  # (file, its hash, shape, dtype) -> (fingerprint, launches): the best's, asked again

    def load(self, path: str):
        from harness.loader import load_candidate_class
        from harness.spec import file_hash

        key = (path, file_hash(Path(path)))
        if key not in self.classes:
            self.classes[key] = load_candidate_class(Path(path), f"ksuite_session_{len(self.classes)}")
        return self.classes[key]

    def same(self, request: dict) -> dict:
        """{"same": reason} when best and candidate put the same work on the GPU at every (shape, dtype) of
        the request, else {"same": None}. One warm call each, then one recorded call each, on one input; the
        best's fingerprints are kept, so a bucket's later questions build only the candidate."""
        import torch

        from harness.inputs import build_candidate, make_inputs
        from harness.machine_code.launch_record import recording
        from harness.spec import file_hash

        seed, launches = self.options.seed, 0

        def fingerprint(path: str, shape: dict, dtype: str) -> tuple:
            key = (path, file_hash(Path(path)), json.dumps(shape, sort_keys=True), dtype)
            if key not in self.prints:
                model = build_candidate(self.problem, self.load(path), shape, dtype, seed, self.device)
                inputs = make_inputs(self.problem, shape, dtype, seed, self.device)
                with torch.no_grad():
                    model(*inputs)
                    with recording() as record:
                        model(*inputs)
                self.prints[key] = (record.fingerprint(), len(record.launches))
            return self.prints[key]

        for shape in request["shapes"]:
            for dtype in request["dtypes"]:
                (best, n), (cand, _) = (fingerprint(request[k], shape, dtype) for k in ("best", "candidate"))
                launches = max(launches, n)
                if best is None or best != cand:
                    return {"same": None}
        pairs = len(request["shapes"]) * len(request["dtypes"])
        return {"same": f"the best's own work: the same Triton launches ({launches} a call) and torch operations "
                        f"at {'all ' if pairs > 1 else ''}{pairs} (shape, dtype) pair{'s' if pairs > 1 else ''}"}

    def handle(self, request: dict) -> dict:
        if request.get("kind") == "same":
            return self.same(request)
        from harness.correctness import Checker
        from harness.inputs import build_candidate, make_inputs
        from harness.loader import LoadError

        try:
            best_cls, cand_cls = self.load(request["best"]), self.load(request["candidate"])
        except LoadError as exc:
            return {"shapes": [asdict(PairedShape(s, d, False, str(exc))) for s in request["shapes"]
                               for d in request["dtypes"]]}
        seed = self.options.seed

        def make(cls):
            return lambda shape, dtype: build_candidate(self.problem, cls, shape, dtype, seed, self.device)

        checker = Checker(self.problem, make(cand_cls), self.device, seed)  # the weights' seed: as make()'s
        checker.trial_seed += 100 * request["n"]  # fresh inputs for every request
        best_checker = None
        if request.get("check_best"):
            best_checker = Checker(self.problem, make(best_cls), self.device, seed)
            best_checker.trial_seed += 100 * request["n"] + 50
        out = []
        for shape in request["shapes"]:
            for dtype in request["dtypes"]:
                out.append(asdict(self.one(checker, make(best_cls), shape, dtype, request["rounds"],
                                           make_inputs, best_checker)))
        return {"shapes": out}

    def one(self, checker, make_best, shape: dict, dtype: str, rounds: int, make_inputs,
            best_checker=None) -> PairedShape:
        import torch

        best_error = None
        if best_checker is not None:
            trial = best_checker.trial(shape, dtype)
            best_error = None if trial.passed and not trial.skipped else trial.detail
        first = checker.trial(shape, dtype)
        if not first.passed or first.skipped:  # skipped: the device cannot hold the shape
            return PairedShape(shape, dtype, False, first.detail, best_error=best_error)
        if best_error is not None or self.timer is None:
            return PairedShape(shape, dtype, True, best_error=best_error)
        best = make_best(shape, dtype)
        cand = checker.setup(shape, dtype).candidate
        inputs = make_inputs(self.problem, shape, dtype, checker.fresh_seed(), self.device)
        with torch.no_grad():
            best_us, cand_us = paired_rounds(self.timer, lambda: best(*inputs), lambda: cand(*inputs), rounds)
        after = checker.trial(shape, dtype)  # fresh inputs: no answer cached from the timed ones
        error = None if after.passed else f"wrong after timing on fresh inputs: {after.detail}"
        if best_checker is not None:
            best_after = best_checker.trial(shape, dtype)
            best_error = None if best_after.passed else f"wrong after timing on fresh inputs: {best_after.detail}"
        return PairedShape(shape, dtype, after.passed, error, best_us, cand_us, best_error)


def main(problem_path: str, options_json: str) -> int:
    from harness.children.launcher import exit_with_parent
    from harness.correctness import FatalDeviceError, is_fatal

    exit_with_parent()
    child = SessionChild(problem_path, json.loads(options_json))
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = child.handle(request)
        except FatalDeviceError as exc:
            answer = {"fatal": f"device error: {exc}"}
        except Exception as exc:  # noqa: BLE001 - the candidate's failure, told to the parent
            message = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if request.get("kind") == "same":  # answered "cannot tell"; the reason stays in the child's log
                print(f"same-work question {request['n']}: {message}", file=sys.stderr, flush=True)
            answer = {"fatal": f"device error: {message}"} if is_fatal(exc) else {"same": None} \
                if request.get("kind") == "same" else {
                "shapes": [asdict(PairedShape(s, d, False, message)) for s in request["shapes"]
                           for d in request["dtypes"]]}
        tmp = Path(request["answer"] + ".tmp")
        tmp.write_text(json.dumps(answer))
        os.replace(tmp, request["answer"])
        if "fatal" in answer:
            return 4
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
