"""The premise stage's candidates and features as content-keyed shards: the goals it ranks, keyed by
their content and cut into shards by key (`plan_goal_shards`), and one shard's candidates computed by
whichever process runs it (`features_shard`: a task runner's thread or a Dask worker), which opens
the ranker from paths alone (`RankerSource`: the staging release on a path every worker sees and
the embedder spec) and stores the rows in the root's cache (`CacheLayout.premise_feature_set`, a
folder per ranker inputs). A goal's candidates depend only on the goal and those inputs, so
`read_runs` gives them back in goal order, the same whatever ran the shards or when they finished.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.cache.codes import PREMISE_FEATURES
from mathindex.cache.filehash import sha256_file
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import RunMarks, ShardDone, ShardStore, cut_by_key, keep_newest, touch, worker_id
from mathindex.embed.channel import spec_channel
from mathindex.embed.embedder import query_encoding
from mathindex.embed.shards import EmbedderSpec
from mathindex.formal.search import FormalIndex
from mathindex.premises.fit import Run
from mathindex.premises.imports import IMPORTS_FILE
from mathindex.premises.priors import FILE_PROOFS_FILE, PREMISES_DIR, PRIORS_FILE, STATEMENTS_DIR
from mathindex.premises.ranker import DEFAULT_WEIGHTS, EXTRA, FEATURES, Candidates, PremiseRanker
from mathindex.store.layout import ReleaseLayout

log = logging.getLogger(__name__)

# goals a shard ranks: whole Mathlib's 3,551 goals make 15 shards, each about 8 s of one core after
# the worker opened the ranker once; their rows take about 27 kB a goal (95 MB in all)
SHARD_GOALS = 250
KEEP = 1  # folders of candidate rows kept (one per ranker inputs): this build's (a rerun of it reads them)
GOAL_COLUMNS = ("query", "context", "theorem", "file", "line")  # what `PremiseRanker.candidates` reads of a goal
GOALS = pa.schema([("key", pa.string()), ("query", pa.string()), ("context", pa.string()), ("theorem", pa.string()),
                   ("file", pa.string()), ("line", pa.int64())])
# one goal's Candidates: docs, features (row-major, FEATURES columns), extra (EXTRA columns; null for a
# fallback goal), the goal's constants, its fallback channel
CANDIDATES = pa.schema([("key", pa.string()), ("docs", pa.list_(pa.int64())), ("features", pa.list_(pa.float32())),
                        ("extra", pa.list_(pa.float32())), ("constants", pa.list_(pa.string())),
                        ("fallback", pa.string())])


@dataclass(frozen=True)
class RankerSource:
    """How any process opens the stage's ranker (`open_ranker`): the staging release (its premise
    index, formal index, vector index and tables written), the embedder spec (None: no embedding
    channel) and the root's cache directory; `key` names the candidate rows' folder: the code, the
    digests of every release file the ranker reads, and the query embedder."""

    release: str
    spec: EmbedderSpec | None
    cache_dir: str
    key: str


@dataclass(frozen=True)
class GoalShard:
    """Distinct goals (GOALS rows), sorted by key; `key` names the shard of the candidate rows they
    are stored as (`cache.shards.part_name` of their keys)."""

    index: int
    key: str
    goals: pa.Table = field(repr=False)


@dataclass(frozen=True)
class RowNames:
    """The ranker's rows' names (the priors'), which ranking runs needs (premises.fit.Named)."""

    names: list[str] = field(repr=False)


def row_names(release: Path) -> RowNames:
    """The names of the premise index's rows, as the ranker holds them (the formal index's are these)."""
    return RowNames(pq.read_table(Path(release) / PREMISES_DIR / PRIORS_FILE, columns=["name"]).column("name").to_pylist())


def ranker_files(release: Path) -> list[Path]:
    """Every file of the release a PremiseRanker and its channels read: the premise index but the
    stage's own outputs, the formal index, the vector index and the tables they open."""
    layout = ReleaseLayout(release)
    base = layout / PREMISES_DIR
    files = [base / n for n in (PRIORS_FILE, FILE_PROOFS_FILE, IMPORTS_FILE) if (base / n).is_file()]
    files += sorted(p for p in (base / STATEMENTS_DIR).rglob("*") if p.is_file())
    for folder in (layout.formal, layout.vector):
        files += sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    return files + [layout.table(t) for t in ("formal_statements", "embedding_texts") if layout.table(t).is_file()]


def ranker_source(release: Path, spec: EmbedderSpec | None, cache_dir: Path) -> RankerSource:
    """The source of the release's ranker, keyed by the code (`cache.codes.PREMISE_FEATURES`), the
    sha256 of each file it reads (`ranker_files`) and the query embedder (`spec`, named; the index's
    query encoding)."""
    release = Path(release)
    files = {p.relative_to(release).as_posix(): sha256_file(p) for p in ranker_files(release)}
    embedder = None if spec is None else {
        **{k: v for k, v in asdict(spec).items() if k not in ("onnx_dir", "workers", "threads")},
        "queries": query_encoding(spec.name)}
    parts = {"code": PREMISE_FEATURES.digest(), "files": files, "embedder": embedder}
    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:24]
    return RankerSource(str(release), spec, str(cache_dir), key)


def features_store(source: RankerSource) -> ShardStore:
    """The candidate rows of the goals ranked over `source`'s inputs, in the root's cache."""
    return ShardStore(CacheLayout(source.cache_dir).premise_feature_set(source.key), CANDIDATES)


def goal_key(goal: dict) -> str:
    """sha256 of what the ranker reads of a suite goal (GOAL_COLUMNS)."""
    return hashlib.sha256(json.dumps([goal.get("context", "") if c == "context" else goal.get(c)
                                      for c in GOAL_COLUMNS]).encode()).hexdigest()


