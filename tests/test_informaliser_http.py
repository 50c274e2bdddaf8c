"""`--informaliser http` end to end against an OpenAI-compatible chat-completions server that the
test starts on 127.0.0.1 (no model: it answers a rendering built from the prompt).

Covered: the sources file's `informaliser:` section and the CLI option; dependency order (a prompt
shows the rendering of the constants its statement uses); the cache by type hash (a second run
asks nothing, a killed run asks again only what it had not stored); the fallback to the rules
when the endpoint is down, answers 500, answers garbage or sleeps past the timeout (said once in
the log, never cached, bounded by the breaker); the manifest and the notes line.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathindex.cli import main
from mathindex.errors import SourceError
from mathindex.informal import InformalInput, RuleInformaliser, informalise_reported
from mathindex.informal.http import HttpInformaliser, endpoint_host
from mathindex.lean import extract_lean_tree
from mathindex.schemas.manifest import InformaliserEntry, InformaliserSpec, Manifest
from mathindex.evaluation.notes import informaliser_line, input_changes
from mathindex.cli.parser import INFORMALISER_CHOICES
from mathindex.sources import INFORMALISERS, load_informaliser
from mathindex.tasks.informalise import informalise_declarations, timeout_s
from tests.manifests import manifest_json

informalise_module = importlib.import_module("mathindex.informal.informalise")  # the package's name is the function

DEMO = """namespace Demo

/-- A number is even when it is twice another. -/
def Even (n : Nat) : Prop := ∃ k, n = 2 * k

def Double (n : Nat) : Nat := 2 * n

theorem double_eq (n : Nat) : Double n = n + n := by omega

theorem even_double (n : Nat) : Even (Double n) := ⟨n, rfl⟩

theorem even_two : Even 2 := ⟨1, rfl⟩

end Demo
"""


class EchoChat:
    """A chat-completions endpoint on 127.0.0.1: `mode` echo answers `In words: <name> (<model>).`
    and, when the prompt lists explained constants, `Building on <their lines>`; 500, garbage and
    sleep (past the client's timeout) fail, and so does every declaration named in `fail`."""

    def __init__(self):
        self.mode = "echo"
        self.fail: set[str] = set()
        self.prompts: dict[str, list[str]] = {}
        self.headers: list[dict] = []
        self.lock = threading.Lock()
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                user = body["messages"][-1]["content"]
                name = re.search(r"^Declaration: (\S+)", user, re.M).group(1)
                with chat.lock:
                    chat.prompts.setdefault(name, []).append(user)
                    chat.headers.append(dict(self.headers))
                chat.answer(self, name, user, body["model"])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def requests(self) -> int:
        return sum(len(v) for v in self.prompts.values())

    def answer(self, h: BaseHTTPRequestHandler, name: str, user: str, model: str) -> None:
        code, payload = 200, b""
        mode = "500" if name in self.fail else self.mode
        if mode == "echo":
            used = user.split("already explained:\n", 1)[1].split("\n\nInformal statement:", 1)[0]
            text = f"In words: {name} ({model})." + ("" if used == "(none)" else f" Building on {used}")
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
        elif mode == "500":
            code, payload = 500, b'{"error": "overloaded"}'
        elif mode == "garbage":
            payload = b"<html>not a completion</html>"
        elif mode == "sleep":
            time.sleep(1.0)
            payload = b"{}"
        try:
            h.send_response(code)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its read timeout)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat():
    server = EchoChat()
    yield server
    server.close()


def demo_corpus(root: Path, extra: int = 0) -> tuple[pa.Table, pa.Table]:
    """The demo corpus (plus `extra` independent theorems) extracted: declarations, dependencies."""
    (root / "Demo").mkdir(parents=True, exist_ok=True)
    more = "".join(f"\ntheorem t{i} (n : Nat) : n + {i} = {i} + n := by omega\n" for i in range(extra))
    (root / "Demo" / "Basic.lean").write_text(DEMO.replace("end Demo", more + "\nend Demo"), encoding="utf-8")
    ex = extract_lean_tree(root, "demo")
    return ex.declarations, ex.dependencies


def spec(url: str, **kw) -> InformaliserSpec:
    opts = dict(backend="http", endpoint=url, model="test-model", timeout_s=5, connect_timeout_s=2, retries=0,
                concurrency=2)
    return InformaliserSpec(**(opts | kw))


def rows(table: pa.Table) -> dict[str, dict]:
    return {r["full_name"]: r for r in table.to_pylist()}


