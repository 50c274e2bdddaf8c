"""Query-time search over a built release: identifier resolver, then lexical, embedding, formula,
(for Lean-looking queries) formal and (for prose) informal channels fused by weighted reciprocal
rank, then the reference prior (search/prior.py) and the parent channel (search/parents.py).
Each hit reports its channels and ranks."""

from __future__ import annotations

import heapq
import json
import logging
import re
from operator import itemgetter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.embed.models import reference_path, release_root
from mathindex.latex.macros import expand_query
from mathindex.search.fusion import GAP_PREFIX, ChannelRanks, Hit, NamedRows, fused_totals, gap_weights
from mathindex.search.identifier import IdentifierResolver
from mathindex.search.latexquery import unicode_math
from mathindex.search.lexical import LexicalIndex
from mathindex.names import shared_names
from mathindex.search.parents import MEMBER_KINDS, PARENT_DEPTH, parent_hits
from mathindex.search.prior import PRIOR, normalised_prior, with_prior
from mathindex.store.integrity import IntegrityError, check_release, integrity_message, read_manifest, verify_release
from mathindex.store.layout import ReleaseLayout, RootLayout

log = logging.getLogger(__name__)

# Per kind of query (what the engine sees at query time), relative to lexical = 1. Seed 14.8 set 1 per
# channel and 0.5 for embeddings; bench/fusion_weights.py over the whole-Mathlib release on MathlibQR
# dev (476 queries, two-fold cross-validation by target) moved formula-like queries to equal
# weights (nDCG@10 41.1 -> 42.2, both folds chose it) and kept 0.5 for prose (best in-sample; the
# folds disagreed, 0.25 and 2.0, so no setting is better supported).
# "prior" is the weight of the reference prior (fused score x (1 + weight x prior)), from
# bench/ranking_prior.py on the whole-Mathlib release with proof references in the graph
# (20261201T072844Z), MathlibQR dev nDCG@10 / R@10: no prior 45.1 / 59.5 (depth 100); PageRank 1.5
# 49.6 / 64.7; 2.0 50.3 / 65.6 (two-fold CV 49.8; the folds chose 3.0 and 2.0). 1.5, not 2.0,
# because the small sample corpus falls 0.7 at 1.5 but 2.1 at 2.0, past the release gate.
# "lean" queries (Lean syntax in backticks, Loogle syntax, dotted constant names; see
# `looks_like_lean`) get the formula weights plus the formal channel (mathindex/formal): FORMAL_WEIGHT,
# from bench/formal_fusion.py on the whole-Mathlib release (20261201T072844Z + formal index),
# MathlibQR dev nDCG@10: q1a_lean 56.3 without the channel; 58.2 / 59.2 / 59.5 / 60.2 / 59.1 / 58.4 at
# 0.5 / 1 / 1.5 / 2 / 3 / 4; all styles 49.65 -> 50.46 at 2.0 (two-fold CV 50.23, the folds chose 3.0
# and 2.0); the other styles never run the channel (no change).
WEIGHTS_BY_KIND = {
    "words": {"lexical": 1.0, "embedding": 0.5, "formula": 1.0, "prior": 1.5},
    "formula": {"lexical": 1.0, "embedding": 1.0, "formula": 1.0, "prior": 1.5},
}
FORMAL_WEIGHT = 2.0
# Lean-looking queries take a stronger prior, 3.0: on release 20261201T075654Z (formal channel in the
# flow) their nDCG@10 / R@10 is 59.6 / 76.8 at 1.5 and 62.8 / 80.8 at 3.0 (formal 2.0 kept: the folds
# chose 3.0 with formal 1.0 and 2.0); the sample's Lean queries stay at 100 for any weight, while its
# prose and formula queries fall past 1.5, which is why those kinds keep 1.5.
WEIGHTS_BY_KIND["lean"] = {**WEIGHTS_BY_KIND["formula"], "formal": FORMAL_WEIGHT, "prior": 3.0}
# Lean-looking queries take the formula channel at 0.25, scaled by its list's gap confidence (fusion.py
# `gap_weights`): bench/formula_fusion.py over the whole-Mathlib release 20261201T144856Z on MathlibQR
# dev, the 76 Lean-style queries that run the channel, nDCG@10: 65.70 at weight 1, 69.84 with the
# channel off, 70.32 at 0.25 x gap (in-sample best 70.34 at 0.5 x gap^2); two-fold CV 69.75 (the folds
# chose 0.25 x gap and off). Formula-like queries keep 1.0 without the gap (110 queries: CV 42.95
# against 45.49; 41.50 with the channel off).
WEIGHTS_BY_KIND["lean"].update({"formula": 0.25, GAP_PREFIX + "formula": 1.0})
# The parent channel (search/parents.py: a structure gains a share of its fields' scores in the head),
# per kind as (weight, depth, what a member that is no field counts): bench/parent_channel.py on the
# whole-Mathlib release 20261201T205319Z, MathlibQR dev nDCG@10, with the lexical text above.
# Formula-like queries take 0.5/10/0 (120 queries, this branch's lists: 48.77 off, 51.71 at the former
# cap 0.25, 52.63 at 0.5; the weight alone at depth 10: both folds chose 0.5, 54.22 / 50.81; the full
# grid's CV 51.63, its folds chose 0.5/10/0 and 0.5/50/0.1); the bundled sample costs 0.2 there
# (one formula query, nDCG@10 87.00 -> 86.80, MRR@10 88.88 -> 88.64: within the release gate).
# Word queries stay capped at 0.25 (`--cap words=0.25`): uncapped, the sample's few structures, whose
# fields rank high for every lemma about them, cost it 3.8 (87.00 -> 83.18 with all kinds uncapped).
# Lean-looking ones, which cost the sample nothing, take the CV choice. Figures:
# docs/results/latex-queries.md.
PARENT_SETTINGS = {"formula": (0.5, 10, 0.0), "lean": (0.5, 20, 0.0), "words": (0.25, 10, 0.0)}
for _kind, (_weight, _depth, _others) in PARENT_SETTINGS.items():
    WEIGHTS_BY_KIND[_kind].update({"parent": _weight, "parent_depth": _depth, "parent_others": _others})
