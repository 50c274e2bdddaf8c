"""Query-time search over a built release: the identifier resolver, then the channels of the
registry (`CHANNELS`: lexical, embedding, formula, formal for Lean-looking queries, informal for
prose) fused by weighted reciprocal rank (search/fusion.py, with search/weights.py's weights per
kind of query, search/kinds.py), then the reference prior (search/prior.py) and the parent channel
(search/parents.py). Nodes that state one fact (search/sameas.py) and answer together are one hit.
Each hit reports its channels and ranks."""

from __future__ import annotations

import heapq
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.embed.channel import VectorChannel
from mathindex.embed.models import release_root
from mathindex.formal.channel import FormalChannel
from mathindex.formula.channel import FormulaChannel
from mathindex.latex.macros import expand_query
from mathindex.search import weights as settings
from mathindex.channel import Channel, ChannelContext, Query
from mathindex.search.confidence import NONE, Evidence, evidence, match_of
from mathindex.search.fusion import ChannelRanks, Hit, fused_totals, gap_weights
from mathindex.search.identifier import IdentifierResolver, unknown_identifier
from mathindex.search.informal import InformalReranker
from mathindex.limits import query_problem
from mathindex.search.kinds import looks_like_formula, looks_like_lean, query_kind, runs_formula_channel
from mathindex.search.latexquery import release_macros
from mathindex.search.lexical import LexicalChannel
from mathindex.search.parents import PARENT_DEPTH, parent_sets, with_parents
from mathindex.search.prior import PRIOR, prior_score, prior_scores, prior_top, read_prior
from mathindex.search.sameas import SameAsGroups, fold, read_groups
from mathindex.store.integrity import IntegrityError, check_release, integrity_message, read_manifest, verify_release
from mathindex.store.layout import ReleaseLayout

log = logging.getLogger(__name__)

# The query channels in the order they run, each as (the engine attribute that holds it, its class):
# a channel reads what the ones before it left in the query (the informal channel re-ranks what they
# fuse to, with the embedding channel's vector). A new channel is its module and one line here.
CHANNELS: tuple[tuple[str, type[Channel]], ...] = (
    ("lexical", LexicalChannel),
    ("vector", VectorChannel),
    ("formula", FormulaChannel),
    ("formal", FormalChannel),
    ("informal", InformalReranker),
)
VERIFY_MODES = ("quick", "full", "none")


@dataclass
class SearchResult:
    query: str
    hits: list[Hit]
    resolved: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    refused: str | None = None  # why the query was not searched (`query_problem`): then no hits
    match: str = NONE  # strong, weak or none (search/confidence.py), from `evidence`
    notice: str | None = None  # "no Stacks tag 0BCD in this release": an identifier the release lacks
    evidence: Evidence | None = None


