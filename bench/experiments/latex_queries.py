"""LaTeX-style queries as a kind: where each channel puts the gold, and the word channels' query
text for formula-like queries (search/latexquery.py) measured on a release's suite.

Reads bench/cache_runs.py's pickle (every query through every channel once, the text as typed),
prints, for one style (default q1b_latex), how many golds each channel ranks in its top 10 / its
candidates, then re-runs the lexical and embedding channels of the formula-like queries (`query_kind`
"formula") on each rendering of their text (TEXTS) and re-fuses under a grid of (lexical text,
embedding text, embedding weight, formula weight), scored on the whole suite per style, in-sample
and by two-fold cross-validation by target (bench/fusion_weights.py's folds; ties go to today's
setting). Other kinds keep the pickle's lists and the engine's weights.

    .venv/bin/python -m bench.experiments.latex_queries RELEASE_DIR SUITE.json RUNS.pkl [--style q1b_latex] [--metric ndcg@10]
        [--texts-only]
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import time
from collections import Counter
from pathlib import Path

from bench.common.rescoring import fold_of, grouped_scores
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_kind
from mathindex.search.weights import CANDIDATES, weights_for
from mathindex.search.kinds import LEXICAL_TEXT
from mathindex.search.latexquery import english_math, unicode_math

TEXTS = {
    "raw": lambda q: q,
    "unicode": unicode_math,
    "unicode-plain-letters": lambda q: unicode_math(q, script_letters=False),
    "english": english_math,
    "raw+english": lambda q: f"{q} {english_math(q)}" if english_math(q) != q else q,
}
EMBEDDING_WEIGHTS = (0.5, 1.0, 1.5, 2.0)
FORMULA_WEIGHTS = (0.5, 1.0)


def where_gold(runs, style: str) -> None:
    """Per channel: the style's queries whose gold it ranks in its top 10, in its candidates, or not at all."""
    counts: Counter = Counter()
    mine = [(q, res) for q, res, _ in runs if q.style == style]
    for q, res in mine:
        for channel, hits in res.items():
            rank = next((i for i, (n, _) in enumerate(hits, 1) if n in q.gold), None)
            counts[(channel, "ran")] += 1
            counts[(channel, "top10")] += rank is not None and rank <= 10
            counts[(channel, "found")] += rank is not None
        counts[("any", "top10")] += any(next((i for i, (n, _) in enumerate(h, 1) if n in q.gold), 99) <= 10 for h in res.values())
    print(f"{style}: {len(mine)} queries, {sum(1 for q, _ in mine if query_kind(q.text) == 'formula')} formula-like")
    for channel in sorted({c for c, _ in counts if c != "any"}):
        print(f"  {channel:<10} ran {counts[(channel, 'ran')]:3d}  gold in top 10 {counts[(channel, 'top10')]:3d}  "
              f"in its {CANDIDATES} {counts[(channel, 'found')]:3d}")
    print(f"  any channel's top 10: {counts[('any', 'top10')]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("--style", default="q1b_latex")
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--texts-only", action="store_true", help="the grid of texts alone, at today's weights")
    ap.add_argument("--lexical-texts", nargs="+", choices=sorted(TEXTS), default=sorted(TEXTS),
                    help="the lexical texts the grid tries (default all)")
    ap.add_argument("--embedding-texts", nargs="+", choices=sorted(TEXTS), default=sorted(TEXTS),
                    help="the embedding texts the grid tries (default all)")
    args = ap.parse_args()
    engine = SearchEngine(args.release)
    suite = load_suite(args.suite)
    cached = pickle.loads(args.runs.read_bytes())["runs"]
    base = [(q, *cached[q.id]) for q in suite.queries]
    where_gold(base, args.style)
    t0 = time.perf_counter()
    lists: dict[tuple[str, str], list] = {}
    formula_like = [q for q in suite.queries if query_kind(q.text) == "formula"]
    for q in formula_like:
        for text in {TEXTS[t](q.text) for t in args.lexical_texts}:
            if ("lexical", text) not in lists:
                lists[("lexical", text)] = engine.lexical.search(text, CANDIDATES)
        for text in {TEXTS[t](q.text) for t in args.embedding_texts}:
            if ("embedding", text) not in lists:
                lists[("embedding", text)] = engine.vector.search(text, CANDIDATES)
    print(f"{len(formula_like)} formula-like queries, {len(lists)} (channel, text) lists "
          f"in {time.perf_counter() - t0:.0f} s")
    today = weights_for("formula")
    current = (LEXICAL_TEXT, "raw", today["embedding"], today["formula"])  # the engine's texts and weights
    grid = list(itertools.product(args.lexical_texts, args.embedding_texts, *(([today["embedding"]], [today["formula"]]) if args.texts_only
                                                   else (EMBEDDING_WEIGHTS, FORMULA_WEIGHTS))))
    scores = {}
    for setting in grid:
        lex, emb, we, wf = setting
        runs = [(q, {**res, "lexical": lists[("lexical", TEXTS[lex](q.text))],
                     "embedding": lists[("embedding", TEXTS[emb](q.text))]} if query_kind(q.text) == "formula" else res, rs)
                for q, res, rs in base]
        scores[setting] = grouped_scores(
            engine, runs, lambda q, we=we, wf=wf: {**weights_for(query_kind(q.text)), **(
                {"embedding": we, "formula": wf} if query_kind(q.text) == "formula" else {})}, args.metric, suite.k)
    styles = sorted({q.style for q in suite.queries})
    head = f"  {'lexical text, embedding text, w_emb, w_formula':<46} {'all':>6} " + " ".join(f"{st[:11]:>11}" for st in styles)
    print(head)
    shown = [current] + sorted(grid, key=lambda s: -scores[s]["all"])[:12]
    shown += [s for s in grid if s[2:] == current[2:] and s not in shown]
    for s in shown:
        print(f"  {', '.join(map(str, s)):<46} {scores[s]['all']:6.2f} " + " ".join(f"{scores[s].get(st, float('nan')):11.2f}" for st in styles))
    held, n_all, held_style = 0.0, 0, Counter()
    for f in (0, 1):
        chosen = max(grid, key=lambda s: (scores[s][f"fold{1 - f}"], s == current))
        n = sum(1 for q in suite.queries if fold_of(q.id) == f)
        held += scores[chosen][f"fold{f}"] * n
        n_all += n
        for st in styles:
            k = sum(1 for q in suite.queries if fold_of(q.id) == f and q.style == st)
            held_style[st] += scores[chosen].get(f"{st}/fold{f}", 0.0) * k
        print(f"  fold{f}: chosen on the other fold {chosen}: {scores[chosen][f'fold{f}']:.2f} (today {scores[current][f'fold{f}']:.2f})")
    counts = Counter(q.style for q in suite.queries)
    print(f"  two-fold CV ({args.metric}) all {held / n_all:.2f} (today {scores[current]['all']:.2f}); per style "
          + ", ".join(f"{st} {held_style[st] / counts[st]:.2f}" for st in styles))


if __name__ == "__main__":
    main()
