"""The release's premise stage: split, priors, the held-out suite, fitted weights, the figures.

`build_premises` writes `premises/` under a release directory (staging) whose tables and indexes
are already written and returns what the manifest and the notes report; the ranker reads the
formal index and the embedding channel it is given (`Channels`: the release flow opens the formal
index from the staging files and lends the embed stage's channel). It is `prepare_premises` (the
index and the suite), each goal's candidates, and `finish_premises` (fits and figures): the release
flow's sharded stage (tasks/premises.py) runs the same two around candidates computed by
premises.shards, read back in goal order, so premises/ is the same bytes either way."""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.cache.layout import CacheLayout
from mathindex.embed.channel import VectorChannel
from mathindex.formal.search import FormalIndex
from mathindex.premises import premise_cache as cache
from mathindex.premises.fit import (FIT_QUERIES, MODEL_QUERIES, Named, Run, collect, fit_model, fit_weights,
                                    sample_queries, score)
from mathindex.premises.priors import PREMISES_DIR, write_premise_index
from mathindex.premises.ranker import DEFAULT_WEIGHTS, WEIGHTS_FILE, PremiseRanker
from mathindex.premises.split import HELD_OUT, SEED, TEST, TRAIN, TUNE, TUNE_SHARE, split_files
from mathindex.premises.suite import build_suite, proof_premises, suite_rows, write_suite
from mathindex.premises.boosted import MODEL_FILE, write_model
from mathindex.store.integrity import write_json

log = logging.getLogger(__name__)

SUITE_FILE = "suite.json"
METRICS_FILE = "metrics.json"
MIN_FIT_QUERIES = 30  # fewer tune queries than this: the default weights, not a fit to noise
# Held-out goals scored for the figures: a seeded sample of the suite (all of it when smaller). Whole
# Mathlib holds about 4,400; scoring them all and fitting on 1,500 took the stage 37 min on a loaded
# 2-core machine, and a 600-goal sample moved R@10 by 2 points against the whole suite.
EVAL_QUERIES = 1000
SUITE_NAMES = {TEST: "premises-held-out", TUNE: "premises"}
# A rebuild whose changed files hold at most this share of the declarations (since the build that
# measured the figures), all in `train` files, carries the weights and figures instead of fitting and
# scoring again (about 100 s on whole Mathlib): such a change moves the priors of a few proofs.
CARRY_SHARE = 0.01
BASELINES = {"bm25 over statements": {"lexical": 1.0}, "embedding channel alone": {"embedding": 1.0}}
# The ranker's formal index and embedding channel (each None when the release has none), opened on
# demand: a cached or carried stage never opens them.
Channels = Callable[[], tuple[FormalIndex | None, VectorChannel | None]]


@dataclass(frozen=True)
class StageEntry:
    """Where a measured build of the stage goes in the premise cache (`cache_measured`): its key, and
    what a later build carries its figures by (the carry key, each file's digest, the suites')."""

    entries: Path
    key: str
    carry_key: str
    files: pl.DataFrame = field(repr=False)
    suites: dict[str, str]


def cached_premises(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, open_channels: Channels,
                    cache_dir: Path | None, model: str | None = None, seed: int = SEED,
                    carry_share: float = CARRY_SHARE, imports: pa.Table | None = None) -> dict:
    """`build_premises` behind the content-keyed cache (premises.premise_cache) under `cache_dir` (a root's
    cache directory; None: no cache): when the inputs match an entry, its files are linked into
    `premises/` and its figures returned, and the ranker's channels (`open_channels()`) are never opened.
    When they moved by at most `carry_share` of the declarations since a measured entry of the same
    code, model and seed, the figures are carried (`carried_premises`). `imports`: the corpus's
    import graph (premises.imports.read_imports), part of the key."""
    t0 = time.perf_counter()
    info, entry = reused_premises(release_dir, declarations, dependencies, cache_dir, model, seed, carry_share, imports)
    if info is None:
        info = build_premises(release_dir, declarations, dependencies, *open_channels(), seed, token_cache=cache_dir,
                              imports=imports)
        info.pop("seconds")
        if entry is not None:
            cache_measured(entry, release_dir, info)
    return {**info, "seconds": round(time.perf_counter() - t0, 1)}


