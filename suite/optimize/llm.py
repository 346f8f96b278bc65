"""`--strategy llm`: an OpenAI-compatible chat-completions client over HTTP, and the proposer using it.

Endpoint, model and key come from OPENAI_BASE_URL, KSUITE_MODEL and OPENAI_API_KEY (or flags). The key
goes into one request header and nowhere else: never into a message, the ledger or an exception text.
Before the loop, one small request checks the endpoint and the key (`precheck`), so a missing key or no
network is one line naming the URL, not a ledger of failures. 429 and 5xx are retried with exponential
backoff; 401 and 403 are not, and end the run; a token and a cost budget end the run when spent.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from urllib.parse import urlparse

import requests

from suite.optimize.proposal import Context, Proposal

CODE_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)

PLAYBOOK = {
    "default": [
        "Read the bytes comment: a memory-bound kernel should read each input once and write each output once.",
        "Tune BLOCK sizes, num_warps and num_stages in TUNABLES first; keep one program per row for row ops "
        "that fit in registers, several rows per program when rows are short.",
        "Use a single pass when the row fits in one block (no second read); vectorise loads with contiguous "
        "offsets and let the compiler see `tl.multiple_of` / `tl.max_contiguous` hints.",
        "For matmul-like kernels: larger tiles (128x256x64) with 8 warps and 3-4 stages, grouped launch order "
        "(GROUP_M) for L2 reuse, fp32 accumulation, tl.dot on fp16/bf16 operands.",
        "For attention: BLOCK_M 128, BLOCK_N 64-128, skip fully masked causal blocks, use exp2 with log2(e) "
        "folded into the scale, 8 warps, 2-3 stages.",
        "Never change the math's precision (accumulate in float32, round once at the store).",
    ],
    "h100": ["Hopper (sm_90): TMA descriptors and warp specialisation help large tiles; 228 KB shared memory "
             "per SM allows 4-stage pipelines at 128x128x64 fp16."],
}


def playbook(gpu: str) -> str:
    extra = PLAYBOOK["h100"] if re.search(r"h100|h200|h800|gh200", gpu.lower()) else []
    return "\n".join(f"- {line}" for line in PLAYBOOK["default"] + extra)


def build_prompt(ctx: Context) -> list[dict]:
    failures = "\n".join(f"- {f}" for f in ctx.failures) or "- none yet"
    user = (f"GPU: {ctx.gpu}\n\n## Problem (reference, do not change its behaviour)\n"
            f"```python\n{ctx.problem_source}```\n\n"
            f"## Current best kernel\n```python\n{ctx.best_source}```\n\n## Its measurements\n{ctx.best_numbers}\n\n"
            + (f"## Its machine code\n{ctx.machine_code}\n\n" if ctx.machine_code else "")
            + f"## Recent failures\n{failures}\n\n## Playbook\n{playbook(ctx.gpu)}\n\n"
            "Reply with one complete Python file (class ModelNew, same constructor) in a single ```python block, "
            "and one line before it saying what you changed.")
    return [{"role": "system", "content": "You write fast, correct Triton kernels. Correctness is checked against "
             "a float64 reference at many shapes, dtypes and input patterns; any wrong output is discarded."},
            {"role": "user", "content": user}]


def extract_code(reply: str) -> str | None:
    blocks = CODE_BLOCK.findall(reply)
    return max(blocks, key=len) if blocks else None


def summary_line(reply: str) -> str:
    before = reply.split("```", 1)[0].strip().splitlines()
    return before[-1][:150] if before else "llm proposal"


class LLMError(Exception):
    def __init__(self, message: str, status: str = "crashed", fatal: bool = False):
        super().__init__(message)
        self.status = status
        self.fatal = fatal  # asking again cannot help (the key was refused): the run stops


class LLMUnavailable(Exception):
    """The endpoint cannot be used: one line naming the URL (never the key)."""


REFUSED = (401, 403)


@dataclass
class LLMClient:
    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 300.0
    retries: int = 4
    backoff_s: float = 2.0
    max_tokens_total: int | None = None
    max_cost_usd: float | None = None
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    tokens_used: int = 0
    cost_usd: float = 0.0

    @classmethod
    def from_env(cls, **overrides) -> LLMClient:
        given = {k: v for k, v in overrides.items() if v is not None}
        return cls(base_url=given.pop("base_url", None) or os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
                   model=given.pop("model", None) or os.environ.get("KSUITE_MODEL", "gpt-4o"),
                   api_key=given.pop("api_key", None) or os.environ.get("OPENAI_API_KEY"), **given)

    def __repr__(self) -> str:  # the dataclass repr would print the key
        return f"LLMClient(base_url={self.base_url!r}, model={self.model!r}, api_key={'set' if self.api_key else None})"

    def budget_left(self) -> bool:
        if self.max_tokens_total is not None and self.tokens_used >= self.max_tokens_total:
            return False
        return self.max_cost_usd is None or self.cost_usd < self.max_cost_usd

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _redact(self, text: str) -> str:
        return text.replace(self.api_key, "***") if self.api_key else text

    def precheck(self) -> str:
        """One request of one token before the loop; a line saying what answered, or LLMUnavailable."""
        url, key_note = self.url, "key set" if self.api_key else "no key"
        who = f"llm endpoint {url} (model {self.model}, {key_note})"
        if not self.api_key and urlparse(url).hostname == "api.openai.com":
            raise LLMUnavailable(f"{url}: no API key; set OPENAI_API_KEY (or OPENAI_BASE_URL for another server)")
        body = {"model": self.model, "messages": [{"role": "user", "content": "Reply with OK."}], "max_tokens": 1}
        try:
            resp = requests.post(url, json=body, headers=self._headers(), timeout=min(self.timeout_s, 30.0))
        except requests.RequestException as exc:
            raise LLMUnavailable(f"{url}: not reachable ({type(exc).__name__}); check OPENAI_BASE_URL and the "
                                 "network") from None
        if resp.status_code in REFUSED:
            hint = "set OPENAI_API_KEY" if not self.api_key else "check OPENAI_API_KEY"
            raise LLMUnavailable(f"{url}: HTTP {resp.status_code}, the key was refused ({key_note}); {hint}")
        if resp.status_code == 429 or resp.status_code >= 500:
            return f"{who}: busy (HTTP {resp.status_code}); the loop retries"
        if resp.status_code != 200:
            raise LLMUnavailable(f"{url}: HTTP {resp.status_code} for model {self.model!r}: "
                                 f"{self._redact(resp.text[:200])}")
        try:
            self._account(resp.json())
        except (LLMError, ValueError):
            raise LLMUnavailable(f"{url}: the reply is not in the chat-completions format") from None
        return f"{who}: answered"

    def chat(self, messages: list[dict]) -> str:
        url, headers = self.url, self._headers()
        body = {"model": self.model, "messages": messages}
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                resp = requests.post(url, json=body, headers=headers, timeout=self.timeout_s)
            except requests.Timeout:
                last, status = f"no reply within {self.timeout_s:g} s", "timed-out"
                continue
            except requests.RequestException as exc:
                raise LLMError(f"request failed: {type(exc).__name__}") from None
            if resp.status_code == 429 or resp.status_code >= 500:
                last, status = f"HTTP {resp.status_code}", "crashed"
                continue
            if resp.status_code != 200:
                raise LLMError(f"HTTP {resp.status_code}: {self._redact(resp.text[:200])}",
                               fatal=resp.status_code in REFUSED)
            return self._account(resp.json())
        raise LLMError(f"{last} after {self.retries + 1} attempts", status)

    def _account(self, data: dict) -> str:
        usage = data.get("usage") or {}
        p, c = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
        self.tokens_used += p + c
        self.cost_usd += (p * self.price_in_per_mtok + c * self.price_out_per_mtok) / 1e6
        try:
            return data["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise LLMError("reply is not in the chat-completions format") from None


class LLMProposer:
    name = "llm"

    def __init__(self, client: LLMClient, machine_code: Callable[[str], str] | None = None):
        self.client = client
        self.machine_code = machine_code  # best source -> its machine-code summary; None: left out
        self.stop_reason: str | None = None  # set when asking again cannot help; the loop stops with it

    def propose(self, context: Context) -> Proposal | None:
        if self.stop_reason or not self.client.budget_left():
            return None
        if self.machine_code:
            context = replace(context, machine_code=self.machine_code(context.best_source))
        try:
            reply = self.client.chat(build_prompt(context))
        except LLMError as exc:
            if exc.fatal:
                self.stop_reason = f"{self.client.url} refused the request ({exc})"[:200]
            return Proposal(f"llm: {exc}", status=exc.status)
        code = extract_code(reply)
        if code is None:
            return Proposal("llm: reply has no code block", status="discarded")
        return Proposal(f"llm: {summary_line(reply)}", code)
