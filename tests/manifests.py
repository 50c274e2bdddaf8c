"""A complete manifest, as `store.read_manifest` reads it, for tests that make a release by hand."""

from __future__ import annotations


def manifest_json(release_id: str = "20261201T000000Z-0123abcd", **fields) -> dict:
    """The smallest manifest that validates (`schemas.manifest.Manifest`), with `fields` over it."""
    return {"release_id": release_id, "code_version": "0", "corpora": [],
            "embedder": {"name": "m", "revision": "r", "dim": 3, "normalised": True}, "vector_index": {},
            "formula_index": {"formulas": 0}, "stages": {}, "row_counts": {}, "files": {}, "bench": {},
            "gate": {"passed": True}, "published": True, **fields}  # fmt: skip
