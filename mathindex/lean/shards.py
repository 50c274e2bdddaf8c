"""The per-file pass of Lean extraction as content-keyed shards of files: one file's raw rows
(`extract_file`), the files a source's rows cache lacks cut into shards (`plan_shards`), one shard
scanned and stored in that cache by whichever process runs it (`extract_shard`: a task runner's
thread, a Dask worker or the stage's process pool), and a whole tree's rows read back from it
(`tree_rows`) in sorted file order, so the tables never depend on the shards or their finish order.

The rows cache (`CacheLayout.lean_rows`) holds one entry per stored shard, named by its files'
contents; `tree_rows` takes each file's rows from the first entry (by name) that holds its current
digest, drops the entries it took nothing from, and folds the rest into one past MAX_ENTRIES.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from mathindex.cache.codes import LEAN
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import RunMarks, ShardDone, damaged, read_arrow, worker_id, write_arrow
from mathindex.corpusfiles import MAX_BYTES, CorpusRoot, Refused, read_file, regular_size, too_large
from mathindex.lean.scanner import STAGE, scan_file
from mathindex.schemas.common import ERRORS, error_row
from mathindex.schemas.lean import DECLARATIONS

log = logging.getLogger(__name__)

SHARD_BYTES = 4 * 1024 * 1024  # source bytes a shard scans: 26 shards for whole Mathlib's 105 MB of .lean
SPREAD_MIN_BYTES = 512 * 1024  # a spread shard is no smaller: a pool worker or a task would cost more than it scans
MAX_ENTRIES = 8  # rows cache entries kept apart; past this `tree_rows` folds them into one
MAX_FILE_BYTES = MAX_BYTES[".lean"]

_RAW_EXTRA = [
    pa.field("_seq", pa.int32(), nullable=False),  # row order inside its file
    pa.field("_deps", pa.list_(pa.string())),  # constants the signature names, as written
    pa.field("_proof_deps", pa.list_(pa.string())),  # constants only the body names, as written
    pa.field("_inst", pa.string()),  # JSON naming hint of an anonymous instance
    pa.field("_twin_src", pa.string()),
    pa.field("_twin_tgt", pa.string()),
    pa.field("_resolve", pa.string()),  # JSON [name, namespace, opens] for `attribute [...] name`
    pa.field("_ns", pa.string()),  # namespace and opens (JSON) in force, to resolve dependencies
    pa.field("_opens", pa.string()),
]
RAW = pa.schema([f for f in DECLARATIONS if f.name != "decl_id"] + _RAW_EXTRA)
_FILES = pa.schema([pa.field("file", pa.string(), nullable=False), pa.field("sha256", pa.string(), nullable=False)])
_ROWS = {"files": _FILES, "raw": RAW, "errors": ERRORS}  # an entry's tables, files.arrow written last
_RAW_ORDER = [("file", "ascending"), ("_seq", "ascending")]
ERRORS_ORDER = [("file", "ascending"), ("line", "ascending"), ("reason", "ascending")]


def module_name(rel: str) -> str:
    """`Mathlib/Order/Lattice.lean` -> `Mathlib.Order.Lattice`."""
    return rel[: -len(".lean")].replace("/", ".") if rel.endswith(".lean") else rel.replace("/", ".")


def decode(data: bytes, corpus: str, rel: str) -> tuple[str | None, list[dict]]:
    """File bytes as text (None when it is not text at all) plus error rows."""
    errors = []
    if b"\0" in data[:65536]:
        return None, [error_row(corpus, rel, None, STAGE, "binary content (NUL bytes); not a Lean source file")]
    try:
        return data.decode("utf-8"), errors
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        errors.append(error_row(corpus, rel, line, STAGE, f"invalid UTF-8 at byte {exc.start}; replaced"))
        return data.decode("utf-8", errors="replace"), errors


def extract_file(data: bytes, corpus: str, rel: str) -> tuple[list[dict], list[dict]]:
    """Raw declaration rows and error rows of one file; never raises."""
    if len(data) > MAX_FILE_BYTES:
        return [], [error_row(corpus, rel, None, STAGE, too_large(len(data), MAX_FILE_BYTES))]
    text, errors = decode(data, corpus, rel)
    if text is None:
        return [], errors
    try:
        decls, _, errs = scan_file(text, corpus, module_name(rel), rel)
    except Exception as exc:  # noqa: BLE001 - a bad file must never stop the corpus
        log.warning("extractor failed on %s: %s", rel, exc)
        return [], errors + [error_row(corpus, rel, None, STAGE, f"extractor failed: {type(exc).__name__}: {exc}")]
    rows = []
    for i, d in enumerate(decls):
        twin = d.pop("_twin", None)
        inst = d.pop("_inst", None)
        resolve = d.pop("_resolve", None)
        d["_seq"] = i
        d.setdefault("_proof_deps", None)  # source declarations only
        d["_inst"] = json.dumps(inst, ensure_ascii=False) if inst is not None and not d["full_name"] else None
        d["_twin_src"] = twin[0] if twin else None
        d["_twin_tgt"] = (twin[2] + ":" + twin[1]) if twin else None
        d["_resolve"] = json.dumps(resolve, ensure_ascii=False) if resolve else None
        d["_ns"] = d.get("_ns", "")
        d["_opens"] = d.get("_opens") or "[]"
        rows.append(d)
    return rows, errors + errs


def corpus_tag(corpus: str) -> str:
    """A corpus name as cache entries carry it."""
    return hashlib.sha256(corpus.encode()).hexdigest()[:8]


def rows_version(corpus: str) -> str:
    """The rows cache's version: the digest of the extraction's code (`cache.codes.LEAN`) and the corpus."""
    return LEAN.digest() + corpus_tag(corpus)


def files_key(version: str, files: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str:
    """The content key of (relative path, sha256) pairs of one version."""
    h = hashlib.sha256(version.encode())
    for rel, sha in files:
        h.update(f"{rel}\0{sha}\n".encode())
    return h.hexdigest()[:24]


@dataclass(frozen=True)
class LeanShard:
    """Files of one corpus to scan, sorted, each with its content digest; `key` names the rows
    cache entry they are stored as (`files_key`), `version` the rows cache they go to."""

    index: int
    key: str
    corpus: str
    version: str
    root: str
    files: tuple[tuple[str, str], ...] = field(repr=False)  # (relative path, sha256)



def plan_shards(root: Path, corpus: str, version: str, files: list[tuple[str, str]], shard_bytes: int = SHARD_BYTES,
                spread: int = 1, start: int = 0) -> list[LeanShard]:
    """`files` ((relative path, sha256), sorted) cut in order into shards of about `shard_bytes` of
    source, or smaller (not below SPREAD_MIN_BYTES) so that there are `spread` of them; indexed from `start`."""
    sizes = [regular_size(Path(root) / rel) for rel, _ in files]
    target = max(1, min(shard_bytes, max(SPREAD_MIN_BYTES, -(-sum(sizes) // max(1, spread)))))
    groups: list[list[tuple[str, str]]] = []
    part: list[tuple[str, str]] = []
    held = 0
    for item, size in zip(files, sizes):
        part.append(item)
        held += size
        if held >= target:
            groups.append(part)
            part, held = [], 0
    if part:
        groups.append(part)
    return [LeanShard(start + i, files_key(version, g), corpus, version, str(root), tuple(g)) for i, g in enumerate(groups)]


def scan_shard(shard: LeanShard) -> tuple[pa.Table, pa.Table]:
    """Raw rows (RAW, in file then row order) and error rows of the shard's files, read under its root."""
    confined = CorpusRoot.of(shard.root)
    rows: list[dict] = []
    errs: list[dict] = []
    for rel, _ in shard.files:
        try:
            data = read_file(confined, Path(shard.root) / rel, MAX_FILE_BYTES)
        except Refused as exc:  # outside the root, not a regular file, too large, unreadable
            errs.append(error_row(shard.corpus, rel, None, STAGE, str(exc)))
            continue
        r, e = extract_file(data, shard.corpus, rel)
        rows.extend(r)
        errs.extend(e)
    return pa.Table.from_pylist(rows, schema=RAW), pa.Table.from_pylist(errs, schema=ERRORS)


