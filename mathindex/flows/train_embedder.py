"""The train-embedder flow: mine pairs from a release, train, benchmark before and after, install
the model with its card in a models directory (`<name>@<revision16>/`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from prefect import flow

from mathindex.embed.base import default_model_path
from mathindex.evaluation.card import install_with_card, training_record
from mathindex.evaluation.pool import release_texts
from mathindex.evaluation.suites import load_suite, project_suite_files
from mathindex.embed.models import TRAINING_DIR, embedder_name, model_revision
from mathindex.embed.train import Recipe, pairs_sha256
from mathindex.flows.progress import StageProgress
from mathindex.tasks.train import mine_training_pairs, pool_benchmark, train_model
from mathindex.store.layout import ReleaseLayout, RootLayout

STAGES = ["mine", "train", "benchmark", "install"]


@flow(name="train-embedder", log_prints=False)
def train_embedder_flow(release: str, out: str, base: str | None = None, recipe: dict | None = None,
                        suites: list[str] | None = None, pool_size: int = 10_000, pool_seed: int = 0) -> dict:
    """Returns the card record, with `model_dir` the installed model."""
    release_dir, models_dir = Path(release).resolve(), Path(out).resolve()
    base_dir = Path(base).expanduser().resolve() if base else default_model_path()
    revision = model_revision(base_dir)
    base_info = {"name": embedder_name(base_dir, revision), "revision": revision}
    rec = Recipe(**(recipe or {}))
    names = _node_names(release_dir)
    bench_suites = sorted({p for p in project_suite_files(release_dir) if _in_release(p, names)}
                          | {Path(s).resolve() for s in suites or []})
    with StageProgress(STAGES, desc="train-embedder") as progress:
        with progress.stage("mine"):
            # a bad release fails here, before anything is written; benchmarked suites are never trained on
            pairs, data = mine_training_pairs(release_dir, rec.seed, bench_suites)
        work = models_dir / TRAINING_DIR
        with progress.stage("train"):
            result = train_model(pairs, base_dir, base_info["revision"], work / "runs", rec)
        with progress.stage("benchmark"):
            cache = RootLayout(models_dir.parent).cache  # ROOT/cache beside ROOT/models: the releases' embedding cache
            texts = release_texts(release_dir)
            before = pool_benchmark(texts, base_dir, bench_suites, pool_size, pool_seed, cache)
            after = pool_benchmark(texts, result.model_dir, bench_suites, pool_size, pool_seed, cache)
        with progress.stage("install"):
            benchmark = None if before is None else {"pool": {"size": pool_size, "seed": pool_seed},
                                                     "before": before, "after": after}
            record = training_record(base_info, asdict(rec), str(release_dir), {"sha256": pairs_sha256(pairs), **data},
                                     result, benchmark)
            record["model_dir"] = str(install_with_card(result.model_dir, models_dir, rec.name, record))
    return record


def _node_names(release: Path):
    """The distinct node names of a release (an Arrow array); empty when it has no texts table (the
    miner then refuses the release)."""
    path = ReleaseLayout(release).table("embedding_texts")
    return pc.unique(pq.read_table(path, columns=["name"]).column("name")) if path.is_file() else pa.array([], pa.string())


def _in_release(suite: Path, names) -> bool:
    """A suite is benchmarked when most of its gold names are among the release's node `names`."""
    if not suite.is_file():
        return False
    gold = sorted({g for q in load_suite(suite).queries for g in q.gold})
    present = pc.sum(pc.is_in(names, value_set=pa.array(gold, pa.string()))).as_py() or 0
    return present >= max(1, len(gold) / 2)