def test_http_renders_in_dependency_order_and_caches_by_type_hash(chat, tmp_path):
    decls, deps = demo_corpus(tmp_path / "lean")
    cache = tmp_path / "cache"
    out = informalise_declarations.fn(decls, deps, cache, spec(chat.url))
    got = rows(out.table)
    assert {r["status"] for r in got.values()} == {"ok"} and {r["backend"] for r in got.values()} == {"http"}
    assert {r["model"] for r in got.values()} == {"test-model"}
    assert got["Demo.Double"]["text"] == "In words: Demo.Double (test-model)."
    # dependency order: Double and Even first; each user's prompt shows their renderings
    assert got["Demo.Double"]["order"] < got["Demo.double_eq"]["order"]
    assert got["Demo.Even"]["order"] < got["Demo.even_two"]["order"]
    assert "- Demo.Double: In words: Demo.Double (test-model)." in chat.prompts["Demo.double_eq"][0]
    # Even has a docstring: its gloss is the docstring's first sentence
    assert "- Demo.Even: A number is even when it is twice another." in chat.prompts["Demo.even_two"][0]
    assert got["Demo.even_double"]["context"] == ["Demo.Double", "Demo.Even"]
    assert got["Demo.even_double"]["text"].startswith(
        "In words: Demo.even_double (test-model). Building on - Demo.Double")
    assert out.report.model_dump(exclude_none=True) == {
        "backend": "http", "model": "test-model", "prompt_version": got["Demo.Even"]["prompt_version"],
        "endpoint": endpoint_host(chat.url), "rendered": 5, "cached": 0, "fell_back": 0, "empty": 0}
    assert endpoint_host(chat.url).startswith("127.0.0.1:")
    asked = chat.requests
    assert asked == 5
    # a second run asks nothing: the whole stage from the stage cache ...
    again = informalise_declarations.fn(decls, deps, cache, spec(chat.url))
    assert chat.requests == asked and again.table.equals(out.table) and again.report.cached == 5
    # ... and without it, every rendering from the model cache (type hash, model, prompt, context)
    for entry in (cache / "stages").rglob("*.parquet"):
        entry.unlink()
    third = informalise_declarations.fn(decls, deps, cache, spec(chat.url))
    assert chat.requests == asked and third.table.equals(out.table)
    assert (third.report.rendered, third.report.cached) == (0, 5)
    # another model is another cache key
    informalise_declarations.fn(decls, deps, cache, spec(chat.url, model="other-model"))
    assert chat.requests == asked + 5


def test_a_killed_run_asks_again_only_what_it_had_not_stored(chat, tmp_path, monkeypatch):
    decls, deps = demo_corpus(tmp_path / "lean", extra=6)
    monkeypatch.setattr(informalise_module, "FLUSH_ROWS", 2)

    class Killed(HttpInformaliser):
        calls = 0

        def render_many(self, items):
            Killed.calls += 1
            if Killed.calls == 3:
                raise KeyboardInterrupt("killed")
            return super().render_many(items)

    with pytest.raises(KeyboardInterrupt):
        informalise_reported(decls, Killed(base_url=chat.url, model="m", retries=0), tmp_path)
    assert chat.requests == 4  # two chunks of two answered and stored
    _, report = informalise_reported(decls, HttpInformaliser(base_url=chat.url, model="m", retries=0), tmp_path)
    assert (report.cached, report.rendered) == (4, decls.num_rows - 4)
    assert chat.requests == decls.num_rows


@pytest.mark.parametrize("mode", ["down", "500", "garbage", "sleep"])
def test_an_endpoint_that_does_not_answer_falls_back_to_the_rules(mode, chat, tmp_path, caplog):
    decls, deps = demo_corpus(tmp_path / "lean")
    url = chat.url
    if mode == "down":
        chat.close()  # nothing listens on that port any more: connection refused
    else:
        chat.mode = mode
    t0 = time.monotonic()
    with caplog.at_level(logging.DEBUG, logger="mathindex.informal"):
        out = informalise_declarations.fn(decls, deps, tmp_path / "cache", spec(url, retries=1, timeout_s=0.3))
    assert time.monotonic() - t0 < 30
    got = rows(out.table)
    rules = rows(informalise_reported(decls, RuleInformaliser(), None, deps)[0])
    assert {r["status"] for r in got.values()} == {"fallback"} and {r["backend"] for r in got.values()} == {"rules"}
    assert {n: r["text"] for n, r in got.items()} == {n: r["text"] for n, r in rules.items()}
    assert all(r["reason"] for r in got.values())
    assert (out.report.rendered, out.report.fell_back, out.report.backend) == (0, 5, "http")
    assert out.report.no_answer
    said = [r for r in caplog.records if r.levelno >= logging.WARNING and "no request to" in r.getMessage()]
    assert len(said) == 1 and "all 5 declarations asked got the rules rendering" in said[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "Demo." in r.getMessage()]
    if mode != "down":  # nothing was cached: with the endpoint back, everything is asked
        chat.mode = "echo"
        before = chat.requests
        back = informalise_declarations.fn(decls, deps, tmp_path / "cache", spec(url))
        assert chat.requests == before + 5 and back.report.rendered == 5


