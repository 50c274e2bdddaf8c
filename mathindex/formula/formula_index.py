"""The formula index: BM25 over leaf-to-root path tokens, then a structural re-score (largest
matching subtree under consistent variable unification, plus symbol identity, as Approach0 does),
with an exact SymPy canonical-key match ranked first.

Formulas with identical operator trees form one group (one BM25 document); search ranks groups and
returns their member formula_ids. Files under the index directory are written deterministically.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.formula import canonical as canon
from mathindex.formula.api import analyse, query_pieces
from mathindex.formula.parse_cache import FEATURES, empty, features_cache
from mathindex.formula.grammar import COMMUTATIVE, from_json, tree_json
from mathindex.formula.paths import path_tokens, symbols
from mathindex.schemas.formula import (
    FORMULA_INDEX_CANONICAL,
    FORMULA_INDEX_GROUPS,
    FORMULA_INDEX_VOCAB,
)

log = logging.getLogger(__name__)

FORMAT = "mathindex-formula-index/1"
K1, B = 1.2, 0.75
CANDIDATES = 300
MAX_HASHED_NODES = 400
W_BM25, W_STRUCT, W_SYMBOL, W_EXACT, W_CANON = 1.0, 2.0, 0.6, 1.0, 10.0
QUERY_CANON_BUDGET_S = 0.5

def h64(text: str) -> int:
    """A stable 63-bit hash (sha-based, never Python's salted hash())."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little") >> 1


def subtree_keys(tree: tuple) -> tuple[list[int], list[int]]:
    """(hashes, sizes) of every subtree: shape with variables numbered by first occurrence in a
    canonical child order, so equal hashes mean equal subtrees up to a consistent renaming."""
    hashes: list[int] = []
    sizes: list[int] = []
    # post-order; each result: (shape hash hex, size, variable names in canonical order)
    results: list[tuple[str, int, tuple]] = []
    stack: list = [(tree, False)]
    budget = MAX_HASHED_NODES
    while stack:
        node, done = stack.pop()
        tag = node[0]
        if tag[0] == "#":
            if tag == "#v":
                name = node[1]
                results.append(("V" + name[: name.index(":")] if ":" in name else "V", 1, (name,)))
            elif tag == "#e":
                results.append(("_", 1, ()))
            else:
                results.append((tag[1] + (node[1].lower() if len(node) > 1 else ""), 1, ()))
            continue
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(node[1:]))
            continue
        k = len(node) - 1
        kids = results[len(results) - k:]
        del results[len(results) - k:]
        if tag in COMMUTATIVE:
            kids = sorted(kids, key=lambda r: (r[0], _pattern(r[2])))
        shape = hashlib.blake2b((tag + "(" + ",".join(r[0] for r in kids) + ")").encode("utf-8"),
                                digest_size=8).hexdigest()
        size = 1 + sum(r[1] for r in kids)
        names: tuple = tuple(n for r in kids for n in r[2])
        if len(names) > 64:
            names = names[:64]
        results.append((shape, size, names))
        if budget > 0:
            budget -= 1
            hashes.append(h64(shape + "|" + _pattern(names)))
            sizes.append(size)
    if not hashes:  # a single leaf
        shape, size, names = results[0]
        hashes.append(h64(shape + "|" + _pattern(names)))
        sizes.append(1)
    return hashes, sizes


def _pattern(names: tuple) -> str:
    seen: dict[str, int] = {}
    return ",".join(str(seen.setdefault(n, len(seen))) for n in names)


def _tree_size(tree: tuple) -> int:
    n = 0
    stack = [tree]
    while stack:
        node = stack.pop()
        n += 1
        if node[0][0] != "#":
            stack.extend(node[1:])
    return n


@dataclass
class _Features:
    tokens: list[str]
    hashes: list[int]
    sizes: list[int]
    symbols: list[int]
    size: int


