"""scripts/land_queue.py: what a device call brought back lands in the tree, and nothing there is lost to it."""

import io
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import land_queue  # noqa: E402

SLUG = "nvidia-h100-80gb-hbm3"
WHEN = 1796561580  # 2026-12-06 12:53 UTC


def tar_bytes(files: dict[str, bytes], mtime: int = WHEN) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), mtime
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def a_call(folder: Path) -> Path:
    """A call's folder as scripts/queue_round.sh leaves it: one workload step and one plain step."""
    round_tar = tar_bytes({f"results/{SLUG}/optimize/rotary-20261206-125300.tsv": b"ledger\n",
                           f"results/{SLUG}/rounds/20261206-1253-compile-launches.tsv": b"kernel\n",
                           f"results/{SLUG}/calibration.json": b'{"new": 1}\n',
                           "solutions/rotary/triton_family.py": b"# the step's copy\n"})
    folder.mkdir()
    (folder / "queue.tar.gz").write_bytes(tar_bytes({
        "summary.txt": f"GPU: NVIDIA H100 80GB HBM3 (results/{SLUG}); queue q.tsv; 595 s\nstep rc\n".encode(),
        "results/20261206-125500.jsonl": b"{}\n",
        "results/20261206-125500.run.json": b"{}\n",
        "changed/solutions/rotary/triton_family.py": b"# tuned\n",
        "steps/h100-rotary-hints/stdout.txt": b"kept 1\n",
        "steps/h100-rotary-hints/logs/h100-rotary-hints.log": b"",
        "steps/h100-rotary-hints/round.tar.gz": round_tar,
        "steps/h100-rotary-hints/ab-rotary-hints.txt": b"1.02x\n",
        "steps/h100-edge/stdout.txt": b"done\n",
        "steps/h100-edge/logs/h100-edge.log": b"Traceback\n",
    }))
    return folder


def test_every_result_lands_where_the_tree_keeps_it(tmp_path, capsys):
    repo = tmp_path / "repo"
    (repo / "solutions" / "rotary").mkdir(parents=True)
    (repo / "solutions" / "rotary" / "triton_family.py").write_text("# before\n")
    (repo / "results" / SLUG).mkdir(parents=True)
    (repo / "results" / SLUG / "calibration.json").write_text('{"old": 1}\n')
    assert land_queue.main([str(a_call(tmp_path / "call")), "--repo", str(repo)]) == 0
    printed = capsys.readouterr().out
    results, rounds = repo / "results" / SLUG, repo / "results" / SLUG / "rounds"
    assert (results / "20261206-125500.jsonl").is_file() and (results / "20261206-125500.run.json").is_file()
    assert (results / "optimize" / "rotary-20261206-125300.tsv").read_text() == "ledger\n"
    assert (rounds / "20261206-1253-compile-launches.tsv").is_file()
    assert (repo / "solutions" / "rotary" / "triton_family.py").read_text() == "# tuned\n"  # changed/, not round's
    assert (rounds / "20261206-1253-h100-rotary-hints.txt").read_text() == "kept 1\n"
    assert (rounds / "20261206-1253-h100-rotary-hints-ab-rotary-hints.txt").read_text() == "1.02x\n"
    assert (rounds / "20261206-1253-h100-edge.log").read_text() == "Traceback\n"
    assert not (rounds / "20261206-1253-h100-rotary-hints.log").exists()  # an empty stderr is no file
    assert (rounds / "20261206-1253-queue-summary.txt").is_file()
    # a file the tree has is never overwritten by the device's, and the user is told it differs
    assert (results / "calibration.json").read_text() == '{"old": 1}\n'
    assert f"left results/{SLUG}/calibration.json: the tree's copy differs" in printed


def test_a_second_landing_writes_nothing_and_a_dry_run_writes_nothing(tmp_path, capsys):
    call = a_call(tmp_path / "call")
    repo = tmp_path / "repo"
    repo.mkdir()
    assert land_queue.main([str(call), "--repo", str(repo), "--dry-run"]) == 0
    assert "would write results/" in capsys.readouterr().out
    assert not any(repo.iterdir())
    land_queue.main([str(call), "--repo", str(repo)])
    capsys.readouterr()
    land_queue.main([str(call), "--repo", str(repo)])
    assert capsys.readouterr().out.strip() == "nothing new to land"


def test_a_call_that_brought_nothing_back_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    try:
        land_queue.main([str(tmp_path / "empty")])
    except SystemExit as exit_:
        assert "queue.tar.gz: no such file" in str(exit_.code)
    else:
        raise AssertionError("no error for a missing queue.tar.gz")


