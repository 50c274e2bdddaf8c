"""Prefect task wrappers around the stage functions; one module per stage.

Tasks pass Arrow tables and paths, never hash them: our own caches key on content, so Prefect's
input caching is off (`NO_CACHE`) and results are not persisted.

Every task the flow calls directly has a timeout (`stage`: HOUR_S unless it says more; each is
several times what the stage took on whole Mathlib + Stacks), so that a hung stage ends the run
Failed instead of holding a nightly's root lock for ever: the flow runs them on its main thread,
where Prefect's timeout interrupts them. Only the extractions and the embed shards (`io_stage`)
run on the task runner's threads or Dask workers, through the root's shared cache (`tasks.shards`
runs a stage's shards); they retry, only on transient errors
(`is_transient`), and have no Prefect timeout (off the main thread it cannot interrupt a blocked
call, and Prefect warns at every run); the extractors bound each file themselves. See
docs/contracts.md, "Deployments, retries and timeouts".
"""

from __future__ import annotations

import copy
import errno
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any, Mapping

import pyarrow as pa

from prefect import task
from prefect.cache_policies import NO_CACHE

HOUR_S = 3600
# exception class names that say the machine, the network or a worker failed, not the input
TRANSIENT_NAMES = frozenset({
    "KilledWorker", "CommClosedError", "StreamClosedError", "BrokenProcessPool",  # Dask, process pools
    "ConnectionError", "ConnectionResetError", "ConnectionAbortedError", "ConnectionRefusedError",
})  # fmt: skip
TRANSIENT_ERRNOS = frozenset({errno.EIO, errno.ESTALE, errno.ETIMEDOUT, errno.ECONNRESET, errno.EAGAIN, errno.ENOLINK})
RETRY_DELAYS_S = [10, 60]  # two retries, backing off: a restarted worker, a remounted file system


def is_transient(exc: BaseException | None) -> bool:
    """Whether an error (or one in its cause/context chain) is worth retrying: a lost Dask worker or
    connection, a dead pool worker, an I/O error of a network file system (EIO, ESTALE, ...).
    Deterministic errors (bad input, a bug, a timeout of our own) are not."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if any(k.__name__ in TRANSIENT_NAMES for k in type(exc).__mro__):
            return True
        if isinstance(exc, OSError) and exc.errno in TRANSIENT_ERRNOS:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def retry_transient(task, task_run, state) -> bool:
    """Prefect's `retry_condition_fn`: retry a failed run only when its error `is_transient`."""
    try:
        state.result()
    except BaseException as exc:  # noqa: BLE001 - the failed run's own error, re-raised by result()
        return is_transient(exc)
    return False


stage = partial(task, cache_policy=NO_CACHE, persist_result=False, timeout_seconds=HOUR_S)
io_stage = partial(stage, timeout_seconds=None, retries=len(RETRY_DELAYS_S), retry_delay_seconds=RETRY_DELAYS_S,
                   retry_condition_fn=retry_transient)


@dataclass(frozen=True)
class IndexBuild:
    """What an index task built in the release (formula, formal, lexical, premises): its figures as
    the manifest records them, read-only, so that no later step edits what a task reported
    (`with_figures` gives a new record)."""

    kind: str
    figures: Mapping[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "figures", MappingProxyType(copy.deepcopy(dict(self.figures))))

    def with_figures(self, **more: Any) -> "IndexBuild":
        return IndexBuild(self.kind, {**self.figures, **more})

    def manifest_entry(self) -> dict:
        return copy.deepcopy(dict(self.figures))


@dataclass(frozen=True)
class TableBuild:
    """A task's table with the index built from it (the formal stage: `formal_statements` and `formal/`)."""

    table: pa.Table = field(repr=False)
    index: IndexBuild


@dataclass(frozen=True)
class BenchRun:
    """Every suite's metrics (`evaluation.bench`: suites, headline, unavailable channels) and the
    per-query rows of `bench_results`."""

    metrics: Mapping[str, Any]
    rows: pa.Table = field(repr=False)
