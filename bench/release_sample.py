"""Release of the bundled sample, end to end through the CLI, against the fixed cost beside it.

Target (issue 2): `make release` at most 3 minutes once the environment exists. Runs the CLI in
fresh processes: the first with an empty root (nothing cached), then with the caches warm, and a
baseline process that only starts Prefect and runs an empty flow (the floor every release pays).

Usage: .venv/bin/python -m bench.release_sample [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
       "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "PREFECT_LOGGING_LEVEL": "WARNING"}
EMPTY_FLOW = "from prefect import flow\n@flow\ndef empty():\n    return 1\nempty()\n"


def timed(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    cold, warm, floor = [], [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            env = {**ENV, "PREFECT_HOME": str(Path(tmp) / "prefect")}
            out = Path(tmp) / "out"
            floor.append(timed([str(BIN / "python"), "-c", EMPTY_FLOW], env))
            cold.append(timed([str(BIN / "mathindex"), "release", "--out", str(out)], env))
            warm.append(timed([str(BIN / "mathindex"), "release", "--out", str(out)], env))
    med = statistics.median
    print(f"{'run':<34}{'median s':>10}{'ratio to floor':>16}")
    print(f"{'empty Prefect flow (floor)':<34}{med(floor):>10.1f}{1.0:>16.2f}")
    print(f"{'release, nothing cached':<34}{med(cold):>10.1f}{med(cold) / med(floor):>16.2f}")
    print(f"{'release, caches warm':<34}{med(warm):>10.1f}{med(warm) / med(floor):>16.2f}")
    print(f"target: <= 180 s -> {'met' if max(med(cold), med(warm)) <= 180 else 'NOT met'}")


if __name__ == "__main__":
    main()