def test_a_dead_endpoint_is_given_up_after_a_run_of_failures(chat, tmp_path, caplog):
    decls, deps = demo_corpus(tmp_path / "lean", extra=20)
    chat.mode = "500"
    with caplog.at_level(logging.WARNING, logger="mathindex.informal"):
        out = informalise_declarations.fn(decls, deps, tmp_path / "cache", spec(chat.url, retries=1, concurrency=1))
    assert out.report.fell_back == decls.num_rows == 25
    assert chat.requests == 8 * 2  # DOWN_AFTER requests, each tried twice; the other 17 not asked
    assert sum("did not answer 8 requests in a row" in r.getMessage() for r in caplog.records) == 1


def test_past_its_budget_a_run_asks_no_more(chat, tmp_path, caplog):
    decls, deps = demo_corpus(tmp_path / "lean")
    spent = HttpInformaliser(base_url=chat.url, model="m", budget_s=1e-9)
    with caplog.at_level(logging.WARNING, logger="mathindex.informal"):
        table, report = informalise_reported(decls, spent, tmp_path, deps)
    assert chat.requests == 0 and report.fell_back == 5
    assert set(table.column("reason").to_pylist()) == {"not asked: the budget of 1e-09 s was spent"}
    assert sum("budget" in r.getMessage() for r in caplog.records if r.name.endswith("http")) == 1


def test_some_answers_and_some_fallbacks_are_counted_apart(chat, tmp_path):
    decls, deps = demo_corpus(tmp_path / "lean")
    chat.fail = {"Demo.even_two"}
    out = informalise_declarations.fn(decls, deps, tmp_path / "cache", spec(chat.url))
    got = rows(out.table)
    assert got["Demo.even_two"]["status"] == "fallback" and got["Demo.even_two"]["backend"] == "rules"
    assert (out.report.rendered, out.report.fell_back, out.report.no_answer) == (4, 1, None)
    assert not list((tmp_path / "cache" / "stages").rglob("*.parquet"))  # a table with a fallback is not stored


def test_the_api_key_comes_from_the_named_environment_variable(chat):
    s = spec(chat.url, api_key_env="DEMO_INFORMAL_KEY")
    backend = HttpInformaliser.from_spec(s, environ={"DEMO_INFORMAL_KEY": "sekrit"})
    assert "sekrit" not in repr(backend) and backend.endpoint == endpoint_host(chat.url)
    r = backend.render_many([InformalInput("Demo.x", "theorem", "(n : Nat) : n = n", "n = n", "")])
    assert r[0].status == "ok" and chat.headers[-1]["Authorization"] == "Bearer sekrit"
    assert endpoint_host("https://user:pw@models.example.org:8443/v1?key=1") == "models.example.org:8443"


