"""embed/queries.py: queries encoded from the checked ONNX exports and the saved tokenizer, without
torch: the full embedder's vectors bit for bit, refused when a file or a passed check is missing,
and a server on such a root never imports torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mathindex.embed import SentenceTransformerEmbedder, default_model_path, onnx
from mathindex.embed.embedder import onnx_dir_for
from mathindex.embed.torch_ops import tokenise
from mathindex.embed.queries import OnnxQueryEmbedder


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """The bundled model's ONNX embedder, its packed export (and so the query files) made."""
    embedder = SentenceTransformerEmbedder(None, progress=False, backend="onnx",
                                           onnx_dir=onnx_dir_for(tmp_path_factory.mktemp("cache")))
    assert embedder.packed_onnx() is not None
    return embedder


def _export_dir(full) -> Path:
    return full.packed_onnx().parent


def test_query_files_are_written_beside_the_packed_export(full):
    query = json.loads((_export_dir(full) / onnx.QUERY_FILE).read_text())
    assert (query["name"], query["revision"], query["dim"]) == (full.name, full.revision, full.dim)
    assert query["max_seq_length"] == full.max_seq_length
    assert (_export_dir(full) / onnx.TOKENIZER_FILE).is_file()


def test_the_light_embedder_gives_the_full_embedders_tokens_and_vectors(full):
    from mathindex.embed.channel import encode_on_one_thread

    light = OnnxQueryEmbedder.open(default_model_path(), Path(os.environ["MATHINDEX_ONNX_DIR"]))
    assert light is not None and light.info() == full.info() and not light.uses_torch
    texts = onnx.PROBE_TEXTS  # one past max_seq_length: truncated alike
    want = tokenise(full.model.tokenizer, texts, full.max_seq_length)
    assert light.tokenise(texts) == {k: want[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    assert np.array_equal(light.encode(texts), encode_on_one_thread(full, texts))  # batched and padded alike
    assert np.array_equal(light.encode([texts[2]]), encode_on_one_thread(full, [texts[2]]))
    assert light.encode([]).shape == (0, full.dim)


@pytest.mark.parametrize("damage", ["missing tokenizer", "failed check", "other model"])
def test_the_light_embedder_is_refused_when_its_files_are_not_all_right(full, tmp_path, damage):
    import shutil

    export = _export_dir(full)
    root = tmp_path / "onnx"
    copy = root / export.parent.name / export.name
    shutil.copytree(export, copy)
    assert OnnxQueryEmbedder.open(default_model_path(), root) is not None
    if damage == "missing tokenizer":
        (copy / onnx.TOKENIZER_FILE).unlink()
    elif damage == "failed check":
        check = json.loads((copy / onnx.PACKED_CHECK_FILE).read_text())
        (copy / onnx.PACKED_CHECK_FILE).write_text(json.dumps({**check, "ok": False}))
    else:
        query = json.loads((copy / onnx.QUERY_FILE).read_text())
        (copy / onnx.QUERY_FILE).write_text(json.dumps({**query, "revision": "0" * 64}))
    assert OnnxQueryEmbedder.open(default_model_path(), root) is None


def test_a_server_on_a_root_with_the_query_files_never_imports_torch(sample_release_root, tmp_path):
    """The second start of a server: the first made the packed export and wrote the query files."""
    from tests.serving import copy_root

    root = copy_root(sample_release_root, tmp_path / "root")
    script = ("import sys\n"
              "from mathindex.serve.app import configure_runtime\n"
              "from mathindex.serve.release import ServedRelease\n"
              "from mathindex.serve.swap import ReleaseHolder\n"
              "configure_runtime()\n"
              "holder = ReleaseHolder(sys.argv[1], opener=ServedRelease)\n"
              "hits = holder.current.search('sum of the first n natural numbers', 5).hits\n"
              "print(type(holder.current.engine.vector.embedder).__name__, 'torch' in sys.modules, len(hits))\n")
    runs = [subprocess.run([sys.executable, "-c", script, str(root)], capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    assert runs[1].stdout.split() == ["OnnxQueryEmbedder", "False", "5"]
