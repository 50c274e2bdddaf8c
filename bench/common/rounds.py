"""Local executors of one stage compared on the same input: each mode once a round, the order
rotated from round to round so that the machine's noise falls on each alike; medians and ratios."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any


def paired_rounds(modes: list[str], rounds: int, run: Callable[[str, int], tuple[float, float, Any]], what: str,
                  same: Callable[[Any, Any], bool] = lambda a, b: a == b) -> int:
    """Runs `run(mode, round)` -> (wall s, CPU s, result) for every mode each round, printing each
    run, then each mode's median wall and CPU and its wall ratio to the first mode; says whether
    every mode's last result is the same as the first mode's (`same`) as "`what` identical across
    modes". The exit status: 1 when one differs."""
    times: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
    results: dict[str, Any] = {}
    for r in range(rounds):
        for mode in modes[r % len(modes):] + modes[: r % len(modes)]:
            wall, cpu, results[mode] = run(mode, r)
            times[mode].append((wall, cpu))
            print(f"  round {r + 1} {mode:10s} wall {wall:7.2f} s  CPU {cpu:7.2f} s", flush=True)
    base = statistics.median(w for w, _ in times[modes[0]])
    for mode in modes:
        wall, cpu = statistics.median(w for w, _ in times[mode]), statistics.median(c for _, c in times[mode])
        print(f"{mode:10s} wall {wall:7.2f} s  CPU {cpu:7.2f} s  wall ratio to {modes[0]} {wall / base:.2f}")
    differ = [m for m in modes if not same(results[m], results[modes[0]])]
    print(f"{what} identical across modes" if not differ else f"{what} differ from {modes[0]}'s: {', '.join(differ)}")
    return 1 if differ else 0