def features(tree: tuple, tokens: list[str] | None = None) -> _Features:
    """Everything the index stores or matches for one tree."""
    hashes, sizes = subtree_keys(tree)
    return _Features(
        tokens=tokens if tokens is not None else path_tokens(tree),
        hashes=hashes, sizes=sizes,
        symbols=sorted({h64(s) for s in symbols(tree)}),
        size=_tree_size(tree),
    )


class FormulaIndex:
    """A built formula index directory, opened read-only (arrays memory-mapped)."""

    def __init__(self, out_dir: Path, preload: bool = True, lazy: bool = False) -> None:
        """`preload`: start the SymPy worker of query-time canonical keys now (it loads while the
        first query is parsed); else the first formula query starts it (`wait_ready`, or not waited for).
        `lazy` (a one-query CLI): no token dict (`vocab`) until asked; a query's tokens are found by
        one scan of the vocabulary (`token_ids`: the same ids, without 0.2 s of CPU at open on whole Mathlib)."""
        d = Path(out_dir)
        meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise ValueError(f"{d}: not a {FORMAT} index")
        self.meta = meta
        # mapped, seen as plain arrays: a memmap's Python-level __getitem__ cost ~10 us a slice
        load = lambda name: np.asarray(np.load(d / f"{name}.npy", mmap_mode="r"))  # noqa: E731
        self.post_ptr, self.post_doc, self.post_w = load("post_ptr"), load("post_doc"), load("post_w")
        self.hash_ptr, self.hash_val, self.hash_size = load("hash_ptr"), load("hash_val"), load("hash_size")
        self.sym_ptr, self.sym_val = load("sym_ptr"), load("sym_val")
        self.group_size = load("group_size")
        self.exact = load("exact")
        self._tokens = pq.read_table(d / "vocab.parquet").column("token")
        if not lazy:
            self.vocab  # noqa: B018 - made now: a server's queries look their tokens up in it
        # each group's member formula ids, as one Arrow list array (`members`: as Python lists, when asked)
        self.member_lists = pq.read_table(d / "groups.parquet", columns=["members"]).column("members").combine_chunks()
        canon_t = pq.read_table(d / "canonical.parquet")
        self.canonical: dict[str, list[int]] = {}
        for c, g in zip(canon_t.column("canonical").to_pylist(), canon_t.column("group").to_pylist()):
            self.canonical.setdefault(c, []).append(g)
        self.n_groups = len(self.member_lists)
        if self.canonical and preload:
            canon.shared_worker().start()  # SymPy loads while the first query is parsed

    # -- build ---------------------------------------------------------------------------------

    @staticmethod
    def build(trees: pa.Table, formulas: pa.Table | None, out_dir: Path, cache_dir: Path | None = None) -> dict:
        """Writes the index of `trees` (FORMULA_TREES rows) under out_dir; returns counts.

        `formulas` (FORMULAS rows) is accepted for the contract; the index needs only the trees.
        Features of trees seen before come from `cache_dir` (`formula.parse_cache`); the files are the
        same with or without it."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        groups = _groups(trees)
        n = groups.height
        feats = _group_features(groups, cache_dir)
        terms, docs, tfs, vocab = _postings(groups)
        dl = groups["path_tokens"].list.len().to_numpy().astype(np.float32)
        df = np.bincount(terms, minlength=len(vocab)).astype(np.float64)
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        avgdl = float(dl.mean()) if n else 1.0
        w = idf[terms] * tfs * (K1 + 1) / (tfs + K1 * (1 - B + B * dl[docs] / max(avgdl, 1e-9)))
        post_ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(vocab)), out=post_ptr[1:])
        hash_val, hash_ptr = _flat(feats, "hash_val", np.int64)
        hash_size, _ = _flat(feats, "hash_size", np.int32)
        sym_val, sym_ptr = _flat(feats, "sym_val", np.int64)
        arrays = {
            "post_ptr": post_ptr, "post_doc": docs.astype(np.uint32), "post_w": w.astype(np.float32),
            "hash_ptr": hash_ptr, "hash_val": hash_val, "hash_size": hash_size,
            "sym_ptr": sym_ptr, "sym_val": sym_val,
            "group_size": feats["size"].to_numpy().astype(np.int32),
            "exact": feats["exact"].to_numpy().astype(np.int64),
        }
        for name, arr in arrays.items():
            _atomic_npy(out / f"{name}.npy", arr)
        _atomic_parquet(out / "vocab.parquet", pa.table({"token": _arrow(vocab, pa.string())}, schema=FORMULA_INDEX_VOCAB))
        _atomic_parquet(out / "groups.parquet", pa.table(
            {"group": pa.array(np.arange(n, dtype=np.int32)), "members": _arrow(groups["members"], pa.list_(pa.string())),
             "size": pa.array(arrays["group_size"])}, schema=FORMULA_INDEX_GROUPS))
        canon_rows = (groups.select("canonical", group=pl.int_range(n, dtype=pl.Int32))
                      .filter(pl.col("canonical").is_not_null() & (pl.col("canonical") != "")).sort("canonical", "group"))
        _atomic_parquet(out / "canonical.parquet", pa.table(
            {"canonical": _arrow(canon_rows["canonical"], pa.string()), "group": _arrow(canon_rows["group"], pa.int32())},
            schema=FORMULA_INDEX_CANONICAL))
        meta = {"format": FORMAT, "formulas": trees.num_rows, "groups": n, "tokens": len(vocab),
                "postings": int(len(docs)), "k1": K1, "b": B,
                "weights": {"bm25": W_BM25, "struct": W_STRUCT, "symbol": W_SYMBOL, "exact": W_EXACT,
                            "canonical": W_CANON}}
        tmp = out / "meta.json.tmp"
        tmp.write_text(json.dumps(meta, sort_keys=True, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, out / "meta.json")
        return meta

    @cached_property
    def vocab(self) -> dict[str, int]:
        """token -> id (an equal token: its last id)."""
        tokens = self._tokens.to_pylist()
        return dict(zip(tokens, range(len(tokens))))

    def token_ids(self, tokens: list[str]) -> dict[str, int]:
        """token -> id of those of `tokens` the index has: from `vocab` once made, else (a lazy index)
        by one scan of the vocabulary for them (a few ms; an equal token: its last id, as `vocab`)."""
        if not tokens:
            return {}
        if "vocab" in self.__dict__:
            return {t: self.vocab[t] for t in tokens if t in self.vocab}
        at = np.flatnonzero(pc.is_in(self._tokens, value_set=pa.array(sorted(set(tokens)), pa.string()))
                            .to_numpy(zero_copy_only=False))
        return dict(zip(self._tokens.take(pa.array(at)).to_pylist(), at.tolist()))

    @cached_property
    def members(self) -> list[list[str]]:
        """Each group's member formula ids (made when first asked: 0.1 s over whole Mathlib)."""
        return self.member_lists.to_pylist()

    @classmethod
    def open(cls, out_dir: Path, preload: bool = True, lazy: bool = False) -> FormulaIndex:
        """Opens a built index directory."""
        return cls(Path(out_dir), preload, lazy)

    def wait_ready(self, timeout_s: float = 30.0) -> bool:
        """Waits until query-time canonical keys are available (SymPy loaded in its worker)."""
        w = canon.shared_worker()
        with w.lock:
            w.start()
            return w.ready(timeout_s)

    def asks_canonical(self, query_latex: str, skip_variables: bool = False) -> bool:
        """Whether searching `query_latex` asks SymPy for a canonical key (as `_search_piece` does: a
        piece that parses whole into a tree SymPy can build), so that waiting for the worker
        (`wait_ready`) can change the answer."""
        if not self.canonical or self.n_groups == 0:
            return False
        for text, lean in query_pieces(query_latex):
            tree, _parser, status, _reason = analyse(text, lean=lean)
            if not (skip_variables and tree[0] in ("#v", "#n")) and status == "ok" and canon.to_spec(tree) is not None:
                return True
        return False

    # -- search --------------------------------------------------------------------------------

    def search(self, query_latex: str, k: int = 10, skip_variables: bool = False) -> list[tuple[str, float]]:
        """(formula_id, score), best first: member formula_ids of the best groups, up to k. Pieces
        of the query that are one variable or number (`$G$` in prose) are not searched with `skip_variables`."""
        out: list[tuple[str, float]] = []
        for g, score in self.search_groups(query_latex, k, skip_variables=skip_variables):
            for fid in self.members[g]:
                out.append((fid, score))
                if len(out) >= k:
                    return out
        return out

    def search_groups(self, query_latex: str, k: int = 10, use_canonical: bool = True,
                      rescore: bool = True, skip_variables: bool = False) -> list[tuple[int, float]]:
        """(group, score), best first: groups of identical formulas ranked by the full score
        (`rescore=False`: BM25 over path tokens alone, the baseline the re-score is measured by)."""
        pieces = query_pieces(query_latex)
        if not pieces or self.n_groups == 0:
            return []
        if len(pieces) == 1:
            return self._search_piece(pieces[0][0], pieces[0][1], k, use_canonical, rescore, skip_variables)
        total: dict[int, float] = {}
        for text, lean in pieces:  # a mixed query: the scores of its formulas add up
            for g, s in self._search_piece(text, lean, max(3 * k, 30), use_canonical, rescore, skip_variables):
                total[g] = total.get(g, 0.0) + s
        ranked = sorted(total.items(), key=lambda gs: (-gs[1], gs[0]))[:k]
        return [(g, round(s, 6)) for g, s in ranked]

    def _search_piece(self, text: str, lean: bool, k: int, use_canonical: bool,
                      rescore: bool, skip_variables: bool = False) -> list[tuple[int, float]]:
        tree, _parser, status, _reason = analyse(text, lean=lean)
        if skip_variables and tree[0] in ("#v", "#n"):  # a lone letter matches thousands alike
            return []
        f = features(tree)  # a partial tree's paths are searched like any other
        canon_groups: list[int] = []
        if use_canonical and status == "ok":
            spec = canon.to_spec(tree)
            if spec is not None:
                [(cstatus, cform)] = canon.canonical_forms([spec], QUERY_CANON_BUDGET_S,
                                                           wait_ready=False)
                if cstatus == "ok":
                    canon_groups = self.canonical.get(cform, [])
        scores = np.zeros(self.n_groups, dtype=np.float32)
        qtf: dict[int, int] = {}
        ids = self.token_ids(f.tokens)
        for tok in f.tokens:
            tid = ids.get(tok)
            if tid is not None:
                qtf[tid] = qtf.get(tid, 0) + 1
        for tid, c in qtf.items():
            a, b = self.post_ptr[tid], self.post_ptr[tid + 1]
            # np.add.at: a token's posting names each group once, so the same float32 sums as a
            # fancy-index `+=`, in a third of the time on whole Mathlib (numpy 2's indexed loop)
            np.add.at(scores, self.post_doc[a:b], self.post_w[a:b] * c if c != 1 else self.post_w[a:b])
        n_cand = min(CANDIDATES, self.n_groups)
        if n_cand < self.n_groups:
            cand = np.argpartition(-scores, n_cand - 1)[:n_cand]
        else:
            cand = np.arange(self.n_groups)
        cand = cand[scores[cand] > 0]
        if canon_groups:
            cand = np.union1d(cand, np.asarray(canon_groups, dtype=cand.dtype))
        if len(cand) == 0:
            return []
        cand = np.sort(cand)
        if not rescore:
            order = np.lexsort((cand, -scores[cand]))[:k]
            return [(g, round(s, 6)) for g, s in zip(cand[order].tolist(), scores[cand[order]].tolist())]
        best = float(scores[cand].max()) or 1.0
        struct = self._struct(cand, f)
        sym = self._symbol(cand, f)
        total = W_BM25 * scores[cand] / best + W_STRUCT * struct + W_SYMBOL * sym
        qexact = h64(json.dumps(tree_json(tree), ensure_ascii=False, separators=(",", ":")))
        total = total + W_EXACT * (self.exact[cand] == qexact).astype(np.float32)
        if canon_groups:
            total = total + W_CANON * np.isin(cand, np.asarray(canon_groups)).astype(np.float32)
        order = np.lexsort((cand, -total))[:k]
        return [(g, round(s, 6)) for g, s in zip(cand[order].tolist(), total[order].tolist())]

    def _struct(self, cand: np.ndarray, f: _Features) -> np.ndarray:
        """Largest subtree of the query found in each candidate, as a share of the query's size,
        discounted by the candidate's extra size."""
        qh = np.asarray(f.hashes, dtype=np.int64)
        qsize = float(max(f.size, 1))
        starts, ends = self.hash_ptr[cand], self.hash_ptr[cand + 1]
        idx = _ranges(starts, ends)
        vals = self.hash_val[idx]
        hit = np.isin(vals, qh)
        sizes = np.where(hit, self.hash_size[idx], 0)
        lens = (ends - starts).astype(np.int64)
        best = np.zeros(len(cand), dtype=np.float32)
        nz = lens > 0
        if idx.size:
            offs = np.concatenate(([0], np.cumsum(lens)[:-1]))
            red = np.maximum.reduceat(sizes, offs[nz]) if nz.any() else np.zeros(0)
            best[nz] = red
        csize = self.group_size[cand].astype(np.float32)
        return (best / qsize) * (2 * best / (qsize + np.maximum(csize, 1)))

    def _symbol(self, cand: np.ndarray, f: _Features) -> np.ndarray:
        """Jaccard overlap of symbol names (variables keep their names here)."""
        qs = np.asarray(f.symbols, dtype=np.int64)
        starts, ends = self.sym_ptr[cand], self.sym_ptr[cand + 1]
        idx = _ranges(starts, ends)
        if idx.size == 0 or qs.size == 0:
            return np.zeros(len(cand), dtype=np.float32)
        hit = np.isin(self.sym_val[idx], qs).astype(np.int64)
        lens = (ends - starts).astype(np.int64)
        owner = np.repeat(np.arange(len(cand)), lens)
        inter = np.bincount(owner, weights=hit, minlength=len(cand))
        union = lens + qs.size - inter
        return (inter / np.maximum(union, 1)).astype(np.float32)