def store_shard(cache_dir: Path, shard: LeanShard, raw: pa.Table, errs: pa.Table) -> None:
    """The shard's rows as its rows cache entry (files.arrow last: the entry is valid once it is there)."""
    write_entry(CacheLayout(cache_dir).lean_rows_entry(shard.version, shard.key), dict(shard.files), raw, errs)


def write_entry(entry: Path, shas: dict[str, str], raw: pa.Table, errs: pa.Table) -> None:
    """A rows cache entry: the rows of the files `shas` names (file -> sha256)."""
    (entry / "files.arrow").unlink(missing_ok=True)  # the entry is incomplete until files.arrow is back
    write_arrow(entry / "raw.arrow", raw)
    write_arrow(entry / "errors.arrow", errs)
    write_arrow(entry / "files.arrow", pa.table({"file": list(shas), "sha256": list(shas.values())}, schema=_FILES))


def extract_shard(shard: LeanShard, cache_dir: Path) -> ShardDone:
    """Scans one shard into the rows cache under `cache_dir` (skipped when its entry is there
    already: a rerun after a lost worker that had stored it), marking its run first so that a rerun
    names a lost one (`RunMarks`)."""
    t0 = time.perf_counter()
    layout = CacheLayout(cache_dir)
    marks = RunMarks(layout.lean_rows(shard.version), shard.key)
    lost = marks.start()
    if lost:
        log.warning("lean shard %d (%s): run again on %s after a lost run on %s", shard.index, shard.key,
                    worker_id(), ", ".join(lost))
    scanned = 0
    if not (layout.lean_rows_entry(shard.version, shard.key) / "files.arrow").is_file():
        store_shard(cache_dir, shard, *scan_shard(shard))
        scanned = len(shard.files)
    marks.done()
    return ShardDone(shard.index, shard.key, worker_id(), tuple(lost), scanned, time.perf_counter() - t0)


