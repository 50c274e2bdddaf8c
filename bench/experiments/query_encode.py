"""Thread CPU of encoding one query, and of a batch of 8, for each query-side encoder of a model:
ONNX fp32 (what releases embed with), ONNX int8 (dynamic quantisation), torch bf16 autocast and
torch fp32 (`--encoders` picks some), the rounds alternating between encoders, with each encoder's
lowest and median cosine to ONNX fp32's vectors. Queries: the styles of a MathlibQR-format suite
(the first --limit).

    .venv/bin/python -m bench.experiments.query_encode --model build/rebuild3/root/models/<entry> --suite bench/suites/mathlibqr-dev.json

`--packed`: instead, the ONNX fp32 export one query at a time against its packed export
(embed/onnx.py `run_packed`, what the server runs when queries wait together) in packs of 1, 2, 4,
8 and 16 queries as they come (not sorted by length), alternating in each round, with the packed
vectors' lowest cosine to the one-by-one ones. `--model` may be omitted: the bundled MiniLM.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from mathindex.cache.layout import CacheLayout
from mathindex.embed import SentenceTransformerEmbedder
from mathindex.embed.channel import encode_one

STYLES = ("q1a_lean", "q1b_latex", "q1c_natural", "q2_slogan")
PACKS = (1, 2, 4, 8, 16)


CONFIGS = {"onnx-fp32": dict(backend="onnx"), "onnx-int8": dict(backend="onnx", int8=True),
           "torch-bf16": dict(bf16=True), "torch-fp32": dict(backend="torch")}


def encoders(args, queries: list[str]) -> None:
    """Each encoder of `args.encoders` warmed up, then `args.rounds` rounds over the queries, the
    encoders alternating in each round; the medians, ratios to the first and cosines to ONNX fp32."""
    names = args.encoders.split(",")
    loaded = {n: SentenceTransformerEmbedder(args.model, progress=False, onnx_dir=args.onnx_dir, **CONFIGS[n])
              for n in names}
    vectors = {}
    for name, embedder in loaded.items():
        for q in queries[:20]:  # warm up
            encode_one(embedder, q)
        vectors[name] = np.vstack([encode_one(embedder, q) for q in queries])
    single: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(args.rounds):
        for name, embedder in loaded.items():
            t0 = time.thread_time()
            for q in queries:
                encode_one(embedder, q)
            single[name].append((time.thread_time() - t0) / len(queries) * 1000)
    reference = vectors.get("onnx-fp32")
    base = statistics.median(single[names[0]])
    for name, embedder in loaded.items():
        t0 = time.thread_time()
        for i in range(0, len(queries), 8):
            embedder.encode(queries[i : i + 8])
        batched = (time.thread_time() - t0) / len(queries) * 1000
        med = statistics.median(single[name])
        cosine = ""
        if reference is not None:
            cos = (vectors[name] * reference).sum(axis=1)
            cosine = f"; cosine to onnx-fp32 min {cos.min():.4f} median {np.median(cos):.4f}"
        print(f"{name:<10} one query: {med:.2f} ms thread CPU a query (rounds {' / '.join(f'{x:.2f}' for x in single[name])}; "
              f"ratio {med / base:.3f}); batches of 8: {batched:.2f} ms a query{cosine} ({len(queries)} queries)", flush=True)


def packed(args, queries: list[str]) -> None:
    """One by one (the fp32 export) against packs of PACKS queries (the packed export), paired."""
    from mathindex.embed.torch_ops import tokenise
    from mathindex.embed.onnx import pad, run, run_packed, session

    embedder = SentenceTransformerEmbedder(args.model, progress=False, backend="onnx", onnx_dir=args.onnx_dir)
    path = embedder.packed_onnx()
    if path is None:
        raise SystemExit("this model has no checked packed ONNX export")
    alone_sess, packed_sess = session(embedder.onnx_file, 1), session(path, 1)
    enc = tokenise(embedder.model.tokenizer, queries, embedder.max_seq_length)
    rows = enc["input_ids"]
    pad_id = embedder.model.tokenizer.pad_token_id or 0
    ref = np.concatenate([run(alone_sess, pad(enc, [i], pad_id)) for i in range(len(rows))])
    cpu: dict[str, list[float]] = {}
    low = 1.0
    for _ in range(args.rounds):
        t0 = time.thread_time()
        for i in range(len(rows)):
            run(alone_sess, pad(enc, [i], pad_id))
        cpu.setdefault("one by one", []).append((time.thread_time() - t0) / len(rows) * 1000)
        for size in PACKS:
            t0 = time.thread_time()
            got = [run_packed(packed_sess, rows[i : i + size]) for i in range(0, len(rows), size)]
            cpu.setdefault(f"packs of {size}", []).append((time.thread_time() - t0) / len(rows) * 1000)
            low = min(low, float((np.concatenate(got) * ref).sum(axis=1).min()))
    base = statistics.median(cpu["one by one"])
    tokens = [len(r) for r in rows]
    print(f"{len(rows)} queries, tokens median {statistics.median(tokens):.0f} mean {statistics.mean(tokens):.1f}; "
          f"{args.rounds} rounds, thread CPU a query (median, min-max):")
    for label, values in cpu.items():
        med = statistics.median(values)
        print(f"  {label:<11} {med:6.2f} ms ({min(values):.2f}-{max(values):.2f})  ratio {med / base:.3f}")
    print(f"lowest cosine of a packed vector to its one-by-one vector: {low:.7f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="a model directory (default: the bundled MiniLM)")
    ap.add_argument("--suite", required=True, type=Path)
    ap.add_argument("--onnx-dir", type=Path, default=CacheLayout(Path("build/cache")).onnx)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--packed", action="store_true", help="one by one against packs (the server's encoder)")
    ap.add_argument("--encoders", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}; ratios "
                    "are to the first")
    args = ap.parse_args()
    suite = json.loads(args.suite.read_text(encoding="utf-8"))
    queries = [t[s] for t in suite for s in STYLES if t.get(s)][: args.limit]
    torch.set_num_threads(1)
    (packed if args.packed else encoders)(args, queries)


if __name__ == "__main__":
    main()
