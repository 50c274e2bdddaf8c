"""Partial int8 variants of a model's fp32 ONNX export: cosine to fp32 and process CPU against fp32
on a seeded sample of a release's embedded texts (paired: each variant's batches alternate with
fp32's, so the machine's load falls on both).

    .venv/bin/python -m bench.experiments.int8_partial ONNX_DIR MODEL_DIR RELEASE_DIR OUT_DIR [--texts 1000]

ONNX_DIR holds the checked export (ROOT/cache/onnx/<model entry>/<exporter key>/model.onnx);
variants are written to OUT_DIR. Variants: `all` (every weight MatMul in int8, as
`embed.onnx.quantise`), and `x_*` with some layers' MatMuls left in fp32.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import polars as pl
from onnxruntime.quantization import QuantType, quantize_dynamic
from transformers import AutoTokenizer

from mathindex.embed.onnx import session, pad, run
from mathindex.embed.texts import EMBEDDED_FACETS


def main() -> None:
    """Writes the variants, then times and compares each against fp32."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("onnx_dir", type=Path)
    ap.add_argument("model")
    ap.add_argument("release")
    ap.add_argument("out", type=Path)
    ap.add_argument("--texts", type=int, default=1000)
    args = ap.parse_args()
    D, M, R, out = args.onnx_dir, args.model, args.release, args.out
    out.mkdir(parents=True, exist_ok=True)
    g = onnx.load(str(D / "model.onnx"))
    mm = [n.name for n in g.graph.node if n.op_type == "MatMul"]
    print(len(mm), "MatMul nodes;", mm[:8], file=sys.stderr)
    groups = {
        "ffn_out": [n for n in mm if "/output/dense/" in n and "attention" not in n],
        "ffn_in": [n for n in mm if "/intermediate/dense/" in n],
        "attn_out": [n for n in mm if "/attention/output/dense/" in n],
        "qkv": [n for n in mm if any(f"/self/{x}/" in n for x in ("query", "key", "value"))],
        "scores": [n for n in mm if "dense" not in n],
    }
    for k, v in groups.items(): print(k, len(v), file=sys.stderr)
    variants = {"all": [], "x_ffn_out": groups["ffn_out"], "x_ffn_out_last2": [n for n in groups["ffn_out"] if "layer.4/" in n or "layer.5/" in n],
                "x_ffn_out_attn_out": groups["ffn_out"] + groups["attn_out"], "x_first_last": [n for n in mm if "layer.0/" in n or "layer.5/" in n]}
    for name, excl in variants.items():
        p = out / f"{name}.onnx"
        if not p.exists():
            quantize_dynamic(str(D / "model.onnx"), str(p), per_channel=True, weight_type=QuantType.QInt8,
                             op_types_to_quantize=["MatMul"], nodes_to_exclude=excl + groups["scores"])
    t = pl.read_parquet(f"{R}/embedding_texts.parquet", columns=["facet", "text"]).filter(pl.col("facet").is_in(EMBEDDED_FACETS))
    texts = t.sample(n=args.texts, seed=7).get_column("text").to_list()
    tok = AutoTokenizer.from_pretrained(M)
    enc = tok(texts, truncation=True, max_length=128, padding=False)
    order = np.argsort([len(x) for x in enc["input_ids"]])
    def encode(sess):
        vecs = np.zeros((len(texts), 384), np.float32)
        t0 = time.process_time()
        for s in range(0, len(texts), 64):
            idx = order[s:s + 64]
            feeds = pad({k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids")}, idx, 0, "right")
            vecs[idx] = run(sess, feeds)
        return vecs, time.process_time() - t0
    ref_s = session(D / "model.onnx", 2)
    ref, _ = encode(ref_s)
    res = {}
    for name in variants:
        s = session(out / f"{name}.onnx", 2)
        ts, tr = [], []
        for _ in range(2):
            v, t = encode(s); ts.append(t)
            _, t = encode(ref_s); tr.append(t)
        t1 = t2 = float(np.median(ts)); tref = float(np.median(tr))
        cos = (v * ref).sum(1)
        res[name] = {"s": round(min(t1, t2), 2), "speedup": round(tref / min(t1, t2), 2), "median_cos": round(float(np.median(cos)), 5),
                     "p1_cos": round(float(np.percentile(cos, 1)), 5), "min_cos": round(float(cos.min()), 5)}
        print(name, res[name], "fp32 cpu", round(tref,2), flush=True)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