# Prose queries (`words`) take one more list, `informal` (search/informal.py): their first
# INFORMAL_DEPTH fused candidates by the cosine of their informal renderings to the query.
# bench/informal_rerank.py on the whole-Mathlib release 20261201T205319Z (parent channel in), MathlibQR
# dev nDCG@10 all / natural / slogan: 57.44 / 52.85 / 45.04 without it; 0.25: 58.53 / 54.34 / 47.62;
# 0.75: 59.21 / 55.53 / 49.86; 1.5: 59.30 / 55.59 / 51.26 (two-fold CV 58.95, the folds chose 1.5 and
# 0.75; R@10 72.90 -> 74.58 at 0.25, 75.00 at 0.75). The weight is 0.75, the lower of the folds'
# choices. On the bundled sample it takes one natural query ("formula for adding up the first n
# natural numbers") from rank 1 to 2 and MRR@10 from 88.64 to 87.92 (`bench/suite_weights.py
# SAMPLE_RELEASE data/sample/queries.json words informal 0 0.25 0.5 0.75 1.0`), past the floor of
# the sample baseline of 20261130 (90.44); the baseline was renewed with this change
# (docs/results/prose-queries.md). An earlier release (182722Z, no parent channel) gave depth 10 and
# 20 below 30 (55.42, 56.02 against 56.36).
# Its cost: a candidate's rendering not yet in the root's embedding cache is embedded at query time
# (a new prose query on whole Mathlib: about 25 renderings; bench/informal_cost.py), then kept there
# for every later process; `mathindex warm` embeds them all beforehand. INFORMAL_DEPTH = 0 turns the
# channel off.
WEIGHTS_BY_KIND["words"]["informal"] = 0.75
INFORMAL_DEPTH = 30
# Candidates per channel before fusion: 200, so that the prior can lift a well-used declaration that
# one channel ranks far down (bench/ranking_prior.py, release 20261201T075654Z, PageRank 1.5: nDCG@10
# 49.1 / 50.5 / 50.6 at depth 50 / 100 / 200; both folds chose 200). Costs about 7 ms a query.
CANDIDATES = 200
# The formula channel skips a query's pieces that are one variable or number (`maximal p-subgroup of
# $G$`: every formula with a G scores alike) when True. Off: bench/formula_fusion.py --skip-variables 1
# (the channel re-run) gives q1b_latex 47.57 against 48.03, all styles 53.28 against 53.44.
SKIP_FORMULA_VARIABLES = False
# What the lexical channel sees of a formula-like query: its math pieces as the Unicode Mathlib prints
# (search/latexquery.py `unicode_math`: `\mathrm{Sylow}_p(G) \ne \emptyset` -> Sylow_p(G) ≠ ∅, s_1 -> s₁),
# or "raw", the text as typed. bench/latex_queries.py on the whole-Mathlib release 20261201T182722Z,
# MathlibQR dev nDCG@10: q1b_latex 48.46 -> 49.88 (without subscripts; 50.70 with them on the 120
# formula-like queries' re-fusion), both folds chose it; the embedding channel keeps the text as typed
# (unicode or english renderings lowered it: 47.64 / 48.29).
LEXICAL_TEXT = "unicode"
_FORMULA_HINT = re.compile(r"[\\^_=<>+$]|[∀∃∑∏∫→↔∈∉⊆⊂∪∩≤≥≠∣⁻¹√ℕℤℚℝℂ×•∘]")

