"""The formula channel's stage functions: describe one formula, parse a FORMULAS table, turn Lean
declarations into formulas. Parsing never raises for bad input: grammar, then MathML, then tokens."""

from __future__ import annotations

import hashlib
import json
import logging
import re

import pyarrow as pa

from mathindex.formula import canonical as canon
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
from mathindex.schemas.common import ERRORS, error_row, table
from mathindex.schemas.formula import FORMULA_TREES

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


def _source_text(row: dict) -> str:
    norm = row.get("latex_normalised")
    return norm if norm else (row.get("latex") or "")


def parse_formulas(formulas: pa.Table, budget_s: float = 2.0) -> tuple[pa.Table, pa.Table]:
    """FORMULA_TREES rows (one per input formula_id, in input order) and ERRORS rows.

    Streams the input in batches (each batch becomes a table before the next is read). Canonical
    forms run in one killable SymPy worker; a formula past `budget_s` is recorded as `timeout`
    and the rest of the batch goes on in a fresh worker."""
    cols = [c for c in ("formula_id", "corpus", "file", "line", "latex", "latex_normalised", "source")
            if c in formulas.column_names]
    parts: list[pa.Table] = []
    errors: list[dict] = []
    worker = canon.CanonicalWorker()
    inflight: tuple[list[dict], list[dict]] | None = None  # SymPy works on it while we parse on
    try:
        for batch in formulas.select(cols).to_batches(max_chunksize=CANONICAL_BATCH):
            inputs = batch.to_pylist()
            rows: list[dict] = []
            pending: list[tuple[int, tuple]] = []
            for row in inputs:
                text = _source_text(row)
                tree, parser, status, reason = analyse(text, lean=row.get("source") == "lean")
                if reason is not None:
                    errors.append(error_row(row.get("corpus") or "", row.get("file") or "",
                                            row.get("line"), STAGE, f"{row['formula_id']}: {reason}"))
                spec = canon.to_spec(tree) if status == "ok" else None  # never for a partial tree
                if spec is not None:
                    pending.append((len(rows), spec))
                rows.append({
                    "formula_id": row["formula_id"], "parser": parser, "status": status,
                    "tree": json.dumps(tree_json(tree), ensure_ascii=False, separators=(",", ":")),
                    "tree_text": tree_text(tree), "path_tokens": path_tokens(tree),
                    "canonical": None, "canonical_status": "unsupported",
                })
            if inflight is not None:
                parts.append(_finish(worker, *inflight, errors, budget_s))
            worker.submit(pending)
            inflight = (rows, inputs)
        if inflight is not None:
            parts.append(_finish(worker, *inflight, errors, budget_s))
    finally:
        worker.close()
    trees = pa.concat_tables(parts) if parts else table([], FORMULA_TREES)
    return trees, table(errors, ERRORS)


def _finish(worker: canon.CanonicalWorker, rows: list[dict], inputs: list[dict],
            errors: list[dict], budget_s: float) -> pa.Table:
    """Fills the canonical forms of one submitted batch and makes its FORMULA_TREES table."""
    for idx, cstatus, value in worker.collect(budget_s):
        rows[idx]["canonical_status"] = cstatus
        if cstatus == "ok":
            rows[idx]["canonical"] = value
        else:
            src = inputs[idx]
            errors.append(error_row(src.get("corpus") or "", src.get("file") or "", src.get("line"),
                                    "canonical_form", f"{src['formula_id']}: {cstatus}: {value}"))
    return table(rows, FORMULA_TREES)


def lean_formulas(declarations: pa.Table) -> pa.Table:
    """FORMULAS rows for Lean declarations with a statement type (source `lean`, node `lean:<name>`)."""
    from mathindex.schemas.latex import FORMULAS

    cols = [c for c in ("full_name", "type", "signature", "corpus", "file", "line_start")
            if c in declarations.column_names]
    rows: list[dict] = []
    position: dict[str, int] = {}
    for batch in declarations.select(cols).to_batches(max_chunksize=10_000):
        for d in batch.to_pylist():
            text = " ".join((d.get("type") or "").split())
            if not text or _SORT_ONLY.match(text):  # `Prop`, `Type u`: no statement to search
                continue
            corpus, file = d.get("corpus") or "", d.get("file") or ""
            pos = position.get(file, 0)
            position[file] = pos + 1
            key = f"{corpus}|{file}|lean|{d['full_name']}|{d.get('line_start')}"
            rows.append({
                "formula_id": hashlib.sha256(key.encode("utf-8")).hexdigest()[:16],
                "corpus": corpus, "node_id": f"lean:{d['full_name']}", "statement_id": None,
                "source": "lean", "file": file, "line": int(d.get("line_start") or 0),
                "position": pos, "display": "lean", "latex": text, "latex_normalised": text,
                "role": "statement",
            })
    return table(rows, FORMULAS)