def test_the_sources_file_section_and_the_cli_option(tmp_path, capsys):
    (tmp_path / "lean" / "Demo").mkdir(parents=True)
    (tmp_path / "lean" / "Demo" / "Basic.lean").write_text(DEMO, encoding="utf-8")
    base = "sources:\n  - {name: demo, kind: lean, path: lean}\n"
    f = tmp_path / "s.yaml"
    f.write_text(base + "informaliser: {backend: http, endpoint: 'http://127.0.0.1:8080/v1', model: qwen, "
                 "api_key_env: LLM_KEY, concurrency: 8}\n")
    got = load_informaliser(f)
    assert (got.backend, got.endpoint, got.model, got.api_key_env, got.concurrency) == (
        "http", "http://127.0.0.1:8080/v1", "qwen", "LLM_KEY", 8)
    assert load_informaliser(f, "rules").backend == "rules"  # the option overrides the file
    assert INFORMALISER_CHOICES == INFORMALISERS == ("rules", "http")
    with pytest.raises(SourceError, match="not one of rules, http"):  # a deployment's parameter, say
        load_informaliser(f, "gpt")
    assert timeout_s(got) == 3600 + 3 * 3600 and timeout_s(load_informaliser(f, "rules")) == 3600
    f.write_text(base + "informaliser: {backend: http, endpoint: 'http://x/v1', model: m, api_key: sk-123}\n")
    with pytest.raises(SourceError, match="api_key"):  # a key in the file is refused: name its variable
        load_informaliser(f)
    f.write_text(base)
    assert load_informaliser(f).backend == "rules"
    # http without an endpoint: one line, exit 2, before anything runs
    assert main(["release", "--sources", str(f), "--informaliser", "http", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "needs an endpoint and a model" in err
    lean = ["--lean", str(tmp_path / "lean")]
    assert main(["release", *lean, "--informaliser", "http", "--out", str(tmp_path / "out")]) == 2
    assert "--sources" in capsys.readouterr().err
    assert main(["release", "--informaliser", "gpt", "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out" / "releases").exists()


def test_the_notes_say_which_informaliser_ran():
    entry = InformaliserEntry(backend="http", model="qwen|2.5", prompt_version="informalise-v1@0123456789ab",
                              endpoint="127.0.0.1:8080", rendered=240, cached=10, fell_back=4)
    assert informaliser_line(entry) == (
        "Informaliser: http, model qwen\\|2.5 at 127.0.0.1:8080, prompt informalise-v1@0123456789ab: "
        "240 rendered now, 10 from the cache, 4 fell back to the rules.")
    down = entry.model_copy(update={"rendered": 0, "cached": 0, "fell_back": 254,
                                    "no_answer": "ConnectionError: refused"})
    assert informaliser_line(down).endswith(
        "254 fell back to the rules. No request to the endpoint succeeded (ConnectionError: refused): those have the "
        "rules rendering.")
    rules = InformaliserEntry(backend="rules", model="rules-v1", prompt_version="rules-v1", rendered=254)
    assert informaliser_line(rules) == (
        "Informaliser: rules, model rules-v1, prompt rules-v1: 254 rendered now, 0 from the cache.")
    now = Manifest.from_json(manifest_json(informaliser=entry.model_dump(mode="json")))
    before = Manifest.from_json(manifest_json(informaliser=rules.model_dump(mode="json")))
    assert input_changes(now, before) == [
        "informaliser: rules rules-v1 (rules-v1) -> http qwen\\|2.5 (informalise-v1@0123456789ab)"]
    assert input_changes(now, Manifest.from_json(manifest_json())) == []  # an older release records none


@pytest.mark.e2e
def test_a_release_with_the_http_informaliser(chat, tmp_path, capsys, prefect_harness):
    """`mathindex release` with the sources file's http informaliser: the informalisations are the
    endpoint's, and the manifest and the notes say so; `--informaliser rules` overrides the file."""
    (tmp_path / "lean" / "Demo").mkdir(parents=True)
    (tmp_path / "lean" / "Demo" / "Basic.lean").write_text(DEMO, encoding="utf-8")
    f = tmp_path / "s.yaml"
    f.write_text("sources:\n  - {name: demo, kind: lean, path: lean}\n"
                 f"informaliser: {{backend: http, endpoint: '{chat.url}', model: test-model, timeout_s: 5, "
                 "retries: 0}\n")
    root = tmp_path / "root"
    assert main(["release", "--sources", str(f), "--out", str(root), "--no-gate"]) == 0
    release = Path(re.search(r"^release: (.+)$", capsys.readouterr().out, re.M).group(1))
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["informaliser"]["backend"] == "http" and manifest["informaliser"]["rendered"] == 5
    assert manifest["informaliser"]["endpoint"] == endpoint_host(chat.url)
    notes = (release / "release-notes.md").read_text()
    assert f"Informaliser: http, model test-model at {endpoint_host(chat.url)}" in notes
    assert "5 rendered now, 0 from the cache, 0 fell back to the rules." in notes
    table = pq.read_table(release / "informalisations.parquet")
    assert set(table.column("backend").to_pylist()) == {"http"} and chat.requests == 5
    assert main(["release", "--sources", str(f), "--out", str(root), "--no-gate", "--informaliser", "rules"]) == 0
    second = Path(re.search(r"^release: (.+)$", capsys.readouterr().out, re.M).group(1))
    assert json.loads((second / "manifest.json").read_text())["informaliser"]["backend"] == "rules"
    assert "informaliser: http test-model" in (second / "release-notes.md").read_text()  # the change, against the first
    assert chat.requests == 5
