"""`--strategy agent`: a workspace for an external coding agent, autoresearch-style.

One editable file (candidate.py), a read-only copy of the problem (the frozen evaluator is `ksuite`
itself), and program.md with the loop and the commands. The agent records each attempt with
`ksuite optimize PROBLEM --record candidate.py -m "what changed"`, which runs one experiment through the
same loop: same check, same side-by-side timing, same keep rule, same ledger.
"""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

from suite.optimize.proposal import Context, Proposal

PROGRAM = """# Optimise `{problem}` ({gpu})

You improve one file: `candidate.py` (a copy of `{start}`). `problem.py` is the reference, read-only.
Correctness is judged against the reference in float64 at every shape and dtype; speed against the
current best, timed side by side in one process. Nothing else counts.

## The loop

1. Edit `candidate.py` (one idea per experiment: tile sizes in TUNABLES, fewer passes, better launch shape).
2. `ksuite check {problem_path} {workspace}/candidate.py`: the five correctness stages. Fix any FAIL first.
3. `ksuite bench {problem_path} --solution {workspace}/candidate.py`: its time beside the baselines.
4. `ksuite optimize {problem} --record {workspace}/candidate.py -m "what you changed"`: one experiment.
   It is kept only if correct and faster than the best by more than 1 % and the timing noise; the kept
   version goes to `{kept}`, and every attempt is a row in `{ledger}`.
5. Read the ledger's last row (status kept|discarded|crashed|timed-out), then go to 1. After a discard,
   start again from the kept file: `cp {kept} {workspace}/candidate.py` (or from `{start_path}` if
   nothing is kept yet).

Before spending a timed run on an idea, `ksuite inspect {problem_path} {workspace}/candidate.py` shows what
the compiler made of it (registers, spills, blocks per SM, access widths, bytes in flight, tensor-core
instructions), with no GPU time.

Stop when {stop}. Never edit `problem.py`, the harness or the ledger; never special-case shapes or
inputs of the check; never cache results between calls.
"""


def write_workspace(folder: Path, problem_path: Path, start_path: Path, state: dict) -> Path:
    """The agent's folder; `state` (problem, kept, ledger, run ...) is saved for --record."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(start_path, folder / "candidate.py")
    frozen = folder / "problem.py"
    if frozen.exists():
        frozen.chmod(stat.S_IWUSR | stat.S_IRUSR)
    shutil.copy(problem_path, frozen)
    frozen.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    (folder / "program.md").write_text(PROGRAM.format(workspace=folder, problem_path=problem_path,
                                                      start_path=start_path, **state))
    (folder / "state.json").write_text(json.dumps({**state, "start_path": str(start_path)}, indent=2) + "\n")
    return folder


def read_state(folder: Path) -> dict:
    return json.loads((Path(folder) / "state.json").read_text())


class RecordProposer:
    """Hands the loop one file the agent wrote, then nothing more."""

    name = "agent"

    def __init__(self, path: Path, description: str):
        self.path, self.description, self.done = Path(path), description, False

    def propose(self, context: Context) -> Proposal | None:
        if self.done:
            return None
        self.done = True
        return Proposal(f"agent: {self.description}", self.path.read_text())
