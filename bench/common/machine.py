"""The machine a benchmark ran on, named beside every timing (machines here differ: some CPUs have
AVX-512 and AMX, some only AVX2)."""

from __future__ import annotations

import os
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
