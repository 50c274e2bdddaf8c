"""Progress over the stages of a flow, on stderr: a tqdm bar on a terminal, else one plain line
per stage and no library's bars (a worker's log gets no carriage returns). Inside a flow run whose
logger takes INFO (a deployment's run under a worker), each line is a record of the run's logger
instead, so it also reaches the flow run's logs in the Prefect API."""

from __future__ import annotations

import logging
import os
import resource
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from prefect.context import FlowRunContext
from prefect.logging import get_run_logger
from tqdm import tqdm


def quiet_library_bars() -> None:
    """Turns off the bars model loading draws (huggingface_hub's, transformers' `Loading weights`),
    which tqdm draws even without a terminal: for this process, as a worker running a flow is."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # read when huggingface_hub is imported
    if "huggingface_hub" in sys.modules:  # told only when loaded: a flow need not load the model libraries
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:  # it copied huggingface_hub's setting when imported (lazy: as above)
        from transformers.utils.logging import disable_progress_bar

        disable_progress_bar()


def run_logger() -> logging.Logger | logging.LoggerAdapter | None:
    """The flow run's logger when a flow run is going on, else None. Through it a stage line reaches
    the run's logs in the Prefect API and, under a worker (Prefect logs INFO there), the worker's
    output; the CLI runs Prefect at WARNING, so there the plain line is written instead."""
    return get_run_logger() if FlowRunContext.get() is not None else None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class StageProgress:
    """`with progress.stage("embed"): ...` advances the bar (or writes a line) and records each
    stage's seconds. `file` defaults to sys.stderr as it is when the progress starts."""

    def __init__(self, stages: list[str], desc: str, file: TextIO | None = None):
        self.file = sys.stderr if file is None else file
        self.desc, self.total, self.done = desc, len(stages), 0
        self.bar = None
        if _is_terminal(self.file):
            self.bar = tqdm(total=self.total, desc=desc, unit="stage", file=self.file, dynamic_ncols=True, leave=True)
        else:
            quiet_library_bars()
        self.seconds: dict[str, float] = {}
        self.peak_mb: dict[str, int] = {}  # the flow process's peak RSS in each stage (`stage_peak_mb`)
        self.anon = AnonPeak()
        self.peak_anon_mb: dict[str, int] = {}  # its anonymous part's sampled peak (`AnonPeak`; Linux only)

    def stage(self, name: str):
        return _Stage(self, name)

    def finished(self, name: str, ok: bool) -> None:
        """Records the end of stage `name`: advances the bar, or writes `desc: k/n name 1.23 s`."""
        if ok:
            self.done += 1
        if self.bar is not None:
            if ok:
                self.bar.update(1)
            return
        outcome = f"{self.seconds[name]:.2f} s" if ok else f"failed after {self.seconds[name]:.2f} s"
        line = f"{self.desc}: {self.done}/{self.total} {name} {outcome}"
        logger = run_logger()
        if logger is not None and logger.isEnabledFor(logging.INFO):
            logger.log(logging.INFO if ok else logging.WARNING, line)  # the worker's log and the flow run's logs
            return
        self.file.write(line + "\n")
        self.file.flush()

    def close(self) -> None:
        self.anon.stop()
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> "StageProgress":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


class _Stage:
    def __init__(self, progress: StageProgress, name: str):
        self.progress, self.name = progress, name

    def __enter__(self):
        reset_peak()
        self.progress.anon.reset()
        self.start = time.perf_counter()
        if self.progress.bar is not None:
            self.progress.bar.set_postfix_str(self.name)
        return self

    def __exit__(self, *exc):
        self.progress.seconds[self.name] = round(time.perf_counter() - self.start, 2)
        self.progress.peak_mb[self.name] = stage_peak_mb()
        anon = self.progress.anon.take()
        if anon is not None:
            self.progress.peak_anon_mb[self.name] = anon
        self.progress.finished(self.name, exc[0] is None)
        return False


_CLEAR_REFS = Path("/proc/self/clear_refs")


def status_mb(field: str, pid: int | str = "self") -> int | None:
    """A memory field of /proc/<pid>/status (`VmHWM`, `RssAnon`, ...) in MB; None where /proc has
    no such process or field (not Linux, or the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def reset_peak() -> None:
    """Resets the process's peak RSS (Linux: `5` into /proc/self/clear_refs), so that the next
    `stage_peak_mb` is the peak since; elsewhere, or where it is refused, nothing."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        pass


def stage_peak_mb() -> int:
    """The process's peak RSS in MB since `reset_peak` (VmHWM), else since it started (ru_maxrss)."""
    peak = status_mb("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


class AnonPeak:
    """The process's largest anonymous RSS since `reset`, sampled every `interval_s` on a daemon
    thread. VmHWM (`stage_peak_mb`) counts the pages of mapped files too, such as the tables the
    release flow holds memory-mapped (tasks/spill.py), which the kernel can drop; this is the flow's
    own memory. Where /proc has no RssAnon, `take` gives None and no thread runs."""

    def __init__(self, interval_s: float = 0.5):
        self.interval_s, self.peak = interval_s, status_mb("RssAnon")
        self._stop = threading.Event()
        if self.peak is not None:
            threading.Thread(target=self._sample, name="anon-peak", daemon=True).start()

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            now = status_mb("RssAnon")
            if now is not None and now > (self.peak or 0):
                self.peak = now

    def reset(self) -> None:
        if self.peak is not None:
            self.peak = status_mb("RssAnon")

    def take(self) -> int | None:
        """The peak since `reset`, with the present value."""
        if self.peak is None:
            return None
        return max(self.peak, status_mb("RssAnon") or 0)

    def stop(self) -> None:
        self._stop.set()
