"""The gate: a pure function; 2.0 points down passes, 2.1 fails, missing metrics fail."""

import json

import pytest

from mathindex.cli import main
from mathindex.evaluation.gate import gate

BASE = {"sample/ndcg@10": 60.0, "sample/recall@10": 80.0}


def test_drop_of_two_points_passes():
    report = gate({"sample/ndcg@10": 58.0, "sample/recall@10": 80.0}, BASE)
    assert report.passed
    assert [c.delta for c in report.checks] == [-2.0, 0.0]


def test_drop_of_two_point_one_fails():
    report = gate({"sample/ndcg@10": 57.9, "sample/recall@10": 80.0}, BASE)
    assert not report.passed
    assert [c.metric for c in report.failures()] == ["sample/ndcg@10"]
    assert report.failures()[0].note == "fell 2.10 points"


def test_float_noise_at_exactly_two_points_passes():
    # 0.3 - 2.3 is -1.9999999999999998 in binary floating point; 62.3 - 60.3 similar
    assert gate({"m": 60.3}, {"m": 62.3}).passed
    assert not gate({"m": 60.19}, {"m": 62.3}).passed


def test_missing_or_nan_metric_is_a_failure_not_a_zero():
    assert not gate({"sample/ndcg@10": 70.0}, BASE).passed
    report = gate({"sample/ndcg@10": float("nan"), "sample/recall@10": 80.0}, BASE)
    assert report.failures()[0].note == "metric missing or failed to compute"


def test_suite_error_fails_and_new_metric_passes():
    assert not gate({"x/m": 1.0}, {}, errors={"x": "boom"}).passed
    report = gate({"old/m": 1.0, "new/m": 1.0}, {"old/m": 1.0})
    assert report.passed and report.checks[-1].metric == "new/m" and report.checks[-1].note == "new metric (no baseline)"


def test_improvement_passes():
    assert gate({"sample/ndcg@10": 90.0, "sample/recall@10": 99.0}, BASE).passed


@pytest.mark.parametrize("current,code", [(57.9, 3), (58.0, 0)])
def test_gate_cli_exit_codes(tmp_path, capsys, current, code):
    (tmp_path / "b.json").write_text(json.dumps({"headline": BASE}))
    (tmp_path / "c.json").write_text(json.dumps({"sample/ndcg@10": current, "sample/recall@10": 80.0}))
    assert main(["gate", "--baseline", str(tmp_path / "b.json"), "--current", str(tmp_path / "c.json")]) == code
    out = capsys.readouterr().out
    assert ("gate: FAILED" in out) == (code == 3)


def test_summary_names_each_failing_metric_and_its_drop():
    report = gate({"sample/ndcg@10": 73.45, "sample/recall@10": 80.0}, {"sample/ndcg@10": 88.3, "sample/recall@10": 80.0})
    assert report.summary() == "gate failed: sample/ndcg@10 fell 14.85 points (88.30 -> 73.45)"
    assert gate({"x/m": 1.0}, {"x/m": 1.0}).summary() == "gate passed"
    both = gate({"a/m": 50.0}, {"a/m": 60.0, "b/m": 1.0}, errors={"c": "boom"}).summary()
    assert both == "gate failed: c/*: suite failed: boom; a/m fell 10.00 points (60.00 -> 50.00); b/m: metric missing or failed to compute"


def test_artifact_keys_are_lowercase_letters_digits_and_dashes():
    from mathindex.flows.finish import artifact_key

    assert artifact_key("release-notes", "MathlibQR_dev", "sample") == "release-notes-mathlibqr-dev-sample"
    assert artifact_key("metrics", "q1a.lean--x ") == "metrics-q1a-lean-x"
