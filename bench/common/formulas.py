"""Formula corpora of the formula benchmarks: Stacks formulas, a pinned LaTeX corpus's formulas and
Mathlib's declarations, from the project's extractors (cached as Parquet under build/bench/)."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from mathindex.latex import extract_latex_tree
from mathindex.lean import extract_lean_tree
from mathindex.schemas.manifest import SourcesFile

ROOT = Path(__file__).resolve().parents[2]

STACKS = Path("/work/shared/corpora/stacks-project")


def stacks_formulas(cache: Path | None = None) -> tuple[pa.Table, float]:
    """All Stacks formulas via mathindex.latex.extract_latex_tree (cached as Parquet when asked)."""
    if cache is not None and cache.exists():
        return pq.read_table(cache), 0.0
    if not STACKS.exists():
        raise SystemExit(f"{STACKS} is absent: the formula benchmarks need the Stacks Project")
    t0 = time.perf_counter()
    ex = extract_latex_tree(STACKS, "stacks")
    took = time.perf_counter() - t0
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(ex.formulas, cache)
    return ex.formulas, took


def corpus_formulas(corpus: Path) -> tuple[str, pa.Table, float]:
    """(name, FORMULAS table, extraction seconds) of a LaTeX corpus: a directory, or a sources file
    (`bench/sources/<name>.yaml`) whose first source is read from its path. The table is cached
    under build/bench/, keyed by the corpus name and its COMMIT (or the directory's name)."""
    if corpus.is_file():
        spec = SourcesFile.model_validate(yaml.safe_load(corpus.read_text(encoding="utf-8"))).sources[0]
        name, root = spec.name, (corpus.parent / spec.path).resolve()
    else:
        name, root = corpus.resolve().name, corpus.resolve()
    if not root.is_dir():
        raise SystemExit(f"{root} is absent: lay the corpus out first (bench/layout_corpus.py)")
    commit = (root / "COMMIT").read_text().strip()[:12] if (root / "COMMIT").is_file() else "local"
    cache = ROOT / "build/bench" / f"formulas_{name}_{commit}.parquet"
    if cache.exists():
        return name, pq.read_table(cache), 0.0
    t0 = time.perf_counter()
    formulas = extract_latex_tree(root, name).formulas
    took = time.perf_counter() - t0
    cache.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(formulas, cache)
    return name, formulas, took


def formula_texts(formulas: pa.Table) -> list[str]:
    """The text the release parses for each formula: latex_normalised, else latex."""
    return [n or l for n, l in zip(formulas.column("latex_normalised").to_pylist(),
                                   formulas.column("latex").to_pylist())]


def quantile(sorted_values: list[float], q: float) -> float:
    """The q-quantile of an ascending list (nearest rank)."""
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


MATHLIB = Path("/work/corpora/mathlib4")
MATHLIBQR = ROOT / "bench" / "suites" / "mathlibqr-dev.json"


def mathlib_declarations(cache: Path | None = None) -> pa.Table:
    """Mathlib declarations (name, type, place) via mathindex.lean.extract_lean_tree, cached."""
    cols = ["full_name", "type", "signature", "corpus", "file", "line_start"]
    if cache is not None and cache.exists():
        return pq.read_table(cache)
    if not (MATHLIB / "Mathlib").exists():
        raise SystemExit(f"{MATHLIB}/Mathlib is absent: this benchmark needs Mathlib")
    decls = extract_lean_tree(MATHLIB / "Mathlib", "mathlib").declarations.select(cols)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(decls, cache)
    return decls
