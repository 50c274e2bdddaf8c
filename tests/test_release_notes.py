"""Release notes: what changed against the baseline release (inputs, metrics per style, per-query
ranks, row counts), a changed suite called out rather than read as a search regression, indexes
as tables, and the plots (matplotlib, deterministic SVG and PNG)."""

from __future__ import annotations

import json
import re

import pytest

from mathindex.evaluation.gate import gate
from mathindex.evaluation.notes import Baseline, input_changes, rank_moves, render_notes, suite_changes
from mathindex.schemas.manifest import Manifest, SuitePin, SuiteSpec
from mathindex.sources import pin_suite
from tests.manifests import manifest_json

A, B = "a" * 64, "b" * 64


def manifest(release_id="R1", suites=(), corpora=None, row_counts=None, revision="r" * 64, code="0.1.0",
             baseline="release R0", model=None) -> Manifest:
    """A manifest with what the notes read."""
    return Manifest.from_json(manifest_json(
        release_id, code_version=code,
        corpora=corpora if corpora is not None else [{"name": "lean", "kind": "lean", "path": "p", "sha256": A, "files": 3, "commit": None}],
        embedder={"name": "minilm", "revision": revision, "dim": 384, "normalised": True},
        vector_index={"model": model}, stages={"extract": "3 declarations"},
        row_counts=row_counts if row_counts is not None else {"declarations": 3},
        bench={"headline": {}, "baseline": baseline, "suites": list(suites)},
    ))  # fmt: skip


def notes(m, before=None, results=None, suites=None, report=None, indexes=None, plots=()):
    report = report or gate({"sample/ndcg@10": 50.0}, {"sample/ndcg@10": 50.0})
    suites = suites if suites is not None else {"sample": {"queries": 2, "metrics": {"ndcg@10": 50.0}, "by_style": {}}}
    return render_notes(m, suites, report, indexes=indexes or {}, errors_by_stage={}, results=results, before=before, plots=plots)


def test_suite_changes_compares_pins_with_the_baseline_release():
    now = [SuitePin(name="sample", path="s.json", sha256=B), SuitePin(name="same", path="t.json", sha256=A),
           SuitePin(name="new", path="n.json", sha256=A), SuitePin(name="old", path="o.json", sha256=A)]
    before = [SuitePin(name="sample", path="s.json", sha256=A), SuitePin(name="same", path="t.json", sha256=A),
              SuitePin.model_validate({"name": "old", "path": "o.json"})]  # a release from before suites were pinned
    assert suite_changes(now, before) == {
        "sample": f"changed (sha256 {A[:12]}… -> {B[:12]}…)",
        "old": "the baseline release did not pin it, so whether it changed is unknown",
    }
    assert suite_changes(now, None) == {}  # gated against bench/baselines: nothing to compare


def test_notes_call_out_a_changed_suite_and_list_the_pins():
    pins = [{"name": "sample", "path": "s.json", "sha256": B}]
    before = Baseline("R0", manifest("R0", suites=[{"name": "sample", "path": "s.json", "sha256": A}]))
    changed = notes(manifest(suites=pins), before=before)
    assert "**Suites changed since the baseline release**" in changed
    assert f"- `sample`: changed (sha256 {A[:12]}… -> {B[:12]}…)" in changed
    assert "## Suite `sample`: 2 queries, by query style (the suite changed since the baseline release)" in changed
    assert f"| sample | {B} |" in changed
    unchanged = notes(manifest(suites=pins), before=Baseline("R0", manifest("R0", suites=pins)))
    assert "changed since the baseline" not in unchanged
    assert "Nothing among the inputs: the corpus pins, suites, model and code version are those of release R0." in unchanged
    assert "No baseline release: the first release on this root, gated against the committed bench/baselines" \
        in notes(manifest(suites=pins))
    first = notes(manifest(suites=pins, baseline="committed baseline bench/baselines/sample.json (release R0)"))
    assert ("No baseline release: the first release on this root, gated against the committed baseline "
            "bench/baselines/sample.json (release R0); no inputs to compare.") in first
    assert "baseline: committed baseline bench/baselines/sample.json (release R0))." in first


