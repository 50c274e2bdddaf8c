"""Release ids, staging, publication: a release is built in `releases/.staging-<id>/`, renamed to
`releases/<id>/`, and only then gets its manifest; `published.json` names the last release that
passed its gate and is replaced atomically, only by a passing release."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path


from mathindex.store.integrity import IntegrityError, read_json, read_manifest, write_json, write_manifest
from mathindex.store.layout import MANIFEST, PUBLISHED, ReleaseLayout, RootLayout, STAGING
from mathindex.schemas.manifest import Manifest



def unique_release_id(root: Path, digest: str, now: datetime | None = None) -> str:
    """`<UTC time>Z-<digest[:8]>`, or with `-2`, `-3`, … appended when a release or staging
    directory of that id exists under ROOT/releases (a second run on the same inputs within one
    second). Ids sort by time to the second; unique under the root's lock, and `staging_dir`
    refuses an id that is taken even without it."""
    base = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ") + "-" + digest[:8]
    releases = RootLayout(root).releases
    n = 1
    while True:
        rid = base if n == 1 else f"{base}-{n}"
        if not (releases / rid).exists() and not (releases / f"{STAGING}{rid}").exists():
            return rid
        n += 1


def staging_dir(root: Path, release_id: str) -> Path:
    """A new, empty staging directory; FileExistsError when a run already builds (or built) this id:
    another run's directory is never removed or shared."""
    releases = RootLayout(root).releases
    if (releases / release_id).exists():
        raise FileExistsError(f"release already exists: {releases / release_id}")
    releases.mkdir(parents=True, exist_ok=True)
    path = releases / f"{STAGING}{release_id}"
    try:
        path.mkdir()
    except FileExistsError:
        raise FileExistsError(f"release {release_id} is being built by another run: {path}") from None
    return path


def finalise(staging: Path, release_id: str, manifest: Manifest) -> Path:
    """Renames staging to its final name, then writes the manifest last."""
    final = staging.parent / release_id
    if final.exists():
        raise FileExistsError(f"release already exists: {final}")
    os.replace(staging, final)
    write_manifest(final, manifest)
    return final


def discard(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def building(root: Path, release_id: str) -> Iterator[Path]:
    """A fresh staging directory for a release; removed if the block fails (whatever the error),
    so a failed build leaves nothing behind and never touches published releases."""
    staging = staging_dir(root, release_id)
    try:
        yield staging
    except BaseException:
        discard(staging)
        raise


def published_id(root: Path) -> str | None:
    """The release id ROOT/published.json names; None when there is no such file. IntegrityError
    naming the file when it is unreadable (a truncated write) or names no valid release id."""
    pointer = Path(root) / PUBLISHED
    if not pointer.is_file():
        return None
    try:
        rid = read_json(pointer).get("release_id")
    except IntegrityError as exc:
        raise IntegrityError(f"{exc}: it does not name a release; write {{\"release_id\": \"<id>\"}} "
                             f"into it or remove it") from None
    if not isinstance(rid, str) or not rid or "/" in rid or rid.startswith("."):
        raise IntegrityError(f"{pointer} names no valid release id: {rid!r}")
    return rid


def published_release(root: Path) -> Path | None:
    """The last release that passed its gate, or None (IntegrityError: published.json unreadable)."""
    rid = published_id(root)
    if rid is None:
        return None
    path = RootLayout(root).releases / rid
    return path if (path / MANIFEST).is_file() else None


def resolve_release(path: Path | str) -> Path:
    """The release a path names where a release is expected: a release directory itself, or a
    release root's published release. FileNotFoundError in one line when it is neither, or when
    nothing is published under the root; IntegrityError when published.json is unreadable."""
    path = Path(path)
    if ReleaseLayout(path).is_release():
        return path
    if not RootLayout(path).holds(path):
        raise FileNotFoundError(f"{path} is neither a release (no {MANIFEST}) nor a release root")
    rid = published_id(path)
    if rid is None:
        raise FileNotFoundError(f"nothing is published under {path} (no {PUBLISHED}); give a release directory")
    release = RootLayout(path).release(rid)
    if not release.is_release():
        raise FileNotFoundError(f"{RootLayout(path).published} names release {rid}, which is not complete (no {MANIFEST})")
    return release.dir


def published_releases(root: Path, limit: int) -> list[Path]:
    """The last `limit` published releases under root, oldest first: those whose manifest says
    `published`, up to the one `published.json` names (one after it was withdrawn by pointing
    back). Release ids begin with their UTC build time, so name order is build order."""
    last = published_release(root)
    if last is None:
        return []
    found = []
    for path in sorted(RootLayout(root).releases.iterdir()):
        if path.name.startswith(".") or path.name > last.name or not (path / MANIFEST).is_file():
            continue
        try:
            if read_manifest(path).published:
                found.append(path)
        except (OSError, ValueError, IntegrityError):  # unreadable: not counted as published
            continue
    return found[-limit:] if limit > 0 else []


def publish(root: Path, release_id: str) -> None:
    write_json(Path(root) / PUBLISHED, {"release_id": release_id})
