"""One opened release, as the server answers from it: the search engine, the premise ranker (when
the release has a premise index), node locations, the declaration tables (through the release's
DuckDB file) and the manifest summary. Also the input limits every front end (HTTP, MCP) applies.

Opening verifies every file against the manifest's sha256 first, so a corrupt or half-copied
release is refused before anything reads it. An opened release is never modified; the swap
holder (swap.py) replaces it whole."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from urllib.parse import quote

import duckdb
import numpy as np
import pyarrow.parquet as pq

from mathindex.embed import onnx, torch_ops
from mathindex.embed.base import MAX_ENCODE_CHARS
from mathindex.embed.queries import token_rows
from mathindex.errors import IntegrityError
from mathindex.formal.query import FormalQueryError, UnknownConstant
from mathindex.formula.api import describe_formula
from mathindex.limits import BadInput
from mathindex.names import LEAN_PREFIX
from mathindex.premises import GoalError
from mathindex.premises.api import ranker_of
from mathindex.premises.priors import PREMISES_DIR, PRIORS_FILE
from mathindex.search.engine import VERIFY_MODES, SearchEngine
from mathindex.search.fusion import Hit
from mathindex.search.identifier import unknown_identifier
from mathindex.search.kinds import query_kind, runs_formula_channel
from mathindex.serve.encoder import PackedEncoder
from mathindex.serve.mathml import latex_mathml
from mathindex.serve.responses import (
    Citation,
    DeclarationResponse,
    Dependency,
    FormalHit,
    FoldedNode,
    FormalSearchResponse,
    FormulaResponse,
    Location,
    Node,
    PremiseHit,
    PremisesResponse,
    ReleaseResponse,
    ResolveResponse,
    SearchHit,
    SearchResponse,
)
from mathindex.store.integrity import integrity_message, read_manifest, verify_release
from mathindex.store.layout import ReleaseLayout

log = logging.getLogger(__name__)

PREMISES_K = 32  # premises per answer unless asked
MAX_LISTED = 200  # dependencies and citations listed per declaration (the totals say how many more)
DUCKDB_MEMORY = "512MB"  # DuckDB's buffer pool for declaration look-ups: bounds the server's memory


class ReleaseRefused(IntegrityError):
    """A release that cannot be served: a file missing or altered, or (for a swap) a channel that
    the release being served has and this one fails to open (the CLI's exit 4)."""


class ServedRelease:
    """A verified, opened release; every method is safe to call from several threads at once."""

    def __init__(self, path: Path, *, verify: bool | str = True, cache_size: int = 1024, warm: bool = True,
                 premises: bool = True, base_url: str | None = None, lazy: bool = False):
        """`verify`: "full" (or True) checks every file's sha256 first (ReleaseRefused), "quick" every
        file's size (the engine's IntegrityError, as `mathindex search` without --verify), "none"
        (or False) nothing. `warm`: one query through every channel before the first answer (a
        server's; a one-query CLI does without, and starts no SymPy worker until a formula query:
        `ready_for`). `premises`: open the premise ranker (else `premises` answers 404 and
        `unavailable` names it). `base_url`: where the HTTP server of this root is reached
        (`https://host:port`), for the absolute `url` of each location; None: the relative
        `source_url` only. `lazy` (a one-query CLI): each channel opens at the first query that
        runs it (SearchEngine's `lazy`): same answers, less to open."""
        path = Path(path)
        self.base_url = base_url.rstrip("/") if base_url else None
        started = time.monotonic()
        mode = {True: "full", False: "none"}.get(verify, verify)
        if mode not in VERIFY_MODES:
            raise ValueError(f"verify must be one of {', '.join(VERIFY_MODES)}, not {verify!r}")
        problems = verify_release(path) if mode == "full" else []
        if problems:
            raise ReleaseRefused(integrity_message(path, problems))
        self.path = path
        self.manifest = read_manifest(path)
        self.release_id: str = self.manifest.release_id
        # verified above (or the caller said not to); queries encoded without torch where the exports allow
        self.engine = SearchEngine(path, verify="quick" if mode == "quick" else "none", queries_only=True, preload=warm,
                                   lazy=lazy)
        for channel, why in self.engine.unavailable.items():  # reported with every answer; swap.py compares
            log.warning("release %s: channel %s unavailable: %s", self.release_id, channel, why)
        _thread_safe_encoding(self.engine)
        self.premise_ranker, self.premises_missing = self._open_premises() if premises else (None, "not opened")
        self._node_ids = self.engine.nodes.column("node_id")  # the engine's table: nodes.parquet is read once
        self._corpora = pq.read_table(ReleaseLayout(path).table("nodes"), columns=["corpus"]).column("corpus")
        self._node_cols = {c: self.engine.nodes.column(c) for c in ("kind", "title", "file", "line")}
        self._row_of = self.engine.row_of
        self._corpus_roots = {c.name: Path(c.path) for c in self.manifest.corpora if c.path}
        self._db = _open_duckdb(ReleaseLayout(path).duckdb)
        self._db_lock = threading.Lock()
        self._dep_roles = "role" in self._columns("dependencies")
        self._informal = {"decl_id", "text"} <= self._columns("informalisations")
        metrics = ReleaseLayout(path).metrics
        self.metrics = json.loads(metrics.read_text(encoding="utf-8")) if metrics.is_file() else {}
        self._cache: OrderedDict[tuple[str, int], SearchResponse] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()
        if warm:
            self._warm()
        self.opened_at = time.time()
        log.info("opened release %s in %.1f s", self.release_id, time.monotonic() - started)

    # -- queries ---------------------------------------------------------------------------------

    def search(self, query: str, k: int) -> SearchResponse:
        """The engine's ranked hits with their locations (answers are cached per release)."""
        key = (query, k)
        with self._cache_lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached.model_copy(update={"cached": True})
        started = time.perf_counter()
        result = self.engine.search(query, k)
        hits = [SearchHit(rank=i, score=h.score, channels=h.channels, also=self._folded(h), **dict(node))
                for i, (h, node) in enumerate(zip(result.hits, self._nodes([h.name for h in result.hits])), 1)]
        answer = SearchResponse(release_id=self.release_id, query=query, query_kind=query_kind(query), k=k,
                                match=result.match, notice=result.notice, hits=hits, resolved=result.resolved, unavailable=result.unavailable,
                                took_ms=round((time.perf_counter() - started) * 1000, 2))
        if self._cache_size > 0:
            with self._cache_lock:
                self._cache[key] = answer
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return answer

    def formal(self, query: str, k: int) -> FormalSearchResponse:
        """Loogle mode: the declarations matching every term of `query` (constants, "fragments",
        patterns with `_` and `?x`, `⊢ conclusion`), ranked; BadInput 422 for a query that does not
        parse or names an unknown constant, 404 for a release without a formal index."""
        formal = self.engine.channel("formal")
        if formal is None:
            raise BadInput(f"release {self.release_id} has no formal index", 404)
        started = time.perf_counter()
        try:
            res = formal.index.loogle(query, k)
        except (FormalQueryError, UnknownConstant) as exc:
            raise BadInput(" ".join(str(exc).split()), 422) from None
        hits = [FormalHit(rank=i, exact_conclusion=h.exact, **dict(node))
                for i, (h, node) in enumerate(zip(res.hits, self._nodes([h.name for h in res.hits])), 1)]
        return FormalSearchResponse(release_id=self.release_id, query=query, k=k, count=res.count,
                                    count_exact=res.exact_count, hits=hits, notes=res.notes,
                                    took_ms=round((time.perf_counter() - started) * 1000, 2))

    def resolve(self, query: str) -> ResolveResponse:
        """The resolver's nodes for `query`, and the notice when it names an identifier the release lacks."""
        names = self.engine.resolver.resolve(query)
        return ResolveResponse(release_id=self.release_id, query=query, nodes=self._nodes(names),
                               notice=None if names else unknown_identifier(query))

    def premises(self, goal: str, context: str = "", k: int = PREMISES_K, file: str | None = None,
                 line: int | None = None) -> PremisesResponse:
        """The k declarations a proof of the Lean `goal` under `context` is likely to name, with their
        locations; in `file` (a file of the release or its module name) above `line`, only what that
        file can name (`PremiseRanker.scope`). BadInput 422 for a goal or context that does not parse
        (with the position) or a file the release does not hold, 404 for a release without a premise index."""
        if self.premise_ranker is None:
            raise BadInput(self.premises_missing or f"release {self.release_id} has no premise index", 404)
        started = time.perf_counter()
        try:
            result = self.premise_ranker.rank(goal, context, k, file=file, line=line)
        except GoalError as exc:
            raise BadInput(" ".join(str(exc).split()), 422) from None
        hits = [PremiseHit(rank=i, score=p.score, signals=p.signals, **dict(node))
                for i, (p, node) in enumerate(zip(result.premises, self._nodes([p.name for p in result.premises])), 1)]
        return PremisesResponse(release_id=self.release_id, goal=goal, context=context, k=k, file=file, line=line,
                                premises=hits,
                                constants=result.constants, fallback=result.fallback, notes=result.notes,
                                took_ms=round((time.perf_counter() - started) * 1000, 2))

    @property
    def unavailable(self) -> dict[str, str]:
        """What this release cannot answer, with the reason: the engine's channels that failed to
        open, and `premises` when there is no premise ranker (swap.py refuses a release that lost
        one the served release has)."""
        out = dict(self.engine.unavailable)
        if self.premise_ranker is None:
            out["premises"] = self.premises_missing or "no premise index"
        return out

    def declaration(self, name: str) -> DeclarationResponse | None:
        """The node's table row, what it depends on, what cites it and where it is defined; None
        when the release has no node of that name."""
        i = self._row_of.get(name)
        if i is None:
            return None
        node = self._nodes([name])[0]
        node_id = self._node_ids[i].as_py()
        informal = None
        if node_id.startswith(LEAN_PREFIX):
            row, deps, n_deps, cites, n_cites = self._lean_declaration(name)
            if self._informal and row.get("decl_id"):
                found = self._query("SELECT text FROM informalisations WHERE decl_id = ? AND text <> '' LIMIT 1",
                                    [row["decl_id"]])
                informal = found[0][0] if found else None
        else:
            row, deps, n_deps, cites, n_cites = self._latex_statement(node_id, name)
        group = self.engine.same_as.group_of.get(name, ())
        return DeclarationResponse(release_id=self.release_id, node=node, row=row, dependencies=deps,
                                   dependencies_total=n_deps, cited_by=cites, cited_by_total=n_cites,
                                   defined_at=node.location, informal=informal, same_as=[n for n in group if n != name])

    def is_statement(self, name: str) -> bool:
        """Whether `name` is a LaTeX statement of this release (its title is LaTeX, not Lean)."""
        i = self._row_of.get(name)
        return i is not None and not self._node_ids[i].as_py().startswith(LEAN_PREFIX)

    def summary(self) -> ReleaseResponse:
        m = self.manifest
        return ReleaseResponse(
            release_id=self.release_id, published=m.published, previous_release=m.previous_release,
            code_version=m.code_version, corpora=[c.model_dump(mode="json") for c in m.corpora],
            embedder=m.embedder.model_dump(mode="json"), row_counts=m.row_counts, gate=m.gate.model_dump(mode="json"),
            metrics=self.metrics, opened_at=self.opened_at,
            premises=m.premises.model_dump(mode="json") if m.premises and self.premise_ranker is not None else None)

    def source_file(self, corpus: str, file: str) -> Path | None:
        """The corpus file a hit points at, when the corpus is on this machine; None for anything
        outside the corpus root (no path escapes it)."""
        root = self._corpus_roots.get(corpus)
        if root is None or not root.is_dir():
            return None
        root = root.resolve()
        path = (root / file).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            return None
        return path

    # -- helpers ---------------------------------------------------------------------------------

    def _folded(self, hit: Hit) -> list[FoldedNode]:
        """The members folded into `hit`, with their locations: "also in Stacks 0BQX"."""
        via = self.engine.same_as.via
        return [FoldedNode(also_in=via[m.name].capitalize() if self.is_statement(m.name) and m.name in via
                           else node.location.corpus or "", via=via.get(m.name), score=m.score, channels=m.channels,
                           **dict(node)) for m, node in zip(hit.also, self._nodes([m.name for m in hit.also]))]

    def _open_premises(self):
        """(the release's PremiseRanker, None), or (None, why not): a release built before premise
        selection, or a premise index that fails to open (logged; search still answers)."""
        if not (self.path / PREMISES_DIR / PRIORS_FILE).is_file():
            return None, (f"release {self.release_id} has no premise index ({PREMISES_DIR}/{PRIORS_FILE}): "
                          "it was built before premise selection")
        try:
            return ranker_of(self.engine), None
        except Exception as exc:  # noqa: BLE001 - reported per request (404) and in the swap check
            reason = f"release {self.release_id}: the premise index does not open: {type(exc).__name__}: {exc}"
            log.warning("%s", reason)
            return None, " ".join(reason.split())

    def _nodes(self, names: list[str]) -> list[Node]:
        """The named nodes with their kind, title and location; a name the release lacks has a bare
        location. (One scalar per column each: a `take` over the chunked nodes table cost 14 ms on
        whole Mathlib, a one-row slice 23 us, four scalars about 4 us.)"""
        out = []
        for name in names:
            i = self._row_of.get(name)
            if i is None:
                out.append(Node(name=name, location=Location()))
                continue
            row = {c: self._node_cols[c][i].as_py() for c in ("kind", "title", "file", "line")}
            corpus = self._corpora[i].as_py()
            url = None
            if corpus in self._corpus_roots and row["file"]:
                url = f"/source/{quote(corpus, safe='')}/{quote(row['file'])}" + (f"#L{row['line']}" if row["line"] else "")
            out.append(Node(name=name, kind=row["kind"], title=row["title"],
                            location=Location(corpus=corpus, file=row["file"], line=row["line"], source_url=url,
                                              url=self.base_url + url if url and self.base_url else None)))
        return out

    def _query(self, sql: str, params: list) -> list[tuple]:
        with self._db_lock:  # one DuckDB connection; look-ups take milliseconds
            return self._db.execute(sql, params).fetchall()

    def _columns(self, table: str) -> set[str]:
        try:
            return {r[0] for r in self._query(f'DESCRIBE "{table}"', [])}
        except Exception:  # noqa: BLE001 - an older release without the table: no dependencies
            return set()

    def _row(self, sql: str, params: list) -> dict:
        with self._db_lock:
            cur = self._db.execute(sql, params)
            first = cur.fetchone()
            names = [d[0] for d in cur.description]
        return {} if first is None else {n: _jsonable(v) for n, v in zip(names, first)}

    def _lean_declaration(self, name: str):
        row = self._row("SELECT * FROM declarations WHERE full_name = ? ORDER BY corpus, file, line_start LIMIT 1", [name])
        role = "role" if self._dep_roles else "'statement'"
        # one scan each way (the reverse one reads all 1.4 M rows of whole Mathlib: ~30 ms)
        deps = self._query(f"SELECT target, resolved, {role} FROM dependencies WHERE full_name = ? "
                           f"ORDER BY {role} DESC, target", [name])
        cites = self._query(f"SELECT full_name, {role} FROM dependencies WHERE target = ? AND resolved "
                            f"ORDER BY full_name", [name])
        return (row, [Dependency(target=t, resolved=r, role=ro) for t, r, ro in deps[:MAX_LISTED]], len(deps),
                [Citation(name=n, role=ro) for n, ro in cites[:MAX_LISTED]], len(cites))

    def _latex_statement(self, node_id: str, name: str):
        row = self._row("SELECT * FROM latex_statements WHERE node_id = ? LIMIT 1", [node_id])
        deps = [Dependency(target=c, resolved=c in self._row_of, role="proof") for c in row.get("cites") or []]
        citing = self._query("SELECT tag, full_label, label, statement_id FROM latex_statements "
                             "WHERE list_contains(cites, ?) ORDER BY file, line_start", [name])
        cites = [Citation(name=next(x for x in r if x), role="proof") for r in citing]
        return row, deps[:MAX_LISTED], len(deps), cites[:MAX_LISTED], len(cites)

    def ready_for(self, query: str) -> None:
        """What an unwarmed release (`warm=False`) loads before answering `query` as a warmed server
        answers it: the SymPy worker of the formula channel's canonical keys, for a formula query
        that asks for one (a piece SymPy can read: `a^2 + b^2 = c^2`, not `Nat.Prime.two_le`, whose
        answer the worker does not change; loading it costs 0.6 s of CPU)."""
        if not runs_formula_channel(query):
            return
        formula = self.engine.channel("formula")
        if formula is not None and formula.index.asks_canonical(self.engine.expanded(query), formula.skip_variables):
            formula.index.wait_ready(60.0)

    def _warm(self) -> None:
        """One query through every channel, and SymPy loaded for formula queries, before serving."""
        self.engine.search("warm up", 1)
        if self.premise_ranker is not None:
            self.premise_ranker.rank("a + b = b + a", "", 1)
        if self.engine.formula is not None:
            self.engine.formula.index.wait_ready(60.0)

    def close(self) -> None:
        with self._db_lock:
            self._db.close()


def describe(latex: str) -> FormulaResponse:
    """`/formula`: the tree, canonical form and status of one formula, with MathML for LaTeX input;
    a formula that neither the grammar nor the MathML converter can read is a BadInput (422)."""
    if not latex.strip():
        raise BadInput("latex is empty")
    d = describe_formula(latex)
    if d["status"] == "error":
        raise BadInput(f"malformed formula: {' '.join((d.get('reason') or 'unreadable').split())[:300]}", 422)
    mathml = latex_mathml(latex.strip().strip("$")) if d["syntax"] == "latex" else None  # sanitised
    return FormulaResponse(input=latex, mathml=mathml, **{k: d.get(k) for k in (
        "tree", "tree_text", "path_tokens", "canonical", "canonical_status", "parser", "status", "syntax", "reason")})


def _open_duckdb(path: Path):
    return duckdb.connect(str(path), read_only=True, config={"threads": 1, "memory_limit": DUCKDB_MEMORY})


def _jsonable(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def _thread_safe_encoding(engine) -> None:
    """Query encodes from several threads at once: tokenising is serialised (a fast tokenizer shared
    between threads fails with 'Already borrowed': each call sets its truncation state; the server
    tokenises with a copy set once, the embedder's `query_tokenizer`, under the same lock). The forward pass is the
    embedder's own backend. With its checked packed ONNX export, the texts in flight run as packs
    (serve/encoder.py), one pack per core at a time; else each thread runs its own
    single-threaded pass (its checked ONNX export, else torch). Same tokens, same model, so the
    same vectors as the engine's `encode` (and as `mathindex search` and `bench`) within the
    exports' checked cosine. Never the embedder's process pool."""
    vector = engine.channel("vector")
    if vector is None:
        return
    embedder = vector.embedder
    lock = threading.Lock()
    own = embedder.query_tokenizer()  # None: not a fast tokenizer (then a full embedder's own)

    def tokenise(texts: list[str]) -> dict:
        with lock:
            if own is None:
                return torch_ops.tokenise(embedder.model.tokenizer, [t[:MAX_ENCODE_CHARS] for t in texts], embedder.max_seq_length)
            return token_rows(own, texts)

    packed = _packed_onnx(embedder)
    if packed is not None:
        sess = onnx.session(packed, 1)
        packer = PackedEncoder(lambda texts: tokenise(texts)["input_ids"], lambda rows: onnx.run_packed(sess, rows),
                               embedder.dim, runners=os.cpu_count() or 1)
        embedder.encode, embedder.packer = packer.encode, packer
        return
    if embedder.onnx_file is not None:
        sess = onnx.session(embedder.onnx_file, 1)

        def forward(enc, idx):
            return onnx.run(sess, embedder._feeds(enc, idx))
    else:
        def forward(enc, idx):
            model = embedder.model
            return torch_ops.forward(model, model.tokenizer, enc, idx, model.device, embedder.bf16)

    def encode(texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return forward(tokenise(texts), np.arange(len(texts)))

    embedder.encode = encode


def _packed_onnx(embedder):
    """The embedder's packed ONNX export, or None (logged) when it has none or cannot make one here
    (a read-only root)."""
    try:
        return embedder.packed_onnx()
    except OSError as exc:
        log.warning("query encoding: no packed ONNX export (%s); each query runs alone", exc)
        return None
