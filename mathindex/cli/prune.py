"""`mathindex prune ROOT --keep N`: old releases removed under the root's lock (`store.prune`), one
line per release saying whether it stays and why, or that it goes."""

from __future__ import annotations

import argparse
from pathlib import Path

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.store.layout import ReleaseLayout, RootLayout
from mathindex.store.prune import PrunePlan, prune


def run(args: argparse.Namespace) -> int:
    """Prunes (or with --dry-run, plans) ROOT; exit 2 for a path that is no release root, 5 when a
    release runs on it, 4 when what a release protects cannot be read."""
    root = Path(args.root)
    if ReleaseLayout(root).is_release():
        raise UsageError(f"mathindex prune: {root} is a release, not a release root (give the folder holding releases/)")
    if not RootLayout(root).holds(root):
        raise UsageError(f"mathindex prune: {root} is not a release root (no {RootLayout.RELEASES}/ or {RootLayout.PUBLISHED})")
    for line in report(prune(root, args.keep, dry_run=args.dry_run, wait_s=args.wait), args.dry_run):
        print(line)
    return EXIT_OK


def report(plan: PrunePlan, dry_run: bool) -> list[str]:
    """One line per release (newest first), leftover and stale marker, then a summary."""
    go = "would remove" if dry_run else "removed"
    lines = []
    for v in plan.verdicts:
        lines.append(f"keep    {v.release_id}  ({'; '.join(v.reasons)})" if v.kept
                     else f"{go:<7} {v.release_id}  ({human(v.size)})")  # fmt: skip
    lines += [f"{go:<7} {path}  ({why})" for path, why in plan.leftovers]
    lines += [f"{go:<7} {s.path}  (a stale server marker: {s.why})" for s in plan.stale]
    freed = sum(v.size for v in plan.removed)
    kept = len(plan.verdicts) - len(plan.removed)
    summary = f"{len(plan.removed)} release(s), {human(freed)}; kept {kept}"
    lines.append(f"mathindex prune: dry run, would remove {summary}" if dry_run else f"mathindex prune: removed {summary}")
    return lines


def human(size: int) -> str:
    """Bytes as a reader takes them in: 1.2 GB, 340.0 MB, 12 B."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"