def reused_premises(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, cache_dir: Path | None,
                    model: str | None, seed: int = SEED, carry_share: float = CARRY_SHARE,
                    imports: pa.Table | None = None) -> tuple[dict | None, StageEntry | None]:
    """(the stage's figures, its files in `premises/`, when the cache under `cache_dir` holds an entry
    of these inputs or carries a measured one (`carried_premises`), else None; where a build measured
    now goes (None without a cache)). See `cached_premises`."""
    if cache_dir is None:
        return None, None
    entries = CacheLayout(cache_dir).premises
    key = cache.stage_key(declarations, dependencies, release_dir, model, seed, imports=imports)
    info = cache.load(entries, key, Path(release_dir) / PREMISES_DIR)
    if info is not None:
        log.info("premises: inputs unchanged (key %s): files and figures from the cache", key[:16])
        return info, None
    carry_key = cache.carry_key(model, seed, imports=imports)
    parts = split_files(declarations.column("file").to_pylist(), seed)
    files = cache.file_digests(declarations, dependencies, parts)
    used = proof_premises(declarations, dependencies)
    digests = {part: cache.table_digest(suite_rows(declarations, dependencies, parts, part, used).to_arrow())
               for part in (TEST, TUNE)}
    got = carried_premises(release_dir, declarations, dependencies, entries, carry_key, parts, files, digests,
                           token_cache=cache_dir, carry_share=carry_share, imports=imports)
    if got is None:
        return None, StageEntry(entries, key, carry_key, files, digests)
    info, measured = got
    cache.store(entries, key, Path(release_dir) / PREMISES_DIR, info, measured[2], measured[1])
    return info, None


def cache_measured(entry: StageEntry, release_dir: Path, info: dict) -> None:
    """Stores the stage's files in `premises/` and `info` (no wall clock) as a measured entry."""
    cache.store(entry.entries, entry.key, Path(release_dir) / PREMISES_DIR, info, entry.files,
                {"carry_key": entry.carry_key, "measured": entry.key, "suites": entry.suites})


def carried_premises(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, entries: Path,
                     carry_key: str, parts: dict[str, str], files: pl.DataFrame, digests: dict[str, str],
                     token_cache: Path | None, carry_share: float = CARRY_SHARE,
                     imports: pa.Table | None = None) -> tuple[dict, tuple] | None:
    """The stage without fitting or scoring, when that would measure (almost) the same thing again:
    a measured entry of the same carry key exists, at most `carry_share` of the declarations lie in
    files that changed since it, every changed (added, removed) file is a `train` file (held-out and
    tune files, and every file's part, unchanged) and both suites are the ones it measured. Then the priors and the
    statement index are built from today's tables, the suite is today's (identical), the weights
    are the entry's, and its figures are carried under `carried` (which build measured them, what
    changed since). Returns (info, the measured entry) or None (and says why) when the rule fails."""
    found = cache.measured_entry(entries, carry_key)
    if found is None:
        return None
    entry, carry, before = found
    changed = cache.changed_files(before, files)
    total = max(int(files["declarations"].sum()), 1)
    moved = int(changed["declarations"].sum())
    share = moved / total
    why = (f"{moved} of {total} declarations ({100 * share:.2f} %) in changed files, more than {100 * carry_share:g} %"
           if share > carry_share else
           "a held-out or tune file changed" if changed.filter(
               (pl.col("part_before").fill_null(TRAIN) != TRAIN) | (pl.col("part_now").fill_null(TRAIN) != TRAIN)).height
           else "the held-out or tune suite changed" if carry.get("suites") != digests else None)
    if why is not None:
        log.info("premises: measured anew (%s)", why)
        return None
    t0 = time.perf_counter()
    out = Path(release_dir) / PREMISES_DIR
    index = write_premise_index(declarations, dependencies, parts, out, token_cache, imports)
    (out / MODEL_FILE).unlink(missing_ok=True)
    for name in (SUITE_FILE, WEIGHTS_FILE, MODEL_FILE):
        if name == MODEL_FILE and not (entry / name).is_file():  # measured without a tree model
            continue
        shutil.copyfile(entry / name, out / name)
    measured = json.loads((entry / cache.INFO_FILE).read_text(encoding="utf-8"))
    carried = {"measured_build": carry["measured"][:16], "changed_files": changed.height,
               "changed_declarations": moved, "declarations": total, "share": round(share, 6),
               "carried": ["weights", "figures"]}
    info = {**measured, "split": {**measured["split"], "files": part_counts(parts)}, **index,
            "carried": carried}
    write_json(out / METRICS_FILE, info)
    log.info("premises: %d files (%d declarations, %.2f %%) changed since build %s: priors and statement index rebuilt "
             "in %.1f s, weights and figures carried", changed.height, moved, 100 * share, carried["measured_build"],
             time.perf_counter() - t0)
    return info, (entry, carry, before)


