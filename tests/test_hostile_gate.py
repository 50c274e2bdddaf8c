"""Hostile input to the gate and the CLI (issue 16): the gate fails closed, and every error is one
line within its time bound.

- The gate refuses an empty baseline, and any headline value that is not a finite number in
  0..100 (Infinity, -Infinity, NaN, a string, null, a boolean, 150) in either file, with a one-line
  reason naming the metric; `mathindex gate` exits 3 on such values, 2 on a file it cannot read.
- A release with no benchmark suite is refused and not published, unless `--no-gate`, and then the
  notes and the manifest say it was not gated (release and reembed; `no_gate` for deployments).
- An error raised inside a flow prints one `error:` line, no Prefect traceback (the flow run's logs
  in the API keep it).
- An empty, blank or invalid UTF-8 search query is one line and exit 2 (the engine: no hits and a
  reason; the HTTP API: a 400).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mathindex.cli import main
from mathindex.evaluation.gate import gate

REPO = Path(__file__).resolve().parent.parent
BASE = {"s/ndcg@10": 60.0, "s/recall@10": 80.0}


def _one_line(text: str) -> str:
    text = text.strip()
    assert text and "\n" not in text and "Traceback" not in text, text
    return text


# -- the gate, a pure function ------------------------------------------------------------------


def test_an_empty_baseline_fails_the_gate():
    report = gate({"s/ndcg@10": 60.0}, {})
    assert not report.passed
    assert _one_line(report.summary()) == "gate failed: the baseline has no headline metrics: nothing to compare against"
    assert not gate({}, {}).passed


@pytest.mark.parametrize(("current", "baseline", "says"), [
    (math.inf, 60.0, "s/ndcg@10: current value inf is not a finite number in 0..100"),
    (-math.inf, 60.0, "s/ndcg@10: current value -inf is not a finite number in 0..100"),
    (150.0, 60.0, "s/ndcg@10: current value 150.0 is not a finite number in 0..100"),
    ("59", 60.0, "s/ndcg@10: current value '59' is not a finite number in 0..100"),
    (True, 60.0, "s/ndcg@10: current value True is not a finite number in 0..100"),
    (None, 60.0, "s/ndcg@10: metric missing or failed to compute"),
    (math.nan, 60.0, "s/ndcg@10: metric missing or failed to compute"),
    (60.0, -math.inf, "s/ndcg@10: baseline value -inf is not a finite number in 0..100"),
    (60.0, math.inf, "s/ndcg@10: baseline value inf is not a finite number in 0..100"),
    (60.0, math.nan, "s/ndcg@10: baseline value nan is not a finite number in 0..100"),
    (60.0, "x", "s/ndcg@10: baseline value 'x' is not a finite number in 0..100"),
    (60.0, None, "s/ndcg@10: baseline value None is not a finite number in 0..100"),
    (60.0, -1.0, "s/ndcg@10: baseline value -1.0 is not a finite number in 0..100"),
    (60.0, [60.0], "s/ndcg@10: baseline value [60.0] is not a finite number in 0..100"),
])
def test_a_value_that_is_not_a_finite_number_in_0_100_fails_with_one_line(current, baseline, says):
    report = gate({"s/ndcg@10": current, "s/recall@10": 80.0}, {"s/ndcg@10": baseline, "s/recall@10": 80.0})
    assert not report.passed
    assert _one_line(report.summary()) == f"gate failed: {says}"
    json.dumps(report.to_dict(), allow_nan=False)  # what the manifest records is plain JSON


def test_a_new_metric_must_be_a_number_too_and_a_missing_one_fails():
    assert gate({**BASE, "t/m": 50.0}, BASE).passed
    report = gate({**BASE, "t/m": math.inf}, BASE)
    assert _one_line(report.summary()) == "gate failed: t/m: current value inf is not a finite number in 0..100"
    assert gate({"s/ndcg@10": 60.0}, BASE).summary() == "gate failed: s/recall@10: metric missing or failed to compute"


# -- `mathindex gate` ---------------------------------------------------------------------------


def _gate_cli(tmp_path, capsys, baseline: str, current: str, *extra: str) -> tuple[int, str, str]:
    (tmp_path / "b.json").write_text(baseline)
    (tmp_path / "c.json").write_text(current)
    started = time.monotonic()
    code = main(["gate", "--baseline", str(tmp_path / "b.json"), "--current", str(tmp_path / "c.json"), *extra])
    assert time.monotonic() - started < 5
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("baseline", "current", "says"), [
    ('{"headline": {}}', '{"s/m": 50}', "FAIL the baseline has no headline metrics: nothing to compare against"),
    ("{}", "{}", "FAIL the baseline has no headline metrics: nothing to compare against"),
    ('{"s/m": 50}', '{"s/m": Infinity}', "FAIL s/m: current value inf is not a finite number in 0..100"),
    ('{"s/m": -Infinity}', '{"s/m": 50}', "FAIL s/m: baseline value -inf is not a finite number in 0..100"),
    ('{"s/m": NaN}', '{"s/m": 50}', "FAIL s/m: baseline value nan is not a finite number in 0..100"),
    ('{"s/m": "50"}', '{"s/m": 50}', "FAIL s/m: baseline value '50' is not a finite number in 0..100"),
    ('{"s/m": null}', '{"s/m": 50}', "FAIL s/m: baseline value None is not a finite number in 0..100"),
    ('{"s/m": 50}', '{"s/m": null}', "FAIL s/m: metric missing or failed to compute"),
    ('{"s/m": 50}', "{}", "FAIL s/m: metric missing or failed to compute"),
])
def test_gate_cli_fails_closed_with_exit_3(tmp_path, capsys, baseline, current, says):
    code, out, err = _gate_cli(tmp_path, capsys, baseline, current)
    assert code == 3, out + err
    assert says in out.splitlines() and out.splitlines()[-1] == "gate: FAILED"
    assert "Traceback" not in out + err


@pytest.mark.parametrize(("baseline", "current", "extra", "says"), [
    ("{not json", '{"s/m": 50}', [], "not JSON"),
    ("[50]", '{"s/m": 50}', [], "expected an object of metrics"),
    ('{"headline": [50]}', '{"s/m": 50}', [], "expected an object of metrics"),
    ('{"s/m": 50}', '{"s/m": 50}', ["--tolerance", "nan"], "--tolerance must be a finite number of points >= 0"),
    ('{"s/m": 50}', '{"s/m": 50}', ["--tolerance", "-1"], "--tolerance must be a finite number of points >= 0"),
    ('{"s/m": 50}', '{"s/m": 50}', ["--tolerance", "inf"], "--tolerance must be a finite number of points >= 0"),
])
def test_gate_cli_refuses_unreadable_input_with_exit_2(tmp_path, capsys, baseline, current, extra, says):
    code, out, err = _gate_cli(tmp_path, capsys, baseline, current, *extra)
    assert code == 2 and out == ""
    assert says in _one_line(err)


def test_gate_cli_reads_invalid_utf8_as_unreadable(tmp_path, capsys):
    (tmp_path / "b.json").write_text('{"s/m": 50}')
    (tmp_path / "c.json").write_bytes(b'{"s/m": 50, "\xff": 1}')
    assert main(["gate", "--baseline", str(tmp_path / "b.json"), "--current", str(tmp_path / "c.json")]) == 2
    assert "not JSON" in _one_line(capsys.readouterr().err)


# -- a release with no benchmark suite ----------------------------------------------------------


def _tiny_corpus(tmp_path: Path) -> list[str]:
    lean, tex = tmp_path / "lean", tmp_path / "tex"
    lean.mkdir()
    tex.mkdir()
    (lean / "Good.lean").write_text("namespace Foo\n/-- Two is two. -/\ntheorem two_eq : 2 = 2 := rfl\nend Foo\n")
    (tex / "a.tex").write_text("\\begin{theorem}\\label{t}$x^2 \\geq 0$.\\end{theorem}\n")
    return ["--lean", str(lean), "--latex", str(tex)]


def _released(out: str) -> Path:
    return Path(next(x for x in out.splitlines() if x.startswith("release: ")).removeprefix("release: "))


NO_SUITE = "no benchmark suite: nothing to gate; use --no-gate to publish ungated"


def test_a_release_without_suites_is_refused_unless_no_gate(tmp_path, prefect_harness, capsys):
    """Zero suites: the gate fails (exit 3, nothing published); with --no-gate it is published and
    its notes and manifest say it was not gated. A reembed of it is refused the same way."""
    corpus, root = _tiny_corpus(tmp_path), tmp_path / "root"
    assert main(["release", *corpus, "--out", str(root)]) == 3
    out = capsys.readouterr().out
    refused = _released(out)
    assert f"  FAIL {NO_SUITE}" in out.splitlines() and out.splitlines()[-1] == "gate: FAILED"
    assert not (root / "published.json").exists()
    manifest = json.loads((refused / "manifest.json").read_text())
    assert manifest["published"] is False and manifest["gate"]["passed"] is False
    assert manifest["gate"]["summary"] == f"gate failed: {NO_SUITE}"
    assert NO_SUITE in (refused / "release-notes.md").read_text()

    assert main(["release", *corpus, "--out", str(root), "--no-gate"]) == 0
    out = capsys.readouterr().out
    ungated = _released(out)
    assert out.splitlines()[-1] == "gate: not gated (--no-gate)"
    assert json.loads((root / "published.json").read_text())["release_id"] == ungated.name
    manifest = json.loads((ungated / "manifest.json").read_text())
    assert manifest["published"] is True and manifest["gate"]["gated"] is False
    assert manifest["gate"]["summary"] == "not gated (--no-gate)"
    notes = (ungated / "release-notes.md").read_text()
    assert "Gate: **NOT GATED**" in notes and NO_SUITE in notes

    assert main(["reembed", str(ungated), "--model", "default", "--out", str(root)]) == 3
    assert f"  FAIL {NO_SUITE}" in capsys.readouterr().out.splitlines()
    assert json.loads((root / "published.json").read_text())["release_id"] == ungated.name
    assert main(["reembed", str(ungated), "--model", "default", "--out", str(root), "--no-gate"]) == 0
    again = _released(capsys.readouterr().out)
    assert json.loads((again / "manifest.json").read_text())["gate"]["gated"] is False
    assert "Gate: **NOT GATED**" in (again / "release-notes.md").read_text()


def test_deployments_can_pass_no_gate():
    import yaml

    from mathindex.flows.reembed import reembed_flow
    from mathindex.flows.release import release_flow

    flows = {"nightly-release": release_flow, "reembed": reembed_flow}
    for d in yaml.safe_load((REPO / "prefect.yaml").read_text())["deployments"]:
        accepted = set(flows[d["name"]].parameters.properties)
        assert "no_gate" in accepted and d["parameters"].get("no_gate") is False, d["name"]
        assert set(d["parameters"]) <= accepted, d["name"]


def test_the_sample_release_has_a_suite_and_passes_gated(sample_release_root):
    from mathindex.sources import DEFAULT_SOURCES, load_sources

    assert load_sources(DEFAULT_SOURCES)[1], "data/sources.yaml has no suite"
    rid = json.loads((sample_release_root / "published.json").read_text())["release_id"]
    manifest = json.loads((sample_release_root / "releases" / rid / "manifest.json").read_text())
    assert manifest["bench"]["suites"] and manifest["bench"]["headline"]
    assert manifest["gate"]["passed"] is True and manifest["gate"]["gated"] is True
    assert manifest["gate"]["summary"] == "gate passed" and len(manifest["gate"]["checks"]) >= 3
    # a first release on a fresh root: gated against the committed baseline, and its notes say so
    source = json.loads((REPO / "bench" / "baselines" / "sample.json").read_text())["source"]
    against = f"committed baseline bench/baselines/sample.json (release {source})"
    assert manifest["bench"]["baseline"] == against
    notes = (sample_release_root / "releases" / rid / "release-notes.md").read_text()
    assert f"Gate: **PASSED** (a headline metric may fall at most 2.0 points; baseline: {against})." in notes
    assert f"the first release on this root, gated against the {against}" in notes


# -- errors inside a flow are one line ----------------------------------------------------------


def test_an_error_inside_the_flow_is_one_line_without_a_traceback(tmp_path, prefect_harness):
    """A model directory whose weights file is damaged passes the CLI's checks (it has weights) and
    fails in the flow's embed stage. stderr: the progress lines and one `error:` line, no Prefect
    traceback; the flow run's logs in the API still hold the traceback for operators."""
    from prefect import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.settings import PREFECT_API_URL

    from mathindex.embed.embedder import default_model_path

    empty = tmp_path / "lean"  # named as before: the flow run is found by its `lean` parameter
    empty.mkdir()
    (empty / "A.lean").write_text("theorem a_eq : 1 = 1 := rfl\n")
    model = tmp_path / "badmodel"
    shutil.copytree(default_model_path(), model)
    (model / "model.safetensors").write_text("garbage")
    env = {k: v for k, v in os.environ.items() if k != "MATHINDEX_DEBUG"} | {"PREFECT_API_URL": PREFECT_API_URL.value()}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, "-m", "mathindex", "release", "--lean", str(empty), "--model", str(model),
                          "--out", str(tmp_path / "out")], env=env, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "ERROR" not in run.stderr, run.stderr
    errors = [x for x in run.stderr.splitlines() if "error:" in x]
    assert len(errors) == 1 and errors[0].startswith("mathindex: error: cannot load embedding model "), run.stderr
    assert all(x.startswith("release: ") for x in run.stderr.splitlines() if x not in errors), run.stderr

    with get_client(sync_client=True) as client:  # the flow ran, and its logs kept the traceback
        newest = client.read_flow_runs(sort=FlowRunSort.EXPECTED_START_TIME_DESC, limit=20)
        runs = [r for r in newest if r.parameters.get("lean") == [str(empty)]]
        assert len(runs) == 1 and runs[0].state.is_failed()
        deadline = time.monotonic() + 30
        while True:
            logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[runs[0].id])))
            if any("Traceback" in x.message for x in logs) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    assert any("Traceback" in x.message and "cannot load embedding model" in x.message for x in logs), [x.message for x in logs]


