"""The release flow end to end on the bundled sample: artifacts, determinism, gate, publication.

The first release is the session's sample build (conftest's `sample_release_run`), in a copy of
its root with the caches, into which this module builds, gates and re-embeds more releases.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from prefect.client.schemas.objects import StateType

from mathindex.cli import main
from mathindex.flows.release import release_flow
from mathindex.schemas import table_specs
from mathindex.search.engine import SearchEngine
from mathindex.store.layout import LOCK
from tests.models import cut_minilm

TABLES = sorted(table_specs())


@pytest.fixture(scope="module")
def root(sample_release_run, tmp_path_factory):
    """A copy of the session's sample root, caches included (the tests here add releases to it)."""
    dst = tmp_path_factory.mktemp("releases") / "root"
    return shutil.copytree(sample_release_run.root, dst, ignore=shutil.ignore_patterns(LOCK))


@pytest.fixture(scope="module")
def first_state(sample_release_run):
    """The final state of the first release's flow run."""
    return sample_release_run.state


@pytest.fixture(scope="module")
def first(first_state, root):
    outcome = first_state.result()
    assert outcome.passed, outcome.gate
    return root / "releases" / outcome.release_dir.name


def test_release_directory_holds_every_artifact(first, root):
    for name in TABLES:
        assert (first / f"{name}.parquet").is_file(), name
    for rel in ["search.duckdb", "vector/vector.index", "bench/metrics.json", "release-notes.md", "manifest.json",
                "bench/history.svg", "bench/history.png", "bench/styles.svg", "bench/styles.png"]:
        assert (first / rel).is_file(), rel
    assert not (first / "bench" / "metrics.svg").exists()  # the hand-written plot is gone
    assert not list((root / "releases").glob(".staging-*"))
    assert json.loads((root / "published.json").read_text())["release_id"] == first.name


def test_manifest_pins_inputs_and_hashes_files(first):
    m = json.loads((first / "manifest.json").read_text())
    assert {c["name"] for c in m["corpora"]} >= {"sample-lean", "sample-latex"}
    assert all(len(c["sha256"]) == 64 for c in m["corpora"])
    assert m["embedder"]["dim"] == 384 and m["embedder"]["normalised"] is True
    assert m["vector_index"]["M"] == 32 and m["vector_index"]["recall_at_10"] >= 0.9
    assert m["row_counts"]["declarations"] >= 60 and m["row_counts"]["latex_statements"] >= 30
    assert set(m["files"]) >= {f"{t}.parquet" for t in TABLES}
    assert m["gate"]["passed"] is True and m["published"] is True
    suite = Path(__file__).resolve().parent.parent / "data" / "sample" / "queries.json"
    external = suite.with_name("queries.external.yaml")  # the sample's test fixture of external figures
    [pin] = m["bench"]["suites"]
    assert pin.pop("external")["sha256"] == hashlib.sha256(external.read_bytes()).hexdigest()
    assert pin == {"name": "sample", "path": str(suite), "sha256": hashlib.sha256(suite.read_bytes()).hexdigest()}
    notes = (first / "release-notes.md").read_text()  # the external baseline row, reported and not gated
    assert "### Beside other tools (published figures; reported, not gated)" in notes
    assert "- On latex, FixtureSearch (made up, a test fixture) does better (95.00 vs our " in notes


def test_notes_and_metrics_are_artifacts_of_the_flow_run(first_state, first):
    """The release notes as a markdown artifact and each suite's metrics as a table artifact, keyed
    by suite, read back through the Prefect client."""
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    run_id = first_state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run_id])))
    by_key = {a.key: a for a in found}
    assert set(by_key) == {"release-notes-sample", "metrics-sample"}
    assert by_key["release-notes-sample"].type == "markdown"
    assert by_key["release-notes-sample"].data == (first / "release-notes.md").read_text()
    table = by_key["metrics-sample"]
    assert table.type == "table"
    rows = json.loads(table.data) if isinstance(table.data, str) else table.data
    sample = json.loads((first / "bench" / "metrics.json").read_text())["suites"]["sample"]
    assert rows[0] == {"style": "all", "queries": sample["queries"], **{k: round(v, 2) for k, v in sample["metrics"].items()}}
    assert [r["style"] for r in rows[1:]] == list(sample["by_style"]) + (["fair subset"] if "fair" in sample else [])
    assert first.name in table.description and "gate passed" in table.description


