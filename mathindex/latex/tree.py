"""`extract_latex_tree`: every .tex and .xml file under a corpus root into statements, formulas, errors.

Pass 1 reads the definitions of every file (macros, theorem environments, \\input edges) and groups
files into documents (connected by \\input); pass 2 extracts each file once, in a process pool, each
file under a time budget. Output rows follow sorted file order, then document order.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from mathindex.corpusfiles import MAX_BYTES, CorpusRoot, Refused, list_files, max_bytes_for, read_file, regular_size
from mathindex.latex.macros import DEFAULT_ENVS, COMMENT_ENVS_DEFAULT, FileDefs, Macro, kind_of, scan_definitions
from mathindex.latex.tex import DocContext, LabelResolver, extract_tex_text
from mathindex.latex.texscan import decode_source, strip_comments
from mathindex.latex.xmlreader import extract_xml_file
from mathindex.schemas.common import ERRORS, error_row, table
from mathindex.schemas.latex import FORMULAS, LATEX_MACROS, LATEX_STATEMENTS
from mathindex.workers import mp_context, stop_on_sigterm

log = logging.getLogger(__name__)

STAGE = "extract_latex"
MAX_FILE_BYTES = MAX_BYTES[".tex"]
MAX_ERRORS_PER_FILE = 200  # past this, one summary row says how many more there were
SERIAL_BELOW_BYTES = 1024 * 1024  # smaller corpora are extracted in-process: a pool would cost more


@dataclass(frozen=True)
class LatexExtraction:
    """The tables of one corpus, each built against its schema."""

    statements: pa.Table
    formulas: pa.Table
    errors: pa.Table
    macros: pa.Table  # LATEX_MACROS: the user macros its documents define


def read_tags(tags_file: Path, root: CorpusRoot | None = None) -> dict[str, str]:
    """Stacks-format tags file (`TAG,full_label` lines, `#` comments) as full label -> tag; read inside
    `root` (default: the file's own directory), `Refused` as any corpus file."""
    tags: dict[str, str] = {}
    root = root or CorpusRoot.of(Path(tags_file).parent)
    text = read_file(root, tags_file, max_bytes_for(tags_file)).decode("utf-8", errors="replace")
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "," not in line:
            continue
        tag, label = line.split(",", 1)
        tags.setdefault(label.strip(), tag.strip())
    return tags


def labels_file_prefixed(tags: dict[str, str], stems: set[str]) -> bool:
    """True when most labels in the tags file start with `<file stem>-` (the Stacks convention)."""
    if not tags or not stems:
        return False
    hits = 0
    for label in tags:
        hits += any(ch == "-" and label[:i] in stems for i, ch in enumerate(label))
    return hits * 2 > len(tags)


def _read_text(root: CorpusRoot, path: Path, max_bytes: int) -> str:
    return decode_source(read_file(root, path, max_bytes))


def _resolve_input(name: str, including: Path, root: Path, confined: CorpusRoot) -> Path | None:
    """The file an `\\input{name}` names: a regular file inside the corpus root, else None."""
    for base in (including.parent, root):
        for cand in (base / name, base / f"{name}.tex"):
            try:
                if cand.is_file() and confined.contains(cand):
                    return cand
            except OSError:
                continue
    return None


def _scan_file_defs(root: CorpusRoot, path: Path, max_bytes: int, budget_s: float) -> FileDefs:
    return scan_definitions(strip_comments(_read_text(root, path, max_bytes)), budget_s)


def _contexts(
    root: Path,
    files: list[Path],
    corpus: str,
    max_bytes: int,
    budget_s: float,
    errors: list[dict],
    prescanned: dict[Path, FileDefs] | None = None,
) -> tuple[dict[Path, int], list[DocContext]]:
    """Document groups (connected by \\input) of the .tex files: (file -> context index, contexts).
    Definitions come from `prescanned` where given (pass 1 in the pool), else are scanned here."""
    prescanned = prescanned or {}
    confined = CorpusRoot.of(root)
    defs: dict[Path, FileDefs] = {}
    parent: dict[Path, Path] = {}

    def find(p: Path) -> Path:
        while parent.setdefault(p, p) != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    todo = list(files)
    seen: set[Path] = set()
    while todo:  # cycle guard: each file is scanned once
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        try:
            defs[path] = prescanned[path] if path in prescanned else _scan_file_defs(confined, path, max_bytes, budget_s)
        except (Refused, OSError, ValueError) as exc:
            defs[path] = FileDefs()
            if path not in files:
                errors.append(error_row(corpus, _rel(path, root), None, STAGE, f"input file unreadable: {exc}"))
            continue
        for name in defs[path].inputs:
            target = _resolve_input(name, path, root, confined)
            if target is None:
                continue
            parent[find(target)] = find(path)
            if target not in seen:
                todo.append(target)
    groups: dict[Path, list[Path]] = {}
    for path in sorted(defs, key=lambda p: _rel(p, root)):
        groups.setdefault(find(path), []).append(path)
    contexts = [_merge([defs[p] for p in members]) for members in groups.values()]
    index = {g: i for i, g in enumerate(groups)}
    return {p: index[find(p)] for p in defs}, contexts


def _merge(all_defs: list[FileDefs]) -> DocContext:
    macros: dict[str, Macro] = {}
    kinds = dict(DEFAULT_ENVS)
    comment_envs = set(COMMENT_ENVS_DEFAULT)
    aliases: list[tuple[str, str]] = []
    for d in all_defs:
        for mac in d.macros:
            if mac.overrides or mac.name not in macros:
                macros[mac.name] = mac
        for env, printed, _counter in d.theorems:
            kinds[env] = kind_of(printed, env)
        comment_envs.update(d.comment_envs)
        aliases.extend(d.env_aliases)
    for env, inner in aliases:
        if inner in kinds and env not in kinds:
            kinds[env] = kinds[inner]
    for env in comment_envs:
        kinds.pop(env, None)
    return DocContext(macros=macros, theorem_kinds=kinds, comment_envs=frozenset(comment_envs))


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


# -- worker side -------------------------------------------------------------------------------
class _ThreadState(threading.local):
    """Worker state, per thread: two in-process extractions on a thread pool (Prefect's) must
    not see each other's macros, tags or corpus name."""

    def __init__(self) -> None:
        self.d: dict = {}


_STATE = _ThreadState()


def _init_worker(contexts: list[DocContext], resolver: LabelResolver, corpus: str, budget_s: float, max_bytes: int,
                 root: CorpusRoot):
    _STATE.d.update(contexts=contexts, resolver=resolver, corpus=corpus, budget_s=budget_s, max_bytes=max_bytes,
                    root=root)


def _init_pool_worker(*args) -> None:
    stop_on_sigterm()
    _init_worker(*args)


def _extract_one(path_str: str, rel: str, ctx_index: int) -> tuple[pa.Table, pa.Table, pa.Table]:
    """One file's three tables; every failure becomes an errors row."""
    corpus = _STATE.d["corpus"]
    path = Path(path_str)
    try:
        if rel.endswith(".xml"):
            result = extract_xml_file(path, rel, corpus, _STATE.d["budget_s"], root=_STATE.d["root"])
        else:
            text = strip_comments(_read_text(_STATE.d["root"], path, _STATE.d["max_bytes"]))
            ctx = _STATE.d["contexts"][ctx_index]
            result = extract_tex_text(text, rel, corpus, ctx, _STATE.d["resolver"], _STATE.d["budget_s"])
    except (Refused, OSError, ValueError, RecursionError, MemoryError) as exc:
        return _tables([], [], [error_row(corpus, rel, None, STAGE, str(exc))])
    errs = [error_row(corpus, rel, line, STAGE, reason) for line, reason in result.errors[:MAX_ERRORS_PER_FILE]]
    if len(result.errors) > MAX_ERRORS_PER_FILE:
        extra = len(result.errors) - MAX_ERRORS_PER_FILE
        errs.append(error_row(corpus, rel, None, STAGE, f"{extra} further errors in this file not listed"))
    return _tables(result.statements, result.formulas, errs)


def _tables(statements: list, formulas: list | dict, errors: list) -> tuple[pa.Table, pa.Table, pa.Table]:
    formula_table = (
        pa.Table.from_pydict(formulas, schema=FORMULAS) if isinstance(formulas, dict) else table(formulas, FORMULAS)
    )
    return table(statements, LATEX_STATEMENTS), formula_table, table(errors, ERRORS)


def _defs_one(path_str: str, rel: str, ctx_index: int) -> FileDefs | None:
    """Pass 1 of one file in a worker; None when unreadable (pass 2 reports the file)."""
    try:
        return _scan_file_defs(_STATE.d["root"], Path(path_str), _STATE.d["max_bytes"], _STATE.d["budget_s"])
    except (Refused, OSError, ValueError):
        return None


def _failed_tables(corpus: str, rel: str, reason: str) -> tuple[pa.Table, pa.Table, pa.Table]:
    return _tables([], [], [error_row(corpus, rel, None, STAGE, reason)])


def _run_pool(
    fn: Callable, tasks: list[tuple[str, str, int]], init_args: tuple, workers: int, hard_s: float,
    failed: Callable[[str, str], object],
) -> dict[int, object]:
    """fn(*task) for every task in a process pool; a task whose worker died or ran past hard_s
    (hung) gets failed(rel, reason) instead, and the other tasks go on in a fresh pool."""
    results: dict[int, tuple] = {}
    queue = list(range(len(tasks)))
    while queue:
        pool = cf.ProcessPoolExecutor(
            max_workers=workers, mp_context=mp_context(), initializer=_init_pool_worker, initargs=init_args
        )
        futures = {pool.submit(fn, *tasks[i]): i for i in queue}
        started: dict[cf.Future, float] = {}
        queue = []
        pending = set(futures)
        stuck: list[int] = []
        while pending:
            done, pending = cf.wait(pending, timeout=1.0, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                i = futures[fut]
                try:
                    results[i] = fut.result()
                except Exception as exc:  # a worker died (killed, out of memory): record, go on
                    results[i] = failed(tasks[i][1], f"worker failed: {exc!r}")
            now = time.monotonic()
            for fut in pending:
                if fut.running():
                    started.setdefault(fut, now)
            stuck = [futures[f] for f in pending if f in started and now - started[f] > hard_s]
            if stuck:
                break
        if stuck:
            for i in stuck:
                results[i] = failed(tasks[i][1], f"hard time limit {hard_s:g} s exceeded")
            queue = [futures[f] for f in pending if futures[f] not in stuck]
            for proc in list((pool._processes or {}).values()):  # noqa: SLF001 - only way to stop a hung worker
                proc.kill()
        pool.shutdown(wait=True, cancel_futures=True)
    return results


def extract_latex_tree(
    root: Path,
    corpus: str,
    tags_file: Path | None = None,
    *,
    workers: int | None = None,
    file_budget_s: float = 30.0,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> LatexExtraction:
    """Statements, formulas and errors of every .tex and .xml file under root (sorted, each read once)."""
    root = Path(root)
    confined = CorpusRoot.of(root)
    files = [p for _, p in list_files(root, (".tex", ".xml"))]
    tex_files = [p for p in files if p.suffix == ".tex"]
    if tags_file is None and (root / "tags" / "tags").is_file():
        tags_file = root / "tags" / "tags"
    errors: list[dict] = []
    tags: dict[str, str] = {}
    if tags_file is not None:
        try:  # inside the corpus root, or a tags file the sources entry names elsewhere (its own directory)
            tags = read_tags(Path(tags_file), confined if confined.contains(tags_file) else None)
        except Refused as exc:
            errors.append(error_row(corpus, _rel(Path(tags_file), root), None, STAGE, f"tags file unreadable: {exc}"))
    stems = {p.stem for p in tex_files}
    resolver = LabelResolver(tags=tags, file_prefixed=labels_file_prefixed(tags, stems), stems=frozenset(stems))
    n_workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
    total_bytes = sum(regular_size(p) for p in files)
    in_process = n_workers <= 1 or len(files) <= 1 or total_bytes < SERIAL_BELOW_BYTES
    hard_s = 2 * file_budget_s + 10
    prescanned: dict[Path, FileDefs] = {}
    if not in_process and tex_files:
        scan_args = ([], resolver, corpus, file_budget_s, max_file_bytes, confined)
        scanned = _run_pool(
            _defs_one, [(str(p), _rel(p, root), 0) for p in tex_files], scan_args, n_workers, hard_s,
            failed=lambda rel, reason: None,
        )
        prescanned = {p: d for i, p in enumerate(tex_files) if isinstance(d := scanned[i], FileDefs)}
    ctx_of, contexts = _contexts(root, tex_files, corpus, max_file_bytes, file_budget_s, errors, prescanned)
    tasks = [(str(p), _rel(p, root), ctx_of.get(p, 0)) for p in files]
    init_args = (contexts or [_merge([])], resolver, corpus, file_budget_s, max_file_bytes, confined)
    if in_process:
        _init_worker(*init_args)
        results = {i: _extract_one(*t) for i, t in enumerate(tasks)}
    else:
        results = _run_pool(
            _extract_one, tasks, init_args, n_workers, hard_s, failed=lambda rel, reason: _failed_tables(corpus, rel, reason)
        )
    parts = [results[i] for i in range(len(tasks))]
    log.info("extracted %d files under %s", len(tasks), root)
    return LatexExtraction(
        statements=pa.concat_tables([table([], LATEX_STATEMENTS)] + [p[0] for p in parts]),
        formulas=pa.concat_tables([table([], FORMULAS)] + [p[1] for p in parts]),
        errors=pa.concat_tables([table(errors, ERRORS)] + [p[2] for p in parts]),
        macros=macros_table(contexts, corpus),
    )


def macros_table(contexts: list[DocContext], corpus: str) -> pa.Table:
    """Each distinct macro definition of the document groups, with how many groups define it so
    (LATEX_MACROS, sorted by name, then most documents first)."""
    counts = Counter((m.name, m.nargs, m.default, m.body) for ctx in contexts for m in ctx.macros.values())
    rows = [{"corpus": corpus, "name": n, "nargs": a, "default_value": d, "body": b, "documents": c}
            for (n, a, d, b), c in sorted(counts.items(), key=lambda x: (x[0][0], -x[1], x[0][3], x[0][1]))]
    return table(rows, LATEX_MACROS)
