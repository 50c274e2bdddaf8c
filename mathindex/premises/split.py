"""The premise benchmark's split: every Lean file falls in one part, by a seeded hash of its path.

`test` (about 3 % of the files) is held out: its theorems are the benchmark's goals, and nothing
from its proofs may feed the premise priors or the weights. `tune` (another 3 %) is where the
ranker's weights are fitted; its proofs feed the weights only. `train` is the rest: its proofs are
the priors (usage counts, the proofs of similar statements). A pure function of (path, seed), so
the release flow, the benchmark script and the tests agree; a file keeps its part when others are
added or removed."""

from __future__ import annotations

import hashlib

TEST, TUNE, TRAIN = "test", "tune", "train"
SEED = 12  # issue 12
HELD_OUT = 0.03
TUNE_SHARE = 0.03


def file_position(file: str, seed: int = SEED) -> float:
    """Where a file path falls in [0, 1): sha256 of the seed and the path (never Python's hash())."""
    digest = hashlib.sha256(f"{seed}:{file}".encode()).hexdigest()
    return int(digest[:15], 16) / 16**15


def file_part(file: str, seed: int = SEED) -> str:
    """`test` below HELD_OUT, `tune` below HELD_OUT + TUNE_SHARE, else `train`."""
    u = file_position(file, seed)
    return TEST if u < HELD_OUT else TUNE if u < HELD_OUT + TUNE_SHARE else TRAIN


def split_files(files: list[str], seed: int = SEED) -> dict[str, str]:
    """file -> part for every distinct file. A corpus too small for the shares to reach a file (the
    bundled sample has six) still gets one `test` and one `tune` file when it has three or more:
    the files nearest the cut, by position."""
    distinct = sorted(set(files))
    parts = {f: file_part(f, seed) for f in distinct}
    if len(distinct) >= 3:
        order = sorted(distinct, key=lambda f: (file_position(f, seed), f))
        if TEST not in parts.values():
            parts[order[0]] = TEST
        if TUNE not in parts.values():
            parts[next(f for f in order if parts[f] != TEST)] = TUNE
    return parts
