"""A file's sha256, read in 1 MiB blocks: what a release's manifest and a sealed cache entry record
of each file (one function for both). It imports nothing of mathindex: the store asks it too."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
