"""`extract_lean_tree`: every `*.lean` file under a root, a per-file content-hash cache, a small
process pool, and the corpus-wide pass that names generated declarations."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import read_arrow, write_arrow
from mathindex.cache.codes import LEAN
from mathindex.cache.shards import damaged
from mathindex.corpusfiles import MAX_BYTES, CorpusRoot, Refused, digest, list_files, max_bytes_for, read_file, too_large
from mathindex.lean import citations, descriptions
from mathindex.lean.finalise import finalise
from mathindex.lean.scanner import STAGE, scan_file
from mathindex.schemas.common import ERRORS, error_row
from mathindex.schemas.lean import CITATIONS, DECLARATIONS, DEPENDENCIES, DESCRIPTIONS
from mathindex.workers import mp_context, stop_on_sigterm

log = logging.getLogger(__name__)

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
MAX_FILE_BYTES = MAX_BYTES[".lean"]
CHUNK_FILES = 64


@dataclass(frozen=True)
class LeanExtraction:
    """The tables of one Lean extraction, each built against its schema."""

    declarations: pa.Table
    dependencies: pa.Table
    errors: pa.Table
    descriptions: pa.Table = field(default_factory=DESCRIPTIONS.empty_table)
    citations: pa.Table = field(default_factory=CITATIONS.empty_table)


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


def _extract_chunk(args: tuple[str, CorpusRoot, list[tuple[str, str]]]) -> tuple[pa.Table, pa.Table]:
    corpus, root, items = args
    rows: list[dict] = []
    errs: list[dict] = []
    for rel, path in items:
        try:
            data = read_file(root, path, MAX_FILE_BYTES)
        except Refused as exc:  # outside the root, not a regular file, too large, unreadable
            errs.append(error_row(corpus, rel, None, STAGE, str(exc)))
            continue
        r, e = extract_file(data, corpus, rel)
        rows.extend(r)
        errs.extend(e)
    return pa.Table.from_pylist(rows, schema=RAW), pa.Table.from_pylist(errs, schema=ERRORS)


_ROWS = {"files": _FILES, "raw": RAW, "errors": ERRORS}  # a per-file entry's tables, files.arrow written last


def _load_cache(cache_dir: Path, version: str) -> tuple[dict[str, str], pa.Table, pa.Table] | None:
    """The per-file rows of `version` under a root's cache directory; None when there are none, or
    (logged, removed) when a table cannot be read or has another schema."""
    d = CacheLayout(cache_dir).lean_rows(version)
    if not (d / "files.arrow").is_file():
        return None
    tables = {name: read_arrow(d / f"{name}.arrow", schema) for name, schema in _ROWS.items()}
    if any(t is None for t in tables.values()):
        damaged(d, "a table of the per-file rows is damaged")
        return None
    files = tables["files"]
    return dict(zip(files["file"].to_pylist(), files["sha256"].to_pylist())), tables["raw"], tables["errors"]


def _save_cache(cache_dir: Path, version: str, shas: dict[str, str], raw: pa.Table, errs: pa.Table) -> None:
    d = CacheLayout(cache_dir).lean_rows(version)
    files = pa.table({"file": list(shas), "sha256": list(shas.values())}, schema=_FILES)
    (d / "files.arrow").unlink(missing_ok=True)  # the entry is incomplete until files.arrow is back
    write_arrow(d / "raw.arrow", raw)
    write_arrow(d / "errors.arrow", errs)
    write_arrow(d / "files.arrow", files)  # last: a cache is valid only once this exists


def file_hashes(root: Path) -> tuple[list[tuple[str, Path]], dict[str, str]]:
    """Every `*.lean` file under root (sorted relative paths) and its content sha256 (`corpusfiles.digest`:
    a refused file's digest stands for its refusal)."""
    tree = list_files(Path(root), (".lean",))
    confined = CorpusRoot.of(root)
    return tree, {rel: digest(confined, p, MAX_FILE_BYTES) for rel, p in tree}


def extract_raw(root: Path, corpus: str, cache_dir: Path | None = None, workers: int = 2,
                hashed: tuple[list[tuple[str, Path]], dict[str, str]] | None = None) -> tuple[pa.Table, pa.Table]:
    """Raw per-file rows (RAW schema) and errors for every `*.lean` under root, using the cache
    under `cache_dir` (a root's cache directory: `CacheLayout.lean_rows`)."""
    tree, shas = hashed or file_hashes(root)
    version = _version(corpus)
    cached = _load_cache(cache_dir, version) if cache_dir else None
    keep: set[str] = set()
    parts_raw: list[pa.Table] = []
    parts_err: list[pa.Table] = []
    if cached:
        old, raw, errs = cached
        keep = {f for f, s in shas.items() if s and old.get(f) == s}
        keep_arr = pa.array(sorted(keep), pa.string())
        parts_raw.append(raw.filter(pc.is_in(raw["file"], keep_arr)))
        parts_err.append(errs.filter(pc.is_in(errs["file"], keep_arr)))
    todo = [(rel, str(p)) for rel, p in tree if rel not in keep]
    log.info("lean extraction: %d files, %d from cache, %d to scan", len(tree), len(keep), len(todo))
    confined = CorpusRoot.of(root)
    chunks = [(corpus, confined, todo[i : i + CHUNK_FILES]) for i in range(0, len(todo), CHUNK_FILES)]
    done = 0
    if workers > 1 and len(chunks) > 1:
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=mp_context(), initializer=stop_on_sigterm) as pool:
                for r, e in pool.map(_extract_chunk, chunks):
                    parts_raw.append(r)
                    parts_err.append(e)
                    done += 1
        except (BrokenProcessPool, OSError) as exc:  # a dead worker: finish in this process
            log.warning("lean worker pool failed (%s); scanning the remaining files in-process", exc)
    for c in chunks[done:]:
        r, e = _extract_chunk(c)
        parts_raw.append(r)
        parts_err.append(e)
    raw = pa.concat_tables(parts_raw) if parts_raw else RAW.empty_table()
    errs = pa.concat_tables(parts_err) if parts_err else ERRORS.empty_table()
    if keep:  # cached rows and new rows interleave by file: restore the order
        raw = raw.sort_by([("file", "ascending"), ("_seq", "ascending")])
    errs = errs.sort_by([("file", "ascending"), ("line", "ascending"), ("reason", "ascending")])
    if cache_dir and todo:
        _save_cache(Path(cache_dir), version, shas, raw, errs)
    return raw, errs


