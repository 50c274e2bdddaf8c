"""ONNX Runtime inference for a `SentenceTransformerEmbedder` (backend "onnx").

The transformer of a (Transformer, mean Pooling[, Normalize]) sentence-transformers model is
exported once per model revision with `torch.onnx.export` (dynamic batch and sequence axes) into
`<onnx root>/<name>@<rev16>/<exporter key>/` — never into the model directory, whose files are its
revision — and run with onnxruntime; tokenisation stays the model's own (same max_seq_length and
truncation), mean pooling over the attention mask and L2 normalisation are done in numpy.

Same name as the torch path: an fp32 export is used only when it passed a self-check at export time
(cosine >= MIN_COSINE to the torch path on every text of PROBE_TEXTS, batched with padding and
alone), so its vectors are the model's and share the embedder's name, its cache and its index.
An export that fails the check (or cannot be made) is recorded as failed in its `check.json`, and
the embedder falls back to torch with a logged warning. The exporter key holds EXPORTER_VERSION,
the torch, transformers and onnxruntime versions and the digest of the exporting code
(`cache.codes.ONNX`), so an upgrade or an edit exports and checks anew. Every file of an export is
sealed with its sha256 when written (`cache.shards.seal`) and checked before use: a damaged export
is logged, removed and made again.

int8 (`quantize_dynamic`, per-channel int8 weights) is another model: its name gets "+onnx-int8".

A packed export (`prepare_packed`) runs several texts as one row of tokens, without padding: each
text keeps its own positions, and attention stays inside its text (a mask made in the graph from
per-token segment numbers). Its matrix products then have as many rows as the texts have tokens
together, which a CPU runs faster per token than one short text's (bench/experiments/query_encode.py
--packed); the server packs the queries in flight (serve/encoder.py). It has its own self-check,
`check.packed.json`, against the torch path on PROBE_TEXTS (one pack, pairs, alone).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from mathindex.cache.layout import CacheLayout
from mathindex.cache.codes import ONNX
from mathindex.cache.shards import damaged, seal, temp_beside, verify
from mathindex.embed.models import entry_name
from mathindex.embed.torch_ops import forward, tokenise

log = logging.getLogger(__name__)

EXPORTER_VERSION = 1  # bump when the export or the check changes: every model is exported anew
OPSET = 17
MIN_COSINE = 0.99999
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
FP32_FILE, INT8_FILE, CHECK_FILE = "model.onnx", "model.int8.onnx", "check.json"
PACKED_FILE, PACKED_CHECK_FILE = "model.packed.onnx", "check.packed.json"
PACKED_INPUTS = ("input_ids", "position_ids", "segment_ids")
# What a process needs to encode queries with the checked exports and no torch (embed/queries.py):
# the embedder's name, revision, dimension, token limit and padding, and its fast tokenizer as set
# for queries (`query_tokenizer`); written beside the packed export by the process that made it.
QUERY_FILE, TOKENIZER_FILE = "query.json", "tokenizer.query.json"

# Texts the export is checked on: Lean, LaTeX, prose, unicode, one past any max_seq_length.
PROBE_TEXTS = [
    "x",
    "Addition of natural numbers is commutative.",
    "theorem Nat.add_comm (n m : ℕ) : n + m = m + n",
    "The real exponential function is positive.",
    "Every finite integral domain is a field.",
    "lemma Finset.sum_range_succ {β : Type u} [AddCommMonoid β] (f : ℕ → β) (n : ℕ) : "
    "∑ x ∈ Finset.range (n + 1), f x = ∑ x ∈ Finset.range n, f x + f n",
    r"For every $\varepsilon > 0$ there is $\delta > 0$ such that $|f(x) - f(y)| < \varepsilon$ "
    r"whenever $|x - y| < \delta$.",
    "CategoryTheory.Limits.HasLimitsOfShape",
    "A group homomorphism is injective iff its kernel is trivial.",
    r"\int_0^1 x^n \, dx = \frac{1}{n+1}",
    "Mathlib.Topology.Compactness: IsCompact.isClosed",
    "instance : Inhabited (List α) := ⟨[]⟩",
    "Cauchy–Schwarz: ⟪x, y⟫ ≤ ‖x‖ * ‖y‖ in a real inner product space.",
    "The determinant of a product of square matrices is the product of their determinants.",
    "def Polynomial.eval₂ (f : R →+* S) (x : S) (p : R[X]) : S := p.sum fun e a => f a * x ^ e",
    "A compact subset of a Hausdorff space is closed. " * 60,
]


def exporter_key() -> str:
    """The part of an export's path that names how it was made and checked. The versions are the
    installed distributions' (the same strings as the modules' `__version__`), so that a process
    that only runs an export (`QUERY_FILE`) finds it without importing torch."""
    return (f"x{EXPORTER_VERSION}-opset{OPSET}-torch{version('torch')}-transformers{version('transformers')}"
            f"-ort{version('onnxruntime')}-c{ONNX.digest()[:12]}")


def query_export_dirs(entry: Path) -> list[Path]:
    """The export folders of one model entry (`<onnx root>/<name>@<rev16>/`) that queries may run
    from: this environment's own (`exporter_key`) first, then any other of this exporter version and
    opset, newest first. A process without torch or transformers (`pip install mathindex[serve]`)
    has no key of its own; a checked export encodes as the model does, whichever versions made it."""
    entry = Path(entry)
    try:
        own = [entry / exporter_key()]
    except PackageNotFoundError:  # torch or transformers not installed: this process never exports
        own = []
    prefix = f"x{EXPORTER_VERSION}-opset{OPSET}-"
    try:
        others = [d for d in entry.iterdir() if d.name.startswith(prefix) and d not in own and d.is_dir()]
    except OSError:
        others = []
    return own + sorted(others, key=lambda d: d.stat().st_mtime_ns, reverse=True)


def default_root() -> Path:
    """Where exports go when the embedder is given no directory: the user's cache."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return CacheLayout(Path(base) / "mathindex").onnx


