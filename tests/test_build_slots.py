"""The machine's limit on CUDA builds at once: sized by cores and free memory, shared by every process through
file locks that a killed holder gives back, and taken by a build but not by a library already built."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness import build_slots, cuda_build

GIB = 1 << 30
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="file locks are POSIX flock here")


class Polled(Exception):
    """Raised by a stand-in sleep: the slot was not free, so build_slot waited."""


def refuse(_seconds):
    raise Polled


def test_slots_follow_the_cores_and_the_free_memory():
    assert build_slots.slot_count(cpus=16, memory=115 * GIB) == 16  # the H200's host: the cores decide
    assert build_slots.slot_count(cpus=8, memory=28 * GIB) == 4  # a 32 GB workstation: memory decides
    assert build_slots.slot_count(cpus=8, memory=2 * GIB) == 1  # never none
    assert build_slots.slot_count(cpus=8, memory=None) == 8  # memory unknown: the cores


def test_free_memory_is_read_from_meminfo(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemFree:  1000 kB\nMemAvailable:   23000000 kB\n")
    assert build_slots.available_memory(meminfo) == 23000000 * 1024
    assert build_slots.available_memory(tmp_path / "absent") is None


def test_a_count_in_the_environment_wins_when_it_is_a_positive_number():
    assert build_slots.configured_count({build_slots.SLOTS_ENV: "3"}) == 3
    machine = build_slots.slot_count(memory=build_slots.available_memory())
    assert build_slots.configured_count({build_slots.SLOTS_ENV: "0"}) == machine
    assert build_slots.configured_count({build_slots.SLOTS_ENV: "many"}) == machine


def test_builds_past_the_count_wait_until_a_slot_is_given_back(tmp_path):
    with build_slots.build_slot(2, tmp_path, sleep=refuse) as first:
        with build_slots.build_slot(2, tmp_path, sleep=refuse) as second:
            assert {first, second} == {0, 1}
            with pytest.raises(Polled), build_slots.build_slot(2, tmp_path, sleep=refuse):
                pass
        with build_slots.build_slot(2, tmp_path, sleep=refuse) as again:
            assert again == second  # given back when the build ended


def test_a_killed_holder_gives_its_slot_back(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        from harness import build_slots
        with build_slots.build_slot(1, {str(tmp_path)!r}):
            print("held", flush=True)
            time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(Polled), build_slots.build_slot(1, tmp_path, sleep=refuse):
            pass
    finally:
        holder.kill()
        holder.wait()
    with build_slots.build_slot(1, tmp_path, sleep=refuse) as number:
        assert number == 0


def test_a_build_takes_a_slot_and_a_library_already_built_does_not(tmp_path, monkeypatch):
    from torch.utils import cpp_extension

    taken: list[int] = []
    real_slot = build_slots.build_slot

    def fake_slot(count, *args, **kwargs):
        taken.append(count)
        return real_slot(count, tmp_path / "slots")

    def fake_load_inline(name, **kwargs):
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / f"{name}.so").write_text("library")

    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    monkeypatch.setenv(build_slots.SLOTS_ENV, "5")
    monkeypatch.setattr(cpp_extension, "load_inline", fake_load_inline)  # restored after the test
    monkeypatch.setattr(cpp_extension, "load", fake_load_inline)
    monkeypatch.setattr(build_slots, "build_slot", fake_slot)
    watch = cuda_build._LibraryWatch()
    cpp_extension.load_inline("ext_a", cpp_sources="")
    assert taken == [5] and watch.rebuilt
    cpp_extension.load_inline("ext_a", cpp_sources="")  # its library is there: loaded, no slot
    assert taken == [5]


def test_every_build_child_of_a_run_is_told_one_count(monkeypatch):
    seen: list[str] = []
    monkeypatch.setattr(cuda_build, "is_cuda_solution", lambda path: True)
    monkeypatch.setattr(cuda_build, "build_in_child", lambda problem, solution, env, timeout_s: seen.append(
        env[build_slots.SLOTS_ENV]) or cuda_build.Build(solution, "cached", 0.1))
    monkeypatch.setattr(build_slots, "configured_count", lambda env=None: 7)
    builds = cuda_build.Prebuilds([(Path("p.py"), Path("a.py")), (Path("p.py"), Path("b.py"))], {}, 60,
                                  lambda line: None)
    builds.wait()
    builds.close()
    assert seen == ["7", "7"]