LEXICAL_DIR, VECTOR_DIR, FORMULA_DIR = ReleaseLayout.LEXICAL, ReleaseLayout.VECTOR, ReleaseLayout.FORMULA  # store owns them
VERIFY_MODES = ("quick", "full", "none")
_DOTTED_CONSTANT = re.compile(r"\b[A-Z][A-Za-z0-9]*\.[A-Za-z_]")


def looks_like_formula(query: str) -> bool:
    return bool(_FORMULA_HINT.search(query))


_PROSE_WORD = re.compile(r"(?<![\\\w])[a-z]{3,}\b")
# prose with a symbol: no TeX, `$` or backtick, at least PROSE_WORDS distinct lowercase words and at
# most PROSE_SYMBOLS formula characters (`npow (m + n) a = npow m a * npow n a` is a formula)
PROSE_WORDS, PROSE_SYMBOLS = 3, 2


def runs_formula_channel(query: str) -> bool:
    """Formula-like and not prose with a symbol in it: the formula channel parses a query without
    `$…$`, backtick or TeX as one formula, and `DFA appending one symbol = one transition step` is
    none (bench/formula_fusion.py). Lean-looking queries always run it."""
    if not looks_like_formula(query):
        return False
    if any(c in query for c in "$`\\") or looks_like_lean(query):
        return True
    return len(set(_PROSE_WORD.findall(query))) < PROSE_WORDS or len(_FORMULA_HINT.findall(query)) > PROSE_SYMBOLS


def lexical_text(query: str) -> str:
    """The text the lexical channel searches for a formula-like query (LEXICAL_TEXT)."""
    return unicode_math(query) if LEXICAL_TEXT == "unicode" else query


def looks_like_lean(query: str) -> bool:
    """Lean in backticks, Loogle syntax (`⊢`, `?x`, `_`, "fragments", constant lists) or a dotted
    constant name, and no TeX (`$`, backslash)."""
    from mathindex.formal.search import looks_like_loogle

    if "$" in query or "\\" in query:
        return False
    return "`" in query or looks_like_loogle(query) or bool(_DOTTED_CONSTANT.search(query))


def query_kind(query: str) -> str:
    """`lean` for Lean-looking queries, `formula` when the query has TeX or math symbols, else `words`."""
    if looks_like_lean(query):
        return "lean"
    return "formula" if looks_like_formula(query) else "words"


def query_problem(query: str) -> str | None:
    """Why a query cannot be searched: empty or blank, or not valid UTF-8 (lone surrogates, which
    is how Python reads undecodable bytes of a command line); None when it can."""
    if not query.strip():
        return "query is empty"
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        return "query is not valid UTF-8"
    return None


def weights_for(kind: str, overrides: dict[str, float] | None = None) -> dict[str, float]:
    return dict(WEIGHTS_BY_KIND[kind], **(overrides or {}))


@dataclass
class SearchResult:
    query: str
    hits: list[Hit]
    resolved: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    refused: str | None = None  # why the query was not searched (`query_problem`): then no hits


