"""A run's stop (mathindex/cache/stop.py): the shards a flow submitted end at their next step once the
flow stops waiting for them; code outside a run never stops."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest

from mathindex.cache.stop import Stopped, check_stopped, stoppable, stopped


def _shard(started: threading.Event, seen: dict) -> None:
    """A long shard that looks at the stop between steps (about 5 s in all)."""
    started.set()
    for _ in range(500):
        if stopped():
            seen["stopped"] = True
            return
        time.sleep(0.01)
    seen["stopped"] = False


def test_outside_a_run_nothing_stops():
    check_stopped()
    assert not stopped()


def test_a_run_that_raises_stops_the_shards_it_started_on_its_threads():
    started, seen = threading.Event(), {}
    with pytest.raises(KeyboardInterrupt):
        with stoppable():
            # as the task runner submits: the shard's thread runs in a copy of the submitter's context
            worker = threading.Thread(target=contextvars.copy_context().run, args=(_shard, started, seen))
            worker.start()
            started.wait(5)
            raise KeyboardInterrupt  # a termination signal while the flow waits
    worker.join(10)
    assert seen == {"stopped": True}
    check_stopped()  # the stop belonged to that run only


def test_a_run_that_ends_well_stops_nothing():
    started, seen = threading.Event(), {}
    with stoppable():
        worker = threading.Thread(target=contextvars.copy_context().run, args=(_shard, started, seen))
        worker.start()
        started.wait(5)
    worker.join(10)
    assert seen == {"stopped": False}


def test_check_stopped_raises_inside_a_stopped_run():
    with pytest.raises(RuntimeError), stoppable() as event:
        raise RuntimeError("a shard failed")
    assert event.is_set()
    context = contextvars.copy_context()
    with stoppable() as event:
        event.set()
        with pytest.raises(Stopped):
            check_stopped()
    assert context.run(stopped) is False
