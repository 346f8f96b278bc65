"""The exit codes of every `ksuite` command, in one table, so a script can tell the outcomes apart.

0, 1 and 2 mean the same in every command. The send path of `ksuite submit gpumode` adds one code per
kind of server or network failure; `ksuite gpumode-eval` exits with the GPU MODE evaluation protocol's
own codes (110-114, defined by their eval.py and kept as they are in submit/gpumode/evaluate.py).
"""

from __future__ import annotations

OK = 0
FAILED = 1  # an implementation failed a check, a regression (compare), a goal missed (goals), a lint finding
USAGE = 2  # the command could not run as asked: unknown problem, solution, run or dtype; bad option or file
# ksuite submit gpumode / leaderboards, after lint and the local check (submit/gpumode/client.py)
AUTH, NOT_FOUND, RATE_LIMITED, SERVER, TIMEOUT, NETWORK, CONFIG, REJECTED = 3, 4, 5, 6, 7, 8, 9, 10
INTERRUPTED = 130  # Ctrl-C: the shell's code for SIGINT; finished records are kept
# ksuite gpumode-eval: GPU MODE's protocol (the evaluated submission's own exit code)
PROTOCOL_CUDA_FAIL, PROTOCOL_PIPE_FAIL, PROTOCOL_VALIDATION_FAIL = 110, 111, 112
PROTOCOL_BAD_SPEC, PROTOCOL_TIMEOUT = 113, 114

TABLE = (  # (code or range, commands, meaning): README's table
    (f"{OK}", "every command", "success: everything checked is correct, no regression, every goal met"),
    (f"{FAILED}", "every command", "an implementation failed, a regression (compare), a goal missed (goals), a "
                                   "problem flagged (lint), a submission failed its check or its run (submit)"),
    (f"{USAGE}", "every command", "usage error: unknown problem, solution, run or dtype, a bad option or file, a "
                                  "resume that would change the run; submit: lint refused the file"),
    (f"{AUTH}-{REJECTED}", "submit, leaderboards", f"{AUTH} not authorised, {NOT_FOUND} unknown leaderboard or GPU, "
                                                   f"{RATE_LIMITED} rate limited, {SERVER} server error, {TIMEOUT} job "
                                                   f"not done in time, {NETWORK} server unreachable, {CONFIG} "
                                                   f"configuration missing (also gpumode-eval: no GPU for a timed "
                                                   f"mode), {REJECTED} refused by the server"),
    (f"{PROTOCOL_CUDA_FAIL}-{PROTOCOL_TIMEOUT}", "gpumode-eval", f"GPU MODE's protocol: {PROTOCOL_CUDA_FAIL} CUDA "
                                                                f"failure, {PROTOCOL_PIPE_FAIL} pipe failure, "
                                                                f"{PROTOCOL_VALIDATION_FAIL} a case failed its check, "
                                                                f"{PROTOCOL_BAD_SPEC} bad spec, {PROTOCOL_TIMEOUT} "
                                                                "timeout"),
    (f"{INTERRUPTED}", "bench, kernelbench run", "interrupted (Ctrl-C): finished records are kept; --resume RUN"),
)


def markdown_table() -> str:
    """The table as README shows it (tests keep the two equal)."""
    lines = ["| exit | commands | meaning |", "|---|---|---|"]
    return "\n".join(lines + [f"| {code} | {where} | {meaning} |" for code, where, meaning in TABLE])
