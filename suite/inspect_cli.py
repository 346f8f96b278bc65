"""`ksuite inspect PROBLEM [SOLUTION...]`: what the machine code of each Triton or CUDA C++ kernel says,
compiled for a recorded GPU on any machine (no GPU needed): registers, spills, occupancy, load and store
widths, and the bytes in flight per SM against what the measured bandwidth needs (harness/machine_code/kernel_inspect.py
does the work)."""

from __future__ import annotations

import functools
import hashlib
import re
import sys
from pathlib import Path

import click
import torch
from tabulate import tabulate

from harness.baselines import liger_installed
from harness.cuda_build import is_cuda_solution
from harness.dtype_choice import select_dtypes
from harness.environment import capability_number
from harness.loader import LoadError, import_file, load_problem
from harness.machine_code.kernel_inspect import InspectError, Target, inspect, inspect_cuda
from harness.machine_code.sass import MemoryProfile, mix_ops
from harness.shape_spec import ShapeSpecError, custom_shapes
from suite import exit_codes
from suite.optimize import dispatch
from suite.registry import RegistryError, find_problem
from suite.report import shape_text
from suite.results_store import RESULTS_DIR, calibrated_gpus_newest_first, load_calibration

HEADERS = ["solution", "shape", "kernel", "grid", "warps", "stages", "regs", "spill B", "smem KB", "blocks/SM",
           "loads", "stores", "B in flight/thread", "KB in flight/SM", "load rounds", "tensor cores"]


def target_from(slug: str | None, capability: int | None, sms: int | None,
                latency_ns: float) -> tuple[Target, str, str | None]:
    """The GPU to compile for: a calibrated one under results/ (newest, unless --gpu names it), or flags; and
    its results folder name (whose dispatch tables the solutions run there), None from flags alone."""
    if capability and sms:
        return Target(capability, sms, None, latency_ns), f"sm_{capability}, {sms} SMs", slug
    slugs = [slug] if slug else calibrated_gpus_newest_first(RESULTS_DIR)
    for name in slugs:
        data = load_calibration(name)
        if data and data.get("env", {}).get("capability") and data["env"].get("sm_count"):
            cap = capability or capability_number(data["env"]["capability"])
            return (Target(cap, sms or data["env"]["sm_count"], data.get("copy_bandwidth_Bps"), latency_ns),
                    f"{data['env'].get('gpu', name)} (results/{name}/calibration.json)", name)
    raise click.ClickException(f"no calibrated GPU {'named ' + slug + ' ' if slug else ''}under {RESULTS_DIR}: "
                               "pass --capability and --sms (e.g. 90 and 132 for an H100 or H200)")


def _grid(grid, sm_count: int) -> str:
    if not grid:
        return "?"
    total = 1
    for g in grid:
        total *= g
    return "x".join(str(g) for g in grid) + ("*" if total < sm_count else "")


def _loads(memory: MemoryProfile) -> str:
    """Global loads and cp.async copies by width, and the TMA copies (not sized)."""
    return MemoryProfile.mix(memory.loads + memory.async_copies) + (f" +{memory.tma} TMA" if memory.tma else "")


@functools.cache
def _routing_module(path: Path):
    """A solution that sends shapes to its kernels by a rule (a module-level route()), imported once; None for one
    that does not. Raises LoadError."""
    if "\ndef route(" not in path.read_text():
        return None
    return import_file(path, f"ksuite_inspect_route_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}")


