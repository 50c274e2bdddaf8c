"""Ranking premises for a Lean goal: which declarations a proof of it is likely to name.

Signals, each a score per declaration (`FEATURES`):

- `lexical`: BM25 of the goal and context over declarations' names and signatures (the "BM25
  over statements" baseline alone), relative to the best;
- `knn`: the proofs of the most similar training statements (BM25 over the same documents,
  restricted to theorems with a training proof): the similarity-weighted share of those proofs
  that name the declaration;
- `formal`: the idf-weighted share of the goal's constants the declaration's statement mentions,
  plus the goal's conclusion head (the formal index's `c:` and `h:` postings);
- `pairs`: the idf-weighted share of the goal's operator pairs (a head applied to an argument with
  a head: the formal index's `p:` postings, `p:HAdd.hAdd>Finset.sum`) the declaration's statement
  has: the shape a rewrite or `simp` lemma must meet in the goal, which constants alone miss;
- `usage`: how many training proofs name it, log-scaled (a global prior);
- `embedding`: the embedding channel's similarity of the goal to the declaration, relative to
  its best and its last candidate (when the release has a vector index; the neighbours of `knn`
  are then found by both similarities);
- `cooc`: over the goal's constants c (idf-weighted), the share of training theorems whose
  statement names c whose proof names the declaration;
- `covered`: the idf-weighted share of the declaration's own constants the goal has (MePo);
- `local`: the idf-weighted share of the goal's constants declared in the declaration's file;
- with the goal's file known (`file`, `line`: premises.imports), candidates are only what that
  file can see (the files it imports, transitively, and its own declarations above `line`), and
  `earlier` (declared above the goal in its file), `near` (how few declarations lie between: the
  lemmas just proved), `imported` (1 / import distance of the declaration's file) and `knn_near`
  (`knn` over the neighbours the goal's file can see) join in, and two signals read the proofs
  written above the goal in its file (premises/file_proofs.parquet: what the file says there, never
  a prior): `above` (how many of them name the declaration, the nearer ones counting more) and
  `knn_above` (their votes weighted by their statements' similarity to the goal, as `knn`'s); without
  a file they are 0.

Candidates are the best `DEPTH` of each signal and every premise of the neighbours; the score is
the weighted sum, with the weights `premises/weights.json` records (fitted on the `tune` part by
premises.fit). When the release has a tree model (`premises/model.json`, premises.boosted), it
re-orders the linear score's best RERANK over `MODEL_FEATURES`: the signals, the linear score and
`EXTRA` (the candidate's `simp` attribute, kind, whether its conclusion head is the goal's, whether
its namespace is one of the goal's constants', its statement's size, and `imported_use`: how many
training proofs of the files the goal's file imports directly name it). The goal's own constants are never listed: the gold sets (proof references) leave
out what the statement names, and a goal's vocabulary is no premise to suggest."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import scipy  # its submodules load when first used (scipy.sparse: 0.18 s, not on a search's path)

from mathindex.embed.channel import VectorChannel
from mathindex.formal.keys import ConstantResolver, leaf_symbols, tree_keys
from mathindex.formal.normal import head
from mathindex.formal.query import IDENT_IN
from mathindex.formal.search import FormalIndex
from mathindex.formal.telescope import TelescopeBuilder
from mathindex.lean.binders import leading_groups
from mathindex.lean.lexer import KEYWORDS
from mathindex.premises.goal import GoalError, check_goal  # noqa: F401  (GoalError: the ranker's error, re-exported)
from mathindex.premises.imports import IMPORTS_FILE, FileGraph, module_file
from mathindex.premises.priors import FILE_PROOFS_FILE, PREMISES_DIR, PRIORS_FILE, STATEMENTS_DIR
from mathindex.premises.suite import THEOREM_KINDS
from mathindex.premises.boosted import RERANK, TreeModel, read_model
from mathindex.search.lexical import LexicalIndex
from mathindex.names import shared_names
from mathindex.store.layout import ReleaseLayout

FEATURES = ("lexical", "knn", "formal", "pairs", "usage", "embedding", "cooc", "covered", "local", "earlier", "near",
            "imported", "knn_near", "above", "knn_above")
FILE_FEATURES = ("earlier", "near", "imported", "knn_near", "above", "knn_above")  # 0 unless the goal's file is given
EXTRA = ("simp", "kind", "head", "namespace", "size", "imported_use")  # the tree model's own inputs (Candidates.extra)
MODEL_FEATURES = (*FEATURES, "linear", *EXTRA)
KIND_CODES = {"theorem": 0, "lemma": 0, "def": 1, "abbrev": 1, "instance": 2, "structure": 3, "class": 3,
              "inductive": 3, "field": 4, "constructor": 4}  # `kind` (5: any other)
DEFAULT_WEIGHTS = {"lexical": 1.0, "knn": 3.0, "formal": 0.5, "pairs": 0.5, "usage": 0.5, "embedding": 1.0, "cooc": 1.0,
                   "covered": 0.5, "local": 0.5, "earlier": 0.5, "near": 1.0, "imported": 0.5, "knn_near": 1.0,
                   "above": 1.0, "knn_above": 1.0}
WEIGHTS_FILE = "weights.json"
DEPTH = 200  # candidates per signal
NEIGHBOURS = 128  # similar training statements whose proofs vote (kNN alone, 400 held-out goals: R@32 13.6 at 64, 16.2 at 256)
NEAR_ROWS = 20.0  # `near`: exp(-(declarations between the candidate and the goal) / NEAR_ROWS)
NEAR_POOL = 200  # the declarations just above the goal that are candidates whatever their signals
ABOVE_ROWS = 50.0  # `above`: a proof above the goal counts exp(-(declarations between it and the goal) / ABOVE_ROWS)
NEIGHBOUR_POWER = 2.0  # a neighbour's vote: (its BM25 score / the best neighbour's) ** power
MAX_ALTERNATIVES = 8  # a bare name with more declarations of that last component is left out
_BARE = re.compile(r"^[A-Za-z]{1,2}\d*$")  # `x`, `hf`, `f2`: variables, not constants


def check_premise_index(release: Path) -> Path:
    """The release's `premises/` directory; FileNotFoundError for a release built without one."""
    base = Path(release) / PREMISES_DIR
    if not (base / PRIORS_FILE).is_file():
        raise FileNotFoundError(f"{release} has no premise index ({PREMISES_DIR}/{PRIORS_FILE}); "
                                "a release built before `mathindex premises`")
    return base


