"""What a verb starts before its module loads. A `search` whose query may be a formula starts the
SymPy worker of the formula channel's canonical keys (`formula.canonical.shared_worker`, the one
the formula index asks): SymPy's import, about 1 s of one core, then runs beside the query path's
imports and the release's opening instead of after them. A worker the query does not ask ends
with the process. Loaded only for the verbs in `cli.PRESTART`, so other verbs import nothing more."""

from __future__ import annotations

import argparse

from mathindex.formula.canonical import shared_worker
from mathindex.search.hint import may_ask_sympy


def start(args: argparse.Namespace) -> None:
    if args.command == "search" and args.query is not None and not args.formal and may_ask_sympy(args.query):
        shared_worker().start()
