"""A content-keyed cache of the premise stage: a rebuild whose inputs did not change copies the
`premises/` files it wrote last time instead of fitting and scoring again.

The key (`stage_key`) is the sha256 of everything the stage reads: the declarations and
dependency tables (their Arrow IPC bytes, in the order given: row order decides the priors' rows),
the vector index's identity (its sidecar's content key and embedder: the texts, the model and the
index options), the corpus's import graph (premises.imports), the query model reference, the
seed, and the digest of the code the stage runs (`cache.codes.PREMISES`: the premise package
and the search engine it opens; the formal index, the goal grammar, BM25 and the ranker are all
functions of those tables and that code). An entry is `CacheLayout.premises/<key>/`: the stage's
files and `info.json` (what the stage returned, wall-clock seconds left out), sealed with their
digests and renamed into place whole, so a half-written entry is never read and a damaged one is
dropped (logged) and built again; the newest KEEP entries are kept.

A carried entry (`premises.build.carried_premises`): when the tables moved by a few files since the
entry whose figures were measured, the stage rebuilds the priors and the statement index and carries
that entry's weights and figures, labelled. Each entry therefore also keeps `FILES_FILE` (a digest per
corpus file of the measured build's inputs, with its split part) and `CARRY_FILE` (the carry key:
the code, model and seed the figures hold for; the measured entry; the suites' digests)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.cache.codes import PREMISES
from mathindex.cache.digest import table_digest
from mathindex.cache.shards import DIGESTS, keep_newest, publish_dir, touch, verify
from mathindex.embed.vector_index import SIDECAR_FILE
from mathindex.store.layout import ReleaseLayout

log = logging.getLogger(__name__)

INFO_FILE = "info.json"
FILES_FILE = "files.parquet"  # per-file digests of the measured build's inputs (the carry rule compares them)
CARRY_FILE = "carry.json"
_BOOKKEEPING = (INFO_FILE, FILES_FILE, CARRY_FILE, DIGESTS)  # entry files that are not the stage's
KEEP = 3  # entries kept: the last few inputs (a rebuild that flips back finds its entry)


def vector_identity(release_dir: Path) -> dict | None:
    """The vector index's content key and embedder from its sidecar; None without a vector index."""
    side = ReleaseLayout(release_dir).vector / SIDECAR_FILE
    if not side.is_file():
        return None
    meta = json.loads(side.read_text(encoding="utf-8"))
    return {"content_key": meta.get("content_key"), "embedder": meta.get("embedder")}


def stage_key(declarations: pa.Table, dependencies: pa.Table, release_dir: Path, model: str | None,
              seed: int, code: str | None = None, imports: pa.Table | None = None) -> str:
    """The cache key of one premise stage run (see the module docstring)."""
    parts = {"declarations": table_digest(declarations), "dependencies": table_digest(dependencies),
             "vector": vector_identity(release_dir), "model": None if model is None else str(model), "seed": seed,
             "code": code or PREMISES.digest(), "imports": None if imports is None else table_digest(imports)}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def load(cache_dir: Path, key: str, out_dir: Path) -> dict | None:
    """Puts the entry's files into `out_dir` (hard links, else copies) and returns its info; None
    (nothing written) when there is no complete entry for `key`, or (logged, removed) when a file
    of it differs from what was sealed."""
    entry = Path(cache_dir) / key
    info_path = entry / INFO_FILE
    if not info_path.is_file() or not verify(entry):
        return None
    info = json.loads(info_path.read_text(encoding="utf-8"))
    out_dir = Path(out_dir)
    for src in sorted(p for p in entry.rglob("*") if p.is_file() and p.relative_to(entry).as_posix() not in _BOOKKEEPING):
        dst = out_dir / src.relative_to(entry)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.unlink(missing_ok=True)
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    touch(entry)  # the newest entries are the ones kept
    return info


