"""Measured baseline timings, kept per environment and reused only when asked (`bench --cached-baselines`).

A held-out bench spends most of its time in baselines: torch.compile and max-autotune compile and tune at
every shape of every run. A baseline's timing depends on what it runs and how it is timed, so a timing is
kept under a key of exactly that (BaselineKey: GPU, torch, triton, the problem file's hash, shape, dtype,
baseline, flush, timer settings, the harness's timer and baseline code, Liger's version for Liger), with
the environment fingerprint and the run it came from. Options.baseline_cache says what a run does:

    off      (default) time every baseline in this run; the cache is neither read nor written
    use      reuse a kept timing younger than baseline_max_age_s whose fingerprint matches (driver, CUDA,
             Python, GPU); time the others in this run and keep them
    refresh  time every baseline in this run and keep each, replacing what was kept

A reused record says so (`cached_from`: the run that timed it, when, its age), reports mark it, and
`ksuite goals` judges nothing against it: a goal needs baselines timed side by side in the same run.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.cache_dirs import cache_root, package_version
from harness.environment import gpu_slug
from harness.spec import Options, ProblemRef, file_hash

MODES = ("off", "use", "refresh")
FOLDER = "baseline_timings"
# the fingerprint a kept timing must match beyond its key (the commit is left out: it changes every commit)
FINGERPRINT_FIELDS = ("gpu", "sm_count", "capability", "driver", "cuda", "torch", "triton", "python")
# what a kept timing carries into the run that reuses it (speedups and % of speed of light are recomputed)
TIMING_FIELDS = ("flush", "lead_us", "median_us", "iqr_us", "runs", "rse", "mean_us", "std_us", "min_us", "max_us",
                 "p10_us", "peak_mem_bytes", "bytes", "flops", "gbps", "tflops", "max_abs_err", "rel_l2_err")
HARNESS_SOURCES = ("timing.py", "baselines.py", "precision.py")  # timer, baselines, float32 rule: a change re-times
LIBRARIES = {"liger": "liger-kernel"}  # baselines whose timing depends on a library beyond torch and triton


@dataclass(frozen=True)
class BaselineKey:
    """Everything a baseline's timing depends on; any field changed is another timing."""

    gpu: str
    torch: str
    triton: str
    problem_hash: str  # the problem file's content: its Model, ModelFused, cost model, inputs
    shape: tuple  # sorted (size constant, value) pairs
    dtype: str
    baseline: str
    flush: str
    timer: tuple  # (warmup_ms, min_runs, max_runs, target_rse, budget_s, lead_us)
    harness: str  # hash of harness/timing.py and harness/baselines.py
    library: str = ""  # the baseline's own library version (liger-kernel), else ""

    def digest(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def harness_hash() -> str:
    here = Path(__file__).resolve().parent
    return hashlib.sha256(b"".join((here / name).read_bytes() for name in HARNESS_SOURCES)).hexdigest()[:12]


def timer_settings(options: Options) -> tuple:
    from harness.timing import LEAD_US

    return (options.warmup_ms, options.min_runs, options.max_runs, options.target_rse, options.budget_s, LEAD_US)


def key_for(env: dict, problem_hash: str, shape: dict, dtype: str, baseline: str, options: Options) -> BaselineKey:
    library = LIBRARIES.get(baseline)
    return BaselineKey(gpu=env.get("gpu") or "cpu", torch=env.get("torch") or "", triton=env.get("triton") or "",
                       problem_hash=problem_hash, shape=tuple(sorted(shape.items())), dtype=dtype,
                       baseline=baseline, flush=options.flush, timer=timer_settings(options),
                       harness=harness_hash(), library=package_version(library) if library else "")


@dataclass(frozen=True)
class Lookup:
    """A kept timing (record: the stored fields plus cached_from) or why there is none to reuse."""

    record: dict | None
    reason: str  # hit | missing | stale: <why>


class BaselineStore:
    """One JSON file per key under <cache root>/baseline_timings/<gpu>/, each written atomically."""

    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder else cache_root() / FOLDER

    def path(self, key: BaselineKey) -> Path:
        return self.folder / (gpu_slug(key.gpu) if key.gpu != "cpu" else "cpu") / f"{key.digest()}.json"

    def save(self, key: BaselineKey, record: dict, env: dict, run_id: str | None, now: float | None = None) -> Path:
        now = time.time() if now is None else now
        entry = {"key": asdict(key), "saved_unix": now, "run_id": run_id,
                 "timestamp": record.get("timestamp") or time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now)),
                 "env": {k: env.get(k) for k in FINGERPRINT_FIELDS},
                 "record": {k: record.get(k) for k in TIMING_FIELDS}}
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entry, sort_keys=True) + "\n")
        os.replace(tmp, path)
        return path

    def load(self, key: BaselineKey, env: dict, max_age_s: float, now: float | None = None) -> Lookup:
        now = time.time() if now is None else now
        try:
            entry = json.loads(self.path(key).read_text())
        except FileNotFoundError:
            return Lookup(None, "missing")
        except (OSError, ValueError):
            return Lookup(None, "stale: unreadable")
        age = now - float(entry.get("saved_unix", 0))
        if age > max_age_s:
            return Lookup(None, f"stale: {age / 86400:.1f} days old")
        changed = [k for k in FINGERPRINT_FIELDS if (entry.get("env") or {}).get(k) != env.get(k)]
        if changed:
            return Lookup(None, f"stale: {', '.join(changed)} changed")
        stored = entry.get("record") or {}
        if not stored.get("median_us"):
            return Lookup(None, "stale: no time kept")
        cached_from = {"run_id": entry.get("run_id"), "timestamp": entry.get("timestamp"),
                       "age_days": round(age / 86400, 3)}
        return Lookup({**{k: stored.get(k) for k in TIMING_FIELDS}, "cached_from": cached_from}, "hit")


