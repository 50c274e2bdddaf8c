"""Fusion settings for long prose queries (the `words` kind with many words), from cached lists.

The engine's `words` kind holds both slogans (3-7 words) and sentences (8-20 words). This script
splits it at a word count the engine can see and grids the weights of the long part (embedding,
prior, RRF k), with two-fold cross-validation by target (bench/fusion_weights.py's folds): the
setting chosen on one fold's queries (all styles) is scored on the other's.

    .venv/bin/python -m bench.experiments.prose_fusion RELEASE_DIR SUITE.json RUNS.pkl [--metric ndcg@10]
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from bench.common.rescoring import fold_of, load_runs, ranking_engine, table
from mathindex.search.kinds import query_kind
from mathindex.search.weights import weights_for

STYLES = ("q1a_lean", "q1b_latex", "q1c_natural", "q2_slogan", "q3_nickname")
GRID = {"min_words": (6, 8, 10), "embedding": (0.5, 0.75, 1.0, 1.5, 2.0), "prior": (0.75, 1.0, 1.5, 2.0, 3.0)}


def long_prose(text: str, min_words: int) -> bool:
    return query_kind(text) == "words" and len(text.split()) >= min_words


def weights_of(setting):
    def of(q):
        w = weights_for(query_kind(q.text))
        if setting is not None and long_prose(q.text, setting["min_words"]):
            w = dict(w, embedding=setting["embedding"], prior=setting["prior"])
        return w
    return of


def line(name: str, r: dict) -> str:
    return f"{name:<40} {r['all']:6.2f} {r.get('fair', float('nan')):6.2f} " + " ".join(f"{r.get(s, float('nan')):8.2f}" for s in STYLES)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("--metric", default="ndcg@10")
    args = ap.parse_args()
    engine = ranking_engine(args.release)
    runs = load_runs(args.runs, args.suite)
    base = table(engine, runs, weights_of(None), args.metric)
    settings = [dict(zip(GRID, c)) for c in itertools.product(*GRID.values())]
    scored = [(s, table(engine, runs, weights_of(s), args.metric)) for s in settings]
    print(f"{'setting':<40} {'all':>6} {'fair':>6} " + " ".join(f"{s[3:11]:>8}" for s in STYLES))
    print(line("today's weights", base))
    for s, r in sorted(scored, key=lambda x: -x[1]["all"])[:15]:
        print(line(f"w>={s['min_words']} emb {s['embedding']} prior {s['prior']}", r))
    cv, n = 0.0, 0
    for f in (0, 1):
        train, test = f"fold{1 - f}", f"fold{f}"
        s, r = max(scored, key=lambda x: x[1][train])
        count = sum(1 for q, _, _ in runs if fold_of(q.id) == f)
        cv += r[test] * count
        n += count
        print(f"fold {test}: chosen on {train}: {s}; {test} {r[test]:.2f} (today {base[test]:.2f}); "
              f"natural {r['q1c_natural/' + test]:.2f} (today {base['q1c_natural/' + test]:.2f})")
    print(f"two-fold CV ({args.metric}): {cv / n:.2f} against {base['all']:.2f} today")


if __name__ == "__main__":
    main()
