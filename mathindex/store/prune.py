"""Pruning a release root: which releases go and why each other one stays (`plan`), and their
removal under the root's lock (`prune`), each release renamed into ROOT/releases/.trash before it is
deleted, so that a crash never leaves part of a release that looks whole under ROOT/releases.

Never removed: the `keep` newest releases, the published one, every release a live server holds
(`store.serving`), and the release each of those was gated against (one step back: following the
chain further would keep every release ever built, each being gated against the one before)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mathindex.errors import IntegrityError
from mathindex.store.integrity import read_manifest
from mathindex.store.layout import RELEASE_ID, RootLayout
from mathindex.store.lock import clean_leftovers, leftovers, root_lock
from mathindex.store.releases import published_id
from mathindex.store.serving import Server, servers

BASELINE_PREFIX = "release "  # the manifest's bench.baseline when a release was gated against another


@dataclass(frozen=True)
class Verdict:
    """One complete release: kept (with every reason) or to be removed, and its size on disk."""

    release_id: str
    reasons: tuple[str, ...]
    size: int

    @property
    def kept(self) -> bool:
        return bool(self.reasons)


@dataclass(frozen=True)
class PrunePlan:
    """What a prune of one root does: a verdict per complete release (newest first), the leftovers
    of interrupted runs, and the stale server markers it removes."""

    verdicts: list[Verdict]
    leftovers: list[tuple[Path, str]] = field(default_factory=list)
    stale: list[Server] = field(default_factory=list)

    @property
    def removed(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.kept]


def check_keep(keep: object) -> int:
    """`keep` when it is a whole number of at least 1, else ValueError in one line."""
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise ValueError(f"keep must be a whole number of releases, at least 1, not {keep!r}")
    return keep


def complete_releases(root: Path) -> list[str]:
    """The ids of the complete releases under ROOT/releases (an id's name, a manifest), newest
    first: ids begin with their UTC build time."""
    folder = RootLayout(root).releases
    found = [p.name for p in folder.iterdir() if RELEASE_ID.match(p.name) and RootLayout(root).release(p.name).is_release()
             and not p.is_symlink()] if folder.is_dir() else []  # fmt: skip
    return sorted(found, reverse=True)


def gated_against(root: Path, release_id: str) -> str | None:
    """The id of the release `release_id` was gated against (its manifest's `previous_release`, or
    `bench.baseline` as older manifests spell it), None when it was gated against the committed
    baselines. IntegrityError when its manifest cannot be read: what it protects cannot be told."""
    try:
        manifest = read_manifest(RootLayout(root).release(release_id).dir)
    except (IntegrityError, ValueError) as exc:
        raise IntegrityError(f"cannot tell which release {release_id} was gated against: "
                             f"{' '.join(str(exc).split())[:300]}") from None
    if manifest.previous_release:
        return manifest.previous_release
    baseline = manifest.bench.baseline
    return baseline.removeprefix(BASELINE_PREFIX) if baseline.startswith(BASELINE_PREFIX) else None


def plan(root: Path, keep: int) -> PrunePlan:
    """Which releases a prune keeping the `keep` newest removes, and why each other one stays.
    Ask it under the root's lock (`prune`): the leftovers are only leftovers when no run is live.
    ValueError for keep < 1; IntegrityError when published.json, a kept release's manifest or a
    server marker cannot be read (nothing is removed then)."""
    check_keep(keep)
    root = Path(root)
    ids = complete_releases(root)
    reasons: dict[str, list[str]] = {rid: [] for rid in ids}
    for rid in ids[:keep]:
        reasons[rid].append(f"one of the {keep} newest")
    published = published_id(root)
    if published in reasons:
        reasons[published].append("published")
    found = servers(root)
    for server in found:
        for rid in server.releases if server.live else ():
            if rid in reasons:
                reasons[rid].append(f"served ({server.why})")
    for rid in [r for r in ids if reasons[r]]:
        base = gated_against(root, rid)
        if base in reasons and base != rid:
            reasons[base].append(f"the gate baseline of {rid}")
    verdicts = [Verdict(rid, tuple(reasons[rid]), tree_size(RootLayout(root).release(rid).dir)) for rid in ids]
    return PrunePlan(verdicts, leftovers(root), [s for s in found if not s.live])


def tree_size(path: Path) -> int:
    """Bytes of the files under a directory (links not followed; a file that vanished counts 0)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except FileNotFoundError:
                continue
    return total


def prune(root: Path, keep: int, *, dry_run: bool = False, wait_s: float = 0.0) -> PrunePlan:
    """Under the root's lock (RootBusy when a release runs on it and `wait_s` runs out): the plan,
    and unless `dry_run`, the leftovers of interrupted runs and stale server markers removed, then
    each release the plan removes renamed into releases/.trash and deleted there. Reentrant in a run
    that holds the lock (the release flow prunes after publishing)."""
    with root_lock(Path(root), wait_s):
        found = plan(root, keep)
        if not dry_run:
            clean_leftovers(root)
            for server in found.stale:
                server.path.unlink(missing_ok=True)
            remove_releases(root, [v.release_id for v in found.removed])
        return found


def remove_releases(root: Path, release_ids: Iterable[str]) -> None:
    """Each release renamed into ROOT/releases/.trash (one atomic rename: the release is whole under
    releases/ or gone from it), then deleted there; the trash folder removed when empty. A crash
    leaves at most a trash entry, which the next run or prune removes (`lock.leftovers`)."""
    layout = RootLayout(root)
    for rid in release_ids:
        layout.trash.mkdir(exist_ok=True)
        target = layout.trash / rid
        os.rename(layout.release(rid).dir, target)
        shutil.rmtree(target)
    if layout.trash.is_dir() and not any(layout.trash.iterdir()):
        layout.trash.rmdir()
