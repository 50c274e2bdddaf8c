"""The query verbs on the server's query path: `mathindex search` and `premises` answer as
`mathindex serve` does (ServedRelease), never import torch, sentence-transformers, transformers or
Prefect, and `search --queries FILE` answers a JSON Lines file from one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mathindex.cli import main
from mathindex.cli.parser import build_parser
from tests.serving import copy_root

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "sentence_transformers", "transformers", "prefect")
QUERY_VERBS = ("mathindex.cli.search", "mathindex.cli.premises", "mathindex.cli.query", "mathindex.cli.serve")


def test_a_query_after_an_option_is_still_the_query():
    for argv in (["search", "R", "--k", "3", "lattice"], ["search", "R", "lattice", "--k", "3"],
                 ["search", "R", "--formal", "--k", "3", "lattice"]):
        args = build_parser().parse_args(argv)
        assert (args.query, args.k, args.queries) == ("lattice", 3, None), argv
    assert build_parser().parse_args(["search", "R", "--queries", "q.jsonl"]).query is None


def test_the_query_verbs_import_neither_torch_nor_prefect():
    """Their modules' import closure, in a fresh interpreter (the CLI loads only the chosen verb's module)."""
    code = f"import sys\nimport {', '.join(QUERY_VERBS)}\nprint(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == []


@pytest.fixture(scope="module")
def root(sample_release_root, tmp_path_factory) -> Path:
    """A copy of the sample root, opened once as a server opens it, so that the checked ONNX exports
    and the query files a torch-free query encoder needs are in place (conftest's MATHINDEX_ONNX_DIR)."""
    from mathindex.serve.release import ServedRelease

    root = copy_root(sample_release_root, tmp_path_factory.mktemp("cli-query-root"))
    ServedRelease(_release(root), warm=False).close()
    return root


def _release(root: Path) -> Path:
    return root / "releases" / json.loads((root / "published.json").read_text())["release_id"]


def _cli(*argv: str) -> subprocess.CompletedProcess:
    """`python -X importtime -m mathindex ARGV…`: stderr lists every module the process imported."""
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "mathindex", *argv], capture_output=True, text=True,
                          timeout=300, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:") and "|" in line}


@pytest.mark.parametrize("argv", [
    ["search", "{root}", "sum of totient over divisors", "--json"],
    ["search", "{root}", "$\\sum_{{d \\mid n}} \\varphi(d) = n$", "--k", "3"],
    ["search", "{root}", "--formal", "Nat.Prime"],
    ["premises", "{root}", "--goal", "a * b = b * a", "--k", "3"],
])
def test_a_query_never_imports_torch_sentence_transformers_or_prefect(root, argv):
    run = _cli(*[a.format(root=root) for a in argv])
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip()
    heavy = sorted(m for m in _imported(run.stderr) if m.split(".")[0] in HEAVY)
    assert heavy == [], heavy
    if argv[0] == "search":  # what only a build or the premise ranker needs (0.2 s of a search's CPU)
        assert not {"bm25s", "scipy.sparse"} & _imported(run.stderr)


@pytest.fixture(scope="module")
def server(root):
    """The sample release as `mathindex serve` opens it: every channel open before the first query."""
    from mathindex.serve.release import ServedRelease

    opened = ServedRelease(_release(root), warm=False, cache_size=0)
    yield opened
    opened.close()


# one query of each kind (search/kinds.py): prose, formula (TeX and bare), Lean (a name, backticks,
# Loogle syntax, a dotted constant in prose), an identifier (a tag, a nickname) and nonsense
KIND_QUERIES = ["lattice join meet", "$\\sum_{d \\mid n} \\varphi(d) = n$", "a + b = b + a", "Nat.Prime",
                "`Nat.Prime.two_le`", "⊢ _ + _ = _ + _", "primes and Nat.Prime.two_le", "0BCD",
                "fundamental groupoid", "zxqv florbish wumpus"]


