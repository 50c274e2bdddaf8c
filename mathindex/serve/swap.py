"""The release being served and its hot swap.

`ReleaseHolder.current` is one reference, replaced in a single assignment: a request reads it once
and finishes on that release even when a new one is switched in meanwhile. A watcher thread polls
`ROOT/published.json`; a newly named release is opened (and verified) on that thread, off the
request path, and switched in only once it opened; one that fails is logged and refused, and the
server goes on with the release it has. What the holder serves (and, during a swap, the release it
leaves) is marked under the root (`store.serving`), so that `mathindex prune` keeps it."""

from __future__ import annotations

import ctypes
import gc
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow

from mathindex.serve.responses import Refusal
from mathindex.serve.release import ReleaseRefused, ServedRelease
from mathindex.store import releases as store
from mathindex.store.integrity import IntegrityError
from mathindex.store.layout import MANIFEST, PUBLISHED, RootLayout
from mathindex.store.serving import ServedMarker

log = logging.getLogger(__name__)

POLL_S = 1.0
MAX_REFUSALS = 20  # kept for /health
TRIM_AFTER_S = 10.0  # after a swap, when requests on the old release have long finished


class NoRelease(Exception):
    """The root names no release to serve (no published.json, or an unknown --release)."""


def published_id(root: Path) -> str:
    """The release id ROOT/published.json names (`store.published_id`), else NoRelease."""
    try:
        rid = store.published_id(Path(root))
    except IntegrityError as exc:
        raise NoRelease(str(exc)) from None
    if rid is None:
        raise NoRelease(f"no {PUBLISHED} under {root}: nothing is published there (give --release ID)")
    return rid


def release_path(root: Path, release_id: str) -> Path:
    release = RootLayout(root).release(release_id)
    if not release.is_release():
        raise NoRelease(f"release {release_id} not found under {RootLayout(root).releases} (no {MANIFEST})")
    return release.dir


class ReleaseHolder:
    """Serves one release of ROOT at a time: `--release ID` pins it, else published.json names it
    and `watch()` follows it."""

    def __init__(self, root: Path, release_id: str | None = None,
                 opener: Callable[[Path], ServedRelease] = ServedRelease):
        self.root = Path(root)
        self.pinned = release_id is not None
        self._opener = opener
        rid = release_id or published_id(self.root)
        self._marker = ServedMarker(self.root)
        self._marker.hold([rid])  # before opening it: a prune from now on keeps it
        try:
            self._current: ServedRelease = opener(release_path(self.root, rid))
        except BaseException:
            self._marker.clear()
            raise
        self.swaps = 0
        self.refused: list[Refusal] = []
        self._seen = rid  # the last id published.json named (opened or refused)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.started = time.time()

    @property
    def current(self) -> ServedRelease:
        return self._current

    @property
    def watching(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def refresh(self) -> bool:
        """Opens and switches to the release published.json names when it is a new one; True when
        it switched. A release that fails to open is refused once (until published.json names
        another), logged and kept in `refused`."""
        try:
            rid = published_id(self.root)
        except NoRelease as exc:
            if self._seen is not None:
                log.warning("keeping release %s: %s", self._current.release_id, exc)
                self._seen = None
            return False
        if rid == self._seen or rid == self._current.release_id:
            self._seen = rid
            return False
        self._seen = rid
        log.info("release %s published; opening it beside %s", rid, self._current.release_id)
        self._marker.hold([self._current.release_id, rid])
        try:
            new = self._opener(release_path(self.root, rid))
            lost = set(new.unavailable) - set(self._current.unavailable)
            if lost:
                raise ReleaseRefused(f"release {rid}: channels unavailable: "
                                     + "; ".join(f"{c}: {new.unavailable[c]}" for c in sorted(lost)))
        except Exception as exc:  # noqa: BLE001 - any failure (ReleaseRefused, NoRelease, a bug) keeps the old release
            reason = " ".join(str(exc).split()) or type(exc).__name__
            log.error("refused release %s (still serving %s): %s", rid, self._current.release_id, reason)
            self.refused = (self.refused + [Refusal(release_id=rid, reason=reason, at=time.time())])[-MAX_REFUSALS:]
            self._marker.hold([self._current.release_id])
            return False
        old, self._current = self._current, new  # the switch: one reference assignment
        self.swaps += 1
        log.info("now serving release %s (was %s)", new.release_id, old.release_id)
        return True

    def watch(self, interval_s: float = POLL_S) -> None:
        """Starts the watcher thread (a no-op for a pinned release or when already watching)."""
        if self.pinned or self.watching:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, args=(interval_s,), name="release-watcher", daemon=True)
        self._thread.start()

    def _loop(self, interval_s: float) -> None:
        trim_at = None
        while not self._stop.wait(interval_s):
            try:
                if self.refresh():
                    trim_at = time.monotonic() + TRIM_AFTER_S
                elif trim_at is not None and time.monotonic() >= trim_at:
                    trim_at = None
                    self._marker.hold([self._current.release_id])  # requests on the old release are done
                    _return_freed_memory()
            except Exception:
                log.exception("release watcher: poll failed")

    def stop(self) -> None:
        """Stops the watcher and removes this holder's served marker."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        self._marker.clear()


def _return_freed_memory() -> None:
    """Collects the old release and hands freed heap pages back to the OS (glibc and Arrow's pool
    keep them otherwise, and the process would hold two releases' worth of RSS after every swap)."""
    gc.collect()
    try:
        pyarrow.default_memory_pool().release_unused()  # Arrow's own allocator (tables, columns)
    except Exception as exc:  # noqa: BLE001 - best effort
        log.debug("arrow pool not trimmed: %s", exc)
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc: nothing to trim
        pass