def test_duckdb_has_the_same_rows_as_parquet(first):
    con = duckdb.connect(str(first / "search.duckdb"), read_only=True)
    for name in TABLES:
        assert con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] == pq.read_metadata(first / f"{name}.parquet").num_rows
    con.close()


def test_every_table_matches_its_schema(first):
    specs = table_specs()
    for name in TABLES:
        assert pq.read_schema(first / f"{name}.parquet").remove_metadata().equals(specs[name].schema), name


def test_search_answers_from_the_release(first, capsys):
    engine = SearchEngine(first)
    metrics = json.loads((first / "bench" / "metrics.json").read_text())
    assert metrics["suites"]["sample"]["queries"] >= 40
    assert not engine.unavailable, engine.unavailable
    assert engine.vector.embedder.backend == "onnx"  # queries are encoded like the texts (the checked export)
    assert main(["search", str(first), "lattice join meet", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and all(h["channels"] for h in hits)
    assert all(h["kind"] and h["file"] for h in hits)


def test_bench_cli_reports_points(first, capsys):
    suite = Path(__file__).resolve().parent.parent / "data" / "sample" / "queries.json"
    assert main(["bench", str(first), "--suite", str(suite), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert 0 <= out["metrics"]["ndcg@10"] <= 100


def test_second_build_is_deterministic_and_gates_against_the_first(first, root):
    second = release_flow(out=str(root))
    assert second.passed
    for name in TABLES:
        if name == "bench_results":
            continue
        a, b = (first / f"{name}.parquet").read_bytes(), (second.release_dir / f"{name}.parquet").read_bytes()
        assert a == b, f"{name}.parquet differs between identical builds"
    m = json.loads((second.release_dir / "manifest.json").read_text())
    assert m["previous_release"] == first.name
    notes = (second.release_dir / "release-notes.md").read_text()
    assert "changed since the baseline" not in notes  # same suite file
    assert f"Nothing among the inputs: the corpus pins, suites, model and code version are those of release {first.name}." in notes
    queries = json.loads((first / "bench" / "metrics.json").read_text())["suites"]["sample"]["queries"]
    assert f"{queries} queries in both: 0 fell, 0 rose, {queries} kept their rank; 0 new, 0 gone." in notes
    rows = m["row_counts"]["declarations"]
    assert f"| `declarations` | {rows:,} | {rows:,} | +0 |" in notes
    assert "### vector" in notes and "| embedding.index_reused | yes |" in notes
    assert f">{first.name.split('-')[0]}<" in (second.release_dir / "bench" / "history.svg").read_text()  # the first, published
    assert m["vector_index"]["embedding"]["index_reused"] is True  # same texts and model: nothing embedded or built
    for name in ("vector.index", "vector_ids.parquet", "vector.json"):
        assert (first / "vector" / name).read_bytes() == (second.release_dir / "vector" / name).read_bytes(), name


DERIVED = ("release-notes.md", "search.duckdb")  # hashed and sized in the manifest, compared below


def _without_times(obj):
    """`obj` with the value of every key ending in `seconds` (wall-clock time) or `rss_mb` (the
    memory a stage took) blanked."""
    if isinstance(obj, dict):
        return {k: "<measured>" if k.endswith(("seconds", "rss_mb")) else _without_times(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_without_times(v) for v in obj]
    return obj


def _comparable(release: Path, rel: str) -> bytes | dict:
    """A release file as two builds must agree on it: bytes (the plots too), except the release id
    and wall-clock seconds in the manifest and the notes, and `search.duckdb` by its rows."""
    path = release / rel
    if rel == "search.duckdb":
        con = duckdb.connect(str(path), read_only=True)
        try:
            names = sorted(r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall())
            return {n: (con.execute(f'DESCRIBE "{n}"').fetchall(), con.execute(f'SELECT * FROM "{n}"').fetchall()) for n in names}
        finally:
            con.close()
    if rel == "manifest.json":
        m = json.loads(path.read_text())
        assert m.pop("release_id") == release.name
        m["files"] = {k: v for k, v in m["files"].items() if k not in DERIVED}
        m["sizes"] = {k: v for k, v in m["sizes"].items() if k not in DERIVED}
        return _without_times(m)
    if rel == "release-notes.md":
        text = path.read_text().replace(release.name, "<release id>")
        text = re.sub(r"^- (seconds|peak_rss_mb|peak_anon_rss_mb): .*$", r"- \1: <measured>", text, flags=re.M)
        return {"text": re.sub(r"^\| ([\w.]*seconds) \| [^|]* \|$", r"| \1 | <seconds> |", text, flags=re.M)}
    return path.read_bytes()


def test_a_build_under_another_hash_seed_is_identical_file_by_file(first, tmp_path):
    """The first build (this process) and a build of the same inputs by `python -m mathindex release`
    in a fresh root under another PYTHONHASHSEED (1, or 2 when this process runs with 1; unset, it is
    random), against the session's Prefect server: the same files, byte for byte, except
    `search.duckdb` (the same rows in every table) and the release id and wall-clock seconds of the
    manifest and the notes. Nothing is shared: extraction, embedding and every index are built afresh."""
    import os
    import subprocess
    import sys

    from prefect.settings import PREFECT_API_URL

    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    env = {**os.environ, "PYTHONHASHSEED": seed, "PREFECT_API_URL": PREFECT_API_URL.value()}
    run = subprocess.run([sys.executable, "-m", "mathindex", "release", "--out", str(tmp_path)], env=env, timeout=300,
                         cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    (other,) = [p for p in (tmp_path / "releases").iterdir() if not p.name.startswith(".")]
    files = sorted(p.relative_to(first).as_posix() for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(other).as_posix() for p in other.rglob("*") if p.is_file())
    assert set(files) >= {"manifest.json", "search.duckdb", "vector/vector.index", "bench/metrics.json", *(f"{t}.parquet" for t in TABLES)}
    for rel in files:
        assert _comparable(first, rel) == _comparable(other, rel), f"{rel} differs between builds under two hash seeds"


def test_failing_gate_exits_3_and_does_not_publish(first, root):
    published = json.loads((root / "published.json").read_text())
    last = root / "releases" / published["release_id"]
    metrics_path = last / "bench" / "metrics.json"
    saved = metrics_path.read_text()
    metrics = json.loads(saved)
    metrics["headline"] = {k: v + 2.1 for k, v in metrics["headline"].items()}
    metrics_path.write_text(json.dumps(metrics))
    try:
        code = main(["release", "--out", str(root)])
    finally:
        metrics_path.write_text(saved)
    assert code == 3
    assert json.loads((root / "published.json").read_text()) == published
    failed = sorted(p for p in (root / "releases").iterdir() if p.name != last.name and not p.name.startswith("."))[-1]
    manifest = json.loads((failed / "manifest.json").read_text())
    assert manifest["published"] is False and manifest["gate"]["passed"] is False
    assert "FAILED" in (failed / "release-notes.md").read_text()


@contextmanager
def _raised(metrics_path: Path, section: list[str], metric: str, to: float = 100.0) -> Iterator[float]:
    """`metric` (under the keys `section` of the JSON file) raised to `to` points for the block (at
    most 100: the gate refuses a baseline above it); yields its true value. The file is restored
    afterwards."""
    saved = metrics_path.read_text()
    raw = json.loads(saved)
    head = raw
    for key in section:
        head = head[key]
    true = head[metric]
    assert to - true > 2.0, f"{metric} is {true}: too close to {to} for a failing drop"
    head[metric] = to
    metrics_path.write_text(json.dumps(raw))
    try:
        yield true
    finally:
        metrics_path.write_text(saved)


def _flow_run(state):
    """The flow run of `state` as the Prefect server recorded it."""
    from prefect import get_client

    with get_client(sync_client=True) as client:
        return client.read_flow_run(state.state_details.flow_run_id)


def test_failing_gate_ends_the_flow_run_failed_naming_the_drop(first, root):
    """A scheduled release whose gate fails ends as a Failed flow run (Prefect's notifications fire)
    whose message names the metric and its drop; the release is still written, unpublished."""
    published = json.loads((root / "published.json").read_text())
    last = root / "releases" / published["release_id"]
    with _raised(last / "bench" / "metrics.json", ["headline"], "sample/ndcg@10") as ndcg:
        state = release_flow(out=str(root), return_state=True)
    run = _flow_run(state)
    assert run.state.type == StateType.FAILED
    assert run.state.message == f"gate failed: sample/ndcg@10 fell {100 - ndcg:.2f} points (100.00 -> {ndcg:.2f})"
    outcome = state.result(raise_on_failure=False)
    assert not outcome.passed and outcome.message == run.state.message
    assert json.loads((outcome.release_dir / "manifest.json").read_text())["published"] is False
    assert json.loads((root / "published.json").read_text()) == published


def test_failing_gate_of_a_reembedding_ends_its_flow_run_failed(first, root, tmp_path):
    """The same for reembed: gated against the source release's headline, here raised. The source's
    pin of its suite is altered too, and the notes say the suite changed since that release."""
    from mathindex.flows.reembed import reembed_flow

    source = tmp_path / first.name
    shutil.copytree(first, source)
    manifest = json.loads((source / "manifest.json").read_text())
    true_sha = manifest["bench"]["suites"][0]["sha256"]
    manifest["bench"]["suites"][0]["sha256"] = "0" * 64
    (source / "manifest.json").write_text(json.dumps(manifest))
    with _raised(source / "manifest.json", ["bench", "headline"], "sample/mrr@10") as mrr:
        state = reembed_flow(release=str(source), model="default", out=str(root), return_state=True)
    run = _flow_run(state)
    assert run.state.type == StateType.FAILED
    assert run.state.message == f"gate failed: sample/mrr@10 fell {100 - mrr:.2f} points (100.00 -> {mrr:.2f})"
    outcome = state.result(raise_on_failure=False)
    assert not outcome.passed
    notes = (outcome.release_dir / "release-notes.md").read_text()
    assert f"- `sample`: changed (sha256 000000000000… -> {true_sha[:12]}…)" in notes


def test_a_run_failing_for_another_reason_is_failed_too(tmp_path, prefect_harness):
    state = release_flow(out=str(tmp_path), sources_file=str(tmp_path / "no-such-sources.yaml"), return_state=True)
    assert _flow_run(state).state.type == StateType.FAILED
    assert isinstance(state.result(raise_on_failure=False), Exception)


def test_release_runs_on_dask(tmp_path, first):
    """The same flow on a Dask LocalCluster (prefect-dask) gives the same tables as the thread pool."""
    code = main(["release", "--out", str(tmp_path), "--runner", "dask"])
    assert code == 0
    (release,) = [p for p in (tmp_path / "releases").iterdir() if not p.name.startswith(".")]
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["gate"]["passed"] and manifest["row_counts"]["declarations"] >= 60
    for name in ["declarations", "latex_statements", "formula_trees", "embedding_texts", "nodes"]:
        assert (release / f"{name}.parquet").read_bytes() == (first / f"{name}.parquet").read_bytes(), name
    assert main(["search", str(release), "MiniMath.Nat.sum_totient"]) == 0


def test_bad_files_become_error_rows_and_the_release_goes_on(tmp_path, prefect_harness):
    lean, tex = tmp_path / "lean", tmp_path / "tex"
    lean.mkdir()
    tex.mkdir()
    (lean / "Good.lean").write_text("namespace Foo\n/-- Two is two. -/\ntheorem two_eq : 2 = 2 := rfl\nend Foo\n")
    (lean / "Bad.lean").write_bytes(b"\xff\xfe\x00garbage\x80\x81 theorem \xc3(")
    (tex / "a.tex").write_text("\\begin{theorem}\\label{t}$x^2 \\geq 0$.\\end{theorem}\n")
    (tex / "b.tex").write_bytes(b"\\begin{lemma} \xff\xfe never ends {{{")
    out = tmp_path / "out"  # no suite: published only with --no-gate
    assert main(["release", "--lean", str(lean), "--latex", str(tex), "--out", str(out), "--no-gate"]) == 0
    (release,) = [p for p in (out / "releases").iterdir() if not p.name.startswith(".")]
    names = pq.read_table(release / "declarations.parquet").column("full_name").to_pylist()
    assert "Foo.two_eq" in names
    errors = pq.read_table(release / "errors.parquet").to_pylist()
    assert {e["file"] for e in errors} >= {"Bad.lean", "b.tex"}
    assert all(e["reason"] and "\n" not in e["reason"] for e in errors)


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    """Another real model, made offline: the bundled MiniLM cut to its first 3 layers."""
    return cut_minilm(tmp_path_factory.mktemp("models") / "minilm-3layers", 3)


def test_reembed_writes_a_new_release_with_before_and_after(first, root, small_model, capsys):
    code = main(["reembed", str(first), "--model", str(small_model), "--out", str(root)])
    assert code in (0, 3)
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("release: ")][0]
    new = Path(line.removeprefix("release: "))
    m = json.loads((new / "manifest.json").read_text())
    assert m["embedder"]["name"] == "minilm-3layers" and m["embedder"]["dim"] == 384
    entry = f"minilm-3layers@{m['embedder']['revision'][:16]}"
    assert m["vector_index"]["model"] == f"models/{entry}" and (root / "models" / entry).is_dir()  # installed, root-relative
    assert m["vector_index"]["embedding"]["embedded"] > 0
    assert m["vector_index"]["embedding"]["backend"] == "onnx"  # tasks.embed.EMBED_BACKEND, its export passed the check
    assert m["gate"]["passed"] == (code == 0) and m["previous_release"] == first.name
    for name in ["declarations", "latex_statements", "embedding_texts", "formula_trees"]:
        assert (new / f"{name}.parquet").read_bytes() == (first / f"{name}.parquet").read_bytes()
    notes = (new / "release-notes.md").read_text()
    before = json.loads((first / "bench" / "metrics.json").read_text())["headline"]["sample/ndcg@10"]
    assert f"| sample/ndcg@10 | {before:.2f} |" in notes
    # per query style, before (the source release) beside after
    natural_before = json.loads((first / "bench" / "metrics.json").read_text())["suites"]["sample"]["by_style"]["natural"]
    assert "| style | queries | ndcg@10 before | ndcg@10 after | change |" in notes
    assert any(line.startswith(f"| natural | {natural_before['queries']} | {natural_before['ndcg@10']:.2f} | ")
               for line in notes.splitlines())
    assert "FixtureSearch (made up, a test fixture) does better" in notes  # the external figures carried over
    # the old index refuses the new model, the new one opens with it
    from mathindex.embed import IndexMismatchError, SentenceTransformerEmbedder, VectorIndex

    with pytest.raises(IndexMismatchError):
        VectorIndex.open(first / "vector", SentenceTransformerEmbedder(str(small_model)))
    assert SearchEngine(new).search("lattice", 5).hits


def test_reembed_with_the_same_model_gives_the_same_index_and_metrics(first, root):
    """The release flow and reembed add vectors to HNSW in one order (by text_id), so re-embedding
    with the model a release was built with gives the same index, byte for byte, and the same metrics."""
    from mathindex.flows.reembed import reembed_flow

    outcome = reembed_flow(release=str(first), model="default", out=str(root), return_state=True).result()
    assert outcome.passed
    for name in ("vector.index", "vector_ids.parquet", "vector.json"):
        assert (outcome.release_dir / "vector" / name).read_bytes() == (first / "vector" / name).read_bytes(), name
    metrics = [json.loads((r / "bench" / "metrics.json").read_text()) for r in (first, outcome.release_dir)]
    assert metrics[0] == metrics[1]


def test_reembed_at_int8_is_another_model_and_queries_are_encoded_the_same_way(first, root):
    """`precision int8` embeds with the ONNX int8 model (its own name, so no fp32 vector is reused
    or mixed), the manifest says so, and the engine encodes queries with the same int8 model."""
    from mathindex.cli import PRECISION_CHOICES
    from mathindex.embed.embedder import PRECISIONS
    from mathindex.flows.reembed import reembed_flow

    assert PRECISION_CHOICES == PRECISIONS
    outcome = reembed_flow(release=str(first), model="default", out=str(root), no_gate=True,
                           precision="int8", return_state=True).result()
    new = outcome.release_dir
    m = json.loads((new / "manifest.json").read_text())
    assert m["vector_index"]["embedding"]["precision"] == "int8"
    assert m["embedder"]["name"].endswith("+onnx-int8")
    assert m["vector_index"]["embedding"]["embedded"] > 0  # nothing reused from the fp32 cache
    engine = SearchEngine(new)
    assert "embedding" not in engine.unavailable, engine.unavailable
    assert engine.vector.embedder.name == m["embedder"]["name"]
    fp32 = SearchEngine(first)
    assert not fp32.vector.embedder.name.endswith("int8")
    assert engine.search("lattice", 5).hits


def test_reembed_with_a_missing_model_writes_nothing(first, root, capsys):
    before = sorted(p.name for p in (root / "releases").iterdir())
    assert main(["reembed", str(first), "--model", str(root / "no-such-model"), "--out", str(root)]) == 2
    assert "\n" not in capsys.readouterr().err.strip()
    assert sorted(p.name for p in (root / "releases").iterdir()) == before


def _hits(release: Path, queries: list[str]) -> list[list[tuple[str, dict]]]:
    engine = SearchEngine(release)
    assert "embedding" not in engine.unavailable, engine.unavailable
    return [[(h.name, h.channels) for h in engine.search(q, 10).hits] for q in queries]


def test_a_model_given_by_path_is_pinned_under_the_root_and_travels_with_it(tmp_path, small_model, prefect_harness, capsys):
    """The model is installed into ROOT/models and recorded relative to the root, so a copy of the
    whole root searches with its embedding channel after the original model path is gone; a release
    with `--model NAME` or no --model after it resolves the same entry (same embedder: index reused)."""
    from mathindex.embed.models import model_revision, resolve_model
    from mathindex.store.releases import publish

    given = tmp_path / "given" / "minilm-3layers"
    shutil.copytree(small_model, given)
    rev = model_revision(given)
    entry = f"minilm-3layers@{rev[:16]}"
    root = tmp_path / "a"
    assert main(["release", "--out", str(root), "--model", str(given)]) in (0, 3)
    (release,) = [p for p in (root / "releases").iterdir() if not p.name.startswith(".")]
    m = json.loads((release / "manifest.json").read_text())
    assert m["vector_index"]["model"] == f"models/{entry}"
    assert m["embedder"]["name"] == "minilm-3layers" and m["embedder"]["revision"] == rev
    assert model_revision(root / "models" / entry) == rev
    if not m["published"]:  # gated against bench/baselines (bundled model); publish it for what follows
        publish(root, release.name)

    queries = ["lattice join meet", "sum of totients", "every finite integral domain is a field"]
    before = _hits(release, queries)
    assert any("embedding" in ch for hits in before for _, ch in hits)
    shutil.rmtree(given)
    copy = tmp_path / "b"
    shutil.copytree(root, copy)
    shutil.rmtree(root)
    copied = copy / "releases" / release.name
    engine = SearchEngine(copied)
    assert not engine.unavailable and engine.vector.embedder.path.resolve() == (copy / "models" / entry).resolve()
    assert _hits(copied, queries) == before

    # a bare name and name@rev16 name the entry; no --model means the published release's model
    assert resolve_model("minilm-3layers", copy) == resolve_model(entry, copy) == copy / "models" / entry
    capsys.readouterr()
    for argv in (["--model", "minilm-3layers"], []):
        assert main(["release", "--out", str(copy), *argv]) == 0, argv
        new = Path(next(x for x in capsys.readouterr().out.splitlines() if x.startswith("release: ")).removeprefix("release: "))
        m = json.loads((new / "manifest.json").read_text())
        assert m["vector_index"]["model"] == f"models/{entry}" and m["embedder"]["name"] == "minilm-3layers"
        assert m["vector_index"]["embedding"]["index_reused"] is True
    assert sorted(p.name for p in (copy / "models").iterdir()) == [entry]