class SearchEngine:
    """Opens a release directory once; `search` is then cheap and side-effect free."""

    macros = None  # the LaTeX corpora's macros queries are expanded with (`latexquery.release_macros`), if any
    lexical = vector = formula = formal = informal = None  # the channels (CHANNELS); None: not open
    _deferred: dict[str, type[Channel]] = {}  # a lazy engine's channels not opened yet, by attribute
    same_as = SameAsGroups()  # the release's same_as groups (none: nothing folds)

    def __init__(self, release: Path, weights: dict[str, float] | None = None, model: str | None = None,
                 prior: str = PRIOR, verify: str = "quick", symbols: Path | None = None, queries_only: bool = False,
                 channels: Mapping[str, Channel] | None = None, preload: bool = True, lazy: bool = False,
                 folding: bool = True):
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
        without torch where the model's checked ONNX exports allow (embed/queries.py). `channels`:
        channels open already, by name (the release flow's embedding channel), taken as they are.
        `preload`: start the channels' helper processes as they open (ChannelContext.preload).
        `lazy` (a one-query CLI): each channel opens when first asked (`channel`, or a query it runs
        on: `Channel.runs`), so a prose query never opens the formula or formal index; the answers
        are the same, and `unavailable` lists a channel that fails to open once it has been asked.
        `folding`: fold the members of a same_as group that answer together into one hit (False: each
        is a hit of its own, as before the table; benchmarks compare the two)."""
        if verify not in VERIFY_MODES:
            raise ValueError(f"verify must be one of {', '.join(VERIFY_MODES)}, not {verify!r}")
        self.release = Path(release)
        self.manifest = read_manifest(self.release) if ReleaseLayout(self.release).is_release() else None
        self._verified_full = False
        if self.manifest is not None and verify != "none":
            check_release(self.release, quick=verify == "quick")
            self._verified_full = verify == "full"
        self.weights = weights or {}  # overrides of weights.WEIGHTS_BY_KIND, for every kind
        self.unavailable: dict[str, str] = {}
        self.lazy = lazy  # a one-query engine: what opens from it makes only what a query or two reads
        try:
            self._open(model, prior, queries_only, symbols, channels or {}, preload, lazy)
            self.same_as = read_groups(self.release) if folding else SameAsGroups()
        except Exception as exc:
            self._refuse_if_damaged(exc)
            raise

    def _open(self, model: str | None, prior: str, queries_only: bool, symbols: Path | None,
              given: Mapping[str, Channel], preload: bool = True, lazy: bool = False) -> None:
        """The nodes, the prior, the resolver and the parent sets, then each channel of CHANNELS
        (with `lazy`, those not `given` are left to `channel`)."""
        nodes = ReleaseLayout(self.release).table("nodes")
        self.nodes = pq.read_table(nodes, columns=["name", "node_id", "aliases", "kind", "title", "file", "line"])
        self.node_names = names = self.nodes.column("name").to_pylist()  # row-aligned with `nodes`
        self.prior = read_prior(nodes, prior, names, self.row_of if lazy else None)
        self.resolver = IdentifierResolver(names, self.nodes.column("aliases"), lazy=lazy, order=self.prior)
        self.known, self.fields = parent_sets(self.nodes, names)
        if model is None and self.manifest is not None:
            model = self.manifest.vector_index.model  # None: the bundled default
        # the root the release is in now (a moved or copied root finds its model); one str object per
        # name, shared by a long-lived engine's channels' lists (the context is kept while channels
        # are left to open: a dict of every name is 25 MB on whole Mathlib)
        shared = None if lazy else dict(zip(names, names))
        self._context = ChannelContext(self.release, names, shared, release_root(self.release), model, queries_only,
                                       symbols, preload, lazy, nodes=self.nodes)
        self._deferred = {}
        for attribute, kind in CHANNELS:
            if kind.name in given:
                self._opened(attribute, kind, given[kind.name])
            elif lazy:
                self._deferred[attribute] = kind
            else:
                self._opened(attribute, kind, self._try(kind.name, lambda: kind.open(self._context)))
        self._context = self._context if self._deferred else None
        self.macros = release_macros(self.release)

    @cached_property
    def row_of(self) -> dict[str, int]:
        """Each node name's row in `nodes` (a name listed twice: its last)."""
        return dict(zip(self.node_names, range(len(self.node_names))))

    def _opened(self, attribute: str, kind: type[Channel], channel: Channel | None) -> None:
        setattr(self, attribute, channel)
        if channel is not None:
            self._context.opened[kind.name] = channel

    def channel(self, attribute: str) -> Channel | None:
        """The channel held as `attribute` (CHANNELS), opened now if a lazy engine has not yet (after
        the channels its open reads, `Channel.needs`); None when it is not open (`unavailable` says why)."""
        kind = self._deferred.get(attribute)
        if kind is not None:
            for need in kind.needs:
                self.channel(next(a for a, k in CHANNELS if k.name == need))
            del self._deferred[attribute]
            self._opened(attribute, kind, self._try(kind.name, lambda: kind.open(self._context)))
            self._context = self._context if self._deferred else None
        return getattr(self, attribute)

    def _refuse_if_damaged(self, exc: Exception) -> None:
        """IntegrityError (from `exc`) when opening failed in a release whose files differ from its
        manifest: a FAISS or Parquet error there is damage, named by file, not a channel to skip."""
        if isinstance(exc, IntegrityError) or self.manifest is None or self._verified_full:
            return
        problems = verify_release(self.release)
        self._verified_full = True  # one full check per engine, however many channels fail
        if problems:
            raise IntegrityError(integrity_message(self.release, problems)) from exc

    def _try(self, channel: str, opener):
        try:
            return opener()
        except Exception as exc:  # a channel that cannot open is reported, the others still answer
            self._refuse_if_damaged(exc)
            self.unavailable[channel] = f"{type(exc).__name__}: {exc}"
            log.warning("channel %s unavailable: %s", channel, exc)
            return None

    def channel_hits(self, query: str) -> dict[str, list[tuple[str, float]]]:
        """Each open channel's candidates (name, score), best first, for the channels that run on
        this kind of query, in CHANNELS order."""
        return self._ask(query)[1]

    def _ask(self, query: str) -> tuple[Query, dict[str, list[tuple[str, float]]]]:
        """`channel_hits`, with the Query the channels saw (and left their vector and coverage in)."""
        query = self.expanded(query)
        results: dict[str, list[tuple[str, float]]] = {}
        latex = looks_like_formula(query) and not looks_like_lean(query)  # Lean queries name constants already
        asked = Query(query, query_kind(query), latex, runs_formula_channel(query),
                      head=lambda depth: [h.name for h in self.rank(query, results, self.resolver.resolve(query), depth).hits])
        for attribute, kind in CHANNELS:
            channel = self.channel(attribute) if attribute not in self._deferred or kind.runs(asked) else None
            hits = channel.hits(asked, settings.CANDIDATES) if channel is not None else None
            if hits is not None:
                results[kind.name] = hits
        return asked, results

    def expanded(self, query: str) -> str:
        """The query as the channels see it: typed with a LaTeX corpus's macros, as its statements."""
        return expand_query(self.macros, query) if self.macros is not None and "\\" in query else query

    def search(self, query: str, k: int = 10) -> SearchResult:
        """The ranked hits, with how well they match (`match`, and a `notice` for an identifier the
        release lacks); none, and the reason, for a query that cannot be searched."""
        problem = query_problem(query)
        if problem is not None:
            return SearchResult(query=query, hits=[], unavailable=dict(self.unavailable), refused=problem)
        asked, results = self._ask(query)
        resolved = self.resolver.resolve(query)
        result = self.rank(query, results, resolved, k)
        result.notice = None if resolved else unknown_identifier(query)
        fused = [h for h in result.hits if "identifier" not in h.channels][:2]  # the channels' own first two
        result.evidence = evidence(asked.kind, results, resolved, [(h.channels, h.score) for h in fused], asked.coverage)
        result.match = match_of(result.evidence, result.notice)
        return result

    def rank(self, query: str, results: dict[str, list[tuple[str, float]]], resolved: list[str], k: int,
             weights: dict[str, float] | None = None) -> SearchResult:
        """Fuses channel hits (with `weights`, else the engine's), folding the members of a same_as
        group that answer together into one hit (`sameas.fold`: its name the best member's, its
        score the group's, the others in `also`), applies the reference prior and the parent
        channel, and puts resolved identifiers first (`resolved` in the answer: the resolver's own)."""
        weights = weights or settings.weights_for(query_kind(query), self.weights)
        answer = resolved
        folded = fold(self.same_as, results, resolved, weights)
        if folded is not None:
            results, resolved = folded.results, folded.resolved
        total, ranks = fused_totals(results, gap_weights(results, weights)), ChannelRanks(results)
        prior = weights.get("prior", 0.0)
        need = max(k + len(resolved), int(weights.get("parent_depth", PARENT_DEPTH)) if weights.get("parent") else 0)
        top = self._prior_top() if prior and self.prior else None
        scored = with_parents(prior_scores(total, self.prior, prior, need, top), ranks, weights, self.known, self.fields,
                              lambda n: prior_score(n, total[n], self.prior, prior) if n in total else 0.0)
        # the k best of the rest, as fuse + apply_prior order all of them (ties by name), with Hits
        # made for those only: ordering and materialising every candidate was 1-2 ms a query
        best = heapq.nsmallest(k + len(resolved), scored, key=lambda x: (-x[1], x[0]))

        def hit(name: str, score: float) -> Hit:
            return Hit(name=name, score=round(score, 8), channels=dict(sorted(ranks[name].items())),
                       also=folded.also(name) if folded is not None else [])

        head = []
        if resolved:
            score_of = dict(scored) if any(n in ranks for n in resolved) else {}
            for i, n in enumerate(resolved, 1):  # a name in ranks but not in `scored` is no parent: its prior score
                score = score_of[n] if n in score_of else prior_score(n, total[n], self.prior, prior) if n in total else None
                h = hit(n, score) if score is not None else Hit(name=n, score=0.0, also=folded.also(n) if folded else [])
                h.channels = {"identifier": i, **h.channels}
                head.append(h)
        taken = set(resolved)
        hits = head + [hit(n, s) for n, s in best if n not in taken]
        return SearchResult(query=query, hits=hits[:k], resolved=answer, unavailable=dict(self.unavailable))

    def _prior_top(self) -> float | None:
        """`prior.prior_top` of the engine's prior, computed once per prior dict."""
        cached = getattr(self, "_prior_max", None)
        if cached is None or cached[0] is not self.prior:
            cached = self._prior_max = (self.prior, prior_top(self.prior))
        return cached[1]

    def describe(self, names: list[str]) -> dict[str, dict]:
        """kind, title (signature or statement opening), file and line of the named nodes."""
        rows = self.nodes.filter(pc.is_in(self.nodes["name"], value_set=pa.array(names, pa.string())))
        return {r["name"]: r for r in rows.select(["name", "kind", "title", "file", "line"]).to_pylist()}

    def names(self, query: str, k: int) -> list[str]:
        return [h.name for h in self.search(query, k).hits]

    def flush(self) -> None:
        """Writes what query time computed for later processes (the informal channel's rendering
        vectors) into the release root's cache."""
        if self.informal is not None:
            self.informal.flush()
