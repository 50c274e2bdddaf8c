"""The release's lexical-index stage on a real release's embedding texts: the previous build (one
joined document per node, tokenised whole, bm25s's Python indexer) against `build_text_index`
(tokens cached per text, numpy BM25), cold and warm cache, and one node's text changed; checks that
every variant writes the same bytes as the previous build.

    .venv/bin/python -m bench.experiments.lexical_stage build/mathlib/releases/<id> [--runs 3] [--work build/lexical-bench]

Prints each variant's median seconds over --runs and its ratio to the previous build run beside it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import bm25s

from mathindex.embed.texts import text_sha256
from mathindex.search.lexical import BM25_B, BM25_K1, build_text_index
from mathindex.search.nodes import node_documents
from mathindex.search.text import tokens
from mathindex.store.layout import ReleaseLayout

FILES = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json", "params.index.json",
         "nodes.parquet")


def previous_build(texts: pa.Table, out: Path) -> None:
    """The stage as it was: node_documents, tokens of each joined document, bm25s.index."""
    names, docs = node_documents(texts)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"name": pa.array(names, pa.string())}), out / "nodes.parquet")
    corpus = [tokens(d) or ["∅"] for d in docs]
    vocab = {t: i for i, t in enumerate(sorted({t for doc in corpus for t in doc}))}
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    retriever.index(([[vocab[t] for t in doc] for doc in corpus], vocab), show_progress=False)
    retriever.save(str(out), show_progress=False)


def one_text_changed(texts: pa.Table) -> pa.Table:
    """The first docstring row with a sentence appended (a nightly where one declaration changed)."""
    row = pc.index(texts.column("facet"), "docstring").as_py()
    text = texts.column("text")[row].as_py() + " Revised."
    cols = {n: texts.column(n).to_pylist() for n in ("text", "sha256")}
    cols["text"][row], cols["sha256"][row] = text, text_sha256(text)
    for n, v in cols.items():
        texts = texts.set_column(texts.schema.get_field_index(n), n, pa.array(v, pa.string()))
    return texts


def same_files(a: Path, b: Path) -> bool:
    return all((a / f).read_bytes() == (b / f).read_bytes() for f in FILES)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("build/lexical-bench"))
    args = ap.parse_args()
    texts = pq.read_table(ReleaseLayout(args.release).table("embedding_texts"))
    changed = one_text_changed(texts)
    times: dict[str, list[float]] = {}

    def timed(name: str, fn, *a) -> None:
        t0 = time.perf_counter()
        fn(*a)
        times.setdefault(name, []).append(time.perf_counter() - t0)

    ok = True
    for run in range(args.runs):
        work = args.work / f"run{run}"
        shutil.rmtree(work, ignore_errors=True)
        timed("previous build", previous_build, texts, work / "previous")
        timed("cold cache", build_text_index, texts, work / "cold", work / "cache")
        timed("warm cache", build_text_index, texts, work / "warm", work / "cache")
        timed("one text changed, warm", build_text_index, changed, work / "changed", work / "cache")
        ok &= same_files(work / "previous", work / "cold") and same_files(work / "cold", work / "warm")
        if run == 0:
            previous_build(changed, work / "changed-previous")
            ok &= same_files(work / "changed-previous", work / "changed")
    base = statistics.median(times["previous build"])
    print(f"{texts.num_rows} texts; medians of {args.runs} runs")
    for name, values in times.items():
        m = statistics.median(values)
        print(f"  {name:28s} {m:7.2f} s  ratio {m / base:.3f}")
    print("files identical to the previous build:", "yes" if ok else "NO")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