def test_input_changes_name_each_changed_input():
    lean = {"name": "lean", "kind": "lean", "path": "p", "sha256": A, "files": 3, "commit": None}
    tex = {"name": "tex", "kind": "latex", "path": "q", "sha256": A, "files": 1, "commit": None}
    old = manifest("R0", corpora=[lean, tex], suites=[{"name": "gone", "path": "g", "sha256": A}, {"name": "s", "path": "s", "sha256": A}])
    new = manifest(corpora=[lean | {"sha256": B, "files": 4}, {**tex, "name": "wiki"}], revision="q" * 64, code="0.2.0",
                   suites=[{"name": "s", "path": "s", "sha256": B}, {"name": "fresh", "path": "f", "sha256": A}])
    assert input_changes(new, old) == [
        f"corpus `lean`: sha256 {A[:12]}… -> {B[:12]}…, files 3 -> 4",
        "corpus `tex`: dropped",
        "corpus `wiki`: added",
        "suite `fresh`: added",
        "suite `gone`: dropped",
        f"suite `s`: changed (sha256 {A[:12]}… -> {B[:12]}…)",
        f"embedding model: minilm@{'r' * 12} (the bundled model) -> minilm@{'q' * 12} (the bundled model)",
        "code version: 0.1.0 -> 0.2.0",
    ]
    assert input_changes(old, old) == []
    moved = manifest(model="models/minilm@rrrr")  # same embedder, installed under the root
    assert input_changes(moved, manifest()) == [f"embedding model: minilm@{'r' * 12} (the bundled model) -> minilm@{'r' * 12} (models/minilm@rrrr)"]


def _row(qid, rank, suite="s", style="natural"):
    return {"suite": suite, "query_id": qid, "style": style, "query": f"query {qid}", "rank": rank}


def test_rank_moves_sorts_by_the_change_of_the_reciprocal_rank():
    before = [_row(f"q{i:02d}", 1) for i in range(12)] + [_row(f"r{i:02d}", None) for i in range(12)]
    before += [_row("same", 3), _row("gone", 1)]
    after = [_row(f"q{i:02d}", None if i < 2 else i + 1) for i in range(12)]  # q00, q01 fell out of the top k
    after += [_row(f"r{i:02d}", 10 - i if i < 10 else None) for i in range(12)] + [_row("same", 3), _row("new", 1)]
    m = rank_moves(after, before)
    assert [r["query_id"] for r in m["fell"]] == ["q00", "q01", "q11", "q10", "q09", "q08", "q07", "q06", "q05", "q04"]
    assert m["fell"][0] == {"suite": "s", "query_id": "q00", "style": "natural", "query": "query q00",
                            "rank_before": 1, "rank_after": None, "change": -1.0}
    assert m["fell"][2]["change"] == round(1 / 12 - 1, 6)
    assert [r["query_id"] for r in m["rose"]] == ["r09", "r08", "r07", "r06", "r05", "r04", "r03", "r02", "r01", "r00"]
    assert (m["fell_total"], m["rose_total"], m["compared"], m["new"], m["gone"]) == (12, 10, 25, 1, 1)
    assert rank_moves(after, before, n=3)["fell"] == m["fell"][:3]


def test_notes_show_ranks_before_and_after_row_count_deltas_and_input_changes():
    before = Baseline("R0", manifest("R0", row_counts={"declarations": 3, "nodes": 10, "old_table": 1}),
                      results=[_row("a", 1), _row("b", None), _row("c", 2), _row("d", 4)])
    now = manifest(row_counts={"declarations": 5, "nodes": 10}, code="0.2.0")
    text = notes(now, before=before, results=[_row("a", 3), _row("b", 2), _row("c", 2), _row("d|x", 1)])
    assert "Against release R0:\n\n- code version: 0.1.0 -> 0.2.0" in text
    assert "3 queries in both: 1 fell, 1 rose, 1 kept their rank; 1 new, 1 gone." in text
    assert "### The 1 that fell most" in text and "### The 1 that rose most" in text
    assert "| s | a | natural | query a | 1 | 3 | -0.667 |" in text
    assert "| s | b | natural | query b | — | 2 | +0.500 |" in text
    assert "| `declarations` | 3 | 5 | +2 |" in text and "| `nodes` | 10 | 10 | +0 |" in text
    assert "| `old_table` | 1 | — | — |" in text
    fell = text[text.index("### The 1 that fell most"):text.index("### The 1 that rose most")]
    assert "| s | b |" not in fell  # a rise is not listed among the falls
    same = notes(now, before=Baseline("R0", manifest("R0"), results=[_row("a", 1)]), results=[_row("a", 1)])
    assert "1 queries in both: 0 fell, 0 rose, 1 kept their rank; 0 new, 0 gone.\n\n### None fell\n\n### None rose\n" in same
    no_results = notes(now, before=Baseline("R0", manifest("R0")), results=[_row("a", 1)])
    assert "Release R0 holds no per-query results (bench_results): no ranks to compare." in no_results
    assert "| table | rows |" in notes(now) and "| `declarations` | 5 |" in notes(now)