def unsupported(model) -> str | None:
    """Why `model` (a SentenceTransformer) has no ONNX path, or None: only a transformer's last
    hidden state, mean-pooled, then optionally normalised, is reproduced in numpy."""
    kinds = [type(m).__name__ for m in model]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return f"modules {kinds}, not Transformer, Pooling[, Normalize]"
    if getattr(model[1], "pooling_mode", None) != "mean":
        return f"pooling {getattr(model[1], 'pooling_mode', '?')}, not mean"
    if not hasattr(model[0], "auto_model"):
        return "no auto_model in the Transformer module"
    return None


def session(path: Path, threads: int):
    """An onnxruntime CPU session with every graph optimisation and `threads` intra-op threads."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = max(1, int(threads))
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3  # errors only
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def pad(encoded: dict, idx, pad_id: int, side: str = "right") -> dict[str, np.ndarray]:
    """int64 arrays (rows, longest) of the tokenised rows `idx` (tokenizer.pad's layout)."""
    rows = list(idx)
    longest = max(len(encoded["input_ids"][i]) for i in rows)
    out = {}
    for key in INPUTS:
        arr = np.full((len(rows), longest), pad_id if key == "input_ids" else 0, dtype=np.int64)
        for r, i in enumerate(rows):
            seq = encoded[key][i]
            if side == "left":
                arr[r, longest - len(seq):] = seq
            else:
                arr[r, : len(seq)] = seq
        out[key] = arr
    return out


def run(sess, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """Unit float32 vectors: the session's last hidden state mean-pooled over the attention mask
    (as sentence-transformers' Pooling), then L2-normalised (as torch.nn.functional.normalize)."""
    hidden = sess.run(None, feeds)[0]
    mask = feeds["attention_mask"].astype(np.float32)[:, :, None]
    pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return (pooled / norms).astype(np.float32)


def _last_hidden_state(hf):
    """`hf` (a transformers model) as a module of INPUTS (positional) returning last_hidden_state."""
    import torch  # heavy, optional: exporting only (running an export needs no torch)

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    return LastHiddenState(hf).eval()


def _packed_hidden_state(hf):
    """`hf` (a BERT-like transformers model with eager attention) as a module of PACKED_INPUTS, each
    (1, tokens): texts one after another, positions restarting at 0 per text, segment numbers
    telling the texts apart. Attention is masked to the token's own text (an additive mask of the
    dtype's minimum elsewhere, so other texts' weights are exactly 0); token types are 0, as a
    single text's are."""
    import torch  # heavy, optional: exporting only (running an export needs no torch)

    class PackedHiddenState(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, position_ids, segment_ids):
            same = segment_ids[:, :, None] == segment_ids[:, None, :]
            mask = torch.zeros(same.shape, dtype=torch.float32).masked_fill(~same, torch.finfo(torch.float32).min)
            hidden = self.inner.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids),
                                           position_ids=position_ids)
            return self.inner.encoder(hidden, attention_mask=mask[:, None]).last_hidden_state

    return PackedHiddenState(hf).eval()


