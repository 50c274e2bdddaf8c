"""`mathindex premises RELEASE --goal GOAL`: the declarations a proof of a Lean goal is likely to use."""

from __future__ import annotations

import argparse
import json
import sys

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.cli.release_arg import resolved_release
from mathindex.premises import GoalError
from mathindex.premises.api import ranker_of
from mathindex.premises.goal import check_goal
from mathindex.premises.ranker import check_premise_index
from mathindex.search.engine import SearchEngine


def run(args: argparse.Namespace) -> int:
    """The ranked declarations with their signals; a goal that does not parse is a one-line usage
    error with its position."""
    release = resolved_release(args)
    if args.k < 1:
        raise UsageError("mathindex premises: --k must be at least 1")
    if args.line is not None and (args.file is None or args.line < 1):
        raise UsageError("mathindex premises: --line needs --file and is at least 1")
    try:
        check_goal(args.goal, args.context)  # before the release is opened: a typo costs no load
        check_premise_index(release)  # before the engine opens
        engine = SearchEngine(release)
        ranker = ranker_of(engine)
        result = ranker.rank(args.goal, args.context, args.k, file=args.file, line=args.line)
    except (GoalError, FileNotFoundError) as exc:
        raise UsageError(f"mathindex premises: {' '.join(str(exc).split())}") from None
    about = engine.describe([p.name for p in result.premises])
    if args.json:
        rows = [{"rank": i, "name": p.name, "score": p.score, "signals": p.signals,
                 **{k: v for k, v in about.get(p.name, {}).items() if k != "name"}}
                for i, p in enumerate(result.premises, 1)]  # fmt: skip
        print(json.dumps({"goal": result.goal, "context": result.context, "file": args.file, "constants": result.constants,
                          "fallback": result.fallback, "notes": result.notes, "premises": rows}, ensure_ascii=False, indent=2))
        return EXIT_OK
    for note in result.notes:
        print(f"({note})", file=sys.stderr)
    for i, p in enumerate(result.premises, 1):
        node = about.get(p.name, {})
        signals = " ".join(f"{k} {v:.2f}" for k, v in p.signals.items())
        print(f"{i:>3}. {p.name}  ({node.get('kind', '?')}, {node.get('file', '?')}:{node.get('line') or '?'})  "
              f"score {p.score:.3f}  [{signals}]")
    if not result.premises:
        print("no premises")
    return EXIT_OK
