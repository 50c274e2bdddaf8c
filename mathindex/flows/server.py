"""Prefect's temporary API server, tied to the life of the process that runs the flows.

Without a `PREFECT_API_URL`, Prefect starts a temporary server (`SubprocessASGIServer`, a uvicorn
child process) on first use and stops it at interpreter exit; a CLI killed outright (SIGKILL, an
OOM kill) never runs that, and the server stays listening. `tie_temporary_server` starts that same
server itself, where Prefect would (its default, port-less instance, which Prefect's clients then
use), and a watchdog process beside it (this file as a script, stdlib only) that waits on pidfds of
both: when the CLI ends first, however it ended, the watchdog stops the server (SIGTERM, then
SIGKILL after GRACE_S) and exits; when the server ends first, it just exits.

This module imports only the standard library at the top: the watchdog runs it as its main program.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys

GRACE_S = 5.0
_WATCHDOG: subprocess.Popen | None = None  # kept: its Popen lives as long as the process


def tie_temporary_server() -> subprocess.Popen | None:
    """Starts Prefect's temporary server now, with a watchdog that stops it when this process ends;
    the watchdog's Popen, or None when flows talk to a configured server (PREFECT_API_URL, the
    tests' harness), the temporary server is off, it already runs, or this system has no pidfds."""
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value() or not hasattr(os, "pidfd_open"):
        return None
    server = SubprocessASGIServer()  # the instance Prefect's own clients start and use
    if server.running:
        return None
    server.start()
    cli_fd, server_fd = os.pidfd_open(os.getpid()), os.pidfd_open(server.server_process.pid)
    global _WATCHDOG
    try:
        _WATCHDOG = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__), str(cli_fd), str(server_fd)],
                                pass_fds=(cli_fd, server_fd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        return _WATCHDOG
    finally:
        os.close(cli_fd)
        os.close(server_fd)


def watch(cli_fd: int, server_fd: int, grace_s: float = GRACE_S) -> None:
    """Waits until the CLI or the server ends; when the CLI ended first, stops the server."""
    ready, _, _ = select.select([cli_fd, server_fd], [], [])
    if server_fd in ready:
        return
    try:
        signal.pidfd_send_signal(server_fd, signal.SIGTERM)
        if not select.select([server_fd], [], [], grace_s)[0]:
            signal.pidfd_send_signal(server_fd, signal.SIGKILL)
    except ProcessLookupError:  # it ended meanwhile
        pass


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the CLI; the watchdog then does its job
    watch(int(sys.argv[1]), int(sys.argv[2]))