def _groups(trees: pa.Table) -> pl.DataFrame:
    """One row per distinct operator tree (row i = group i, in order of first appearance by
    formula_id): key (blake2b-128 of the tree JSON), sorted members, tree, path_tokens, canonical."""
    t = pl.from_arrow(trees.select(["formula_id", "tree", "path_tokens", "canonical"])) if trees.num_rows else \
        pl.DataFrame(schema={"formula_id": pl.String, "tree": pl.String, "path_tokens": pl.List(pl.String), "canonical": pl.String})
    g = (t.sort("formula_id", maintain_order=True).group_by("tree", maintain_order=True)
         .agg(pl.col("formula_id").sort().alias("members"), pl.first("path_tokens"), pl.first("canonical")))
    return g.select(pl.Series("key", _digests(g["tree"]), dtype=pl.String), "members", "tree", "path_tokens", "canonical")


def _digests(texts: pl.Series) -> list[str]:
    """blake2b-128 hex of each (non-null) string's UTF-8 bytes, hashed from the Arrow buffer
    (no Python string per row)."""
    arr = texts.rechunk().to_arrow().cast(pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    bounds = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1].tolist()
    data = memoryview(arr.buffers()[2]) if len(arr) else memoryview(b"")
    b2 = hashlib.blake2b
    return [b2(data[a:b], digest_size=16).hexdigest() for a, b in zip(bounds[:-1], bounds[1:])]


