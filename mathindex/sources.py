"""Reading and pinning release inputs: every corpus is hashed by content before it is read. This
module owns the sources file's syntax (its sections are typed in `schemas.manifest.SourcesFile`):
corpora, suites, the informaliser and the embedder recipe.

Allowed roots: an input path (a corpus directory, a tags file, a suite) may resolve anywhere except
`/` itself and the system directories in SYSTEM_DIRS (and anything under them; the temporary
directory excepted); it is refused, naming the entry, before any work. Inside a corpus root, files
are read by `mathindex.corpusfiles` only (confined to the root).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import yaml
from pydantic import ValidationError

from mathindex.corpusfiles import CorpusRoot, digest, list_files, max_bytes_for
from mathindex.errors import SourceError
from mathindex.lean.citations import ROOT_FILES as LEAN_ROOT_FILES
from mathindex.schemas.manifest import (CorpusPin, EmbedderRecipeSpec, ExternalFile, ExternalPin, InformaliserSpec,
                                        SourcesFile, SourceSpec, SuitePin, SuiteSpec)

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCES = PACKAGE_ROOT / "data" / "sources.yaml"
PROMPTS_DIR = PACKAGE_ROOT / "data" / "prompts"  # an informaliser's `prompt: NAME` is PROMPTS_DIR/NAME.md
RECIPE_DEFAULT_BASE = "default"  # an embedder recipe's `base:` naming the bundled model (as `--model default`)
INFORMALISERS: tuple[str, ...] = get_args(InformaliserSpec.model_fields["backend"].annotation)  # rules, http
INPUT_SUFFIXES = {"lean": (".lean",), "latex": (".tex", ".xml")}
SYSTEM_DIRS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin",
               "/sys", "/usr", "/var")


@dataclass(frozen=True)
class Source:
    """A corpus to read: its spec with the path resolved, and its tags file if any."""

    spec: SourceSpec
    root: Path
    tags_file: Path | None


def read_sources_file(path: Path) -> SourcesFile:
    """A sources file parsed and validated, its paths as written (relative to the file); nothing
    checked on disk. SourceError when it is missing or invalid."""
    if not path.is_file():
        raise SourceError(f"sources file not found: {path}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        return SourcesFile.model_validate(raw)
    except yaml.YAMLError as exc:
        raise SourceError(f"invalid sources file {path}: not YAML: {' '.join(str(exc).split())[:200]}") from None
    except ValidationError as exc:
        raise SourceError(f"invalid sources file {path}: {_first_problem(exc)}") from None


def _first_problem(exc: ValidationError) -> str:
    """`where: what (given value)` of a validation error's first problem, on one line."""
    first = exc.errors()[0]
    where = ".".join(str(x) for x in first["loc"] if x != "[key]") or "the file"
    given = first.get("input")
    shown = "" if isinstance(given, (dict, list)) or given is None else f" (given {' '.join(repr(given).split())[:80]})"
    return f"{where}: {first['msg']}{shown}"


def load_sources(path: Path) -> tuple[list[Source], list[SuiteSpec]]:
    """Sources and suites of a sources file; paths resolve relative to the file."""
    parsed = read_sources_file(path)
    return [_resolve(spec, path.parent) for spec in parsed.sources], _suites(parsed, path.parent)


def load_suite_specs(path: Path) -> list[SuiteSpec]:
    """The suites of a sources file alone (its corpora, which may be absent here, are not resolved)."""
    return _suites(read_sources_file(path), path.parent)


def _suites(parsed: SourcesFile, base: Path) -> list[SuiteSpec]:
    """The suite entries with their paths resolved and checked; an external figures file is read
    and checked too (`read_external`), so a bad one stops the build before any work."""
    suites = [s.model_copy(update={"path": str((base / s.path).resolve()),
                                   "external": str((base / s.external).resolve()) if s.external else None})
              for s in parsed.suites]  # fmt: skip
    for s in suites:
        check_allowed(f"suite {s.name!r}", s.path)
        if s.external:
            read_external(s)
    return suites


