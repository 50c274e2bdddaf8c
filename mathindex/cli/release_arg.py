"""The RELEASE argument of search, premises, bench, reembed and warm, resolved as the verb starts."""

from __future__ import annotations

import argparse
from pathlib import Path

from mathindex.cli.exits import UsageError
from mathindex.store.releases import resolve_release


def resolved_release(args: argparse.Namespace) -> Path:
    """The release `args.release` names: a release directory, or a release root's published release
    (`store.resolve_release`). Neither is the one-line usage error argparse gives a bad argument
    (`mathindex VERB: argument release: …`, exit 2); an unreadable published.json is exit 4."""
    try:
        return resolve_release(args.release)
    except FileNotFoundError as exc:
        raise UsageError(f"mathindex {args.command}: argument release: {exc}") from None
