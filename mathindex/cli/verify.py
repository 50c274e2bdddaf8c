"""`mathindex verify RELEASE`: every file of a release against its manifest."""

from __future__ import annotations

import argparse
import sys

from mathindex.cli.exits import EXIT_INTEGRITY, EXIT_OK, UsageError
from mathindex.store.integrity import read_manifest, verify_release
from mathindex.store.releases import resolve_release


def run(args: argparse.Namespace) -> int:
    """Every file of a release (a directory, or a root's published release) against its manifest:
    the bad ones one per line on stdout and exit 4, else one line saying how many matched."""
    try:  # IntegrityError (exit 4) when published.json is unreadable
        release = resolve_release(args.release)
    except FileNotFoundError as exc:
        raise UsageError(f"mathindex verify: {exc}") from None
    problems = verify_release(release, quick=args.quick)
    for line in problems:
        print(line)
    if problems:
        print(f"mathindex verify: release {release.name}: {len(problems)} bad file(s)", file=sys.stderr)
        return EXIT_INTEGRITY
    checked = "sizes" if args.quick else "sha256"
    print(f"release {release.name}: {len(read_manifest(release).files)} files match the manifest ({checked})")
    return EXIT_OK
