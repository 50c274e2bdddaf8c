"""Stage progress: a bar on a terminal, plain lines (no carriage returns) in a worker's log."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import pytest

from mathindex.flows.progress import StageProgress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(stages: list[str], fail: str | None = None) -> StageProgress:
    with StageProgress(stages, desc="release") as progress:
        for name in stages:
            with progress.stage(name):
                if name == fail:
                    raise RuntimeError("boom")
    return progress


def test_without_a_terminal_each_stage_is_one_plain_line(monkeypatch):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    progress = _run(["pin", "extract", "embed"])
    out = log.getvalue()
    assert "\r" not in out and "\x1b" not in out
    lines = out.splitlines()
    assert [line.split(" ")[:3] for line in lines] == [["release:", "1/3", "pin"], ["release:", "2/3", "extract"], ["release:", "3/3", "embed"]]
    assert all(line.endswith(" s") for line in lines)
    assert list(progress.seconds) == ["pin", "extract", "embed"]


def test_a_failed_stage_says_so(monkeypatch):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with pytest.raises(RuntimeError):
        _run(["pin", "extract"], fail="extract")
    assert log.getvalue().splitlines()[-1].startswith("release: 1/2 extract failed after ")


def test_on_a_terminal_it_is_a_bar():
    term = _Terminal()
    with StageProgress(["pin", "extract"], desc="release", file=term) as progress:
        with progress.stage("pin"):
            pass
    assert "\r" in term.getvalue() and "1/2" in term.getvalue()


def _quietly(fn) -> None:
    """Calls fn without huggingface_hub's warning that HF_HUB_DISABLE_PROGRESS_BARS, read at its import, wins."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fn()


def test_without_a_terminal_model_loading_draws_no_bar(monkeypatch):
    """transformers draws `Loading weights` with tqdm, which draws even without a terminal; a flow
    run without one turns such bars off (a deployment's worker runs the flow without the CLI)."""
    import os

    from transformers.utils import logging as hf_logging

    saved = os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS")
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    was_enabled = hf_logging.is_progress_bar_enabled()
    _quietly(hf_logging.enable_progress_bar)
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    try:
        StageProgress(["embed"], desc="release").close()
        assert not hf_logging.is_progress_bar_enabled()
        for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
            pass
        assert log.getvalue() == ""
    finally:
        if saved is None:
            os.environ.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
        _quietly(hf_logging.enable_progress_bar if was_enabled else hf_logging.disable_progress_bar)


def test_inside_a_flow_run_logging_info_the_stage_lines_are_run_log_records(monkeypatch):
    """Under a worker Prefect logs INFO: the lines go through the flow run's logger (its API logs and
    the worker's output), not as plain lines beside it; in the CLI (WARNING) nothing changes."""
    import logging

    import mathindex.flows.progress as progress_module

    records: list[logging.LogRecord] = []
    logger = logging.getLogger("test.flow_run")
    logger.setLevel(logging.INFO)
    handler = logging.Handler()
    handler.emit = records.append
    logger.addHandler(handler)
    monkeypatch.setattr(progress_module, "run_logger", lambda: logger)
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with pytest.raises(RuntimeError):
        _run(["pin", "extract"], fail="extract")
    assert log.getvalue() == ""
    assert [(r.levelname, r.getMessage().split(" ")[:3]) for r in records] == [
        ("INFO", ["release:", "1/2", "pin"]), ("WARNING", ["release:", "1/2", "extract"])]
    logger.setLevel(logging.WARNING)  # as the CLI runs Prefect
    records.clear()
    _run(["pin"])
    assert records == [] and log.getvalue().startswith("release: 1/1 pin ")
    logger.removeHandler(handler)


def test_each_stage_records_its_own_peak_memory(monkeypatch):
    """A stage that holds 300 MB shows it in its peak; the stage after it, which holds little, does
    not inherit it (the peak is reset at each stage's start where Linux allows it)."""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with StageProgress(["small", "big", "after"], desc="release") as progress:
        with progress.stage("small"):
            pass
        with progress.stage("big"):
            block = bytearray(300 * 1024 * 1024)
            block[::4096] = b"x" * len(block[::4096])  # touch every page: resident, not just reserved
            time.sleep(1.2)  # past two of the anonymous peak's samples (every 0.5 s)
            del block
        with progress.stage("after"):
            pass
    peaks = progress.peak_mb
    if Path("/proc/self/status").exists():  # the anonymous peak: the block is anonymous memory
        anon = progress.peak_anon_mb
        assert list(anon) == ["small", "big", "after"]
        assert anon["big"] >= anon["small"] + 250 and anon["after"] < anon["big"] - 250
    assert list(peaks) == ["small", "big", "after"]
    assert peaks["big"] >= peaks["small"] + 250
    if Path("/proc/self/clear_refs").exists():
        assert peaks["after"] < peaks["big"] - 250
