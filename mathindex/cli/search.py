"""`mathindex search RELEASE QUERY`: the ranked hits of every channel fused, or with --formal the
formal channel alone in Loogle's syntax and output."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.cli.release_arg import resolved_release
from mathindex.formal.query import FormalQueryError, UnknownConstant
from mathindex.formal.search import FormalIndex
from mathindex.search.confidence import MEANING
from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import query_problem
from mathindex.store.integrity import check_release
from mathindex.store.layout import ReleaseLayout


def run(args: argparse.Namespace) -> int:
    release = resolved_release(args)
    if args.k < 1:
        raise UsageError("mathindex search: --k must be at least 1")
    if (problem := query_problem(args.query)) is not None:  # before the release is opened
        raise UsageError(f"mathindex search: {problem}")
    if args.formal:
        return _formal_search(release, args)
    engine = SearchEngine(release, verify="full" if args.verify else "quick")
    result = engine.search(args.query, args.k)
    if engine.formal is not None:
        for note in engine.formal.index.query_notes(args.query):
            print(f"(formal: {note})", file=sys.stderr)
    about = engine.describe([h.name for h in result.hits])
    if args.json:
        hits = [{"rank": i, "name": h.name, "score": h.score, "channels": h.channels,
                 **{k: v for k, v in about.get(h.name, {}).items() if k != "name"}}
                for i, h in enumerate(result.hits, 1)]  # fmt: skip
        print(json.dumps({"query": result.query, "match": result.match, "notice": result.notice, "hits": hits,
                          "unavailable": result.unavailable}, ensure_ascii=False, indent=2))
        return EXIT_OK
    for ch, why in result.unavailable.items():
        print(f"(channel {ch} unavailable: {why})", file=sys.stderr)
    if result.notice:
        print(f"{result.notice}; the nearest hits:" if result.hits else result.notice)
    print(f"match: {result.match} ({MEANING[result.match]})")
    for i, h in enumerate(result.hits, 1):
        chans = " ".join(f"{c}#{r}" for c, r in h.channels.items())
        node = about.get(h.name, {})
        print(f"{i:>3}. {h.name}  ({node.get('kind', '?')}, {node.get('file', '?')}:{node.get('line') or '?'})  [{chans}]")
        if node.get("title"):
            print(f"       {' '.join(node['title'].split())[:110]}")
    if not result.hits:
        print("no results")
    return EXIT_OK


def _formal_search(release: Path, args: argparse.Namespace) -> int:
    """`search --formal`: Loogle-like output (name, type, module) with the count of all matches."""
    if not ReleaseLayout(release).table("formal_statements").is_file():
        raise UsageError(f"mathindex search: {release} has no formal index (a release built before the formal channel)")
    check_release(release, quick=not args.verify)  # as SearchEngine checks it
    index = FormalIndex(release)
    try:
        res = index.loogle(args.query, args.k)
    except (FormalQueryError, UnknownConstant) as exc:
        raise UsageError(f"mathindex search: {exc}") from None
    about = {h.name: index.describe_name(h.name) for h in res.hits}
    if args.json:
        hits = [{"rank": i, "name": h.name, "exact_conclusion": h.exact, "channels": {"formal": i}, **about[h.name]}
                for i, h in enumerate(res.hits, 1)]  # fmt: skip
        print(json.dumps({"query": res.query, "count": res.count, "count_exact": res.exact_count, "hits": hits,
                          "notes": res.notes, "seconds": res.seconds}, ensure_ascii=False, indent=2))
        return EXIT_OK
    print(f"Found {'' if res.exact_count else 'about '}{res.count} declaration{'s' * (res.count != 1)} matching "
          f"{res.query}{'' if res.exact_count else ' (estimated from the smallest candidates)'}; showing {len(res.hits)}")
    for i, h in enumerate(res.hits, 1):
        d = about[h.name]
        print(f"{i:>3}. {h.name}  [formal#{i}]\n       {' '.join(d['signature'].split())[:200]}\n       {d['module']}")
    for note in res.notes:
        print(f"  {note}")
    return EXIT_OK
