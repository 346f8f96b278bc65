"""HTTP client for the GPU MODE leaderboard API (the one popcorn-cli speaks).

The id that authenticates this machine (env POPCORN_CLI_ID, else `cli_id` in ~/.popcorn.yaml) goes only
into the X-Popcorn-Cli-Id header: it is never printed, logged or saved, and is redacted from any server
text we repeat. Each failure kind has its own exit code so scripts can tell them apart.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests
import yaml

from suite import exit_codes as codes

DONE_STATUSES = ("succeeded", "failed", "timed_out", "hacked")


class Exit:
    """Exit codes of the send path, from the one table of every command's codes (2 stays the usage error)."""

    OK, FAILED, AUTH, NOT_FOUND, RATE_LIMITED = codes.OK, codes.FAILED, codes.AUTH, codes.NOT_FOUND, codes.RATE_LIMITED
    SERVER, TIMEOUT, NETWORK, CONFIG = codes.SERVER, codes.TIMEOUT, codes.NETWORK, codes.CONFIG
    REJECTED, USAGE = codes.REJECTED, codes.USAGE


class ClientError(Exception):
    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def cli_id(home: Path | None = None) -> str:
    """The registered id: env POPCORN_CLI_ID first, then ~/.popcorn.yaml's cli_id."""
    if os.environ.get("POPCORN_CLI_ID"):
        return os.environ["POPCORN_CLI_ID"]
    config = Path(home or Path.home()) / ".popcorn.yaml"
    if config.is_file():
        try:
            value = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("cli_id")
        except (yaml.YAMLError, AttributeError):
            raise ClientError(f"{config}: not a YAML mapping with cli_id", Exit.CONFIG) from None
        if value:
            return str(value)
    raise ClientError("no leaderboard id: set POPCORN_CLI_ID or register with popcorn-cli (~/.popcorn.yaml)",
                      Exit.AUTH)


def api_url() -> str:
    url = os.environ.get("POPCORN_API_URL", "").rstrip("/")
    if not url:
        raise ClientError("set POPCORN_API_URL to the leaderboard server's base URL", Exit.CONFIG)
    return url


@dataclass
class Client:
    base_url: str
    cli_id: str
    timeout_s: float = 30.0
    poll_s: float = 5.0
    max_wait_s: float = 3600.0
    progress: Callable[[str], None] = print

    @classmethod
    def from_env(cls, **kwargs) -> Client:
        return cls(api_url(), cli_id(), **kwargs)

    def _redact(self, text: str) -> str:
        return text.replace(self.cli_id, "<cli-id>") if self.cli_id else text

    def _fail(self, response: requests.Response, what: str) -> ClientError:
        try:
            detail = response.json().get("detail") or response.json().get("message") or response.text
        except (ValueError, AttributeError):
            detail = response.text
        detail = self._redact(str(detail).strip().splitlines()[0][:300] if str(detail).strip() else "")
        code = response.status_code
        if code in (401, 403):
            return ClientError(f"{what}: not authorised (HTTP {code}; check your cli id) {detail}", Exit.AUTH)
        if code == 404:
            return ClientError(f"{what}: not found (HTTP 404; unknown leaderboard or GPU?) {detail}", Exit.NOT_FOUND)
        if code == 429:
            return ClientError(f"{what}: rate limited (HTTP 429); wait and try again {detail}", Exit.RATE_LIMITED)
        if code >= 500:
            return ClientError(f"{what}: server error (HTTP {code}) {detail}", Exit.SERVER)
        return ClientError(f"{what}: refused (HTTP {code}) {detail}", Exit.REJECTED)

    def _request(self, method: str, path: str, what: str, ok=(200,), **kwargs) -> dict | list:
        url = f"{self.base_url}{path}"
        try:
            response = requests.request(method, url, headers={"X-Popcorn-Cli-Id": self.cli_id},
                                        timeout=self.timeout_s, **kwargs)
        except requests.Timeout:
            raise ClientError(f"{what}: no answer from {self.base_url} within {self.timeout_s:g} s",
                              Exit.TIMEOUT) from None
        except requests.RequestException as exc:
            raise ClientError(f"{what}: cannot reach {self.base_url} ({type(exc).__name__})", Exit.NETWORK) from None
        if response.status_code not in ok:
            raise self._fail(response, what)
        try:
            return response.json()
        except ValueError:
            raise ClientError(f"{what}: the server's answer is not JSON", Exit.SERVER) from None

    def leaderboards(self) -> list[dict]:
        """[{name, gpus}], asking /gpus/{name} only when the listing does not carry the GPUs."""
        boards = []
        for item in self._request("GET", "/leaderboards", "list leaderboards"):
            name = item if isinstance(item, str) else item.get("name")
            gpus = None if isinstance(item, str) else item.get("gpu_types") or item.get("gpus")
            boards.append({"name": name, "gpus": list(gpus) if gpus else self.gpus(name)})
        return boards

    def gpus(self, leaderboard: str) -> list[str]:
        return list(self._request("GET", f"/gpus/{leaderboard}", f"GPUs of {leaderboard}"))

    def submit(self, leaderboard: str, gpu: str, mode: str, filename: str, data: bytes) -> str:
        answer = self._request("POST", f"/submission/{leaderboard}/{gpu}/{mode}", f"submit to {leaderboard}/{gpu}",
                               ok=(200, 202), files={"file": (filename, data)})
        try:
            return str(answer["details"]["id"])
        except (KeyError, TypeError):
            raise ClientError("submit: the answer carries no details.id", Exit.SERVER) from None

    def wait(self, submission_id: str, sleep: Callable[[float], None] = time.sleep) -> dict:
        """Poll until done; a progress line per poll; past max_wait_s is a timeout."""
        begin = time.monotonic()
        while True:
            answer = self._request("GET", f"/user/submissions/{submission_id}", f"submission {submission_id}")
            status = (answer.get("job") or {}).get("status", "pending")
            elapsed = time.monotonic() - begin
            self.progress(f"submission {submission_id}: {status} ({elapsed:.0f} s)")
            if answer.get("done") or status in DONE_STATUSES:
                return answer
            if elapsed > self.max_wait_s:
                raise ClientError(f"submission {submission_id}: not done after {self.max_wait_s:g} s", Exit.TIMEOUT)
            sleep(self.poll_s)


def summarize(answer: dict) -> tuple[list[str], bool]:
    """One line per run, and whether the ranked run and its secret twin both passed."""
    lines = []
    for run in answer.get("runs") or []:
        kind = f"{run.get('mode', '?')}{' (secret)' if run.get('secret') else ''}"
        score = run.get("score")
        shown = f", score {score}" if score is not None else ""
        lines.append(f"{kind}: {'passed' if run.get('passed') else 'FAILED'}{shown}")
    job = answer.get("job") or {}
    if job.get("error"):
        lines.append(f"job error: {job['error']}")
    ranked = [r for r in answer.get("runs") or [] if r.get("mode") == "leaderboard"]
    ranks = (any(not r.get("secret") and r.get("passed") for r in ranked)
             and any(r.get("secret") and r.get("passed") for r in ranked))
    return lines, ranks
