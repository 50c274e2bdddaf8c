"""Real models for tests, made offline from the bundled MiniLM."""

from __future__ import annotations

from pathlib import Path


def cut_minilm(path: Path, layers: int) -> Path:
    """Saves the bundled MiniLM cut to its first `layers` transformer layers at `path`."""
    from sentence_transformers import SentenceTransformer

    from mathindex.embed import default_model_path

    model = SentenceTransformer(str(default_model_path()), device="cpu")
    bert = model[0].auto_model
    bert.encoder.layer = bert.encoder.layer[:layers]
    bert.config.num_hidden_layers = layers
    model.save(str(path))
    return path
