"""The libraries Mathlib stands on (Lean core, Batteries) as sources of their own: Lean core's
layout (`upstream.root: src`, pinned by its release tag) and module names, the syntax core files
use and Mathlib files rarely do, and one node per Lean name across corpora. Lean core is played by
tests/fixtures/lean-core, a made-up library of the test's own (no Lean file is used here)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from mathindex.cli import main
from mathindex.lean import extract_lean_tree
from mathindex.names import lean_node_id
from mathindex.schemas.lean import DECLARATIONS
from mathindex.search.nodes import build_nodes
from mathindex.sources import load_sources, pin_source
from mathindex.tasks.extract import merge_extractions
from mathindex.upstream import LayoutError, layout, pattern_regex, source_dir, upstream_specs
from tests.git_fixture import git

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "tests" / "fixtures" / "lean-core"
MATHLIB_SOURCES = ROOT / "bench" / "sources" / "mathlib.yaml"
TAG = "v4.33.0-rc1"
LAID_OUT = ["COMMIT", "Init.lean", "Init/Data/List/Basic.lean", "Init/Prelude.lean", "LICENSE", "Lean.lean",
            "Lean/Elab/FxCommand.lean", "Std.lean", "Std/Data/FxMap.lean", "UPSTREAM"]


@pytest.fixture()
def fake_core(tmp_path: Path) -> tuple[Path, str]:
    """A git repository of the fixture core: the release tag on the first commit, a later commit
    on top (so HEAD is not what is laid out)."""
    repo = tmp_path / "lean4"
    shutil.copytree(CORE, repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the release")
    tagged = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "-a", TAG, "-m", "release candidate")  # annotated, as Lean's release tags are
    (repo / "src" / "Init" / "Prelude.lean").write_text("prelude\ndef fxLater : Nat := 0\n")
    git(repo, "commit", "-qam", "a later commit")
    return repo, tagged


def _core_sources(tmp_path: Path, **change) -> Path:
    """bench/sources/mathlib.yaml's lean4 entry (its patterns, root and tag), laid out under tmp_path."""
    [entry] = [s for s in yaml.safe_load(MATHLIB_SOURCES.read_text())["sources"] if s["name"] == "lean4"]
    entry = entry | {"path": "corpora/lean4"} | change
    path = tmp_path / "core.yaml"
    path.write_text(yaml.safe_dump({"sources": [entry]}))
    return path


def test_the_sources_file_pins_what_mathlibs_commit_uses() -> None:
    """Batteries at the commit Mathlib's lake-manifest.json pins, Lean core at its lean-toolchain's
    tag; each laid out under build/corpora; core's patterns select Init, Std and Lean only."""
    specs = {s.name: s for s in upstream_specs(MATHLIB_SOURCES)}
    assert list(specs) == ["mathlib", "batteries", "lean4", "stacks"]  # stacks: the embedder recipe's training corpus
    assert specs["batteries"].commit == "0ecf8993df88c044962426c2cbca0de5717d6150"
    core = specs["lean4"]
    assert (core.upstream.repository, core.upstream.tag, core.upstream.root) == ("leanprover/lean4", TAG, "src")
    for name, spec in specs.items():
        assert source_dir(MATHLIB_SOURCES, spec).parent == ROOT / "build" / "corpora", name
    chosen = [pattern_regex(p) for p in core.upstream.files]
    for path in ("src/Init.lean", "src/Init/Data/List/Basic.lean", "src/Std/Data/HashMap.lean", "src/Lean/Elab/Command.lean"):
        assert any(r.match(path) for r in chosen), path
    for path in ("src/Lake/Build.lean", "tests/lean/run/1.lean", "stage0/src/Init/Prelude.lean", "src/Leanc.lean"):
        assert not any(r.match(path) for r in chosen), path
    alone = upstream_specs(ROOT / "bench" / "sources" / "mathlib-alone.yaml")
    assert alone == [specs["mathlib"], specs["stacks"]]  # one layout serves both files


@pytest.mark.parametrize("given", ["worktree", "file URL"])
def test_get_corpus_lays_out_core_from_its_tag_below_src(tmp_path: Path, fake_core, capsys, given) -> None:
    repo, tagged = fake_core
    sources = _core_sources(tmp_path)
    src = {"worktree": str(repo), "file URL": repo.as_uri()}[given]
    assert main(["get-corpus", src, "--sources", str(sources)]) == 0
    out = capsys.readouterr().out.splitlines()
    corpus = tmp_path / "corpora" / "lean4"
    assert re.fullmatch(rf"lean4: 8 files \(0\.0 MB\) of leanprover/lean4 at {tagged[:12]} \(tag {TAG}\) "
                        rf"\(Apache-2\.0\) laid out in [0-9.]+ s: {re.escape(str(corpus))}", out[0]), out
    assert out[1] == f"lean4: pinned by tag only; pin the commit in {sources}: commit: {tagged}"
    assert sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file()) == LAID_OUT
    assert "fxLater" not in (corpus / "Init" / "Prelude.lean").read_text()  # the tag's commit, not HEAD
    assert f"tag: {TAG}\nroot: src\n" in (corpus / "UPSTREAM").read_text()
    [source], _ = load_sources(sources)
    assert (pin_source(source).commit, pin_source(source).files) == (tagged, 7)  # the manifest records it
    modules = set(extract_lean_tree(corpus, "lean4").declarations["module"].to_pylist())
    assert modules == {"Init.Prelude", "Init.Data.List.Basic", "Std.Data.FxMap", "Lean.Elab.FxCommand"}


