"""The embedder's worker processes end with the process that started them: a release stopped (or
killed) in its embed stage leaves no worker encoding on (two were found still busy 8 min after a
whole-Mathlib release was stopped)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

PARENT = r"""
import sys, time
from mathindex.embed import SentenceTransformerEmbedder
e = SentenceTransformerEmbedder(workers=2, parallel_min=0, keep_workers=True, progress=False)
e.encode(["a group", "a ring", "a field", "a module"])
print(" ".join(str(pid) for pid in e._pool._processes), flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is gone for this purpose
        return fh.read().split(")")[-1].split()[0] != "Z"


def test_the_workers_end_when_the_process_that_started_them_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        parent.send_signal(signal.SIGKILL)  # no handler, no cleanup: only the workers' own death signal
        parent.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in pids)
    finally:
        parent.kill()
