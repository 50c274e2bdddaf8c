"""The root's lock (one release-writing run per root, held from before its id is chosen until its
release is published) and the removal of what interrupted runs left under it."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


from mathindex.errors import RootBusy
from mathindex.store.layout import LOCK, MANIFEST, PUBLISHED, RELEASE_ID, RootLayout, STAGING



_HELD: dict[str, tuple[tuple[int, int], int]] = {}  # resolved root -> ((pid, thread), lock fd)


@contextmanager
def root_lock(root: Path, wait_s: float = 0.0) -> Iterator[None]:
    """An exclusive `flock` on ROOT/.lock for the block: one release-writing run per root. RootBusy
    (naming the holder's pid, which the holder writes into the file) at once, or after `wait_s`
    seconds of retrying. Reentrant on the thread holding it (the CLI takes it before Prefect
    starts, the flow again, for runs that do not come through the CLI). The kernel drops the lock
    when its holder dies, however it dies."""
    key = str(Path(root).resolve())
    me = (os.getpid(), threading.get_ident())
    if key in _HELD and _HELD[key][0] == me:
        yield
        return
    fd = _acquire(Path(key), wait_s)
    _HELD[key] = (me, fd)
    try:
        yield
    finally:
        del _HELD[key]
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _acquire(root: Path, wait_s: float) -> int:
    """The lock's file descriptor, locked and holding this process's pid."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                holder = _holder(fd)
                os.close(fd)
                waited = f"; waited {wait_s:g} s" if wait_s > 0 else ""
                raise RootBusy(f"another release is running on {root} ({holder}){waited}") from None
            time.sleep(min(0.2, max(0.01, deadline - time.monotonic())))
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _holder(fd: int) -> str:
    """`pid N` of the lock's holder, as it wrote it; says so when that process is gone (a child it
    forked still holds the lock) or when it has not written its pid yet."""
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    if not text.isdigit():
        return "pid unknown"
    try:
        os.kill(int(text), 0)
    except ProcessLookupError:
        return f"pid {text}, no longer running: a process it started still holds the lock"
    except PermissionError:
        pass
    return f"pid {text}"


def leftovers(root: Path) -> list[tuple[Path, str]]:
    """What interrupted runs left under the root, each with why it is one: staging directories,
    release directories without their manifest (a kill between the rename and the manifest), a
    half-written published.json.tmp, and what an interrupted prune left in releases/.trash. Only
    leftovers when no live run owns them: ask under the root's lock."""
    layout = RootLayout(root)
    found = []
    for path in sorted(layout.releases.iterdir()) if layout.releases.is_dir() else []:
        if not path.is_dir() or path.is_symlink():
            continue
        if path.name.startswith(STAGING):
            found.append((path, "an interrupted run's staging directory"))
        elif RELEASE_ID.match(path.name) and not (path / MANIFEST).exists():
            found.append((path, f"an interrupted run's release, renamed but without its {MANIFEST}"))
    tmp = Path(root) / f"{PUBLISHED}.tmp"
    if tmp.is_file():
        found.append((tmp, f"an interrupted write of {PUBLISHED}"))
    for path in sorted(layout.trash.iterdir()) if layout.trash.is_dir() and not layout.trash.is_symlink() else []:
        found.append((path, "a pruned release an interrupted prune did not finish removing"))
    return found


def clean_leftovers(root: Path) -> list[str]:
    """Removes the `leftovers` of interrupted runs; only under the root's lock. Returns one line
    per removal, for the run's log."""
    removed = []
    for path, why in leftovers(root):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        removed.append(f"removed {path} ({why})")
    return removed