@dataclass
class BaselineReuse:
    """One problem's baselines in one run: the kept records to reuse, the keys the child is to skip, and
    the fresh timings to keep."""

    problem: ProblemRef
    options: Options
    env: dict
    run_id: str | None
    store: BaselineStore
    problem_hash: str
    bound: str
    cached: list[dict] = field(default_factory=list)
    reasons: dict = field(default_factory=dict)  # lookup reason -> count
    planned: dict = field(default_factory=dict)  # baseline -> (shape, dtype) pairs this run asks of it

    def covers(self, baseline: str) -> bool:
        """Every (shape, dtype) this run asks of `baseline` is reused: it needs no child."""
        reused = sum(1 for r in self.cached if r["solution"] == baseline)
        return self.planned.get(baseline, 0) > 0 and reused == self.planned[baseline]

    @property
    def done(self) -> tuple:
        """(baseline, shape items, dtype) of every reused record, in Options.done's form."""
        return tuple((r["solution"], tuple(sorted(r["shape"].items())), r["dtype"]) for r in self.cached)

    def keep(self, record: dict) -> None:
        """Keep a baseline timed in this run (correct and timed only; failures are timed again)."""
        if self.options.baseline_cache == "off" or record.get("kind") != "baseline":
            return
        if not (record.get("correct") and record.get("median_us")) or record.get("cached_from"):
            return
        key = key_for(self.env, self.problem_hash, record["shape"], record["dtype"], record["solution"], self.options)
        self.store.save(key, record, self.env, self.run_id)

    def summary(self) -> str:
        """'12 reused, 3 timed (2 missing, 1 stale: driver changed)' for the progress output."""
        timed = {k: v for k, v in self.reasons.items() if k != "hit"}
        detail = ", ".join(f"{n} {why}" for why, n in sorted(timed.items()))
        return f"{self.reasons.get('hit', 0)} reused, {sum(timed.values())} timed" + (f" ({detail})" if detail else "")


def applies(options: Options, env: dict) -> bool:
    """The cache is for timed runs on a GPU whose fingerprint is known."""
    return (options.baseline_cache in ("use", "refresh") and options.time and not options.interpret
            and bool(env.get("gpu")) and env.get("gpu") != "cpu")


def plan(problem: ProblemRef, options: Options, env: dict, run_id: str | None,
         store: BaselineStore | None = None, now: float | None = None) -> BaselineReuse | None:
    """What this run reuses of `problem`'s baselines (mode use) and keeps (use, refresh); None when the
    cache does not apply or the problem does not load here (its child then says why, as before)."""
    if not applies(options, env):
        return None
    from harness import baselines
    from harness.dtype_choice import select_dtypes
    from harness.jobs.worker import timed_shapes
    from harness.loader import load_problem

    try:
        loaded = load_problem(Path(problem.path), f"ksuite_baseline_cache_{abs(hash(str(problem.path)))}")
        dtypes = select_dtypes(list(loaded.meta.dtypes), options.dtypes, str(problem.path))
        shapes = timed_shapes(loaded, options)[1]
        names = [b for b in options.baselines if b in baselines.available(loaded, options.interpret)]
    except Exception:  # noqa: BLE001 - the worker reports a problem that cannot load; nothing is reused
        return None
    reuse = BaselineReuse(problem, options, env, run_id, store or BaselineStore(), file_hash(problem.path),
                          loaded.meta.bound)
    done = {(name, tuple(tuple(kv) for kv in shape), dtype) for name, shape, dtype in options.done}
    for name in names:
        for shape in shapes:
            for dtype in dtypes:
                if (name, tuple(sorted(shape.items())), dtype) in done:
                    continue
                reuse.planned[name] = reuse.planned.get(name, 0) + 1
                lookup = (reuse.store.load(key_for(env, reuse.problem_hash, shape, dtype, name, options), env,
                                           options.baseline_max_age_s, now)
                          if options.baseline_cache == "use" else Lookup(None, "refreshed"))
                reuse.reasons[lookup.reason] = reuse.reasons.get(lookup.reason, 0) + 1
                if lookup.record:
                    reuse.cached.append(_reused(reuse, loaded, name, shape, dtype, lookup.record))
    return reuse


def _reused(reuse: BaselineReuse, loaded, name: str, shape: dict, dtype: str, kept: dict) -> dict:
    """The record a reused timing becomes in this run: the problem's name and set, today's speed of light."""
    from harness import metrics

    sol_us = metrics.speed_of_light_us(kept.get("bytes") or 0.0, kept.get("flops"), reuse.bound,
                                       reuse.options.copy_bandwidth, reuse.options.matmul_rate)
    return {"event": "measurement", "problem": reuse.problem.name, "solution": name, "kind": "baseline",
            "shape": dict(shape), "dtype": dtype, "shape_set": loaded.meta.set_of(shape, reuse.options.shapes),
            "source_hash": reuse.problem_hash, "correct": True, "error": None, **kept, "sol_us": sol_us,
            "pct_sol": sol_us / kept["median_us"] * 100.0 if sol_us else None}
