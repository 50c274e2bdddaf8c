"""The HTTP informaliser against a real chat-completions server on 127.0.0.1 started by the test.

The server's behaviour is chosen by the declaration name in the prompt: ok, 429 then ok, 500 then
ok, always 503, slow (past the read timeout), malformed JSON, missing content, 400.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pytest

from mathindex.informal import InformalInput, RuleInformaliser, informalise
from mathindex.informal.http import HttpInformaliser, MalformedAnswer, load_prompt, parse_completion


class ChatServer:
    """A scripted OpenAI-compatible /v1/chat/completions endpoint that records what it saw."""

    def __init__(self):
        self.hits: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                user = body["messages"][-1]["content"]
                name = user.split("Declaration: ", 1)[1].split(" ", 1)[0]
                with server.lock:
                    server.hits[name] += 1
                    server.bodies.append(body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    attempt = server.hits[name]
                try:
                    server.answer(self, name, attempt)
                finally:
                    with server.lock:
                        server.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, h: BaseHTTPRequestHandler, name: str, attempt: int) -> None:
        def send(code: int, payload: bytes, headers: dict | None = None):
            h.send_response(code)
            h.send_header("Content-Type", "application/json")
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            try:
                h.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (read timeout): expected for the slow script

        ok = json.dumps({"choices": [{"message": {"role": "assistant", "content": f"  Informal   text of {name}. "}}]}).encode()
        if name.startswith("Ok") or name.startswith("Concurrent"):
            if name.startswith("Concurrent"):
                time.sleep(0.15)
            send(200, ok)
        elif name == "RateLimited":
            send(429, b"{}", {"Retry-After": "0"}) if attempt == 1 else send(200, ok)
        elif name == "Flaky500":
            send(500, b"oops") if attempt <= 2 else send(200, ok)
        elif name == "Down503":
            send(503, b"down")
        elif name == "Slow":
            time.sleep(0.6)
            send(200, ok)
        elif name == "Malformed":
            send(200, b"{not json")
        elif name == "NoContent":
            send(200, json.dumps({"choices": [{"message": {"role": "assistant", "content": ""}}]}).encode())
        elif name == "BadRequest":
            send(400, b'{"error": "bad"}')
        else:
            send(404, b"{}")

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server():
    s = ChatServer()
    yield s
    s.close()


def backend(server: ChatServer, **kw) -> HttpInformaliser:
    opts = dict(base_url=server.url, model="test-model", read_timeout_s=0.3, retries=2, backoff_s=0.01, max_backoff_s=0.05)
    opts.update(kw)
    return HttpInformaliser(**opts)


def item(name: str) -> InformalInput:
    return InformalInput(name, "theorem", f"theorem {name} (n : ℕ) : n = n", "n = n", "")


def test_ok_answer_is_used_and_prompt_is_filled(server):
    r = backend(server).render(item("Ok1"))
    assert (r.text, r.status, r.reason) == ("Informal text of Ok1.", "ok", None)
    body = [b for b in server.bodies if "Declaration: Ok1 " in b["messages"][-1]["content"]][0]
    assert body["model"] == "test-model" and body["temperature"] == 0
    assert "Lean statement: theorem Ok1 (n : ℕ) : n = n" in body["messages"][1]["content"]


@pytest.mark.parametrize("name,attempts", [("RateLimited", 2), ("Flaky500", 3)])
def test_transient_errors_are_retried(server, name, attempts):
    r = backend(server).render(item(name))
    assert r.status == "ok" and r.text == f"Informal text of {name}."
    assert server.hits[name] == attempts


def test_persistent_5xx_falls_back_after_retries(server):
    r = backend(server).render(item("Down503"))
    assert r.status == "fallback" and "gave up after 3 attempts: HTTP 503" in r.reason
    assert r.text == RuleInformaliser().render(item("Down503")).text
    assert server.hits["Down503"] == 3


def test_slow_reply_times_out_and_falls_back(server):
    t0 = time.perf_counter()
    r = backend(server, retries=1).render(item("Slow"))
    assert r.status == "fallback" and "ReadTimeout" in r.reason
    assert server.hits["Slow"] == 2 and time.perf_counter() - t0 < 3


@pytest.mark.parametrize("name,why", [("Malformed", "malformed answer"), ("NoContent", "empty or non-text"),
                                      ("BadRequest", "HTTP 400")])
def test_malformed_or_refused_answers_fall_back_without_retry(server, name, why):
    r = backend(server).render(item(name))
    assert r.status == "fallback" and why in r.reason
    assert server.hits[name] == 1


def test_connection_refused_falls_back():
    b = HttpInformaliser(base_url="http://127.0.0.1:9/v1", model="m", retries=1, backoff_s=0.01, connect_timeout_s=0.5)
    r = b.render(item("Ok2"))
    assert r.status == "fallback" and "ConnectionError" in r.reason


def test_concurrency_is_bounded(server):
    deadline = time.monotonic() + 5
    while server.in_flight and time.monotonic() < deadline:  # let earlier slow handlers finish
        time.sleep(0.05)
    server.max_in_flight = 0
    items = [item(f"Concurrent{i}") for i in range(8)]
    out = backend(server, concurrency=3).render_many(items)
    assert [r.text for r in out] == [f"Informal text of Concurrent{i}." for i in range(8)]
    assert 2 <= server.max_in_flight <= 3


def test_informalise_records_fallbacks_and_caches_only_ok(server, tmp_path):
    decls = pa.table({
        "decl_id": ["1", "2"], "full_name": ["OkCached", "Malformed2"], "kind": ["theorem"] * 2,
        "signature": ["(n : ℕ) : n = n"] * 2, "type": ["n = n"] * 2, "docstring": [None, None],
    })
    first = informalise(decls, backend(server), tmp_path)
    assert first.column("status").to_pylist() == ["fallback", "ok"]  # sorted by name within a level
    assert first.column("backend").to_pylist() == ["rules", "http"]  # a fallback row is the rules'
    assert first.column("prompt_version").to_pylist()[0] == "rules-v1"
    assert first.column("prompt_version")[1].as_py().startswith("informalise-v1@")
    informalise(decls, backend(server), tmp_path)
    assert server.hits["OkCached"] == 1  # from the cache the second time
    assert server.hits["Malformed2"] == 2  # fallbacks are not cached: tried again


def test_parse_completion_and_prompt_file():
    assert parse_completion(b'{"choices":[{"message":{"content":"a\\n b"}}]}') == "a b"
    with pytest.raises(MalformedAnswer):
        parse_completion(b'{"choices":[]}')
    system, user, version = load_prompt(Path(__file__).parents[1] / "data" / "prompts" / "informalise-v1.md")
    assert "{full_name}" in user and "{context}" in user and system
    assert version.startswith("informalise-v1@") and len(version) == len("informalise-v1@") + 12
