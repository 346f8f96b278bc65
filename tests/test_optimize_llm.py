"""The LLM strategy against a real HTTP server on 127.0.0.1 speaking the chat-completions wire format:
a good kernel, a wrong one, a slower one, garbage, a timeout; retries on 429; the key never leaks."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from test_optimize_loop import FakeEvaluator, make_setup

from suite.optimize.llm import LLMClient, LLMProposer, build_prompt, extract_code, playbook
from suite.optimize.loop import Loop
from suite.optimize.proposal import Context
from suite.optimize.stopping import Limits

KEY = "sk-test-DO-NOT-LEAK-4242"


def reply(text):
    return 200, {"choices": [{"message": {"role": "assistant", "content": text}}],
                 "usage": {"prompt_tokens": 1000, "completion_tokens": 200}}


GOOD = reply("Two rows per program.\n```python\nTUNABLES = {}\n# fake: us=70\n```\n")
WRONG = reply("Skip the max.\n```python\n# fake: wrong\n```")
SLOWER = reply("Smaller blocks.\n```python\n# fake: us=140\n```")
GARBAGE = reply("I would rather not write code today.")
TIMEOUT = "sleep"


@pytest.fixture
def server():
    """Serves the scripted replies in order, records requests; shuts down after the test or 30 s."""
    script, seen = [], []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            item = script.pop(0) if script else (503, {"error": "script over"})
            if item == TIMEOUT:
                threading.Event().wait(1.0)
                item = GOOD
            status, payload = item
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps(payload).encode())
            except OSError:
                pass  # the client gave up (the timeout case)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    guard = threading.Timer(30.0, httpd.shutdown)
    guard.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script, seen
    guard.cancel()
    httpd.shutdown()
    httpd.server_close()


def client(url, **kw):
    return LLMClient(base_url=url, model="test-model", api_key=KEY, **{"timeout_s": 0.3, "retries": 0,
                                                                      "backoff_s": 0.01, **kw})


def test_loop_with_scripted_llm_replies(server, tmp_path, capsys):
    url, script, seen = server
    script += [GOOD, WRONG, SLOWER, GARBAGE, TIMEOUT]
    setup = make_setup(tmp_path, Limits(plateau=4))
    setup.strategy = "llm"
    lines = []
    result = Loop(setup, LLMProposer(client(url)), FakeEvaluator(), echo=lines.append).run()
    rows = setup.ledger.rows()
    assert [r.status for r in rows] == ["kept", "kept", "discarded", "discarded", "discarded", "timed-out"]
    assert rows[1].description.startswith("llm: Two rows per program.") and rows[1].median_us == 70.0
    assert rows[2].correct is False and "within noise" not in rows[3].description and rows[3].correct
    assert "no code block" in rows[4].description and "no reply within" in rows[5].description
    assert "plateau" in result.reason and result.kept == 1
    # the prompt carried the problem, the best kernel, its numbers, the failures and a playbook
    last = seen[-1]["body"]["messages"][-1]["content"]
    assert "# the problem" in last and "# fake: us=70" in last and "fake wrong" in last and "Playbook" in last
    assert seen[0]["path"] == "/v1/chat/completions" and seen[0]["body"]["model"] == "test-model"
    # the key went in the header, and nowhere else
    assert all(s["auth"] == f"Bearer {KEY}" for s in seen)
    out = capsys.readouterr()
    texts = [setup.ledger.path.read_text(), setup.kept_path.read_text(), out.out, out.err, "\n".join(lines),
             json.dumps([s["body"] for s in seen]), repr(client(url))]
    texts += [p.read_text() for p in setup.work_dir.glob("*.py")]
    assert not any(KEY in t for t in texts)


def test_retries_429_and_5xx_then_succeeds(server):
    url, script, seen = server
    script += [(429, {"error": "slow down"}), (502, {"error": "bad gateway"}), GOOD]
    c = client(url, retries=2)
    assert "# fake: us=70" in c.chat([{"role": "user", "content": "hi"}])
    assert len(seen) == 3 and c.tokens_used == 1200


def test_token_and_cost_budget_end_the_proposals(server):
    url, script, _ = server
    script += [GOOD, GOOD, GOOD]
    proposer = LLMProposer(client(url, max_tokens_total=2000))
    ctx = Context("problem", "best")
    assert proposer.propose(ctx).source and proposer.propose(ctx).source
    assert proposer.propose(ctx) is None  # 2400 tokens used >= 2000
    priced = LLMProposer(client(url, max_cost_usd=0.001, price_in_per_mtok=1.0, price_out_per_mtok=1.0))
    assert priced.propose(ctx).source and priced.propose(ctx) is None  # 1200 tokens = 0.0012 USD


def test_error_text_never_echoes_the_key(server):
    url, script, _ = server
    script += [(401, {"error": f"bad key {KEY}"})]
    proposal = LLMProposer(client(url)).propose(Context("p", "b"))
    assert proposal.source is None and "401" in proposal.description and KEY not in proposal.description


def test_prompt_parts_and_code_extraction():
    assert extract_code("x\n```python\na = 1\n```\n```\nlonger = 2\n```") == "longer = 2\n"
    assert extract_code("no code") is None
    assert "Hopper" in playbook("NVIDIA H200") and "Hopper" not in playbook("cpu")
    messages = build_prompt(Context("PROBLEM_SRC", "BEST_SRC", "12 us", ["it failed"], "NVIDIA H200"))
    assert all(s in messages[1]["content"] for s in ("PROBLEM_SRC", "BEST_SRC", "12 us", "it failed", "Hopper"))


def test_the_prompt_carries_the_best_kernels_machine_code_when_given(server):
    url, script, seen = server
    script += [GOOD]
    asked = []

    def machine_code(source):
        asked.append(source)
        return "- rmsnorm_kernel: 64 registers, 4 (registers) blocks per SM"

    LLMProposer(client(url), machine_code).propose(Context("PROBLEM_SRC", "BEST_SRC"))
    content = seen[0]["body"]["messages"][1]["content"]
    assert "## Its machine code\n- rmsnorm_kernel: 64 registers" in content and asked == ["BEST_SRC"]
    assert "## Its machine code" not in build_prompt(Context("p", "b"))[1]["content"]  # none: no section


def test_machine_code_summary_of_a_triton_kernel_compiled_for_hopper():
    from conftest import SCALE_ROWS, candidate

    from harness.machine_code.kernel_inspect import Target
    from suite.optimize.machine_code import MachineCode

    summary = MachineCode(SCALE_ROWS, Target(90, 132, 4.25e12), {"batch_size": 64, "dim": 1024}, "float16")
    text = summary(candidate("honest_triton").read_text())
    head, line = text.splitlines()
    assert head.startswith("sm_90, 132 SMs, shape 64x1024 float16, compiled offline; about 22 KB in flight per SM")
    assert line.startswith("- scale_rows_kernel: grid 64x64, 4 warps, 3 stages, ")
    assert "blocks per SM (threads limit)" in line and "loads 2x2B" in line  # BLOCK_N 16 over 4 warps: 2 bytes
    assert summary("not python (").startswith("not available: ")  # a broken best: said, not raised
