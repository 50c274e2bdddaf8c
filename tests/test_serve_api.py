"""The HTTP API over the sample release: answers, their documented models, and bad input (4xx
with a one-line JSON body, never a 500; a time budget gives a 503)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathindex.cli import main
from mathindex.premises.ranker import FEATURES, FILE_FEATURES
from mathindex.serve.app import create_app
from mathindex.serve.release import ServedRelease
from mathindex.serve.swap import ReleaseHolder
from mathindex.store.integrity import verify_release
from mathindex.store.layout import PUBLISHED
from mathindex.store.releases import publish
from tests.serving import clone_release, copy_root


@pytest.fixture(scope="module")
def root(sample_release_root, tmp_path_factory):
    return copy_root(sample_release_root, tmp_path_factory.mktemp("api-root"))


@pytest.fixture(scope="module")
def holder(root):
    return ReleaseHolder(root)


@pytest.fixture(scope="module")
def client(holder):
    with TestClient(create_app(holder, threads=2)) as c:
        yield c


def _ok(r, status=200):
    assert r.status_code == status, r.text
    return r.json()


def _error(r, status):
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error", "status"} and body["status"] == status and "\n" not in body["error"]
    return body["error"]


def test_search_gives_hits_with_location_channels_and_ranks(client, holder):
    body = _ok(client.get("/search", params={"q": "lattice join meet", "k": 5}))
    assert body["release_id"] == holder.current.release_id and body["query_kind"] == "words"
    hits = body["hits"]
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1)) and 1 <= len(hits) <= 5
    assert "MiniMath.Lattice" in [h["name"] for h in hits[:3]]
    for h in hits:
        assert h["kind"] and h["location"]["file"] and h["location"]["line"] and h["channels"]
        assert set(h["channels"]) <= {"identifier", "lexical", "embedding", "formula", "formal", "parent", "informal"}
        assert all(isinstance(r, int) and r >= 1 for r in h["channels"].values())
    assert not any(isinstance(v, list) and len(v) > 50 for h in hits for v in h.values())  # no vectors
    again = _ok(client.get("/search", params={"q": "lattice join meet", "k": 5}))
    assert body["cached"] is False and again["cached"] is True and again["hits"] == hits


def test_identifier_and_formula_queries(client):
    hits = _ok(client.get("/search", params={"q": "Nat.Prime.two_le"}))["hits"]
    assert hits[0]["name"] == "MiniMath.Nat.Prime.two_le" and hits[0]["channels"]["identifier"] == 1
    body = _ok(client.get("/search", params={"q": "$a^2 + b^2 \\ge 2ab$", "k": 3}))
    assert body["query_kind"] == "formula" and body["hits"]


def test_search_says_how_well_its_hits_match(client):
    assert _ok(client.get("/search", params={"q": "Nat.Prime.two_le"}))["match"] == "strong"
    body = _ok(client.get("/search", params={"q": "zxqv florbish wumpus"}))
    assert body["match"] == "none" and body["notice"] is None and body["hits"]  # the nearest, said to be no match
    body = _ok(client.get("/search", params={"q": "0BCD"}))
    assert body["match"] == "none" and body["notice"] == "no Stacks tag 0BCD in this release"
    body = _ok(client.get("/search", params={"q": "MiniMath.No.such_name"}))
    assert body["notice"] == "no declaration named MiniMath.No.such_name in this release"
    assert _ok(client.get("/search", params={"q": "MA03"}))["notice"] is None  # a tag the sample has


def test_formal_mode_is_loogle_search(client):
    body = _ok(client.get("/search", params={"q": "_ * _ = _ * _", "mode": "formal", "k": 3}))
    assert body["mode"] == "formal" and body["count"] >= len(body["hits"]) >= 1 and body["count_exact"]
    assert [h["rank"] for h in body["hits"]] == list(range(1, len(body["hits"]) + 1))
    assert all(h["location"]["file"] and isinstance(h["exact_conclusion"], bool) for h in body["hits"])
    assert "unknown constant No.Such" in _error(client.get("/search", params={"q": "No.Such", "mode": "formal"}), 422)
    assert "mode:" in _error(client.get("/search", params={"q": "x", "mode": "loogle"}), 400)
    assert "match" in _ok(client.get("/search", params={"q": "lattice", "mode": "fused"}))


def test_the_server_encodes_queries_with_the_engines_backend(holder):
    """Its checked packed ONNX export (conftest's MATHINDEX_ONNX_DIR): the engine's vectors within
    the export's checked cosine, alone or packed with other threads' queries, and the same hits as
    `mathindex search` and `bench` give."""
    import threading


    from mathindex.embed.onnx import MIN_COSINE
    from mathindex.embed.channel import encode_one
    from mathindex.search.engine import SearchEngine

    served = holder.current.engine.vector.embedder
    assert served.onnx_file is not None and served.packer is not None
    plain = SearchEngine(holder.current.path, verify="none")
    queries = ["lattice join meet", "theorem Nat.add_comm (n m : ℕ) : n + m = m + n", "$a^2 + b^2 \\ge 2ab$"]
    for q in queries:
        assert float(served.encode([q])[0] @ encode_one(plain.vector.embedder, q)[0]) >= MIN_COSINE
        assert [h.name for h in holder.current.search(q, 10).hits] == plain.names(q, 10)
    packs = served.packer.stats["packs"]
    got, start = {}, threading.Barrier(len(queries) * 4)

    def one(i: int) -> None:
        start.wait()
        got[i] = served.encode([queries[i % len(queries)]])[0]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(queries) * 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert served.packer.stats["packs"] - packs < len(threads)  # some ran together
    for i, v in got.items():
        assert float(v @ encode_one(plain.vector.embedder, queries[i % len(queries)])[0]) >= MIN_COSINE


def test_the_server_tokenises_with_its_own_tokenizer_and_the_same_tokens(holder, monkeypatch):
    """Query tokens come from a Rust tokenizer set up once (the embedder's `query_tokenizer`), not
    from the shared tokenizer's `__call__`: the same tokens as `_tokenise` (texts past
    max_seq_length truncated); the encoder never calls the shared one."""
    import numpy as np

    from mathindex.embed.torch_ops import tokenise
    from mathindex.embed.onnx import PROBE_TEXTS
    from mathindex.search.engine import SearchEngine

    embedder = holder.current.engine.vector.embedder  # without torch once the query files were written
    full = SearchEngine(holder.current.path, verify="none").vector.embedder
    tok = full.model.tokenizer
    own = embedder.query_tokenizer()
    want = tokenise(tok, PROBE_TEXTS, full.max_seq_length)
    rows = own.encode_batch(PROBE_TEXTS)
    assert [r.ids for r in rows] == want["input_ids"] and [r.type_ids for r in rows] == want["token_type_ids"]
    assert max(len(r.ids) for r in rows) == embedder.max_seq_length == full.max_seq_length  # the long probe is cut
    before = embedder.encode(PROBE_TEXTS[:4])

    def refuse(*args, **kwargs):
        raise AssertionError("the shared tokenizer was called")

    monkeypatch.setattr(type(tok), "__call__", refuse)
    assert np.array_equal(embedder.encode(PROBE_TEXTS[:4]), before)


def test_resolve_is_the_identifier_resolver_alone(client):
    nodes = _ok(client.get("/resolve", params={"id": "Nat.Prime.two_le"}))["nodes"]
    assert [n["name"] for n in nodes] == ["MiniMath.Nat.Prime.two_le"]
    assert nodes[0]["location"]["file"] == "MiniMath/NumberTheory/Divisors.lean"
    assert _ok(client.get("/resolve", params={"id": "no such thing at all"}))["nodes"] == []


@pytest.mark.parametrize("typed,first", [
    ("https://doi.org/10.5555/mathindex.sample.divisors", "MiniMath.Nat.totient"),
    ("A000010", "MiniMath.Nat.totient"),
    ("arXiv:2512.99901v2", "MiniMath.mul_left_cancel"),
    ("wikidata:Q1506253", "MiniMath.Nat.exists_infinite_primes"),
    ("MR9999901", "MiniMath.Nat.totient"),
])
def test_resolve_takes_external_identifiers(client, typed, first):
    body = _ok(client.get("/resolve", params={"id": typed}))
    assert body["nodes"][0]["name"] == first and body["notice"] is None
    assert body["nodes"][0]["location"]["file"].startswith("MiniMath/")


def test_an_identifier_the_release_lacks_is_said_never_fuzzed(client):
    body = _ok(client.get("/resolve", params={"id": "Zbl 9999.00001"}))
    assert body["nodes"] == [] and body["notice"] == "no zbMATH review Zbl 9999.00001 in this release"
    search = _ok(client.get("/search", params={"q": "10.5555/mathindex.sample.uncited", "k": 5}))
    assert search["resolved"] == [] and search["match"] == "none"
    assert search["notice"] == "no DOI 10.5555/mathindex.sample.uncited in this release"
    found = _ok(client.get("/search", params={"q": "Q1506253", "k": 5}))
    assert found["hits"][0]["name"] == "MiniMath.Nat.exists_infinite_primes" and found["hits"][0]["channels"]["identifier"] == 1
    assert found["match"] == "strong" and found["notice"] is None


def test_formula_gives_tree_canonical_form_status_and_mathml(client):
    body = _ok(client.get("/formula", params={"latex": "a^2+b^2"}))
    assert body["parser"] == "grammar" and body["status"] == "ok" and body["canonical"] == "a**2 + b**2"
    assert body["tree"]["op"] == "add" and body["mathml"].startswith("<math")
    assert "malformed formula" in _error(client.get("/formula", params={"latex": "\\frac{"}), 422)


def test_declaration_has_row_dependencies_citations_and_location(client):
    body = _ok(client.get("/declaration/MiniMath.Nat.Prime.two_le"))
    assert body["row"]["full_name"] == "MiniMath.Nat.Prime.two_le" and body["row"]["kind"] == "theorem"
    assert {"target": "MiniMath.Nat.Prime", "resolved": True, "role": "statement"} in body["dependencies"]
    assert "MiniMath.Nat.Prime.pos" in [c["name"] for c in body["cited_by"]]
    assert body["cited_by_total"] >= 1 and body["dependencies_total"] == len(body["dependencies"])
    assert body["defined_at"]["file"] == "MiniMath/NumberTheory/Divisors.lean" and body["defined_at"]["line"] == 41
    assert "no declaration" in _error(client.get("/declaration/No.Such.Name"), 404)


def test_declaration_of_a_latex_statement(client):
    body = _ok(client.get("/declaration/MA04"))  # a Stacks-style tag of the sample's algebra.tex
    assert body["row"]["node_id"].startswith("tex:") and body["row"]["label"] == "lemma-inverse-unique"
    assert {"target": "MA02", "resolved": True, "role": "proof"} in body["dependencies"]
    assert [c["name"] for c in body["cited_by"]] == ["MA05"]
    assert body["defined_at"]["file"] == "algebra.tex" and body["defined_at"]["line"] == 60


GOAL = "Nat.Prime p → 2 ≤ p"


def test_premises_gives_the_rankers_declarations_with_signals_and_locations(client, holder):
    from mathindex.premises.api import premises

    body = _ok(client.get("/premises", params={"goal": GOAL, "context": "(p : Nat)", "k": 5}))
    assert body["release_id"] == holder.current.release_id and body["goal"] == GOAL and body["k"] == 5
    expected = premises(holder.current.path, GOAL, k=5, context="(p : Nat)")
    assert [p["name"] for p in body["premises"]] == [p.name for p in expected.premises]
    # the server's BLAS runs on one thread, this process's on several: the float32 sums may differ
    # in their last bit, which can move the 6th decimal the scores are rounded to
    assert [p["score"] for p in body["premises"]] == pytest.approx([p.score for p in expected.premises], abs=2e-6)
    assert body["constants"] == expected.constants and body["fallback"] is None
    assert "MiniMath.Nat.Prime.two_le" in [p["name"] for p in body["premises"][:3]]
    for i, p in enumerate(body["premises"], 1):
        assert p["rank"] == i and p["kind"] and p["location"]["file"].endswith(".lean") and p["location"]["line"]
        assert p["signals"] and set(p["signals"]) <= set(FEATURES) - set(FILE_FEATURES)  # no file: no file signal
    assert len(_ok(client.get("/premises", params={"goal": "a * b = b * a"}))["premises"]) <= 32  # k: 32 unless asked
    unknown = _ok(client.get("/premises", params={"goal": "zorblax qux", "k": 3}))
    assert unknown["fallback"] == "embedding" and unknown["notes"] and len(unknown["premises"]) == 3


def test_premises_in_a_file_rank_only_what_the_file_can_name_above_the_line(client, holder):
    """`file` and `line` reach the ranker's scope: `Prime.two_le` (line 41 of its file) is no
    candidate for a goal at line 41 of that file, and is one two lines below; the answers are those
    of `premises.api.premises` with the same place."""
    from mathindex.premises.api import premises

    here = "MiniMath/NumberTheory/Divisors.lean"
    for line, visible in ((41, False), (43, True)):
        params = {"goal": GOAL, "context": "(p : Nat)", "k": 32, "file": here, "line": line}
        body = _ok(client.get("/premises", params=params))
        assert body["file"] == here and body["line"] == line
        names = [p["name"] for p in body["premises"]]
        assert ("MiniMath.Nat.Prime.two_le" in names) == visible, (line, names[:5])
        expected = premises(holder.current.path, GOAL, k=32, context="(p : Nat)", file=here, line=line)
        assert names == [p.name for p in expected.premises]
    assert "not a file of the release" in _error(client.get("/premises", params={"goal": GOAL, "file": "MiniMath/Nope.lean"}), 422)
    assert "line needs a file" in _error(client.get("/premises", params={"goal": GOAL, "line": 3}), 400)


@pytest.mark.parametrize(("params", "status", "says"), [
    ({"goal": "a + (b"}, 422, "position 5"),
    ({"goal": "a = "}, 422, "position 3"),
    ({"goal": "x" * 4097}, 413, "goal is longer than 4096 bytes"),
    ({"goal": "a = b", "context": "(h : " + "x" * 4097 + ")"}, 413, "context is longer"),
    ({"goal": "a = b", "k": 0}, 400, "k:"),
    ({"goal": "a = b", "k": 101}, 400, "k:"),
    ({"goal": "  "}, 400, "goal is empty"),
    ({}, 400, "goal:"),
])
def test_bad_premises_input_is_a_4xx_json_error(client, params, status, says):
    assert says in _error(client.get("/premises", params=params), status)


def test_a_release_without_premise_index_answers_search_and_says_so_for_premises(root, holder):
    clone_release(root, holder.current.release_id, "29990101T000000Z-nopremises", without="premises")
    old = ReleaseHolder(root, "29990101T000000Z-nopremises")
    assert old.current.premise_ranker is None and "premises" in old.current.unavailable
    with TestClient(create_app(old, threads=1)) as c:
        says = _error(c.get("/premises", params={"goal": GOAL}), 404)
        assert "no premise index" in says and "29990101T000000Z-nopremises" in says
        assert _ok(c.get("/search", params={"q": "lattice join meet"}))["hits"]
        assert _ok(c.get("/release"))["premises"] is None
    # published over a release that has premises: refused, as a release that lost a channel
    served = holder.current.release_id
    fresh = ReleaseHolder(root)
    publish(root, "29990101T000000Z-nopremises")
    try:
        assert fresh.refresh() is False and fresh.current.release_id == served
        assert [r.release_id for r in fresh.refused] == ["29990101T000000Z-nopremises"]
        assert "premises: " in fresh.refused[0].reason and "no premise index" in fresh.refused[0].reason
    finally:
        publish(root, served)


def test_health_and_release_summary(client, holder):
    health = _ok(client.get("/health"))
    assert health["status"] == "ok" and health["release_id"] == holder.current.release_id and health["refused"] == []
    packs = health["query_packs"]  # the query encoder's packs so far: at least one text a pack
    assert set(packs) == {"packs", "texts", "tokens"} and 1 <= packs["packs"] <= packs["texts"] < packs["tokens"]
    rel = _ok(client.get("/release"))
    assert rel["release_id"] == holder.current.release_id and rel["gate"]["passed"] is True
    assert rel["row_counts"]["declarations"] >= 60 and "headline" in rel["metrics"]
    assert {c["name"] for c in rel["corpora"]} >= {"sample-lean", "sample-latex"}
    assert set(rel["premises"]["figures"]) >= {"ranker", "bm25 over statements"}


def test_openapi_documents_the_response_models(client):
    doc = _ok(client.get("/openapi.json"))
    assert {"/search", "/resolve", "/formula", "/declaration/{name}", "/premises", "/health", "/release"} <= set(doc["paths"])
    ok = doc["paths"]["/search"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert sorted(o["$ref"].rsplit("/", 1)[1] for o in ok["anyOf"]) == ["FormalSearchResponse", "SearchResponse"]
    assert {"match", "notice"} <= set(doc["components"]["schemas"]["SearchResponse"]["properties"])
    assert doc["paths"]["/search"]["get"]["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
    assert {"SearchHit", "FormulaResponse", "DeclarationResponse", "ReleaseResponse", "PremisesResponse",
            "PremiseHit"} <= set(doc["components"]["schemas"])
    premises = doc["paths"]["/premises"]["get"]
    assert premises["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/PremisesResponse")
    assert {"goal", "context", "k", "file", "line"} == {p["name"] for p in premises["parameters"]}
    assert {"404", "422", "413"} <= set(premises["responses"])


def test_page_and_source_view(client):
    page = client.get("/")
    assert page.status_code == 200 and "search-form" in page.text and "/static/app.js" in page.text
    assert client.get("/static/app.js").status_code == 200
    hit = _ok(client.get("/search", params={"q": "Nat.Prime.two_le", "k": 1}))["hits"][0]
    url = hit["location"]["source_url"]
    assert url.endswith("#L41")
    src = client.get(url.split("#")[0])
    assert src.status_code == 200 and 'id="L41"' in src.text and "two_le" in src.text
    _error(client.get("/source/sample-lean/..%2F..%2F..%2Fpyproject.toml"), 404)
    _error(client.get("/source/no-corpus/x.lean"), 404)


@pytest.mark.parametrize(("params", "status", "says"), [
    ({"q": "x" * 4097}, 413, "longer than 4096 bytes"),
    ({"q": "é" * 2049}, 413, "longer than 4096 bytes"),
    ({"q": "lattice", "k": 0}, 400, "k:"),
    ({"q": "lattice", "k": 101}, 400, "k:"),
    ({"q": "lattice", "k": "ten"}, 400, "k:"),
    ({}, 400, "q:"),
    ({"q": "   "}, 400, "empty"),
])
def test_bad_search_input_is_a_4xx_json_error(client, params, status, says):
    assert says in _error(client.get("/search", params=params), status)


def test_other_bad_input(client):
    _error(client.get("/formula", params={"latex": "\\sqrt"}), 422)
    _error(client.get("/formula", params={"latex": "x" * 5000}), 413)
    _error(client.get("/formula"), 400)
    _error(client.get("/resolve", params={"id": ""}), 400)
    _error(client.get("/nowhere"), 404)
    _error(client.post("/search", params={"q": "x"}), 405)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=0, max_size=300))
def test_no_input_makes_a_500(client, text):
    for path, key in (("/search", "q"), ("/resolve", "id"), ("/formula", "latex"), ("/premises", "goal")):
        r = client.get(path, params={key: text})
        assert r.status_code < 500, (path, text, r.text)
        if r.status_code >= 400:
            assert set(r.json()) == {"error", "status"}


def test_a_query_past_the_time_budget_is_a_503(holder):
    with TestClient(create_app(holder, threads=1, budget_s=1e-4)) as slow:
        says = _error(slow.get("/search", params={"q": "a query the cache has never seen"}), 503)
    assert "budget" in says


def test_verify_release_finds_altered_and_missing_files(root, holder):
    rid = holder.current.release_id
    assert verify_release(root / "releases" / rid) == []
    bad = clone_release(root, rid, "bad-copy", corrupt="nodes.parquet")
    (bad / "release-notes.md").unlink()
    assert verify_release(bad) == ["nodes.parquet: sha256 mismatch", "release-notes.md: missing"]
    with pytest.raises(Exception, match="sha256 mismatch"):
        ServedRelease(bad)


def test_serve_cli_refuses_bad_usage_with_one_line(tmp_path, root, capsys):
    assert main(["serve", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "published.json" in err and "\n" not in err
    assert main(["serve", str(root), "--release", "20990101T000000Z-nothere"]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["serve", str(root), "--port", "70000"]) == 2
    assert main(["serve", str(tmp_path / "missing")]) == 2
    assert main(["mcp", str(tmp_path)]) == 2
    assert main(["mcp", str(root), "--base-url", "ftp://example.org"]) == 2
    assert "--base-url must be an http(s) URL" in capsys.readouterr().err
    (tmp_path / PUBLISHED).write_text("{not json")
    assert main(["serve", str(tmp_path)]) == 2
    assert "does not name a release" in capsys.readouterr().err
    assert json.loads((root / PUBLISHED).read_text())["release_id"]


def test_the_server_runs_on_httptools_and_uvloop(holder):
    """uvicorn's C parser and loop (dependencies), and a real server on them answers a search."""
    from mathindex.serve.app import http_stack
    from tests.serving import ServerThread, get_json

    assert http_stack() == {"http": "httptools", "loop": "uvloop"}
    with ServerThread(create_app(holder, threads=2)) as server:
        status, body = get_json(server.port, "/search?q=lattice&k=3")
    assert status == 200 and body["hits"]


def test_without_httptools_and_uvloop_the_server_says_so_and_runs_on_h11(monkeypatch, caplog):
    import importlib.util

    from mathindex.serve.app import http_stack

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("httptools", "uvloop") else real(name, *a))
    assert http_stack() == {"http": "h11", "loop": "asyncio"}
    assert "httptools and uvloop are not installed" in caplog.text