class SearchEngine:
    """Opens a release directory once; `search` is then cheap and side-effect free."""

    macros = None  # the LaTeX corpora's macros queries are expanded with (`_query_macros`), if any
    informal = None  # the informal re-ranker (search/informal.py), if the release has renderings

    def __init__(self, release: Path, weights: dict[str, float] | None = None, model: str | None = None,
                 prior: str = PRIOR, verify: str = "quick", symbols: Path | None = None, queries_only: bool = False):
        """`model`: a model reference as a manifest records it (`models/<name>@<rev16>`, relative to
        the release root) or an absolute path; None: the release's own (its manifest's
        `vector_index.model`, resolved against the root the release is in now). `prior`: the
        reference signal the prior is made of (search/prior.py SIGNALS). `verify` (a release with a
        manifest): `quick` checks that every file it lists is there at its recorded size, `full`
        every sha256 too, `none` nothing (the caller did); a damaged release is an IntegrityError
        naming its files, and so is a table or channel that fails to open in a release whose files
        differ from the manifest (never a disabled channel). `symbols`: a LaTeX symbol map
        (search/symbols.py) to use instead of the release's own `latex_symbols.parquet`, if any.
        `queries_only` (a server): the embedder only encodes queries and renderings, so it runs
        without torch where the model's checked ONNX exports allow (embed/queries.py)."""
        if verify not in VERIFY_MODES:
            raise ValueError(f"verify must be one of {', '.join(VERIFY_MODES)}, not {verify!r}")
        self.release = Path(release)
        self.manifest = read_manifest(self.release) if ReleaseLayout(self.release).is_release() else None
        self._verified_full = False
        if self.manifest is not None and verify != "none":
            check_release(self.release, quick=verify == "quick")
            self._verified_full = verify == "full"
        self.weights = weights or {}  # overrides of WEIGHTS_BY_KIND, for every kind
        self.unavailable: dict[str, str] = {}
        try:
            self._open(model, prior, queries_only)
            self.symbols = _symbol_map(self.release, symbols)
        except Exception as exc:
            self._refuse_if_damaged(exc)
            raise

    def _open(self, model: str | None, prior: str, queries_only: bool = False) -> None:
        self.nodes = pq.read_table(ReleaseLayout(self.release).table("nodes"), columns=["name", "aliases", "kind", "title", "file", "line"])
        self.node_names = names = self.nodes.column("name").to_pylist()  # row-aligned with `nodes`
        # the channels' name lists and dicts share these str objects instead of each holding its own
        # copy of every name (about 25 MB a copy on whole Mathlib); needed while opening only
        shared = dict(zip(names, names))
        self.prior = self._read_prior(prior, names)
        self.resolver = IdentifierResolver(names, self.nodes.column("aliases").to_pylist())
        self.known, self.fields = parent_sets(self.nodes, names)
        self.lexical = self._try("lexical", lambda: LexicalIndex(self.release / LEXICAL_DIR, shared))
        if model is None and self.manifest is not None:
            model = self.manifest.vector_index.model  # None: the bundled default
        root = release_root(self.release)  # where the release is now: a moved or copied root finds its model
        self.vector = self._try("embedding", lambda: _VectorChannel(self.release, reference_path(model, root), RootLayout(root).cache,
                                                                        shared, queries_only))
        self.formula = self._try("formula", lambda: _FormulaChannel(self.release, names))
        self.macros = _query_macros(self.release)
        self.informal = None  # needs the embedder and informal renderings (a sample without them has none)
        if self.vector is not None:
            self.informal = self._try("informal", lambda: _informal_channel(self.release, self.vector.embedder,
                                                                             RootLayout(root).cache, shared))
        self.formal = None  # a release built before the formal channel has none: not an error
        if ReleaseLayout(self.release).table("formal_statements").exists():
            self.formal = self._try("formal", lambda: _FormalChannel(self.release, shared))

    def _refuse_if_damaged(self, exc: Exception) -> None:
        """IntegrityError (from `exc`) when opening failed in a release whose files differ from its
        manifest: a FAISS or Parquet error there is damage, named by file, not a channel to skip."""
        if isinstance(exc, IntegrityError) or self.manifest is None or self._verified_full:
            return
        problems = verify_release(self.release)
        self._verified_full = True  # one full check per engine, however many channels fail
        if problems:
            raise IntegrityError(integrity_message(self.release, problems)) from exc

    def _read_prior(self, signal: str, names: list[str] | None = None) -> dict[str, float]:
        """name -> prior; empty (no prior) for a release built before `nodes` had the signals.
        `names`: the `nodes` table's name column, as read already (the same rows, in order)."""
        path = ReleaseLayout(self.release).table("nodes")
        if signal not in pq.read_schema(path).names:
            return {}
        t = pq.read_table(path, columns=["corpus", signal] if names is not None else ["name", "corpus", signal])
        values = normalised_prior(signal, t.column(signal).to_pylist(), t.column("corpus").to_pylist())
        return dict(zip(names if names is not None else t.column("name").to_pylist(), values))

    def _try(self, channel: str, opener):
        try:
            return opener()
        except Exception as exc:  # a channel that cannot open is reported, the others still answer
            self._refuse_if_damaged(exc)
            self.unavailable[channel] = f"{type(exc).__name__}: {exc}"
            log.warning("channel %s unavailable: %s", channel, exc)
            return None

    def channel_hits(self, query: str) -> dict[str, list[tuple[str, float]]]:
        """Each open channel's candidates (name, score), best first; formula only for formula-like queries."""
        results: dict[str, list[tuple[str, float]]] = {}
        if self.macros is not None and "\\" in query:  # typed with a LaTeX corpus's macros: as its statements
            query = expand_query(self.macros, query)
        latex = looks_like_formula(query) and not looks_like_lean(query)  # Lean queries name constants already
        if self.lexical is not None:
            lexical_query = lexical_text(query) if latex else query
            words = self.symbols.words_of(query) if self.symbols is not None and latex else []  # of the commands typed
            lexical_query = " ".join([lexical_query, *words])
            results["lexical"] = self.lexical.search(lexical_query, CANDIDATES)
        vector = None
        if self.vector is not None:
            vector = self.vector.encode(query)
            results["embedding"] = self.vector.search(query, CANDIDATES, vector)
        if self.formula is not None and runs_formula_channel(query):
            results["formula"] = self.formula.search(query, CANDIDATES)
        if self.formal is not None and looks_like_lean(query):
            results["formal"] = self.formal.search(query, CANDIDATES)
        if INFORMAL_DEPTH and self.informal is not None and vector is not None and query_kind(query) == "words":
            head = self.rank(query, results, self.resolver.resolve(query), INFORMAL_DEPTH).hits
            results["informal"] = self.informal.rerank(vector[0], [h.name for h in head])
        return results

    def search(self, query: str, k: int = 10) -> SearchResult:
        """The ranked hits; none, and the reason, for a query that cannot be searched."""
        problem = query_problem(query)
        if problem is not None:
            return SearchResult(query=query, hits=[], unavailable=dict(self.unavailable), refused=problem)
        return self.rank(query, self.channel_hits(query), self.resolver.resolve(query), k)

    def rank(self, query: str, results: dict[str, list[tuple[str, float]]], resolved: list[str], k: int,
             weights: dict[str, float] | None = None) -> SearchResult:
        """Fuses channel hits (with `weights`, else the engine's), applies the reference prior and
        puts resolved identifiers first."""
        weights = weights or weights_for(query_kind(query), self.weights)
        total, ranks = fused_totals(results, gap_weights(results, weights)), ChannelRanks(results)
        prior = weights.get("prior", 0.0)
        need = max(k + len(resolved), int(weights.get("parent_depth", PARENT_DEPTH)) if weights.get("parent") else 0)
        scored = self._with_parents(self._prior_scores(total, prior, need), ranks, weights, total, prior)
        # the k best of the rest, as fuse + apply_prior order all of them (ties by name), with Hits
        # made for those only: ordering and materialising every candidate was 1-2 ms a query
        best = heapq.nsmallest(k + len(resolved), scored, key=lambda x: (-x[1], x[0]))

        def hit(name: str, score: float) -> Hit:
            return Hit(name=name, score=round(score, 8), channels=dict(sorted(ranks[name].items())))

        head = []
        if resolved:
            score_of = dict(scored) if any(n in ranks for n in resolved) else {}
            for i, n in enumerate(resolved, 1):  # a name in ranks but not in `scored` is no parent: its prior score
                score = score_of[n] if n in score_of else self._with_prior(n, total[n], prior) if n in total else None
                h = hit(n, score) if score is not None else Hit(name=n, score=0.0)
                h.channels = {"identifier": i, **h.channels}
                head.append(h)
        taken = set(resolved)
        hits = head + [hit(n, s) for n, s in best if n not in taken]
        return SearchResult(query=query, hits=hits[:k], resolved=resolved, unavailable=dict(self.unavailable))

    def _with_parents(self, scored: list[tuple[str, float]], ranks: ChannelRanks,
                      weights: dict[str, float], total: dict[str, float], prior: float) -> list[tuple[str, float]]:
        """`scored` (name, score after the prior) with the parent channel (search/parents.py)
        added, and its ranks in `ranks`, when the kind's weights give it a weight: a parent gains
        `parent` times its fields' scores there, after the prior, so a well-used structure is not
        lifted by its own prior on its fields' evidence. A parent that `scored` left out (the
        prior is applied to the head only: `_prior_scores`) has its fused score `total` with the
        prior added first, as when every name was scored."""
        weight = weights.get("parent", 0.0)
        if not weight:
            return scored
        head = heapq.nsmallest(int(weights.get("parent_depth", PARENT_DEPTH)), scored, key=lambda x: (-x[1], x[0]))
        hits = parent_hits(head, self.known, self.fields, weights.get("parent_others", 1.0))
        if not hits:
            return scored
        out = dict(scored)
        for rank, (parent, score) in enumerate(hits, start=1):
            base = out[parent] if parent in out else self._with_prior(parent, total[parent], prior) if parent in total else 0.0
            out[parent] = base + weight * score
            ranks.setdefault(parent, {})["parent"] = rank
        return list(out.items())

    def _prior_scores(self, total: dict[str, float], weight: float, need: int | None = None) -> list[tuple[str, float]]:
        """(name, score): the prior applied to the fused score rounded to 8 places, as `apply_prior`
        is applied to `fuse`'s hits; without a prior the unrounded fused scores (`fuse`'s order).
        With `need`, only the names that may be among the `need` best after the prior (at least
        those): by fused score down, until a score times the largest prior factor falls below
        the need-th best so far (the prior's dict look-ups, out of cache, were most of the
        prior's cost; 400 names a query, a few dozen of them scored)."""
        if weight == 0 or not self.prior:
            return list(total.items())
        top = self._prior_top()
        if need is None or weight < 0 or top is None or len(total) <= need:
            return with_prior([(n, round(s, 8)) for n, s in total.items()], self.prior, weight)
        bound = (1.0 + weight * top) * (1.0 + 1e-9)  # no name's score grows more than this
        prior, kept, floor = self.prior, [], []
        for n, s in sorted(total.items(), key=itemgetter(1), reverse=True):
            high = s + 1e-8  # round(s, 8) <= s + 5e-9
            if len(floor) == need and (high * bound if high > 0 else high) < floor[0]:
                break
            p = round(s, 8) * (1.0 + weight * prior.get(n, 0.0))  # as prior.with_prior
            kept.append((n, p))
            if len(floor) < need:
                heapq.heappush(floor, p)
            elif p > floor[0]:
                heapq.heapreplace(floor, p)
        return kept

    def _with_prior(self, name: str, fused: float, weight: float) -> float:
        """One name's score after the prior, as `_prior_scores` gives it."""
        if weight == 0 or not self.prior:
            return fused
        return round(fused, 8) * (1.0 + weight * self.prior.get(name, 0.0))

    def _prior_top(self) -> float | None:
        """The largest prior (None when some prior is negative: no bound), per prior dict."""
        cached = getattr(self, "_prior_max", None)
        if cached is None or cached[0] is not self.prior:
            values = self.prior.values()
            cached = (self.prior, max(values) if min(values) >= 0 else None)
            self._prior_max = cached
        return cached[1]

    def describe(self, names: list[str]) -> dict[str, dict]:
        """kind, title (signature or statement opening), file and line of the named nodes."""
        import pyarrow.compute as pc

        rows = self.nodes.filter(pc.is_in(self.nodes["name"], value_set=pa.array(names, pa.string())))
        return {r["name"]: r for r in rows.select(["name", "kind", "title", "file", "line"]).to_pylist()}

    def names(self, query: str, k: int) -> list[str]:
        return [h.name for h in self.search(query, k).hits]

    def flush(self) -> None:
        """Writes what query time computed for later processes (the informal channel's rendering
        vectors) into the release root's cache."""
        if self.informal is not None:
            self.informal.flush()