@pytest.mark.parametrize("query", KIND_QUERIES)
def test_search_json_is_the_servers_answer(root, server, query, capsys):
    """The CLI opens each channel only when its query runs it (`lazy`); its answer is the one of the
    server, which opened every channel first."""
    assert main(["search", str(root), query, "--json", "--k", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"query", "match", "notice", "hits", "unavailable"} and out["query"] == query
    for i, h in enumerate(out["hits"], 1):
        assert list(h) == ["rank", "name", "score", "channels", "kind", "title", "file", "line", "also"] and h["rank"] == i
    served = server.search(query, 5)
    assert [(h["name"], h["score"], h["channels"]) for h in out["hits"]] == [(h.name, h.score, h.channels) for h in served.hits]
    assert [[m["name"] for m in h["also"]] for h in out["hits"]] == [[m.name for m in h.also] for h in served.hits]
    assert (out["match"], out["notice"], out["unavailable"]) == (served.match, served.notice, served.unavailable)


def test_a_lazy_engine_opens_only_the_channels_a_query_runs(root):
    from mathindex.search.engine import SearchEngine

    engine = SearchEngine(_release(root), queries_only=True, preload=False, lazy=True)
    assert engine.lexical is None and engine.formal is None  # nothing opened yet
    engine.search("lattice join meet", 3)
    assert engine.lexical is not None and engine.vector is not None and engine.informal is not None
    assert engine.formula is None and engine.formal is None  # a prose query runs neither
    engine.search("Nat.Prime", 3)
    assert engine.formal is not None
    assert engine.channel("formula") is not None and engine.formula is not None  # asked by name: opened
    first = SearchEngine(_release(root), queries_only=True, preload=False, lazy=True)
    assert first.channel("informal") is not None and first.vector is not None  # the channel its open reads first


def test_premises_json_keeps_its_shape(root, capsys):
    assert main(["premises", str(root), "--goal", "a * b = b * a", "--json", "--k", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["goal", "context", "file", "constants", "fallback", "notes", "premises"]
    assert len(out["premises"]) == 3
    assert all(list(p) == ["rank", "name", "score", "signals", "kind", "title", "file", "line"] for p in out["premises"])


def test_batch_mode_answers_every_line_and_reports_bad_ones(root, tmp_path, capsys):
    lines = [
        json.dumps({"query": "lattice join meet", "k": 3}),
        "not json",
        "",  # blank: skipped
        json.dumps({"query": "Nat.Prime", "mode": "formal", "k": 2}),
        json.dumps({"query": "lattice", "k": 100_000}),
        json.dumps({"query": "Real.sqr", "mode": "formal"}),
        json.dumps({"query": "lattice", "mode": "sideways"}),
        json.dumps(["lattice"]),
        json.dumps({"query": "a" * 5000}),
        json.dumps({"query": "sum of totient over divisors"}),
    ]
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes("\n".join(lines).encode() + b"\n" + b'{"query": "\xff"}\n')
    assert main(["search", str(root), "--queries", str(queries)]) == 2  # some lines were bad
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 4, 5, 6, 7, 8, 9, 10, 11]
    by_line = {r["line"]: r for r in rows}
    good = by_line[1]
    assert good["mode"] == "fused" and good["k"] == 3 and len(good["hits"]) == 3 and "error" not in good
    assert main(["search", str(root), "lattice join meet", "--json", "--k", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"] == good["hits"]  # the single query's answer
    assert by_line[4]["mode"] == "formal" and by_line[4]["count"] >= 1 and len(by_line[4]["hits"]) == 2
    assert by_line[10]["hits"] and by_line[10]["k"] == 10
    says = {2: "line is not JSON", 5: "k must be between 1 and 100", 6: "unknown constant Real.sqr",
            7: '"mode" must be one of fused, formal', 8: 'string "query"', 9: "query is longer than 4096 bytes",
            11: "line is not valid UTF-8"}
    for n, text in says.items():
        assert set(by_line[n]) <= {"line", "query", "error"} and text in by_line[n]["error"], (n, by_line[n])

    ok = tmp_path / "ok.jsonl"
    ok.write_text(json.dumps({"query": "lattice"}) + "\n" + json.dumps({"query": "Nat.Prime", "mode": "formal"}) + "\n")
    assert main(["search", str(root), "--queries", str(ok), "--k", "2"]) == 0
    assert [len(json.loads(r)["hits"]) for r in capsys.readouterr().out.splitlines()] == [2, 2]


def test_batch_mode_usage(root, tmp_path, capsys):
    assert main(["search", str(root), "lattice", "--queries", str(tmp_path / "q.jsonl")]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["search", str(root)]) == 2
    assert "give a QUERY or --queries FILE" in capsys.readouterr().err
    assert main(["search", str(root), "--queries", str(tmp_path / "missing.jsonl")]) == 2
    assert "--queries" in capsys.readouterr().err
