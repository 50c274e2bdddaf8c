"""`extract_lean_tree`: every `*.lean` file under a root, its files scanned in content-keyed shards
(`lean.shards`: the per-file pass and its rows cache) by a small process pool or the flow's task
runner (`plan_extraction`, then the shards, then `finish_extraction`), and the corpus-wide pass that
names generated declarations, resolves dependencies and reads descriptions and citations; a whole
tree's tables are cached by its files' digests."""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import damaged, read_arrow, write_arrow
from mathindex.corpusfiles import CorpusRoot, Refused, digest, list_files, max_bytes_for, read_file
from mathindex.lean import citations, descriptions
from mathindex.lean.finalise import finalise
from mathindex.lean.shards import (ERRORS_ORDER, MAX_FILE_BYTES, SHARD_BYTES, LeanShard, cached_files, corpus_tag,
                                   plan_shards, rows_version, scan_shard, scanned_rows, store_shard, tree_rows)
from mathindex.schemas.common import ERRORS
from mathindex.schemas.lean import CITATIONS, DECLARATIONS, DEPENDENCIES, DESCRIPTIONS
from mathindex.workers import mp_context, stop_on_sigterm

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeanExtraction:
    """The tables of one Lean extraction, each built against its schema."""

    declarations: pa.Table
    dependencies: pa.Table
    errors: pa.Table
    descriptions: pa.Table = field(default_factory=DESCRIPTIONS.empty_table)
    citations: pa.Table = field(default_factory=CITATIONS.empty_table)


@dataclass(frozen=True)
class LeanPlan:
    """One Lean source before its per-file pass: its files (sorted) and their digests, its
    whole-tree cache entry (None without a cache), that entry's tables when they are there already
    (`done`: nothing to scan), and the shards of the files whose rows the cache lacks."""

    root: Path
    corpus: str
    tree: list[tuple[str, Path]] = field(repr=False)
    shas: dict[str, str] = field(repr=False)
    final_dir: Path | None
    shards: list[LeanShard] = field(repr=False)
    done: LeanExtraction | None = field(default=None, repr=False)


def file_hashes(root: Path) -> tuple[list[tuple[str, Path]], dict[str, str]]:
    """Every `*.lean` file under root (sorted relative paths) and its content sha256 (`corpusfiles.digest`:
    a refused file's digest stands for its refusal)."""
    tree = list_files(Path(root), (".lean",))
    confined = CorpusRoot.of(root)
    return tree, {rel: digest(confined, p, MAX_FILE_BYTES) for rel, p in tree}


def plan_extraction(root: Path, corpus: str, cache_dir: Path | None = None, spread: int = 1, start: int = 0,
                    shard_bytes: int = SHARD_BYTES) -> LeanPlan:
    """What extracting `root` takes: nothing when the whole-tree entry of its files is cached (`done`),
    else shards (`lean.shards.plan_shards`, indexed from `start`, at least `spread` of them) of the
    files whose rows the cache under `cache_dir` lacks (all of them without a cache)."""
    root = Path(root)
    tree, shas = file_hashes(root)
    root_files = {f"\0root/{rel}": sha for rel, sha in root_file_hashes(root).items()}  # apart from the .lean names
    final_dir = CacheLayout(cache_dir).lean_final(_tree_key(corpus, shas | root_files)) if cache_dir else None
    if final_dir is not None and (final_dir / "done").exists():
        final = {name: read_arrow(final_dir / f"{name}.arrow", schema) for name, schema in _FINAL.items()}
        if all(t is not None for t in final.values()):
            return LeanPlan(root, corpus, tree, shas, final_dir, [], LeanExtraction(**final))
        damaged(final_dir, "a table of the whole-tree entry is damaged")
    version = rows_version(corpus)
    held = cached_files(cache_dir, version, shas)
    todo = [(rel, shas[rel]) for rel, _ in tree if rel not in held]
    shards = plan_shards(root, corpus, version, todo, shard_bytes, spread, start)
    log.info("lean extraction of %s: %d files, %d from cache, %d to scan in %d shards", corpus, len(tree), len(held),
             len(todo), len(shards))
    return LeanPlan(root, corpus, tree, shas, final_dir, shards)


