"""A release-shaped directory of extraction tables, without embeddings or indexes (mathindex.tables).

Whole-corpus releases spend about 2 h of the 2 cores embedding. Mining training pairs
(`mathindex train-embedder`) and comparing embedders on a candidate pool (bench/embedder_pool.py)
need only the tables, which this writes in a few minutes.

Usage: .venv/bin/python -m bench.corpus_tables --lean ../corpora/mathlib4 --latex ../shared/corpora/stacks-project --out build/tables/mathlib-stacks
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from mathindex.tables import extraction_tables, write_extraction_tables


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lean", type=Path, action="append", default=[])
    ap.add_argument("--latex", type=Path, action="append", default=[])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    t = time.perf_counter()
    tables = extraction_tables(args.lean, args.latex, args.out.parent / "cache")
    counts = write_extraction_tables(tables, args.out)
    print(f"{time.perf_counter() - t:.1f} s: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
