"""How much an answer deserves trust: `match` is `strong`, `weak` or `none`, decided from evidence the
channels produce anyway (`Evidence`). This module owns the thresholds; bench/match_calibration.py
measures them (docs/results/match.md)."""

from __future__ import annotations

from dataclasses import dataclass

STRONG, WEAK, NONE = "strong", "weak", "none"
MATCH_VALUES = (STRONG, WEAK, NONE)
MEANING = {STRONG: "an exact identifier, or channels agreeing on the first hit",
           WEAK: "hits, but no channel is convincing",
           NONE: "nothing in the release matches; these are only the nearest hits"}
# The channels whose lists are independent evidence about the fused first hit (the informal channel
# re-ranks the fused head and the parent channel lifts what the others found: they would agree by
# construction).
EVIDENCE_CHANNELS = ("lexical", "embedding", "formula", "formal")
AGREE_DEPTH = 5  # a channel agrees with the first hit when it ranks it this high or higher

# The thresholds, measured by bench/match_calibration.py on the bundled sample (67 queries), MathlibQR
# dev over whole Mathlib (476) and 200 generated nonsense queries each (docs/results/match.md): a
# query's tokens are nearly all known to the index when it is real (coverage >= 0.8 on whole Mathlib,
# >= 0.6 on the sample), its best cosine at least 0.41 on both; nonsense has cosines of 0.15-0.50 and
# most of its tokens unknown. Round values, not the in-sample optimum.
NONE_COSINE = 0.35  # a best cosine below this: none
NONE_COVERAGE = 0.5  # fewer of the query's tokens known to the lexical index than this: none
DOUBT_COVERAGE, DOUBT_COSINE = 0.75, 0.5  # both below: none (a partly known query embedded near nothing)
STRONG_COSINE = 0.5  # two agreeing evidence channels and this cosine: strong
ALONE_COSINE, ALONE_LEAD = 0.6, 0.15  # one agreeing channel, this cosine and this lead of the first hit: strong


@dataclass(frozen=True)
class Evidence:
    """What one query's channels said, as the engine saw it: whether the identifier resolver matched,
    how many evidence channels answered and how many agree on the first hit, the embedding channel's
    best cosine and its lead over the channel's fifth, the lexical index's coverage of the query's
    tokens (None: that channel did not run), and the first fused hit's lead over the second (1 - the
    second's score / the first's)."""

    kind: str
    resolved: bool
    answered: int
    agree: int
    cosine: float | None
    coverage: float | None
    cosine_lead: float | None = None
    lead: float | None = None


def evidence(kind: str, results: dict[str, list[tuple[str, float]]], resolved: list[str],
             hits: list[tuple[dict[str, int], float]], coverage: float | None) -> Evidence:
    """The Evidence of a query of `kind` from the channels' lists, the resolver's names, the first two
    fused hits' channel ranks and scores (`Hit.channels`, `Hit.score`) and the lexical coverage."""
    answered = sum(1 for c in EVIDENCE_CHANNELS if results.get(c))
    top = hits[0][0] if hits else {}
    agree = sum(1 for c in EVIDENCE_CHANNELS if top.get(c, AGREE_DEPTH + 1) <= AGREE_DEPTH)
    vector = results.get("embedding")
    lead = 1.0 - hits[1][1] / hits[0][1] if len(hits) > 1 and hits[0][1] > 0 else None
    return Evidence(kind=kind, resolved=bool(resolved), answered=answered, agree=agree,
                    cosine=float(vector[0][1]) if vector else None, coverage=coverage,
                    cosine_lead=float(vector[0][1] - vector[min(4, len(vector) - 1)][1]) if vector else None,
                    lead=lead)


def match_of(e: Evidence, notice: str | None = None) -> str:
    """strong, weak or none (the thresholds above): none for an identifier the release lacks
    (`notice`), for nothing answered and for a query the index neither knows the words of nor embeds
    near anything; strong for a resolved identifier or channels agreeing on the first hit near the
    query; else weak. A release without an embedding channel (no cosine) is judged on the rest."""
    if notice is not None:
        return NONE
    if e.resolved:
        return STRONG
    if not e.answered or _unmatched(e):
        return NONE
    near = e.cosine is None or e.cosine >= STRONG_COSINE
    if e.agree >= 2 and near:
        return STRONG
    if e.agree >= 1 and e.cosine is not None and e.cosine >= ALONE_COSINE and (e.lead or 0.0) >= ALONE_LEAD:
        return STRONG
    return WEAK


def _unmatched(e: Evidence) -> bool:
    """Nothing in the release matches: a prose query without a word token, most of its tokens unknown,
    or its best cosine low (or middling with some tokens unknown)."""
    if e.coverage is None:
        return e.kind == "words"
    if e.coverage < NONE_COVERAGE:
        return True
    if e.cosine is None:
        return False
    return e.cosine < NONE_COSINE or (e.coverage < DOUBT_COVERAGE and e.cosine < DOUBT_COSINE)