def test_query_text_in_a_table_is_one_escaped_line():
    before = Baseline("R0", manifest("R0"), results=[_row("a", 1)])
    row = _row("a", 2) | {"query": "a | b\nc " + "x" * 200}
    line = next(x for x in notes(manifest(), before=before, results=[row]).splitlines() if x.startswith("| s | a |"))
    assert "a \\| b c xxx" in line and "…" in line and len(line) < 200


def test_index_section_is_a_table_per_index_not_a_dict_dump():
    indexes = {"vector": {"M": 32, "embedding": {"rows": 455, "index_reused": True}, "facets": ["a", "b"], "model": None,
                          "recall_at_10": 0.99736, "recall_by_ef_search": {"16": 0.99736}},
               "formula": {"weights": {"bm25": 1.0, "canonical": 10.0}, "postings": 3528}}  # fmt: skip
    text = notes(manifest(), indexes=indexes)
    section = text[text.index("## Indexes"):]
    assert "{" not in section and "=" not in section
    assert section.index("### formula") < section.index("### vector")
    for row in ("| property | value |", "| M | 32 |", "| embedding.rows | 455 |", "| embedding.index_reused | yes |",
                "| facets | a, b |", "| model | — |", "| recall_at_10 | 0.9974 |", "| recall_by_ef_search.16 | 0.9974 |",
                "| weights.bm25 | 1 |", "| weights.canonical | 10 |", "| postings | 3,528 |"):  # fmt: skip
        assert row in section, row


SUITES = {"sample": {"queries": 4, "metrics": {"ndcg@10": 57.9, "recall@10": 80.0},
                     "by_style": {"lean": {"queries": 2, "ndcg@10": 40.0, "recall@10": 70.0},
                                  "natural": {"queries": 2, "ndcg@10": 75.8, "recall@10": 90.0}}}}  # fmt: skip
BEFORE = {"sample": {"queries": 4, "metrics": {"ndcg@10": 61.0, "recall@10": 80.0},
                     "by_style": {"lean": {"queries": 2, "ndcg@10": 52.0, "recall@10": 70.0}}}}  # fmt: skip


def _plots(directory, history):
    from mathindex.evaluation.plot import write_plots

    directory.mkdir()
    report = gate({"sample/ndcg@10": 57.9, "sample/recall@10": 80.0}, {"sample/ndcg@10": 61.0, "sample/recall@10": 80.0})
    return write_plots(directory, history, SUITES, BEFORE, report)


