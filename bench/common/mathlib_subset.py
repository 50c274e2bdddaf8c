"""Mathlib subsets for the embedding benchmarks: declarations and dependencies of a strided file sample.

Uses the project's Lean scanner (`mathindex.lean.scanner.scan_file`) when it is importable, else a
plain regex over `/-- doc -/ theorem name sig :=`. Files are taken in sorted order with a fixed
stride, so a subset is deterministic and spread over all of Mathlib.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import pyarrow as pa

MATHLIB = Path("/work/corpora/mathlib4")
DECL_RE = re.compile(
    r"(?:/--(?P<doc>(?:(?!-/).)*?)-/\s*)?(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*"
    r"(?P<kind>theorem|lemma|def|abbrev|instance|structure|class)\s+(?P<name>[^\s(\[{:]+)(?P<sig>(?:(?!:=|\bwhere\b|\n\n).)*)",
    re.S,
)


def mathlib_files(root: Path = MATHLIB) -> list[Path]:
    """All .lean files under Mathlib/, sorted by relative path."""
    return sorted((root / "Mathlib").rglob("*.lean"))


def _regex_scan(text: str, module: str) -> tuple[list[dict], list[dict]]:
    decls = []
    for m in DECL_RE.finditer(text):
        sig = " ".join(m.group("sig").split())
        parts = sig.split(" : ")
        decls.append({"full_name": m.group("name"), "kind": m.group("kind"), "signature": sig,
                      "type": parts[-1] if len(parts) > 1 else None,
                      "docstring": " ".join((m.group("doc") or "").split()) or None, "attributes": [],
                      "module": module})
    return decls, []


def scan(path: Path, root: Path = MATHLIB) -> tuple[list[dict], list[dict]]:
    """(declaration rows, dependency rows) of one Lean file, named declarations only."""
    rel = path.relative_to(root).as_posix()
    module = rel[: -len(".lean")].replace("/", ".")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        from mathindex.lean.scanner import scan_file

        decls, _deps, _errors = scan_file(text, "mathlib", module, rel)
        deps = [{"full_name": d["full_name"], "target": t} for d in decls for t in d.get("_deps") or []]
    except ImportError:
        decls, deps = _regex_scan(text, module)
    keep = []
    for d in decls:
        if not d.get("full_name"):
            continue
        decl_id = hashlib.sha256(f"mathlib\0{module}\0{d['full_name']}\0{d.get('line_start', 0)}".encode()).hexdigest()[:16]
        keep.append({"decl_id": decl_id, "full_name": d["full_name"], "kind": d.get("kind") or "",
                     "signature": d.get("signature") or "", "type": d.get("type"), "docstring": d.get("docstring"),
                     "attributes": list(d.get("attributes") or []), "module": module})
    return keep, deps


def mathlib_subset(max_decls: int, stride: int, offset: int = 0, root: Path = MATHLIB) -> tuple[pa.Table, pa.Table, list[Path]]:
    """Declarations and dependencies of files offset, offset+stride, ... until `max_decls` declarations."""
    if not (root / "Mathlib").is_dir():
        sys.exit(f"Mathlib is not at {root}; this benchmark needs /work/corpora/mathlib4")
    decls, deps, used = [], [], []
    files = mathlib_files(root)
    for path in files[offset::stride]:
        d, e = scan(path, root)
        decls.extend(d)
        deps.extend(e)
        used.append(path)
        if len(decls) >= max_decls:
            break
    return pa.Table.from_pylist(decls), pa.Table.from_pylist(deps, schema=pa.schema([("full_name", pa.string()), ("target", pa.string())])), used


def corpus_order_texts(texts: pa.Table, decls: pa.Table) -> list[str]:
    """The embedding texts in corpus order: declarations as scanned, each one's facets in table order."""
    rank = {f"lean:{n}": i for i, n in enumerate(decls.column("full_name").to_pylist())}
    rows = sorted(zip(texts.column("node_id").to_pylist(), range(texts.num_rows), texts.column("text").to_pylist()),
                  key=lambda r: (rank.get(r[0], len(rank)), r[1]))
    return [t for _, _, t in rows]
