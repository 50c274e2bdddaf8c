"""The ONNX Runtime backend of SentenceTransformerEmbedder on a one-layer cut of the bundled MiniLM:
export and self-check, vectors equal to torch's, cache reuse of the export, fallback to torch."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from mathindex.embed import SentenceTransformerEmbedder
from mathindex.embed import onnx as onnx_backend

TEXTS = [
    "Addition of natural numbers is commutative.",
    "theorem Nat.add_comm (n m : ℕ) : n + m = m + n",
    "x",
    r"For every $\varepsilon > 0$ there is $\delta > 0$ with $|f(x) - f(y)| < \varepsilon$.",
    "A compact subset of a Hausdorff space is closed. " * 60,  # past max_seq_length
]


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    from tests.models import cut_minilm

    return cut_minilm(tmp_path_factory.mktemp("models") / "minilm-1layer", 1)


@pytest.fixture(scope="module")
def torch_embedder(model_path):
    return SentenceTransformerEmbedder(str(model_path), progress=False, workers=1)


@pytest.fixture(scope="module")
def shared_dir(tmp_path_factory):
    """One export directory for the tests that only read the export (it is made once)."""
    return tmp_path_factory.mktemp("onnx")


def onnx_embedder(model_path, onnx_dir, **kw) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(str(model_path), progress=False, backend="onnx", onnx_dir=onnx_dir, **kw)


def checks(onnx_dir) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(onnx_dir.glob("*/*/check.json"))]


def test_export_is_checked_and_gives_torch_vectors_under_the_same_name(model_path, torch_embedder, shared_dir):
    emb = onnx_embedder(model_path, shared_dir, workers=1)
    assert emb.backend == "onnx" and emb.onnx_file is not None and emb.onnx_file.is_file()
    assert (emb.name, emb.revision, emb.dim) == (torch_embedder.name, torch_embedder.revision, torch_embedder.dim)
    assert not list(model_path.rglob("*.onnx"))  # never inside the model directory (its files are its revision)
    [check] = checks(shared_dir)
    assert check["ok"] and check["min_cosine"] >= onnx_backend.MIN_COSINE and check["revision"] == emb.revision
    assert emb.onnx_file.parent.name == onnx_backend.exporter_key()
    a, b = emb.encode(TEXTS), torch_embedder.encode(TEXTS)
    assert a.dtype == np.float32 and a.shape == (len(TEXTS), emb.dim)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert (a * b).sum(axis=1).min() >= onnx_backend.MIN_COSINE


def test_worker_processes_run_the_export(model_path, torch_embedder, shared_dir):
    emb = onnx_embedder(model_path, shared_dir, workers=2, parallel_min=1, max_batch=2)
    a = emb.encode(TEXTS)
    assert emb._pool is None  # stopped after the call
    assert (a * torch_embedder.encode(TEXTS)).sum(axis=1).min() >= onnx_backend.MIN_COSINE


def test_export_is_reused(model_path, tmp_path, monkeypatch):
    first = onnx_embedder(model_path, tmp_path, workers=1)
    stamp = first.onnx_file.stat().st_mtime_ns

    def no_export(*_a, **_k):
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_backend, "export", no_export)
    again = onnx_embedder(model_path, tmp_path, workers=1)
    assert again.backend == "onnx" and again.onnx_file == first.onnx_file
    assert again.onnx_file.stat().st_mtime_ns == stamp and len(checks(tmp_path)) == 1
    assert np.array_equal(again.encode(TEXTS[:2]), first.encode(TEXTS[:2]))


def test_failed_self_check_falls_back_to_torch_and_is_remembered(model_path, torch_embedder, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(onnx_backend, "MIN_COSINE", 1.5)  # no export can pass
    with caplog.at_level(logging.WARNING, logger="mathindex.embed.onnx"):
        emb = onnx_embedder(model_path, tmp_path, workers=1)
    assert emb.backend == "torch" and emb.onnx_file is None and emb.name == torch_embedder.name
    assert "failed the self-check" in caplog.text and "using torch" in caplog.text
    [check] = checks(tmp_path)
    assert check["ok"] is False and check["threshold"] == 1.5
    assert np.allclose(emb.encode(TEXTS[:2]), torch_embedder.encode(TEXTS[:2]), atol=1e-6)
    # the failure is recorded with the export: the next embedder uses torch without exporting again
    monkeypatch.setattr(onnx_backend, "MIN_COSINE", 0.99999)
    monkeypatch.setattr(onnx_backend, "export", lambda *a, **k: (_ for _ in ()).throw(AssertionError("exported again")))
    assert onnx_embedder(model_path, tmp_path, workers=1).backend == "torch"


def test_export_error_falls_back_to_torch(model_path, tmp_path, monkeypatch, caplog):
    def broken(*_a, **_k):
        raise RuntimeError("unsupported operator\nmore detail")

    monkeypatch.setattr(onnx_backend, "export", broken)
    with caplog.at_level(logging.WARNING, logger="mathindex.embed.onnx"):
        emb = onnx_embedder(model_path, tmp_path, workers=1)
    assert emb.backend == "torch"
    [check] = checks(tmp_path)
    assert check == {**check, "ok": False, "error": "RuntimeError: unsupported operator"}
    assert "RuntimeError: unsupported operator" in caplog.text


def test_unsupported_pooling_uses_torch(model_path, tmp_path, monkeypatch):
    monkeypatch.setattr(onnx_backend, "unsupported", lambda model: "pooling cls, not mean")
    emb = onnx_embedder(model_path, tmp_path, workers=1)
    assert emb.backend == "torch" and not checks(tmp_path)


def test_onnx_int8_is_another_model(model_path, torch_embedder, shared_dir):
    emb = onnx_embedder(model_path, shared_dir, workers=1, int8=True)
    assert emb.backend == "onnx" and emb.onnx_file.name == onnx_backend.INT8_FILE
    assert emb.name == torch_embedder.name + "+onnx-int8"
    a, b = emb.encode(TEXTS), torch_embedder.encode(TEXTS)
    cos = (a * b).sum(axis=1)
    assert (cos > 0.9).all() and not np.allclose(a, b)  # quantised, yet close


def test_unknown_backend_is_refused(model_path):
    from mathindex.embed import EmbedderError

    with pytest.raises(EmbedderError, match="unknown embedder backend"):
        SentenceTransformerEmbedder(str(model_path), backend="openvino")


def test_packed_export_is_checked_and_gives_the_vectors_of_texts_run_alone(model_path, torch_embedder, shared_dir):
    """Several texts as one row of tokens (no padding, attention inside each text): the vectors of
    the texts run one by one, whatever the pack's other texts; made once, beside the fp32 export."""
    emb = onnx_embedder(model_path, shared_dir, workers=1)
    path = emb.packed_onnx()
    assert path is not None and path.name == onnx_backend.PACKED_FILE and path.parent == emb.onnx_file.parent
    check = json.loads((path.parent / onnx_backend.PACKED_CHECK_FILE).read_text())
    assert check["ok"] and check["min_cosine"] >= onnx_backend.MIN_COSINE and check["probes"] == 3 * len(onnx_backend.PROBE_TEXTS)
    sess = onnx_backend.session(path, 1)
    rows = [emb.model.tokenizer(t, truncation=True, max_length=emb.max_seq_length)["input_ids"] for t in TEXTS]
    alone = torch_embedder.encode(TEXTS)
    together = onnx_backend.run_packed(sess, rows)
    reversed_ = onnx_backend.run_packed(sess, rows[::-1])[::-1]
    for got in (together, reversed_):
        assert got.shape == alone.shape and (got * alone).sum(axis=1).min() >= onnx_backend.MIN_COSINE
    stamp = path.stat().st_mtime_ns
    assert emb.packed_onnx() == path and path.stat().st_mtime_ns == stamp  # reused, not exported again


def test_a_packed_export_that_fails_its_check_is_not_used(model_path, tmp_path, monkeypatch, caplog):
    emb = onnx_embedder(model_path, tmp_path, workers=1)
    monkeypatch.setattr(onnx_backend, "MIN_COSINE", 1.5)
    with caplog.at_level(logging.WARNING, logger="mathindex.embed.onnx"):
        assert emb.packed_onnx() is None
    assert "no packed ONNX export" in caplog.text
    assert not (emb.onnx_file.parent / onnx_backend.PACKED_FILE).exists()
    assert json.loads((emb.onnx_file.parent / onnx_backend.PACKED_CHECK_FILE).read_text())["ok"] is False
    assert onnx_embedder(model_path, tmp_path, workers=1, int8=True).packed_onnx() is None  # int8 is another model
