"""Release notes: a suite whose file changed since the baseline release is called out, never
silently read as a search regression."""

from __future__ import annotations

from mathindex.evaluation.gate import gate
from mathindex.evaluation.notes import render_notes, suite_changes
from mathindex.schemas.manifest import SuiteSpec
from mathindex.sources import pin_suite

A, B = "a" * 64, "b" * 64


def test_suite_changes_compares_pins_with_the_baseline_release():
    now = [{"name": "sample", "path": "s.json", "sha256": B}, {"name": "same", "path": "t.json", "sha256": A},
           {"name": "new", "path": "n.json", "sha256": A}, {"name": "old", "path": "o.json", "sha256": A}]
    before = [{"name": "sample", "path": "s.json", "sha256": A}, {"name": "same", "path": "t.json", "sha256": A},
              {"name": "old", "path": "o.json"}]  # a release from before suites were pinned
    assert suite_changes(now, before) == {
        "sample": f"changed (sha256 {A[:12]}… -> {B[:12]}…)",
        "old": "the baseline release did not pin it, so whether it changed is unknown",
    }
    assert suite_changes(now, None) == {}  # gated against bench/baselines: nothing to compare


def test_notes_call_out_a_changed_suite_and_list_the_pins():
    report = gate({"sample/ndcg@10": 50.0}, {"sample/ndcg@10": 70.0})
    suites = {"sample": {"queries": 2, "metrics": {"ndcg@10": 50.0}, "by_style": {}}}
    pins = [{"name": "sample", "path": "s.json", "sha256": B}]
    args = ("R1", report, "release R0", suites, [], {}, {}, {}, {})
    changed = render_notes(*args, suite_pins=pins, changed_suites=suite_changes(pins, [{"name": "sample", "path": "s.json", "sha256": A}]))
    assert "**Suites changed since the baseline release**" in changed
    assert f"- `sample`: changed (sha256 {A[:12]}… -> {B[:12]}…)" in changed
    assert "## Suite `sample`: 2 queries, by query style (the suite changed since the baseline release)" in changed
    assert f"| sample | {B} |" in changed
    unchanged = render_notes(*args, suite_pins=pins, changed_suites={})
    assert "changed since the baseline" not in unchanged


def test_pin_suite_hashes_the_file(tmp_path):
    import hashlib

    f = tmp_path / "q.json"
    f.write_text('{"queries": []}')
    pin = pin_suite(SuiteSpec(name="q", path=str(f)))
    assert pin.sha256 == hashlib.sha256(f.read_bytes()).hexdigest()
    assert pin_suite(SuiteSpec(name="q", path=str(tmp_path / "missing.json"))).sha256 is None