def _cuda_rows(sol, problem_path: Path, shapes: list[dict], target: Target, dtype: str, sass_dir: Path | None,
               problems: list[str], gpu: str | None = None) -> list[list]:
    """A CUDA C++ solution's kernels, block size from __launch_bounds__. A file that builds several kernels and
    routes shapes among them (route_kernel(), route_source()) compiles each build some shape takes, shown on
    those shapes' rows, and reads the launches of the Triton family it leaves the other shapes to (triton_route())
    at those shapes; any other file compiles once, for every shape. `gpu` (a results folder name) is the GPU whose
    rule a file with one rule per GPU applies."""
    try:
        module = _routing_module(Path(sol.path))
    except LoadError as exc:
        problems.append(f"{sol.name}: {str(exc).splitlines()[0]}")
        return []
    if module is None or not callable(getattr(module, "route_kernel", None)):
        return _cuda_build_rows(sol.name, sol.path, "any", None, target, dtype, sass_dir, problems)
    torch_dtype = getattr(torch, dtype)
    rows = []
    try:  # the file's own rule: a mistake in it is one line, and the other solutions are still read
        groups: dict = {}
        for shape in shapes:
            groups.setdefault(module.route_kernel(shape, torch_dtype, target.sm_count, gpu), []).append(shape)
        builds = {kernel: module.route_source(kernel, torch_dtype) for kernel in groups if kernel is not None}
        family = Path(module.triton_route().__file__) if None in groups else None
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{sol.name}: routes: {type(exc).__name__}: {exc}")
        return []
    for kernel, group in groups.items():
        if kernel is None:
            rows += _triton_rows(f"{sol.name} > {family.stem}", problem_path, family, None, group, dtype, target,
                                 sass_dir, problems)
        else:
            rows += _cuda_build_rows(f"{sol.name} [{kernel}]", sol.path, ", ".join(map(shape_text, group)),
                                     builds[kernel], target, dtype, sass_dir, problems)
    return rows


def _file_label(label: str) -> str:
    """A row label as part of a file name (the --sass files)."""
    return re.sub(r"[^\w.-]+", "_", label).strip("_")


def _cuda_build_rows(label: str, path: Path, shapes_text: str, source: str | None, target: Target, dtype: str,
                     sass_dir: Path | None, problems: list[str]) -> list[list]:
    """The kernels of one build of a CUDA C++ file (`source`, else the one its TUNABLES make)."""
    try:
        reports = inspect_cuda(path, target, dtype, source=source)
    except InspectError as exc:
        problems.append(f"{label}: {exc}")
        return []
    rows = []
    for i, rep in enumerate(reports):
        if sass_dir:
            sass_dir.mkdir(parents=True, exist_ok=True)
            (sass_dir / f"{_file_label(label)}-{i}.sass").write_text(rep.sass)
        per_sm = rep.bytes_in_flight_per_sm()
        rows.append(_row([label, shapes_text, rep.name, "-", rep.threads // 32 if rep.threads else "?", "-",
                          rep.resources.registers, rep.resources.spill_bytes,
                          f"{rep.resources.shared_bytes / 1024:.1f}",
                          rep.occupancy.text() if rep.occupancy else "? (no bounds)"],
                         rep, "-" if per_sm is None else f"{per_sm / 1024:.0f}"))
    return rows


def _row(launch: list, rep, per_sm: str) -> list:
    """One table row (HEADERS): the launch's columns, then what the machine code says about memory and
    tensor cores."""
    return [*launch, _loads(rep.memory), MemoryProfile.mix(rep.memory.stores), rep.memory.max_bytes_in_flight,
            per_sm, rep.memory.load_rounds, mix_ops(rep.tensor_cores)]