def goal_rows(goals: list[dict]) -> pl.DataFrame:
    """GOALS rows of suite goals, in their order (one a goal, repeated keys kept)."""
    cols = {c: [g.get("context", "") if c == "context" else g.get(c) for g in goals] for c in GOAL_COLUMNS}
    return pl.from_arrow(pa.table({"key": [goal_key(g) for g in goals], **cols}, schema=GOALS))


def plan_goal_shards(keyed: pl.DataFrame, shard_goals: int = SHARD_GOALS, spread: int = 1) -> list[GoalShard]:
    """The distinct goals of `keyed` (`goal_rows`) sorted by key and cut into shards of `shard_goals`,
    or fewer so that there are at least `spread`, each named by its content."""
    return [GoalShard(*part) for part in cut_by_key(keyed.unique("key").sort("key"), shard_goals, spread)]


_OPEN: dict[RankerSource, PremiseRanker] = {}
_OPEN_LOCK = threading.Lock()


def open_ranker(source: RankerSource) -> PremiseRanker:
    """The ranker over `source` with the default weights, opened once per process (the last
    source's kept: a worker runs every shard of a stage with it; threads share it)."""
    with _OPEN_LOCK:
        if source not in _OPEN:
            _OPEN.clear()
            release, cache_dir = Path(source.release), Path(source.cache_dir)
            vector = None if source.spec is None else spec_channel(release, source.spec, cache_dir)
            _OPEN[source] = PremiseRanker(release, FormalIndex(release), vector, weights=dict(DEFAULT_WEIGHTS))
        return _OPEN[source]


def close_rankers() -> None:
    """Forgets this process's ranker (the flow's, once its shards are read back)."""
    with _OPEN_LOCK:
        _OPEN.clear()


def candidate_rows(ranker: PremiseRanker, goals: pa.Table) -> pa.Table:
    """CANDIDATES rows of GOALS rows, one a goal, in their order."""
    found = [(g["key"], ranker.candidates(g["query"], g["context"], frozenset([g["theorem"]]), g["file"], g["line"]))
             for g in goals.to_pylist()]
    return pa.table({
        "key": [k for k, _ in found],
        "docs": [c.docs.astype(np.int64) for _, c in found],
        "features": [c.features.astype(np.float32).ravel() for _, c in found],
        "extra": [None if c.extra is None else c.extra.astype(np.float32).ravel() for _, c in found],
        "constants": [c.constants for _, c in found],
        "fallback": [c.fallback for _, c in found],
    }, schema=CANDIDATES)


def features_shard(shard: GoalShard, source: RankerSource) -> ShardDone:
    """Computes one shard's candidates and stores them in the root's cache (skipped when that shard
    is there already: a rerun after a lost worker that had stored it). The run is marked before the
    ranker opens (seconds on whole Mathlib), so that a rerun names a lost one (`RunMarks`)."""
    t0 = time.perf_counter()
    store = features_store(source)
    marks = RunMarks(store.dir, shard.key)
    lost = marks.start()
    if lost:
        log.warning("premise features shard %d (%s): run again on %s after a lost run on %s", shard.index, shard.key,
                    worker_id(), ", ".join(lost))
    computed = 0
    if store.part(shard.key) is None:
        store.put(pl.from_arrow(candidate_rows(open_ranker(source), shard.goals)))
        computed = shard.goals.num_rows
    marks.done()
    return ShardDone(shard.index, shard.key, worker_id(), tuple(lost), computed, time.perf_counter() - t0)


def _lists(column: pa.ChunkedArray, dtype) -> list[np.ndarray | None]:
    """Each row of a list column as a NumPy array of `dtype` (None for a null row)."""
    arr = column.combine_chunks()
    offsets = arr.offsets.to_numpy()
    values = arr.values.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    return [values[offsets[i]:offsets[i + 1]].copy() if valid[i] else None for i in range(len(arr))]


def read_candidates(keys: Sequence[str], source: RankerSource) -> list[Candidates]:
    """The stored candidates of the goals `keys` (`goal_key`), in that order; a ValueError names a
    goal no shard stored."""
    store = features_store(source)
    rows = store.load(pl.Series("key", list(dict.fromkeys(keys)), dtype=pl.String)).to_arrow()
    touch(store.dir)  # the newest folders are the ones kept
    at = {k: i for i, k in enumerate(rows.column("key").to_pylist())}
    missing = [k for k in keys if k not in at]
    if missing:
        raise ValueError(f"premise features: {len(missing)} goals have no stored candidates (first {missing[0][:16]})")
    docs, features = _lists(rows.column("docs"), np.int64), _lists(rows.column("features"), np.float32)
    extra, fallback = _lists(rows.column("extra"), np.float32), rows.column("fallback").to_pylist()
    constants = rows.column("constants").to_pylist()
    out = []
    for k in keys:
        i = at[k]
        x = extra[i]
        out.append(Candidates(docs[i], features[i].reshape(-1, len(FEATURES)), constants[i], fallback[i],
                              None if x is None else x.reshape(-1, len(EXTRA))))
    return out


def read_runs(goals: list[dict], source: RankerSource) -> list[Run]:
    """The goals' runs (their stored candidates and gold), in goal order."""
    found = read_candidates([goal_key(g) for g in goals], source)
    return [Run(c, set(g["gold"])) for c, g in zip(found, goals)]


def keep_newest_sets(cache_dir: Path) -> None:
    """Drops all but the KEEP most recently used folders of candidate rows."""
    keep_newest(CacheLayout(cache_dir).premise_features, KEEP)
