"""Test set-up: offline model loading, Prefect's settings, one Prefect harness and one sample release
per session, and the test tiers: every test on the Prefect harness is `e2e` (pyproject.toml)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

_PREFECT_HOME = tempfile.mkdtemp(prefix="mathindex-prefect-")
_ONNX_DIR = tempfile.mkdtemp(prefix="mathindex-onnx-")  # one ONNX export per model for every release root
atexit.register(shutil.rmtree, _ONNX_DIR, True)  # ~90 MB an export: not left behind
for key, value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "PREFECT_HOME": _PREFECT_HOME,  # results of this run never leak into the next one
    "MATHINDEX_ONNX_DIR": _ONNX_DIR,
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_LOGGING_LEVEL": "WARNING",
}.items():
    os.environ[key] = value


class SampleRun(NamedTuple):
    """The session's build of the bundled sample: its release root and the flow run's final state."""

    root: Path
    state: Any  # prefect.client.schemas.objects.State


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks `e2e` every test that runs on the Prefect harness, directly or through a fixture."""
    for item in items:
        if "prefect_harness" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect server for every flow test of the session (it costs ~10-20 s)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def sample_release_run(tmp_path_factory, prefect_harness) -> Iterator[SampleRun]:
    """The one build of the bundled sample per session, published (the gate passed): tests that
    only read it share it; a test that changes anything works on a copy (`copy_root`, or the whole
    root with its caches). At the end of the session the release must still match its manifest."""
    from mathindex.flows.release import release_flow  # after the environment above is set
    from mathindex.store.integrity import verify_release
    from mathindex.store.layout import RootLayout

    root = tmp_path_factory.mktemp("sample-root")
    state = release_flow(out=str(root), return_state=True)
    outcome = state.result()
    assert outcome.passed, outcome.gate
    published = RootLayout(root).published.read_bytes()
    yield SampleRun(root, state)
    assert verify_release(outcome.release_dir) == [], "a test changed the shared sample release: copy it first"
    assert RootLayout(root).published.read_bytes() == published, "a test published into the shared sample root"


@pytest.fixture(scope="session")
def sample_release_root(sample_release_run) -> Path:
    """The release root of the session's sample build (see `sample_release_run`)."""
    return sample_release_run.root
