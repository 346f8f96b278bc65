"""The unit of work sent to one GPU: a (problem, shape, dtype) group with all its implementations.

Why this unit: a speedup is a ratio of times taken side by side, so the baselines and the candidates of
one shape must be timed on one device; single records would scatter them over GPUs. A group is run by
the harness as usual (evaluate_problem), told through Options.done that every other (shape, dtype) of
the problem is already recorded; so a group's records are exactly those a one-GPU run writes for it.
A problem that cannot be loaded here is one group of its own (shape None): the worker records why.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from harness import Options, ProblemRef, SolutionRef
from harness.records import shape_text


def shape_key(shape: dict) -> tuple:
    return tuple(sorted(shape.items()))


@dataclass(frozen=True)
class Group:
    problem: ProblemRef
    solutions: tuple[SolutionRef, ...]
    shape: dict | None  # None: the whole problem (it did not load in the driver)
    dtype: str | None
    impls: tuple[tuple[str, str], ...] = ()  # (name, kind) expected to give a record here
    done: tuple = ()  # Options.done entries: the problem's other groups, and what a resumed run has

    @property
    def label(self) -> str:
        if self.shape is None:
            return self.problem.name
        return f"{self.problem.name} {shape_text(self.shape)} {self.dtype}"


@dataclass(frozen=True)
class GroupJob:
    """What a worker needs to run one group (picklable: it crosses a process or a Ray task)."""

    group: Group
    options: Options
    env: dict
    run_id: str
    with_baselines: bool = True
    attempt: int = 0
    received: tuple = field(default_factory=tuple)  # keys already written (a retry skips them)

    def options_here(self) -> Options:
        return replace(self.options, done=tuple(self.group.done) + tuple(self.received))


def problem_plan(problem: ProblemRef, options: Options) -> tuple[list[dict], list[str], list[str]] | None:
    """(timed shapes, dtypes, baselines that apply) as the worker will see them, or None if it won't load."""
    from harness import baselines
    from harness.dtype_choice import select_dtypes
    from harness.jobs.worker import timed_shapes
    from harness.loader import load_problem

    try:
        loaded = load_problem(problem.path, f"ksuite_groups_{abs(hash(str(problem.path)))}")
        dtypes = select_dtypes(list(loaded.meta.dtypes), options.dtypes, str(problem.path))
        _, timed = timed_shapes(loaded, options)
        applies = baselines.available(loaded, options.interpret)
    except Exception:  # noqa: BLE001 - the worker loads it again and records the reason
        return None
    return timed, dtypes, [b for b in options.baselines if b in applies]


def split_plan(plan: list[tuple[ProblemRef, list[SolutionRef]]], options: Options, with_baselines: bool,
               done: set) -> list[Group]:
    """Every (problem, shape, dtype) group still to measure, in the plan's order. `done`: keys
    (problem, impl, shape items, dtype) of a resumed run."""
    groups = []
    for problem, sols in plan:
        mine = {k[1:] for k in done if k[0] == problem.name}
        found = problem_plan(problem, options)
        if found is None:
            groups.append(Group(problem, tuple(sols), None, None, done=tuple(mine)))
            continue
        timed, dtypes, applies = found
        impls = tuple((s.name, "solution") for s in sols) + tuple(
            (b, "baseline") for b in (applies if with_baselines else []))
        pairs = [(shape, dtype) for shape in timed for dtype in dtypes]
        for shape, dtype in pairs:
            todo = [name for name, _ in impls if (name, shape_key(shape), dtype) not in mine]
            if not todo:
                continue
            others = tuple((name, shape_key(s), d) for name, _ in impls for s, d in pairs
                           if (s, d) != (shape, dtype))
            groups.append(Group(problem, tuple(sols), shape, dtype, impls,
                                others + tuple(k for k in mine if k[1:] == (shape_key(shape), dtype))))
    return groups
