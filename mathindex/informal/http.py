"""The HTTP informaliser: an OpenAI-compatible chat-completions backend (the `Informaliser` of
informalise.py), with its prompt file and the parsing of its answers."""

from __future__ import annotations

import hashlib
import json
import logging
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import requests

from mathindex.informal.informalise import InformalInput, Rendering, RuleInformaliser

log = logging.getLogger(__name__)

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "data" / "prompts"
DEFAULT_PROMPT = PROMPTS_DIR / "informalise-v1.md"
MAX_ANSWER_CHARS = 4000


class TransientHttpError(Exception):
    """A failure worth retrying: HTTP 429 / 5xx, a connection error or a timeout."""


class MalformedAnswer(Exception):
    """The endpoint answered, but not with a usable chat completion."""


def load_prompt(path: Path) -> tuple[str, str, str]:
    """(system, user template, version) from a prompt file; version = file stem @ sha256[:12]."""
    raw = path.read_text(encoding="utf-8")
    system, sep, user = raw.partition("\n---USER---\n")
    if not sep:
        raise ValueError(f"prompt file {path} lacks a '---USER---' line")
    version = f"{path.stem}@{hashlib.sha256(raw.encode()).hexdigest()[:12]}"
    return system.strip(), user.strip(), version


@dataclass
class HttpInformaliser:
    """An OpenAI-compatible chat-completions backend; a failed or malformed answer falls back to the rules.

    Retries (exponential backoff with jitter, honouring Retry-After up to `max_backoff_s`) happen only
    on 429, 5xx, connection errors and timeouts; at most `concurrency` requests are in flight.
    """

    base_url: str
    model: str
    api_key: str | None = None
    prompt_path: Path = DEFAULT_PROMPT
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 60.0
    retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    concurrency: int = 4
    max_tokens: int = 400
    backend: str = field(default="http", init=False)
    prompt_version: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self._system, self._user, self.prompt_version = load_prompt(Path(self.prompt_path))
        self._rules = RuleInformaliser()
        self._local = threading.local()
        self._rng = random.Random(0)

    def _session(self):
        if not hasattr(self._local, "session"):
            self._local.session = requests.Session()
        return self._local.session

    def prompt(self, item: InformalInput) -> list[dict]:
        """The chat messages for one declaration (system prompt + filled user template)."""
        context = "\n".join(f"- {n}: {t}" for n, t in item.context) or "(none)"
        user = self._user.format(
            full_name=item.full_name, kind=item.kind or "declaration",
            signature=item.signature or item.type, docstring=item.docstring or "(none)", context=context,
        )
        return [{"role": "system", "content": self._system}, {"role": "user", "content": user}]

    def _post_once(self, messages: list[dict]) -> str:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = {"model": self.model, "messages": messages, "temperature": 0, "max_tokens": self.max_tokens}
        try:
            resp = self._session().post(
                self.base_url.rstrip("/") + "/chat/completions", json=body, headers=headers,
                timeout=(self.connect_timeout_s, self.read_timeout_s),
            )
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise TransientHttpError(f"{type(exc).__name__}: {exc}") from exc
        if resp.status_code == 429 or resp.status_code >= 500:
            err = TransientHttpError(f"HTTP {resp.status_code}")
            err.retry_after = resp.headers.get("Retry-After")  # type: ignore[attr-defined]
            raise err
        if resp.status_code != 200:
            raise MalformedAnswer(f"HTTP {resp.status_code}")
        return parse_completion(resp.content)

    def _delay(self, attempt: int, exc: TransientHttpError) -> float:
        retry_after = getattr(exc, "retry_after", None)
        if retry_after:
            try:
                return min(self.max_backoff_s, max(0.0, float(retry_after)))
            except ValueError:
                pass
        base = min(self.max_backoff_s, self.backoff_s * 2**attempt)
        return base * (0.5 + self._rng.random() / 2)

    def render(self, item: InformalInput) -> Rendering:
        messages = self.prompt(item)
        reason = ""
        for attempt in range(self.retries + 1):
            try:
                return Rendering(self._post_once(messages))
            except TransientHttpError as exc:
                reason = str(exc)
                if attempt < self.retries:
                    time.sleep(self._delay(attempt, exc))
            except MalformedAnswer as exc:
                reason = f"malformed answer: {exc}"
                break
        else:
            reason = f"gave up after {self.retries + 1} attempts: {reason}"
        log.warning("informalise %s: %s; using the rules", item.full_name, reason)
        fallback = self._rules.render(item)
        return Rendering(fallback.text, "fallback", " ".join(reason.split())[:500])

    def render_many(self, items: Sequence[InformalInput]) -> list[Rendering]:
        if len(items) <= 1 or self.concurrency <= 1:
            return [self.render(item) for item in items]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self.render, items))


def parse_completion(content: bytes) -> str:
    """The message text of a chat-completions response body; MalformedAnswer when there is none."""
    try:
        data = json.loads(content)
        text = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise MalformedAnswer(f"{type(exc).__name__} reading the completion") from exc
    if not isinstance(text, str) or not text.strip():
        raise MalformedAnswer("empty or non-text content")
    text = " ".join(text.split())
    if len(text) > MAX_ANSWER_CHARS:
        raise MalformedAnswer(f"answer of {len(text)} characters")
    return text
