"""Answering queries from the formal index.

`FormalIndex.loogle` is the Loogle mode: every term of the query must hold (constants mentioned,
name fragment, pattern somewhere, a pattern with parameters as the telescope or somewhere, `⊢`
pattern at the conclusion with its hypotheses in any order); candidates come from the postings,
patterns are verified on the trees. Ranking: an exact conclusion match first, then the fewest
constants beyond the query's (`others`), then how much of the declaration the query covers
(specificity), then the smaller statement, then the name.

`FormalIndex.soft` is the fused channel's mode for Lean-looking prose (MathlibQR's `q1a_lean`):
each backtick piece scores declarations by the share of its keys they have (idf-weighted), plus a
bonus when the piece matches the conclusion exactly up to renaming or matches somewhere."""

from __future__ import annotations

import bisect
import json
import logging
import math
import re
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.formal.formal_index import FORMAL_DIR
from mathindex.formal.keys import DEFAULT_OF, NOTATION, SORT_CONSTANTS, pattern_keys, shape_hash
from mathindex.formal.match import match, match_anywhere, match_hypotheses, match_telescope
from mathindex.formal.normal import head, size
from mathindex.formal.query import (
    _IDENT as _IDENT_NAME,
    IDENT_RE,
    FormalQueryError,
    Term,
    UnknownConstant,
    Vocabulary,
    card_reading,
    parse_query,
    pattern_term,
    signature_term,
)
from mathindex.lookups import ByLast, SortedKeys, is_sorted_distinct
from mathindex.names import shared_names
from mathindex.store.layout import ReleaseLayout

log = logging.getLogger(__name__)
MAX_VERIFY = 1500  # pattern checks per query, smallest statements first; past it the count is estimated
SOFT_VERIFY = 150  # per piece, the best-scored declarations checked for an actual match
SOFT_MIN_SCORE = 1.0  # soft hits below this are left out: a weak partial overlap is noise to the fusion
SOFT_FULL_SYMBOLS = 4  # a piece with fewer operators and constants counts in proportion (`x ≤ j x`: 1/4)
_STRUCTURE_KINDS = frozenset({"structure", "class", "inductive", "coinductive"})
_MEMBER_KINDS = frozenset({"field", "constructor"})  # found by name, they lift their structure
MEMBER_TYPE_BONUS = 1.0  # a named piece whose type matches the member's telescope
CARD_READING_WEIGHT = 0.9  # a piece read with `|x|` as `card x`: below the reading as written, where both match
_NAMED = re.compile(r"^(" + _IDENT_NAME + r")\s*(?=[:({\[⦃])")
_PIECE = re.compile(r"`([^`]+)`")


@dataclass
class FormalHit:
    name: str
    score: float
    exact: bool = False


@dataclass
class FormalResult:
    """Loogle mode's answer: the ranked hits, how many declarations match, whether that count is
    exact (False when more candidates than MAX_VERIFY needed a pattern check)."""

    query: str
    hits: list[FormalHit]
    count: int
    exact_count: bool = True
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


