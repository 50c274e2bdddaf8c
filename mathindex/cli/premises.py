"""`mathindex premises RELEASE --goal GOAL`: the declarations a proof of a Lean goal is likely to use,
ranked on the server's query path (cli/query.py)."""

from __future__ import annotations

import argparse
import json
import sys

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.cli.query import node_fields, node_place, one_query, served, usage
from mathindex.cli.release_arg import resolved_release
from mathindex.limits import BadInput, checked_k, checked_place, checked_text
from mathindex.premises import GoalError
from mathindex.premises.goal import check_goal
from mathindex.premises.ranker import check_premise_index


def run(args: argparse.Namespace) -> int:
    """The ranked declarations with their signals; a goal that does not parse is a one-line usage
    error with its position."""
    release = resolved_release(args)
    if args.line is not None and (args.file is None or args.line < 1):  # said in the CLI's words
        raise UsageError("mathindex premises: --line needs --file and is at least 1")
    try:
        goal, context = checked_text(args.goal, "goal"), checked_text(args.context, "context", empty_ok=True)
        k = checked_k(args.k)
        file, line = checked_place(args.file, args.line)
        check_goal(goal, context)  # before the release is opened: a typo costs no load
        check_premise_index(release)
        with one_query():
            answer = served(release, args, premises=True).premises(goal, context, k, file=file, line=line)
    except BadInput as exc:
        raise usage("premises", exc) from None
    except (GoalError, FileNotFoundError) as exc:
        raise UsageError(f"mathindex premises: {' '.join(str(exc).split())}") from None
    if args.json:
        rows = [{"rank": p.rank, "name": p.name, "score": p.score, "signals": p.signals, **node_fields(p)}
                for p in answer.premises]  # fmt: skip
        print(json.dumps({"goal": answer.goal, "context": answer.context, "file": args.file, "constants": answer.constants,
                          "fallback": answer.fallback, "notes": answer.notes, "premises": rows}, ensure_ascii=False, indent=2))
        return EXIT_OK
    for note in answer.notes:
        print(f"({note})", file=sys.stderr)
    for p in answer.premises:
        signals = " ".join(f"{k} {v:.2f}" for k, v in p.signals.items())
        print(f"{p.rank:>3}. {p.name}  ({node_place(p)})  score {p.score:.3f}  [{signals}]")
    if not answer.premises:
        print("no premises")
    return EXIT_OK
