"""Lays out a pinned corpus from a git mirror of its public repository (`mathindex.upstream`, which
`mathindex get-corpus` runs too): for the LaTeX corpora of bench/sources/, outside this repository.

The sources file names the corpus (`bench/sources/<name>.yaml`: path, commit and `upstream`:
repository, licence, licence file, file patterns). The files of the pinned commit that match the
patterns, and the licence file, are staged beside the target with a `COMMIT` file (what
`sources.pin_source` verifies) and renamed into place. A target that already holds the pinned
commit is left as it is.

    .venv/bin/python -m bench.layout_corpus bench/sources/hott-book.yaml --git-dir GIT_DIR [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mathindex.upstream import LayoutError, layout, source_dir, upstream_specs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sources", type=Path, help="a sources file under bench/sources/")
    ap.add_argument("--git-dir", type=Path, required=True, help="a git mirror (or a clone) of the upstream repository")
    ap.add_argument("--out", type=Path, default=None, help="target directory (default: the source's path)")
    args = ap.parse_args()
    try:
        for spec in upstream_specs(args.sources):
            done = layout(args.git_dir, spec, args.out or source_dir(args.sources, spec))
            print(f"{spec.name}: {done.files} files of {spec.upstream.repository}@{done.commit[:12]} "
                  f"({spec.upstream.license}) under {done.out}")
    except (LayoutError, OSError) as exc:
        print(f"layout_corpus: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
