"""Query encoding without torch: an fp32 ONNX embedder's checked exports and its saved tokenizer.

A process that only encodes queries (`mathindex serve`) needs neither torch nor transformers nor
sentence-transformers once the model's ONNX export, its packed export (embed/onnx.py) and the query
files beside them (`onnx.QUERY_FILE`, `onnx.TOKENIZER_FILE`, written by the process that made the
packed export) are in the root's cache: importing those three libraries and loading the model was
about 440 MB of the server's memory and a few seconds of its start. `OnnxQueryEmbedder.open` gives
such an embedder, or None when something is missing (then the caller loads the full
`SentenceTransformerEmbedder`, which writes the files for the next start).

The vectors are the full embedder's ONNX vectors: the same tokens (the fast tokenizer as that
embedder sets it for queries), the same batches and padding, the same export and pooling.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from mathindex.cache.shards import verify
from mathindex.embed import onnx
from mathindex.embed.base import MAX_ENCODE_CHARS, EmbedderError
from mathindex.embed.embedder import SentenceTransformerEmbedder, length_batches, model_revision
from mathindex.embed.models import embedder_name, entry_name


def token_rows(tokenizer, texts: list[str]) -> dict[str, list[list[int]]]:
    """input_ids, attention_mask and token_type_ids of each text (cut at MAX_ENCODE_CHARS, then
    truncated as `tokenizer`, a `query_tokenizer`, is set; not padded). A Rust tokenizer is not to be
    shared between threads: the caller holds its lock."""
    texts = [t[:MAX_ENCODE_CHARS] for t in texts]
    rows = tokenizer.encode_batch(texts) if len(texts) > 1 else [tokenizer.encode(texts[0])]
    return {"input_ids": [r.ids for r in rows], "attention_mask": [r.attention_mask for r in rows],
            "token_type_ids": [r.type_ids for r in rows]}


class OnnxQueryEmbedder:
    """`encode(texts)` as SentenceTransformerEmbedder(backend="onnx").encode with one thread, from
    files only. Its `name`, `revision` and `dim` are the full embedder's, so indexes and embedding
    caches accept it."""

    uses_torch = False
    int8 = bf16 = False
    backend = "onnx"
    packer = None  # the server's PackedEncoder (serve/encoder.py) when it packs this embedder's queries
    # as the full embedder's, so that a call of several texts is batched and padded alike
    batch_tokens, max_batch = SentenceTransformerEmbedder.batch_tokens, SentenceTransformerEmbedder.max_batch

    def __init__(self, export_dir: Path, query: dict):
        self.export_dir = export_dir
        self.name, self.revision, self.dim = query["name"], query["revision"], int(query["dim"])
        self.max_seq_length = int(query["max_seq_length"])
        self.pad_id, self.padding_side = int(query["pad_id"]), query["padding_side"]
        self.onnx_file = export_dir / onnx.FP32_FILE
        self._tokenizer = self.query_tokenizer()
        self._lock = threading.Lock()  # a Rust tokenizer is not shared between threads
        self._session = None

    @classmethod
    def open(cls, model: Path, onnx_root: Path) -> "OnnxQueryEmbedder | None":
        """The query embedder of the model directory `model` (hashed for its revision) from its
        exports under `onnx_root`, or None (`open_named`)."""
        try:
            revision = model_revision(model)
            name = embedder_name(model, revision)
        except EmbedderError:
            return None
        return cls.open_named(name, revision, onnx_root)

    @classmethod
    def open_named(cls, name: str, revision: str, onnx_root: Path) -> "OnnxQueryEmbedder | None":
        """The query embedder of the model `name` at `revision` (as an index's sidecar records them)
        from the first of its exports under `onnx_root` (`onnx.query_export_dirs`) whose files,
        passed checks and query files are all there; None when none is."""
        for final in onnx.query_export_dirs(Path(onnx_root) / entry_name(name, revision)):
            found = cls._from_export(final, name, revision)
            if found is not None:
                return found
        return None

    @classmethod
    def _from_export(cls, final: Path, name: str, revision: str) -> "OnnxQueryEmbedder | None":
        needed = (onnx.FP32_FILE, onnx.PACKED_FILE, onnx.CHECK_FILE, onnx.PACKED_CHECK_FILE, onnx.QUERY_FILE,
                  onnx.TOKENIZER_FILE)
        used = [f for f in needed if f != onnx.FP32_FILE]  # what a query runs on (fp32 is not read here)
        if not all((final / f).is_file() for f in needed) or not verify(final, used, remove=False):
            return None  # missing, or damaged (logged): the full embedder checks and remakes them
        try:
            checks = [json.loads((final / f).read_text()) for f in (onnx.CHECK_FILE, onnx.PACKED_CHECK_FILE)]
            query = json.loads((final / onnx.QUERY_FILE).read_text())
        except (OSError, ValueError):
            return None
        if not all(c.get("ok") for c in checks) or (query.get("name"), query.get("revision")) != (name, revision):
            return None
        return cls(final, query)

    def info(self) -> dict:
        """name, revision, dim and normalisation, as recorded in manifests and index sidecars."""
        return {"name": self.name, "revision": self.revision, "dim": self.dim, "normalised": True}

    def query_tokenizer(self):
        """A new copy of the tokenizer (a `tokenizers.Tokenizer`, truncating at max_seq_length)."""
        return Tokenizer.from_file(str(self.export_dir / onnx.TOKENIZER_FILE))

    def packed_onnx(self) -> Path:
        return self.export_dir / onnx.PACKED_FILE

    def tokenise(self, texts: list[str]) -> dict[str, list[list[int]]]:
        """input_ids, attention_mask and token_type_ids of each text (truncated, not padded)."""
        with self._lock:
            return token_rows(self._tokenizer, texts)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit float32 vectors (len(texts), dim), row-aligned with `texts`: the texts in batches
        by length (`embedder.length_batches`), each padded and run on one thread."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            if self._session is None:  # made on first use: a server runs the packed export instead
                self._session = onnx.session(self.onnx_file, 1)
        enc = self.tokenise(texts)
        for idx in length_batches([len(ids) for ids in enc["input_ids"]], self.batch_tokens, self.max_batch):
            out[idx] = onnx.run(self._session, onnx.pad(enc, idx, self.pad_id, self.padding_side))
        return out
