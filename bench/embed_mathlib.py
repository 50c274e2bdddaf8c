"""Embedding Mathlib end to end: informalise, embedding texts, embed (fresh cache), no-change and
one-changed-file rebuilds, index build; texts/s and the projection to the whole corpus.

Embedding all of Mathlib on this 2-core machine takes hours, so the model runs over a strided
sample of files (every declaration of each sampled file, all facets); with `--full-scan` every
Mathlib file is scanned, informalised and turned into texts (no model) to count the full corpus.
Real vectors are saved for `bench/embed_index.py`.

    .venv/bin/python -m bench.embed_mathlib [--decls 3000] [--stride 23] [--full-scan]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.common.mathlib_subset import mathlib_files, mathlib_subset, scan
from mathindex.embed import EmbeddingCache, EmbedStats, SentenceTransformerEmbedder, VectorIndex, embed_texts, embedding_texts
from mathindex.informal import RuleInformaliser, informalise

OUT = Path(__file__).resolve().parents[1] / "build" / "bench"


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def full_scan() -> tuple[int, int, dict]:
    """(declarations, texts, seconds by stage) over every Mathlib file, informalised as one table."""
    files = mathlib_files()
    secs = {}
    t0 = time.perf_counter()
    decls, deps = [], []
    for f in files:
        d, e = scan(f)
        decls.extend(d)
        deps.extend(e)
    d_t = pa.Table.from_pylist(decls)
    e_t = pa.Table.from_pylist(deps, schema=pa.schema([("full_name", pa.string()), ("target", pa.string())]))
    del decls, deps
    secs["scan"] = time.perf_counter() - t0
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    inf, secs["informalise"] = timed(informalise, d_t, RuleInformaliser(), None, e_t)
    texts, secs["embedding_texts"] = timed(embedding_texts, d_t, inf, None)
    secs["peak_rss_growth_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    return d_t.num_rows, texts.num_rows, secs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decls", type=int, default=3000)
    ap.add_argument("--stride", type=int, default=23)
    ap.add_argument("--full-scan", action="store_true")
    ap.add_argument("--lookup-scale", type=int, default=600_000, help="cache size for the lookup timing")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    decls, deps, files = mathlib_subset(args.decls, args.stride)
    emb = SentenceTransformerEmbedder(progress=False)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        inf, s_inf = timed(informalise, decls, RuleInformaliser(), cache, deps)
        texts, s_txt = timed(embedding_texts, decls, inf, None)
        facets = dict(zip(*np.unique(texts.column("facet").to_numpy(zero_copy_only=False), return_counts=True)))
        st1 = EmbedStats()
        vecs, s_emb = timed(embed_texts, texts, emb, cache, st1)
        index_dir = Path(tmp) / "index"
        index, s_idx = timed(VectorIndex.build, vecs, texts.column("text_id").to_numpy(), emb, index_dir)
        np.save(OUT / "embed_mathlib_vectors.npy", vecs)
        rows.append(("first build", s_inf, s_txt, s_emb, st1))
        # a rebuild over unchanged inputs
        inf2, s_inf2 = timed(informalise, decls, RuleInformaliser(), cache, deps)
        texts2, s_txt2 = timed(embedding_texts, decls, inf2, None)
        st2 = EmbedStats()
        vecs2, s_emb2 = timed(embed_texts, texts2, emb, cache, st2)
        rows.append(("no-change rebuild", s_inf2, s_txt2, s_emb2, st2))
        same = texts2.equals(texts) and np.array_equal(vecs, vecs2)
        # one changed file: every docstring of one module edited
        module = decls.column("module")[0].as_py()
        in_mod = pc.equal(decls.column("module"), module)
        doc = decls.column("docstring")
        edited = pc.if_else(in_mod, pc.binary_join_element_wise(pc.fill_null(doc, ""), " (edited)", ""), doc)
        decls3 = decls.set_column(decls.column_names.index("docstring"), "docstring", edited)
        inf3, s_inf3 = timed(informalise, decls3, RuleInformaliser(), cache, deps)
        texts3, s_txt3 = timed(embedding_texts, decls3, inf3, None)
        new_texts = len(set(texts3.column("sha256").to_pylist()) - set(texts.column("sha256").to_pylist()))
        st3 = EmbedStats()
        _, s_emb3 = timed(embed_texts, texts3, emb, cache, st3)
        rows.append((f"one file changed ({module})", s_inf3, s_txt3, s_emb3, st3))
        # the cache lookup at Mathlib scale: `lookup_scale` cached keys, all looked up
        big = EmbeddingCache(Path(tmp) / "big", "lookup-test", "0" * 64, emb.dim)
        rng = np.random.default_rng(0)
        keys = rng.bytes(32 * args.lookup_scale)
        keys = np.frombuffer(keys, dtype="S32")
        for chunk in np.array_split(np.arange(args.lookup_scale), 8):  # 8 shards, as after 8 incremental builds
            big.add(keys[chunk], np.zeros((len(chunk), emb.dim), dtype=np.float32))
        (found, _), s_look = timed(big.lookup, keys)
    emb.close()
    n = texts.num_rows
    rate = st1.embedded / st1.encode_seconds
    print(f"sample: {len(files)} of {len(mathlib_files())} Mathlib files (sorted, stride {args.stride}), "
          f"{decls.num_rows} declarations, {n} texts ({st1.distinct} distinct); facets {facets}")
    print()
    print("| run | informalise s | embedding_texts s | embed stage s | texts embedded | from cache |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, a, b, c, st in rows:
        print(f"| {name} | {a:.2f} | {b:.2f} | {c:.2f} | {st.embedded} | {st.cached} |")
    print()
    print(f"embedding throughput (first build): {n / s_emb:.1f} texts/s over rows, {rate:.1f} distinct texts/s in the model")
    print(f"no-change rebuild embed stage / first build embed stage: {s_emb2 / s_emb:.4%}  (same texts and vectors: {same})")
    print(f"one changed file: {new_texts} new texts, {st3.embedded} embedded")
    print(f"index build on {n} real vectors: {s_idx:.1f} s, recall@10 {index.sidecar['recall_at_10']:.4f} at efSearch "
          f"{index.sidecar['ef_search']}, size {index.sidecar['memory_ratio_to_flat']:.1%} of float32 flat")
    print(f"cache lookup of {args.lookup_scale} texts against {args.lookup_scale} cached (8 shards): {s_look:.2f} s, "
          f"all found: {bool(found.all())}")
    if args.full_scan:
        n_decls, n_texts, secs = full_scan()
        per_text = s_emb / n
        print(f"full Mathlib: {n_decls} declarations -> {n_texts} texts; scan {secs['scan']:.0f} s, informalise "
              f"(rules, one table, dependency order) {secs['informalise']:.0f} s, embedding_texts "
              f"{secs['embedding_texts']:.0f} s; peak RSS growth in those two {secs['peak_rss_growth_mb']:.0f} MB")
        print(f"projected full embedding at this sample's rate: {n_texts * per_text / 3600:.2f} h; "
              f"projected no-change embed stage: {s_look + n_texts * s_emb2 / n:.1f} s "
              f"({(s_look + n_texts * s_emb2 / n) / (n_texts * per_text):.4%} of the full embedding)")


if __name__ == "__main__":
    main()
