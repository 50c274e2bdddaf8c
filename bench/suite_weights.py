"""One suite through a release's engine at several weights of one channel for one query kind, so
a weight chosen on MathlibQR dev can be checked against the bundled sample's gate.

    .venv/bin/python -m bench.suite_weights RELEASE_DIR SUITE.json KIND CHANNEL W [W ...]
    # e.g. RELEASE data/sample/queries.json words informal 0 0.25 0.5 1.0

Prints nDCG@10, R@10 and MRR@10 at each weight (weights.WEIGHTS_BY_KIND[KIND][CHANNEL] = W).
"""

from __future__ import annotations

import sys
from pathlib import Path

import mathindex.search.weights as settings
from mathindex.evaluation.bench import run_suite
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine


def main() -> None:
    if len(sys.argv) < 6:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    release, suite_path, kind, channel = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    if kind not in settings.WEIGHTS_BY_KIND:
        sys.exit(f"error: no query kind {kind!r} (one of {', '.join(settings.WEIGHTS_BY_KIND)})")
    suite = load_suite(suite_path)
    engine = SearchEngine(release)
    for w in (float(x) for x in sys.argv[5:]):
        settings.WEIGHTS_BY_KIND[kind][channel] = w
        metrics = run_suite(engine.names, suite)[0]["metrics"]
        print(f"{kind}/{channel} {w:g}: " + ", ".join(f"{m} {metrics[m]:.2f}" for m in ("ndcg@10", "recall@10", "mrr@10")), flush=True)


if __name__ == "__main__":
    main()
