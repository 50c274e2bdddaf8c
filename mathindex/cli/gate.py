"""`mathindex gate --baseline FILE --current FILE`: the gate over two metrics files, exit 3 when it
fails. A module of its own, apart from bench: it loads no search engine, so it starts in a blink."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from mathindex.cli.exits import EXIT_GATE, EXIT_OK, UsageError
from mathindex.evaluation.gate import gate


def run(args: argparse.Namespace) -> int:
    """Exit 3 when the gate fails, also on values that are not numbers in 0..100 or an empty
    baseline; exit 2 when a file is not a JSON object of metrics or --tolerance is not usable."""
    if not (math.isfinite(args.tolerance) and args.tolerance >= 0):
        raise UsageError(f"mathindex gate: --tolerance must be a finite number of points >= 0, not {args.tolerance}")
    report = gate(_headline_of(args.current), _headline_of(args.baseline), tolerance=args.tolerance)
    for problem in report.problems:
        print(f"FAIL {problem}")
    for c in report.checks:
        if not c.ok:
            print(f"FAIL {c.reason()}")
        elif c.delta is not None:
            print(f"ok   {c.metric}: {c.baseline:.2f} -> {c.current:.2f} ({c.delta:+.2f})")
        else:
            print(f"ok   {c.metric}: {c.current:.2f} ({c.note})")
    print(f"gate: {'passed' if report.passed else 'FAILED'}")
    return EXIT_OK if report.passed else EXIT_GATE


def _headline_of(path: Path) -> dict:
    """The headline metrics of a metrics.json (or the object itself when it has no 'headline')."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UsageError(f"mathindex gate: {path}: not JSON ({exc})") from None
    head = raw.get("headline", raw) if isinstance(raw, dict) else None
    if not isinstance(head, dict):
        raise UsageError(f"mathindex gate: {path}: expected an object of metrics or a 'headline' object")
    return head
