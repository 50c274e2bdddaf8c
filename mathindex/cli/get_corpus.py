"""`mathindex get-corpus [REPOSITORY] --sources FILE [--name NAME]`: lays out the sources file's
pinned corpora (`upstream.layout`) where the file says they lie, so that `mathindex release
--sources FILE` reads them. Without REPOSITORY, each is fetched from its upstream URL."""

from __future__ import annotations

import argparse

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.upstream import layout, source_dir, upstream_specs, upstream_url


def run(args: argparse.Namespace) -> int:
    """One line per corpus laid out (or found laid out already); a refusal is one line, exit 2."""
    specs = upstream_specs(args.sources, args.name)
    if len(specs) > 1 and args.repository is not None:
        raise UsageError(f"mathindex get-corpus: {args.sources} has several sources with an upstream "
                         f"({', '.join(s.name for s in specs)}): choose the one REPOSITORY holds with --name, "
                         "or give no REPOSITORY to fetch each from its upstream URL")
    for spec in specs:
        done = layout(args.repository or upstream_url(spec), spec, source_dir(args.sources, spec))
        what = "already laid out" if done.reused else f"laid out in {done.seconds:.1f} s"
        at = f"{done.commit[:12]} (tag {spec.upstream.tag})" if spec.upstream.tag else done.commit[:12]
        print(f"{spec.name}: {done.files:,} files ({done.bytes / 1e6:.1f} MB) of {spec.upstream.repository} at "
              f"{at} ({spec.upstream.license}) {what}: {done.out}")
        if spec.commit is None:
            print(f"{spec.name}: pinned by tag only; pin the commit in {args.sources}: commit: {done.commit}")
    return EXIT_OK
