"""Thread CPU of encoding one query, and of a batch of 8, for each query-side encoder of a model:
ONNX fp32 (what releases embed with), torch bf16 autocast and torch fp32. Queries: the styles of a
MathlibQR-format suite (the first --limit).

    .venv/bin/python bench/query_encode.py --model build/rebuild3/root/models/<entry> --suite ../shared/bench/mathlibqr-dev.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from mathindex.embed import SentenceTransformerEmbedder
from mathindex.search.engine import _encode_one

STYLES = ("q1a_lean", "q1b_latex", "q1c_natural", "q2_slogan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="a model directory")
    ap.add_argument("--suite", required=True, type=Path)
    ap.add_argument("--onnx-dir", type=Path, default=Path("build/cache/onnx"))
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    suite = json.loads(args.suite.read_text(encoding="utf-8"))
    queries = [t[s] for t in suite for s in STYLES if t.get(s)][: args.limit]
    torch.set_num_threads(1)
    configs = [("onnx fp32", dict(backend="onnx", onnx_dir=args.onnx_dir)), ("torch bf16", dict(bf16=True)),
               ("torch fp32", dict(backend="torch"))]
    for label, options in configs:
        embedder = SentenceTransformerEmbedder(args.model, progress=False, **options)
        for q in queries[:20]:  # warm up
            _encode_one(embedder, q)
        single = []
        for _ in range(args.rounds):
            t0 = time.thread_time()
            for q in queries:
                _encode_one(embedder, q)
            single.append((time.thread_time() - t0) / len(queries) * 1000)
        t0 = time.thread_time()
        for i in range(0, len(queries), 8):
            embedder.encode(queries[i : i + 8])
        batched = (time.thread_time() - t0) / len(queries) * 1000
        print(f"{label:<11} one query: {' / '.join(f'{x:.2f}' for x in single)} ms thread CPU a query; "
              f"batches of 8: {batched:.2f} ms a query ({len(queries)} queries)", flush=True)


if __name__ == "__main__":
    main()
