"""Which dtypes a `--dtype` request means for one problem: strict, so a typo never runs another dtype.

The words are `all` (every dtype the problem declares), `primary` (its first) and dtype names; the only
other spellings accepted are the explicit aliases below. The suite validates a request against every
selected problem before any child starts; the worker applies the same rule, so nothing is substituted
silently on either side.
"""

from __future__ import annotations

from harness.loader import DTYPES, LoadError

WORDS = ("all", "primary")
ALIASES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32", "fp64": "float64"}
HELP = ("all (every dtype the problem declares), primary (its first), or a dtype it declares: "
        + ", ".join(DTYPES) + " (aliases: " + ", ".join(f"{a}={d}" for a, d in ALIASES.items())
        + "); repeatable. A dtype the problem does not declare is an error.")


class DtypeChoiceError(LoadError):
    """A --dtype word that is unknown, or a dtype the problem does not declare; names what it declares."""


def canonical(word: str) -> str:
    """`bf16` -> `bfloat16`; `all`, `primary`, dtype names and unknown words (select_dtypes refuses them)
    lower-cased as they are."""
    name = word.strip().lower()
    return ALIASES.get(name, name)


def canonical_request(asked: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(canonical(w) for w in asked))


def select_dtypes(declared: list[str], asked: tuple[str, ...], where: str = "") -> list[str]:
    """The dtypes to run, in the problem's declared order (the first is the smoke stage's). An empty request
    means all of them. Raises DtypeChoiceError, naming the declared dtypes, for a word it does not know or
    a dtype the problem does not declare."""
    words = canonical_request(asked) if asked else ("all",)
    prefix = f"{where}: " if where else ""
    unknown = [w for w in words if w not in WORDS and w not in DTYPES]
    missing = [w for w in words if w in DTYPES and w not in declared]
    if unknown:
        raise DtypeChoiceError(f"{prefix}--dtype {', '.join(map(repr, unknown))}: unknown; use "
                               f"{', '.join(WORDS)} or a dtype it declares: {', '.join(declared)}")
    if missing:
        raise DtypeChoiceError(f"{prefix}--dtype {', '.join(missing)}: not declared; it declares "
                               f"{', '.join(declared)}")
    wanted = set(declared) if "all" in words else {w for w in words if w in declared}
    if "primary" in words:
        wanted.add(declared[0])
    return [d for d in declared if d in wanted]
