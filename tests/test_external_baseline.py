"""The external baseline row: a suite's file of other tools' published figures (schema-checked, a
bad file one line), pinned in the manifest, shown in the notes per style beside ours with a line
where theirs is higher, and never read by the gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mathindex.errors import SourceError
from mathindex.evaluation.bench import run_suite, summarise_results
from mathindex.evaluation.external import external_rows
from mathindex.evaluation.gate import gate_metrics
from mathindex.evaluation.notes import input_changes, render_notes
from mathindex.evaluation.suites import MATHLIBQR_STYLES, Query, Suite
from mathindex.schemas.manifest import ExternalFigure, Manifest, SuitePin, SuiteSpec
from mathindex.sources import DEFAULT_SOURCES, PACKAGE_ROOT, load_sources, load_suite_specs, pin_suite
from tests.manifests import manifest_json

FIXTURE = "FixtureSearch (made up, a test fixture)"
SUMMARY = {"queries": 6, "metrics": {"ndcg@10": 60.0, "recall@10": 70.0},
           "by_style": {"latex": {"queries": 3, "ndcg@10": 40.0, "recall@10": 50.0},
                        "natural": {"queries": 3, "ndcg@10": 80.0, "recall@10": 90.0}}}  # fmt: skip


def fig(system="Other", metric="ndcg@10", value=50.0, url="https://example.org/paper", note="Table 1", **kw) -> dict:
    return {"system": system, "metric": metric, "value": value, "url": url, "note": note, **kw}


def external_file(tmp_path: Path, content: object, name="ext.yaml") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else yaml.safe_dump(content), encoding="utf-8")
    return path


def sources_with(tmp_path: Path, external: str) -> Path:
    """A sources file over the sample corpus whose one suite names `external`."""
    data = PACKAGE_ROOT / "data"
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump({
        "sources": [{"name": "lean", "kind": "lean", "path": str(data / "sample" / "lean")}],
        "suites": [{"name": "sample", "path": str(data / "sample" / "queries.json"), "external": external}],
    }), encoding="utf-8")  # fmt: skip
    return path


def manifest_with(figures: dict | None) -> Manifest:
    pin = {"name": "sample", "path": "s.json", "sha256": "a" * 64}
    if figures is not None:
        pin["external"] = {"path": "ext.yaml", "sha256": "b" * 64, "figures": figures}
    return Manifest.from_json(manifest_json(bench={"headline": {}, "baseline": "bench/baselines", "suites": [pin]}))


def notes_of(manifest: Manifest, suites: dict, baseline: dict) -> tuple[str, object]:
    metrics = {"suites": suites, "headline": {f"{n}/{m}": v for n, s in suites.items() for m, v in s["metrics"].items()}}
    report = gate_metrics(metrics, baseline)
    return render_notes(manifest, suites, report, indexes={}, errors_by_stage={}), report


def test_rows_take_the_best_figure_per_style_and_metric_and_say_what_is_not_compared():
    figures = {
        "latex": [ExternalFigure(**fig("A", value=55.0)), ExternalFigure(**fig("B", value=45.0)),
                  ExternalFigure(**fig("B", metric="recall@10", value=20.0))],
        "natural": [ExternalFigure(**fig("A", value=70.0)), ExternalFigure(**fig("C", metric="mrr@10", value=99.0))],
        "slogan": [ExternalFigure(**fig("A", value=10.0))],
        "all": [ExternalFigure(**fig("D", value=61.5))],
        "fair": [ExternalFigure(**fig("D", value=61.5))],
    }  # fmt: skip
    rows, skipped = external_rows(SUMMARY, figures)
    assert [(r.style, r.metric, r.ours, r.best.system, r.best.value, r.difference, [o.system for o in r.others]) for r in rows] == [
        ("all", "ndcg@10", 60.0, "D", 61.5, -1.5, []),
        ("latex", "ndcg@10", 40.0, "A", 55.0, -15.0, ["B"]),
        ("latex", "recall@10", 50.0, "B", 20.0, 30.0, []),
        ("natural", "ndcg@10", 80.0, "A", 70.0, 10.0, []),
    ]  # fmt: skip
    assert skipped == [
        "natural: mrr@10 is not a metric this suite computes; C not compared",
        "fair subset: not a query style of this suite's results; 1 published figure(s) not compared",
        "slogan: not a query style of this suite's results; 1 published figure(s) not compared",
    ]


def test_notes_show_a_row_per_style_and_a_line_where_the_other_tool_does_better():
    figures = {"latex": [fig("Tool <b>X</b> | [y]", value=55.0, url="https://example.org/x")],
               "natural": [fig("Tool Z", value=70.0, url="https://example.org/z")]}  # fmt: skip
    notes, report = notes_of(manifest_with(figures), {"sample": SUMMARY}, {"sample/ndcg@10": 60.0})
    assert "### Beside other tools (published figures; reported, not gated)" in notes
    assert ("| latex | 3 | ndcg@10 | 40.00 | [Tool &lt;b&gt;X&lt;/b&gt; \\| \\[y\\]](https://example.org/x) | 55.00 | -15.00 | — |"
            in notes)  # fmt: skip
    assert "| natural | 3 | ndcg@10 | 80.00 | [Tool Z](https://example.org/z) | 70.00 | +10.00 | — |" in notes
    assert ("- On latex, Tool &lt;b&gt;X&lt;/b&gt; \\| \\[y\\] does better (55.00 vs our 40.00 ndcg@10): <https://example.org/x>"
            in notes)  # fmt: skip
    assert "Tool Z does better" not in notes and "<b>" not in notes
    assert "- latex, ndcg@10, Tool &lt;b&gt;X&lt;/b&gt; \\| \\[y\\] 55.00: Table 1; <https://example.org/x>" in notes
    assert report.passed
    plain, _ = notes_of(manifest_with(None), {"sample": SUMMARY}, {"sample/ndcg@10": 60.0})
    assert "Beside other tools" not in plain  # a suite without external figures: no section


def test_the_gate_ignores_a_large_external_gap():
    """Theirs 100 points above ours on every style: the gate reads only the headline metrics, so it
    passes (and fails as before on a real drop); the notes report the gap all the same."""
    figures = {style: [fig("Far ahead", value=100.0), fig("Far ahead", metric="recall@10", value=100.0)]
               for style in ("all", "latex", "natural")}  # fmt: skip
    weak = {"queries": 2, "metrics": {"ndcg@10": 0.0, "recall@10": 0.0},
            "by_style": {"latex": {"queries": 1, "ndcg@10": 0.0, "recall@10": 0.0},
                         "natural": {"queries": 1, "ndcg@10": 0.0, "recall@10": 0.0}}}  # fmt: skip
    baseline = {"sample/ndcg@10": 0.0, "sample/recall@10": 0.0}
    notes, report = notes_of(manifest_with(figures), {"sample": weak}, baseline)
    assert report.passed and report.problems == [] and all(c.ok for c in report.checks)
    assert [c.metric for c in report.checks] == ["sample/ndcg@10", "sample/recall@10"]
    assert "Gate: **PASSED**" in notes
    assert notes.count("Far ahead does better (100.00 vs our 0.00") == 6
    _, dropped = notes_of(manifest_with(figures), {"sample": weak}, {"sample/ndcg@10": 10.0})
    assert not dropped.passed  # the headline still gates


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read it"),
        ("figures: [unclosed", "not YAML"),
        ({"figures": {}}, "figures: Dictionary should have at least 1 item"),
        ({"figures": {"latex": []}}, "style 'latex' lists no figure"),
        ({"figures": {"bad style!": [fig()]}}, "style 'bad style!' is not a query style name"),
        ({"figures": {"latex": [fig(value=150)]}}, "figures.latex.0.value: Input should be less than or equal to 100"),
        ({"figures": {"latex": [fig(metric="nDCG@10")]}}, "figures.latex.0.metric: String should match pattern"),
        ({"figures": {"latex": [fig(url="javascript:alert(1)")]}}, "figures.latex.0.url: String should match pattern"),
        ({"figures": {"latex": [fig(url="https://x.org/a b")]}}, "figures.latex.0.url: String should match pattern"),
        ({"figures": {"latex": [fig(source="?")]}}, "figures.latex.0.source: Extra inputs are not permitted"),
        ({"figures": {"latex": [{"system": "A", "metric": "ndcg@10", "value": 1}]}}, "figures.latex.0.url: Field required"),
        ({"suite": "mathlibqr-dev", "figures": {"latex": [fig()]}}, "the file is about suite 'mathlibqr-dev', not 'sample'"),
    ],
)
def test_a_bad_external_file_is_one_line_naming_the_suite_and_the_file(tmp_path, content, says):
    external = "missing.yaml" if content is None else external_file(tmp_path, content).name
    with pytest.raises(SourceError) as err:
        load_sources(sources_with(tmp_path, external))
    message = str(err.value)
    assert "\n" not in message and says in message, message
    assert message.startswith(f"suite 'sample': external figures {tmp_path / external}: ")


def test_the_pin_records_the_figures_and_an_unset_external_is_not_written(tmp_path):
    path = external_file(tmp_path, {"suite": "sample", "figures": {"latex": [fig(via="https://example.org/quote")]}})
    _, [spec] = load_sources(sources_with(tmp_path, path.name))
    assert spec.external == str(path)
    pin = pin_suite(spec)
    assert pin.external.path == str(path) and len(pin.external.sha256) == 64
    assert pin.external.figures["latex"][0].via == "https://example.org/quote"
    assert SuitePin.model_validate(json.loads(json.dumps(pin.model_dump()))) == pin
    bare = pin_suite(SuiteSpec(name="s", path=spec.path))
    assert bare.external is None and "external" not in bare.model_dump()


def test_scores_from_bench_results_equal_those_of_the_run():
    """`summarise_results` (bench/external_row.py scores a release's bench_results again) gives the
    summary `run_suite` gave, the fair subset included."""
    queries = (Query("q1", "latex", "a", frozenset({"A"})), Query("q2", "latex", "b", frozenset({"B"}), fair=False),
               Query("q3", "natural", "c", frozenset({"C", "D"})))  # fmt: skip
    suite = Suite(name="toy", k=10, headline=("ndcg@10", "recall@10"), queries=queries)
    ranked = {"a": ["X", "A"], "b": ["B"], "c": ["D", "Y", "Z", "C"]}
    summary, rows = run_suite(lambda q, k: ranked[q][:k], suite)
    assert "fair" in summary and summarise_results(rows + [{**rows[0], "suite": "other"}], suite) == summary


def test_the_sample_carries_a_test_fixture_whose_notes_show_the_row():
    _, [spec] = load_sources(DEFAULT_SOURCES)
    text = Path(spec.external).read_text(encoding="utf-8")
    assert "TEST FIXTURE" in text and "made-up" in text
    figures = pin_suite(spec).external.figures
    assert {f.system for fs in figures.values() for f in fs} == {FIXTURE}
    ours = json.loads((PACKAGE_ROOT / "bench" / "baselines" / "sample.json").read_text())["headline"]
    summary = {"queries": 67, "metrics": {k.split("/")[1]: v for k, v in ours.items()},
               "by_style": {s: {"queries": 10, "ndcg@10": 80.0, "recall@10": 90.0, "mrr@10": 85.0}
                            for s in ("identifier", "latex", "lean", "natural")}}  # fmt: skip
    manifest = manifest_with({k: [f.model_dump() for f in v] for k, v in figures.items()})
    notes, report = notes_of(manifest, {"sample": summary}, ours)
    assert report.passed
    assert f"- On latex, {FIXTURE} does better (95.00 vs our 80.00 ndcg@10): <https://example.org/fixture-search>" in notes
    assert f"On natural, {FIXTURE}" not in notes
    assert f"- lean: precision@1 is not a metric this suite computes; {FIXTURE} not compared" in notes


def test_the_mathlibqr_file_names_only_its_styles_and_our_metrics():
    """The committed MathlibQR figures (bench/suites/mathlibqr-dev.external.yaml, named by the
    benchmark sources file): every key a MathlibQR style or the whole suite, every metric one the
    suite computes, every figure with its source."""
    [spec] = load_suite_specs(PACKAGE_ROOT / "bench" / "sources" / "mathlib.yaml")
    assert Path(spec.external) == PACKAGE_ROOT / "bench" / "suites" / "mathlibqr-dev.external.yaml"
    figures = pin_suite(spec).external.figures
    assert set(figures) <= {*MATHLIBQR_STYLES, "all", "fair"}
    every = [f for fs in figures.values() for f in fs]
    assert {f.metric for f in every} <= {"ndcg@10", "recall@10"}
    assert {f.system.split(" (")[0].removesuffix(" v1") for f in every} == {"LeanSearch v2", "Lean Finder", "LeanExplore"}
    assert all(f.url.startswith("https://") and f.note for f in every)


def test_the_notes_say_when_a_suite_s_external_figures_changed_since_the_baseline_release():
    def pins(sha: str | None) -> list[dict]:
        pin = {"name": "sample", "path": "s.json", "sha256": "a" * 64}
        return [pin | {"external": {"path": "e.yaml", "sha256": sha, "figures": {"latex": [fig()]}}} if sha else pin]

    def changes(now: str | None, then: str | None) -> list[str]:
        manifests = [Manifest.from_json(manifest_json(bench={"headline": {}, "baseline": "b", "suites": pins(x)}))
                     for x in (now, then)]  # fmt: skip
        return input_changes(*manifests)

    assert changes("c" * 64, None) == ["suite `sample`: external figures added"]
    assert changes(None, "c" * 64) == ["suite `sample`: external figures dropped"]
    assert changes("d" * 64, "c" * 64) == [f"suite `sample`: external figures changed (sha256 {'c' * 12}… -> {'d' * 12}…)"]
    assert changes("c" * 64, "c" * 64) == [] == changes(None, None)
