"""Worker processes of the extractors: how they start (`mp_context`) and how they stop
(`stop_on_sigterm`, every pool's initializer)."""

from __future__ import annotations

import ctypes
import multiprocessing
import signal
import sys
import threading

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def mp_context() -> multiprocessing.context.BaseContext:
    """fork when this process is single-threaded (cheap); forkserver under threads (a Prefect task)."""
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")


def stop_on_sigterm() -> None:
    """In a pool worker: SIGTERM ends it, and (Linux) so does the death of the process that started it.
    A forked worker inherits its parent's handlers; Prefect's raises an exception that the pool hands
    back as the task's result, and the worker would go on (or, orphaned, wait forever)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):  # no libc prctl: SIGTERM itself still ends the worker
            pass
