"""Laying out pinned corpora from their upstream repositories (`mathindex.upstream`, run by
`mathindex get-corpus` and bench/layout_corpus.py): the pinned commit's selected files, from a
clone, a git directory or a URL, and the one-line refusals. Mathlib is played by a small fake
repository of the test's own Lean files, pinned at a commit of its own through a sources file
that copies bench/sources/mathlib.yaml's upstream patterns (no Mathlib file is ever used here)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from bench import layout_corpus
from mathindex.cli import main
from mathindex.lean.descriptions import TITLE_LISTS, TOPIC_LISTS
from mathindex.schemas.manifest import SourcesFile
from mathindex.sources import load_sources, pin_source
from mathindex.upstream import LayoutError, check_target, layout, pattern_regex, source_dir, upstream_specs
from tests.git_fixture import git

ROOT = Path(__file__).resolve().parents[1]
MATHLIB_SOURCES = ROOT / "bench" / "sources" / "mathlib.yaml"
PINNED = "93594942ef3b93fae5272d7bf368676ff40f8eb1"


def _commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def _write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)


# -- a LaTeX corpus (bench/layout_corpus.py) -----------------------------------------------------


@pytest.fixture()
def mirror(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "upstream"
    repo.mkdir()
    _write(repo, {"book.tex": "\\begin{theorem}$a \\over b$\\end{theorem}\n",
                  "ch/one.tex": "\\begin{lemma}$\\|f\\| \\le 1$\\end{lemma}\n",
                  "slides.md": "not laid out\n", "LICENSE.md": "CC-BY-SA-4.0\n"})
    git(repo, "init", "-q")
    return repo / ".git", _commit_all(repo, "book")


def _sources(tmp_path: Path, commit: str, files: list[str], license_file: str = "LICENSE.md") -> Path:
    path = tmp_path / "sources" / "book.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump({"sources": [{
        "name": "book", "kind": "latex", "path": "../corpora/book", "commit": commit,
        "upstream": {"repository": "someone/book", "license": "CC-BY-SA-4.0",
                     "license_file": license_file, "files": files}}]}))
    return path


def test_layout_extracts_the_pinned_files_and_the_pin_verifies(tmp_path: Path, mirror) -> None:
    git_dir, commit = mirror
    sources = _sources(tmp_path, commit, ["*.tex", "ch/**.tex"])
    [spec] = upstream_specs(sources)
    out = source_dir(sources, spec)
    done = layout(git_dir, spec, out)
    assert (done.files, done.reused) == (3, False)  # two .tex files and the licence file
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "COMMIT", "LICENSE.md", "UPSTREAM", "book.tex", "ch/one.tex"]
    assert (out / "COMMIT").read_text().strip() == commit
    assert "license: CC-BY-SA-4.0" in (out / "UPSTREAM").read_text()
    [source], _ = load_sources(sources)
    assert pin_source(source).commit == commit  # the COMMIT file is what the release verifies
    again = layout(git_dir, spec, out)
    assert (again.files, again.reused) == (3, True)  # laid out already: left as it is
    assert not list(out.parent.glob(".book.staging-*"))


def test_a_recipe_s_training_corpus_is_laid_out_as_a_source_is(tmp_path: Path, mirror) -> None:
    """An embedder recipe's training corpus with an upstream (bench/sources/mathlib.yaml's Stacks
    Project) is laid out by `get-corpus --name` as the sources are."""
    git_dir, commit = mirror
    sources = _sources(tmp_path, commit, ["*.tex"])
    raw = yaml.safe_load(sources.read_text())
    book = raw["sources"].pop()
    raw["sources"] = [{"name": "notes", "kind": "latex", "path": "../notes"}]
    raw["embedder"] = {"corpora": [book]}
    sources.write_text(yaml.safe_dump(raw))
    [spec] = upstream_specs(sources, "book")
    done = layout(git_dir, spec, source_dir(sources, spec))
    assert done.files == 2 and (source_dir(sources, spec) / "COMMIT").read_text().strip() == commit
    with pytest.raises(LayoutError, match="no source named 'notes'"):
        upstream_specs(sources, "notes")  # no upstream: nothing to lay out


def test_layout_refuses_what_it_cannot_pin(tmp_path: Path, mirror) -> None:
    git_dir, commit = mirror
    [spec] = upstream_specs(_sources(tmp_path, commit, ["*.tex"], license_file="COPYING"))
    with pytest.raises(LayoutError, match="licence file 'COPYING'"):
        layout(git_dir, spec, tmp_path / "a")
    [spec] = upstream_specs(_sources(tmp_path, commit, ["*.pdf"]))
    with pytest.raises(LayoutError, match="is not a checkout of someone/book"):
        layout(git_dir, spec, tmp_path / "b")
    [spec] = upstream_specs(_sources(tmp_path, "0" * 40, ["*.tex"]))
    with pytest.raises(LayoutError, match=f"does not have the pinned commit {'0' * 40} of someone/book"):
        layout(git_dir, spec, tmp_path / "c")
    [spec] = upstream_specs(_sources(tmp_path, commit, ["*.tex"]))
    with pytest.raises(LayoutError, match="inside the repository"):
        layout(git_dir, spec, ROOT / "data" / "corpus")
    check_target(ROOT / "build" / "corpora" / "book")  # build/ (ignored by git) is allowed
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "mine.tex").write_text("x")
    with pytest.raises(LayoutError, match="no COMMIT file"):  # never overwrites what it did not lay out
        layout(git_dir, spec, tmp_path / "d")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert (tmp_path / "d" / "mine.tex").read_text() == "x"


def test_pattern_regex() -> None:
    assert pattern_regex("*.tex").match("a.tex") and not pattern_regex("*.tex").match("d/a.tex")
    assert pattern_regex("tex/**.tex").match("tex/x/y.tex") and not pattern_regex("tex/**.tex").match("other/y.tex")


def test_bench_script_exit_code_and_one_line_error(tmp_path: Path, mirror, capsys, monkeypatch) -> None:
    git_dir, commit = mirror
    monkeypatch.setattr(sys, "argv", ["layout_corpus.py", str(_sources(tmp_path, commit, ["*.pdf"])),
                                      "--git-dir", str(git_dir)])
    assert layout_corpus.main() == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("layout_corpus: ") and "is not a checkout of someone/book" in err[0]


@pytest.mark.parametrize("name", ["hott-book", "napkin", "lebl-ra"])
def test_issue15_corpora_are_pinned_with_their_licence(name: str) -> None:
    parsed = SourcesFile.model_validate(yaml.safe_load((ROOT / "bench" / "sources" / f"{name}.yaml").read_text()))
    [spec] = parsed.sources
    assert spec.kind == "latex" and spec.commit and len(spec.commit) == 40
    assert spec.upstream is not None and spec.upstream.license.startswith("CC-BY-SA")
    assert spec.upstream.license_file and spec.upstream.files


# -- Mathlib: `mathindex get-corpus` (what `make mathlib` runs) on a fake Mathlib -----------------

FAKE_MATHLIB = {  # the test's own Lean text, laid out as Mathlib lays its files out
    "Mathlib.lean": "import Mathlib.Algebra.Fake\n",
    "Mathlib/Algebra/Fake.lean": "/-- A fake lemma. -/\ntheorem fake_add_comm (a b : Nat) : a + b = b + a := Nat.add_comm a b\n",
    "Mathlib/Algebra/README.md": "not read by a release\n",
    "docs/Conv/Guide.lean": "example : 1 + 1 = 2 := rfl\n",
    "docs/100.yaml": "1:\n  title: A fake theorem\n  decl: fake_add_comm\n",
    "docs/workflows.md": "not read by a release\n",
    "Archive/Other.lean": "theorem not_laid_out : True := trivial\n",
    "LICENSE": "Apache License, Version 2.0 (a stand-in)\n",
}
LAID_OUT = ["COMMIT", "LICENSE", "Mathlib.lean", "Mathlib/Algebra/Fake.lean", "UPSTREAM", "docs/100.yaml",
            "docs/Conv/Guide.lean"]


@pytest.fixture()
def fake_mathlib(tmp_path: Path) -> tuple[Path, str]:
    """A clone whose first commit plays the pinned one; HEAD is a later commit that changes a file."""
    repo = tmp_path / "mathlib4"
    repo.mkdir()
    _write(repo, FAKE_MATHLIB)
    git(repo, "init", "-q")
    pinned = _commit_all(repo, "the pinned commit")
    _write(repo, {"Mathlib/Algebra/Fake.lean": "theorem later : True := trivial\n"})
    _commit_all(repo, "a later commit")
    return repo, pinned


def _mathlib_sources(tmp_path: Path, commit: str) -> Path:
    """bench/sources/mathlib.yaml with `commit` pinned and its corpus under tmp_path (same patterns)."""
    doc = yaml.safe_load(MATHLIB_SOURCES.read_text())
    doc["sources"] = [doc["sources"][0] | {"commit": commit, "path": "corpora/mathlib4"}]  # Mathlib's entry alone
    doc["suites"] = []
    doc.pop("embedder")  # its training corpus has an upstream too
    path = tmp_path / "mathlib.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _get(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["get-corpus", *args])
    out, err = capsys.readouterr()
    return code, out.strip(), err.strip()


@pytest.mark.parametrize("given", ["worktree", "git dir", "file URL"])
def test_get_corpus_lays_out_the_pinned_commit_of_a_fake_mathlib(tmp_path: Path, fake_mathlib, capsys, given) -> None:
    repo, pinned = fake_mathlib
    sources = _mathlib_sources(tmp_path, pinned)
    src = {"worktree": str(repo), "git dir": str(repo / ".git"), "file URL": repo.as_uri()}[given]
    code, out, err = _get(capsys, src, "--sources", str(sources))
    assert code == 0 and err == "", err
    corpus = tmp_path / "corpora" / "mathlib4"
    assert re.fullmatch(rf"mathlib: 5 files \(0\.0 MB\) of leanprover-community/mathlib4 at {pinned[:12]} "
                        rf"\(Apache-2\.0\) laid out in [0-9.]+ s: {re.escape(str(corpus))}", out), out
    assert sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file()) == LAID_OUT
    assert "a + b = b + a" in (corpus / "Mathlib/Algebra/Fake.lean").read_text()  # the pinned commit, not HEAD
    assert (tmp_path / "corpora" / "mathlib4.git").is_dir() == (given == "file URL")  # only a URL is fetched
    [source], _ = load_sources(sources)
    pin = pin_source(source)
    assert (pin.commit, pin.files) == (pinned, 4)  # the three .lean files and docs/100.yaml: what the release hashes and reads
    code, out, _ = _get(capsys, src, "--sources", str(sources))
    assert code == 0 and out.endswith(f"already laid out: {corpus}")


def test_get_corpus_refusals_are_one_line_exit_2(tmp_path: Path, fake_mathlib, mirror, capsys) -> None:
    repo, pinned = fake_mathlib
    sources = _mathlib_sources(tmp_path, pinned)
    plain = tmp_path / "plain"
    plain.mkdir()
    cases = {
        str(tmp_path / "nowhere"): "nowhere: no such directory",
        str(plain): f"{plain} is not a git checkout",
        str(mirror[0].parent): f"{mirror[0].parent} is not a checkout of leanprover-community/mathlib4",
        "https://127.0.0.1:9/mathlib4": f"could not fetch commit {pinned} from https://127.0.0.1:9/mathlib4",
    }
    for src, says in cases.items():
        code, out, err = _get(capsys, src, "--sources", str(sources))
        assert code == 2 and out == "" and len(err.splitlines()) == 1 and says in err, (src, err)
    (tmp_path / "other").mkdir()
    other = _mathlib_sources(tmp_path / "other", "1" * 40)
    code, _, err = _get(capsys, str(repo), "--sources", str(other))
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{repo} does not have the pinned commit {'1' * 40} of leanprover-community/mathlib4" in err
    assert not (tmp_path / "corpora").exists() or not any((tmp_path / "corpora").iterdir())


def test_mathlib_sources_file_reads_only_the_repository_and_its_build_folder() -> None:
    """bench/sources/mathlib.yaml (what `make mathlib` builds): the pinned commit, the corpus under
    build/, the suite committed beside its licence note, the curated lists the extractor reads."""
    [spec] = upstream_specs(MATHLIB_SOURCES, "mathlib")  # Batteries and Lean core: tests/test_lean_libraries.py
    assert spec.commit == PINNED and spec.upstream.repository == "leanprover-community/mathlib4"
    assert source_dir(MATHLIB_SOURCES, spec) == ROOT / "build" / "corpora" / "mathlib4"
    parsed = SourcesFile.model_validate(yaml.safe_load(MATHLIB_SOURCES.read_text()))
    [suite] = parsed.suites
    suite_path = (MATHLIB_SOURCES.parent / suite.path).resolve()
    assert suite.name == "mathlibqr-dev" and suite_path == ROOT / "bench" / "suites" / "mathlibqr-dev.json"
    assert "Apache" in (ROOT / "bench" / "suites" / "mathlibqr-dev.NOTICE.md").read_text()
    assert len(json.loads(suite_path.read_text())) == 100
    selected = [pattern_regex(p) for p in spec.upstream.files]
    for curated in (*TITLE_LISTS, *TOPIC_LISTS, "Mathlib.lean", "Mathlib/Order/Lattice.lean", "docs/Conv/Guide.lean"):
        assert any(r.match(curated) for r in selected), curated
    assert not any(r.match("Archive/Imo/Imo1959Q1.lean") or r.match("Mathlib/Algebra/README.md") for r in selected)