def read_external(spec: SuiteSpec) -> tuple[ExternalFile, bytes]:
    """The external figures file a suite entry names (`ExternalFile`, YAML) and its bytes; a
    SourceError of one line naming the suite, the file and the first problem when it cannot be used."""
    path = Path(spec.external or "")
    entry = f"suite {spec.name!r}: external figures {path}"
    check_allowed(entry, path)
    try:
        data = path.read_bytes()
        parsed = ExternalFile.model_validate(yaml.safe_load(data.decode("utf-8")))
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{entry}: cannot read it: {exc.strerror if isinstance(exc, OSError) else exc}") from None
    except yaml.YAMLError as exc:
        raise SourceError(f"{entry}: not YAML: {' '.join(str(exc).split())[:200]}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "the file"
        raise SourceError(f"{entry}: {where}: {first['msg']}") from None
    if parsed.suite is not None and parsed.suite != spec.name:
        raise SourceError(f"{entry}: the file is about suite {parsed.suite!r}, not {spec.name!r}")
    return parsed, data


def load_informaliser(path: Path | None, backend: str | None = None) -> InformaliserSpec:
    """The informaliser of a release: the sources file's `informaliser:` section (the rules when
    there is no file, or no section), its backend replaced by `backend` (the `--informaliser`
    option) when given. SourceError when the `http` backend lacks an endpoint or a model."""
    spec = read_sources_file(path).informaliser if path is not None else InformaliserSpec()
    if backend is not None:
        if backend not in INFORMALISERS:
            raise SourceError(f"informaliser {backend!r}: not one of {', '.join(INFORMALISERS)}")
        spec = spec.model_copy(update={"backend": backend})
    lacking = spec.missing()
    if lacking:
        where = f"the informaliser section of {path}" if path is not None else \
            "the informaliser section of a sources file (--sources, instead of --lean/--latex)"
        raise SourceError(f"the http informaliser needs {lacking}: give them in {where} "
                          "(informaliser: {backend: http, endpoint: URL, model: NAME})")
    if spec.backend == "http" and not (PROMPTS_DIR / f"{spec.prompt}.md").is_file():
        raise SourceError(f"informaliser prompt {spec.prompt!r}: no file {PROMPTS_DIR / spec.prompt}.md")
    return spec


def load_embedder_recipe(path: Path | None) -> EmbedderRecipeSpec | None:
    """The sources file's `embedder:` section with its paths resolved (relative to the file) and
    checked: a `base` model directory (or `default`, the bundled model), the `exclude_suites`
    files and the training `corpora` (as `sources:` entries are); None when there is no file or no
    section. SourceError (one line) when one is unusable; whether `base` holds weights is
    `embed.models`' to say (`flows.recipe.check_recipe`)."""
    spec = read_sources_file(path).embedder if path is not None else None
    if spec is None:
        return None
    base = spec.base
    if base != RECIPE_DEFAULT_BASE:
        resolved = (path.parent / Path(base).expanduser()).resolve()
        check_allowed("embedder base", resolved, base)
        if not resolved.is_dir():
            raise SourceError(f"embedder base {base!r}: not a model directory: {resolved} "
                              f"(`{RECIPE_DEFAULT_BASE}` is the bundled model)")
        base = str(resolved)
    suites = []
    for given in spec.exclude_suites:
        resolved = (path.parent / given).resolve()
        check_allowed("embedder exclude_suites", resolved, given)
        if not resolved.is_file():
            raise SourceError(f"embedder exclude_suites: suite file not found: {resolved}")
        suites.append(str(resolved))
    corpora = [_absolute(_resolve(c, path.parent)) for c in spec.corpora]
    return spec.model_copy(update={"base": base, "exclude_suites": suites, "corpora": corpora})


def recipe_sources(spec: EmbedderRecipeSpec) -> list[Source]:
    """The training corpora of a recipe `load_embedder_recipe` read, as sources to pin and extract."""
    return [_resolve(c, Path.cwd()) for c in spec.corpora]


def _absolute(source: Source) -> SourceSpec:
    """A source's entry with its directory (and tags file, when the entry names one) made absolute."""
    tags = str(source.tags_file) if source.spec.tags else None
    return source.spec.model_copy(update={"path": str(source.root), "tags": tags})


def check_allowed(entry: str, path: Path | str, given: str | None = None) -> None:
    """SourceError naming `entry` when `path` resolves to `/` or into a system directory."""
    real = Path(os.path.realpath(path))
    shown = f"path {given!r} resolves to {real}" if given is not None and given != str(real) else f"path {real}"
    if real == Path(real.anchor):
        raise SourceError(f"{entry}: {shown}, the filesystem root; refused (an input may not be / or a system directory)")
    tmp = Path(os.path.realpath(tempfile.gettempdir()))
    if tmp != Path(tmp.anchor) and real.is_relative_to(tmp):
        return
    for d in SYSTEM_DIRS:
        if real.is_relative_to(os.path.realpath(d)) or real.is_relative_to(d):
            raise SourceError(f"{entry}: {shown}, inside the system directory {d}; refused "
                              "(an input may not be / or a system directory)")


def sources_from_dirs(lean: list[Path], latex: list[Path]) -> list[Source]:
    """Sources given on the command line (`--lean DIR`, `--latex DIR`)."""
    specs = [SourceSpec(name=_name_of(d, "lean"), kind="lean", path=str(d)) for d in lean]
    specs += [SourceSpec(name=_name_of(d, "latex"), kind="latex", path=str(d)) for d in latex]
    return [_resolve(spec, Path.cwd()) for spec in specs]


def _name_of(d: Path, kind: str) -> str:
    stem = "".join(c if c.isalnum() or c in "._-" else "-" for c in d.resolve().name.lower())
    return f"{stem or kind}".strip("-._") or kind


def _resolve(spec: SourceSpec, base: Path) -> Source:
    """A source entry checked before any work: an allowed directory holding at least one input file."""
    root = (base / spec.path).resolve()
    check_allowed(f"source {spec.name!r}", root, spec.path)
    if not root.is_dir():
        raise SourceError(f"source {spec.name!r}: directory not found: {root}")
    tags = None
    if spec.tags:
        tags = (base / spec.tags).resolve()
        check_allowed(f"source {spec.name!r} tags", tags, spec.tags)
        if not tags.is_file():
            raise SourceError(f"source {spec.name!r}: tags file not found: {tags}")
    elif (root / "tags" / "tags").is_file():
        tags = root / "tags" / "tags"
    if not list_files(root, INPUT_SUFFIXES[spec.kind]):
        raise SourceError(f"source {spec.name!r}: no {spec.kind} files under {root}")
    return Source(spec=spec, root=root, tags_file=tags)


def pin_suite(spec: SuiteSpec) -> SuitePin:
    """A suite pinned by the sha256 of its file (None when the file cannot be read), with its
    external figures when the entry names a file of them (`read_external`: a bad one raises)."""
    try:
        digest = hashlib.sha256(Path(spec.path).read_bytes()).hexdigest()
    except OSError:
        digest = None
    external = None
    if spec.external:
        parsed, data = read_external(spec)
        external = ExternalPin(path=spec.external, sha256=hashlib.sha256(data).hexdigest(), figures=parsed.figures)
    return SuitePin(name=spec.name, path=spec.path, sha256=digest, external=external)


def input_files(source: Source) -> list[tuple[str, Path]]:
    """(name, path) of the files a corpus contributes, sorted by relative path (the extractors' own
    listing, `corpusfiles.list_files`, and a Lean corpus's root files: lists, bibliography), then its
    tags file (named relative to the root when inside)."""
    files = list_files(source.root, INPUT_SUFFIXES[source.spec.kind])
    if source.spec.kind == "lean":  # the curated lists and the bibliography the corpus-wide pass reads
        extra = [(rel, source.root / rel) for rel in LEAN_ROOT_FILES if (source.root / rel).is_file()]
        files = sorted([*files, *extra], key=lambda e: e[0])
    tags = source.tags_file
    if tags is not None and tags.is_relative_to(source.root):
        files = sorted([*files, (tags.relative_to(source.root).as_posix(), tags)], key=lambda e: e[0])
    elif tags is not None:
        files.append((tags.name, tags))
    return files


def pin_source(source: Source) -> CorpusPin:
    """Hash every input file (name and `corpusfiles.digest`: bytes, or the reason it is refused, as
    extraction reads it) and verify any declared commit or sha256."""
    files = input_files(source)
    if not files:
        raise SourceError(f"source {source.spec.name!r}: no {source.spec.kind} files under {source.root}")
    hasher = hashlib.sha256()
    confined = CorpusRoot.of(source.root)
    for rel, f in files:
        file_root = confined if confined.contains(f) else CorpusRoot.of(f.parent)  # a tags file elsewhere
        file_sha = digest(file_root, f, max_bytes_for(f))
        refused = file_sha.startswith("refused:")
        hasher.update(rel.encode() + b"\0" + (file_sha.encode() if refused else bytes.fromhex(file_sha)))
    sha = hasher.hexdigest()
    if source.spec.sha256 and source.spec.sha256 != sha:
        raise SourceError(f"source {source.spec.name!r}: content sha256 {sha} does not match the pinned {source.spec.sha256}")
    commit, upstream = source.spec.commit, source.spec.upstream
    if commit is not None:
        found = _commit_of(source.root)
        if found != commit:
            raise SourceError(f"source {source.spec.name!r}: found commit {found or 'none'}, pinned {commit}")
    elif upstream is not None and upstream.tag:  # pinned by its release tag: the commit laid out for it
        commit = _commit_of(source.root)
        if commit is None:
            raise SourceError(f"source {source.spec.name!r}: pinned by tag {upstream.tag} but not laid out "
                              "(no COMMIT file): run `mathindex get-corpus` first")
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
