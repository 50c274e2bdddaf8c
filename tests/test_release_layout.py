"""One owner for the release layout (issue 13): `store.ReleaseLayout` and `store.RootLayout` name
every file and folder of a release and a root; no other module spells them, and build-side modules
no longer import the query engine for folder names. A release root given where a release is
expected means its published release (`store.resolve_release`), in every subcommand."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import mathindex
from mathindex.cli import build_parser, main
from mathindex.schemas import table_specs
from mathindex.store.layout import ReleaseLayout, RootLayout
from mathindex.store.releases import resolve_release

PACKAGE = Path(mathindex.__file__).parent


def _literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_no_module_but_store_spells_a_release_file_name():
    names = {ReleaseLayout.MANIFEST, ReleaseLayout.NOTES, ReleaseLayout.DUCKDB, ReleaseLayout.METRICS,
             RootLayout.PUBLISHED} | {ReleaseLayout.table_file(t) for t in table_specs()}
    found = [f"{p.relative_to(PACKAGE)}: {value!r}"
             for p in sorted(PACKAGE.rglob("*.py")) if p.name != "store.py"
             for _, value in _literals(p) if value in names]  # fmt: skip
    inside_an_index = {"search/lexical.py: 'nodes.parquet'"}  # lexical/nodes.parquet, the index's own names file
    assert set(found) <= inside_an_index


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
    release.manifest.write_text(json.dumps({"release_id": release.dir.name, "files": {}}))
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
    return {"release_id": "20261201T000000Z-0123abcd", "code_version": "0", "corpora": [],
            "embedder": {"name": "m", "revision": "r", "dim": 3, "normalised": True}, "vector_index": {}, "formula_index": {},
            "stages": {}, "row_counts": {"nodes": 1}, "files": {"nodes.parquet": "0" * 64}, "bench": {}, "gate": {},
            "published": True, **extra}  # fmt: skip


def test_manifests_are_typed_and_keep_keys_of_another_version(tmp_path):
    from mathindex.schemas.manifest import Manifest
    from mathindex.store.integrity import IntegrityError, read_manifest, write_manifest

    release = tmp_path / "r"
    release.mkdir()
    (release / "manifest.json").write_text(json.dumps(_manifest(written_by_a_later_version={"x": 1})))
    manifest = read_manifest(release)
    assert isinstance(manifest, Manifest) and manifest.row_counts == {"nodes": 1} and manifest.formal_index == {}
    assert manifest.unknown == {"written_by_a_later_version": {"x": 1}}
    write_manifest(release, manifest)
    again = json.loads((release / "manifest.json").read_text())
    assert again == {k: v for k, v in _manifest().items()} | {"formal_index": {}, "premises": {}, "sizes": {},
                                                              "previous_release": None}  # fmt: skip
    (release / "manifest.json").write_text(json.dumps({**_manifest(), "published": "maybe"}))
    with pytest.raises(IntegrityError, match="does not validate"):
        read_manifest(release)


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
