"""`ksuite bench --confirm`: one command for the verdict a user can trust at a few microseconds. A timed bench goes
on to re-time its own close calls paired (`ksuite confirm`, a second run file) instead of printing the command to do
it; without baselines or as JSON there is nothing to pair or no table to print, and the flag is refused in one line."""

from dataclasses import replace

from click.testing import CliRunner
from conftest import SCALE_ROWS

from harness.records import Measurement
from suite import commands, exit_codes
from suite.bench import BenchOutcome
from suite.cli import cli


def test_confirm_is_refused_without_baselines_or_as_json(results_root):
    for extra in (["--json"], ["--no-baselines"]):
        out = CliRunner().invoke(cli, ["bench", str(SCALE_ROWS), "--confirm", *extra])
        assert out.exit_code == exit_codes.USAGE, out.output
        assert "--confirm" in out.output and "Traceback" not in out.output
    assert not (results_root).exists() or not any(results_root.rglob("*.jsonl"))  # nothing ran


def close_call_records(problem: str) -> list[Measurement]:
    """A timed bench's records at one shape: ours at 0.93x torch.compile in 4.3 us, a close call."""
    shape = {"rows": 7, "cols": 1600}
    common = dict(problem=problem, shape=shape, dtype="float16", correct=True, shape_set="custom", gpu="NVIDIA H200")
    return [Measurement(solution="compile", kind="baseline", median_us=4.0, **common),
            Measurement(solution="triton_family", kind="solution", median_us=4.3, source_hash="abc", **common)]


def fake_timed_bench(monkeypatch, confirm_exit: int):
    """Stand for a GPU machine: the options say timed, the plan's spread writes close_call_records, and the confirm
    step is recorded (then run for real: on this CPU it lists the close call and times nothing) or fails."""
    real_options = commands.base_options
    monkeypatch.setattr(commands, "base_options", lambda *a, **k: replace(real_options(*a, **k), interpret=False))

    def spread(plan, options, env, run, with_baselines, **kwargs):
        for record in close_call_records(plan[0][0].name):
            run.append(record)
        return BenchOutcome(records=run.read())

    monkeypatch.setattr(commands, "where_to_run", lambda gpus, ray: spread)
    confirmed = []
    real_confirm = commands.confirm_run

    def confirm_run(run, **kwargs):
        confirmed.append(run.run_id)
        return real_confirm(run, **kwargs) if confirm_exit == exit_codes.OK else confirm_exit

    monkeypatch.setattr(commands, "confirm_run", confirm_run)
    return confirmed


def test_a_timed_bench_re_times_its_close_calls_itself(results_root, monkeypatch):
    confirmed = fake_timed_bench(monkeypatch, exit_codes.OK)
    out = CliRunner().invoke(cli, ["bench", str(SCALE_ROWS), "--confirm"])
    assert out.exit_code == exit_codes.OK, out.output
    (run_id,) = confirmed
    assert f"confirm {run_id}: the close calls again, paired" in out.output
    assert "triton_family float16: 1 close shape(s) (7x1600), beside compile" in out.output
    assert "no CUDA device: nothing re-timed" in out.output
    assert f"`ksuite confirm {run_id}`" not in out.output  # the hint to run it by hand is not printed


def test_without_the_flag_the_bench_only_names_the_command(results_root, monkeypatch):
    confirmed = fake_timed_bench(monkeypatch, exit_codes.OK)
    out = CliRunner().invoke(cli, ["bench", str(SCALE_ROWS)])
    assert out.exit_code == exit_codes.OK, out.output
    assert confirmed == [] and "`ksuite confirm " in out.output


def test_a_confirm_that_fails_fails_the_bench(results_root, monkeypatch):
    fake_timed_bench(monkeypatch, exit_codes.FAILED)
    assert CliRunner().invoke(cli, ["bench", str(SCALE_ROWS), "--confirm"]).exit_code == exit_codes.FAILED
