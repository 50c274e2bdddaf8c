"""The HTTP informaliser: an OpenAI-compatible chat-completions backend (the `Informaliser` of
informalise.py), with its prompt file and the parsing of its answers. It never fails a build: a
declaration it cannot get an answer for gets the rules rendering (`status` fallback)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from urllib.parse import urlsplit

import requests

from mathindex.informal.informalise import NOT_ASKED, InformalInput, Rendering, RuleInformaliser, flat
from mathindex.schemas.manifest import InformaliserSpec
from mathindex.sources import PROMPTS_DIR

log = logging.getLogger(__name__)

DEFAULT_PROMPT = PROMPTS_DIR / "informalise-v1.md"
MAX_ANSWER_CHARS = 4000
DOWN_AFTER = 8  # requests failing in a row (each after its retries) before the endpoint counts as down


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
    on 429, 5xx, connection errors and timeouts; at most `concurrency` requests are in flight. After
    `down_after` requests in a row failed, or once `budget_s` seconds have passed since the first
    request, it asks no more in this run: the rest get the rules rendering at once (said once in
    the log), and the next run asks them again (fallbacks are not cached). A copy sent to another
    process (a shard on a Dask worker) carries why it asks no more and the budget left.
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    prompt_path: Path = DEFAULT_PROMPT
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 60.0
    retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    concurrency: int = 4
    max_tokens: int = 400
    budget_s: float | None = None
    down_after: int = DOWN_AFTER
    backend: str = field(default="http", init=False)
    prompt_version: str = field(default="", init=False)
    endpoint: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self._system, self._user, self.prompt_version = load_prompt(Path(self.prompt_path))
        self.endpoint = endpoint_host(self.base_url)
        self._rules = RuleInformaliser()
        self._local = threading.local()
        self._rng = random.Random(0)
        self._lock = threading.Lock()
        self._failed_in_row = 0
        self._closed: str | None = None  # why it asks no more
        self._deadline: float | None = None

    @classmethod
    def from_spec(cls, spec: InformaliserSpec, environ: Mapping[str, str] = os.environ) -> "HttpInformaliser":
        """The backend a sources file's `informaliser:` section describes; the API key is read from
        the environment variable it names (asked without a key, with a warning, when it is unset)."""
        key = environ.get(spec.api_key_env) if spec.api_key_env else None
        if spec.api_key_env and not key:
            log.warning("informaliser: the environment variable %s is not set; asking %s without an API key",
                        spec.api_key_env, endpoint_host(spec.endpoint or ""))
        return cls(base_url=spec.endpoint or "", model=spec.model or "", api_key=key or None,
                   prompt_path=PROMPTS_DIR / f"{spec.prompt}.md", connect_timeout_s=spec.connect_timeout_s,
                   read_timeout_s=spec.timeout_s, retries=spec.retries, concurrency=spec.concurrency,
                   max_tokens=spec.max_tokens, budget_s=spec.budget_s)

    def __getstate__(self) -> dict:
        """The settings, why it asks no more and the budget left (its clock starts now, when no
        request has started it: a shard sent elsewhere is about to ask)."""
        self._start_budget()
        with self._lock:
            left = None if self._deadline is None else self._deadline - time.monotonic()
            return {"settings": {f.name: getattr(self, f.name) for f in fields(self) if f.init},
                    "closed": self._closed, "left": left}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["settings"])
        self._closed = state["closed"]
        if state["left"] is not None:
            self._deadline = time.monotonic() + state["left"]

    def _start_budget(self) -> None:
        with self._lock:
            if self._deadline is None and self.budget_s is not None:
                self._deadline = time.monotonic() + self.budget_s

    def _session(self):
        if not hasattr(self._local, "session"):
            self._local.session = requests.Session()
        return self._local.session

    def prompt(self, item: InformalInput) -> list[dict]:
        """The chat messages for one declaration (system prompt + filled user template); the
        statement is shown with its whitespace normalised, as its cache key (`type_hash`) reads it."""
        context = "\n".join(f"- {n}: {t}" for n, t in item.context) or "(none)"
        user = self._user.format(
            full_name=flat(item.full_name), kind=flat(item.kind) or "declaration",
            signature=flat(item.signature) or flat(item.type), docstring=flat(item.docstring) or "(none)",
            context=context,
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
            raise TransientHttpError(short_error(exc)) from exc
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
        with self._lock:
            return base * (0.5 + self._rng.random() / 2)

    def closed(self) -> str | None:
        """Why it asks no more in this run (the endpoint is down, the budget is spent), or None."""
        with self._lock:
            if self._closed is None and self._deadline is not None and time.monotonic() > self._deadline:
                self._closed = f"the budget of {self.budget_s:g} s was spent"
                log.warning("informaliser: %s asking %s; the rest get the rules rendering", self._closed, self.endpoint)
            return self._closed

    def close(self, reason: str) -> None:
        """Asks no more in this run, for `reason` (a copy of it elsewhere gave the endpoint up)."""
        with self._lock:
            if self._closed is None:
                self._closed = reason
                log.warning("informaliser: %s; the rest get the rules rendering", reason)

    def _count(self, reason: str | None) -> None:
        """Counts an answer (`reason` None) or a failed request; `down_after` failures in a row close it."""
        with self._lock:
            if reason is None:
                self._failed_in_row = 0
                return
            self._failed_in_row += 1
            if self._failed_in_row >= self.down_after and self._closed is None:
                self._closed = f"{self.endpoint} did not answer {self._failed_in_row} requests in a row (last: {reason})"
                log.warning("informaliser: %s; the rest get the rules rendering", self._closed)

    def render(self, item: InformalInput) -> Rendering:
        """One declaration's rendering: the endpoint's answer, else (`fallback`) the rules'."""
        self._start_budget()
        reason = self.closed()
        if reason is not None:
            reason = f"{NOT_ASKED}{reason}"
        else:
            reason = self._ask(self.prompt(item))
            if isinstance(reason, Rendering):
                return reason
        log.debug("informalise %s: %s; using the rules", item.full_name, reason)
        fallback = self._rules.render(item)
        return Rendering(fallback.text, "fallback", " ".join(reason.split())[:500])

    def _ask(self, messages: list[dict]) -> Rendering | str:
        """The endpoint's answer, or why there is none (after the retries a transient error earns)."""
        reason = ""
        for attempt in range(self.retries + 1):
            try:
                text = self._post_once(messages)
            except TransientHttpError as exc:
                reason = str(exc)
                if attempt < self.retries and self.closed() is None:
                    time.sleep(self._delay(attempt, exc))
                    continue
                reason = f"gave up after {attempt + 1} attempt{'s' if attempt else ''}: {reason}"
            except MalformedAnswer as exc:
                reason = f"malformed answer: {exc}"
            else:
                self._count(None)
                return Rendering(text)
            break
        self._count(reason)
        return reason

    def render_many(self, items: Sequence[InformalInput]) -> list[Rendering]:
        if len(items) <= 1 or self.concurrency <= 1:
            return [self.render(item) for item in items]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self.render, items))


def short_error(exc: Exception) -> str:
    """`Kind: what the OS said` (`ConnectionError: [Errno 111] Connection refused`), not urllib3's
    whole retry story; the first 200 characters of the message when the OS said nothing."""
    said = re.search(r"\[Errno -?\d+\][^'\")]*", str(exc))
    return f"{type(exc).__name__}: {said.group(0).strip() if said else ' '.join(str(exc).split())[:200]}"


def endpoint_host(base_url: str) -> str:
    """`host:port` of an endpoint URL (never its path, query or credentials), for logs and the notes."""
    parts = urlsplit(base_url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.hostname or '?'}:{port}" if port else parts.hostname or "?"


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