class FormalIndex:
    """The `formal_statements` table and `formal/` postings of one release, opened once."""

    def __init__(self, release: Path, shared: dict[str, str] | None = None):
        """`shared`: name -> the str object to hold a name as (a search engine's), if any. What only
        some queries read (the statements' trees, the names by last component, the fragment blob,
        the vocabulary's index by last component) is read or made when first needed: opening whole
        Mathlib's index took 1.5-2 s of a one-query CLI's CPU when all of it was made here."""
        release = Path(release)
        self._table = ReleaseLayout(release).table("formal_statements")
        st = pq.read_table(self._table, columns=["name", "kind", "size"])
        self.names: list[str] = shared_names(st.column("name").to_pylist(), shared)
        self.n = len(self.names)
        self.sizes = np.asarray(st.column("size").to_numpy(zero_copy_only=False), dtype=np.int32)
        self._described = None  # kind, module and signature, read on the first `describe_name` (not by a server)
        self._concls: dict[int, list | None] = {}  # decoded trees, by doc (cleared past TREE_CACHE)
        self._hyp_lists: dict[int, list] = {}
        self.keys, self._key_start, self._key_count = _key_slices(pq.read_table(release / FORMAL_DIR / "keys.parquet"))
        self.postings = np.asarray(np.load(release / FORMAL_DIR / "postings.npy", mmap_mode="r"))  # mapped; no memmap __getitem__
        notations = release / FORMAL_DIR / "notations.parquet"  # absent from releases built before it
        notation = pq.read_table(notations).to_pydict() if notations.is_file() else {"leaf": [], "target": []}
        self.vocab = Vocabulary(shared_names(pq.read_table(release / FORMAL_DIR / "vocabulary.parquet").column("name").to_pylist(),
                                             shared),
                                dict(zip(notation["leaf"], notation["target"])))
        self._set_fields(*_field_parents(self.names, st.column("kind") if "kind" in st.column_names else None))
        self._n_constants: np.ndarray | None = None  # per doc, read from the c: postings on first use

    @cached_property
    def _trees(self) -> tuple[pa.Array, pa.Array]:
        """The statements' conclusion and hypotheses columns (compact JSON), read when a query first
        checks a tree."""
        st = pq.read_table(self._table, columns=["conclusion", "hypotheses"])
        return st.column("conclusion").combine_chunks(), st.column("hypotheses").combine_chunks()

    @cached_property
    def _by_last(self) -> ByLast:
        """The declarations by the last component of their names."""
        return ByLast(self.names)

    @cached_property
    def _fragments(self) -> tuple[str, np.ndarray]:
        """Every name on its own line, lower-cased (fragments match case-insensitively, as Loogle's),
        and where each line starts (`fragment_docs`)."""
        lower = [x.lower() for x in self.names]
        return "\n".join(lower) + "\n", np.cumsum([0] + [len(x) + 1 for x in lower[:-1]])

    def _set_fields(self, fields: np.ndarray, parents: np.ndarray) -> None:
        """The member docs (fields, constructors) and their structures' docs; grouped by structure
        for `_lift_structures`."""
        self._fields, self._parents = fields, parents
        self._members = np.zeros(self.n, dtype=bool)
        self._members[fields] = True
        by_parent = np.argsort(parents, kind="stable")
        self._grouped_fields = fields[by_parent]
        self._structures, self._group_starts = np.unique(parents[by_parent], return_index=True)

    # -- postings --------------------------------------------------------------------------

    def docs(self, key: str) -> np.ndarray:
        i = self.keys.index(key)
        if i is None:
            return np.asarray(self.postings[0:0])
        start = int(self._key_start[i])
        return np.asarray(self.postings[start:start + int(self._key_count[i])])

    def df(self, key: str) -> int:
        i = self.keys.index(key)
        return 0 if i is None else int(self._key_count[i])

    def idf(self, key: str) -> float:
        return math.log((self.n + 1) / (self.df(key) + 0.5))

    def _any_of(self, names: list[str]) -> np.ndarray:
        arrays = [self.docs("c:" + c) for c in names]
        return np.unique(np.concatenate(arrays)) if len(arrays) > 1 else arrays[0]

    def fragment_docs(self, fragment: str) -> np.ndarray:
        """Declarations whose full name contains `fragment`, case-insensitively (as Loogle)."""
        blob, line_starts = self._fragments
        offsets = [m.start() for m in re.finditer(re.escape(fragment.lower()), blob)]
        if not offsets:
            return np.zeros(0, dtype=np.int32)
        rows = np.searchsorted(line_starts, np.asarray(offsets), side="right") - 1
        return np.unique(rows).astype(np.int32)

    def telescope(self, doc: int) -> tuple[list, list | None]:
        """(hypotheses, conclusion) of a declaration as JSON lists (match() takes lists or tuples
        alike; patterns are turned into lists too, so that leaves compare equal)."""
        return self.hypotheses(doc), self.conclusion(doc)

    def conclusion(self, doc: int) -> list | None:
        """The conclusion's tree (None when the statement did not parse), decoded once."""
        got = self._concls.get(doc, _UNREAD)
        if got is _UNREAD:
            c = self._trees[0][doc].as_py()
            got = json.loads(c) if c else None
            _remember(self._concls, doc, got)
        return got

    def hypotheses(self, doc: int) -> list:
        """The hypotheses' trees, decoded once, apart from the conclusion: the soft bonus often
        decides on the conclusion alone, and decoding is most of its cost."""
        got = self._hyp_lists.get(doc)
        if got is None:
            got = json.loads(self._trees[1][doc].as_py())
            _remember(self._hyp_lists, doc, got)
        return got

    def describe_name(self, name: str) -> dict:
        """kind, module and signature of a declaration."""
        if self._described is None:
            self._doc_of = {n: i for i, n in enumerate(self.names)}
            self._described = pq.read_table(self._table, columns=["kind", "module", "signature"])
        return self._described.slice(self._doc_of[name], 1).to_pylist()[0]

    def query_notes(self, query: str) -> list[str]:
        """Why a Loogle-syntax query cannot run strictly (unknown constant, malformed pattern); empty
        for other queries. The fused search reports these and answers with the other channels."""
        if not looks_like_loogle(query):
            return []
        try:
            parse_query(query, self.vocab)
        except (FormalQueryError, UnknownConstant) as exc:
            return [str(exc)]
        return []

    # -- Loogle mode ---------------------------------------------------------------------

    def loogle(self, query: str, limit: int = 10) -> FormalResult:
        """Every declaration matching all terms, ranked; raises FormalQueryError / UnknownConstant."""
        t0 = time.perf_counter()
        terms = parse_query(query, self.vocab)
        cands = self._candidates(terms)
        patterns = [_as_lists(t) for t in terms if t.kind in ("pattern", "conclusion")]
        # statements whose conclusion has a pattern's very shape first (they match), then by size
        shaped = np.zeros(self.n, dtype=bool)
        for t in terms:
            if t.kind in ("pattern", "conclusion"):
                shaped[self.docs("e:" + shape_hash(t.conclusion))] = True
        others = self.others(cands, terms)
        order = cands[np.lexsort((cands, self.sizes[cands], others, ~shaped[cands]))] if cands.size else cands
        others = dict(zip(cands.tolist(), others.tolist()))
        exact_count = not patterns or order.size <= MAX_VERIFY
        checked = order if exact_count else order[:MAX_VERIFY]
        scored: list[tuple] = []
        for doc in checked.tolist():
            got = self._verify(doc, patterns) if patterns else (False, 0)
            if got is None:
                continue
            exact, covered = got
            scored.append((not exact, others[doc], -self._coverage(doc, terms, covered), int(self.sizes[doc]),
                           self.names[doc], exact))
        scored.sort()
        count = len(scored) if exact_count else round(len(scored) * order.size / max(1, checked.size))
        hits = [FormalHit(s[4], round(1.0 / (i + 1), 6), s[5]) for i, s in enumerate(scored[:limit])]
        result = FormalResult(query, hits, count, exact_count, round(time.perf_counter() - t0, 4))
        if not scored:
            result.notes = self._why_empty(terms)
        return result

    def _why_empty(self, terms: list[Term]) -> list[str]:
        """For an empty answer: how many declarations each term alone matches."""
        notes = []
        for t in terms:
            alone = self._candidates([t])
            what = "candidates" if t.kind in ("pattern", "conclusion") else "declarations"
            notes.append(f"{t.text}: {alone.size} {what} alone")
        return notes

    def _candidates(self, terms: list[Term]) -> np.ndarray:
        """Docs having every key the terms require, smallest posting list first."""
        sets: list[np.ndarray] = []
        for t in terms:
            if t.kind == "fragment":
                sets.append(self.fragment_docs(t.fragment))
                continue
            for alts in t.constants:
                sets.append(self._any_of(alts))
            if t.kind == "conclusion":
                sets.extend(self.docs(key) for key in telescope_keys(t))
            elif t.kind == "pattern" and t.hypotheses:  # `A → B`: somewhere, or as the whole telescope
                sets.append(np.union1d(self._all_of(sorted(pattern_keys(t.tree))), self._all_of(telescope_keys(t))))
            elif t.kind == "pattern":
                sets.extend(self.docs(key) for key in sorted(pattern_keys(t.tree)))
        if not sets:
            return np.arange(self.n, dtype=np.int32)
        sets.sort(key=len)
        out = sets[0]
        for s in sets[1:]:
            if out.size == 0:
                break
            out = np.intersect1d(out, s, assume_unique=True)
        return out.astype(np.int32)

    def _all_of(self, keys: list[str]) -> np.ndarray:
        """Docs having every key (all docs for none)."""
        sets = sorted((self.docs(k) for k in keys), key=len)
        if not sets:
            return np.arange(self.n, dtype=np.int32)
        out = sets[0]
        for other in sets[1:]:
            out = np.intersect1d(out, other, assume_unique=True)
        return out

    def _verify(self, doc: int, patterns: list[Term]) -> tuple[bool, int] | None:
        """(some pattern matched the conclusion at its root, pattern nodes matched), or None."""
        hyps, concl = self.telescope(doc)
        if concl is None:
            return None
        exact, covered = False, 0
        for t in patterns:
            if t.kind == "conclusion":
                if match_telescope(t.hypotheses, t.conclusion, hyps, concl) is None:
                    return None
                exact = True
            elif match(t.tree, concl, {}) is not None:
                exact = True
            elif not any(match_anywhere(t.tree, x, {}) is not None for x in [concl, *hyps]):
                if not t.hypotheses or match_telescope(t.hypotheses, t.conclusion, hyps, concl) is None:
                    return None
            covered += size(t.tree if t.kind == "pattern" else t.conclusion) + sum(size(h) for h in t.hypotheses)
        return exact, covered

    def others(self, docs: np.ndarray, terms: list[Term]) -> np.ndarray:
        """Per doc, how many constants its statement names beyond the query's (the statements that
        state just what was asked first); the number systems of its variables (`Nat`, `Real`) and
        the constants behind operators (`=`, `+`, `≤`: the glue of any statement) do not count."""
        if self._n_constants is None:
            self._n_constants = self._count_constants()
        out = self._n_constants[docs].astype(np.int32)
        for c in sorted(query_constants(terms) | _UNCOUNTED):
            out -= np.isin(docs, self.docs("c:" + c), assume_unique=True)
        return out

    def _count_constants(self) -> np.ndarray:
        """Constants per doc, from the c: postings (one block: keys are sorted)."""
        lo, hi = bisect.bisect_left(self.keys.keys, "c:"), bisect.bisect_left(self.keys.keys, "c;")  # ";" follows ":"
        if lo == hi:
            return np.zeros(self.n, dtype=np.int32)
        starts, counts = self._key_start[lo:hi], self._key_count[lo:hi]
        block = np.asarray(self.postings[int(starts.min()):int((starts + counts).max())])
        return np.bincount(block, minlength=self.n).astype(np.int32)

    def _coverage(self, doc: int, terms: list[Term], covered: int) -> float:
        """How much of the declaration the query accounts for: pattern nodes over statement nodes,
        plus named constants over the statement's constants (specific declarations first)."""
        named = sum(1 for t in terms for _ in t.constants)
        total = max(1, int(self.sizes[doc]))
        return min(1.0, covered / total) + min(1.0, named / max(1, total / 4))

    # -- soft mode (the fused channel) ---------------------------------------------------------

    def soft(self, query: str, k: int) -> list[tuple[str, float]]:
        """(name, score) for a Lean-looking query: Loogle mode when the whole query is one and
        has matches, else the idf-weighted key overlap of its backtick pieces."""
        if looks_like_loogle(query):
            try:
                res = self.loogle(query, k)
                if res.hits:
                    return [(h.name, h.score) for h in res.hits]
            except (FormalQueryError, UnknownConstant):
                pass
        pieces = [p.strip() for p in _PIECE.findall(query)] or [query.strip().strip("`")]
        pieces = [x for p in pieces for x in _split_names(p)]
        total = np.zeros(self.n, dtype=np.float32)
        for piece in dict.fromkeys(p for p in pieces if p):
            try:
                score = self._score_piece(piece)
            except Exception:  # noqa: BLE001 - one odd piece must not fail the fused search
                log.debug("formal soft piece failed: %r", piece, exc_info=True)
                continue
            if score is not None:
                score = self._lift_structures(score)
                total += score
        keep = np.flatnonzero(total >= SOFT_MIN_SCORE)
        top = keep[np.lexsort((keep, -total[keep]))][:k]
        return [(self.names[i], float(total[i])) for i in top]

    def _lift_structures(self, score: np.ndarray) -> np.ndarray:
        """A structure scores as its best field (and at least its own score): the fields' maxima per
        structure by one reduceat over the fields grouped by structure; nothing to do (the same
        array) when no field scored, as for most pieces."""
        fields = score[self._grouped_fields]
        if not fields.any():
            return score
        parent = np.zeros_like(score)
        parent[self._structures] = np.maximum(np.maximum.reduceat(fields, self._group_starts), 0)
        return np.maximum(score, parent)

    def _score_piece(self, piece: str) -> np.ndarray | None:
        """One backtick piece's scores: a constant's declarations get 0.5, and a field or
        constructor of that name its name's weight; a named piece (`step : σ → α → σ`) scores the
        declarations of that name; a term scores as `_score_term`, as the better of its two
        readings when it writes `|x|` (`query.card_reading`)."""
        if IDENT_RE.match(piece):
            alts = self.vocab.resolve(piece) if len(piece) > 1 else []
            score = np.zeros(self.n, dtype=np.float32)
            if alts and len(alts) <= 20:
                score[self._any_of(alts)] = 0.5
            if "." not in piece and len(piece) >= 3:  # `f`, `G`, `p` are variables
                members = self._named_docs(piece)
                members = members[self._members[members]]
                score[members] = np.maximum(score[members], self._name_weight(piece))
            return score if score.any() else None
        named = self._score_named(piece)
        if named is not None:
            return named
        try:
            term = pattern_term(piece, 0, self.vocab, strict=False)
        except (FormalQueryError, UnknownConstant, ValueError, RecursionError):
            return None
        score = self._score_term(term)
        card = card_reading(term)  # `|s|` may be the size of `s`, which statements write `#s`
        if card is not None and (as_card := self._score_term(card)) is not None:
            as_card *= CARD_READING_WEIGHT
            score = as_card if score is None else np.maximum(score, as_card)
        return score

    def _score_term(self, term: Term) -> np.ndarray | None:
        """A pattern piece's scores: (key overlap + exact shape + verified match) x informativeness."""
        lists = _as_lists(term)
        weights = self._piece_keys(term)
        if not weights:
            return None
        norm = sum(weights.values())
        score = np.zeros(self.n, dtype=np.float32)
        for key, w in weights.items():
            np.add.at(score, self.docs(key), np.float32(w / norm))  # a posting names each doc once: as `+=`, faster
        shape = self.docs("e:" + shape_hash(term.conclusion))
        score[shape] += 1.0
        top = np.argpartition(-score, min(SOFT_VERIFY, self.n - 1))[:SOFT_VERIFY]
        top = top[score[top] > 0]
        for doc in top[self._may_match(top, lists)].tolist():
            score[doc] += self._soft_bonus(int(doc), lists)
        symbols = sum(1 for x in [term.tree] for s in _symbols(x))
        return score * min(1.0, symbols / SOFT_FULL_SYMBOLS)

    def _named_docs(self, name: str) -> np.ndarray:
        return self._by_last.positions(name).astype(np.int32)

    def _name_weight(self, name: str) -> float:
        """In (0, 1]: 1 for a name one declaration has, less the more declarations share it."""
        df = self._named_docs(name).size
        return float(math.log((self.n + 1) / (df + 0.5)) / math.log((self.n + 1) / 1.5)) if df else 0.0

    def _score_named(self, piece: str) -> np.ndarray | None:
        """`name binders : type` (a field or declaration described by its signature): the
        declarations whose last name component is `name` get the name's weight, plus
        MEMBER_TYPE_BONUS when the signature matches their telescope. None when it is no such
        piece, or no declaration has that name."""
        m = _NAMED.match(piece)
        if not m or len(m.group(1)) < 3 or m.group(1) in ("fun", "let", "have", "show"):  # `f : X ⟶ Y` is a variable
            return None
        docs = self._named_docs(m.group(1))
        if not docs.size:
            return None
        try:
            term = signature_term(piece[m.end():], self.vocab)
        except (FormalQueryError, UnknownConstant, ValueError, RecursionError):
            return None  # `Associated (gcd a b) c` is an application, not a signature
        score = np.zeros(self.n, dtype=np.float32)
        score[docs] = self._name_weight(m.group(1))
        if docs.size <= MAX_VERIFY:
            lists = _as_lists(term)
            for doc in docs[self._may_match(docs, lists)].tolist():
                if self._soft_bonus(doc, lists) == 1.0:
                    score[doc] += MEMBER_TYPE_BONUS
        return score

    def _piece_keys(self, term: Term) -> dict[str, float]:
        """idf weight of every key the piece names (keys the index lacks are left out)."""
        keys = set()
        for x in [term.conclusion, *term.hypotheses]:
            keys |= pattern_keys(x)
        if head(term.conclusion) != "*":
            keys.add("h:" + head(term.conclusion))
        for alts in term.constants:
            if len(alts) <= 20:
                keys.update("c:" + c for c in alts)
        # in key order: the scores are float sums over these weights, and a set's order follows
        # PYTHONHASHSEED (the sums, and which candidates reach the bonus, moved between processes)
        return {key: self.idf(key) for key in sorted(keys) if self.df(key)}

    def _may_match(self, docs: np.ndarray, term: Term) -> np.ndarray:
        """Per doc, False when `_soft_bonus` must be 0: a pattern matches (at the root or anywhere)
        only statements having all its s: and p: keys (`pattern_keys`), so a doc lacking one of
        the whole piece's keys and one of its telescope's cannot match; the posting lists say so
        without reading its trees (most of the soft channel's CPU on a cold tree cache)."""
        tele = set().union(*(pattern_keys(x) for x in [term.conclusion, *term.hypotheses]))
        return self._has_keys(docs, pattern_keys(term.tree)) | self._has_keys(docs, tele)

    def _has_keys(self, docs: np.ndarray, keys: set[str]) -> np.ndarray:
        """Per doc, whether it has every key (postings are ascending doc ids)."""
        ok = np.ones(docs.size, dtype=bool)
        for key in keys:
            posting = self.docs(key)
            if posting.size == 0:
                return np.zeros(docs.size, dtype=bool)
            at = np.searchsorted(posting, docs)
            ok &= posting[np.minimum(at, posting.size - 1)] == docs
        return ok

    def _soft_bonus(self, doc: int, term: Term) -> float:
        """0.5 when the piece matches somewhere, 1.0 at the conclusion (hypotheses in any order)."""
        concl = self.conclusion(doc)
        if concl is None:
            return 0.0
        if match(term.conclusion, concl, {}) is not None and (
                not term.hypotheses or match_hypotheses(term.hypotheses, self.hypotheses(doc), {}) is not None):
            return 1.0
        if match_anywhere(term.tree, concl, {}) is not None or any(
                match_anywhere(term.tree, x, {}) is not None for x in self.hypotheses(doc)):
            return 0.5
        return 0.0