def test_plots_are_matplotlib_svg_and_png_and_the_same_bytes_in_every_build(tmp_path):
    history = [("20261101T000000Z", {"sample/ndcg@10": 60.0}), ("this release", {"sample/ndcg@10": 57.9, "sample/recall@10": 80.0})]
    assert _plots(tmp_path / "a", history) == ["history", "styles"]
    _plots(tmp_path / "b", history)
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == ["history.png", "history.svg", "styles.png", "styles.svg"]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    svg = (tmp_path / "a" / "styles.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "Matplotlib" in svg and "<dc:date>" not in svg
    assert all(v in svg for v in (">57.90<", ">61.00<", ">75.80<", ">sample: ndcg@10<", ">natural<"))
    assert svg.count("fill: #c62828") == 1  # ndcg@10 of all queries failed the gate; recall did not
    png = (tmp_path / "a" / "styles.png").read_bytes()
    assert png.startswith(b"\x89PNG") and b"Software" not in png and b"matplotlib" not in png.lower()
    hist = (tmp_path / "a" / "history.svg").read_text()
    assert ">20261101T000000Z<" in hist and ">this release<" in hist and ">sample/recall@10<" in hist
    assert "last 1 published releases and this one" in hist
    other = [("this release", {"sample/ndcg@10": 58.0, "sample/recall@10": 80.0})]
    _plots(tmp_path / "c", other)
    assert (tmp_path / "c" / "history.svg").read_bytes() != (tmp_path / "a" / "history.svg").read_bytes()


def test_the_notes_link_the_plots_that_were_written():
    text = notes(manifest(), plots=["history", "styles"])
    assert "](bench/history.svg)" in text and "](bench/styles.png)" in text
    assert "](bench/history" not in notes(manifest(), plots=["styles"]) and "](bench/" not in notes(manifest())


def _release(root, rid, published, headline=None):
    path = root / "releases" / rid
    (path / "bench").mkdir(parents=True)
    (path / "manifest.json").write_text(json.dumps(manifest_json(rid, published=published)))
    (path / "bench" / "metrics.json").write_text(json.dumps({"headline": headline or {"s/m": float(len(rid))}}))
    return path


def test_history_reads_the_last_published_releases_up_to_published_json(tmp_path):
    from mathindex.flows.finish import headline_history
    from mathindex.store.releases import publish, published_releases

    assert published_releases(tmp_path, 10) == [] and headline_history(tmp_path, {"s/m": 1.0}) == [("this release", {"s/m": 1.0})]
    ids = [f"202611{d:02d}T000000Z-abc" for d in range(1, 8)]
    flags = [True, False, True, True, True, True, True]  # the 2nd failed its gate; the 7th was withdrawn below
    for i, (rid, flag) in enumerate(zip(ids, flags)):
        _release(tmp_path, rid, flag, {"s/m": float(i), "gone/m": 1.0})
    (tmp_path / "releases" / ".staging-x").mkdir()
    publish(tmp_path, ids[5])  # pointed back at the 6th: the 7th is no longer published
    assert [p.name for p in published_releases(tmp_path, 10)] == [ids[0], ids[2], ids[3], ids[4], ids[5]]
    assert [p.name for p in published_releases(tmp_path, 2)] == [ids[4], ids[5]]
    history = headline_history(tmp_path, {"s/m": 9.0}, limit=3)
    assert history == [("20261104T000000Z", {"s/m": 3.0}), ("20261105T000000Z", {"s/m": 4.0}),
                       ("20261106T000000Z", {"s/m": 5.0}), ("this release", {"s/m": 9.0})]  # fmt: skip


@pytest.mark.parametrize("missing", ["manifest", "metrics"])
def test_a_baseline_without_metrics_or_manifest_is_read_as_far_as_it_goes(tmp_path, missing):
    from mathindex.flows.finish import read_baseline

    path = _release(tmp_path, "R0", True)
    (path / ("manifest.json" if missing == "manifest" else "bench/metrics.json")).unlink()
    baseline = read_baseline(path)
    if missing == "manifest":
        assert baseline is None  # not a complete release
    else:
        assert baseline.release_id == "R0" and baseline.suites is None and baseline.results is None
    assert read_baseline(None) is None


def test_pin_suite_hashes_the_file(tmp_path):
    import hashlib

    f = tmp_path / "q.json"
    f.write_text('{"queries": []}')
    pin = pin_suite(SuiteSpec(name="q", path=str(f)))
    assert pin.sha256 == hashlib.sha256(f.read_bytes()).hexdigest()
    assert pin_suite(SuiteSpec(name="q", path=str(tmp_path / "missing.json"))).sha256 is None


def test_no_hand_written_svg_is_left():
    from pathlib import Path

    import mathindex.evaluation.plot as plot

    source = Path(plot.__file__).read_text()
    assert not re.search(r"<(svg|rect|text)\b", source)