def _triton_rows(label: str, problem_path: Path, solution_path: Path | None, baseline: str | None, shapes: list[dict],
                 dtype: str, target: Target, sass_dir: Path | None, problems: list[str]) -> list[list]:
    """A Triton solution's launches (or, with `baseline`, that baseline's), compiled at each shape."""
    rows = []
    for shape in shapes:
        try:
            reports = inspect(problem_path, solution_path, shape, dtype, target, baseline=baseline)
        except InspectError as exc:
            problems.append(f"{label} {shape_text(shape)}: {exc}")
            continue
        for i, rep in enumerate(reports):
            if sass_dir:
                sass_dir.mkdir(parents=True, exist_ok=True)
                name = f"{_file_label(label)}-{shape_text(shape)}-{dtype}-{i}-{rep.launch.kernel}.sass"
                (sass_dir / name).write_text(rep.sass)
            rows.append(_row([label, shape_text(shape), rep.launch.kernel, _grid(rep.launch.grid, target.sm_count),
                              rep.launch.num_warps, rep.launch.num_stages, rep.resources.registers,
                              rep.resources.spill_bytes, f"{rep.launch.shared / 1024:.1f}", rep.occupancy.text()],
                             rep, f"{rep.bytes_in_flight_per_sm(target) / 1024:.0f}"))
    return rows


def _liger_missing(problem, path: Path) -> str | None:
    """Why Liger's kernels cannot be read here, in one line, or None."""
    if problem.liger_class is None:
        return f"{path}: names no Liger op (no ModelLiger)"
    if not liger_installed():
        return "liger-kernel is not installed (pip install liger-kernel)"
    return None


def dispatch_lines(sols, shapes: list[dict], gpu: str | None = None) -> list[str]:
    """For each family solution (one with BUCKETS): the bucket each shape falls in and what it runs on `gpu`
    (its own table where the file has one for it, else DISPATCH)."""
    out = []
    for sol in sols:
        source = Path(sol.path).read_text()
        if not dispatch.has_dispatch(source):
            continue
        out.append(f"\n{sol.name}: dispatch (BUCKETS {dispatch.read_buckets(source)})")
        name = dispatch.runs_from(source, gpu)
        table = dispatch.read_table(source, gpu)
        for shape in shapes:
            bucket, config = dispatch.config_for(source, shape, gpu)
            origin = name if bucket in table else f"TUNABLES (bucket not in {name})"
            out.append(f"  {shape_text(shape)} -> {bucket}: {config} from {origin}")
    return out


def route_lines(sols, shapes: list[dict], dtype: str, sms: int, problems: list[str],
                gpu: str | None = None) -> list[str]:
    """For each solution that sends shapes to its kernels by a rule (a module-level `route(shape, dtype, sms, gpu)`,
    as the CUDA files that fall back to a Triton family have): where each shape goes on this GPU."""
    out = []
    for sol in sols:
        try:
            module = _routing_module(Path(sol.path))
        except LoadError as exc:
            problems.append(f"{sol.name}: routes: {str(exc).splitlines()[0]}")
            continue
        if module is None:
            continue
        out.append(f"\n{sol.name}: routes ({dtype}, {sms} SMs)")
        out += [f"  {shape_text(shape)} -> {module.route(shape, getattr(torch, dtype), sms, gpu)}" for shape in shapes]
    return out


@click.command("inspect")
@click.argument("problem")
@click.argument("solutions", nargs=-1)
@click.option("--shapes", type=click.Choice(["large", "all", "small", "workload", "tuning", "heldout"]),
              default="large", show_default=True)
@click.option("--shape", "shape_texts", multiple=True, help="Inspect this shape instead of a set: sizes in the order "
              "of the problem's size constants (1x32x1x128) or name=value pairs; repeatable.")
@click.option("--dtype", default=None, help="A dtype the problem declares (bf16, fp16 ... as in bench); default: its "
              "first.")
@click.option("--gpu", "slug", default=None, help="A calibrated GPU folder under results/ (default: newest).")
@click.option("--capability", type=int, default=None, help="Compute capability as 90 for sm_90 (with --sms).")
@click.option("--sms", type=int, default=None, help="Multiprocessor count (with --capability).")
@click.option("--latency-ns", default=700.0, show_default=True,
              help="Assumed loaded memory latency, for the bytes in flight the bandwidth needs.")
@click.option("--sass", "sass_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write each kernel's disassembly here.")
@click.option("--baseline", type=click.Choice(["liger"]), default=None,
              help="Also read a baseline's kernels: Liger-Kernel's, Triton code too (needs liger-kernel installed).")
