"""Prefect task wrappers around the stage functions; one module per stage.

Tasks pass Arrow tables and paths, never hash them: our own caches key on content, so Prefect's
input caching is off (`NO_CACHE`) and results are not persisted.
"""

from __future__ import annotations

from functools import partial

from prefect import task
from prefect.cache_policies import NO_CACHE

stage = partial(task, cache_policy=NO_CACHE, persist_result=False)
