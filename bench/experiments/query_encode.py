"""Thread CPU of encoding one query, and of a batch of 8, for each query-side encoder of a model:
ONNX fp32 (what releases embed with), torch bf16 autocast and torch fp32. Queries: the styles of a
MathlibQR-format suite (the first --limit).

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


def encoders(args, queries: list[str]) -> None:
    configs = [("onnx fp32", dict(backend="onnx", onnx_dir=args.onnx_dir)), ("torch bf16", dict(bf16=True)),
               ("torch fp32", dict(backend="torch"))]
    for label, options in configs:
        embedder = SentenceTransformerEmbedder(args.model, progress=False, **options)
        for q in queries[:20]:  # warm up
            encode_one(embedder, q)
        single = []
        for _ in range(args.rounds):
            t0 = time.thread_time()
            for q in queries:
                encode_one(embedder, q)
            single.append((time.thread_time() - t0) / len(queries) * 1000)
        t0 = time.thread_time()
        for i in range(0, len(queries), 8):
            embedder.encode(queries[i : i + 8])
        batched = (time.thread_time() - t0) / len(queries) * 1000
        print(f"{label:<11} one query: {' / '.join(f'{x:.2f}' for x in single)} ms thread CPU a query; "
              f"batches of 8: {batched:.2f} ms a query ({len(queries)} queries)", flush=True)


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
    args = ap.parse_args()
    suite = json.loads(args.suite.read_text(encoding="utf-8"))
    queries = [t[s] for t in suite for s in STYLES if t.get(s)][: args.limit]
    torch.set_num_threads(1)
    (packed if args.packed else encoders)(args, queries)


if __name__ == "__main__":
    main()