def parent_sets(nodes, names: list[str] | None = None) -> tuple[frozenset, frozenset]:
    """The parent channel's node names and, among them, the fields and constructors (MEMBER_KINDS),
    from a `nodes` table with `name` and `kind` (`names`: its name column, as read already)."""
    names = nodes.column("name").to_pylist() if names is None else names
    kinds = nodes.column("kind").to_pylist()
    return frozenset(names), frozenset(n for n, k in zip(names, kinds) if k in MEMBER_KINDS)


def _informal_channel(release: Path, embedder, cache_dir: Path, shared: dict[str, str] | None = None):
    """The informal re-ranker over the release's informal renderings, its vectors kept in the root's
    embedding cache for the release's embedder (a rendering is embedded once per model); None
    without renderings. `shared`: the engine's name objects (name -> itself) to key it with."""
    from mathindex.embed.embedder import EmbeddingCache
    from mathindex.search.informal import InformalReranker

    store = EmbeddingCache(cache_dir, embedder.name, embedder.revision, embedder.dim)
    reranker = InformalReranker(ReleaseLayout(release).table("embedding_texts"),
                                lambda texts: _encode_on_one_thread(embedder, texts), store=store, shared=shared)
    return reranker if len(reranker) else None


def _query_macros(release: Path):
    """The LaTeX corpora's macros (latex/macros.py `query_macros`) from the release's `latex_macros`
    table; None for a release without one or without macros."""
    path = ReleaseLayout(release).table("latex_macros")
    if not path.exists():
        return None
    from mathindex.latex.macros import query_macros

    return query_macros(pq.read_table(path).to_pylist())