def query_constants(terms: list[Term]) -> set[str]:
    """The constants a query names: its constants (each alternative), its patterns' operators as
    the constants behind them (`*` is `HMul.hMul`) and its notation leaves (`√` is `Real.sqrt`)."""
    out = {c for t in terms for alts in t.constants for c in alts}
    for t in terms:
        for x in [t.tree, *t.hypotheses] if t.tree is not None else []:
            for sym in _symbols(x):
                name = NOTATION.get(sym[0]) if sym[0] != "#c" else DEFAULT_OF.get(sym[1])
                if name:
                    out.add(name)
    return out


def telescope_keys(t: Term) -> list[str]:
    """The keys a statement whose telescope matches `t` (conclusion at the root, each hypothesis
    among its hypotheses) must have: the trees' s: and p: keys, the conclusion's h:, the y: heads."""
    keys = set().union(*(pattern_keys(x) for x in [t.conclusion, *t.hypotheses]))
    if head(t.conclusion) != "*":
        keys.add("h:" + head(t.conclusion))
    keys |= {"y:" + h for h in {head(x) for x in t.hypotheses} - {"*"}}
    return sorted(keys)


_UNCOUNTED = frozenset(SORT_CONSTANTS.values()) | frozenset(c for c in NOTATION.values() if c)
_NO_DOCS = np.zeros(0, dtype=np.int32)
_UNREAD = object()
TREE_CACHE = 50_000  # decoded trees kept per cache: a few hundred MB at most over whole Mathlib


