"""Result types passed between harness and suite; a record written to results/ reads back equal."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields


def shape_text(shape: dict | None) -> str:
    """A shape as every command prints it: its sizes joined by x ("64x256"), in the problem's order."""
    return "x".join(str(v) for v in shape.values()) if shape else "-"


@dataclass(frozen=True)
class StageResult:
    """One correctness or integrity stage of one implementation."""

    stage: str
    passed: bool
    detail: str = ""
    shape: dict | None = None
    dtype: str | None = None
    max_abs_err: float | None = None
    rel_l2_err: float | None = None
    skipped: bool = False
    seconds: float | None = None  # how long the stage took (where a bench's time goes)

    @property
    def status(self) -> str:
        return "skip" if self.skipped else ("pass" if self.passed else "FAIL")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Measurement:
    """One (problem, shape, dtype, implementation) result: correctness, time and derived metrics."""

    problem: str
    solution: str
    kind: str  # solution | baseline
    shape: dict
    dtype: str
    correct: bool | None  # None: not checked
    error: str | None = None
    shape_set: str | None = None  # where the shape came from: tuning | heldout | large | mid | small | edge | custom
    flush: str | None = None  # the L2 flush before each timed call: clean | write (harness/timing.py)
    # microseconds the GPU spun between the flush and each timed call, sized from the callable's host launch
    # path (harness/timing.py); None in runs before 2026-12-02 05:00 (a fixed 100 us) and where nothing was timed
    lead_us: float | None = None
    median_us: float | None = None
    iqr_us: float | None = None
    runs: int | None = None
    rse: float | None = None
    mean_us: float | None = None  # mean, std (population), min, max: for KernelBench's baseline JSON
    std_us: float | None = None
    min_us: float | None = None
    max_us: float | None = None
    p10_us: float | None = None  # the 10th percentile of the per-call times (harness/timing.py); None before 2026-12-05
    setup_s: float | None = None
    # seconds of the integrity probe and the five correctness stages before this solution's first measurement
    # (the same on each of its records; None for baselines, which they do not check, and in older runs)
    stages_s: float | None = None
    # peak device bytes allocated while checking and timing this record (torch.cuda.max_memory_allocated
    # after a reset): its stage trials and its measurement; from run 20261201-17* on without the timer's
    # flush buffers (512 MiB a worker); None on CPU and in runs before 2026-12-01
    peak_mem_bytes: int | None = None
    # of that peak, what one call of the implementation held beyond its inputs and outputs (its own
    # temporaries; harness/jobs/worker.call_extra); None on CPU and in runs before 2026-12-02 08:00
    call_extra_bytes: int | None = None
    bytes: float | None = None
    flops: float | None = None
    gbps: float | None = None
    tflops: float | None = None
    sol_us: float | None = None
    pct_sol: float | None = None
    speedup_vs_best_baseline: float | None = None
    best_baseline: str | None = None
    speedup_vs: dict = field(default_factory=dict)
    max_abs_err: float | None = None
    rel_l2_err: float | None = None
    source_hash: str | None = None
    # the GPU whose dispatch table the solution ran (harness/loader.dispatch_table_gpu): this GPU's own, or the
    # family's DISPATCH_GPU where no search on this GPU wrote one; None for baselines, solutions without per-GPU
    # tables and runs before 2026-12-05 20:00
    table_gpu: str | None = None
    # the file's hash with its per-GPU tables reduced to the one this GPU runs (harness/ran_hash.py): a search on
    # another GPU changes source_hash but not this, so confirm and resume still take the record; None for
    # baselines, files without per-GPU tables and runs before 2026-12-07
    ran_hash: str | None = None
    # a baseline timing reused from the cache (bench --cached-baselines, harness/baseline_cache.py): the run
    # that timed it, when, and its age in days; None when timed in this run (and in runs before 2026-12-02)
    cached_from: dict | None = None
    # timed again in one process, interleaved with the baselines that were close to it (ksuite confirm,
    # suite/confirm.py): {"run": the run whose close call this re-times, "with": [those baselines]}; None else
    paired: dict | None = None
    gpu: str = "cpu"
    env: dict = field(default_factory=dict)
    run_id: str | None = None
    timestamp: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Measurement:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @property
    def key(self) -> tuple:
        """Identity of a measurement within a run (used to resume)."""
        return (self.problem, self.solution, tuple(sorted(self.shape.items())), self.dtype)
