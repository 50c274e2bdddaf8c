"""One owner for the release layout (issue 13): `store.ReleaseLayout` and `store.RootLayout` name
every file and folder of a release and a root (that no other module spells them: test_layout_names),
and build-side modules no longer import the query engine for folder names. A release root given where a release is
expected means its published release (`store.resolve_release`), in every subcommand."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import mathindex
from mathindex.cli import build_parser, main
from mathindex.store.layout import ReleaseLayout, RootLayout
from mathindex.store.releases import resolve_release
from tests.manifests import manifest_json

PACKAGE = Path(mathindex.__file__).parent


def test_build_side_modules_do_not_import_the_query_engine_for_folder_names():
    offenders = []
    for p in sorted((PACKAGE / "tasks").glob("*.py")) + sorted((PACKAGE / "flows").glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "mathindex.search.engine":
                offenders += [f"{p.name}: {a.name}" for a in node.names if a.name.endswith("_DIR")]
    assert offenders == []


def test_layout_paths(tmp_path):
    release = ReleaseLayout(tmp_path / "r")
    assert release.manifest == tmp_path / "r" / "manifest.json"
    assert release.table("nodes") == tmp_path / "r" / "nodes.parquet"
    assert release.metrics == tmp_path / "r" / "bench" / "metrics.json"
    assert release.vector.name == "vector" and release.lexical.name == "lexical" and release.formal.name == "formal"
    root = RootLayout(tmp_path)
    assert root.release("X").dir == tmp_path / "releases" / "X"
    assert root.staging("X") == tmp_path / "releases" / ".staging-X"
    assert (root.published, root.lock, root.cache, root.models) == (
        tmp_path / "published.json", tmp_path / ".lock", tmp_path / "cache", tmp_path / "models")


def _root_with_release(tmp_path: Path, publish: bool = True) -> tuple[Path, Path]:
    root = tmp_path / "root"
    release = RootLayout(root).release("20261201T000000Z-0123abcd")
    release.dir.mkdir(parents=True)
    release.manifest.write_text(json.dumps(manifest_json(release.dir.name)))
    if publish:
        RootLayout(root).published.write_text(json.dumps({"release_id": release.dir.name}))
    return root, release.dir


def test_resolve_release(tmp_path):
    root, release = _root_with_release(tmp_path)
    assert resolve_release(release) == release
    assert resolve_release(root) == release
    with pytest.raises(FileNotFoundError, match="neither a release"):
        resolve_release(tmp_path / "empty-dir")
    bare, _ = _root_with_release(tmp_path / "b", publish=False)
    with pytest.raises(FileNotFoundError, match="nothing is published"):
        resolve_release(bare)


@pytest.mark.parametrize("argv", [
    ["search", "{}", "a query"], ["bench", "{}", "--suite", "{suite}"], ["premises", "{}", "--goal", "a ≤ b"],
    ["reembed", "{}", "--model", "default", "--out", "{out}"], ["verify", "{}"],
])  # fmt: skip
def test_a_root_means_its_published_release_in_every_subcommand(argv, tmp_path):
    root, release = _root_with_release(tmp_path)
    suite = tmp_path / "suite.json"
    suite.write_text("{}")
    args = build_parser().parse_args([a.format(root, suite=suite, out=tmp_path / "out") for a in argv])
    assert Path(args.release) == release or resolve_release(args.release) == release


def test_a_root_with_nothing_published_is_one_line(tmp_path, capsys):
    root, _ = _root_with_release(tmp_path, publish=False)
    assert main(["search", str(root), "a query"]) == 2
    err = capsys.readouterr().err.strip()
    assert "nothing is published under" in err and "\n" not in err


def _manifest(**extra) -> dict:
    return manifest_json(row_counts={"nodes": 1}, files={"nodes.parquet": "0" * 64}, **extra)


# every section as its writers fill it, the paths one build leaves out included (an updated index,
# carried premise figures, a tree model), ints and floats as written
_SECTIONS = {
    "vector_index": {"M": 32, "content_key": "k2", "count": 3, "deleted": 1, "ef_construction": 80, "ef_search": 16,
                     "embedding": {"backend": "onnx", "cached": 2, "distinct": 3, "embedded": 1, "encode_seconds": 0.5,
                                   "index_reused": False, "index_updated": True, "precision": "int8", "rows": 4, "seconds": 0.6},
                     "facets": ["docstring"], "factory": "IDMap2,HNSW32,SQ8", "flat_float32_bytes": 36, "index_bytes": 20,
                     "memory_ratio_to_flat": None, "metric": "inner_product", "model": "models/m@0123", "normalised": True,
                     "recall_at_10": 1.0, "recall_by_ef_search": {"16": 1.0, "128": 1}, "recall_queries": 3, "recall_seed": 0,
                     "rows": 4, "update": {"from": "k1", "appended": 1, "deleted": 1, "changed_since_build": 2, "limit": 0.2,
                                           "recall_queries_searched": 3}},
    "formula_index": {"b": 0.75, "format": "f/1", "formulas": 2, "groups": 2, "k1": 1.2, "postings": 5, "tokens": 4,
                      "weights": {"bm25": 1.0, "canonical": 10}},
    "formal_index": {"declarations": 2, "format": "x/1", "keys": 3, "seconds": 0.0},
    "premises": {"split": {"seed": 12, "files": {"test": 1, "train": 2}}, "suite": {"queries": 2, "files": 1, "rejected_goals": 0},
                 "tune_queries": 1, "fitted": True, "weights": {"knn": 3.0, "lexical": 1}, "figures": {"ranker": {"mrr@32": 50.0}},
                 "model": {"fitted": True, "trees": 7, "linear ranker": {"mrr@32": 40.0}, "queries": 2},
                 "declarations": 2, "seconds": 0.8,
                 "carried": {"measured_build": "0123", "changed_files": 1, "changed_declarations": 1, "declarations": 2,
                             "share": 0.5, "carried": ["weights", "figures"]}},
    "informaliser": {"backend": "http", "model": "qwen", "prompt_version": "informalise-v1@0123456789ab",
                     "endpoint": "127.0.0.1:8080", "rendered": 3, "cached": 1, "fell_back": 0, "empty": 0},
    "bench": {"baseline": "release R0", "headline": {"s/m": 50.0}, "suites": [{"name": "s", "path": "s.json", "sha256": None}]},
    "gate": {"checks": [{"baseline": 50.0, "current": 50.0, "delta": 0.0, "metric": "s/m", "note": "", "ok": True}],
             "gated": True, "passed": True, "problems": [], "summary": "gate passed", "tolerance": 2.0},
}  # fmt: skip


def test_manifests_are_typed_and_keep_keys_of_another_version(tmp_path):
    from mathindex.schemas.manifest import Manifest
    from mathindex.store.integrity import IntegrityError, read_manifest, write_manifest

    release = tmp_path / "r"
    release.mkdir()
    (release / "manifest.json").write_text(json.dumps(_manifest(written_by_a_later_version={"x": 1})))
    manifest = read_manifest(release)
    assert isinstance(manifest, Manifest) and manifest.row_counts == {"nodes": 1} and manifest.formal_index is None
    assert manifest.unknown == {"written_by_a_later_version": {"x": 1}}
    write_manifest(release, manifest)
    again = json.loads((release / "manifest.json").read_text())
    assert again == {k: v for k, v in _manifest().items()} | {"formal_index": {}, "premises": {}, "informaliser": {},
                                                              "sizes": {}, "previous_release": None}  # fmt: skip
    (release / "manifest.json").write_text(json.dumps({**_manifest(), "published": "maybe"}))
    with pytest.raises(IntegrityError, match="does not validate"):
        read_manifest(release)


def test_every_section_is_typed_and_written_back_byte_for_byte(tmp_path):
    from pydantic import ValidationError

    from mathindex.schemas.manifest import Manifest
    from mathindex.store.integrity import read_manifest, write_json, write_manifest

    release = tmp_path / "r"
    release.mkdir()
    write_json(release / "manifest.json", _manifest(**_SECTIONS, sizes={}, previous_release=None))
    written = (release / "manifest.json").read_bytes()
    m = read_manifest(release)
    assert m.vector_index.update.from_key == "k1" and m.vector_index.embedding.precision == "int8"
    assert m.vector_index.recall_by_ef_search == {16: 1.0, 128: 1} and m.formula_index.weights["canonical"] == 10
    assert m.premises.model.linear_ranker == {"mrr@32": 40.0} and m.premises.carried.share == 0.5
    assert m.gate.checks[0].ok and m.bench.suites[0].sha256 is None and m.formal_index.keys == 3
    assert m.informaliser.endpoint == "127.0.0.1:8080" and m.informaliser.no_answer is None
    write_manifest(release, m)
    assert (release / "manifest.json").read_bytes() == written  # same keys, same values (1 stays 1, 1.0 stays 1.0)
    # a key of another version inside a section is kept on read, dropped on write, refused when building one
    older = _manifest(**_SECTIONS, sizes={}, previous_release=None) | {"gate": {**_SECTIONS["gate"], "retired": 1}}
    write_json(release / "manifest.json", older)
    m = read_manifest(release)
    assert m.gate.unknown == {"retired": 1}
    write_manifest(release, m)
    assert (release / "manifest.json").read_bytes() == written
    with pytest.raises(ValidationError, match="retired"):
        Manifest(**{**older, "gate": older["gate"]})


def test_build_stages_never_open_the_query_engine():
    """The premise stage and the flows get their formal index and embedding channel as values
    (issue 30): nothing on the build side but the bench stage, which measures the engine, imports
    it; the query-time premises API (`premises/api.py`) opens a ranker from an engine."""
    build_side = [*sorted((PACKAGE / "premises").glob("*.py")), *sorted((PACKAGE / "flows").glob("*.py")),
                  *sorted(p for p in (PACKAGE / "tasks").glob("*.py") if p.name != "bench.py")]
    offenders = [p.name for p in build_side if p.name != "api.py"
                 for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                 if isinstance(node, ast.ImportFrom) and node.module == "mathindex.search.engine"]
    assert len(build_side) > 20 and offenders == []
