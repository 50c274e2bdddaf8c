"""Query-time search over a release; `premises` is the HTTP-free API agents call for premise
selection (mathindex.premises)."""

from __future__ import annotations

from pathlib import Path

_OPEN: dict[Path, object] = {}  # release directory -> PremiseRanker, opened once per process


def premises(release, goal: str, k: int = 32, context: str = "", file: str | None = None, line: int | None = None):
    """The k declarations a proof of the Lean `goal` (under the hypotheses `context`) is most likely
    to name, as a `PremiseResult` (premises with score and signals, the goal's resolved constants,
    the fallback channel when the goal names no known constant). `release`: a release directory
    (opened once per process), an opened `SearchEngine` or a `PremiseRanker`. A goal that does not
    parse raises `GoalError` (one line, with the position). `file` (a file of the release or its
    module name) and `line`: where the goal is; only what that file imports and declares above the
    line are then candidates (`PremiseRanker.scope`)."""
    from mathindex.premises import PremiseRanker
    from mathindex.search.engine import SearchEngine

    if isinstance(release, PremiseRanker):
        ranker = release
    elif isinstance(release, SearchEngine):
        ranker = PremiseRanker(release.release, engine=release)
    else:
        key = Path(release).resolve()
        if key not in _OPEN:
            _OPEN[key] = PremiseRanker(key)
        ranker = _OPEN[key]
    return ranker.rank(goal, context, k, file=file, line=line)