def test_every_response_carries_the_security_headers(client):
    """CSP without inline script and nosniff on the page, static files, JSON, errors and HTML pages."""
    source = _ok(client.get("/search", params={"q": "Nat.Prime.two_le", "k": 1}))["hits"][0]["location"]["source_url"]
    for path, status in [("/", 200), ("/static/app.js", 200), ("/static/style.css", 200), ("/health", 200),
                         ("/search?q=group", 200), ("/formula?latex=x%5E2", 200), ("/openapi.json", 200),
                         ("/declaration/MiniMath.Nat.Prime.two_le", 200), ("/decl/MiniMath.Nat.Prime.two_le", 200),
                         (source.split("#")[0], 200), ("/decl/no.such.name", 404), ("/search?q=", 400),
                         ("/nothing-here", 404), ("/static/nothing.js", 404)]:
        r = client.get(path)
        assert r.status_code == status, (path, r.text)
        csp = r.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp, path
        assert r.headers["x-content-type-options"] == "nosniff", path


def test_declaration_page_shows_statement_informal_uses_used_by_and_source(client):
    body = _ok(client.get("/declaration/MiniMath.Nat.Prime.two_le"))  # the JSON API as before, plus `informal`
    assert body["node"]["name"] == "MiniMath.Nat.Prime.two_le" and body["informal"]
    r = client.get("/decl/MiniMath.Nat.Prime.two_le")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    assert "<h2>Statement</h2>" in page and "2 ≤ p" in page and "<h2>Informal</h2>" in page
    assert '<a href="/decl/MiniMath.Nat.Prime">MiniMath.Nat.Prime</a>' in page  # uses
    assert "<h2>Used by (" in page and 'href="/decl/MiniMath.Nat.Prime.pos"' in page
    assert body["defined_at"]["source_url"] in page and "<script" not in page
    latex = client.get("/decl/MT03").text  # a LaTeX statement: its formulas as MathML, no \label
    assert "<math" in latex and "\\label" not in latex and "closed" in latex


def test_hits_have_clean_titles_and_latex_titles_as_sanitised_parts(client):
    hits = _ok(client.get("/search", params={"q": "closure of a subset closed", "k": 10}))["hits"]
    assert not any("\\label" in (h["title"] or "") for h in hits)
    parts = [p for h in hits for p in h["title_parts"] or []]
    assert any(p["mathml"] and p["mathml"].startswith("<math") for p in parts)
    assert all(h["title_parts"] is None for h in hits if h["name"].startswith("MiniMath."))  # Lean: no LaTeX
    mathml = _ok(client.get("/formula", params={"latex": "\\text{<img/src='x'/onerror='alert(1)'>}"}))["mathml"]
    assert "<img" not in mathml and "&lt;img" in mathml
