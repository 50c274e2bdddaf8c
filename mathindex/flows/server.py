"""Prefect's temporary API server, tied to the life of the process that runs the flows.

Without a `PREFECT_API_URL`, Prefect starts a temporary server (`SubprocessASGIServer`, a uvicorn
child process) on first use and stops it at interpreter exit; a CLI killed outright (SIGKILL, an
OOM kill) never runs that, and the server stays listening. `tie_temporary_server` starts that same
server itself, where Prefect would (its default, port-less instance, which Prefect's clients then
use), with a watchdog process beside it (this file as a script, stdlib only). The watchdog holds
a pidfd of the CLI and is told each server process's pid the moment Prefect spawns it (before the
server's start-up, which takes seconds); when the CLI ends first, however it ended, the watchdog
stops those servers (SIGTERM, then SIGKILL after GRACE_S) and exits; when they end first, it just
exits. What is left is the few milliseconds between Prefect's fork and the pid being written.

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
    global _WATCHDOG
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value() or not hasattr(os, "pidfd_open"):
        return None
    server = SubprocessASGIServer()  # the instance Prefect's own clients start and use
    if server.running:
        return None
    reports, report = os.pipe()
    cli = os.pidfd_open(os.getpid())
    try:
        _WATCHDOG = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__), str(cli)], pass_fds=(cli,),
                                     stdin=reports, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
