"""Where a run's wall time went, from its records' timestamps: per problem, its records, its failures and
the seconds from the previous problem's last record to its own last (what it cost, its CUDA builds and
baselines included); per solution, the seconds since the record before it and its correctness stages.
Usage: python scripts/run_timeline.py RUN.jsonl [START_EPOCH_S]   (START: when the command began)"""

from __future__ import annotations

import json
import sys
from datetime import datetime


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        records = [json.loads(line) for line in open(argv[0]) if line.strip()]
    except (OSError, ValueError) as exc:
        print(f"{argv[0]}: cannot read the run file: {exc}", file=sys.stderr)
        return 1
    if not records:
        print(f"{argv[0]}: no records")
        return 1
    times = [datetime.fromisoformat(r["timestamp"]).timestamp() for r in records]
    previous = float(argv[1]) if len(argv) > 1 else times[0]
    start = previous
    problems: dict[str, list] = {}
    for record, at in zip(records, times):
        problems.setdefault(record["problem"], []).append((record, at))
    print(f"{'problem':28} {'records':>7} {'failed':>6} {'seconds':>8}  "
          "solutions (s since the record before, stages s)")
    last = previous
    for name, rows in problems.items():
        end = max(at for _, at in rows)
        failed = sum(1 for r, _ in rows if r.get("correct") is False)
        firsts, seen, before = [], set(), last
        for record, at in rows:
            if record["solution"] not in seen:
                seen.add(record["solution"])
                stages = record.get("stages_s")
                firsts.append(f"{record['solution']} {at - before:.0f}" + (f"/{stages:.0f}" if stages else ""))
            before = at
        print(f"{name:28} {len(rows):7d} {failed:6d} {end - last:8.0f}  {', '.join(firsts)}")
        last = end
    print(f"{len(records)} records, {len(problems)} problems, {last - start:.0f} s from the start to the last record")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