def _symbol_map(release: Path, path: Path | None):
    """The LaTeX symbol map the lexical channel expands formula queries with: `path`, else the
    release's own file, else None (no expansion)."""
    from mathindex.search.symbols import SYMBOLS_FILE, SymbolMap

    path = path if path is not None else release / SYMBOLS_FILE
    return SymbolMap.read(path) if path.exists() else None


class _VectorChannel:
    """Embeds the query with the release's embedder and searches the int8 HNSW index. The query is
    encoded by the backend releases embed with (ONNX Runtime when the model's checked export is in
    the root's cache or can be made there; the same vectors as torch), else by torch, at the
    precision `embed.embedder.query_encoding` gives for the index (a bf16 index's queries at fp32)."""

    def __init__(self, release: Path, model: Path | None, cache_dir: Path, shared: dict[str, str] | None = None,
                 queries_only: bool = False):
        """`shared`: the engine's name objects (name -> itself), so that the rows' names are those.
        `queries_only`: the fp32 ONNX embedder from its exports alone (embed/queries.py), when they
        are all in the cache, rather than the full one with torch."""
        from mathindex.embed import VectorIndex
        from mathindex.embed.embedder import query_encoding
        from mathindex.embed.vector_index import SIDECAR_FILE

        try:  # the index's embedder name says how its vectors were made, and so how queries are encoded
            built = json.loads((ReleaseLayout(release).vector / SIDECAR_FILE).read_text())["embedder"]["name"]
        except (OSError, ValueError, KeyError, TypeError):
            built = ""  # VectorIndex.open below says what is wrong
        self.embedder = _query_embedder(model, cache_dir, *query_encoding(built), queries_only)
        self.index = VectorIndex.open(release / VECTOR_DIR, self.embedder)
        texts = pq.read_table(ReleaseLayout(release).table("embedding_texts"), columns=["text_id", "name"])
        self.rows = NamedRows(texts.column("text_id").to_numpy(), shared_names(texts.column("name").to_pylist(), shared))

    def encode(self, query: str):
        return _encode_one(self.embedder, query)

    def search(self, query: str, k: int, vec=None) -> list[tuple[str, float]]:
        """Nodes by their best facet's cosine to the query (`vec`: its vector, if encoded already)."""
        vec = self.encode(query) if vec is None else vec
        ids, scores = self.index.search(vec, k * 3)
        return self.rows.best(ids[0], scores[0], k)


