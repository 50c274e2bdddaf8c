"""`mathindex get-corpus REPOSITORY --sources FILE`: lays out the sources file's pinned corpus
(`upstream.layout`) where the file says it lies, so that `mathindex release --sources FILE` reads it."""

from __future__ import annotations

import argparse

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.upstream import upstream_specs, layout, source_dir


def run(args: argparse.Namespace) -> int:
    """One line per corpus laid out (or found laid out already); a refusal is one line, exit 2."""
    specs = upstream_specs(args.sources, args.name)
    if len(specs) > 1:
        raise UsageError(f"mathindex get-corpus: {args.sources} has several sources with an upstream "
                         f"({', '.join(s.name for s in specs)}): choose one with --name")
    [spec] = specs
    done = layout(args.repository, spec, source_dir(args.sources, spec))
    what = "already laid out" if done.reused else f"laid out in {done.seconds:.1f} s"
    print(f"{spec.name}: {done.files:,} files ({done.bytes / 1e6:.1f} MB) of {spec.upstream.repository} at "
          f"{spec.commit[:12]} ({spec.upstream.license}) {what}: {done.out}")
    return EXIT_OK
