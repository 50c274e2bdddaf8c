"""The HTTP API over the sample release: answers, their documented models, and bad input (4xx
with a one-line JSON body, never a 500; a time budget gives a 503)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathindex.cli import main
from mathindex.serve.app import create_app
from mathindex.serve.release import ServedRelease
from mathindex.serve.swap import ReleaseHolder
from mathindex.store import PUBLISHED, verify_release
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
        assert set(h["channels"]) <= {"identifier", "lexical", "embedding", "formula", "formal"}
        assert all(isinstance(r, int) and r >= 1 for r in h["channels"].values())
    assert not any(isinstance(v, list) and len(v) > 50 for h in hits for v in h.values())  # no vectors
    again = _ok(client.get("/search", params={"q": "lattice join meet", "k": 5}))
    assert body["cached"] is False and again["cached"] is True and again["hits"] == hits


def test_identifier_and_formula_queries(client):
    hits = _ok(client.get("/search", params={"q": "Nat.Prime.two_le"}))["hits"]
    assert hits[0]["name"] == "MiniMath.Nat.Prime.two_le" and hits[0]["channels"]["identifier"] == 1
    body = _ok(client.get("/search", params={"q": "$a^2 + b^2 \\ge 2ab$", "k": 3}))
    assert body["query_kind"] == "formula" and body["hits"]


def test_resolve_is_the_identifier_resolver_alone(client):
    nodes = _ok(client.get("/resolve", params={"id": "Nat.Prime.two_le"}))["nodes"]
    assert [n["name"] for n in nodes] == ["MiniMath.Nat.Prime.two_le"]
    assert nodes[0]["location"]["file"] == "MiniMath/NumberTheory/Divisors.lean"
    assert _ok(client.get("/resolve", params={"id": "no such thing at all"}))["nodes"] == []


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


def test_health_and_release_summary(client, holder):
    health = _ok(client.get("/health"))
    assert health["status"] == "ok" and health["release_id"] == holder.current.release_id and health["refused"] == []
    rel = _ok(client.get("/release"))
    assert rel["release_id"] == holder.current.release_id and rel["gate"]["passed"] is True
    assert rel["row_counts"]["declarations"] >= 60 and "headline" in rel["metrics"]
    assert {c["name"] for c in rel["corpora"]} >= {"sample-lean", "sample-latex"}


def test_openapi_documents_the_response_models(client):
    doc = _ok(client.get("/openapi.json"))
    assert {"/search", "/resolve", "/formula", "/declaration/{name}", "/health", "/release"} <= set(doc["paths"])
    ok = doc["paths"]["/search"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok["$ref"].endswith("/SearchResponse")
    assert doc["paths"]["/search"]["get"]["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
    assert {"SearchHit", "FormulaResponse", "DeclarationResponse", "ReleaseResponse"} <= set(doc["components"]["schemas"])


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
    for path, key in (("/search", "q"), ("/resolve", "id"), ("/formula", "latex")):
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
    (tmp_path / PUBLISHED).write_text("{not json")
    assert main(["serve", str(tmp_path)]) == 2
    assert "does not name a release" in capsys.readouterr().err
    assert json.loads((root / PUBLISHED).read_text())["release_id"]
