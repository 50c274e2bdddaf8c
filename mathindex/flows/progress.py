"""A progress bar over the stages of a flow, on stderr (one line per stage when not a TTY)."""

from __future__ import annotations

import sys
import time

from tqdm import tqdm


class StageProgress:
    """`with progress.stage("embed"): ...` advances the bar and records each stage's seconds."""

    def __init__(self, stages: list[str], desc: str):
        self.bar = tqdm(total=len(stages), desc=desc, unit="stage", file=sys.stderr, dynamic_ncols=True, leave=True)
        self.seconds: dict[str, float] = {}

    def stage(self, name: str):
        return _Stage(self, name)

    def close(self) -> None:
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
        self.start = time.perf_counter()
        self.progress.bar.set_postfix_str(self.name)
        return self

    def __exit__(self, *exc):
        self.progress.seconds[self.name] = round(time.perf_counter() - self.start, 2)
        if exc[0] is None:
            self.progress.bar.update(1)
        return False