def test_a_workload_round_called_directly_lands_its_archive_and_its_logs(tmp_path, capsys):
    # the third call of 2026-12-07 ran scripts/workload_round.sh itself: round.tar.gz and the logs, no queue
    call = tmp_path / "call"
    call.mkdir()
    archive = {f"results/{SLUG}/20261207-014007.jsonl": b"{}\n",
               f"results/{SLUG}/rounds/20261207-0142-compile-launches.tsv": b"k\n"}
    (call / "round.tar.gz").write_bytes(tar_bytes(archive))
    (call / "bench.log").write_text("bench exit 0\n")
    (call / "setup.log").write_text("")
    (call / "ksuite-cache.tar.gz").write_bytes(b"not text")
    repo = tmp_path / "repo"
    repo.mkdir()
    assert land_queue.main([str(call), "--repo", str(repo), "--step", "h100-swiglu-act-heldout"]) == 0
    results = repo / "results" / SLUG
    assert (results / "20261207-014007.jsonl").is_file()
    assert (results / "rounds" / "20261207-0142-compile-launches.tsv").is_file()
    landed = [p.name for p in (results / "rounds").iterdir() if p.name.endswith("-h100-swiglu-act-heldout-bench.log")]
    assert len(landed) == 1 and "setup.log" not in capsys.readouterr().out  # an empty log is no file


def test_the_builds_a_call_brought_back_replace_the_carried_ones_for_that_gpu(tmp_path, capsys):
    # the CUDA builds (CUTLASS: 102 s on a fresh H100, 2026-12-07) come back beside queue.tar.gz; the next
    # call carries .cache/builds and loads them instead of building again
    call = a_call(tmp_path / "call")
    (call / "builds.tar.gz").write_bytes(tar_bytes({"torch_extensions/py311_t/cutlass_abc/x.so": b"lib"}))
    repo = tmp_path / "repo"
    (repo / ".cache" / "builds").mkdir(parents=True)
    (repo / ".cache" / "builds" / f"{SLUG}.tar.gz").write_bytes(b"older")
    (repo / ".cache" / "builds" / "nvidia-h200.tar.gz").write_bytes(b"the other gpu's")
    assert land_queue.main([str(call), "--repo", str(repo)]) == 0
    assert f"wrote .cache/builds/{SLUG}.tar.gz" in capsys.readouterr().out
    assert (repo / ".cache" / "builds" / f"{SLUG}.tar.gz").read_bytes() == (call / "builds.tar.gz").read_bytes()
    assert (repo / ".cache" / "builds" / "nvidia-h200.tar.gz").read_bytes() == b"the other gpu's"


def test_a_call_that_packed_only_its_new_builds_keeps_the_carried_ones_it_lacks(tmp_path, capsys):
    # 2026-12-08: a probe's five CUTLASS variants came back alone (all ten passed the device's 8 MiB), and landing
    # them over the carried tarball dropped the routes' builds the held-out bench loads
    env = "torch_extensions/py312_torch2.11.0_h100"
    call = a_call(tmp_path / "call")
    (call / "builds.tar.gz").write_bytes(tar_bytes({f"{env}/probe_c/c.so": b"probe", f"{env}/shared/s.so": b"new"}))
    repo = tmp_path / "repo"
    (repo / ".cache" / "builds").mkdir(parents=True)
    carried = repo / ".cache" / "builds" / f"{SLUG}.tar.gz"
    carried.write_bytes(tar_bytes({f"{env}/route_a/a.so": b"route", f"{env}/shared/s.so": b"old"}))
    assert land_queue.main([str(call), "--repo", str(repo)]) == 0
    with tarfile.open(carried) as tar:
        landed = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    assert landed == {f"{env}/probe_c/c.so": b"probe", f"{env}/shared/s.so": b"new", f"{env}/route_a/a.so": b"route"}


def test_carried_builds_past_the_cap_are_left_out_and_named():
    env = "torch_extensions/py312_torch2.11.0_h100"
    new = tar_bytes({f"{env}/probe_c/c.so": b"probe"})
    old = tar_bytes({f"{env}/route_a/a.so": bytes(range(256)) * 64})
    merged, dropped = land_queue.merged_builds(new, old, cap=len(new) + 64)
    assert merged == new and dropped == [f"{env}/route_a"]
    assert land_queue.merged_builds(new, b"not a tarball") == (new, [])
