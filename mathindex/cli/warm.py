"""`mathindex warm RELEASE`: embeds the informal channel's renderings into the root's cache once per
model (resumable: chunks are stored as done), so no prose query embeds one."""

from __future__ import annotations

import argparse
import json
import sys

from mathindex.cli.release_arg import resolved_release
from mathindex.search.engine import SearchEngine


def run(args: argparse.Namespace) -> int:
    release = resolved_release(args)
    engine = SearchEngine(release)
    if engine.informal is None:
        print(f"error: {release} has no informal channel to warm "
              f"({engine.unavailable.get('informal') or engine.unavailable.get('embedding') or 'no renderings'})",
              file=sys.stderr)
        return 2
    counts = engine.informal.warm(engine.vector.embedder, args.limit)
    print(json.dumps(counts, sort_keys=True))
    return 0