@contextmanager
def _eager(hf):
    """`hf` runs eager attention inside the block (its own implementation is restored after)."""
    before = getattr(hf.config, "_attn_implementation", None)
    swap = before not in (None, "eager") and hasattr(hf, "set_attn_implementation")
    if swap:
        hf.set_attn_implementation("eager")
    try:
        yield
    finally:
        if swap:
            hf.set_attn_implementation(before)


def export_packed(model, path: Path) -> None:
    """Writes the transformer of `model` to `path` as a packed ONNX graph (`_packed_hidden_state`):
    inputs PACKED_INPUTS of shape (1, tokens), output the last hidden state (1, tokens, dim)."""
    import torch  # heavy, optional: exporting only (running an export needs no torch)

    hf = model[0].auto_model
    ids = model.tokenizer(PROBE_TEXTS[1:3], truncation=True, max_length=int(model.max_seq_length))["input_ids"]
    feeds = pack(ids)
    dynamic = {k: {1: "tokens"} for k in (*PACKED_INPUTS, "last_hidden_state")}
    with _eager(hf), warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(_packed_hidden_state(hf), tuple(torch.from_numpy(feeds[k]) for k in PACKED_INPUTS), str(path),
                          input_names=list(PACKED_INPUTS), output_names=["last_hidden_state"], dynamic_axes=dynamic,
                          opset_version=OPSET, dynamo=False, do_constant_folding=True)


def pack(rows: list[list[int]]) -> dict[str, np.ndarray]:
    """The packed graph's inputs for token rows (each a text's ids with its special tokens)."""
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    ids = np.fromiter((t for r in rows for t in r), dtype=np.int64, count=int(lengths.sum()))
    starts = np.cumsum(lengths) - lengths
    positions = np.arange(len(ids), dtype=np.int64) - np.repeat(starts, lengths)
    segments = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    return {"input_ids": ids[None], "position_ids": positions[None], "segment_ids": segments[None]}


def run_packed(sess, rows: list[list[int]]) -> np.ndarray:
    """Unit float32 vectors of token rows run as one pack: each text's hidden states mean-pooled
    over its own tokens, then L2-normalised, as `run` does for a padded batch."""
    feeds = pack(rows)
    hidden = sess.run(None, feeds)[0][0]
    lengths = np.bincount(feeds["segment_ids"][0], minlength=len(rows))
    pooled = np.add.reduceat(hidden, np.cumsum(lengths) - lengths, axis=0) / np.maximum(lengths, 1)[:, None]
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return (pooled / norms).astype(np.float32)


def export(model, path: Path) -> None:
    """Writes the transformer of `model` (a SentenceTransformer) to `path` as ONNX: inputs INPUTS,
    output last_hidden_state, batch and sequence axes dynamic. Exported with eager attention (a
    plainer graph that onnxruntime runs ~5 % faster than the traced sdpa one); the model's own
    attention implementation is restored afterwards."""
    import torch  # heavy, optional: exporting only (running an export needs no torch)

    hf = model[0].auto_model
    tok = model.tokenizer
    sample = tok(PROBE_TEXTS[1:3], padding=True, truncation=True, max_length=int(model.max_seq_length),
                 return_tensors="pt", return_token_type_ids=True)
    dynamic = {k: {0: "batch", 1: "sequence"} for k in (*INPUTS, "last_hidden_state")}
    with _eager(hf), warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(_last_hidden_state(hf), tuple(sample[k] for k in INPUTS), str(path),
                          input_names=list(INPUTS), output_names=["last_hidden_state"],
                          dynamic_axes=dynamic, opset_version=OPSET, dynamo=False, do_constant_folding=True)


def quantise(src: Path, dst: Path) -> None:
    """`dst`: `src` with every MatMul weight in int8 per output channel, activations quantised at run
    time (onnxruntime.quantization.quantize_dynamic)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic  # heavy, optional: exporting only

    tmp = temp_beside(dst)
    quantize_dynamic(str(src), str(tmp), per_channel=True, weight_type=QuantType.QInt8,
                     op_types_to_quantize=["MatMul"])
    tmp.replace(dst)


def probe(model, sess, torch_vectors=None) -> dict:
    """Cosines between the torch path and `sess` on PROBE_TEXTS, batched three ways (all in one
    padded batch, in pairs, one by one). `torch_vectors`: the torch path's vectors, when known."""
    tok = model.tokenizer
    enc = tokenise(tok, PROBE_TEXTS, int(model.max_seq_length))
    n = len(PROBE_TEXTS)
    ref = torch_vectors if torch_vectors is not None else forward(model, tok, enc, range(n), "cpu")
    cos = []
    for size in (n, 2, 1):
        got = np.concatenate([run(sess, pad(enc, range(s, min(n, s + size)), tok.pad_token_id or 0, tok.padding_side))
                              for s in range(0, n, size)])
        cos.append((got * ref).sum(axis=1))
    cos = np.concatenate(cos)
    return {"min_cosine": float(cos.min()), "median_cosine": float(np.median(cos)), "probes": int(len(cos))}


