"""The GPU round scripts: each device call is precious, so a script that does not parse, or a round that
brings back a run file without its options file (then a later round cannot resume it with its own
selection: the round of 2026-12-01 resumed one as the whole default suite), costs a session's device time."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "scripts").glob("*.sh"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_round_script_parses(script):
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.name != "round_lib.sh"], ids=lambda p: p.name)
def test_every_round_script_runs_by_its_path(script):
    # the device call is `OUT=$OUT scripts/queue_round.sh`: on 2026-12-06 its first call got "Permission denied"
    # (round_lib.sh is only sourced)
    assert os.access(script, os.X_OK), f"{script.name}: not executable (git update-index --chmod=+x)"


def test_collect_runs_brings_back_new_and_named_runs_with_their_options_files(tmp_path):
    runs = tmp_path / "results" / "gpu-x"
    runs.mkdir(parents=True)
    (runs / "old.jsonl").write_text("{}\n")
    (runs / "old.run.json").write_text("{}")
    (runs / "resumed.jsonl").write_text("{}\n")
    (runs / "resumed.run.json").write_text("{}")
    before = tmp_path / "before.txt"
    before.write_text("results/gpu-x/old.jsonl\nresults/gpu-x/resumed.jsonl\n")
    (runs / "new.jsonl").write_text("{}\n")
    (runs / "new.run.json").write_text("{}")
    (runs / "unrecorded.jsonl").write_text("{}\n")  # a run from before options files: no .run.json
    dest = tmp_path / "back"
    dest.mkdir()
    script = f'source "{ROOT / "scripts" / "round_lib.sh"}"; collect_runs before.txt back resumed'
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env={"GPU_SLUG": "gpu-x", "PATH": "/usr/bin:/bin"},
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in dest.iterdir()) == [
        "new.jsonl", "new.run.json", "resumed.jsonl", "resumed.run.json", "unrecorded.jsonl"]


def test_a_round_unpacks_the_carried_cutlass_archive_once(tmp_path):
    # the headers (29 MB) no longer fit beside the tree in a call's 64 MiB carry (2026-12-07); the archive does
    headers = tmp_path / "src" / "cutlass" / "include" / "cute"
    headers.mkdir(parents=True)
    (headers / "tensor.hpp").write_text("// header\n")
    (tmp_path / "work" / ".cache").mkdir(parents=True)
    subprocess.run(["tar", "czf", str(tmp_path / "work" / ".cache" / "cutlass.tar.gz"), "-C", str(tmp_path / "src"),
                    "cutlass"], check=True)
    script = f'source "{ROOT / "scripts" / "round_lib.sh"}"; unpack_cutlass && carried_line'
    env = {"PATH": "/usr/bin:/bin"}
    first = subprocess.run(["bash", "-c", script], cwd=tmp_path / "work", env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "work" / ".cache" / "cutlass" / "include" / "cute" / "tensor.hpp").exists()
    assert "CUTLASS headers yes" in first.stdout
    (tmp_path / "work" / ".cache" / "cutlass" / "include" / "cute" / "tensor.hpp").write_text("// edited\n")
    again = subprocess.run(["bash", "-c", script], cwd=tmp_path / "work", env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "work" / ".cache" / "cutlass" / "include" / "cute" / "tensor.hpp").read_text() == "// edited\n"


def test_a_dry_run_says_what_a_call_would_send_against_its_64_mib(tmp_path):
    # the tree and the CUTLASS headers together were refused by the device (2026-12-07): say so before a call
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "carried").mkdir()
    for path, mib in ((tmp_path / "tracked.bin", 3), (tmp_path / "carried" / "big.bin", 55)):
        with open(path, "wb") as f:
            f.truncate(mib * 1048576)  # sparse: the sizes count, not the disk
    (tmp_path / ".gitignore").write_text("carried/\n")
    script = f'source "{ROOT / "scripts" / "round_lib.sh"}"; travel_line "$@"'
    small = subprocess.run(["bash", "-c", script, "x"], cwd=tmp_path, capture_output=True, text=True)
    assert small.stdout.startswith("travels: 3 MiB of 64 (tree 3, carried 0"), small.stdout + small.stderr
    assert "NEAR THE LIMIT" not in small.stdout
    big = subprocess.run(["bash", "-c", script, "x", "carried"], cwd=tmp_path, capture_output=True, text=True)
    assert big.stdout.startswith("travels: 58 MiB of 64 (tree 3, carried 55: carried)"), big.stdout + big.stderr
    assert "NEAR THE LIMIT: carry less" in big.stdout


def test_option_text_splits_as_a_command_line_with_globs_kept_whole():
    """OPT_ARGS of a round: quoted or not, a bucket glob is one argument, and its < and > are not redirections."""
    text = "--bucket dim<=4096,batch_size>8192 --bucket '*,rows<=16' --per-bucket 6"
    split = f'source "{ROOT / "scripts" / "round_lib.sh"}"; mapfile -t a < <(shell_words "$1"); '
    result = subprocess.run(["bash", "-c", split + 'printf "[%s]" "${a[@]}"', "-", text], capture_output=True,
                            text=True)
    words = "[--bucket][dim<=4096,batch_size>8192][--bucket][*,rows<=16][--per-bucket][6]"
    assert result.stdout == words, result.stderr
    empty = subprocess.run(["bash", "-c", split + "echo ${#a[@]}", "-", ""], capture_output=True, text=True)
    assert empty.stdout.strip() == "0"


@pytest.mark.parametrize("budget, most, minutes", [(600, "3", "3.0"), (215, "2", "2.0"), (210, "2", "2.0"),
                                                   (200, "2", "1.8"), (120, "3", "1.0"), (30, "3", "1.0")])
def test_a_search_takes_the_round_s_time_to_the_tenth_of_a_minute(budget, minutes, most):
    """workload_round.sh's search: all of its budget less 90 s, at most SEARCH_MIN, at least a minute."""
    script = f'source "{ROOT / "scripts" / "round_lib.sh"}"; search_minutes "$1" "$2"'
    result = subprocess.run(["bash", "-c", script, "-", str(budget), most], capture_output=True, text=True)
    assert result.stdout.strip() == minutes, result.stderr


