"""CUDA C++ solutions: recognise them, keep their builds in one cache, build each once before timing.

A CUDA C++ solution compiles itself with torch.utils.cpp_extension.load_inline (or load) when ModelNew
is constructed. load_inline keys its build folder by the extension's name (our solutions put a hash of
their source in it) under TORCH_EXTENSIONS_DIR, and a later process finds the library there with nothing
to recompile; so the harness points every process at one persistent folder, and `bench` builds every
selected solution once, in parallel children, outside every worker's timeout and timer: in the background
(Prebuilds) while the first problems' baselines run, each problem's solutions waiting for their own builds
only (on the H200 a CUTLASS build takes 88 s, the others 32-40 s: 2026-12-01).
Each build (one load_inline call) first takes one of the machine's build slots (harness/build_slots.py), so
the parallel builds never hold more memory than the machine has free.
Without a CUDA device such a solution is skipped (neither a pass nor a failure); a missing compiler or a
compile error becomes one line naming the file, recorded as that solution's failure.

Run as `python -m harness.cuda_build PROBLEM SOLUTION`: build one solution, print one JSON line.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import nullcontext
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from harness import build_slots
from harness.cache_dirs import cache_root, extensions_folder_name
from harness.children.launcher import child_env, run_to_end
from harness.integrity.static_check import builds_cuda_extension
from harness.spec import Options

SKIP_REASON = "CUDA C++ solution: needs a CUDA device"
FAILURES_ENV = "KSUITE_CUDA_BUILD_FAILURES"  # JSON {solution path: failure} from bench's prebuild
ERROR_LINE = re.compile(r"\berror\b\s*:|undefined reference|undefined symbol|cannot find -l", re.IGNORECASE)


def is_cuda_solution(path: Path | str | None) -> bool:
    """The file builds a CUDA extension (the static check's own test, so the two never disagree)."""
    if path is None or not Path(path).is_file():
        return False
    try:
        return builds_cuda_extension(ast.parse(Path(path).read_text()))
    except SyntaxError:
        return False  # the loader reports it, with its line


def default_extensions_dir() -> Path:
    """Per Python, torch and GPU, under the cache root (harness/cache_dirs.py: KSUITE_CACHE_DIR, else
    ~/.cache/kernelsuite): a library built against one torch must not be loaded by another (the name
    hashes only the solution's source)."""
    return cache_root() / "torch_extensions" / extensions_folder_name()


def with_extensions_dir(env: dict) -> dict:
    """`env` with TORCH_EXTENSIONS_DIR set to the persistent cache, unless the user chose one."""
    if not env.get("TORCH_EXTENSIONS_DIR"):
        env["TORCH_EXTENSIONS_DIR"] = str(default_extensions_dir())
    return env


def shown(path: Path | str) -> str:
    """The path relative to the working folder when it lies inside it (solutions/x/y.py), else absolute."""
    path = Path(path).absolute()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def compiler_problem() -> str | None:
    """Why load_inline cannot compile CUDA here (it runs CUDA_HOME/bin/nvcc), or None."""
    import torch
    from torch.utils import cpp_extension

    if torch.version.cuda is None:  # a CPU build of torch looks for no compiler at all
        return f"CUDA C++ build needs a CUDA build of torch (this one is {torch.__version__})"
    home = cpp_extension.CUDA_HOME
    if home is None:
        return "CUDA C++ build needs nvcc: none on PATH and CUDA_HOME unset"
    nvcc = os.environ.get("PYTORCH_NVCC") or os.path.join(home, "bin", "nvcc")
    if not (os.path.isfile(nvcc) or shutil.which(nvcc)):
        return f"CUDA C++ build needs nvcc: none at {nvcc}"
    return None


def first_error(text: str) -> str:
    """The first compiler or linker error line, folders stripped; else the last line of the output."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found = next((line for line in lines if ERROR_LINE.search(line)), lines[-1] if lines else "no output")
    return re.sub(r"(?:[^\s:('\"]*/)+", "", found)


def log_path(solution: Path | str) -> Path:
    solution = Path(solution)
    return Path(with_extensions_dir(dict(os.environ))["TORCH_EXTENSIONS_DIR"]) / "logs" / \
        f"{solution.parent.name}_{solution.stem}.log"


def describe_failure(solution: Path | str, exc: BaseException) -> str:
    """One line for the record: the first compiler error (or the exception), and where the full log is."""
    text = str(exc)
    log = log_path(solution)
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)) + "\n" + text + "\n")
        where = f" (full log: {log})"
    except OSError as err:
        where = f" (no log: {err})"
    if text.startswith("Error building extension"):
        return f"{shown(solution)}: CUDA C++ build failed: {first_error(text)}{where}"
    first = text.splitlines()[0] if text.strip() else ""
    return f"{shown(solution)}: building ModelNew failed: {type(exc).__name__}: {first}{where}"


def construct(make: Callable[[], object], solution: Path | str) -> str | None:
    """Construct the candidate once (ModelNew.__init__ builds its extension); None if that worked,
    else the one-line failure."""
    problem = compiler_problem()
    if problem:
        return f"{shown(solution)}: {problem}"
    try:
        make()
    except Exception as exc:  # noqa: BLE001 - a build that fails is the solution's recorded failure
        return describe_failure(solution, getattr(exc, "original", None) or exc)  # unwrap harness/blame.py
    return None


def known_failure(solution: Path | str) -> str | None:
    """The failure bench's prebuild recorded for this file in this run, so no worker builds it again."""
    failures = json.loads(os.environ.get(FAILURES_ENV) or "{}")
    return failures.get(os.path.abspath(solution))


@dataclass(frozen=True)
class Build:
    """One solution's prebuild: built (compiled now), cached (found in TORCH_EXTENSIONS_DIR) or failed."""

    solution: str
    status: str
    seconds: float
    error: str | None = None

    def line(self) -> str:
        return self.error or f"{self.status} {shown(self.solution)} in {self.seconds:.1f} s"


class Prebuilds:
    """The CUDA C++ solutions among (problem file, solution file) pairs, each built once in a child, in
    parallel, started at once in the background. `wait` blocks for some (or all) of them; each finished
    build's line goes to `echo` from the waiting thread, once."""

    def __init__(self, pairs: list[tuple[Path, Path]], env: dict, timeout_s: float,
                 echo: Callable[[str], None] = print):
        todo = list(dict.fromkeys((os.path.abspath(p), os.path.abspath(s)) for p, s in pairs if is_cuda_solution(s)))
        self.echo, self.failures, self.reported = echo, {}, set()
        # one count for every child: each builds in one of this many slots (harness/build_slots.py), sized by
        # the memory free now, before the builds take theirs
        env = {**env, build_slots.SLOTS_ENV: str(build_slots.configured_count(env))}
        self.pool = ThreadPoolExecutor(max(1, min(len(todo), (os.cpu_count() or 2) // 2))) if todo else None
        self.futures = {solution: self.pool.submit(build_in_child, problem, solution, env, timeout_s)
                        for problem, solution in todo}

    def wait(self, solutions: list | None = None) -> dict[str, str]:
        """{solution path: failure} of every build finished so far, after those of `solutions` (None: all)."""
        names = self.futures if solutions is None else [os.path.abspath(s) for s in solutions if s]
        wait([self.futures[n] for n in names if n in self.futures])
        for solution, future in self.futures.items():
            if future.done() and solution not in self.reported:
                self.reported.add(solution)
                build = future.result()
                self.echo(build.line())
                if build.error and build.status != "skipped":  # a skipped one the worker skips again, itself
                    self.failures[build.solution] = build.error
        return dict(self.failures)

    def settle(self, timeout_s: float) -> None:
        """Wait up to timeout_s for every build: builds found in the cache finish within a second or two."""
        wait(list(self.futures.values()), timeout=timeout_s)

    def pending(self, solutions: list) -> bool:
        """Whether any of these solutions' builds is still running or queued."""
        names = [os.path.abspath(s) for s in solutions if s]
        return any(not self.futures[n].done() for n in names if n in self.futures)

    def options_for(self, options: Options, solutions: list | None = None) -> Options:
        """`options` carrying the failures (FAILURES_ENV) once these solutions' builds are done."""
        return with_failures(options, self.wait(solutions))

    def close(self) -> None:
        """Builds not started yet are dropped (an interrupted bench); running ones end in their timeout."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


BUILD_TIMEOUT_MIN_S = 300.0  # CUTLASS's attention built in 90-130 s cold on the H200's host, beside the others


def build_timeout(timeout_s: float) -> float:
    """A build's limit: the run's --timeout bounds a candidate's run, and nvcc (not the candidate) gets at least
    BUILD_TIMEOUT_MIN_S, so a held-out bench with --timeout 60 does not cut a CUTLASS build (it did: every
    record of run 20261203-155925 was "build timed out after 60 s")."""
    return max(timeout_s, BUILD_TIMEOUT_MIN_S)


def start_prebuilds(pairs: list[tuple[Path, Path]], options: Options, echo: Callable[[str], None] = print) -> Prebuilds:
    """Prebuilds with the workers' environment and the build limit."""
    return Prebuilds(pairs, child_env(options), build_timeout(options.timeout_s), echo)


def with_failures(options: Options, failures: dict[str, str]) -> Options:
    if not failures:
        return options
    return replace(options, extra_env={**options.extra_env, FAILURES_ENV: json.dumps(failures)})


def prebuild(pairs: list[tuple[Path, Path]], env: dict, timeout_s: float,
             echo: Callable[[str], None] = print) -> dict[str, str]:
    """Build every CUDA C++ solution of the pairs and wait: {solution path: failure} for FAILURES_ENV."""
    builds = Prebuilds(pairs, env, timeout_s, echo)
    try:
        return builds.wait()
    finally:
        builds.close()


def prebuild_for(pairs: list[tuple[Path, Path]], options: Options, echo: Callable[[str], None] = print) -> Options:
    """Prebuild with the workers' environment; the options to run with carry the failures to them."""
    return with_failures(options, prebuild(pairs, child_env(options), build_timeout(options.timeout_s), echo))


def build_in_child(problem: str, solution: str, env: dict, timeout_s: float) -> Build:
    started = time.perf_counter()
    done = run_to_end("harness.cuda_build", [problem, solution], env, timeout_s)
    if done.timed_out:
        return Build(solution, "failed", timeout_s,
                     f"{shown(solution)}: CUDA C++ build timed out after {timeout_s:g} s")
    try:
        return Build(**json.loads(done.stdout.strip().splitlines()[-1]))
    except (IndexError, ValueError, TypeError):
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return Build(solution, "failed", time.perf_counter() - started,
                     f"{shown(solution)}: CUDA C++ build crashed (exit code {done.returncode}): {last}")


class _LibraryWatch:
    """Wraps load_inline / load (before the candidate's import binds them) to see whether a call wrote a
    new library into its build folder (built) or found one there (cached)."""

    def __init__(self):
        from torch.utils import cpp_extension

        self.rebuilt = False
        for name in ("load_inline", "load"):
            setattr(cpp_extension, name, self._watch(getattr(cpp_extension, name)))

    def _watch(self, builder):
        def watched(*args, **kwargs):
            name = args[0] if args else kwargs.get("name", "")
            folder = Path(kwargs.get("build_directory") or Path(os.environ["TORCH_EXTENSIONS_DIR"]) / name)
            before = _libraries(folder)
            # a library already there loads in a second; a build waits for one of the machine's slots
            slot = nullcontext() if before else build_slots.build_slot(build_slots.configured_count())
            try:
                with slot:
                    return builder(*args, **kwargs)
            finally:
                self.rebuilt = self.rebuilt or _libraries(folder) != before
        return watched


def _libraries(folder: Path) -> dict:
    return {p.name: p.stat().st_mtime_ns for p in folder.glob("*.so")} if folder.is_dir() else {}


def build_one(problem_path: str, solution_path: str) -> Build:
    """In the child: construct ModelNew as the harness does (first small shape, first dtype, on CUDA)."""
    from harness.inputs import build_candidate
    from harness.loader import LoadError, load_candidate_class, load_problem, unavailable_here

    with_extensions_dir(os.environ)
    started = time.perf_counter()
    watch = _LibraryWatch()
    try:
        problem = load_problem(Path(problem_path))
        cls = load_candidate_class(Path(solution_path), "ksuite_prebuild_candidate")
    except LoadError as exc:
        error = str(exc).splitlines()[0]
    else:
        reason = unavailable_here(cls)
        if reason:  # an optional dependency missing here: the worker skips it, naming why
            return Build(os.path.abspath(solution_path), "skipped", round(time.perf_counter() - started, 2),
                         f"{shown(solution_path)}: skipped: {reason}")
        shape, dtype = problem.meta.small_shapes[0], problem.meta.dtypes[0]
        error = construct(lambda: build_candidate(problem, cls, shape, dtype, 0, "cuda"), solution_path)
    status = "failed" if error else ("built" if watch.rebuilt else "cached")
    return Build(os.path.abspath(solution_path), status, round(time.perf_counter() - started, 2), error)


if __name__ == "__main__":
    print(json.dumps(asdict(build_one(sys.argv[1], sys.argv[2]))), flush=True)