def test_quiet_flow_logs_drop_flow_errors_from_the_console_only(monkeypatch):
    """The filter the CLI puts on Prefect's console handler: flow and task run records at ERROR
    are left out of the console (the API handler is not filtered); MATHINDEX_DEBUG=1 keeps them."""
    import logging

    from prefect.logging.handlers import PrefectConsoleHandler

    from mathindex.flows.logs import quiet_flow_errors

    console = next(h for h in logging.getLogger().handlers if isinstance(h, PrefectConsoleHandler))

    def shown(name: str, level: int) -> bool:
        return console.filter(logging.LogRecord(name, level, __file__, 1, "boom", None, None))

    monkeypatch.delenv("MATHINDEX_DEBUG", raising=False)
    with quiet_flow_errors():
        assert not shown("prefect.flow_runs", logging.ERROR) and not shown("prefect.task_runs", logging.ERROR)
        assert shown("prefect.flow_runs", logging.WARNING) and shown("mathindex.embed", logging.ERROR)
    assert shown("prefect.flow_runs", logging.ERROR)  # removed again after the command
    monkeypatch.setenv("MATHINDEX_DEBUG", "1")
    with quiet_flow_errors():
        assert shown("prefect.flow_runs", logging.ERROR)


# -- hostile search queries ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def release(sample_release_root) -> Path:
    rid = json.loads((sample_release_root / "published.json").read_text())["release_id"]
    return sample_release_root / "releases" / rid


