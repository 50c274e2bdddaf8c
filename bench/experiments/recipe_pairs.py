"""The training pairs two sources files' embedder recipes mine, compared: each file's corpora are
extracted, informalised and given their texts as the release flow does (through the root cache
`--cache`), its recipe's training corpora added as the embedder stage adds them
(`flows.recipe.training_tables`), and the pairs mined with the file's suites kept out. Prints the
pairs' sha256, the count per kind and what the leak guard dropped, for each file, then SAME or
DIFFERENT. It showed that a Mathlib root whose recipe names the Stacks Project as a training corpus
mines the very pairs of a Mathlib + Stacks root (docs/results/training.md, 2026-12-08).

Usage: .venv/bin/python -m bench.experiments.recipe_pairs A.yaml B.yaml --cache ROOT/cache
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pyarrow as pa
from prefect import flow

from mathindex.embed.pairs import run_tables
from mathindex.embed.recipe import trainer_recipe
from mathindex.embed.train import pairs_sha256
from mathindex.evaluation.suites import project_suite_queries
from mathindex.flows.recipe import extra_inputs, training_tables
from mathindex.sources import load_embedder_recipe, load_informaliser, load_sources, pin_source, recipe_sources
from mathindex.tasks.train import mine_run_pairs


def recipe_pairs(sources_file: Path, cache: Path) -> tuple[str, dict, dict]:
    """(sha256, pairs by kind, dropped) of the pairs `sources_file`'s recipe mines on a cold root."""
    sources, suites = load_sources(sources_file)
    spec = load_embedder_recipe(sources_file)
    if spec is None:
        raise SystemExit(f"{sources_file}: names no embedder recipe")
    recipe, informaliser = trainer_recipe(spec), load_informaliser(sources_file)
    tables = training_tables(sources, cache, informaliser)  # the release's own corpora, made as the flow makes them
    pins = [pin_source(s) for s in sources]
    corpora = recipe_sources(spec)
    if corpora:
        more = training_tables(corpora, cache, informaliser)
        tables = {name: pa.concat_tables([tables[name], more[name]]) for name in tables}
        pins += [pin_source(s) for s in corpora]
    queries, targets, _ = project_suite_queries(None, [Path(s.path) for s in suites] + [Path(p) for p in spec.exclude_suites])
    pairs, data = mine_run_pairs(run_tables(extra_inputs(tables, pins, recipe.mix)), queries, targets, recipe.seed,
                                 sorted(recipe.mix))
    return pairs_sha256(pairs), data["pairs"], data.get("dropped", {})


@flow(name="recipe-pairs")
def compare(files: list[Path], cache: Path) -> bool:
    shas = []
    for f in files:
        sha, pairs, dropped = recipe_pairs(f, cache)
        print(f"{f}: sha256 {sha}; pairs {pairs}; dropped {dropped}", flush=True)
        shas.append(sha)
    same = len(set(shas)) == 1
    print("SAME" if same else "DIFFERENT")
    return same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sources", type=Path, nargs=2)
    ap.add_argument("--cache", type=Path, required=True, help="a release root's cache directory (extraction, informalisation)")
    args = ap.parse_args()
    compare(list(args.sources), args.cache)


if __name__ == "__main__":
    main()
