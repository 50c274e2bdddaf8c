"""Retries and timeouts of the release's tasks (issue 13): only the extractions and embed shards retry, only on
transient errors (a lost Dask worker, a dead pool worker, a network file system's I/O error),
backing off; every task has a timeout."""

from __future__ import annotations

import errno
import importlib
import pkgutil

import pytest
from prefect import flow
from prefect.tasks import Task

import mathindex.tasks as tasks
from mathindex.tasks import HOUR_S, RETRY_DELAYS_S, io_stage, is_transient, retry_transient


class KilledWorker(Exception):
    """Named as distributed's: `is_transient` goes by class name, so Dask need not be imported."""


@pytest.mark.parametrize("exc, transient", [
    (KilledWorker("worker tcp://127.0.0.1:4000 died"), True),
    (OSError(errno.EIO, "Input/output error"), True),
    (OSError(errno.ESTALE, "Stale file handle"), True),
    (ConnectionResetError(errno.ECONNRESET, "reset"), True),
    (OSError(errno.ENOENT, "No such file"), False),
    (PermissionError(errno.EACCES, "denied"), False),
    (ValueError("bad input"), False),
    (TimeoutError("Scope timed out after 3600 second(s)."), False),  # our own timeout is not retried
])  # fmt: skip
def test_is_transient(exc, transient):
    assert is_transient(exc) is transient


def test_is_transient_follows_the_cause_chain():
    try:
        try:
            raise OSError(errno.EIO, "Input/output error")
        except OSError as inner:
            raise RuntimeError("extraction failed") from inner
    except RuntimeError as exc:
        assert is_transient(exc)
    assert not is_transient(RuntimeError("no cause"))


def _attempts(error: BaseException) -> tuple[object, int]:
    """A task with the extractions' retry policy (no delays) that fails once with `error`, run by a
    flow on the task runner as the extractions are: (its result or error, how often it ran)."""
    calls = []  # in the closure: Prefect copies a flow's parameters

    @io_stage(name="flaky", retry_delay_seconds=0)
    def flaky() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise error
        return len(calls)

    @flow
    def run():
        return flaky.submit().result(raise_on_failure=False)

    return run(), len(calls)


def test_a_transient_error_is_retried_and_a_deterministic_one_is_not(prefect_harness):
    assert _attempts(KilledWorker("lost")) == (2, 2)
    result, calls = _attempts(ValueError("bad corpus"))
    assert isinstance(result, ValueError) and calls == 1


def _all_tasks() -> dict[str, Task]:
    found = {}
    for info in pkgutil.iter_modules(tasks.__path__):
        module = importlib.import_module(f"mathindex.tasks.{info.name}")
        found |= {t.name: t for t in vars(module).values() if isinstance(t, Task)}
    return found


def test_only_tasks_on_workers_retry_and_every_other_task_has_a_timeout():
    found = _all_tasks()
    assert {"extract_lean", "extract_latex", "embed_and_index", "run_benchmarks", "informalise"} <= set(found)
    retrying = {name for name, t in found.items() if t.retries}
    assert retrying == {"extract_lean", "extract_lean_shard", "extract_latex", "embed_shard", "parse_formula_shard",
                        "formal_facts_shard", "informalise_shard", "premise_features_shard", "tokenise_text_shard"}
    for name in retrying:
        assert found[name].retries == len(RETRY_DELAYS_S) and found[name].retry_delay_seconds == RETRY_DELAYS_S
        assert found[name].retry_condition_fn is retry_transient
    assert all(found[name].timeout_seconds is None for name in retrying)  # off the main thread: no use
    assert all(t.timeout_seconds and t.timeout_seconds >= HOUR_S for name, t in found.items() if name not in retrying)
    assert found["embed_and_index"].timeout_seconds == 8 * HOUR_S  # a cold whole-Mathlib embedding: 53 min
