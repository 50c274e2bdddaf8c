"""The watchdog of Prefect's temporary API server (flows/server.py `tie_temporary_server`), run as
a program of its own (`python -I -S watchdog.py CLI_PIDFD`, the server pids on stdin): when the CLI
ends, however it ended, it stops the servers still running (SIGTERM, then SIGKILL after GRACE_S).

This module imports only the standard library: it runs without site-packages.
"""

from __future__ import annotations

import os
import select
import signal
import sys

GRACE_S = 5.0


def watch(cli: int, reports: int, grace_s: float = GRACE_S) -> None:
    """Until the CLI (pidfd `cli`) ends, reads server pids from the pipe `reports` and keeps a pidfd
    of each; then stops the servers still running. Returns early once the CLI closed the pipe and
    every server it named has ended (the CLI stopped them itself)."""
    os.set_blocking(reports, False)
    servers: dict[int, int] = {}  # pid -> pidfd
    seen: set[int] = set()
    pending = b""
    while True:
        ready = select.select([cli, *servers.values(), *([reports] if reports >= 0 else [])], [], [])[0]
        if reports >= 0 and (reports in ready or cli in ready):  # after the CLI's end: what it wrote first
            pending, ended = _read_pids(reports, pending, servers, seen)
            if ended:
                os.close(reports)
                reports = -1
        if cli in ready:
            _stop(list(servers.values()), grace_s)
            return
        for pid, fd in list(servers.items()):
            if fd in ready:
                del servers[pid]
                os.close(fd)
        if reports < 0 and not servers:
            return


def _read_pids(reports: int, pending: bytes, servers: dict[int, int], seen: set[int]) -> tuple[bytes, bool]:
    """Reads what the pipe holds, opening a pidfd for each pid not seen before: (the unfinished
    line, whether the pipe is closed)."""
    while True:
        try:
            chunk = os.read(reports, 4096)
        except BlockingIOError:
            return pending, False
        if not chunk:
            return pending, True
        *lines, pending = (pending + chunk).split(b"\n")
        for pid in (int(line) for line in lines if line.strip().isdigit()):
            if pid not in seen:
                seen.add(pid)
                try:
                    servers[pid] = os.pidfd_open(pid)
                except ProcessLookupError:  # it ended already
                    pass


def _stop(pidfds: list[int], grace_s: float) -> None:
    """SIGTERM to each process, SIGKILL to those still running after `grace_s` seconds."""
    for fd in pidfds:
        try:
            signal.pidfd_send_signal(fd, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for fd in pidfds:
        if not select.select([fd], [], [], grace_s)[0]:
            try:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            except ProcessLookupError:
                pass


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the CLI; the watchdog then does its job
    watch(int(sys.argv[1]), sys.stdin.fileno())
