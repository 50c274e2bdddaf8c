"""The formula channel's stage functions: describe one formula, parse a FORMULAS table, turn Lean
declarations into formulas. Parsing never raises for bad input: grammar, then MathML, then tokens."""

from __future__ import annotations

import hashlib
import json
import logging
import re

from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.formula import parse_cache as fcache
from mathindex.formula import canonical as canon
from mathindex.formula.parse_cache import content_key, parse_cache
from mathindex.cache.stop import check_stopped
from mathindex.formula.grammar import (
    MAX_CHARS,
    ParseError,
    parse_latex,
    parse_lean,
    parse_partial,
    tree_dict,
    tree_json,
    tree_text,
)
from mathindex.formula.mathml import mathml_tree, token_row
from mathindex.formula.paths import path_tokens
from mathindex.textfold import folded
from mathindex.schemas.common import ERRORS, error_row, table
from mathindex.schemas.formula import FORMULA_TREES
from mathindex.schemas.latex import FORMULAS
from mathindex.names import LEAN_PREFIX

log = logging.getLogger(__name__)

STAGE = "parse_formula"
CANONICAL_BATCH = 2_000
_SORT_ONLY = re.compile(r"^(?:Prop|Sort\*?|Type\*?|Type _|(?:Type|Sort) [\w.+ ()]+)$")
_LEAN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_']*\.[A-Za-z_]|[A-Za-z]{4,}")
_LEAN_HINT = frozenset("∀∃∑∏→↔∧∨¬ℕℤℚℝℂ∣⁻")


def analyse(text: str, lean: bool = False) -> tuple[tuple, str, str, str | None]:
    """(tree, parser, status, reason): the grammar's tree (status ok), else its partial tree of
    the input with the tokens it stumbles on dropped (partial), else MathML's layout tree
    (fallback), else tokens (error)."""
    try:
        tree = parse_lean(text) if lean else parse_latex(text)
        return tree, "grammar", "ok", None
    except ParseError as exc:
        reason = f"grammar: {exc}"
        try:
            tree, repairs = parse_partial(text, lean=lean)
            return tree, "grammar", "partial", f"{reason}; partial tree: {', '.join(repairs)}"
        except ParseError:
            pass
        except Exception:  # noqa: BLE001 - as below: reported by the reason of the fallback
            log.debug("partial parse failed on %r", text[:200], exc_info=True)
    except Exception as exc:  # noqa: BLE001 - a grammar bug must not stop a build; it is reported
        log.debug("grammar failed on %r", text[:200], exc_info=True)
        reason = f"grammar: internal {type(exc).__name__}: {exc}"
    if not lean:
        try:
            return mathml_tree(text), "mathml", "fallback", reason
        except ValueError as exc:
            reason = f"{reason}; mathml: {exc}"
    if len(text) > MAX_CHARS:
        reason = f"{reason}; input of {len(text)} characters"
    return token_row(text), "tokens", "error", reason


def looks_like_lean(text: str) -> bool:
    """True for a Lean term: no backslash macros, and unicode binders/types, a dotted name or
    a word of four or more letters (`lfp`-style names would be juxtaposed letters in LaTeX)."""
    if "\\" in text:
        return False
    return any(ch in _LEAN_HINT for ch in text) or bool(_LEAN_WORD.search(text))


