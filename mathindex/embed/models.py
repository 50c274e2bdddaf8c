"""Embedding models as pinned release inputs: their revision and the models directory.

A model's revision is a content hash over every file of its directory (relative path and bytes),
so a changed tokenizer or pooling config is a new revision, not only changed weights. Trained and
imported models live in `MODELS_DIR/<name>@<revision[:16]>/` (a release root's `models/`), written
by copying into a hidden temporary directory and renaming, so a reader never sees half a model.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
REVISION_CHARS = 16
_SKIP = {"__pycache__", ".DS_Store"}


class ModelError(ValueError):
    """A one-line, user-facing error about a model directory."""


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


def install_model(src: Path, models_dir: Path, name: str, move: bool = False) -> Path:
    """Puts the model directory `src` at `models_dir/<name>@<rev16>/` (atomically); returns that path.
    An entry that already exists has the same content by construction and is kept as it is."""
    src, models_dir = Path(src), Path(models_dir)
    target = models_dir / entry_name(name, model_revision(src))
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
