"""bench/layout_corpus.py and the pinned corpora of issue 15: a sources entry with its upstream
repository and licence lays out from a git mirror, outside the repository, at the pinned commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from bench import layout_corpus
from mathindex.schemas.manifest import SourcesFile
from mathindex.sources import load_sources, pin_source

ROOT = Path(__file__).resolve().parents[1]


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture()
def mirror(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "upstream"
    (repo / "ch").mkdir(parents=True)
    (repo / "book.tex").write_text("\\begin{theorem}$a \\over b$\\end{theorem}\n")
    (repo / "ch" / "one.tex").write_text("\\begin{lemma}$\\|f\\| \\le 1$\\end{lemma}\n")
    (repo / "slides.md").write_text("not laid out\n")
    (repo / "LICENSE.md").write_text("CC-BY-SA-4.0\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "book")
    return repo / ".git", _git(repo, "rev-parse", "HEAD")


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
    [spec] = layout_corpus.load_specs(sources)
    out = layout_corpus.source_dir(sources, spec)
    assert layout_corpus.layout(git_dir, spec, out) == 2
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "COMMIT", "LICENSE.md", "UPSTREAM", "book.tex", "ch/one.tex"]
    assert (out / "COMMIT").read_text().strip() == commit
    assert "license: CC-BY-SA-4.0" in (out / "UPSTREAM").read_text()
    [source], _ = load_sources(sources)
    assert pin_source(source).commit == commit  # the COMMIT file is what the release verifies
    assert layout_corpus.layout(git_dir, spec, out) == 2  # laid out already: left as it is
    assert not list(out.parent.glob(".book.staging-*"))


def test_layout_refuses_what_it_cannot_pin(tmp_path: Path, mirror) -> None:
    git_dir, commit = mirror
    [spec] = layout_corpus.load_specs(_sources(tmp_path, commit, ["*.tex"], license_file="COPYING"))
    with pytest.raises(layout_corpus.LayoutError, match="licence file 'COPYING'"):
        layout_corpus.layout(git_dir, spec, tmp_path / "a")
    [spec] = layout_corpus.load_specs(_sources(tmp_path, commit, ["*.pdf"]))
    with pytest.raises(layout_corpus.LayoutError, match="no file"):
        layout_corpus.layout(git_dir, spec, tmp_path / "b")
    [spec] = layout_corpus.load_specs(_sources(tmp_path, "0" * 40, ["*.tex"]))
    with pytest.raises(layout_corpus.LayoutError, match="cat-file"):
        layout_corpus.layout(git_dir, spec, tmp_path / "c")
    [spec] = layout_corpus.load_specs(_sources(tmp_path, commit, ["*.tex"]))
    with pytest.raises(layout_corpus.LayoutError, match="inside the repository"):
        layout_corpus.layout(git_dir, spec, ROOT / "build" / "corpus")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_pattern_regex() -> None:
    r = layout_corpus.pattern_regex
    assert r("*.tex").match("a.tex") and not r("*.tex").match("d/a.tex")
    assert r("tex/**.tex").match("tex/x/y.tex") and not r("tex/**.tex").match("other/y.tex")


def test_cli_exit_code_and_one_line_error(tmp_path: Path, mirror, capsys) -> None:
    git_dir, commit = mirror
    sources = _sources(tmp_path, commit, ["*.pdf"])
    import sys

    argv = sys.argv
    sys.argv = ["layout_corpus.py", str(sources), "--git-dir", str(git_dir)]
    try:
        assert layout_corpus.main() == 2
    finally:
        sys.argv = argv
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("layout_corpus: no file")


@pytest.mark.parametrize("name", ["hott-book", "napkin", "lebl-ra"])
def test_issue15_corpora_are_pinned_with_their_licence(name: str) -> None:
    parsed = SourcesFile.model_validate(yaml.safe_load((ROOT / "bench" / "sources" / f"{name}.yaml").read_text()))
    [spec] = parsed.sources
    assert spec.kind == "latex" and spec.commit and len(spec.commit) == 40
    assert spec.upstream is not None and spec.upstream.license.startswith("CC-BY-SA")
    assert spec.upstream.license_file and spec.upstream.files