def prepare(model, name: str, revision: str, root: Path, int8: bool = False) -> Path | None:
    """The ONNX file for `model` (fp32, or int8 when `int8`), exported and checked on first use and
    cached under `root`; None (with a logged warning) when the model has no ONNX path or its fp32
    export failed the self-check, so the caller runs torch instead."""
    why = unsupported(model)
    if why:
        log.warning("embedder %s: no ONNX path (%s); using torch", name, why)
        return None
    final = Path(root) / entry_name(name, revision) / exporter_key()
    check_file = final / CHECK_FILE
    if check_file.exists() and not verify(final, _sealed(final, CHECK_FILE, FP32_FILE)):
        shutil.rmtree(final, ignore_errors=True)  # damaged: exported and checked anew
    if not check_file.exists():
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
        try:
            check = _export_and_check(model, name, revision, tmp)
            seal(tmp, [f for f in (CHECK_FILE, FP32_FILE) if (tmp / f).is_file()])
            try:
                tmp.rename(final)  # another process may have finished the same export first: keep that one
            except OSError:
                if not check_file.exists():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    check = json.loads(check_file.read_text())
    if not check.get("ok"):
        log.warning("embedder %s: its ONNX export failed the self-check (%s); using torch",
                    name, check.get("error") or f"min cosine {check.get('min_cosine')} < {check.get('threshold')}")
        return None
    if not int8:
        return final / FP32_FILE
    dst = final / INT8_FILE
    if dst.exists() and not verify(final, [INT8_FILE], remove=False):
        dst.unlink(missing_ok=True)
    if not dst.exists():
        quantise(final / FP32_FILE, dst)
        seal(final, [INT8_FILE])
    return dst


def prepare_packed(model, name: str, revision: str, root: Path) -> Path | None:
    """The packed ONNX file for `model` (`export_packed`), exported and checked on first use beside
    its fp32 export under `root`; None (with a logged warning) when the model has no ONNX path or
    the packed export failed its self-check (`check.packed.json`), so the caller runs the model
    one text at a time."""
    if prepare(model, name, revision, root) is None:
        return None
    final = Path(root) / entry_name(name, revision) / exporter_key()
    check_file = final / PACKED_CHECK_FILE
    if check_file.exists() and not verify(final, _sealed(final, PACKED_CHECK_FILE, PACKED_FILE), remove=False):
        for f in (PACKED_CHECK_FILE, PACKED_FILE, QUERY_FILE, TOKENIZER_FILE):
            (final / f).unlink(missing_ok=True)
    if not check_file.exists():
        tmp = temp_beside(final / PACKED_FILE)
        t0 = time.perf_counter()
        check: dict = {"name": name, "revision": revision, "exporter": exporter_key(), "threshold": MIN_COSINE,
                       "probe_texts": len(PROBE_TEXTS)}
        try:
            export_packed(model, tmp)
            check.update(probe_packed(model, session(tmp, 1)))
            check["ok"] = check["min_cosine"] >= MIN_COSINE
            if check["ok"]:
                tmp.replace(final / PACKED_FILE)
        except Exception as exc:  # any export or run failure: recorded, and texts run one at a time
            check.update(ok=False, error=_one_line(exc))
        finally:
            tmp.unlink(missing_ok=True)
        check["seconds"] = round(time.perf_counter() - t0, 1)
        _write_json(check_file, check)
        seal(final, [f for f in (PACKED_CHECK_FILE, PACKED_FILE) if (final / f).is_file()])
    check = json.loads(check_file.read_text())
    if not check.get("ok") or not (final / PACKED_FILE).is_file():
        log.warning("embedder %s: no packed ONNX export (%s); texts run one at a time", name,
                    check.get("error") or f"min cosine {check.get('min_cosine')} < {check.get('threshold')}")
        return None
    return final / PACKED_FILE


