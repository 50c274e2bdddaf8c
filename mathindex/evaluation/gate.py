"""The release gate: a pure function from (current, baseline, tolerance) to a verdict. It fails
closed: an empty baseline, and any headline value that is not a finite number of points in 0..100,
fail it with a one-line reason, as does a release with no benchmark suite (`gate_metrics`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

TOLERANCE_POINTS = 2.0
NO_SUITE = "no benchmark suite: nothing to gate; use --no-gate to publish ungated"
EMPTY_BASELINE = "the baseline has no headline metrics: nothing to compare against"
NOT_GATED = "not gated (--no-gate)"
MISSING = "metric missing or failed to compute"


@dataclass(frozen=True)
class MetricCheck:
    metric: str
    baseline: float | None
    current: float | None
    delta: float | None
    ok: bool
    note: str = ""

    def reason(self) -> str:
        """One line: `sample/ndcg@10 fell 14.85 points (88.30 -> 73.45)`, or `metric: note`."""
        if self.delta is not None and self.baseline is not None and self.current is not None:
            return f"{self.metric} fell {-self.delta:.2f} points ({self.baseline:.2f} -> {self.current:.2f})"
        return f"{self.metric}: {self.note}"


@dataclass(frozen=True)
class GateReport:
    """`problems` are failures of the whole comparison (no suite, an empty baseline); `gated`
    False is a release published with `--no-gate`: `passed` is then True whatever the checks say."""

    passed: bool
    tolerance: float
    checks: list[MetricCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    gated: bool = True

    def failures(self) -> list[MetricCheck]:
        return [c for c in self.checks if not c.ok]

    def verdict(self) -> str:
        """`gate passed` or `gate failed: ` and each reason: the problems, then each failing
        check, e.g. `sample/ndcg@10 fell 14.85 points (88.30 -> 73.45)`; for an ungated report,
        what the gate would have said."""
        reasons = self.problems + [c.reason() for c in self.failures()]
        return "gate failed: " + "; ".join(reasons) if reasons else "gate passed"

    def summary(self) -> str:
        """One line: `verdict()`, or `not gated (--no-gate)` (the failed flow run's message)."""
        return self.verdict() if self.gated else NOT_GATED

    def to_dict(self) -> dict:
        return {
            "passed": self.passed,
            "gated": self.gated,
            "summary": self.summary(),
            "tolerance": self.tolerance,
            "problems": list(self.problems),
            "checks": [c.__dict__ for c in self.checks],
        }


def _points(value) -> float | None:
    """`value` as a float when it is a finite number of points in 0..100 (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and 0.0 <= value <= 100.0 else None


def _invalid(which: str, value) -> str:
    return f"{which} value {value!r} is not a finite number in 0..100"


def _check(metric: str, base, cur, tolerance: float) -> MetricCheck:
    """One headline metric: a baseline that is not a number in 0..100 fails; a current value that
    is missing, None or NaN failed to compute; any other bad current value fails; else the drop."""
    b, c = _points(base), _points(cur)
    if b is None:
        return MetricCheck(metric, None, c, None, False, _invalid("baseline", base))
    if cur is None or (isinstance(cur, float) and math.isnan(cur)):
        return MetricCheck(metric, b, None, None, False, MISSING)
    if c is None:
        return MetricCheck(metric, b, None, None, False, _invalid("current", cur))
    delta = round(c - b, 9)
    ok = -delta <= tolerance
    return MetricCheck(metric, b, c, delta, ok, "" if ok else f"fell {-delta:.2f} points")


def gate(
    current: dict[str, object],
    baseline: dict[str, object],
    tolerance: float = TOLERANCE_POINTS,
    errors: dict[str, str] | None = None,
) -> GateReport:
    """Fails when the baseline is empty, when any baseline headline metric fell by more than
    `tolerance` points or is missing or not a number in `current` (a metric that failed to compute
    is an error, not a 0), and when any value of either side is not a finite number in 0..100.
    Drops are compared after rounding to 1e-9 so that 2.0 exactly passes despite float noise.
    `errors` (suite -> reason) are suites that failed to run: each fails the gate."""
    problems = [] if baseline else [EMPTY_BASELINE]
    checks = [MetricCheck(f"{s}/*", None, None, None, False, f"suite failed: {r}") for s, r in sorted((errors or {}).items())]
    checks += [_check(metric, baseline[metric], current.get(metric), tolerance) for metric in sorted(baseline)]
    for metric in sorted(set(current) - set(baseline)):
        cur = _points(current[metric])
        ok = cur is not None
        checks.append(MetricCheck(metric, None, cur, None, ok, "new metric (no baseline)" if ok else _invalid("current", current[metric])))
    passed = not problems and all(c.ok for c in checks)
    return GateReport(passed=passed, tolerance=tolerance, checks=checks, problems=problems)


def gate_metrics(metrics: dict, baseline: dict[str, object], no_gate: bool = False,
                 tolerance: float = TOLERANCE_POINTS) -> GateReport:
    """The flows' verdict on a release's `bench/metrics.json` (suites and headline): no suite at all
    fails (`NO_SUITE`), as does no baseline for the suites it ran; a suite that failed to run fails. `no_gate` (`--no-gate`) publishes
    whatever the verdict, which the report keeps for the notes (`gated` False)."""
    if not metrics["suites"]:
        report = GateReport(passed=False, tolerance=tolerance, problems=[NO_SUITE])
    else:
        errors = {name: s["error"] for name, s in metrics["suites"].items() if "error" in s}
        report = gate(metrics["headline"], baseline, tolerance, errors)
        if not baseline:  # e.g. a first release of new suites: say which, and the way out
            report = replace(report, problems=[f"no baseline for suite {', '.join(sorted(metrics['suites']))}: "
                                               "nothing to compare against; use --no-gate to publish ungated"])
    return replace(report, passed=True, gated=False) if no_gate else report
