"""`mathindex extract lean|latex DIR --out FILE`: one extraction stage alone, its tables as Parquet."""

from __future__ import annotations

import argparse
from pathlib import Path

import pyarrow.parquet as pq

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.latex import extract_latex_tree
from mathindex.lean import extract_lean_tree
from mathindex.sources import SourceError, check_allowed


def run(args: argparse.Namespace) -> int:
    try:
        check_allowed(f"{args.kind} directory", args.dir, str(args.dir))
    except SourceError as exc:
        raise UsageError(f"mathindex extract: {exc}") from None
    corpus = args.corpus or args.dir.resolve().name
    out: Path = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.kind == "lean":
        ex = extract_lean_tree(args.dir, corpus, cache_dir=args.cache)
        main_table, extra = ex.declarations, {"dependencies": ex.dependencies, "descriptions": ex.descriptions,
                                          "citations": ex.citations}
    else:
        ex = extract_latex_tree(args.dir, corpus)
        main_table, extra = ex.statements, {"formulas": ex.formulas}
    pq.write_table(main_table, out)
    for name, t in {**extra, "errors": ex.errors}.items():
        pq.write_table(t, out.with_name(f"{out.stem}.{name}.parquet"))
    counts = ", ".join(f"{n} {t.num_rows}" for n, t in {"rows": main_table, **extra, "errors": ex.errors}.items())
    print(f"{out}: {counts}")
    return EXIT_OK
