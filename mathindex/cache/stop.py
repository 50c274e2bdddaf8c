"""A stop for a run's shards (run infrastructure, like the run marks of cache/shards.py: it changes
no output, so no cache's code set holds it): when the flow stops waiting for them (a termination signal, a shard
that failed), the shards still running on its own threads end at their next step instead of
running to their end, which the interpreter would otherwise wait for before it exits (minutes for
an embedding shard). The run's event reaches its shards through the context the task runner copies
into each task's thread; code outside a run (a server encoding a query) never stops. Workers of a
cluster are stopped by Dask, not by this."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_RUN: ContextVar[threading.Event | None] = ContextVar("mathindex_run_stop", default=None)


class Stopped(Exception):
    """The run this work belongs to was stopped; nothing it was doing is stored."""


@contextmanager
def stoppable() -> Iterator[threading.Event]:
    """The stop of the shards submitted inside the block: set when the block raises (anything,
    a KeyboardInterrupt or Prefect's termination signal too), then raised on."""
    event = threading.Event()
    token = _RUN.set(event)
    try:
        yield event
    except BaseException:
        event.set()
        raise
    finally:
        _RUN.reset(token)


def stopped() -> bool:
    """Whether the run this code works for was stopped (False outside a run)."""
    event = _RUN.get()
    return event is not None and event.is_set()


def check_stopped() -> None:
    """Raises Stopped once the run this code works for was stopped."""
    if stopped():
        raise Stopped("the run was stopped")
