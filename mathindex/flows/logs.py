"""Prefect's logs while the CLI runs a flow. A flow or task run that raises logs the exception with
its traceback at ERROR, through Prefect's console handler (stderr) and its API handler (the flow
run's logs, for operators). The CLI prints the error as one line of its own, so while it runs a
flow the console leaves those records out; the API handler still gets them, and MATHINDEX_DEBUG=1
shows them on the console too."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from prefect.logging.handlers import PrefectConsoleHandler  # importing Prefect sets up its console handler

RUN_LOGGERS = ("prefect.flow_runs", "prefect.task_runs")


class _NoRunErrors(logging.Filter):
    """Drops ERROR (and worse) records of flow and task runs."""

    def filter(self, record: logging.LogRecord) -> bool:
        run = any(record.name == n or record.name.startswith(n + ".") for n in RUN_LOGGERS)
        return not (run and record.levelno >= logging.ERROR)


_FILTER = _NoRunErrors()


@contextmanager
def quiet_flow_errors() -> Iterator[None]:
    """For the block, Prefect's console handlers (on the root logger) leave out flow and task run
    errors; nothing changes with MATHINDEX_DEBUG set."""
    if os.environ.get("MATHINDEX_DEBUG"):
        yield
        return
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, PrefectConsoleHandler)]
    for h in handlers:
        h.addFilter(_FILTER)
    try:
        yield
    finally:
        for h in handlers:
            h.removeFilter(_FILTER)
