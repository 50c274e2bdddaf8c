"""What running servers hold open under a release root: each `ReleaseHolder` (`mathindex serve`,
`mathindex mcp`) keeps a marker `ROOT/serving/<host>-<pid>-<n>.json` naming the releases it serves
(written before it opens one, removed when it stops), and `servers` reads them back for `prune`.
A marker whose process is gone (or whose pid now belongs to another process) is stale and ignored;
one written on another host cannot be checked from here and counts as live."""

from __future__ import annotations

import itertools
import logging
import os
import re
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mathindex.errors import IntegrityError
from mathindex.store.integrity import read_json, write_json
from mathindex.store.layout import RootLayout

log = logging.getLogger(__name__)

_SERIAL = itertools.count(1)  # markers of several holders in one process (tests) stay apart
SUFFIX = ".json"


def host_name() -> str:
    """This machine's name as a marker spells it (letters, digits, `.`, `_`, `-`)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname()) or "host"


def process_start(pid: int) -> int | None:
    """The process's start time in clock ticks after boot (/proc/PID/stat, field 22), which tells a
    reused pid from the process that wrote a marker; None where /proc cannot say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


class ServedMarker:
    """This process's marker under a root: `hold(ids)` replaces it atomically, `clear()` removes
    it. A root the server cannot write to (a read-only copy) is served all the same, with one
    warning: `prune` then cannot see that server."""

    def __init__(self, root: Path | str):
        self.path = RootLayout(root).serving / f"{host_name()}-{os.getpid()}-{next(_SERIAL)}{SUFFIX}"
        self._warned = False

    def hold(self, release_ids: Iterable[str]) -> None:
        record = {"host": host_name(), "pid": os.getpid(), "start": process_start(os.getpid()),
                  "release_ids": sorted(set(release_ids)), "since": time.time()}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_json(self.path, record)
        except OSError as exc:
            if not self._warned:
                log.warning("cannot mark the served release under %s (%s): `mathindex prune` will not see "
                            "this server", self.path.parent, exc)
                self._warned = True

    def clear(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass


@dataclass(frozen=True)
class Server:
    """One marker as read back: the process that wrote it, the releases it holds, and whether it
    still runs (`why` says how that was decided)."""

    path: Path
    host: str
    pid: int
    releases: tuple[str, ...]
    live: bool
    why: str


def servers(root: Path | str) -> list[Server]:
    """Every marker under ROOT/serving, live or stale, in name order. IntegrityError naming a file
    that does not read as a marker (not JSON, no pid or release_ids): what it protects cannot be told."""
    folder = RootLayout(root).serving
    found = []
    for path in sorted(folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []:
        record = read_json(path)
        pid, releases = record.get("pid"), record.get("release_ids")
        if not isinstance(pid, int) or not isinstance(releases, list) or not all(isinstance(r, str) for r in releases):
            raise IntegrityError(f"{path} is no server marker (pid and release_ids); remove it if no server writes it")
        host = str(record.get("host", ""))
        live, why = _alive(host, pid, record.get("start"))
        found.append(Server(path, host, pid, tuple(releases), live, why))
    return found


def _alive(host: str, pid: int, start: object) -> tuple[bool, str]:
    if host != host_name():
        return True, f"pid {pid} on host {host}, which cannot be checked from here"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False, f"pid {pid} is no longer running"
    except PermissionError:
        pass
    now = process_start(pid)
    if isinstance(start, int) and now is not None and now != start:
        return False, f"pid {pid} now belongs to another process"
    return True, f"pid {pid}"
