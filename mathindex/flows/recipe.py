"""The release flow's embedder stage, for a sources file that names an embedder recipe: the model
the recipe makes, reused when the root holds it (`embed.recipe.find_model`), else trained from this
run's own extraction tables and the recipe's training corpora (resumable: `embed.train` checkpoints
under ROOT/models/.train, so running the release again resumes), benchmarked on a pool when the
recipe asks, written with its card and installed under ROOT/models. The suites kept out of training are the release's, the
project's and the recipe's `exclude_suites`. The kinds a recipe names that read beside the tables
get their inputs here (`extra_inputs`), and `hard_negatives: engine` takes the drawn pairs'
negatives from the published release's engine (`engine_hard_negatives`)."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from mathindex.embed.models import (REVISION_CHARS, TRAINING_DIR, ModelPin, check_model_dir, embedder_name,
                                    model_revision, models_dir, pin_model, read_card)
from mathindex.embed.pairs import KIND_INPUT, engine_negatives, run_tables
from mathindex.embed.recipe import (RECIPE_KEYS, RecipeKeys, base_model, find_model, holdout_key, recipe_key,
                                    tables_key, trainer_recipe)
from mathindex.embed.train import ENGINE, Recipe, pairs_sha256, schedule
from mathindex.evaluation.card import install_with_card, training_record
from mathindex.evaluation.suites import project_suite_queries
from mathindex.lean.moduledocs import module_doc_sentences
from mathindex.schemas.manifest import CorpusPin, EmbedderRecipeSpec, InformaliserSpec, SuiteSpec
from mathindex.search.sameas import same_as_table
from mathindex.sources import DEFAULT_SOURCES, Source, load_embedder_recipe, pin_source, recipe_sources
from mathindex.store.releases import published_release
from mathindex.tasks.embed import build_embedding_texts
from mathindex.tasks.extract import extract_sources
from mathindex.tasks.informalise import informalise_in_shards
from mathindex.tasks.shards import runner_is_local
from mathindex.tasks.train import mine_run_pairs, pool_benchmark, search_near_misses, train_model

log = logging.getLogger(__name__)

STAGE = "embedder"  # the release flow's stage name, between informalise and embed


@dataclass(frozen=True)
class RecipeModel:
    """The model a release embeds with and how it was got (the manifest's `embedder_recipe`)."""

    pin: ModelPin
    entry: dict  # schemas.manifest.EmbedderRecipeEntry


def resolve_recipe(sources_file: str | None, lean: list[str], latex: list[str], model: str | None) -> EmbedderRecipeSpec | None:
    """The embedder recipe a release follows: the sources file's `embedder:` section (the sample's
    when no file is given; none with `--lean/--latex` directories), unless `model` (`--model`) names
    the model outright. SourceError or ModelError (one line) when its base model is unusable."""
    if lean or latex or model is not None:
        return None
    spec = load_embedder_recipe(Path(sources_file) if sources_file else DEFAULT_SOURCES)
    if spec is not None:
        check_model_dir(base_model(spec), spec.base)
    return spec


def release_stages(stages: list[str], recipe: EmbedderRecipeSpec | None) -> list[str]:
    """The release flow's stages, with the embedder stage before `embed` when there is a recipe."""
    if recipe is None:
        return list(stages)
    at = stages.index("embed")
    return [*stages[:at], STAGE, *stages[at:]]


def embedder_for_recipe(spec: EmbedderRecipeSpec, root: Path, tables: dict[str, pa.Table], suites: list[SuiteSpec],
                        pins: list[CorpusPin], cache: Path, release_id: str,
                        informaliser: InformaliserSpec | None = None) -> RecipeModel:
    """The recipe's model for the release `release_id` under `root`: found (the published release's
    or an installed one, `find_model`) or trained from `tables` (the run's declarations,
    embedding_texts and latex_statements) and the recipe's training corpora (`training_tables`,
    informalised by `informaliser`), never on a query or target of `suites` or the others kept out.
    The training corpora are pinned on every run (their content is part of the tables key) but
    extracted only when the model is trained."""
    base = base_model(spec)
    base_revision = model_revision(base)
    recipe = trainer_recipe(spec)
    kept_out = [Path(s.path) for s in suites] + [Path(p) for p in spec.exclude_suites]
    needed = run_tables(extra_inputs(tables, pins, recipe.mix))
    corpora = recipe_sources(spec)
    corpus_pins = [pin_source(s) for s in corpora]
    # the key holds the suites this release measures (and the recipe's own): a shipped suite the
    # release does not measure is still kept out of the pairs, but editing it retrains no root
    measured = [p for p in kept_out if p.is_file()]
    trained_on = [f"{p.kind}:{p.name}" for p in corpus_pins]
    keys = RecipeKeys(recipe_key(recipe, base_revision, trained_on), holdout_key(measured), tables_key(needed, corpus_pins),
                      tuple(sorted(f"{p.kind}:{p.name}" for p in pins)))
    found = find_model(root, keys)
    base_label = f"{embedder_name(base, base_revision)}@{base_revision[:REVISION_CHARS]}"
    read = {"corpora": [p.model_dump() for p in corpus_pins]} if corpus_pins else {}
    if found is not None:
        path, source = found
        pin = pin_model(str(path), root)
        made = (read_card(path) or {}).get(RECIPE_KEYS, {})
        return RecipeModel(pin, _entry(spec, keys, pin, source, base_label, made.get("tables"), seconds=0) | read)
    if corpora:
        more = training_tables(corpora, cache, informaliser or InformaliserSpec())
        merged = {name: pa.concat_tables([tables[name], more[name]]) for name in tables}
        needed = run_tables(extra_inputs(merged, pins + corpus_pins, recipe.mix))
    queries, targets, files = project_suite_queries(None, kept_out)
    pairs, data = mine_run_pairs(needed, queries, targets, recipe.seed, sorted(recipe.mix))
    negatives = None
    if recipe.hard_negatives == ENGINE:
        pairs, negatives = engine_hard_negatives(pairs, recipe, published_release(root), needed["embedding_texts"],
                                                 queries, targets, cache)
        data["negatives"] = negatives
    result = train_model(pairs, base, base_revision, models_dir(root) / TRAINING_DIR / "runs", recipe)
    benchmark = None
    if spec.pool.size:
        bench = [Path(s.path) for s in suites if Path(s.path).is_file()]
        texts = tables["embedding_texts"]
        before = pool_benchmark(texts, base, bench, spec.pool.size, spec.pool.seed, cache)
        after = pool_benchmark(texts, result.model_dir, bench, spec.pool.size, spec.pool.seed, cache)
        benchmark = None if before is None else {"pool": spec.pool.model_dump(), "before": before, "after": after}
    data = {"sha256": pairs_sha256(pairs), **data, "excluded_suites": [str(f) for f in files], **read}
    record = training_record({"name": embedder_name(base, base_revision), "revision": base_revision}, asdict(recipe),
                             release_id, data, result, benchmark)
    record[RECIPE_KEYS] = keys.card()
    pin = pin_model(str(install_with_card(result.model_dir, models_dir(root), recipe.name, record)), root)
    entry = _entry(spec, keys, pin, "trained", base_label, keys.tables, seconds=result.seconds)
    trained = {"resumed_from": result.resumed_from, "pairs": data["pairs"]}
    return RecipeModel(pin, {**entry, **trained, **({"negatives": negatives} if negatives else {}), **read})


def training_tables(corpora: list[Source], cache: Path, informaliser: InformaliserSpec) -> dict[str, pa.Table]:
    """The miner's tables of a recipe's training corpora (declarations, embedding_texts,
    latex_statements): extracted, informalised and given their texts as the release's own corpora
    are, each step cached by content; never written, indexed or searched. Their extraction errors
    are logged, not kept: the release's errors table is about what it indexes."""
    ex = extract_sources(corpora, cache, local=runner_is_local())
    if ex.errors.num_rows:
        log.warning("training corpora %s: %d extraction error rows (not kept)",
                    ", ".join(s.spec.name for s in corpora), ex.errors.num_rows)
    informal = informalise_in_shards(ex.declarations, ex.dependencies, cache, informaliser).table
    texts = build_embedding_texts(ex.declarations, informal, ex.statements, ex.descriptions, cache)
    return {"declarations": ex.declarations, "embedding_texts": texts, "latex_statements": ex.statements}


def extra_inputs(tables: dict[str, pa.Table], pins: list[CorpusPin], mix: dict[str, float]) -> dict[str, pa.Table]:
    """`tables` with the inputs of the kinds `mix` names that the tables do not hold
    (`embed.pairs.EXTRA`): the module doc sentences of the Lean corpora (`module_doc`, read from
    their roots) and the same_as edges (`stacks`, as the search index stage makes them)."""
    out = dict(tables)
    if "module_doc" in mix and KIND_INPUT["module_doc"] not in out:
        roots = {p.name: Path(p.path) for p in pins if p.kind == "lean"}
        decls = tables["declarations"].select(["decl_id", "corpus", "full_name", "file"])
        out[KIND_INPUT["module_doc"]] = module_doc_sentences(roots, decls)
    if "stacks" in mix and KIND_INPUT["stacks"] not in out:
        out[KIND_INPUT["stacks"]] = same_as_table(tables["declarations"], tables["latex_statements"])
    return out


def engine_hard_negatives(pairs: pa.Table, recipe: Recipe, release: Path | None, texts: pa.Table, queries: list[str],
                          targets: set[str], cache: Path) -> tuple[pa.Table, dict]:
    """`pairs` with the negatives of the rows training draws (`embed.train.schedule`) taken from the
    near-misses of `release`'s engine (the published release; `search.negatives`), with where they
    came from. No published release (a cold root): the same-module negatives, and the reason."""
    if release is None:
        log.warning("hard_negatives: engine, but no release is published to search: same-module negatives")
        return pairs, {"source": "module", "why": "no published release to search (a cold root)"}
    rows = np.unique(schedule(pairs, recipe))
    anchors = pairs.column("anchor").take(pa.array(rows)).to_pylist()
    hits, stats = search_near_misses(release, anchors, cache)
    pairs, counts = engine_negatives(pairs, rows.tolist(), hits, pl.from_arrow(texts), queries, targets)
    return pairs, {"source": "engine", "release": release.name, **stats, **counts}


def _entry(spec: EmbedderRecipeSpec, keys: RecipeKeys, pin: ModelPin, source: str, base: str,
           model_tables: str | None, seconds: float) -> dict:
    """The manifest's `embedder_recipe` (schemas.manifest.EmbedderRecipeEntry) but for what training adds."""
    return {"name": spec.name, "source": source, "model": pin.reference, "recipe": spec.model_dump(mode="json", exclude=None if spec.corpora else {"corpora"}),
            "recipe_key": keys.recipe, "holdout_key": keys.holdout, "tables_key": keys.tables,
            "model_tables_key": model_tables, "base": base, "seconds": round(seconds, 1)}
