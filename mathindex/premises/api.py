"""The HTTP-free premise-selection API agents call (`premises`), and the query-time ranker of a
release, which borrows its search engine's formal index and embedding channel (`ranker_of`)."""

from __future__ import annotations

from pathlib import Path

from mathindex.premises.ranker import PremiseRanker, PremiseResult, check_premise_index
from mathindex.search.engine import SearchEngine

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
            _OPEN[key] = open_ranker(key)
        ranker = _OPEN[key]
    return ranker.rank(goal, context, k, file=file, line=line)


def ranker_of(engine: SearchEngine, weights: dict[str, float] | None = None) -> PremiseRanker:
    """The premise ranker of a search engine's release, reading the engine's formal index and
    embedding channel (`weights`: instead of the release's, the linear ranker alone)."""
    return PremiseRanker(engine.release, formal.index if (formal := engine.channel("formal")) is not None else None, engine.vector, weights,
                         lazy=engine.lazy)


def open_ranker(release: Path, weights: dict[str, float] | None = None) -> PremiseRanker:
    """The premise ranker of a release, through a search engine of it (a release without a premise
    index is a FileNotFoundError before anything is opened)."""
    check_premise_index(release)
    return ranker_of(SearchEngine(release), weights)