def test_a_commit_beside_the_tag_is_checked_against_it(tmp_path: Path, fake_core) -> None:
    repo, tagged = fake_core
    [spec] = upstream_specs(_core_sources(tmp_path, commit=tagged))
    assert layout(repo, spec, tmp_path / "a").commit == tagged
    later = git(repo, "rev-parse", "HEAD")
    [spec] = upstream_specs(_core_sources(tmp_path, commit=later))
    with pytest.raises(LayoutError, match=f"tag {TAG} of .* names commit {tagged}, not the pinned {later}"):
        layout(repo, spec, tmp_path / "b")
    git(repo, "tag", "-d", TAG)
    [spec] = upstream_specs(_core_sources(tmp_path))
    with pytest.raises(LayoutError, match=f"has no tag {TAG} of leanprover/lean4: fetch it"):
        layout(repo, spec, tmp_path / "c")
    [spec] = upstream_specs(_core_sources(tmp_path, upstream={**spec.upstream.model_dump(exclude_none=True),
                                                              "files": ["src/Init/**.lean", "tests/**.lean"]}))
    with pytest.raises(LayoutError, match="tests/FxTest.lean is selected but lies outside the corpus root src/"):
        layout(repo, spec.model_copy(update={"commit": tagged}), tmp_path / "d")
    assert not any((tmp_path / d).exists() for d in "bcd")


def test_get_corpus_needs_a_name_for_one_repository_among_several(tmp_path: Path, capsys) -> None:
    code = main(["get-corpus", str(tmp_path), "--sources", str(MATHLIB_SOURCES)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "several sources with an upstream (mathlib, batteries, lean4, stacks): choose" in err


@pytest.fixture(scope="module")
def core_run():
    return extract_lean_tree(CORE / "src", "lean4")


def test_core_syntax_reads_without_errors_or_garbage(core_run) -> None:
    """`prelude`, `module`/`public section`, `set_option … in`, `@[extern]` and `opaque`, indented
    `mutual` blocks, `builtin_initialize`, `syntax`/`macro_rules`/`macro`, `register_builtin_option`
    and `unsafe`: the declarations are read, the commands that declare nothing add no row."""
    rows = {r["full_name"]: r for r in core_run.declarations.to_pylist()}
    assert core_run.errors.num_rows == 0
    assert all(re.fullmatch(r"[\w.'!?]+", n) for n in rows), sorted(rows)
    mutual = {n: (rows[n]["kind"], rows[n]["signature"]) for n in ("FxEven", "FxOdd", "fxIsEven", "fxIsOdd")}
    assert mutual == {"FxEven": ("inductive", ": FxNat → Prop"), "FxOdd": ("inductive", ": FxNat → Prop"),
                      "fxIsEven": ("def", ": FxNat → Bool"), "fxIsOdd": ("def", ": FxNat → Bool")}
    assert rows["FxEven"]["docstring"] == "Evenness, defined together with oddness."
    assert {"FxEven.zero", "FxEven.succ", "FxOdd.succ"} <= rows.keys()
    assert (rows["FxHandle"]["kind"], rows["FxHandle"]["signature"]) == ("opaque", ": NonemptyType.{0}")
    assert (rows["FxHandle.mk"]["kind"], rows["FxHandle.mk"]["line_start"]) == ("opaque", 28)
    assert rows["FxNat.add"]["is_protected"] and rows["FxNat.add"]["docstring"] == "Addition on `FxNat`, implemented natively."
    assert rows["Lean.Elab.Fx.fxSafe"]["attributes"] == ["implemented_by fxUnsafe"]
    assert rows["FxList.fx_succ_le_iff"]["signature"] == "{m n : Nat} : Nat.succ m ≤ n ↔ m < n"
    assert not any("fx_list_tac" in n or "fx_trivial" in n or "fx.verbose" in n or "Ref" in n for n in rows)


def test_a_name_two_corpora_declare_is_one_node_and_an_errors_row(core_run) -> None:
    """Lean names are one name space across the libraries: `lean:<name>` whatever corpus declares
    it; a name declared twice keeps the first corpus's row, the other is recorded."""
    [twin] = [r for r in core_run.declarations.to_pylist() if r["full_name"] == "FxList.fx_succ_le_iff"]
    other = pa.Table.from_pylist([twin | {"corpus": "mathlib", "module": "Mathlib.Fx", "file": "Mathlib/Fx.lean",
                                          "line_start": 3, "decl_id": "0" * 16}], schema=DECLARATIONS)
    mathlib = type(core_run)(other, core_run.dependencies.slice(0, 0), core_run.errors)
    merged = merge_extractions([core_run, mathlib], [])
    [row] = merged.errors.to_pylist()
    assert (row["corpus"], row["file"], row["line"], row["stage"]) == ("mathlib", "Mathlib/Fx.lean", 3, "extract_lean")
    assert row["reason"] == ("FxList.fx_succ_le_iff is declared in corpus lean4 too (Init/Data/List/Basic.lean:31); "
                             "its node lean:FxList.fx_succ_le_iff is built from that one")
    nodes = build_nodes(merged.declarations, None).to_pylist()
    [node] = [n for n in nodes if n["node_id"] == lean_node_id("FxList.fx_succ_le_iff")]
    assert (node["corpus"], node["file"]) == ("lean4", "Init/Data/List/Basic.lean")
    assert len(nodes) == core_run.declarations.num_rows  # nothing else collides
    assert merge_extractions([core_run], []).errors.num_rows == 0
