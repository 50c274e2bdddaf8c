"""The machine a benchmark ran on, named beside every timing (machines here differ: some CPUs have
AVX-512 and AMX, some only AVX2)."""

from __future__ import annotations

import os
import resource
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name, its widest vector unit and the core count (/proc/cpuinfo)."""
    info: dict[str, str] = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    flags = set(info.get("flags", "").split())
    simd = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{info.get('model name', 'unknown CPU')}, {simd}{' + AMX' if 'amx_tile' in flags else ''}, {os.cpu_count()} cores"


def cpu_seconds() -> float:
    """User and system CPU seconds of this process (every thread) and its waited-for children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