def scan_in_pool(shards: list[LeanShard], cache_dir: Path | None, workers: int = 2) -> list[tuple[pa.Table, pa.Table]]:
    """Scans `shards` in a process pool of `workers` (in this process for one shard or worker), each
    stored in the rows cache under `cache_dir` as it comes; their rows in shard order when there is
    no cache, else none (`finish_extraction` reads them back)."""
    kept: list[tuple[pa.Table, pa.Table]] = []

    def keep(shard: LeanShard, rows: tuple[pa.Table, pa.Table]) -> None:
        if cache_dir is not None:
            store_shard(cache_dir, shard, *rows)
        else:
            kept.append(rows)

    done = 0
    if workers > 1 and len(shards) > 1:
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=mp_context(), initializer=stop_on_sigterm) as pool:
                for rows in pool.map(scan_shard, shards):
                    keep(shards[done], rows)
                    done += 1
        except (BrokenProcessPool, OSError) as exc:  # a dead worker: finish in this process
            log.warning("lean worker pool failed (%s); scanning the remaining files in-process", exc)
    for shard in shards[done:]:
        keep(shard, scan_shard(shard))
    return kept


def finish_extraction(plan: LeanPlan, cache_dir: Path | None, scanned: list[tuple[pa.Table, pa.Table]] | None = None,
                      ) -> LeanExtraction:
    """The tables of `plan`'s tree once its shards are scanned: the rows from the rows cache under
    `cache_dir` (else `scanned`, in shard order) in sorted file order, the corpus-wide pass, the
    descriptions and citations, stored as the whole-tree entry."""
    if plan.done is not None:
        return plan.done
    t0 = time.perf_counter()
    if cache_dir is not None:
        raw, errs = tree_rows(cache_dir, plan.root, plan.corpus, plan.shas)
    else:
        raw, errs = scanned_rows(scanned or [])
    decls, deps, more_errs = finalise(raw, plan.corpus)
    del raw
    if more_errs.num_rows:
        errs = pa.concat_tables([errs, more_errs]).sort_by(ERRORS_ORDER)
    described, cited = extract_descriptions(plan.root, plan.tree, decls)
    log.info("lean extraction of %s: corpus pass %.2fs", plan.corpus, time.perf_counter() - t0)
    if plan.final_dir is not None:
        _store_final(CacheLayout(cache_dir), plan.corpus, plan.final_dir, LeanExtraction(decls, deps, errs, described, cited))
    return LeanExtraction(decls, deps, errs, described, cited)


def _store_final(layout: CacheLayout, corpus: str, final_dir: Path, tables: LeanExtraction) -> None:
    """`tables` as the whole-tree entry `final_dir` ("done" last), the corpus's other whole-tree
    entries removed (another corpus's stay: a release extracts several)."""
    for old in layout.lean_finals(f"{corpus_tag(corpus)}-"):
        if old != final_dir and (old / "done").exists():
            shutil.rmtree(old, ignore_errors=True)
    (final_dir / "done").unlink(missing_ok=True)
    for name in _FINAL:
        write_arrow(final_dir / f"{name}.arrow", getattr(tables, name))
    (final_dir / "done").write_text("ok\n")  # last: the entry is read only once this exists


def _tree_key(corpus: str, shas: dict[str, str]) -> str:
    """The whole-tree entry's key: the corpus (each corpus keeps its own entry), the code and every file's digest."""
    h = hashlib.sha256(rows_version(corpus).encode())
    for rel in sorted(shas):
        h.update(f"{rel}\0{shas[rel]}\n".encode())
    return f"{corpus_tag(corpus)}-{h.hexdigest()[:24]}"


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


def extract_lean_tree(root: Path, corpus: str, cache_dir: Path | None = None, workers: int = 2) -> LeanExtraction:
    """Declarations, dependency edges, descriptions, citations and errors of every `*.lean` file
    under `root` (sorted), its shards scanned by a process pool of `workers` (`scan_in_pool`). With
    `cache_dir` (a root's cache directory), per-file rows are reused by content hash, and a tree
    whose files all match a previous run reuses that run's tables."""
    plan = plan_extraction(Path(root), corpus, cache_dir, spread=workers)
    if plan.done is not None:
        return plan.done
    t0 = time.perf_counter()
    scanned = scan_in_pool(plan.shards, cache_dir, workers)
    log.info("lean extraction of %s: per-file pass %.2fs", corpus, time.perf_counter() - t0)
    return finish_extraction(plan, cache_dir, scanned)


__all__ = ["LeanExtraction", "LeanPlan", "extract_lean_tree", "finish_extraction", "plan_extraction", "scan_in_pool"]
