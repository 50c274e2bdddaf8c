"""Prefect's temporary API server, tied to the life of the process that runs the flows.

Without a `PREFECT_API_URL`, Prefect starts a temporary server (`SubprocessASGIServer`, a uvicorn
child process) on first use and stops it at interpreter exit; a CLI killed outright (SIGKILL, an
OOM kill) never runs that, and the server stays listening. `tie_temporary_server` starts that same
server itself, where Prefect would (its default, port-less instance, which Prefect's clients then
use), with a watchdog process beside it (flows/watchdog.py, a stdlib-only script). The watchdog holds
a pidfd of the CLI and is told each server process's pid the moment Prefect spawns it (before the
server's start-up, which takes seconds); when the CLI ends first, however it ended, the watchdog
(flows/watchdog.py) stops those servers and exits; when they end first, it just exits. What is left
is the few milliseconds between Prefect's fork and the pid being written.
"""

from __future__ import annotations

import os
import subprocess
import sys

from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

from mathindex.flows import watchdog

_WATCHDOG: subprocess.Popen | None = None  # kept: its Popen lives as long as the process


def tie_temporary_server() -> subprocess.Popen | None:
    """Starts Prefect's temporary server now, with a watchdog that stops it when this process ends;
    the watchdog's Popen, or None when flows talk to a configured server (PREFECT_API_URL, the
    tests' harness), the temporary server is off, it already runs, or this system has no pidfds."""
    global _WATCHDOG
    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value() or not hasattr(os, "pidfd_open"):
        return None
    # here, not at the top: Prefect's server code (about 1,000 modules, 2.5 s) loads only when it is started
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the instance Prefect's own clients start and use
    if server.running:
        return None
    reports, report = os.pipe()
    cli = os.pidfd_open(os.getpid())
    try:
        _WATCHDOG = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(watchdog.__file__), str(cli)],
                                     pass_fds=(cli,), stdin=reports, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        os.close(cli)
        os.close(reports)
    spawn = getattr(server, "_run_uvicorn_command", None)  # Prefect 3.9's: each server process it starts
    if spawn is not None:
        server._run_uvicorn_command = lambda: _reported(spawn(), report)
    try:
        server.start()
    finally:
        server.__dict__.pop("_run_uvicorn_command", None)
        if server.server_process is not None:  # again: all a Prefect without that method would give
            _reported(server.server_process, report)
        os.close(report)
    return _WATCHDOG


def _reported(process: subprocess.Popen, report: int) -> subprocess.Popen:
    os.write(report, f"{process.pid}\n".encode())
    return process
