"""MODEL specs: bundled names, factories and Hugging Face configs load, or fail with one clear line."""

import json

import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from suite.cli import cli
from suite.profile.model_spec import ModelError, load_model

FACTORY = FIXTURES / "profile" / "factory_model.py"


@pytest.mark.parametrize("spec, message", [
    ("nope", "unknown model 'nope': bundled models are llama3-8b, tiny"),
    ("tiny:four", "tiny:four: expected NAME:N-layers"),
    ("hf:missing/config.json", "missing/config.json: no such config file"),
    ("missing.py:make", "missing.py: no such file"),
    (f"{FACTORY}:nothing", "factory_model.py: no function 'nothing'"),
    (f"{FACTORY}:not_a_pair", "must return (model, example_inputs), got Linear"),
    (str(FACTORY), "name the factory too"),
])
def test_a_model_that_does_not_load_says_why(spec, message):
    with pytest.raises(ModelError) as info:
        load_model(spec, 1, 8, "fp32", "cpu")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_hf_config_that_is_not_json(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(ModelError, match="config.json: not a JSON config"):
        load_model(f"hf:{bad}", 1, 8, "fp32", "cpu")


def test_gpt2_positions_bound_the_sequence():
    with pytest.raises(ModelError, match="longer than its 64 learned positions"):
        load_model("gpt2-tiny", 1, 65, "fp32", "cpu")


def test_factory_model_profiles(tmp_path):
    result = CliRunner().invoke(cli, ["profile", f"{FACTORY}:make", "--dtype", "fp32", "--device", "cpu", "--json",
                                      "--steps", "1", "--warmup", "1"])
    assert result.exit_code == 0, result.output
    profile = json.loads(result.stdout)
    problems = {g["problem"] for g in profile["groups"]}
    assert {"matmul", "softmax"} <= problems
    assert profile["model"]["kind"] == "factory"


def test_cli_profile_table_plot_and_bad_model(tmp_path):
    runner = CliRunner()
    chart = tmp_path / "p.png"
    result = runner.invoke(cli, ["profile", "tiny", "--batch", "1", "--seq", "8", "--dtype", "fp32", "--device", "cpu",
                                 "--steps", "1", "--warmup", "1", "--plot", str(chart)])
    assert result.exit_code == 0, result.output
    assert "rmsnorm" in result.stdout and "attention_causal" in result.stdout and "reconcile" in result.stdout
    assert chart.stat().st_size > 1000
    bad = runner.invoke(cli, ["profile", "llama9"])
    assert bad.exit_code == 2 and "Error: unknown model 'llama9'" in bad.output