def part_counts(parts: dict[str, str]) -> dict[str, int]:
    """Split part -> number of files."""
    return {p: sum(1 for v in parts.values() if v == p) for p in sorted(set(parts.values()))}


@dataclass(frozen=True)
class PremiseGoals:
    """What the stage ranks once `premises/` holds its priors, statement index and suite
    (`prepare_premises`): the split, the index's figures, the held-out suite, and the seeded goal
    samples: the weights' fit, the tree model's, the figures'."""

    parts: dict[str, str] = field(repr=False)
    index: dict
    suite: dict = field(repr=False)
    fit: list[dict] = field(repr=False)
    model: list[dict] = field(repr=False)
    evaluated: list[dict] = field(repr=False)

    def tune(self) -> list[dict]:
        """The fit's and the model's goals, each once, in that order."""
        return list({q["id"]: q for q in self.fit + self.model}.values())

    def ranked(self) -> list[dict]:
        """Every goal whose candidates the stage computes: the tune goals, then the evaluated ones."""
        return self.tune() + self.evaluated


# the candidates of a list of suite goals, in their order (premises.fit.collect, or a reduce's read back)
Collect = Callable[[list[dict]], list[Run]]


def prepare_premises(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, seed: int = SEED,
                     token_cache: Path | None = None, imports: pa.Table | None = None) -> PremiseGoals:
    """Writes the priors, the statement index (the import graph when given) and suite.json under
    `premises/` and returns the goals the stage ranks."""
    out = Path(release_dir) / PREMISES_DIR
    parts = split_files(declarations.column("file").to_pylist(), seed)
    index = write_premise_index(declarations, dependencies, parts, out, token_cache, imports)
    suite = build_suite(declarations, dependencies, seed, TEST, name=SUITE_NAMES[TEST])
    write_suite(suite, out / SUITE_FILE)
    tune = build_suite(declarations, dependencies, seed, TUNE, name=SUITE_NAMES[TUNE])["queries"]
    return PremiseGoals(parts, index, suite, sample_queries(tune, FIT_QUERIES, seed),
                        sample_queries(tune, MODEL_QUERIES, seed), sample_queries(suite["queries"], EVAL_QUERIES, seed))


def build_premises(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, formal: FormalIndex | None,
                   vector: VectorChannel | None, seed: int = SEED, token_cache: Path | None = None,
                   imports: pa.Table | None = None) -> dict:
    """Writes premises/ (priors, statement index, the import graph when given, suite.json,
    weights.json, model.json when enough tune goals fit one, metrics.json) and returns the figures
    (`finish_premises`), each goal's candidates computed here by a ranker over `formal` and `vector`.
    `token_cache`: the root's cache, where the statement index keeps each document's tokens."""
    t0 = time.perf_counter()
    goals = prepare_premises(release_dir, declarations, dependencies, seed, token_cache, imports)
    ranker = PremiseRanker(release_dir, formal, vector, weights=dict(DEFAULT_WEIGHTS))
    info = finish_premises(release_dir, goals, partial(collect, ranker), ranker, vector is not None, seed)
    return {**info, "seconds": round(time.perf_counter() - t0, 1)}