@pytest.mark.parametrize(("query", "says"), [
    ("", "mathindex search: query is empty"),
    ("   \t ", "mathindex search: query is empty"),
    ("\udcff", "mathindex search: query is not valid UTF-8"),
    ("lattice \udcffjoin", "mathindex search: query is not valid UTF-8"),
])
@pytest.mark.parametrize("formal", [[], ["--formal"]])
def test_search_cli_refuses_an_empty_or_undecodable_query(release, capsys, query, says, formal):
    started = time.monotonic()
    assert main(["search", str(release), query, *formal]) == 2
    assert time.monotonic() - started < 2  # refused before the release is opened
    out, err = capsys.readouterr()
    assert out == "" and _one_line(err) == says


def test_search_cli_with_undecodable_bytes_on_the_command_line(release):
    run = subprocess.run([sys.executable, "-m", "mathindex", "search", str(release), b"lattice \xff"], cwd=REPO,
                         capture_output=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 2 and run.stdout == b""
    assert _one_line(run.stderr.decode()) == "mathindex search: query is not valid UTF-8"


def test_the_engine_returns_no_hits_and_a_reason(release):
    from mathindex.search.engine import SearchEngine

    engine = SearchEngine(release)
    for query, reason in (("", "query is empty"), (" \n", "query is empty"), ("\udcff", "query is not valid UTF-8")):
        result = engine.search(query, 10)
        assert result.hits == [] and result.refused == reason
        assert engine.names(query, 10) == []
    good = engine.search("lattice join meet", 10)
    assert good.hits and good.refused is None


def test_the_http_api_answers_an_empty_query_with_a_400(sample_release_root):
    from fastapi.testclient import TestClient

    from mathindex.serve.app import create_app
    from mathindex.serve.swap import ReleaseHolder

    with TestClient(create_app(ReleaseHolder(sample_release_root), threads=1)) as client:
        for q in ("", "  "):
            r = client.get("/search", params={"q": q})
            assert r.status_code == 400 and r.json() == {"error": "q is empty", "status": 400}