@dataclass
class Premise:
    name: str
    score: float
    signals: dict[str, float]


@dataclass
class PremiseResult:
    goal: str
    context: str
    premises: list[Premise]
    constants: list[str] = field(default_factory=list)  # the goal's constants as resolved
    fallback: str | None = None  # the channel that answered alone, when the goal names no known constant
    notes: list[str] = field(default_factory=list)


@dataclass
class Scope:
    """What the goal's file can see: `visible` rows (None: every row, the release has no import
    graph), the file's rows above the goal (`earlier`, ascending), the row the goal would take
    (`goal_row`) and each row's import distance (`depth`: 0 the file itself, -1 not imported; None
    without a graph)."""

    file: str
    visible: np.ndarray | None
    earlier: np.ndarray
    goal_row: int
    depth: np.ndarray | None
    rows: np.ndarray | None = None  # flatnonzero(visible)


@dataclass
class Candidates:
    """One query's candidate rows and their signals (columns in FEATURES order)."""

    docs: np.ndarray
    features: np.ndarray
    constants: list[str]
    fallback: str | None = None
    extra: np.ndarray | None = None  # columns in EXTRA order (None: a fallback goal, ranked by its channel alone)


class PremiseRanker:
    """A release's premise index and weights, opened once; `rank` is then side-effect free.

    It reads the release's formal index (`formal`: formal.search.FormalIndex, None for a release
    without one) and its embedding channel (`vector`: embed.channel.VectorChannel, None without a
    vector index), given by whoever opened them: a search engine of the release (premises.api
    `ranker_of`), or the release flow's stages."""

    def __init__(self, release: Path, formal: FormalIndex | None, vector: VectorChannel | None,
                 weights: dict[str, float] | None = None, lazy: bool = False):
        """`lazy` (a one-query CLI): the names are not shared as one str object across the ranker's
        tables (a server's memory; 0.2 s of CPU on whole Mathlib), the co-occurrence rows are made
        per query for the goal's constants alone (`_cooc_rows`: the same rows) and the import graph
        when a query names a file (`imports`); the answers are the same."""
        self.release = Path(release)
        base = check_premise_index(self.release)
        self.vector = vector
        priors = pq.read_table(base / PRIORS_FILE, columns=["name", "kind", "usage", "proof"])
        self.names: list[str] = priors.column("name").to_pylist()
        self.formal = formal
        if self.formal is not None and self.formal.names != self.names:
            raise ValueError(f"{self.release}: the premise index and the formal index list different declarations")
        if self.formal is not None:
            self.names = self.formal.names  # the same names: one list of them (the formal index's str objects)
        shared = None if lazy else dict(zip(self.names, self.names))  # one str object per name (while opening)
        self.statements = LexicalIndex(base / STATEMENTS_DIR, shared)
        self.doc_of = dict(zip(self.names, range(len(self.names))))
        self.n = len(self.names)
        usage = priors.column("usage").to_numpy().astype(np.float32)
        self.usage = np.log1p(usage) / max(1.0, math.log1p(float(usage.max(initial=0))))
        proof = priors.column("proof").combine_chunks()
        self.proof_offsets = proof.offsets.to_numpy()
        self.proof_docs = proof.values.to_numpy()
        # in Arrow: a NumPy object array of every kind cost 0.1 s
        kinds = pc.fill_null(pc.is_in(priors.column("kind"), value_set=pa.array(list(THEOREM_KINDS), pa.string())), False)
        kinds = kinds.to_numpy(zero_copy_only=False).astype(bool)
        self.neighbour_ok = kinds & (np.diff(self.proof_offsets) > 0)
        self.neighbour_rows = np.flatnonzero(self.neighbour_ok)
        self.weights = weights if weights is not None else read_weights(base)["weights"]
        self.model = read_model(base) if weights is None else None  # explicit weights: the linear ranker alone
        self._lazy = lazy
        self._open_constants(shared)
        self._open_extra(priors)
        self._open_file_proofs(base)

    def _open_file_proofs(self, base: Path) -> None:
        """Every row's proof references (premises/file_proofs.parquet) as CSR offsets and rows; a
        release built before them reads none (`above`, `knn_above` stay 0)."""
        path = base / FILE_PROOFS_FILE
        if not path.is_file():
            self.file_proof_offsets = np.zeros(self.n + 1, dtype=np.int64)
            self.file_proof_docs = np.zeros(0, dtype=np.int64)
            return
        proof = pq.read_table(path).column("proof").combine_chunks()
        if len(proof) != self.n:
            raise ValueError(f"{self.release}: {FILE_PROOFS_FILE} has {len(proof)} rows, the priors {self.n}")
        self.file_proof_offsets = proof.offsets.to_numpy().astype(np.int64)
        self.file_proof_docs = proof.values.to_numpy().astype(np.int64)

    def _open_extra(self, priors) -> None:
        """Per row what EXTRA reads: `simp` (the priors' column), kind code, conclusion
        head id, statement size, namespace, and the (file run x row) counts of the training proofs
        of each file that name the row (the priors' `proof` lists: training proofs only)."""
        simp = pq.read_table(self.release / PREMISES_DIR / PRIORS_FILE, columns=["simp"]) if "simp" in pq.read_schema(
            self.release / PREMISES_DIR / PRIORS_FILE).names else None  # before issue 12's tenth session: none
        self.is_simp = np.zeros(self.n, np.float32) if simp is None else simp.column("simp").to_numpy(zero_copy_only=False).astype(np.float32)
        # per distinct value, then taken for every row (a Python pass per row was 0.5 s on whole Mathlib)
        self.kind_code = _coded(priors.column("kind"), lambda k: KIND_CODES.get(k, 5)).astype(np.float32)
        heads = pq.read_table(ReleaseLayout(self.release).table("formal_statements"), columns=["conclusion_head"]).column("conclusion_head")
        self.head_id = {h: i for i, h in enumerate(sorted(h for h in pc.unique(heads).to_pylist() if h))}
        self.heads = _coded(heads, lambda h: self.head_id.get(h, -1) if h else -1)
        self.size = np.log1p(np.diff(self.const_offsets)).astype(np.float32)
        names = priors.column("name").combine_chunks()  # the rows' names (`self.names`)
        namespaces = pc.if_else(pc.match_substring(names, "."), pc.replace_substring_regex(names, r"\.[^.]*$", ""), "")
        encoded = pc.dictionary_encode(namespaces)  # ids in the order namespaces first occur
        self.namespace_id = {s: i for i, s in enumerate(encoded.dictionary.to_pylist())}  # a row's namespace as an id
        self.namespace = encoded.indices.to_numpy().astype(np.int64)
        lengths = np.diff(self.proof_offsets)
        owner = np.repeat(self.file_ids[:lengths.size], lengths)
        self.file_use = scipy.sparse.csr_matrix((np.ones(owner.size, np.float32), (owner, self.proof_docs)),
                                          shape=(len(self.run_files), self.n))

    def _extra(self, docs: np.ndarray, constants: list[str], conclusion: tuple | None, scope: Scope | None) -> np.ndarray:
        """The EXTRA columns of the candidate rows."""
        goal_head = head(conclusion) if conclusion is not None else None
        head_eq = (self.heads[docs] == self.head_id.get(goal_head, -2)).astype(np.float32)
        spaces = [self.namespace_id[s] for s in {c.rsplit(".", 1)[0] for c in constants if "." in c} if s in self.namespace_id]
        namespace = np.isin(self.namespace[docs], spaces).astype(np.float32)
        use = np.zeros(docs.size, dtype=np.float32)
        if scope is not None and scope.depth is not None and docs.size:
            direct = np.flatnonzero(scope.depth[self.file_start[:-1]] == 1)
            if direct.size:
                use = np.log1p(np.asarray(self.file_use[direct][:, docs].sum(axis=0)).ravel()).astype(np.float32)
        return np.column_stack([self.is_simp[docs], self.kind_code[docs], head_eq, namespace, self.size[docs], use])

    def _open_constants(self, shared: dict[str, str] | None) -> None:
        """Each row's statement constants (the formal index's, as integer ids) and their idf, the
        rows of each file, the resolver the goal's constants go through, the co-occurrence matrix.
        `shared`: name -> the str object the ranker holds it as (None: as read)."""
        consts = pq.read_table(ReleaseLayout(self.release).table("formal_statements"), columns=["constants"]).column("constants").combine_chunks()
        encoded = pc.dictionary_encode(consts.values)
        self.const_offsets = consts.offsets.to_numpy().astype(np.int64)
        self.const_ids = encoded.indices.to_numpy().astype(np.int64)
        vocab = shared_names(encoded.dictionary.to_pylist(), shared)
        self.constant_id = {c: i for i, c in enumerate(vocab)}
        df = np.bincount(self.const_ids, minlength=len(vocab)).astype(np.float32)
        self.constant_idf = np.log((self.n + 1) / (df + 0.5)).astype(np.float32)
        base = self.release / PREMISES_DIR
        located = pq.read_table(base / PRIORS_FILE, columns=[c for c in ("file", "line") if c in pq.read_schema(base / PRIORS_FILE).names])
        files = pc.dictionary_encode(located.column("file").combine_chunks())
        ids = files.indices.to_numpy()  # rows come in (corpus, file, line) order: a file is one run of rows
        self.file_ids = np.concatenate([[0], np.cumsum(ids[1:] != ids[:-1])]) if ids.size else ids
        self.file_start = np.searchsorted(self.file_ids, np.arange(int(self.file_ids.max(initial=-1)) + 2))
        self.file_names = files.dictionary.to_pylist()
        self.run_files = [self.file_names[int(ids[i])] for i in self.file_start[:-1]] if ids.size else []
        self.file_run = {f: i for i, f in enumerate(self.run_files)}
        self.lines = located.column("line").to_numpy() if "line" in located.column_names else None  # before issue 12's 9th session: none
        if not self._lazy:
            self.imports  # noqa: B018 - opened now: a server's first query naming a file does not wait for it
        self.cooc = None if self._lazy else self._cooccurrence(len(vocab))  # lazy: `_cooc_rows` per query
        self._resolver = ConstantResolver(self.names, lazy=True)
        self._builder = TelescopeBuilder()

    @cached_property
    def imports(self) -> FileGraph | None:
        """The import graph of the release's files (None: a release built before it)."""
        path = self.release / PREMISES_DIR / IMPORTS_FILE
        return FileGraph(pq.read_table(path), self.run_files) if path.is_file() else None

    def _cooc_rows(self, ids: np.ndarray):
        """`cooc[ids]` (distinct constant ids) made for those constants alone: the training theorems
        whose statements name them, times their proofs. Integer counts in float32 (exact), then
        scaled as `_cooccurrence` scales them: the same rows, in a few ms."""
        theorems = np.flatnonzero(np.diff(self.proof_offsets) > 0)
        rows, cols = _gather(self.const_offsets, self.const_ids, theorems)
        keep = np.isin(cols, ids)
        theorem, constant = rows[keep], cols[keep]
        used = np.unique(theorem)  # the theorems whose statements name any of them
        order = np.argsort(ids)
        at = order[np.searchsorted(ids[order], constant)]  # each entry's row among `ids`
        stmt = scipy.sparse.csr_matrix((np.ones(at.size, np.float32), (at, np.searchsorted(used, theorem))),
                                       shape=(ids.size, used.size))
        owner, docs = _gather(self.proof_offsets, self.proof_docs, theorems[used])
        proofs = scipy.sparse.csr_matrix((np.ones(docs.size, np.float32), (owner, docs)), shape=(used.size, self.n))
        counts = np.asarray(stmt.sum(axis=1)).ravel()
        return (scipy.sparse.diags((1.0 / np.maximum(counts, 1.0)).astype(np.float32)) @ (stmt @ proofs)).tocsr()

    def _cooccurrence(self, constants: int):
        """constant x row (CSR): the share of the training theorems whose statement names the
        constant whose proof names the row."""
        theorems = np.flatnonzero(np.diff(self.proof_offsets) > 0)

        def incidence(offsets, values, width):
            rows, cols = _gather(offsets, values, theorems)
            return scipy.sparse.csr_matrix((np.ones(cols.size, np.float32), (rows, cols)), shape=(theorems.size, width))

        stmt = incidence(self.const_offsets, self.const_ids, constants)
        proofs = incidence(self.proof_offsets, self.proof_docs, self.n)
        counts = np.asarray(stmt.sum(axis=0)).ravel()
        return (scipy.sparse.diags((1.0 / np.maximum(counts, 1.0)).astype(np.float32)) @ (stmt.T @ proofs)).tocsr()

    def constant_weights(self, constants: list[list[str]]) -> dict[int, float]:
        """constant id -> idf for the goal's constants (each alternative of an ambiguous name at its
        share of the idf)."""
        out: dict[int, float] = {}
        for alts in constants:
            for c in alts:
                cid = self.constant_id.get(c)
                if cid is not None:
                    out[cid] = max(out.get(cid, 0.0), float(self.constant_idf[cid]) / len(alts))
        return out

    def scope(self, file: str | None, line: int | None = None) -> Scope | None:
        """The rows a proof in `file` (a corpus file or a module name) at `line` can name: the
        files it imports, transitively (every other file when the release has no import graph),
        and its own declarations above `line` (all of them without a line). None without a file;
        GoalError for a file the release does not hold."""
        if file is None:
            return None
        name = file if file.endswith(".lean") or "/" in file else module_file(file)
        run = self.file_run.get(name)
        if run is None and (self.imports is None or name not in self.imports):
            raise GoalError(f"file: {file} is not a file of the release")
        depth = None
        if self.imports is not None:
            depth = self.imports.depths(name)[self.file_ids]
        if run is None:  # a file of the graph without declarations (tactics only)
            earlier, goal_row = np.zeros(0, dtype=np.int64), 0
        else:
            lo, hi = int(self.file_start[run]), int(self.file_start[run + 1])
            goal_row = hi if line is None or self.lines is None else lo + int(np.searchsorted(self.lines[lo:hi], line, side="left"))
            earlier = np.arange(lo, goal_row, dtype=np.int64)
        visible = None
        if depth is not None:
            visible = depth > 0
            visible[earlier] = True
        return Scope(name, visible, earlier, goal_row, depth, None if visible is None else np.flatnonzero(visible))

    def _file_features(self, docs: np.ndarray, scope: Scope) -> dict[str, np.ndarray]:
        """`earlier`, `near` and `imported` of the candidate rows (FILE_FEATURES but `knn_near`)."""
        earlier = np.isin(docs, scope.earlier)
        near = np.where(earlier, np.exp(-np.maximum(scope.goal_row - 1 - docs, 0) / NEAR_ROWS), 0.0)
        imported = np.zeros(docs.size, dtype=np.float32)
        if scope.depth is not None:
            d = scope.depth[docs]
            imported = np.where(d > 0, 1.0 / np.maximum(d, 1), 0.0)
        return {"earlier": earlier.astype(np.float32), "near": near.astype(np.float32), "imported": imported.astype(np.float32)}

    def _above_scores(self, scope: Scope, sims: np.ndarray | None) -> dict[str, np.ndarray | None]:
        """`above` and `knn_above` over every row: the proofs of the declarations above the goal in
        its file (scope.earlier; never the goal's own, never one below it) that name the row, each
        weighted by its nearness (`above`, scaled to a best of 1) or by its statement's similarity
        to the goal (`knn_above`, `sims` as `knn`'s, votes over their sum)."""
        out: dict[str, np.ndarray | None] = {"above": None, "knn_above": None}
        rows = scope.earlier
        if rows.size == 0:
            return out
        owner, named = _gather(self.file_proof_offsets, self.file_proof_docs, rows)
        if named.size == 0:
            return out
        near = np.exp(-(scope.goal_row - 1 - rows) / ABOVE_ROWS).astype(np.float32)
        above = np.bincount(named, weights=near[owner], minlength=self.n).astype(np.float32)
        out["above"] = above / above.max()
        if sims is not None:
            votes = sims[rows].astype(np.float32)
            if votes.max(initial=0.0) > 0:
                votes = (votes / votes.max()) ** NEIGHBOUR_POWER
                knn = np.bincount(named, weights=votes[owner], minlength=self.n).astype(np.float32)
                out["knn_above"] = knn / votes[np.unique(owner)].sum() if knn.any() else None
        return out

    # -- signals ------------------------------------------------------------------------------

    def goal_constants(self, goal: str, context: str) -> tuple[list[list[str]], tuple | None, list[tuple]]:
        """(the constants the goal and context name, each as its alternatives; the goal's conclusion
        tree; its hypotheses' trees). Resolved as the formal index resolves a statement's (notation, namespaces of the types
        it names, unique last components); a bare name with several declarations (`sin`) is each of
        them, up to MAX_ALTERNATIVES. Binder names and short names are variables."""
        if self.formal is None:
            return [], None, []
        tele = self._builder.of_declaration(context, goal, "")
        trees = [tele.conclusion, *tele.hypotheses] if tele is not None else []
        bound = {n for b in leading_groups(context)[0] for n in b.names}
        vocab = self.formal.vocab
        named, ambiguous = [], []
        for name in dict.fromkeys(m.group(0) for m in IDENT_IN.finditer(f"{context} {goal}")):
            if name in bound or name.startswith("_") or name in KEYWORDS:  # `Type*` is no `PSet.Type`, `fun` no `Conv.Path.fun`
                continue
            found = [name] if name in vocab.full else vocab.resolve(name) if "." in name else (
                [] if _BARE.match(name) else vocab.by_last.get(name, []))
            if len(found) == 1:
                named.append(found[0])
            elif 1 < len(found) <= MAX_ALTERNATIVES:
                ambiguous.append(sorted(found))
        resolved = self._resolver.constants("", leaf_symbols(trees), named) if trees else set(named)
        groups = [[c] for c in sorted(resolved) if c in vocab.full]
        groups += [alts for alts in ambiguous if not set(alts) & resolved]
        return groups, tele.conclusion if tele is not None else None, list(tele.hypotheses) if tele is not None else []

    def _formal_scores(self, constants: list[list[str]], conclusion: tuple | None) -> np.ndarray | None:
        """idf-weighted share of the goal's constants (and its conclusion head) each statement has."""
        if self.formal is None or not constants:
            return None
        score = np.zeros(self.n, dtype=np.float32)
        total = 0.0
        for alts in constants:
            docs = self.formal._any_of(alts)
            if docs.size == 0:
                continue
            w = math.log((self.n + 1) / (docs.size + 0.5))
            score[docs] += w
            total += w
        key = "h:" + head(conclusion) if conclusion is not None else ""
        if key and key != "h:*" and self.formal.df(key):
            w = self.formal.idf(key)
            score[self.formal.docs(key)] += w
            total += w
        return score / total if total > 0 else None

    def _pair_scores(self, conclusion: tuple | None, hypotheses: list[tuple]) -> np.ndarray | None:
        """idf-weighted share of the goal's operator pairs (`p:` keys of its conclusion and
        hypotheses) each statement has."""
        if self.formal is None or conclusion is None:
            return None
        score = np.zeros(self.n, dtype=np.float32)
        total = 0.0
        for key in sorted(k for k in tree_keys(hypotheses, conclusion) if k.startswith("p:")):
            if not self.formal.df(key):
                continue
            w = self.formal.idf(key)
            score[self.formal.docs(key)] += w
            total += w
        return score / total if total > 0 else None

    def _cooc_scores(self, weights: dict[int, float]) -> np.ndarray | None:
        """Σ idf(c) · P(a training proof names the row | its statement names c) over the goal's
        constants c, over Σ idf(c): "what did proofs of statements about these constants use"."""
        if not weights:
            return None
        ids = np.fromiter(weights, dtype=np.int64)
        w = np.fromiter(weights.values(), dtype=np.float32)
        rows = self.cooc[ids] if self.cooc is not None else self._cooc_rows(ids)
        out = np.asarray(rows.T @ w).ravel().astype(np.float32)
        return out / w.sum()

    def _local_scores(self, constants: list[list[str]], weights: dict[int, float]) -> np.ndarray | None:
        """idf-weighted share of the goal's (unambiguous) constants declared in the row's file."""
        score = np.zeros(self.n, dtype=np.float32)
        total = 0.0
        for alts in constants:
            if len(alts) != 1 or alts[0] not in self.doc_of:
                continue
            cid = self.constant_id.get(alts[0])
            w = weights.get(cid, 0.0) if cid is not None else 0.0
            f = self.file_ids[self.doc_of[alts[0]]]
            score[self.file_start[f]:self.file_start[f + 1]] += w
            total += w
        return score / total if total > 0 else None

    def _covered(self, docs: np.ndarray, weights: dict[int, float]) -> np.ndarray:
        """For each candidate, the idf-weighted share of its statement's constants the goal has
        (MePo's relevance: a lemma about the goal's vocabulary only)."""
        owner, flat = _gather(self.const_offsets, self.const_ids, docs)
        if not flat.size:
            return np.zeros(docs.size, dtype=np.float32)
        idf = self.constant_idf[flat]
        hit = np.isin(flat, np.fromiter(weights, dtype=np.int64)) if weights else np.zeros(flat.size, bool)
        total = np.bincount(owner, weights=idf, minlength=docs.size)
        got = np.bincount(owner, weights=idf * hit, minlength=docs.size)
        return np.where(total > 0, got / np.maximum(total, 1e-9), 0.0).astype(np.float32)

    def _knn_scores(self, sims: np.ndarray | None, rows: np.ndarray | None = None) -> np.ndarray | None:
        """Similarity-weighted votes of the proofs of the NEIGHBOURS most similar training theorems
        (`sims`: scaled BM25, plus the embedding channel's when the release has one; `rows`: only
        neighbours among these rows)."""
        if sims is None:
            return None
        among = self.neighbour_rows if rows is None else rows[self.neighbour_ok[rows]]
        near = sims[among]
        pick = np.arange(among.size)
        if among.size > NEIGHBOURS:  # the NEIGHBOURS best, ties at the cut by row (argpartition's choice is arbitrary)
            kth = np.partition(near, among.size - NEIGHBOURS)[among.size - NEIGHBOURS]
            above = np.flatnonzero(near > kth)
            pick = np.concatenate([above, np.flatnonzero(near == kth)[:NEIGHBOURS - above.size]])
        pick = pick[near[pick] > 0]
        if pick.size == 0:
            return None
        top, votes = among[pick], (near[pick] / near[pick].max()) ** NEIGHBOUR_POWER
        score = np.zeros(self.n, dtype=np.float32)
        for doc, v in zip(top.tolist(), votes.tolist()):
            score[self.proof_docs[self.proof_offsets[doc]:self.proof_offsets[doc + 1]]] += v
        return score / votes.sum()

    def _embedding_hits(self, text: str) -> list[tuple[int, float]]:
        if self.vector is None:
            return []
        hits = self.vector.search(text, DEPTH)
        return [(self.doc_of[n], s) for n, s in hits if n in self.doc_of]

    def candidates(self, goal: str, context: str = "", exclude: frozenset[str] = frozenset(),
                   file: str | None = None, line: int | None = None) -> Candidates:
        """The candidate rows and their FEATURES (no weights applied): what `rank` scores and what
        premises.fit fits the weights on. `exclude` (a benchmark's theorem itself) and the goal's
        own constants are no candidates, and the excluded rows do not vote either (BM25 scores and
        embedding hits are taken without them). With `file` (and `line`), only what that file can
        see is a candidate (`scope`) and FILE_FEATURES are set."""
        scope = self.scope(file, line)
        constants, conclusion, hypotheses = self.goal_constants(goal, context)
        weights = self.constant_weights(constants)
        drop = {self.doc_of[n] for n in exclude if n in self.doc_of}
        drop_rows = np.fromiter(drop, dtype=np.int64)
        drop |= {self.doc_of[c] for alts in constants if len(alts) == 1 for c in alts if c in self.doc_of}
        text = f"{context} {goal}".strip()
        embedded = [(d, x) for d, x in self._embedding_hits(text) if d not in drop_rows]
        lexical = self.statements.scores(text)
        if lexical is not None and drop_rows.size:
            lexical = lexical.copy()
            lexical[drop_rows] = 0.0
        lexical = _max_scaled(lexical)
        embedding = _relative(embedded, self.n)
        visible = scope.visible if scope is not None else None
        if not constants:  # nothing known to reason from: the embedding channel alone (rank_weights), else BM25
            fallback = "embedding" if embedded else "lexical"
            signals = {"lexical": lexical, "embedding": embedding}
        else:
            fallback = None
            sims = None if lexical is None and embedding is None else sum(x for x in (lexical, embedding) if x is not None)
            signals = {
                "lexical": lexical, "knn": self._knn_scores(sims),
                "formal": self._formal_scores(constants, conclusion), "pairs": self._pair_scores(conclusion, hypotheses),
                "usage": self.usage, "embedding": embedding,
                "cooc": self._cooc_scores(weights), "local": self._local_scores(constants, weights),
            }
            if visible is not None:
                signals["knn_near"] = self._knn_scores(sims, scope.rows)
            if scope is not None:
                signals |= self._above_scores(scope, sims)
        docs = self._pool(signals, scope)  # what the file cannot see is no candidate
        if drop:
            docs = docs[~np.isin(docs, np.fromiter(drop, dtype=np.int64))]
        features = np.zeros((docs.size, len(FEATURES)), dtype=np.float32)
        for j, name in enumerate(FEATURES):
            if signals.get(name) is not None:
                features[:, j] = signals[name][docs]
        names = sorted({c for alts in constants for c in alts})
        extra = None
        if fallback is None:
            features[:, FEATURES.index("covered")] = self._covered(docs, weights)
            if scope is not None:
                for name, values in self._file_features(docs, scope).items():
                    features[:, FEATURES.index(name)] = values
            extra = self._extra(docs, names, conclusion, scope)
        return Candidates(docs, features, names, fallback, extra)

    def _pool(self, signals: dict[str, np.ndarray | None], scope: Scope | None = None) -> np.ndarray:
        """The best DEPTH rows of each signal, every row the neighbours' proofs name and the
        NEAR_POOL declarations just above the goal in its file."""
        rows = scope.rows if scope is not None and scope.visible is not None else None
        pool = []
        for name, s in signals.items():
            if s is None:
                continue
            if name.startswith("knn"):
                hit = np.flatnonzero(s > 0)
                pool.append(hit if rows is None else hit[scope.visible[hit]])
            else:  # the best DEPTH the file can see
                pool.append(_top(s, DEPTH) if rows is None else rows[_top(s[rows], DEPTH)])
        if scope is not None and scope.earlier.size:
            pool.append(scope.earlier[-NEAR_POOL:])
        return np.unique(np.concatenate(pool)) if pool else np.zeros(0, dtype=np.int64)

    def rank(self, goal: str, context: str = "", k: int = 32, exclude: frozenset[str] = frozenset(),
             file: str | None = None, line: int | None = None) -> PremiseResult:
        """The k declarations most likely to be named by a proof of `goal` under `context`, in
        `file` above `line` when given (`scope`); raises GoalError when either does not parse or
        the file is not the release's."""
        check_goal(goal, context)
        cand = self.candidates(goal, context, exclude, file, line)
        order, scores = ordered(cand, rank_weights(cand, self.weights), k, self.model)
        premises = [Premise(self.names[int(cand.docs[i])], round(float(scores[i]), 6),
                            {f: round(float(cand.features[i, j]), 6) for j, f in enumerate(FEATURES) if cand.features[i, j]})
                    for i in order]
        notes = []
        if cand.fallback:
            notes.append(f"the goal names no known constant: ranked by the {cand.fallback} channel alone")
        return PremiseResult(goal, context, premises, cand.constants, cand.fallback, notes)