def finish_premises(release_dir: Path, goals: PremiseGoals, runs_of: Collect, ranker: Named, embedding: bool,
                    seed: int = SEED) -> dict:
    """Writes weights.json, model.json (when enough tune goals fit one) and metrics.json beside the
    index and suite `prepare_premises` wrote, and returns the figures: the ranker and both baselines
    (the embedding one only with an `embedding` channel) on the held-out suite, in points, each goal
    ranked in its file (premises.imports); the linear ranker alone under `model`. The weights are
    fitted on FIT_QUERIES tune goals, the tree model on MODEL_QUERIES, each its own seeded sample;
    `runs_of` gives the goals' candidates (the tune goals' first, then the evaluated ones')."""
    out = Path(release_dir) / PREMISES_DIR
    tune = goals.tune()
    runs = dict(zip([q["id"] for q in tune], runs_of(tune)))
    fit_runs = [runs[q["id"]] for q in goals.fit]
    if len(fit_runs) >= MIN_FIT_QUERIES:
        weights, how = fit_weights(ranker, fit_runs, DEFAULT_WEIGHTS)
    else:
        weights, how = dict(DEFAULT_WEIGHTS), {"fitted": False, "reason": f"{len(fit_runs)} tune queries (fewer than {MIN_FIT_QUERIES})"}
    write_json(out / WEIGHTS_FILE, {"weights": weights, "fitted": "reason" not in how, "fit": how, "seed": seed,
                                    "split": {"held_out": HELD_OUT, "tune": TUNE_SHARE}})
    (out / MODEL_FILE).unlink(missing_ok=True)
    model, model_how = fit_model(ranker, [runs[q["id"]] for q in goals.model], weights)
    if model is not None:
        write_model(model, out, {**model_how, "seed": seed})
    figures, linear = figures_of(ranker, runs_of(goals.evaluated) if goals.evaluated else [], weights, model, embedding)
    suite = goals.suite
    info = {"split": {"seed": seed, "files": part_counts(goals.parts)},
            "suite": {"queries": len(suite["queries"]), "files": suite["files"], "rejected_goals": suite["rejected_goals"],
                      "evaluated": len(goals.evaluated)}, "tune_queries": len(fit_runs),
            "fitted": "reason" not in how,
            "weights": weights, "figures": figures, "model": {**model_how, "linear ranker": linear}, **goals.index}
    write_json(out / METRICS_FILE, info)
    return info


def evaluate(ranker: PremiseRanker, queries: list[dict], weights: dict[str, float], model=None) -> tuple[dict[str, dict], dict | None]:
    """`figures_of` the queries' candidates under the ranker."""
    return figures_of(ranker, collect(ranker, queries) if queries else [], weights, model, ranker.vector is not None)


def figures_of(ranker: Named, runs: list[Run], weights: dict[str, float], model=None,
               embedding: bool = True) -> tuple[dict[str, dict], dict | None]:
    """(method -> recall@10, recall@32, mrr@32 over the runs: the ranker (with the tree model, when
    given) and the baselines, on the same candidates (the embedding one only with an `embedding`
    channel); the linear ranker alone, None without a model)."""
    if not runs:
        return {}, None
    figures = {"ranker": score(ranker, runs, weights, model=model)}
    for name, w in BASELINES.items():
        if name.startswith("embedding") and not embedding:
            continue
        figures[name] = score(ranker, runs, w, fallback=False)
    return figures, score(ranker, runs, weights) if model is not None else None
