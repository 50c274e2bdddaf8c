"""The release gate: a pure function from (current, baseline, tolerance) to a verdict."""

from __future__ import annotations

from dataclasses import dataclass, field

TOLERANCE_POINTS = 2.0


@dataclass(frozen=True)
class MetricCheck:
    metric: str
    baseline: float | None
    current: float | None
    delta: float | None
    ok: bool
    note: str = ""


@dataclass(frozen=True)
class GateReport:
    passed: bool
    tolerance: float
    checks: list[MetricCheck] = field(default_factory=list)

    def failures(self) -> list[MetricCheck]:
        return [c for c in self.checks if not c.ok]

    def summary(self) -> str:
        """One line: `gate passed`, or `gate failed: ` and each failing check, e.g.
        `sample/ndcg@10 fell 14.85 points (88.30 -> 73.45)` (the failed flow run's message)."""
        if self.passed:
            return "gate passed"
        return "gate failed: " + "; ".join(_failure_line(c) for c in self.failures())

    def to_dict(self) -> dict:
        return {
            "passed": self.passed,
            "tolerance": self.tolerance,
            "checks": [c.__dict__ for c in self.checks],
        }


def _failure_line(c: MetricCheck) -> str:
    if c.delta is not None and c.baseline is not None and c.current is not None:
        return f"{c.metric} fell {-c.delta:.2f} points ({c.baseline:.2f} -> {c.current:.2f})"
    return f"{c.metric}: {c.note}"


def gate(
    current: dict[str, float | None],
    baseline: dict[str, float],
    tolerance: float = TOLERANCE_POINTS,
    errors: dict[str, str] | None = None,
) -> GateReport:
    """Fails when any baseline headline metric fell by more than `tolerance` points, or is
    missing or not a number in `current` (a metric that failed to compute is an error, not a 0).
    Drops are compared after rounding to 1e-9 so that 2.0 exactly passes despite float noise.
    `errors` (suite -> reason) are suites that failed to run: each fails the gate."""
    checks = [MetricCheck(f"{s}/*", None, None, None, False, f"suite failed: {r}") for s, r in sorted((errors or {}).items())]
    for metric in sorted(baseline):
        base = baseline[metric]
        cur = current.get(metric)
        if not isinstance(cur, (int, float)) or cur != cur:  # missing, None or NaN
            checks.append(MetricCheck(metric, base, None, None, False, "metric missing or failed to compute"))
            continue
        delta = round(float(cur) - float(base), 9)
        ok = -delta <= tolerance
        checks.append(MetricCheck(metric, base, float(cur), delta, ok, "" if ok else f"fell {-delta:.2f} points"))
    for metric in sorted(set(current) - set(baseline)):
        cur = current[metric]
        checks.append(MetricCheck(metric, None, cur, None, True, "new metric (no baseline)"))
    return GateReport(passed=all(c.ok for c in checks), tolerance=tolerance, checks=checks)
