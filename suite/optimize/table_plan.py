"""`ksuite optimize PROBLEM --from FAMILY --plan`: what a table search would time, without a GPU.

Device time is scarce and a search's first steps are where its budget goes: rotary's CHUNKS, the form written
for head_dim 96, was never reached in four searches of 6-12 steps a bucket, and no one could see that before
spending the GPU. The plan lists, per bucket the search would visit: its entry now, the shapes it would be timed
at (tuning shapes, a probe shape, an edge probe) and its first steps in the order the search proposes them were
none kept (a keep starts the pass again around the new best). Nothing is compiled or timed.
"""

from __future__ import annotations

from pathlib import Path

from harness.loader import load_problem
from harness.workloads import shape_key
from suite.optimize import dispatch, tunables
from suite.optimize.search import SearchProposer
from suite.optimize.table_command import probes_for, users_shapes, with_users_shapes


def first_steps(source: str, entry: dict, count: int) -> list[str]:
    """The search's first `count` proposals around `entry`, each fed back as not kept."""
    proposer = SearchProposer(tunables.replace(source, {**tunables.read(source), **entry}))
    steps = []
    while len(steps) < count and (proposal := proposer.propose(None)) is not None:
        steps.append(proposal.description.removeprefix("search: "))
        proposer.feedback(proposal, kept=False)
    return steps


def plan_lines(problem_path: Path, source: str, per_bucket: int, only: tuple = (), probes_only: bool = False,
               fresh: frozenset = frozenset(), gpu: str | None = None, shapes: tuple = ()) -> list[str]:
    """The plan, a line per bucket heading and per detail; the buckets in grid order; each entry as `gpu` runs
    it (its own table where the file has one, else DISPATCH), where a search on that GPU starts; `shapes` are
    the user's --shape specs, tuned at beside the workload's tuning set."""
    meta = load_problem(problem_path, "ksuite_plan_meta").meta
    buckets = dispatch.read_buckets(source)
    users = users_shapes(problem_path, shapes)
    yours = {shape_key(s) for s in users}
    tuning = with_users_shapes(meta.sweep("tuning"), users)
    groups = dispatch.group(tuning, buckets)
    probes, edges = probes_for(meta, buckets, tuning)
    table = dispatch.read_table(source, gpu)
    name = dispatch.runs_from(source, gpu)
    visited = [b for b in dispatch.all_buckets(buckets) if b in groups or b in probes]
    if probes_only:
        visited = [b for b in visited if b in probes or b in fresh]
    if only:
        visited = [b for b in visited if dispatch.matches(b, only)]
    lines = [f"{problem_path.stem}: {len(visited)} of {len(dispatch.all_buckets(buckets))} buckets searched, "
             f"{len(tuning)} tuning shapes, {sum(b in probes for b in visited)} probe shapes, "
             f"{sum(b in edges for b in visited)} edge probes; at most {per_bucket} steps a bucket, listed as the "
             f"search proposes them if none were kept (nothing timed); entries from {name}"]
    for bucket in visited:
        entry = table.get(bucket, {})
        shapes = ([f"{shape_key(s)} ({'yours' if shape_key(s) in yours else 'tuning'})" for s in groups.get(bucket, [])]
                  + ([f"{shape_key(probes[bucket])} (probe)"] if bucket not in groups else [])
                  + ([f"{shape_key(edges[bucket])} (edge probe)"] if bucket in edges else []))
        lines += [f"[{bucket}] entry {entry or 'TUNABLES'}",
                  f"  shapes: {', '.join(shapes)}",
                  f"  steps: {'; '.join(first_steps(source, entry, per_bucket)) or 'none left'}"]
    return lines