_PIECE = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]|`([^`]+)`", re.S)


def query_pieces(query: str) -> list[tuple[str, bool]]:
    """The formulas of a query as (text, is_lean): its `$…$`, `\\(…\\)`, `\\[…\\]` and backtick
    pieces (at most three, longest first), or the whole query when it has none."""
    found: list[tuple[str, bool]] = []
    for m in _PIECE.finditer(query):
        groups = m.groups()
        text = next((g for g in groups if g), "").strip()
        if text:
            found.append((text, True if groups[4] else looks_like_lean(text)))
    if not found:
        text = query.strip().strip("$").strip()
        return [(text, looks_like_lean(text))] if text else []
    found.sort(key=lambda p: -len(p[0]))
    return found[:3]


def describe_formula(latex: str) -> dict:
    """What `mathindex formula` prints: tree, tree_text, path_tokens, canonical, canonical_status,
    parser, status (and reason when the grammar rejected the input)."""
    text = latex.strip().strip("$").strip()
    lean = looks_like_lean(text)
    tree, parser, status, reason = analyse(text, lean=lean)
    spec = canon.to_spec(tree) if status == "ok" else None
    [(cstatus, cform)] = canon.canonical_forms([spec], budget_s=2.0)
    out = {
        "tree": tree_dict(tree),
        "tree_text": tree_text(tree),
        "path_tokens": path_tokens(tree),
        "canonical": cform,
        "canonical_status": cstatus,
        "parser": parser,
        "status": status,
        "syntax": "lean" if lean else "latex",
    }
    if reason:
        out["reason"] = reason
    return out


_INPUT_COLUMNS = ("formula_id", "corpus", "file", "line", "latex", "latex_normalised", "source")


def formula_inputs(formulas: pa.Table) -> pl.DataFrame:
    """formula_id, corpus, file, line, the text to parse (latex_normalised, else latex), `lean`
    (source lean) and the cache key of (text, source), one row per input formula in input order."""
    cols = [c for c in _INPUT_COLUMNS if c in formulas.column_names]
    df = pl.from_arrow(formulas.select(cols)) if formulas.num_rows else pl.DataFrame(
        schema={c: pl.Int32 if c == "line" else pl.String for c in cols})
    for c in _INPUT_COLUMNS:
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=pl.Int32 if c == "line" else pl.String).alias(c))
    norm = pl.col("latex_normalised")
    df = df.select(
        "formula_id", pl.col("corpus").fill_null(""), pl.col("file").fill_null(""), pl.col("line").cast(pl.Int32),
        text=pl.when(norm.is_not_null() & (norm != "")).then(norm).otherwise(pl.col("latex").fill_null("")),
        lean=pl.col("source").eq("lean").fill_null(False),
    )
    keys = [content_key(t, lean) for t, lean in zip(df["text"].to_list(), df["lean"].to_list())]
    return df.with_columns(key=pl.Series(keys, dtype=pl.String))


def uncached(inputs: pl.DataFrame, cache_dir: Path | None, budget_s: float) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the cache rows of `inputs`' distinct formulas found under `cache_dir`, the distinct
    formulas to parse: key, text, lean, in input order)."""
    todo = inputs.unique("key", keep="first", maintain_order=True).select("key", "text", "lean")
    found = parse_cache(cache_dir, budget_s).load(todo["key"]) if cache_dir is not None else fcache.empty()
    return found, todo.join(found.select("key"), on="key", how="anti", maintain_order="left")


def cacheable(rows: pl.DataFrame) -> pl.DataFrame:
    """The parse rows that may be cached: all but those the SymPy worker never saw (`WORKER_DOWN`)."""
    return rows.filter(pl.col("canonical_reason").ne(canon.WORKER_DOWN).fill_null(True))


def assemble(inputs: pl.DataFrame, rows: pl.DataFrame) -> tuple[pa.Table, pa.Table]:
    """FORMULA_TREES (one row per input, in input order) and ERRORS rows from `rows`, the parse
    rows of every distinct key of `inputs` (one each, in any order: the join decides the order)."""
    out = inputs.join(rows, on="key", how="left", maintain_order="left")
    trees = out.select(FORMULA_TREES.names).to_arrow().cast(FORMULA_TREES)
    return trees, _errors(out)


def parse_formulas(formulas: pa.Table, budget_s: float = 2.0,
                   cache_dir: Path | None = None) -> tuple[pa.Table, pa.Table]:
    """FORMULA_TREES rows (one per input formula_id, in input order) and ERRORS rows (input order).

    Each distinct (text, source) is parsed once; with `cache_dir` (a release root's cache) results
    of earlier runs of the same code are reused (`formula.parse_cache`) and the new ones stored, so a
    rebuild parses only the formulas it has not seen. The rows come out the same either way. The
    release parses in content-keyed shards instead (`formula.shards`), with the same rows."""
    inputs = formula_inputs(formulas)
    found, todo = uncached(inputs, cache_dir, budget_s)
    fresh = parse_rows(todo, budget_s)
    log.info("formulas: %d rows, %d distinct, %d cached, %d parsed", inputs.height,
             found.height + fresh.height, found.height, fresh.height)
    if cache_dir is not None:
        parse_cache(cache_dir, budget_s).add(cacheable(fresh))
    return assemble(inputs, pl.concat([found, fresh]))


def parse_rows(todo: pl.DataFrame, budget_s: float, worker: canon.CanonicalWorker | None = None) -> pl.DataFrame:
    """Cache rows (`formula.parse_cache.SCHEMA`) for `todo` (key, text, lean), in batches.

    Canonical forms run in one killable SymPy worker (`worker`, kept open; else a new one, closed
    after) that works on a batch while the next is
    parsed; a formula past `budget_s` is recorded as `timeout` and the rest of its batch goes on
    in a fresh worker. A `timeout` is cached like any other result: the budget (part of the code
    version) has had its say, and trying again each nightly would spend it again and make the
    release depend on how loaded the machine was that night."""
    if todo.is_empty():
        return fcache.empty()
    parts: list[pa.Table] = []
    own = worker is None
    worker = canon.CanonicalWorker() if own else worker
    inflight: list[dict] | None = None  # SymPy works on it while we parse on
    try:
        for batch in todo.iter_slices(CANONICAL_BATCH):
            check_stopped()  # a batch at a time: the run may have stopped waiting (cache.stop)
            rows: list[dict] = []
            pending: list[tuple[int, tuple]] = []
            for key, text, lean in batch.iter_rows():
                tree, parser, status, reason = analyse(text, lean=lean)
                spec = canon.to_spec(tree) if status == "ok" else None  # never for a partial tree
                if spec is not None:
                    pending.append((len(rows), spec))
                rows.append({
                    "key": key, "parser": parser, "status": status,
                    "tree": json.dumps(tree_json(tree), ensure_ascii=False, separators=(",", ":")),
                    "tree_text": tree_text(tree), "path_tokens": path_tokens(tree),
                    "canonical": None, "canonical_status": "unsupported", "reason": reason,
                    "canonical_reason": None,
                })
            if inflight is not None:
                parts.append(_finish(worker, inflight, budget_s))
            worker.submit(pending)
            inflight = rows
        parts.append(_finish(worker, inflight, budget_s))
    finally:
        if own:
            worker.close()
    return pl.from_arrow(pa.concat_tables(parts))


def _finish(worker: canon.CanonicalWorker, rows: list[dict], budget_s: float) -> pa.Table:
    """Fills the canonical forms of one submitted batch and makes its cache table."""
    for idx, cstatus, value in worker.collect(budget_s):
        rows[idx]["canonical_status"] = cstatus
        rows[idx]["canonical" if cstatus == "ok" else "canonical_reason"] = value
    return table(rows, fcache.SCHEMA)


def _errors(out: pl.DataFrame) -> pa.Table:
    """ERRORS rows of parsed inputs, in input order: `parse_formula` when the grammar rejected the
    text, `canonical_form` when SymPy failed or ran out of budget (never both for one formula)."""
    bad = out.filter(pl.col("reason").is_not_null() | pl.col("canonical_status").is_in(["timeout", "error"]))
    rows = [
        error_row(r["corpus"], r["file"], r["line"], STAGE, f"{r['formula_id']}: {r['reason']}")
        if r["reason"] is not None else
        error_row(r["corpus"], r["file"], r["line"], "canonical_form",
                  f"{r['formula_id']}: {r['canonical_status']}: {r['canonical_reason']}")
        for r in bad.select("formula_id", "corpus", "file", "line", "reason", "canonical_status",
                            "canonical_reason").iter_rows(named=True)
    ]
    return table(rows, ERRORS)


def lean_formulas(declarations: pa.Table) -> pa.Table:
    """FORMULAS rows for Lean declarations with a statement type (source `lean`, node `lean:<name>`):
    the type with its whitespace folded, `position` its ordinal among the file's statements."""
    cols = {"full_name": pl.String, "type": pl.String, "corpus": pl.String, "file": pl.String, "line_start": pl.Int64}
    present = [c for c in cols if c in declarations.column_names]
    d = pl.from_arrow(declarations.select(present)) if declarations.num_rows else pl.DataFrame(schema=cols)
    d = d.with_columns(pl.lit(None, dtype=t).alias(c) for c, t in cols.items() if c not in d.columns)
    d = d.with_columns(
        text=folded(pl.col("type")),
        corpus=pl.col("corpus").fill_null(""), file=pl.col("file").fill_null(""),
        name=pl.col("full_name").cast(pl.String).fill_null("None"),
    ).filter(pl.col("text") != "")
    # `Prop`, `Type u`: no statement to search (the exact regex runs on the few that may match)
    maybe = d.filter(pl.col("text").str.contains(r"^(?:Prop|Sort|Type)"))["text"].unique().to_list()
    d = d.filter(~pl.col("text").is_in([t for t in maybe if _SORT_ONLY.match(t)]))
    keys = d.select(pl.concat_str("corpus", "file", pl.lit("lean"), "name",
                                  pl.col("line_start").cast(pl.String).fill_null("None"), separator="|"))
    ids = [hashlib.sha256(k.encode("utf-8")).hexdigest()[:16] for k in keys.to_series().to_list()]
    out = d.select(
        formula_id=pl.Series(ids, dtype=pl.String), corpus="corpus", node_id=pl.lit(LEAN_PREFIX) + pl.col("name"),
        statement_id=pl.lit(None, dtype=pl.String), source=pl.lit("lean"), file="file",
        line=pl.col("line_start").fill_null(0).cast(pl.Int32), position=pl.int_range(pl.len(), dtype=pl.Int32).over("file"),
        display=pl.lit("lean"), latex="text", latex_normalised="text", role=pl.lit("statement"),
        label=pl.lit(None, dtype=pl.String), tag=pl.lit(None, dtype=pl.String),
    )
    return out.to_arrow().cast(FORMULAS)