def _remember(cache: dict, doc: int, value) -> None:
    if len(cache) > TREE_CACHE:
        cache.clear()
    cache[doc] = value


def _key_slices(keys: pa.Table) -> tuple[SortedKeys, np.ndarray, np.ndarray]:
    """formal/keys.parquet as (its keys, each key's start and count in the postings), by position;
    a release's keys are sorted and distinct (`formal_index`), others are sorted here."""
    names = keys.column("key").to_pylist()
    if not is_sorted_distinct(names):
        keys = keys.take(pc.sort_indices(keys.column("key")))
        names = keys.column("key").to_pylist()
    return (SortedKeys(names), np.asarray(keys.column("start").to_numpy(), dtype=np.int64),
            np.asarray(keys.column("count").to_numpy(), dtype=np.int64))


def _field_parents(names: list[str], kinds: pa.ChunkedArray | None) -> tuple[np.ndarray, np.ndarray]:
    """(field docs, their structure's doc): a structure is found by its fields' statements (in
    Arrow: a Python pass over every declaration was 0.1-0.2 s on whole Mathlib)."""
    if kinds is None:
        return np.zeros(0, np.int32), np.zeros(0, np.int32)
    kinds = kinds.combine_chunks()
    member = np.flatnonzero(pc.is_in(kinds, value_set=pa.array(sorted(_MEMBER_KINDS))).to_numpy(zero_copy_only=False))
    member = [i for i in member.tolist() if "." in names[i]]
    if not member:
        return np.zeros(0, np.int32), np.zeros(0, np.int32)
    parent_names = pa.array([names[i].rsplit(".", 1)[0] for i in member], pa.string())
    # a name's last doc, as a dict of every name held it: the first in the reversed names
    last = len(names) - 1 - pc.fill_null(pc.index_in(parent_names, value_set=pa.array(names[::-1], pa.string())),
                                          len(names)).to_numpy()
    structure = pc.is_in(kinds, value_set=pa.array(sorted(_STRUCTURE_KINDS))).to_numpy(zero_copy_only=False)
    fields, parents = [], []
    for i, p in zip(member, last.tolist()):
        if p >= 0 and structure[p]:
            fields.append(i)
            parents.append(p)
    return np.asarray(fields, np.int32), np.asarray(parents, np.int32)


