"""A built release staged for premise runs: its files linked into a root of the run's own (the
release itself is never written), and its premises/ files linked with today's priors."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from mathindex.premises.priors import PREMISES_DIR, PRIORS, PRIORS_FILE, simp_names
from mathindex.store.layout import RootLayout

SKIP = {"premises", "manifest.json", "release-notes.md", "bench", "search.duckdb", "bench_results.parquet"}


def stage_release(release: Path, work: Path) -> Path:
    """WORK/releases/r/ with the release's files linked (premises/ and what later stages write left
    out), `WORK/models` linked to the release root's models, and the ONNX export copied."""
    src_root = release.resolve().parent.parent
    rel = work / "releases" / "r"
    rel.mkdir(parents=True, exist_ok=True)
    for f in release.iterdir():
        if f.name not in SKIP and not (rel / f.name).exists():
            (rel / f.name).symlink_to(f.resolve())
    if (src_root / "models").is_dir() and not (work / "models").exists():
        (work / "models").symlink_to((src_root / "models").resolve())
    exports = RootLayout(src_root).caches.onnx
    if exports.is_dir() and not (work / "onnx").exists():
        shutil.copytree(exports, work / "onnx")
    return rel


def link_premises(release: Path, rel: Path, decl) -> None:
    """`rel/premises/`: the release's files linked, its priors with the `simp` column added when
    they predate it (what premises.priors.build_priors writes today, by name)."""
    out = rel / PREMISES_DIR
    out.mkdir(exist_ok=True)
    for f in (release / PREMISES_DIR).iterdir():
        if not (out / f.name).exists() and f.name != PRIORS_FILE:
            (out / f.name).symlink_to(f.resolve())
    priors = pl.read_parquet(release / PREMISES_DIR / PRIORS_FILE)
    if "simp" not in priors.columns:
        priors = priors.with_columns(pl.col("name").is_in(simp_names(decl).implode()).alias("simp"))
    pq.write_table(priors.to_arrow().cast(PRIORS), out / PRIORS_FILE)
