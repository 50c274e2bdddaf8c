"""Content-keyed shards of a stage through the flow's task runner (the thread pool locally,
prefect-dask on a cluster): submitted a window at a time, gathered in shard order, so what the
stage makes of them never depends on how many workers ran or which finished first. A shard whose
worker was lost is run again and the flow's log names it: Dask's own rescheduling (the shard's
result names the lost run, `cache.shards.RunMarks`), or a resubmission here when the future failed
with a transient error (`tasks.is_transient`: a KilledWorker once Dask gave up on it)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from typing import Any

from prefect.context import FlowRunContext
from prefect.logging import get_run_logger
from prefect.task_runners import ThreadPoolTaskRunner

from mathindex.cache.stop import stoppable
from mathindex.tasks import RETRY_DELAYS_S, is_transient


def runner_is_local() -> bool:
    """Whether the running flow's tasks run on its own thread pool (not on Dask workers)."""
    ctx = FlowRunContext.get()
    return ctx is None or isinstance(ctx.task_runner, ThreadPoolTaskRunner)


def size_from_env(env: str, default: int) -> int:
    """A stage's shard size: $`env` when set (smaller shards spread a small corpus over more
    workers: the tests set it), else `default`; a value that is not a positive integer is an error."""
    raw = os.environ.get(env, "")
    if raw and (not raw.isdigit() or int(raw) < 1):
        raise ValueError(f"{env} must be a positive integer, not {raw!r}")
    return int(raw) if raw else default


def run_shards(task, shards: list, label: str, window: int | None = None,
               on_result: Callable[[Any], None] | None = None, **params: Any) -> list:
    """`task.submit(shard, **params)` for each shard (each has `index` and `key`), at most `window`
    in flight (None: all at once); the results in shard order, each given to `on_result` as it is
    gathered (before the next shards are submitted). A shard lost with its worker is
    submitted again, up to len(RETRY_DELAYS_S) times; any other error is raised, and then (as on
    a termination signal while waiting) the shards still running on this process's threads are told
    to stop (`cache.stop`)."""
    with stoppable():
        return _run_shards(task, shards, label, window, on_result, params)


def _run_shards(task, shards: list, label: str, window: int | None, on_result: Callable[[Any], None] | None,
                params: dict) -> list:
    log = get_run_logger()
    results: list = [None] * len(shards)
    todo, in_flight, retries = deque(range(len(shards))), deque(), [0] * len(shards)
    while todo or in_flight:
        while todo and (window is None or len(in_flight) < window):
            i = todo.popleft()
            in_flight.append((i, task.submit(shards[i], **params)))
        i, future = in_flight.popleft()
        try:
            results[i] = future.result()
        except Exception as exc:  # noqa: BLE001 - a transient loss is retried, anything else raised as it is
            if not is_transient(exc) or retries[i] >= len(RETRY_DELAYS_S):
                raise
            retries[i] += 1
            log.warning("%s shard %d of %d (%s) lost (%s: %s); retry %d of %d", label, i + 1, len(shards),
                        shards[i].key, type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else "",
                        retries[i], len(RETRY_DELAYS_S))
            todo.appendleft(i)
            continue
        if on_result is not None:
            on_result(results[i])
        if getattr(results[i], "lost", ()):
            log.warning("%s shard %d of %d (%s): its run on %s was lost; retried on %s", label, i + 1,
                        len(shards), shards[i].key, ", ".join(results[i].lost), results[i].worker)
    return results
