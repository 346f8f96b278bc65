"""Peak device memory of a run's records against the bound of 4x inputs + outputs (harness/memory.py).

For each problem: its largest peak over implementations and shapes, as a multiple of the record's bytes
(inputs + outputs for a file without a bytes model, as KernelBench's are), and whether it stays within the
memory plan's cap (harness/memory.trial_cap: the bound, or for a small problem its size plus a fixed slack);
then the problems over the bound, those past the cap, and how many records carry no peak. What the harness
holds is judged: the peak less the implementation's own temporaries in one call (the record's
call_extra_bytes, shown as "own" where there are any: eager attention's scores), which no plan can bound.
Usage: python3 scripts/peak_table.py RUN.jsonl [--all]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.memory import BOUND, trial_cap  # noqa: E402

SMALL_BLOCKS = 1 << 20


def main(args: list[str]) -> int:
    if not args:
        print(__doc__.strip().splitlines()[-1])
        return 2
    path, show_all = Path(args[0]), "--all" in args
    worst: dict = {}  # problem -> (ratio, peak, bytes, solution, shape)
    missing = 0
    for line in path.read_text().splitlines():
        r = json.loads(line)
        peak, nbytes, own = r.get("peak_mem_bytes"), r.get("bytes"), r.get("call_extra_bytes") or 0
        if not peak or not nbytes:
            missing += 1
            continue
        peak = max(0, peak - own)  # what the harness held
        ratio = peak / nbytes
        if ratio > worst.get(r["problem"], (0,))[0]:
            worst[r["problem"]] = (ratio, peak, nbytes, r["solution"], r["shape"], own)
    # 1 MiB for the allocator's small blocks (scalars, RNG state), which the plan does not count, for the bound
    # as for the cap: 88_MinGPTNewGelu's trial planned exactly at the cap peaked 508 bytes past it
    over = {p for p, (_, peak, nbytes, *_rest) in worst.items() if peak > BOUND * nbytes + SMALL_BLOCKS}
    past_cap = {p for p, (_, peak, nbytes, *_rest) in worst.items() if peak > trial_cap(nbytes, 0) + SMALL_BLOCKS}
    for problem, (ratio, peak, nbytes, solution, _shape, own) in sorted(worst.items(), key=lambda kv: -kv[1][0]):
        if show_all or problem in over:
            where = "past the plan's cap" if problem in past_cap else "within the cap"
            mine = f", own {own / 1e9:.3f} GB more" if own else ""
            print(f"{ratio:6.2f}x  peak {peak / 1e9:7.3f} GB  in+out {nbytes / 1e9:7.3f} GB  {problem}  {solution}  "
                  f"({where}{mine})")
    print(f"{path.name}: {len(worst)} problems with a peak, {len(over)} over {BOUND:g}x inputs + outputs, "
          f"{len(past_cap)} past the plan's cap (harness/memory.trial_cap); "
          f"{missing} records without a peak or bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