def test_pmpp_v2_folder_copies_what_gpu_mode_eval_needs_and_names_a_wrong_source(tmp_path):
    """The GPU machine has no network: a folder missing eval.py or task.yml would cost a device call to find."""
    problem = tmp_path / "checkout" / "problems" / "pmpp_v2"
    (problem / "vectorsum_py").mkdir(parents=True)
    for name in ("eval.py", "utils.py", "vectorsum_py/task.yml", "vectorsum_py/reference.py",
                 "vectorsum_py/task.py"):
        (problem / name).write_text(f"# {name}\n")
    work = tmp_path / "work"
    work.mkdir()
    script = str(ROOT / "scripts" / "pmpp_v2_folder.sh")
    result = subprocess.run(["bash", script, str(tmp_path / "checkout")], cwd=work, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    dest = work / ".cache" / "pmpp_v2"
    assert (dest / "eval.py").read_text() == "# eval.py\n"
    assert (dest / "vectorsum_py" / "task.yml").read_text() == "# vectorsum_py/task.yml\n"
    wrong = subprocess.run(["bash", script, str(tmp_path / "nowhere")], cwd=work, capture_output=True, text=True)
    assert wrong.returncode == 1
    assert wrong.stderr.strip() == f"{tmp_path / 'nowhere'}: no problems/pmpp_v2 folder"


def test_a_round_names_the_results_folder_of_the_gpu_it_runs_on():
    """GPU_SLUG's default: the folder ksuite writes this machine's runs to (here, without a GPU, the interpreter's),
    so a round lent an H100 brings back the H100's run files."""
    script = f'source "{ROOT / "scripts" / "round_lib.sh"}"; this_gpu_slug "$1"'
    env = {"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "", "TRITON_INTERPRET": "1"}
    result = subprocess.run(["bash", "-c", script, "-", sys.executable], cwd=ROOT, env=env, capture_output=True,
                            text=True)
    assert result.stdout.strip() == "cpu-interpreter", result.stderr
    broken = subprocess.run(["bash", "-c", script, "-", "/bin/false"], cwd=ROOT, env=env, capture_output=True,
                            text=True)
    assert broken.stdout.strip() == "unnamed-gpu" and "set GPU_SLUG" in broken.stderr


def _queue(tmp_path, lines: list[str], cwd: Path = ROOT, **env) -> tuple[subprocess.CompletedProcess, Path]:
    """scripts/queue_round.sh over a queue of `lines` (tab-separated), as on an H100, with no GPU, run from `cwd`:
    its summary."""
    import tarfile

    queue = tmp_path / "queue.tsv"
    queue.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    run_env = {"PATH": "/usr/bin:/bin", "OUT": str(out), "GPU_NAME": "NVIDIA H100 80GB HBM3", "GPU_SLUG": "gpu-x",
               "PY": sys.executable, "KSUITE_CACHE_DIR": str(tmp_path / "cache"), "ALLOW_MISSING_CARRY": "1", **env}
    result = subprocess.run(["bash", str(ROOT / "scripts" / "queue_round.sh"), str(queue)], cwd=cwd, env=run_env,
                            capture_output=True, text=True, timeout=120)
    with tarfile.open(out / "queue.tar.gz") as tar:
        tar.extractall(tmp_path / "back", filter="data")
    return result, tmp_path / "back"


def test_the_queue_runs_its_gpus_steps_in_order_each_with_its_own_out(tmp_path):
    result, back = _queue(tmp_path, [
        "# a comment",
        "H100\t30\tfirst\techo one > $OUT/note.txt; echo first says hi",
        "H200\t30\tother-gpu\techo never",
        "any\t30\tsecond\techo second ran; exit 3",
        "H100\tlots\tbroken",
    ])
    assert result.returncode == 0, result.stderr
    summary = result.stdout
    assert "first says hi" in summary and "second ran" in summary and "never" not in summary
    assert summary.index("## first") < summary.index("## second")
    head = summary.split("\n## ")[0].splitlines()
    assert head[1].startswith("carried: Liger wheel ")  # a round without the wheel says so before its steps
    table = head[next(i for i, line in enumerate(head) if line.split()[:2] == ["step", "rc"]) + 1:]
    rows = {line.split()[0]: line.split()[1] for line in table}
    assert rows == {"first": "0", "second": "3", "line-5": "bad"}
    assert (back / "steps" / "first" / "note.txt").read_text() == "one\n"  # its own OUT, brought back


@pytest.mark.parametrize("dry_run", ["0", "1"])
def test_a_queue_missing_a_carried_folder_runs_nothing_and_says_which(tmp_path, dry_run):
    # a new checkout's first call (H100, 2026-12-07) carried no Liger wheel, CUTLASS or pmpp_v2 and ran 555 s anyway
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    queue = tmp_path / "queue.tsv"
    queue.write_text("any\t30\tfirst\techo first ran\n")
    out = tmp_path / "out"
    result = subprocess.run(["bash", str(ROOT / "scripts" / "queue_round.sh"), str(queue)], cwd=checkout,
                            capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "OUT": str(out), "GPU_NAME": "NVIDIA H100 80GB HBM3",
                                 "GPU_SLUG": "gpu-x", "PY": sys.executable, "DRY_RUN": dry_run,
                                 "KSUITE_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2
    assert "Liger wheel NO" in result.stdout and "not run: a carried folder is missing" in result.stdout
    assert "first ran" not in result.stdout and "would run" not in result.stdout
    assert "not run" in (out / "summary.txt").read_text()  # what the device call brings back says so too


def fake_liger_wheel(folder: Path) -> None:
    """A pure-Python wheel named as Liger's, whose module says it is this test's."""
    import base64
    import hashlib
    import zipfile

    files = {"liger_kernel/__init__.py": "MARK = 'carried'\n",
             "liger_kernel-0.0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: liger-kernel\nVersion: 0.0.1\n",
             "liger_kernel-0.0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                  "Tag: py3-none-any\n"}
    digest = {name: base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
              for name, text in files.items()}
    record = "".join(f"{name},sha256={digest[name]},{len(text.encode())}\n" for name, text in files.items())
    with zipfile.ZipFile(folder / "liger_kernel-0.0.1-py3-none-any.whl", "w") as wheel:
        for name, text in {**files, "liger_kernel-0.0.1.dist-info/RECORD": record + "liger_kernel-0.0.1.dist-info/"
                           "RECORD,,\n"}.items():
            wheel.writestr(name, text)


def test_every_queue_step_imports_the_carried_liger_wheel(tmp_path):
    # on the H100 (2026-12-07) two `ksuite confirm` steps ran without Liger, which only the workload rounds
    # installed: the paired records then judged layernorm and softmax against the next-best baseline
    checkout = tmp_path / "checkout"
    (checkout / ".whl").mkdir(parents=True)
    fake_liger_wheel(checkout / ".whl")
    result, back = _queue(tmp_path, ["any\t60\tconfirm\tpython3 -c 'import liger_kernel; print(liger_kernel.MARK)'"],
                          cwd=checkout, LIGER_SITE=str(tmp_path / "site"))
    assert result.returncode == 0, result.stderr
    assert "liger-kernel: on every step's path" in result.stdout
    assert (back / "steps" / "confirm" / "stdout.txt").read_text() == "carried\n"


def test_a_queue_brings_back_its_cuda_builds_and_the_next_call_loads_them(tmp_path):
    # a fresh H100 spent 102 s building matmul's CUTLASS routes before timing anything, and the call's limit cut
    # the bench (2026-12-07): a call now unpacks the builds a former one brought back, keeping any it has
    ext = "$KSUITE_CACHE_DIR/torch_extensions/py_t_gpu"
    build = f"for e in ext_abc ext_def; do mkdir -p {ext}/$e && echo built > {ext}/$e/$e.so; done"
    (tmp_path / "first").mkdir()
    first, _ = _queue(tmp_path / "first", [f"any\t30\tbuild\t{build}"])
    assert first.returncode == 0, first.stderr
    assert "builds: none carried for gpu-x" in first.stdout and "builds: 2 folders packed" in first.stdout
    checkout, cache = tmp_path / "checkout", tmp_path / "second" / "cache"
    (checkout / ".cache" / "builds").mkdir(parents=True)
    (tmp_path / "first" / "out" / "builds.tar.gz").rename(checkout / ".cache" / "builds" / "gpu-x.tar.gz")
    (cache / "torch_extensions" / "py_t_gpu" / "ext_abc").mkdir(parents=True)
    (cache / "torch_extensions" / "py_t_gpu" / "ext_abc" / "ext_abc.so").write_text("this machine's\n")
    load = f"cat {ext}/ext_abc/ext_abc.so {ext}/ext_def/ext_def.so"
    second, back = _queue(tmp_path / "second", [f"any\t30\tload\t{load}"], cwd=checkout, KSUITE_CACHE_DIR=str(cache))
    assert second.returncode == 0, second.stderr
    assert "builds: 2 libraries carried in .cache/builds/gpu-x.tar.gz" in second.stdout
    assert (back / "steps" / "load" / "stdout.txt").read_text() == "this machine's\nbuilt\n"


def test_a_queue_stopped_mid_step_has_already_packed_the_steps_before(tmp_path):
    # the device ends a call at its limit: what came back is what $OUT held by then. The call is ended once the
    # first step is packed, during the second, however long the queue's setup took on this machine.
    import signal
    import tarfile
    import time

    queue = tmp_path / "queue.tsv"
    marker = f"stuck-{os.getpid()}-{time.monotonic_ns()}"  # names the stuck step's processes, to end them after
    queue.write_text(f"any\t30\tfirst\techo first ran > $OUT/kept.txt\nany\t300\tstuck\tsleep 300 # {marker}\n")
    out = tmp_path / "out"
    env = {"PATH": "/usr/bin:/bin", "OUT": str(out), "GPU_NAME": "NVIDIA H100 80GB HBM3", "GPU_SLUG": "gpu-x",
           "PY": sys.executable, "KSUITE_CACHE_DIR": str(tmp_path / "cache"), "ALLOW_MISSING_CARRY": "1"}
    proc = subprocess.Popen(["bash", str(ROOT / "scripts" / "queue_round.sh"), str(queue)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and not (
                "## first" in _summary(out) and (out / "queue.tar.gz").exists()):
            time.sleep(0.2)
        assert proc.poll() is None, "the queue ended by itself before it was stopped"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        _kill_groups_of(marker)  # the step's `timeout` leads a process group of its own
    assert "first" in (out / "summary.txt").read_text()
    with tarfile.open(out / "queue.tar.gz") as tar:
        tar.extractall(tmp_path / "back", filter="data")
    assert (tmp_path / "back" / "steps" / "first" / "kept.txt").read_text() == "first ran\n"


def _kill_groups_of(marker: str) -> None:
    """SIGKILL the process group of every process whose command line holds `marker`."""
    import signal

    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                os.killpg(os.getpgid(int(cmdline.parent.name)), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


def _summary(out: Path) -> str:
    """The queue's summary so far ('' before it has one)."""
    try:
        return (out / "summary.txt").read_text()
    except FileNotFoundError:
        return ""


def test_the_queue_skips_a_step_longer_than_the_time_left_and_the_names_in_skip(tmp_path):
    result, back = _queue(tmp_path, [
        "any\t500\ttoo-long\techo too long",
        "any\t30\tdone-before\techo done before",
        "any\t30\tshort\techo short ran",
    ], ROUND_S="120", SKIP="done-before")
    assert result.returncode == 0, result.stderr
    assert "skipped: 500 s >" in result.stdout and "short ran" in result.stdout
    assert "too long" not in result.stdout.split("## short")[1] and "done before" not in result.stdout
    assert not (back / "steps" / "too-long").exists()


def test_a_dry_run_counts_the_devices_setup_before_the_first_step(tmp_path):
    """A step within 15 s of the whole round less packing fits at second 0 but not after the device's setup: the
    dry run must not promise it."""
    result, _ = _queue(tmp_path, ["any\t100\twhole-round\techo x", "any\t60\tshorter\techo y"],
                       ROUND_S="120", DRY_RUN="1")
    assert result.returncode == 0, result.stderr
    skipped = re.search(r"whole-round\s+skipped: 100 s > (\d+) s left", result.stdout)
    assert skipped and int(skipped.group(1)) <= 95, result.stdout  # 120 - 15 for packing - 25 for setup, or less
    assert "would run: limit 60 s" in result.stdout


def test_every_step_of_the_committed_queue_parses():
    """A queue line the runner cannot read, or a command bash cannot parse, costs a step of a precious call."""
    lines = [line for line in (ROOT / "scripts" / "device_queue.tsv").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines
    for line in lines:
        gpu, limit, name, command = line.split("\t")
        assert gpu in ("H100", "H200", "any") and limit.isdigit() and int(limit) <= 590, line
        assert name.replace("-", "").replace("_", "").isalnum(), line
        result = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
        assert result.returncode == 0, (name, result.stderr)


def test_every_queued_confirm_has_a_close_call_whose_source_is_unchanged():
    """`ksuite confirm RUN` re-times nothing of a solution whose file changed since RUN: the H200's matmul step of
    2026-12-07 spent its start on such a run. A table search on one GPU changes the file for every GPU."""
    from suite.confirm import MAX_US, WITHIN, close_groups, still_measured

    def still_the_run(group):  # confirm's own rule: the same file, or changed only where another GPU looks
        path = ROOT / "solutions" / group.problem / f"{group.solution}.py"
        return path.exists() and still_measured(group, path)

    steps = [line.split("\t") for line in (ROOT / "scripts" / "device_queue.tsv").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    stale = []
    for _gpu, _limit, name, command in steps:
        for run, args in re.findall(r"suite confirm (\d{8}-\d{6})([^;&|]*)", command):
            files = list((ROOT / "results").glob(f"*/{run}.jsonl"))
            assert files, f"{name}: no results/*/{run}.jsonl"
            records = [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]
            within = re.search(r"--within ([0-9.]+)", args)
            max_us = re.search(r"--max-us ([0-9.]+)", args)
            groups = close_groups(records, float(within.group(1)) if within else WITHIN,
                                  float(max_us.group(1)) if max_us else MAX_US)
            current = [g for g in groups if still_the_run(g)]
            if not current:
                stale.append(f"{name}: run {run}'s close calls ({len(groups)} groups) were all measured on a "
                             "source that has changed since: bench the problem again instead")
    assert not stale, stale


def test_a_dry_run_lists_the_committed_queues_steps_for_each_gpu(tmp_path):
    """What a call would run, checked here before a device second is spent: each GPU gets its own steps (a GPU
    with nothing queued, once its steps are done and removed, gets none, and that is not an error)."""
    queue = (ROOT / "scripts" / "device_queue.tsv").read_text().splitlines()
    for gpu, other in (("NVIDIA H100 80GB HBM3", "h200-"), ("NVIDIA H200", "h100-")):
        planned = any(line.startswith(gpu.split()[1] + "\t") for line in queue)
        out = tmp_path / gpu.split()[1]
        result = subprocess.run(["bash", str(ROOT / "scripts" / "queue_round.sh")], cwd=ROOT, capture_output=True,
                                text=True, timeout=120,
                                env={"PATH": "/usr/bin:/bin", "OUT": str(out), "GPU_NAME": gpu, "GPU_SLUG": "gpu-x",
                                     "PY": sys.executable, "KSUITE_CACHE_DIR": str(tmp_path / "cache"),
                                     "DRY_RUN": "1", "ALLOW_MISSING_CARRY": "1"})
        assert result.returncode == 0, result.stderr
        table = result.stdout.split("round wall time")[0]
        assert ("would run" in table) == planned and other not in table, table
