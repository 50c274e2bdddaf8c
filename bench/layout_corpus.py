"""Lays out a pinned LaTeX corpus from a git mirror of its public repository, outside this repository.

The sources file names the corpus (`bench/sources/<name>.yaml`: path, commit and `upstream`:
repository, licence, licence file, file patterns). The files of the pinned commit that match the
patterns, and the licence file, are extracted with `git archive` into a staging directory beside
the target, a `COMMIT` file is written (what `sources.pin_source` verifies), and the directory is
renamed into place. A target that already holds the pinned commit is left as it is.

    .venv/bin/python -m bench.layout_corpus bench/sources/hott-book.yaml --git-dir GIT_DIR [--out DIR]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from mathindex.schemas.manifest import SourcesFile, SourceSpec

ROOT = Path(__file__).resolve().parents[1]


class LayoutError(RuntimeError):
    """The corpus cannot be laid out as pinned (missing commit, licence file or matching files)."""


def pattern_regex(pattern: str) -> re.Pattern:
    """A file pattern as a regex over repository paths: `**` spans directories, `*` and `?` do not."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _git(git_dir: Path, *args: str) -> str:
    out = subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise LayoutError(f"git {' '.join(args[:2])} failed in {git_dir}: {out.stderr.strip().splitlines()[-1:]}")
    return out.stdout


def selected_files(git_dir: Path, spec: SourceSpec) -> list[str]:
    """The pinned commit's files matching the upstream patterns, sorted; LayoutError when none do."""
    if spec.upstream is None or spec.commit is None:
        raise LayoutError(f"source {spec.name!r} has no upstream repository and commit to lay out from")
    _git(git_dir, "cat-file", "-e", spec.commit + "^{commit}")
    names = _git(git_dir, "ls-tree", "-r", "--name-only", spec.commit).splitlines()
    if spec.upstream.license_file not in names:
        raise LayoutError(f"licence file {spec.upstream.license_file!r} is not in {spec.upstream.repository} at {spec.commit}")
    regexes = [pattern_regex(p) for p in spec.upstream.files]
    files = sorted(n for n in names if any(r.match(n) for r in regexes))
    if not files:
        raise LayoutError(f"no file of {spec.upstream.repository} at {spec.commit} matches {spec.upstream.files}")
    return files


def layout(git_dir: Path, spec: SourceSpec, out: Path) -> int:
    """Extracts the selected files (and the licence file) into `out`; returns the number of files."""
    out = out.resolve()
    if out.is_relative_to(ROOT):
        raise LayoutError(f"{out} is inside the repository; corpora are laid out outside it")
    commit_file = out / "COMMIT"
    if commit_file.is_file() and commit_file.read_text().strip() == spec.commit:
        return len(list(out.rglob("*.tex")))
    if out.exists():
        raise LayoutError(f"{out} exists and does not hold commit {spec.commit}; remove it first")
    files = selected_files(git_dir, spec)
    wanted = sorted({*files, spec.upstream.license_file})
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
    try:
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", spec.commit, "--", *wanted],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(staging)], input=archive, check=True)
        (staging / "COMMIT").write_text(spec.commit + "\n")
        (staging / "UPSTREAM").write_text(
            f"repository: {spec.upstream.repository}\ncommit: {spec.commit}\n"
            f"license: {spec.upstream.license}\nlicense_file: {spec.upstream.license_file}\n")
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return len(files)


def source_dir(sources_file: Path, spec: SourceSpec) -> Path:
    """Where the sources file says the corpus lies (its path, relative to the sources file)."""
    return (sources_file.parent / spec.path).resolve()


def load_specs(sources_file: Path) -> list[SourceSpec]:
    """The sources of a sources file that carry an upstream repository."""
    parsed = SourcesFile.model_validate(yaml.safe_load(sources_file.read_text(encoding="utf-8")))
    specs = [s for s in parsed.sources if s.upstream is not None]
    if not specs:
        raise LayoutError(f"{sources_file} names no source with an upstream repository")
    return specs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sources", type=Path, help="a sources file under bench/sources/")
    ap.add_argument("--git-dir", type=Path, required=True, help="a git mirror of the upstream repository")
    ap.add_argument("--out", type=Path, default=None, help="target directory (default: the source's path)")
    args = ap.parse_args()
    try:
        for spec in load_specs(args.sources):
            out = args.out or source_dir(args.sources, spec)
            n = layout(args.git_dir, spec, out)
            print(f"{spec.name}: {n} files of {spec.upstream.repository}@{spec.commit[:12]} "
                  f"({spec.upstream.license}) under {out}")
    except (LayoutError, OSError, ValueError, subprocess.CalledProcessError) as exc:
        print(f"layout_corpus: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
