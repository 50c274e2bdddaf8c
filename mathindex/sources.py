"""Reading and pinning release inputs: every corpus is hashed by content before it is read."""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from mathindex.schemas.manifest import CorpusPin, SourcesFile, SourceSpec, SuitePin, SuiteSpec

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCES = PACKAGE_ROOT / "data" / "sources.yaml"
INPUT_SUFFIXES = {"lean": (".lean",), "latex": (".tex", ".xml")}


class SourceError(ValueError):
    """An input that cannot be used as given (missing, unpinned or not matching its pin)."""


@dataclass(frozen=True)
class Source:
    """A corpus to read: its spec with the path resolved, and its tags file if any."""

    spec: SourceSpec
    root: Path
    tags_file: Path | None


def load_sources(path: Path) -> tuple[list[Source], list[SuiteSpec]]:
    """Sources and suites of a sources file; paths resolve relative to the file."""
    if not path.is_file():
        raise SourceError(f"sources file not found: {path}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        parsed = SourcesFile.model_validate(raw)
    except (yaml.YAMLError, ValidationError) as exc:
        first = str(exc).splitlines()
        raise SourceError(f"invalid sources file {path}: {' '.join(first[:3])}") from None
    base = path.parent
    sources = [_resolve(spec, base) for spec in parsed.sources]
    suites = [s.model_copy(update={"path": str((base / s.path).resolve())}) for s in parsed.suites]
    return sources, suites


def sources_from_dirs(lean: list[Path], latex: list[Path]) -> list[Source]:
    """Sources given on the command line (`--lean DIR`, `--latex DIR`)."""
    specs = [SourceSpec(name=_name_of(d, "lean"), kind="lean", path=str(d)) for d in lean]
    specs += [SourceSpec(name=_name_of(d, "latex"), kind="latex", path=str(d)) for d in latex]
    return [_resolve(spec, Path.cwd()) for spec in specs]


def _name_of(d: Path, kind: str) -> str:
    stem = "".join(c if c.isalnum() or c in "._-" else "-" for c in d.resolve().name.lower())
    return f"{stem or kind}".strip("-._") or kind


def _resolve(spec: SourceSpec, base: Path) -> Source:
    root = (base / spec.path).resolve()
    if not root.is_dir():
        raise SourceError(f"source {spec.name!r}: directory not found: {root}")
    tags = None
    if spec.tags:
        tags = (base / spec.tags).resolve()
        if not tags.is_file():
            raise SourceError(f"source {spec.name!r}: tags file not found: {tags}")
    elif (root / "tags" / "tags").is_file():
        tags = root / "tags" / "tags"
    return Source(spec=spec, root=root, tags_file=tags)


def pin_suite(spec: SuiteSpec) -> SuitePin:
    """A suite pinned by the sha256 of its file (None when the file cannot be read)."""
    try:
        digest = hashlib.sha256(Path(spec.path).read_bytes()).hexdigest()
    except OSError:
        digest = None
    return SuitePin(name=spec.name, path=spec.path, sha256=digest)


def input_files(source: Source) -> list[Path]:
    """The files a corpus contributes, sorted by relative path."""
    suffixes = INPUT_SUFFIXES[source.spec.kind]
    files = [p for p in source.root.rglob("*") if p.suffix in suffixes and p.is_file()]
    if source.tags_file is not None:
        files.append(source.tags_file)
    return sorted(files, key=lambda p: p.relative_to(source.root).as_posix() if p.is_relative_to(source.root) else str(p))


def pin_source(source: Source) -> CorpusPin:
    """Hash every input file (path and bytes) and verify any declared commit or sha256."""
    files = input_files(source)
    if not files:
        raise SourceError(f"source {source.spec.name!r}: no {source.spec.kind} files under {source.root}")
    digest = hashlib.sha256()
    for f in files:
        rel = f.relative_to(source.root).as_posix() if f.is_relative_to(source.root) else f.name
        digest.update(rel.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    sha = digest.hexdigest()
    if source.spec.sha256 and source.spec.sha256 != sha:
        raise SourceError(f"source {source.spec.name!r}: content sha256 {sha} does not match the pinned {source.spec.sha256}")
    commit = source.spec.commit
    if commit is not None:
        found = _commit_of(source.root)
        if found != commit:
            raise SourceError(f"source {source.spec.name!r}: found commit {found or 'none'}, pinned {commit}")
    return CorpusPin(name=source.spec.name, kind=source.spec.kind, path=str(source.root), sha256=sha, files=len(files), commit=commit)


def _commit_of(root: Path) -> str | None:
    """The commit a tree was laid out from: a `COMMIT` file at or above root, or git HEAD."""
    for d in (root, *root.parents):
        if (d / "COMMIT").is_file():
            return (d / "COMMIT").read_text().strip()
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None