_NAME_LIST = re.compile(r"^\s*" + _IDENT_NAME + r"(?:\s*,\s*" + _IDENT_NAME + r")+\s*$")


def _split_names(piece: str) -> list[str]:
    """`toFun, invFun, left_inv` -> each name; any other piece as it is."""
    if _NAME_LIST.match(piece):
        return [x.strip() for x in piece.split(",")]
    return [piece]


def _symbols(t: tuple):
    """The operators and constants of a pattern (holes, variables and applications left out)."""
    stack = [t]
    while stack:
        x = stack.pop()
        tag = x[0]
        if tag in ("#c", "#n"):
            yield x
        elif tag[0] != "#" and tag not in ("?", "_"):
            if tag not in ("apply", "lambda"):
                yield x
            stack.extend(x[1:])


def _as_lists(term: Term) -> Term:
    """The term with its trees as JSON lists, the form statements are read in."""
    def conv(t):
        return json.loads(json.dumps(t)) if t is not None else None

    return Term(term.kind, term.text, term.start, term.constants, term.fragment, conv(term.tree),
                [conv(h) for h in term.hypotheses], conv(term.conclusion))


_LOOGLE = re.compile(r"⊢|\|-|\?[A-Za-z_]|(?:^|,)\s*\"[^\"]+\"\s*(?:,|$)|(?:^|[\s(,])_(?:$|[\s),])")


def looks_like_loogle(query: str) -> bool:
    """A query in Loogle's syntax: `⊢`, `?x`, a quoted fragment term, a `_` hole, or a comma list
    of constants (`Real.sqrt, Real.pi`), and no backticks or `$`."""
    if "`" in query or "$" in query or "\\" in query:
        return False
    if _LOOGLE.search(query):
        return True
    parts = [p.strip() for p in query.split(",")]
    return all(IDENT_RE.match(p) for p in parts) and any("." in p for p in parts)