def _version(corpus: str) -> str:
    """The per-file rows' version: the digest of the extraction's code (`cache.codes.LEAN`) and the corpus."""
    return LEAN.digest() + hashlib.sha256(corpus.encode()).hexdigest()[:8]


def _tree_key(corpus: str, shas: dict[str, str]) -> str:
    h = hashlib.sha256(_version(corpus).encode())
    for rel in sorted(shas):
        h.update(f"{rel}\0{shas[rel]}\n".encode())
    return h.hexdigest()[:24]


ROOT_FILES = citations.ROOT_FILES


def extract_descriptions(root: Path, tree: list[tuple[str, Path]], declarations: pa.Table) -> tuple[pa.Table, pa.Table]:
    """DESCRIPTIONS and CITATIONS of the corpus (lean/descriptions.py, lean/citations.py): the
    module docs of every file that has one, the curated lists and the bibliography under the root,
    resolved against `declarations`."""
    confined = CorpusRoot.of(root)
    bib = citations.read_bibliography(Path(root))
    raw, cited = [], {}
    for rel, path in tree:
        try:
            data = read_file(confined, path, MAX_FILE_BYTES)
        except Refused:  # already an errors row of the per-file pass
            continue
        if b"/-!" in data:
            text = data.decode("utf-8", errors="replace")
            raw.extend(descriptions.module_doc_descriptions(text, rel))
            if found := citations.module_doc_mentions(text, bib):
                cited[rel] = found
    raw.extend(descriptions.read_lists(Path(root)))
    described = descriptions.resolve(raw, declarations)
    entries = descriptions.read_list_entries(Path(root))
    return described, citations.citations_table(declarations, described, bib, cited, entries)


def root_file_hashes(root: Path) -> dict[str, str]:
    """The content sha256 of each ROOT_FILES file present (a whole tree's tables depend on them)."""
    confined = CorpusRoot.of(root)
    return {rel: digest(confined, Path(root) / rel, max_bytes_for(rel))
            for rel in ROOT_FILES if (Path(root) / rel).is_file()}


_FINAL = {"declarations": DECLARATIONS, "dependencies": DEPENDENCIES, "errors": ERRORS, "descriptions": DESCRIPTIONS,
          "citations": CITATIONS}


def extract_lean_tree(root: Path, corpus: str, cache_dir: Path | None = None) -> LeanExtraction:
    """Declarations, dependency edges, descriptions, citations and errors of every `*.lean` file
    under `root` (sorted). With `cache_dir` (a root's cache directory: `CacheLayout.lean`), per-file rows are
    reused by content hash, and a tree whose files all match a previous run reuses that run's tables."""
    hashed = file_hashes(Path(root))
    layout = CacheLayout(cache_dir) if cache_dir else None
    root_files = {f"\0root/{rel}": sha for rel, sha in root_file_hashes(Path(root)).items()}  # apart from the .lean names
    final_dir = layout.lean_final(_tree_key(corpus, hashed[1] | root_files)) if layout is not None else None
    if final_dir is not None and (final_dir / "done").exists():
        final = {name: read_arrow(final_dir / f"{name}.arrow", schema) for name, schema in _FINAL.items()}
        if all(t is not None for t in final.values()):
            return LeanExtraction(**final)
        damaged(final_dir, "a table of the whole-tree entry is damaged")
    t0 = time.perf_counter()
    raw, errs = extract_raw(Path(root), corpus, cache_dir, hashed=hashed)
    t1 = time.perf_counter()
    decls, deps, more_errs = finalise(raw, corpus)
    log.info("lean extraction: per-file pass %.2fs, corpus pass %.2fs", t1 - t0, time.perf_counter() - t1)
    del raw
    if more_errs.num_rows:
        errs = pa.concat_tables([errs, more_errs]).sort_by(
            [("file", "ascending"), ("line", "ascending"), ("reason", "ascending")]
        )
    described, cited = extract_descriptions(Path(root), hashed[0], decls)
    if final_dir is not None:
        for old in layout.lean_finals():
            if old != final_dir and (old / "done").exists():
                shutil.rmtree(old, ignore_errors=True)
        (final_dir / "done").unlink(missing_ok=True)
        for name, table in (("declarations", decls), ("dependencies", deps), ("errors", errs), ("descriptions", described),
                            ("citations", cited)):
            write_arrow(final_dir / f"{name}.arrow", table)
        (final_dir / "done").write_text("ok\n")  # last: the entry is read only once this exists
    return LeanExtraction(decls, deps, errs, described, cited)


__all__ = ["LeanExtraction", "extract_lean_tree", "extract_raw", "extract_file", "module_name"]