def store(cache_dir: Path, key: str, out_dir: Path, info: dict, files: pl.DataFrame | None = None,
          carry: dict | None = None) -> Path:
    """Copies `out_dir` (the stage's files), `info` and the carry bookkeeping (`files`: file_digests
    of the measured build; `carry`: see the module docstring) into the entry for `key`, atomically
    (a temporary directory, sealed and renamed), then drops all but the newest KEEP entries."""
    cache_dir = Path(cache_dir)
    entry = cache_dir / key
    tmp = cache_dir / f".tmp-{key}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(out_dir, tmp)
    (tmp / INFO_FILE).write_text(json.dumps(info, ensure_ascii=False) + "\n", encoding="utf-8")  # key order kept
    if files is not None and carry is not None:
        files.write_parquet(tmp / FILES_FILE)
        (tmp / CARRY_FILE).write_text(json.dumps(carry, sort_keys=True) + "\n", encoding="utf-8")
    publish_dir(tmp, entry)
    keep_newest(cache_dir, KEEP)
    log.info("premises: cached as %s", entry)
    return entry


def carry_key(model: str | None, seed: int, code: str | None = None, imports: pa.Table | None = None) -> str:
    """What carried figures must share with the build that measured them: the code (with polars,
    whose row hashes file_digests uses), the query model reference, the seed and the import graph
    (a changed header changes what every goal below it can see)."""
    parts = {"model": None if model is None else str(model), "seed": seed, "code": code or PREMISES.digest(),
             "polars": pl.__version__, "imports": None if imports is None else table_digest(imports)}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def file_digests(declarations: pa.Table, dependencies: pa.Table, parts: dict[str, str]) -> pl.DataFrame:
    """(file, part, declarations, digest) per corpus file: the number of its declaration rows and an
    order-insensitive digest of those rows and of the dependency rows of the declarations it holds
    (two sums of seeded row hashes, each cut to 32 bits so the sums cannot overflow)."""
    decls = pl.from_arrow(declarations)
    where = decls.select("full_name", "file").unique()
    deps = pl.from_arrow(dependencies).join(where, on="full_name")

    def sums(frame: pl.DataFrame) -> pl.DataFrame:
        body = frame.drop("file")
        return frame.select("file").with_columns(
            a=body.hash_rows(seed=1) % (1 << 32),
            b=body.hash_rows(seed=2) % (1 << 32),
        ).group_by("file").agg(pl.col("a").sum(), pl.col("b").sum(), pl.len().alias("n"))

    d, e = sums(decls), sums(deps)
    part = pl.DataFrame({"file": list(parts), "part": list(parts.values())}, schema={"file": pl.String, "part": pl.String})
    out = d.join(e, on="file", how="left", suffix="_dep").fill_null(0).join(part, on="file", how="left")
    digest = pl.concat_str([pl.col(c).cast(pl.String) for c in ("n", "a", "b", "n_dep", "a_dep", "b_dep")], separator=":")
    return out.select("file", "part", pl.col("n").cast(pl.Int64).alias("declarations"), digest.alias("digest")).sort("file")


def changed_files(before: pl.DataFrame, now: pl.DataFrame) -> pl.DataFrame:
    """(file, part_before, part_now, declarations): the files added, removed or changed between two
    file_digests, with the larger of their declaration counts; a file whose part moved counts too."""
    both = before.join(now, on="file", how="full", coalesce=True, suffix="_now")
    return both.filter(
        pl.col("digest").ne_missing(pl.col("digest_now")) | pl.col("part").ne_missing(pl.col("part_now"))
    ).select("file", pl.col("part").alias("part_before"), "part_now",
             pl.max_horizontal(pl.col("declarations").fill_null(0), pl.col("declarations_now").fill_null(0)).alias("declarations"))


def measured_entry(cache_dir: Path, key: str) -> tuple[Path, dict, pl.DataFrame] | None:
    """The newest complete entry whose carry key is `key`: (entry, its carry record, the measured
    build's file digests); None when there is none (a damaged entry is logged, removed, skipped)."""
    cache_dir = Path(cache_dir)
    if not cache_dir.is_dir():
        return None
    entries = sorted((p for p in cache_dir.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for entry in entries:
        try:
            carry = json.loads((entry / CARRY_FILE).read_text(encoding="utf-8"))
            if carry.get("carry_key") == key and (entry / INFO_FILE).is_file() and verify(entry):
                return entry, carry, pl.read_parquet(entry / FILES_FILE)
        except (OSError, ValueError):
            continue
    return None
