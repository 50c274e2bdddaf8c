"""The HTTP-free premise-selection API agents call (`premises`)."""

from __future__ import annotations

from pathlib import Path

from mathindex.premises.ranker import PremiseRanker, PremiseResult

_OPEN: dict[Path, PremiseRanker] = {}  # release directory -> its ranker, opened once per process


def premises(release, goal: str, k: int = 32, context: str = "", file: str | None = None,
             line: int | None = None) -> PremiseResult:
    """The k declarations a proof of the Lean `goal` (under the hypotheses `context`) is most likely
    to name, as a `PremiseResult` (premises with score and signals, the goal's resolved constants,
    the fallback channel when the goal names no known constant). `release`: a release directory
    (opened once per process) or a `PremiseRanker`. A goal that does not parse raises `GoalError`
    (one line, with the position). `file` (a file of the release or its module name) and `line`:
    where the goal is; only what that file imports and declares above the line are then
    candidates (`PremiseRanker.scope`)."""
    if isinstance(release, PremiseRanker):
        ranker = release
    else:
        key = Path(release).resolve()
        if key not in _OPEN:
            _OPEN[key] = PremiseRanker(key)
        ranker = _OPEN[key]
    return ranker.rank(goal, context, k, file=file, line=line)