def rank_weights(cand: Candidates, weights: dict[str, float]) -> dict[str, float]:
    """The weights a query is ranked under: the fitted ones, or its fallback channel alone."""
    return weights if cand.fallback is None else {cand.fallback: 1.0}


def _coded(column: pa.ChunkedArray | pa.Array, code) -> np.ndarray:
    """`np.array([code(v) for v in column])` (int64; None for a null), with `code` asked once per
    distinct value."""
    encoded = pc.dictionary_encode(column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column)
    values = np.asarray([code(v) for v in encoded.dictionary.to_pylist()] + [code(None)], dtype=np.int64)
    return values[pc.fill_null(encoded.indices, len(encoded.dictionary)).to_numpy()]


def weight_vector(weights: dict[str, float]) -> np.ndarray:
    """The weights in FEATURES order (float32, what a candidate's features are multiplied by)."""
    return np.array([weights.get(f, 0.0) for f in FEATURES], dtype=np.float32)


def ordered(cand: Candidates, weights: dict[str, float] | np.ndarray, k: int, model: TreeModel | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """(candidate positions of the k best by the weighted sum, positive scores only, ties by row;
    every candidate's score). `weights` as a dict or as `weight_vector` gives (the fit scores
    hundreds of settings). Only candidates at or above the k-th best score are sorted: the same
    k, about 40 times fewer to sort for a whole-Mathlib goal's 1,000 candidates. With `model` (and
    a goal that is no fallback), the linear score's best RERANK are ordered by the trees instead
    (`reranked`); the scores returned are then the trees' for those rows."""
    w = weights if isinstance(weights, np.ndarray) else weight_vector(weights)
    if model is not None and cand.extra is not None:
        return reranked(cand, w, k, model)
    scores = cand.features @ w
    positive = np.flatnonzero(scores > 0)
    if positive.size > k:
        values = scores[positive]
        kth = np.partition(values, positive.size - k)[positive.size - k]  # the k-th best score
        positive = positive[values >= kth]  # every row that can be among the k best, ties at the cut too
    return positive[np.lexsort((cand.docs[positive], -scores[positive]))][:k], scores


def model_inputs(cand: Candidates, linear: np.ndarray, rows: np.ndarray, features: list[str] | None = None) -> np.ndarray:
    """The MODEL_FEATURES columns of the candidate positions `rows` (`linear`: every candidate's
    linear score); `features`: the columns a model was fitted on, by name (a model fitted before a
    signal was added reads the columns it knows)."""
    x = np.column_stack([cand.features[rows], linear[rows], cand.extra[rows]]).astype(np.float64)
    if features is None or tuple(features) == MODEL_FEATURES:
        return x
    return x[:, [MODEL_FEATURES.index(f) for f in features]]


def reranked(cand: Candidates, w: np.ndarray, k: int, model: TreeModel) -> tuple[np.ndarray, np.ndarray]:
    """`ordered` with the tree model: the RERANK best by the linear score `w` (positive only,
    ties by row), re-ordered by the trees (ties by row), the first k."""
    top, linear = ordered(cand, w, RERANK)
    scores = np.zeros(cand.docs.size)
    if top.size == 0:
        return top, scores
    scores[top] = model.predict(model_inputs(cand, linear, top, model.features))
    return top[np.lexsort((cand.docs[top], -scores[top]))][:k], scores


def read_weights(base: Path) -> dict:
    """`premises/weights.json` ({"weights": …, how they were fitted}), else DEFAULT_WEIGHTS."""
    path = base / WEIGHTS_FILE
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"weights": dict(DEFAULT_WEIGHTS), "fitted": False}


def _gather(offsets: np.ndarray, values: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position in `rows`, value) for every value of the CSR rows `rows` (offsets, values)."""
    starts, lengths = offsets[rows], offsets[rows + 1] - offsets[rows]
    owner = np.repeat(np.arange(rows.size), lengths)
    index = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths) + np.repeat(starts, lengths)
    return owner, values[index]


def _max_scaled(scores: np.ndarray | None) -> np.ndarray | None:
    if scores is None:
        return None
    top = float(scores.max(initial=0.0))
    return (scores / top).astype(np.float32) if top > 0 else None


def _relative(hits: list[tuple[int, float]], n: int) -> np.ndarray | None:
    """Embedding similarities as (s - last) / (best - last) in (0, 1], dense over the rows."""
    if not hits:
        return None
    score = np.zeros(n, dtype=np.float32)
    best, last = hits[0][1], hits[-1][1]
    span = best - last if best > last else 1.0
    for doc, s in hits:
        score[doc] = max(score[doc], max(1e-3, (s - last) / span))
    return score


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    positive = np.flatnonzero(scores > 0)
    if positive.size <= k:
        return positive
    return positive[np.argpartition(-scores[positive], k - 1)[:k]]