def _query_embedder(model: Path | None, cache_dir: Path, precision: str, backend: str, queries_only: bool):
    """The embedder queries are encoded with (`precision` and `backend` from `query_encoding`): with
    `queries_only`, the fp32 ONNX one from its exports alone when they are all in the root's cache
    (embed/queries.py: no torch); else the full SentenceTransformerEmbedder, or, when a read-only
    root cannot hold a new fp32 export, the same model on torch (the same vectors)."""
    from mathindex.embed import SentenceTransformerEmbedder, default_model_path
    from mathindex.embed.embedder import onnx_dir_for

    int8 = precision == "int8"
    if queries_only and backend == "onnx" and not int8:
        from mathindex.embed.queries import OnnxQueryEmbedder

        light = OnnxQueryEmbedder.open(default_model_path() if model is None else Path(model), onnx_dir_for(cache_dir))
        if light is not None:
            return light
    spec = None if model is None else str(model)
    try:
        return SentenceTransformerEmbedder(spec, progress=False, backend=backend, onnx_dir=onnx_dir_for(cache_dir), int8=int8)
    except OSError as exc:
        if int8 and backend == "onnx":
            raise
        log.warning("embedding channel: no ONNX export (%s); queries are encoded with torch", exc)
        return SentenceTransformerEmbedder(spec, progress=False, int8=int8)


