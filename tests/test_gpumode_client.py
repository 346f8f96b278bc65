"""The HTTP client against a real local server: routes, polling, one exit code per failure kind."""

import socket
import sys

import pytest
from conftest import FIXTURES

from submit.gpumode.client import Client, ClientError, Exit, cli_id, summarize

sys.path.insert(0, str(FIXTURES / "gpumode"))
from fake_server import FakeLeaderboard  # noqa: E402

SECRET_ID = "cli-id-7f3a9c-do-not-print"


@pytest.fixture
def server():
    fake = FakeLeaderboard(lifetime_s=60).start()
    yield fake
    fake.stop()


def client(server, **kwargs):
    lines = []
    options = {"poll_s": 0.01, "timeout_s": 5, "progress": lines.append, **kwargs}
    return Client(server.url, SECRET_ID, **options), lines


def test_leaderboards_and_gpus(server):
    c, _ = client(server)
    assert c.leaderboards() == [{"name": "vectorsum_v2", "gpus": ["B200", "H100", "A100", "L4"]},
                                {"name": "grayscale", "gpus": ["A100"]}]
    assert all(r["cli_id"] == SECRET_ID for r in server.state.requests)


def test_submit_then_poll_until_done(server):
    c, lines = client(server)
    sid = c.submit("vectorsum_v2", "H100", "leaderboard", "submission.py", b"#!POPCORN leaderboard vectorsum_v2\n")
    answer = c.wait(sid, sleep=lambda s: None)
    assert sid == "4242" and answer["job"]["status"] == "succeeded"
    assert lines[0] == "submission 4242: running (0 s)" and "succeeded" in lines[-1]
    runs, ranks = summarize(answer)
    assert ranks and "leaderboard (secret): passed, score 4.43e-05" in runs


@pytest.mark.parametrize("status, code", [(401, Exit.AUTH), (403, Exit.AUTH), (429, Exit.RATE_LIMITED),
                                          (500, Exit.SERVER), (503, Exit.SERVER), (400, Exit.REJECTED)])
def test_http_failures_have_their_own_exit_codes(server, status, code):
    server.state.force_status = status
    c, _ = client(server)
    with pytest.raises(ClientError) as err:
        c.gpus("vectorsum_v2")
    assert err.value.exit_code == code and str(status) in str(err.value)


def test_unknown_gpu_is_404(server):
    c, _ = client(server)
    with pytest.raises(ClientError) as err:
        c.submit("vectorsum_v2", "T4", "test", "submission.py", b"x")
    assert err.value.exit_code == Exit.NOT_FOUND and "unknown leaderboard or GPU" in str(err.value)


def test_timeout_and_network_error(server):
    server.state.delay_s = 0.5
    c, _ = client(server, timeout_s=0.1)
    with pytest.raises(ClientError) as err:
        c.gpus("vectorsum_v2")
    assert err.value.exit_code == Exit.TIMEOUT
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ClientError) as err:
        Client(f"http://127.0.0.1:{port}", SECRET_ID, timeout_s=1).gpus("vectorsum_v2")
    assert err.value.exit_code == Exit.NETWORK


def test_job_that_never_finishes_times_out(server):
    server.state.polls_before_done = 10**6
    c, _ = client(server, max_wait_s=0.0)
    with pytest.raises(ClientError) as err:
        c.wait("4242", sleep=lambda s: None)
    assert err.value.exit_code == Exit.TIMEOUT


def test_cli_id_from_env_then_popcorn_yaml(tmp_path, monkeypatch):
    monkeypatch.setenv("POPCORN_CLI_ID", "from-env")
    assert cli_id(tmp_path) == "from-env"
    monkeypatch.delenv("POPCORN_CLI_ID")
    (tmp_path / ".popcorn.yaml").write_text("cli_id: from-file\n")
    assert cli_id(tmp_path) == "from-file"
    (tmp_path / ".popcorn.yaml").unlink()
    with pytest.raises(ClientError) as err:
        cli_id(tmp_path)
    assert err.value.exit_code == Exit.AUTH