def _group_features(groups: pl.DataFrame, cache_dir: Path | None) -> pl.DataFrame:
    """`formula.parse_cache.FEATURES` rows aligned with `groups`: cached ones looked up, the rest computed
    (`features`) and stored."""
    cache = features_cache(cache_dir) if cache_dir is not None else None
    found = cache.load(groups["key"]) if cache is not None else empty(FEATURES)
    todo = groups.select("key", "tree", "path_tokens").join(found.select("key"), on="key", how="anti", maintain_order="left")
    rows = []
    for key, ts, tokens in todo.iter_rows():
        f = features(from_json(json.loads(ts)), tokens)
        hash_val, hash_size = [], []
        for j in sorted(range(len(f.hashes)), key=f.hashes.__getitem__):  # stable: a repeated key keeps its first size
            if not hash_val or f.hashes[j] != hash_val[-1]:
                hash_val.append(f.hashes[j])
                hash_size.append(f.sizes[j])
        rows.append({"key": key, "hash_val": hash_val, "hash_size": hash_size, "sym_val": f.symbols,
                     "size": f.size, "exact": h64(ts)})
    fresh = pl.from_arrow(pa.Table.from_pylist(rows, schema=FEATURES)) if rows else empty(FEATURES)
    if cache is not None:
        cache.add(fresh)
    log.info("formula index: %d trees, %d features cached, %d computed", groups.height, found.height, fresh.height)
    return groups.select("key").join(pl.concat([found, fresh]), on="key", how="left", maintain_order="left")