def _read_entry(entry: Path) -> dict[str, pa.Table] | None:
    """An entry's tables; None when it is incomplete, or (logged, removed) damaged."""
    if not (entry / "files.arrow").is_file():
        return None
    tables = {name: read_arrow(entry / f"{name}.arrow", schema) for name, schema in _ROWS.items()}
    if any(t is None for t in tables.values()):
        damaged(entry, "a table of the per-file rows is damaged")
        return None
    return tables


def cached_files(cache_dir: Path | None, version: str, shas: dict[str, str]) -> set[str]:
    """The files of `shas` whose rows the rows cache holds at their current digest."""
    if cache_dir is None:
        return set()
    held: set[str] = set()
    for entry in CacheLayout(cache_dir).lean_rows_entries(version):
        if (entry / "files.arrow").is_file() and (files := read_arrow(entry / "files.arrow", _FILES)) is not None:
            held |= {f for f, s in zip(files["file"].to_pylist(), files["sha256"].to_pylist()) if shas.get(f) == s}
    return held


def tree_rows(cache_dir: Path, root: Path, corpus: str, shas: dict[str, str]) -> tuple[pa.Table, pa.Table]:
    """Raw rows (by file, then row order) and errors (by file, line, reason) of every file `shas`
    names, from the rows cache; files it lacks (an entry found damaged since the plan, a shard that
    never stored its rows) are scanned here first, logged. Entries that gave nothing are removed;
    past MAX_ENTRIES the rest are folded into one."""
    version = rows_version(corpus)
    got = _take_rows(cache_dir, version, shas)
    if isinstance(got, list):
        log.warning("lean rows cache of %s lacks %d file(s), e.g. %s; scanning them now", corpus, len(got), got[0])
        for shard in plan_shards(root, corpus, version, [(f, shas[f]) for f in got]):
            store_shard(cache_dir, shard, *scan_shard(shard))
        got = _take_rows(cache_dir, version, shas)
        if isinstance(got, list):
            raise ValueError(f"lean rows cache {CacheLayout(cache_dir).lean_rows(version)} lacks {got[0]} "
                             "right after storing it")
    return got


def _take_rows(cache_dir: Path, version: str, shas: dict[str, str]) -> tuple[pa.Table, pa.Table] | list[str]:
    """`tree_rows` from the cache alone, or the files it lacks (sorted)."""
    entries = CacheLayout(cache_dir).lean_rows_entries(version)
    taken: set[str] = set()
    used: list[tuple[Path, dict[str, pa.Table], list[str]]] = []
    for entry in entries:
        tables = _read_entry(entry)
        if tables is None:
            continue
        files = tables["files"]
        mine = sorted(f for f, s in zip(files["file"].to_pylist(), files["sha256"].to_pylist())
                      if shas.get(f) == s and f not in taken)
        taken.update(mine)
        if mine:
            used.append((entry, tables, mine))
    if missing := sorted(set(shas) - taken):
        return missing
    parts = [(t["raw"].filter(pc.is_in(t["raw"]["file"], pa.array(mine, pa.string()))),
              t["errors"].filter(pc.is_in(t["errors"]["file"], pa.array(mine, pa.string())))) for _, t, mine in used]
    raw = pa.concat_tables([RAW.empty_table(), *(r for r, _ in parts)]).sort_by(_RAW_ORDER)
    errs = pa.concat_tables([ERRORS.empty_table(), *(e for _, e in parts)]).sort_by(ERRORS_ORDER)
    _tidy(cache_dir, version, shas, [e for e, _, _ in used], entries, raw, errs)
    return raw, errs


def _tidy(cache_dir: Path, version: str, shas: dict[str, str], used: list[Path], entries: list[Path],
          raw: pa.Table, errs: pa.Table) -> None:
    """Removes the entries nothing was taken from; folds the used ones into one past MAX_ENTRIES."""
    keep = set(used)
    if len(used) > MAX_ENTRIES:
        whole = CacheLayout(cache_dir).lean_rows_entry(version, files_key(version, sorted(shas.items())))
        write_entry(whole, dict(sorted(shas.items())), raw, errs)
        keep = {whole}
    for entry in entries:
        if entry not in keep:
            shutil.rmtree(entry, ignore_errors=True)


def scanned_rows(parts: list[tuple[pa.Table, pa.Table]]) -> tuple[pa.Table, pa.Table]:
    """The rows of shards scanned without a cache, in shard (so file) order, ordered as `tree_rows` orders them."""
    raw = pa.concat_tables([RAW.empty_table(), *(r for r, _ in parts)]).sort_by(_RAW_ORDER)
    errs = pa.concat_tables([ERRORS.empty_table(), *(e for _, e in parts)]).sort_by(ERRORS_ORDER)
    return raw, errs