def probe_packed(model, sess) -> dict:
    """Cosines between the torch path and the packed session `sess` on PROBE_TEXTS: all in one pack,
    in pairs and one by one."""
    tok = model.tokenizer
    enc = tokenise(tok, PROBE_TEXTS, int(model.max_seq_length))
    n, rows = len(PROBE_TEXTS), enc["input_ids"]
    ref = forward(model, tok, enc, range(n), "cpu")
    cos = [(run_packed(sess, [rows[i] for i in range(s, min(n, s + size))]) * ref[s:s + size]).sum(axis=1)
           for size in (n, 2, 1) for s in range(0, n, size)]
    cos = np.concatenate(cos)
    return {"min_cosine": float(cos.min()), "median_cosine": float(np.median(cos)), "probes": int(len(cos))}


def _one_line(exc: BaseException) -> str:
    """An export or run failure as check.json records it: its type and first line."""
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def query_tokenizer(tokenizer, max_length: int):
    """A copy of a fast tokenizer's Rust tokenizer, truncating as the embedder's tokenising does
    (longest first, on the tokenizer's side, at `max_length`; no padding), set once: the same tokens
    without the `__call__` wrapper, which sets the truncation anew on every call (0.1-0.3 ms of a
    query's 0.4 ms of tokenising and padding). None for a tokenizer that is not a fast one."""
    inner = getattr(tokenizer, "_tokenizer", None)
    if inner is None or not hasattr(inner, "to_str"):
        return None
    own = Tokenizer.from_str(inner.to_str())
    own.enable_truncation(max_length, stride=0, strategy="longest_first",
                          direction=getattr(tokenizer, "truncation_side", "right"))
    own.no_padding()
    return own


def write_query_files(packed: Path, embedder) -> None:
    """QUERY_FILE and TOKENIZER_FILE beside `packed` (a checked packed export of `embedder`, a
    SentenceTransformerEmbedder), when missing; nothing for a tokenizer that is not a fast one."""
    final = packed.parent
    if (final / QUERY_FILE).is_file() and (final / TOKENIZER_FILE).is_file() \
            and verify(final, [QUERY_FILE, TOKENIZER_FILE], remove=False):
        return
    tok = embedder.model.tokenizer
    own = query_tokenizer(tok, embedder.max_seq_length)
    if own is None:
        return
    tmp = temp_beside(final / TOKENIZER_FILE)
    tmp.write_text(own.to_str(), encoding="utf-8")
    tmp.replace(final / TOKENIZER_FILE)
    _write_json(final / QUERY_FILE, {"name": embedder.name, "revision": embedder.revision, "dim": embedder.dim,
                                     "max_seq_length": embedder.max_seq_length, "pad_id": tok.pad_token_id or 0,
                                     "padding_side": tok.padding_side})
    seal(final, [TOKENIZER_FILE, QUERY_FILE])


def _sealed(final: Path, check_name: str, model_file: str) -> list[str]:
    """The files of an export that its check file vouches for: the check, and the model file when
    the check passed (a failed export has none)."""
    try:
        ok = bool(json.loads((final / check_name).read_text()).get("ok"))
    except (OSError, ValueError) as exc:
        damaged(final / check_name, exc, remove=False)
        ok = True  # then verify finds the check file unlike what was sealed
    return [check_name, model_file] if ok else [check_name]


def _write_json(path: Path, data: dict) -> None:
    """`data` into `path` whole (a temporary file renamed), so a reader never sees half of it."""
    tmp = temp_beside(path)
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    tmp.replace(path)


def _export_and_check(model, name: str, revision: str, out: Path) -> dict:
    """Exports into `out` and writes its check.json (ok or not); returns the check."""
    t0 = time.perf_counter()
    check: dict = {"name": name, "revision": revision, "exporter": exporter_key(), "threshold": MIN_COSINE,
                   "probe_texts": len(PROBE_TEXTS)}
    try:
        export(model, out / FP32_FILE)
        check.update(probe(model, session(out / FP32_FILE, 1)))
        check["ok"] = check["min_cosine"] >= MIN_COSINE
    except Exception as exc:  # any export or run failure: recorded, and torch is used
        check.update(ok=False, error=_one_line(exc))
        (out / FP32_FILE).unlink(missing_ok=True)
    check["seconds"] = round(time.perf_counter() - t0, 1)
    (out / CHECK_FILE).write_text(json.dumps(check, indent=1, sort_keys=True))
    log.info("embedder %s: ONNX export %s (min cosine to torch %s on %d probes, %.1f s)", name,
             "passed its self-check" if check["ok"] else "FAILED its self-check",
             check.get("min_cosine"), check.get("probes", 0), check["seconds"])
    return check