def inspect_cmd(problem, solutions, shapes, shape_texts, dtype, slug, capability, sms, latency_ns, sass_dir,
                baseline):
    """Compile each solution's kernels for a GPU (no GPU needed) and read their machine code: Triton ones at
    each of the problem's shapes, as launched there; CUDA C++ ones once, through nvcc, with the block size
    their __launch_bounds__ declare (stored shared memory only: dynamic shared memory is not seen). With
    --baseline liger, Liger's kernels beside them, read the same way. Last, for each solution that dispatches,
    the bucket (or, for a rule in route(), the kernel) each shape takes."""
    try:
        registry, ref = find_problem(problem)
        sols = [registry.solution(ref, s) for s in solutions] if solutions else registry.solutions(ref)
        loaded = load_problem(ref.path, "ksuite_inspect_meta")
        meta = loaded.meta
        dtype = select_dtypes(list(meta.dtypes), (dtype,), str(ref.path))[0] if dtype else meta.dtypes[0]
        chosen = custom_shapes(loaded, shape_texts) if shape_texts else meta.sweep(shapes)
    except (RegistryError, LoadError) as exc:
        raise click.ClickException(str(exc)) from None
    except ShapeSpecError as exc:
        raise click.UsageError(f"{ref.path}: --shape: {exc}") from None
    target, where, table_gpu = target_from(slug, capability, sms, latency_ns)
    need = target.needed_bytes_per_sm()
    click.echo(f"{ref.name}, {dtype}, compiled for sm_{target.capability} with {target.sm_count} SMs: {where}")
    rows, problems = [], []
    for sol in sols:
        if is_cuda_solution(sol.path):
            rows += _cuda_rows(sol, ref.path, chosen, target, dtype, sass_dir, problems, table_gpu)
        else:
            rows += _triton_rows(sol.name, ref.path, sol.path, None, chosen, dtype, target, sass_dir, problems)
    if baseline:
        why = _liger_missing(loaded, ref.path)
        if why:
            problems.append(f"{baseline}: {why}")
        else:
            rows += _triton_rows(baseline, ref.path, None, baseline, chosen, dtype, target, sass_dir, problems)
    if rows:
        click.echo(tabulate(rows, headers=HEADERS, disable_numparse=True))
    if any(row[3].endswith("*") for row in rows):
        click.echo(f"\n* fewer programs than the {target.sm_count} SMs: the SMs that get one have only its bytes in "
                   "flight. A kernel that sizes its grid from the device (a persistent one) saw this machine's CPU "
                   "stand-in instead, so on the GPU its grid, and its KB in flight per SM, may be larger.")
    if need:
        click.echo(f"\nLittle's law: {target.bandwidth_Bps / 1e9:.0f} GB/s x {target.latency_ns:.0f} ns (assumed "
                   f"latency) over {target.sm_count} SMs = {need / 1024:.0f} KB in flight per SM to reach the copy "
                   "bandwidth. Bytes in flight are the peak read from the code in order, loops once: a load counts "
                   "until its value is first used, a cp.async copy until a wait retires its group; TMA copies are "
                   "not sized. The peak per SM assumes every resident block is in that phase at once.")
    if rows:
        click.echo("\nLoad rounds: the first global load opens one, and a load that goes out only after the thread "
                   "has waited for an earlier load's data opens the next (code order, loops once). A call of a few "
                   "microseconds pays about one memory latency per round.")
    for line in dispatch_lines(sols, chosen, table_gpu) + route_lines(sols, chosen, dtype, target.sm_count, problems,
                                                                   table_gpu):
        click.echo(line)
    for line in problems:
        click.echo(f"not inspected: {line}", err=True)
    sys.exit(exit_codes.OK if rows else exit_codes.FAILED)  # nothing could be inspected


commands = [inspect_cmd]
