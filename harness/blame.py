"""Build a candidate, and when that fails blame the candidate: its file and line, not "harness error".

A ModelNew whose `__init__` raises, or whose constructor does not take the problem's
`get_init_inputs()`, is the candidate's fault; the record says where (`candidate.py:12: ModelNew.__init__
raised ValueError: ...`) and `-v` shows the candidate's own traceback.
"""

from __future__ import annotations

import inspect
import traceback
from pathlib import Path


class CandidateError(Exception):
    """A candidate that could not be built; str() is the one line for the record, `.traceback` the detail."""

    def __init__(self, message: str, traceback_text: str = "", original: BaseException | None = None):
        super().__init__(message)
        self.traceback, self.original = traceback_text, original


def _source_file(cls) -> str | None:
    """The file ModelNew's own __init__ is written in, else its module's file."""
    code = getattr(cls.__dict__.get("__init__"), "__code__", None)
    if code is not None:
        return code.co_filename
    try:
        return inspect.getsourcefile(cls)
    except TypeError:
        return None


def _def_line(cls) -> int:
    """The line of ModelNew's own __init__ (or of the class), for errors raised before its body runs."""
    for target in (cls.__dict__.get("__init__"), cls):
        try:
            return inspect.getsourcelines(target)[1] if target is not None else 0
        except (OSError, TypeError):
            continue
    return 0


def _blame(exc: BaseException, cls, init: list) -> CandidateError:
    source = _source_file(cls)
    frames = traceback.extract_tb(exc.__traceback__)
    own = [i for i, f in enumerate(frames) if source and Path(f.filename) == Path(source)]
    name = Path(source).name if source else cls.__module__
    first_line = str(exc).splitlines()[0] if str(exc) else ""
    if own:  # raised inside the candidate's code: its deepest own frame is where
        line = frames[own[-1]].lineno
        message = f"{name}:{line}: {cls.__name__}.__init__ raised {type(exc).__name__}: {first_line}"
        shown = frames[own[0]:]
    else:  # raised at the call: the constructor does not take what the problem passes
        message = (f"{name}:{_def_line(cls)}: {cls.__name__}(*get_init_inputs()) does not fit the problem's "
                   f"constructor arguments {init!r}: {type(exc).__name__}: {first_line}")
        shown = frames[-1:]
    text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(shown)) + "".join(
        traceback.format_exception_only(type(exc), exc))
    return CandidateError(message, text, exc)


def construct(cls, init: list):
    """`cls(*init)`; any exception becomes a CandidateError naming the candidate's file and line."""
    try:
        return cls(*init)
    except Exception as exc:  # noqa: BLE001 - whatever the candidate raises is the candidate's failure
        raise _blame(exc, cls, init) from None
