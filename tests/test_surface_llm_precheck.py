"""`ksuite optimize --strategy llm` without a key, a network or a valid key: one request before the loop
names the URL (never the key), a refused key stops at once, and a run that evaluated nothing exits
non-zero. A fake `requests.post` stands in for the endpoint: no network, no threads."""

import json

import pytest
import requests
from click.testing import CliRunner
from conftest import SCALE_ROWS, candidate, redirect_results
from test_optimize_loop import FakeEvaluator, make_setup

from suite.cli import cli
from suite.optimize import llm
from suite.optimize.command import nothing_evaluated
from suite.optimize.llm import LLMClient, LLMProposer, LLMUnavailable
from suite.optimize.loop import Loop
from suite.optimize.stopping import Limits

KEY = "sk-test-NEVER-PRINTED-7731"
URL = "http://llm.invalid:9/v1"


class FakeResponse:
    def __init__(self, status: int, payload: dict):
        self.status_code, self.payload, self.text = status, payload, json.dumps(payload)

    def json(self):
        return self.payload


class FakeEndpoint:
    """Answers each POST with the next scripted outcome (a status and payload, or an exception to raise);
    the last one repeats."""

    def __init__(self, *outcomes):
        self.outcomes, self.calls = list(outcomes), []

    def __call__(self, url, json=None, headers=None, timeout=None):
        self.calls.append({"url": url, "body": json, "headers": headers})
        outcome = self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return FakeResponse(*outcome)


OK = (200, {"choices": [{"message": {"content": "OK"}}], "usage": {"prompt_tokens": 5, "completion_tokens": 1}})
REFUSED = (401, {"error": f"invalid key {KEY}"})


@pytest.fixture
def endpoint(monkeypatch):
    def install(*outcomes):
        fake = FakeEndpoint(*outcomes)
        monkeypatch.setattr(llm.requests, "post", fake)
        return fake
    return install


def test_no_key_for_openai_is_one_line_and_no_request(endpoint):
    fake = endpoint(OK)
    with pytest.raises(LLMUnavailable, match=r"https://api.openai.com/v1/chat/completions: no API key; set OPENAI"):
        LLMClient(base_url="https://api.openai.com/v1", model="m").precheck()
    assert fake.calls == []


def test_unreachable_endpoint_names_the_url_never_the_key(endpoint):
    fake = endpoint(requests.ConnectionError(f"cannot connect with {KEY}"))
    with pytest.raises(LLMUnavailable) as caught:
        LLMClient(base_url=URL, model="m", api_key=KEY).precheck()
    assert str(caught.value).startswith(f"{URL}/chat/completions: not reachable (ConnectionError)")
    assert KEY not in str(caught.value) and len(fake.calls) == 1


def test_refused_key_is_named_as_such_without_the_key(endpoint):
    endpoint(REFUSED)
    with pytest.raises(LLMUnavailable) as caught:
        LLMClient(base_url=URL, model="m", api_key=KEY).precheck()
    assert "HTTP 401, the key was refused (key set)" in str(caught.value) and KEY not in str(caught.value)


def test_a_working_endpoint_answers_one_tiny_request(endpoint):
    fake = endpoint(OK)
    client = LLMClient(base_url=URL, model="m", api_key=KEY)
    assert client.precheck() == f"llm endpoint {URL}/chat/completions (model m, key set): answered"
    (call,) = fake.calls
    assert call["body"]["max_tokens"] == 1 and call["headers"]["Authorization"] == f"Bearer {KEY}"
    assert KEY not in json.dumps(call["body"])


def test_cli_without_network_stops_before_the_loop_and_exits_non_zero(endpoint, tmp_path, monkeypatch):
    redirect_results(monkeypatch, tmp_path / "results")
    monkeypatch.setenv("OPENAI_BASE_URL", URL)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake = endpoint(requests.ConnectionError("no route"))
    result = CliRunner().invoke(cli, ["optimize", str(SCALE_ROWS), "--strategy", "llm"])
    assert result.exit_code != 0 and len(fake.calls) == 1
    assert f"{URL}/chat/completions: not reachable" in result.output and KEY not in result.output
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").rglob("*.tsv"))  # no ledger


def test_a_run_whose_every_proposal_failed_to_arrive_exits_1(endpoint, tmp_path, monkeypatch):
    redirect_results(monkeypatch, tmp_path / "results")
    monkeypatch.setenv("OPENAI_BASE_URL", URL)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    endpoint(OK, requests.ConnectionError("the network went away"))
    result = CliRunner().invoke(cli, ["optimize", str(SCALE_ROWS), "--strategy", "llm", "--from",
                                      str(candidate("honest_triton")), "--plateau", "2", "--name", "llm_try"])
    assert result.exit_code == 1, result.output
    assert "no proposal could be evaluated" in result.output and "ConnectionError" in result.output
    assert KEY not in result.output


def test_a_key_refused_mid_run_stops_the_loop_at_once(endpoint, tmp_path):
    fake = endpoint(REFUSED)
    setup = make_setup(tmp_path, Limits(plateau=20))
    setup.strategy = "llm"
    client = LLMClient(base_url=URL, model="m", api_key=KEY, retries=4, backoff_s=0.0)
    result = Loop(setup, LLMProposer(client), FakeEvaluator(), echo=lambda line: None).run()
    assert len(fake.calls) == 1  # no retries, no second proposal
    assert [r.status for r in setup.ledger.rows()] == ["kept", "crashed"]
    assert "refused" in result.reason and "plateau" not in result.reason and KEY not in result.reason
    message = nothing_evaluated([result])
    assert message.startswith("no proposal could be evaluated") and KEY not in message


def test_a_run_that_checked_proposals_is_not_reported_as_nothing_evaluated(endpoint, tmp_path):
    endpoint((200, {"choices": [{"message": {"content": "Faster.\n```python\n# fake: us=70\n```"}}]}))
    setup = make_setup(tmp_path, Limits(plateau=1))
    client = LLMClient(base_url=URL, model="m", api_key=KEY)
    result = Loop(setup, LLMProposer(client), FakeEvaluator(), echo=lambda line: None).run()
    assert result.evaluated >= 1 and nothing_evaluated([result]) is None
