"""A real Dask cluster on 127.0.0.1 for tests and benchmarks: a `dask scheduler` and single-threaded
`dask worker` processes without nannies (a killed worker stays dead), each a subprocess importing
this checkout, always torn down on the way out; and a process's peak RSS and CPU from /proc."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, NamedTuple

REPO = Path(__file__).resolve().parent.parent.parent
START_S = 60  # the scheduler and every worker up


class Cluster(NamedTuple):
    address: str
    workers: list[subprocess.Popen]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(procs: list[subprocess.Popen]) -> None:
    """Terminates `procs`, then kills what has not ended within 15 s."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=15)


@contextmanager
def dask_cluster(logs: Path, workers: int = 2) -> Iterator[Cluster]:
    """A scheduler and `workers` single-threaded workers (named w0, w1, ...), logs under `logs`;
    stopped on the way out, whatever happened."""
    from distributed import Client  # heavy, optional: dask.distributed, needed by this client only

    address = f"tcp://127.0.0.1:{free_port()}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    logs.mkdir(parents=True, exist_ok=True)
    dask = [sys.executable, "-m", "dask"]
    procs = [subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                               "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                              stderr=(logs / "scheduler.log").open("wb"))]
    try:
        for i in range(workers):
            procs.append(subprocess.Popen([*dask, "worker", address, "--nthreads", "1", "--no-nanny",
                                           "--no-dashboard", "--host", "127.0.0.1", "--name", f"w{i}"],
                                          env=env, stdout=subprocess.DEVNULL,
                                          stderr=(logs / f"worker{i}.log").open("wb")))
        with Client(address, timeout=START_S) as client:
            client.wait_for_workers(workers, timeout=START_S)
        yield Cluster(address, procs[1:])
    finally:
        stop(procs)


def peak_rss_mb(pid: int) -> float | None:
    """The live process's peak resident set (VmHWM) in MB; None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu_s(pid: int) -> float | None:
    """The live process's user + system CPU seconds; None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
