"""The LaTeX symbol map (search/symbols.py) measured on a release's suite: mined from the release,
written to OUT_DIR/latex_symbols.parquet, then formula-like queries re-run through the lexical
channel with their commands' words appended, the other channels' lists taken from
bench/cache_runs.py's pickle. Settings (PMI floor, words a command) are scored on the whole suite
and by two-fold cross-validation by target (bench/fusion_weights.py's folds). With `--notations
LEAN_DIR` the map of the corpus's notation declarations (lean/notations.py) is measured instead,
alone and added to the mined map, on the formula-like queries (the only ones it changes).

    .venv/bin/python -m bench.experiments.symbol_map RELEASE_DIR SUITE.json RUNS.pkl OUT_DIR [--metric ndcg@10]
        [--notations LEAN_CORPUS_DIR]
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import time
from pathlib import Path

import polars as pl

from bench.common.rescoring import fold_of, grouped_scores
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_kind
from mathindex.search.weights import CANDIDATES, weights_for
from mathindex.search.symbols import SYMBOLS_FILE, SymbolMap, mine_release, notation_associations, write_symbols

PMI_FLOORS = (1.0, 2.0, 3.0)
TOP = (1, 2, 3, 5)
# append: the words join the query the lexical channel sees; channel: the lexical index searched
# for the query and its words is a channel of its own ("symbols", fused with WEIGHTS); words: for
# the words alone
MODES = ("append", "channel", "words")
WEIGHTS = (0.25, 0.5, 1.0)
GREEK = "^[\u0370-\u03FF]$"  # Greek letters are mostly variables: the grid tries the map without them


KEEP = ("all", "no_greek", "unmatched")
MIN_PAIRS = (2, 10, 50)  # documents a kept association needs


def _kept(table: pl.DataFrame, keep: str) -> pl.DataFrame:
    """The map's rows for one KEEP choice: every command, none of the Greek letters, or only the
    commands the lexical tokenizer cannot match already (`\\binom`, `\\gcd`, `‖`: no symbol token of their own)."""
    if keep == "all":
        return table
    if keep == "no_greek":
        return table.filter(~pl.col("command").str.contains(GREEK))
    from mathindex.search.text import tokens

    own = {c for c in table["command"].unique().to_list() if not c.startswith("\\") and c in tokens(c)}
    return table.filter(~pl.col("command").is_in(list(own)) & ~pl.col("command").str.contains(GREEK))


def _with_map(results: dict, text: str, smap: SymbolMap, mode: str, lexical) -> dict:
    """A formula query's channel lists under one way of using the map."""
    if mode == "append":
        return {**results, "lexical": lexical(smap.expand(text))}
    return {**results, "symbols": lexical(smap.expand(text) if mode == "channel" else " ".join(smap.words_of(text)))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--notations", type=Path, help="a Lean corpus root: measure its notation declarations' map")
    args = ap.parse_args()
    if args.notations:
        notation_grid(args)
        return
    t0 = time.perf_counter()
    table = mine_release(args.release, min_pmi=min(PMI_FLOORS), top_words=max(TOP))
    write_symbols(table, args.out / SYMBOLS_FILE)
    print(f"mined {table.height} associations of {table['command'].n_unique()} commands in {time.perf_counter() - t0:.0f} s")
    engine = SearchEngine(args.release, symbols=args.out / "none")  # no map: the lexical lists are re-run below
    suite = load_suite(args.suite)
    cached = pickle.loads(args.runs.read_bytes())["runs"]
    base = [(q, *cached[q.id]) for q in suite.queries]
    settings = [None] + list(itertools.product(MODES, WEIGHTS, PMI_FLOORS, TOP, KEEP, MIN_PAIRS))
    settings = [x for x in settings if x is None or x[0] == "append" and x[1] == 1.0 or x[0] != "append"]
    searched: dict[str, list] = {}

    def lexical(text: str) -> list:
        if text not in searched:
            searched[text] = engine.lexical.search(text, CANDIDATES) if text else []
        return searched[text]

    scores = {}
    for s in settings:
        runs, weights_of = base, (lambda q: weights_for(query_kind(q.text)))
        if s is not None:
            mode, weight, floor, top, keep, pairs = s
            smap = SymbolMap(_kept(table, keep).filter(pl.col("pair_docs") >= pairs), min_pmi=floor, top_words=top)
            runs = [(q, _with_map(res, q.text, smap, mode, lexical) if query_kind(q.text) == "formula" else res, rs)
                    for q, res, rs in base]
            weights_of = (lambda q, w=weight: {**weights_for(query_kind(q.text)), "symbols": w})
        scores[s] = grouped_scores(engine, runs, weights_of, args.metric, suite.k)
    styles = sorted({q.style for q in suite.queries})
    print(f"{'setting':<40} {'all':>6} " + " ".join(f"{st[:11]:>11}" for st in styles))
    for s in settings:
        print(f"{str(s):<40} {scores[s]['all']:6.2f} " + " ".join(f"{scores[s].get(st, float('nan')):11.2f}" for st in styles))
    cv, n_all = 0.0, 0
    for f in (0, 1):
        chosen = max(settings, key=lambda s: (scores[s][f"fold{1 - f}"], s is None))
        n = sum(1 for q in suite.queries if fold_of(q.id) == f)
        cv += scores[chosen][f"fold{f}"] * n
        n_all += n
        print(f"fold{f}: chosen on the other fold {chosen}, scores {scores[chosen][f'fold{f}']:.2f} (no map {scores[None][f'fold{f}']:.2f})")
    print(f"two-fold CV ({args.metric}): {cv / n_all:.2f}; no map: {scores[None]['all']:.2f}")
    print(pl.Config.set_tbl_rows(20) and table.filter(pl.col("command").is_in(["\\binom", "φ", "‖", "∑", "ζ", "∣"])).select("command", "word", "pair_docs", "pmi"))


NOTATION_SOURCES = ("mined", "notations", "notations+mined")
NOTATION_SCOPES = (("global", "scoped"), ("global", "scoped", "local"))
NOTATION_MODES = (("append", 1.0), ("words", 0.5), ("channel", 0.5))


def notation_grid(args) -> None:
    """The notation declarations' map, alone or added to the mined one (module defaults), under
    each use (NOTATION_MODES), scope and words a command; scored on the formula-like queries."""
    from mathindex.lean.notations import extract_notations

    t0 = time.perf_counter()
    notations = pl.from_arrow(extract_notations(args.notations, "lean"))
    mined = mine_release(args.release)
    print(f"{notations.height} notation commands read in {time.perf_counter() - t0:.0f} s; mined map {mined.height} rows")
    engine = SearchEngine(args.release, symbols=args.out / "none")
    suite = load_suite(args.suite)
    cached = pickle.loads(args.runs.read_bytes())["runs"]
    base = [(q, *cached[q.id]) for q in suite.queries if query_kind(q.text) == "formula"]
    searched: dict[str, list] = {}

    def lexical(text: str) -> list:
        if text not in searched:
            searched[text] = engine.lexical.search(text, CANDIDATES) if text else []
        return searched[text]

    settings = [None] + [s for s in itertools.product(NOTATION_SOURCES, NOTATION_SCOPES, NOTATION_MODES, (1, 3))
                         if s[0] != "mined" or s[1] == NOTATION_SCOPES[0]]  # the mined map has no scopes
    scores = {}
    for s in settings:
        runs, weights_of = base, (lambda q: weights_for(query_kind(q.text)))
        if s is not None:
            source, scopes, (mode, weight), top = s
            table = notation_associations(notations, scopes)
            chosen = {"mined": [mined], "notations": [table], "notations+mined": [table, mined]}[source]
            smap = SymbolMap(pl.concat(chosen), top_words=top)
            runs = [(q, _with_map(res, q.text, smap, mode, lexical), rs) for q, res, rs in base]
            weights_of = (lambda q, w=weight: {**weights_for(query_kind(q.text)), "symbols": w})
        scores[s] = grouped_scores(engine, runs, weights_of, args.metric, suite.k)
    styles = sorted({q.style for q, _, _ in base})
    print(f"{len(base)} formula-like queries; {'setting':<70} {'all':>6} " + " ".join(f"{st[:11]:>11}" for st in styles))
    for s in sorted(settings, key=lambda s: -scores[s]["all"]):
        print(f"{str(s):<70} {scores[s]['all']:6.2f} " + " ".join(f"{scores[s].get(st, float('nan')):11.2f}" for st in styles))
    cv, n_all = 0.0, 0
    for f in (0, 1):
        chosen = max(settings, key=lambda s: (scores[s].get(f"fold{1 - f}", 0), s is None))
        n = sum(1 for q, _, _ in base if fold_of(q.id) == f)
        cv += scores[chosen][f"fold{f}"] * n
        n_all += n
        print(f"fold{f}: chosen on the other fold {chosen}: {scores[chosen][f'fold{f}']:.2f} (no map {scores[None][f'fold{f}']:.2f})")
    print(f"two-fold CV ({args.metric}, formula-like queries): {cv / n_all:.2f}; no map: {scores[None]['all']:.2f}")
    for key in ("φ", "√", "‖", "ζ", "μ", "Λ", "π"):
        print(key, notation_associations(notations).filter(pl.col("command") == key).select("word", "pair_docs", "pmi").rows()[:4])


if __name__ == "__main__":
    main()
