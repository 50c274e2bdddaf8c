"""Test set-up: offline model loading, Prefect's settings, one Prefect harness per session, and the
test tiers: every test on the Prefect harness is `e2e` (pyproject.toml)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

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
def sample_release_root(tmp_path_factory, prefect_harness):
    """A release root with one published release of the bundled sample, built once per session
    (the serving tests share it; copy it with `copy_root` before changing anything in it)."""
    from mathindex.flows.release import release_flow

    root = tmp_path_factory.mktemp("sample-root")
    outcome = release_flow(out=str(root))
    assert outcome.passed, outcome.gate
    return root