def _postings(groups: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, pl.Series]:
    """(term, doc, tf) sorted by (term, doc), and the vocabulary: token ids in order of first
    appearance over the groups' path tokens."""
    ex = (groups.select(doc=pl.int_range(groups.height, dtype=pl.UInt32), tok="path_tokens")
          .explode("tok").drop_nulls("tok").with_row_index("pos"))
    co = ex.group_by("tok", "doc").agg(tf=pl.len(), pos=pl.col("pos").min())
    ids = co.group_by("tok").agg(pl.col("pos").min()).sort("pos").with_columns(tid=pl.int_range(pl.len(), dtype=pl.UInt32))
    vocab = ids["tok"]
    co = co.join(ids.select("tok", "tid"), on="tok").sort("tid", "doc")
    return (co["tid"].to_numpy().astype(np.uint32), co["doc"].to_numpy().astype(np.uint32),
            co["tf"].to_numpy().astype(np.float32), vocab)


def _flat(feats: pl.DataFrame, column: str, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(the concatenated lists of a list column, their offsets from 0)."""
    col = feats[column]
    values = pc.list_flatten(col.to_arrow()).to_numpy(zero_copy_only=False).astype(dtype)
    ptr = np.zeros(feats.height + 1, dtype=np.int64)
    np.cumsum(col.list.len().to_numpy(), out=ptr[1:])
    return values, ptr


def _arrow(series: pl.Series, type_: pa.DataType) -> pa.Array:
    """One contiguous arrow array of `type_` (the files are written from single chunks)."""
    return series.to_arrow().cast(type_)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Concatenated aranges [s, e) for each pair, vectorised."""
    lens = (np.asarray(ends) - np.asarray(starts)).astype(np.int64)
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offs = np.repeat(np.asarray(starts, dtype=np.int64) - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return np.arange(total, dtype=np.int64) + offs


def _atomic_npy(path: Path, arr: np.ndarray) -> None:
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, np.ascontiguousarray(arr), allow_pickle=False)
    os.replace(tmp, path)


def _atomic_parquet(path: Path, t: pa.Table) -> None:
    tmp = path.with_suffix(".tmp")
    pq.write_table(t, tmp, compression="zstd")
    os.replace(tmp, path)