def _encode_one(embedder, text: str):
    """One query on one thread: intra-op threads only add sync cost for a single short text
    (measured 15 ms against 87-130 ms with 2 threads on a loaded 2-core machine)."""
    return _encode_on_one_thread(embedder, [text])


def _encode_on_one_thread(embedder, texts: list[str]):
    """`embedder.encode(texts)` with torch (and so the embedder's ONNX session) on one thread: the
    query encodes that way, and a session made for another thread count is made anew (about a
    second for the whole model), so every query-time encode keeps to one thread. An embedder
    without torch (embed/queries.py) runs on one thread already."""
    if not getattr(embedder, "uses_torch", True):
        return embedder.encode(texts)
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return embedder.encode(texts)
    finally:
        torch.set_num_threads(threads)


class _FormulaChannel:
    """Structural formula search; formula ids map to their owning node's name. Each group's
    members are kept as positions into the sorted names (CSR: `member_ptr`, `member_name`, -1 for a
    formula of no node), so a query's groups become its names in numpy (`fusion.best_by_position`)
    rather than by a dict look-up per formula id (0.5-1 ms a formula query on whole Mathlib)."""

    def __init__(self, release: Path, names: list[str] | None = None):
        """`names`: the `nodes` table's name column, as the engine read it (the same rows, in order)."""
        import numpy as np

        from mathindex.formula import FormulaIndex

        self.index = FormulaIndex.open(release / FORMULA_DIR)
        formulas = pq.read_table(ReleaseLayout(release).table("formulas"), columns=["formula_id", "node_id"])
        nodes = pq.read_table(ReleaseLayout(release).table("nodes"), columns=["node_id"] if names is not None else ["node_id", "name"])
        name_of_node = dict(zip(nodes.column("node_id").to_pylist(), names if names is not None else nodes.column("name").to_pylist()))
        name_of = {
            f: name_of_node[n]
            for f, n in zip(formulas.column("formula_id").to_pylist(), formulas.column("node_id").to_pylist())
            if n in name_of_node
        }
        self.names = sorted(set(name_of.values()))
        position = {n: i for i, n in enumerate(self.names)}
        members = self.index.members
        self.member_ptr = np.zeros(len(members) + 1, dtype=np.int64)
        self.member_ptr[1:] = np.cumsum([len(m) for m in members])
        self.member_name = np.fromiter((position[name_of[f]] if f in name_of else -1 for m in members for f in m),
                                       dtype=np.int64, count=int(self.member_ptr[-1]))

    skip_variables = SKIP_FORMULA_VARIABLES

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The best k names of the first k * 3 member formulas of the best groups (the index's
        `search`, whose groups are scored on the raw query: each $…$ / backtick piece is searched
        and their scores added), each name at its best score."""
        import numpy as np

        from mathindex.formula.formula_index import _ranges
        from mathindex.search.fusion import best_by_position

        groups = self.index.search_groups(query, k * 3, skip_variables=self.skip_variables)
        if not groups:
            return []
        g = np.fromiter((x for x, _ in groups), dtype=np.int64, count=len(groups))
        score = np.fromiter((s for _, s in groups), dtype=np.float64, count=len(groups))
        start, end = self.member_ptr[g], self.member_ptr[g + 1]
        rows = _ranges(start, end)[: k * 3]
        score = np.repeat(score, end - start)[: k * 3]
        name = self.member_name[rows]
        known = name >= 0
        return best_by_position(name[known], score[known], self.names, k)


class _FormalChannel:
    """Loogle-style search over the release's formal index (mathindex/formal); soft mode, so that
    Lean in prose still ranks declarations by how much of each piece they match."""

    def __init__(self, release: Path, shared: dict[str, str] | None = None):
        from mathindex.formal.search import FormalIndex

        self.index = FormalIndex(release, shared)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        return self.index.soft(query, k)
