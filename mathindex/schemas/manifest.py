"""Pydantic models for the release manifest and the sources file (both refuse unknown keys)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationInfo, field_serializer,
                      field_validator, model_serializer, model_validator)

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_URL = r"^https?://[^\s<>\"'`()|\[\]]+$"  # no character that would end a Markdown link or table cell


LENIENT = "keys of another version"  # the validation context under which `Manifest.from_json` reads
Number = int | float  # a figure as its writer gave it: an int stays an int, a float a float (the JSON is unchanged)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Recorded(_Strict):
    """A part of the manifest: a key that is not declared is an error when written; read under the
    `LENIENT` context (`Manifest.from_json`), such keys are kept in `unknown` and never written."""

    unknown: dict = Field(default_factory=dict, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _keep_unknown(cls, data: Any, info: ValidationInfo) -> Any:
        if not (info.context or {}).get(LENIENT) or not isinstance(data, dict):
            return data
        names = {f.alias or k for k, f in cls.model_fields.items() if k != "unknown"}
        return {**{k: v for k, v in data.items() if k in names}, "unknown": {k: v for k, v in data.items() if k not in names}}


class _Figures(_Recorded):
    """A section a stage reports (an index's figures, the gate): written with exactly the keys it
    was given, so a key one build path leaves out stays out, and a release reads back as written."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)

    @model_serializer(mode="wrap")
    def _given_keys(self, handler: SerializerFunctionWrapHandler) -> dict:
        given = {type(self).model_fields[k].alias or k for k in self.model_fields_set}
        return {k: v for k, v in handler(self).items() if k in given}


class Upstream(_Strict):
    """Where a laid-out corpus comes from: a public repository, its licence (an SPDX-style name and
    the licence file's path in that repository) and the files laid out (glob patterns, `*` within
    one directory, `**` across directories). The commit is the source's own `commit`, or the one
    its release `tag` names."""

    repository: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
    license: str
    license_file: str
    files: list[str] = Field(min_length=1)
    # the folder of the repository laid out as the corpus root, so that module names start below it
    # (Lean core's `src`: `src/Init/Data/List/Basic.lean` is laid out as `Init/Data/List/Basic.lean`)
    root: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$")
    # a release tag naming the commit where the source cannot name it yet (no `commit`): resolved
    # when the corpus is laid out; with a `commit` too, the tag must name that commit
    tag: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


class SourceSpec(_Strict):
    """One corpus input. Local paths are pinned by content sha256; `commit` and `sha256`, when
    given, are verified and a mismatch refuses the build. Moving refs (`ref: main`) are refused."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    kind: Literal["lean", "latex"]
    path: str
    commit: str | None = None
    sha256: str | None = None
    tags: str | None = None  # a tags file (Stacks format), relative to the sources file
    upstream: Upstream | None = None  # a corpus laid out from a public repository (mathindex/upstream.py)

    @field_validator("commit")
    @classmethod
    def _commit_is_pinned(cls, v: str | None) -> str | None:
        if v is not None and not _COMMIT.match(v):
            raise ValueError(f"commit must be a full 40-hex commit id, not a moving ref: {v!r}")
        return v

    @field_validator("sha256")
    @classmethod
    def _sha_is_hex(cls, v: str | None) -> str | None:
        if v is not None and not _SHA256.match(v):
            raise ValueError(f"sha256 must be 64 lowercase hex digits: {v!r}")
        return v


class SuiteSpec(_Strict):
    """A benchmark query set: the project's own JSON format or MathlibQR's; `external` a file of
    other tools' published figures on it (`ExternalFile`), relative to the sources file."""

    name: str
    path: str
    external: str | None = None


class ExternalFigure(_Recorded):
    """Another tool's published figure on one query style of a suite, reported beside ours in the
    release notes and never gated: `value` in points (0-100, as our metrics), `metric` one of ours
    by name (`ndcg@10`), `url` the source, `note` where in it (table, section) and on which queries,
    `via` where the figure was read when that is not the source itself (a quotation of it)."""

    system: str = Field(min_length=1)
    metric: str = Field(pattern=r"^[a-z][a-z0-9_]*@[0-9]+$")
    value: float = Field(ge=0, le=100)
    url: str = Field(pattern=_URL)
    note: str = ""
    via: str | None = Field(default=None, pattern=_URL)


class ExternalFile(_Strict):
    """A suite's external figures file (YAML): `suite`, the suite it is about (checked against the
    entry that names the file), and `figures`, query style (or `all`, `fair`) -> published figures."""

    suite: str | None = None
    figures: dict[str, list[ExternalFigure]] = Field(min_length=1)

    @field_validator("figures")
    @classmethod
    def _styles_named(cls, v: dict[str, list[ExternalFigure]]) -> dict[str, list[ExternalFigure]]:
        for style, figures in v.items():
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", style):
                raise ValueError(f"style {style!r} is not a query style name")
            if not figures:
                raise ValueError(f"style {style!r} lists no figure")
        return v


class ExternalPin(_Recorded):
    """A suite's external figures as the release read them: the file, its sha256, its figures."""

    path: str
    sha256: str
    figures: dict[str, list[ExternalFigure]]


class SuitePin(_Recorded):
    """A suite as it was read (`bench.suites` of the manifest): the sha256 of its file, None when
    it could not be read (the suite then fails the gate). A different sha256 than the baseline
    release's means a changed query or gold set, not a search regression. `external`: other
    tools' published figures on it (reported in the notes, never gated)."""

    name: str
    path: str
    sha256: str | None = None  # also absent in releases from before suites were pinned
    external: ExternalPin | None = None  # written only when the suite has external figures

    @model_serializer(mode="wrap")
    def _external_when_given(self, handler: SerializerFunctionWrapHandler) -> dict:
        out = handler(self)
        if out.get("external", ...) is None:
            del out["external"]
        return out


class InformaliserSpec(_Strict):
    """The `informaliser:` section of a sources file: which backend renders Lean statements into
    English (`informal.informalise`). `http` asks an OpenAI-compatible chat-completions endpoint
    (`endpoint`: its base URL, up to `/v1`); the API key is read from the environment variable that
    `api_key_env` names, never written here. Seconds throughout; `budget_s` bounds the time spent
    asking (what is left gets the rules rendering and is asked again by the next release)."""

    backend: Literal["rules", "http"] = "rules"
    endpoint: str | None = Field(None, pattern=r"^https?://[^\s/?#@]+(/[^\s?#]*)?$")
    model: str | None = Field(None, min_length=1, max_length=200)
    api_key_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    timeout_s: float = Field(60.0, gt=0, le=600)
    connect_timeout_s: float = Field(5.0, gt=0, le=60)
    retries: int = Field(3, ge=0, le=10)
    concurrency: int = Field(4, ge=1, le=64)
    max_tokens: int = Field(400, ge=16, le=4096)
    prompt: str = Field("informalise-v1", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # data/prompts/<prompt>.md
    budget_s: float = Field(3 * 3600.0, gt=0, le=20 * 3600.0)

    def missing(self) -> str | None:
        """What the `http` backend lacks to run (an endpoint, a model); None when nothing."""
        if self.backend != "http":
            return None
        lacking = [words for key, words in (("endpoint", "an endpoint"), ("model", "a model")) if not getattr(self, key)]
        return " and ".join(lacking) or None


PairKind = Literal["docstring", "description", "informal", "module_doc", "stacks", "label", "slogan"]  # `embed.pairs.KINDS`


class RecipePool(_Strict):
    """The model card's pool benchmark (`evaluation.pool`): `size` seeded nodes besides every gold
    node of the release's suites, the embedding channel alone, base model against trained; 0: none."""

    size: int = Field(0, ge=0, le=1_000_000)
    seed: int = Field(0, ge=0, le=2**32 - 1)


class EmbedderRecipeSpec(_Strict):
    """The `embedder:` section of a sources file: the recipe of the embedder its releases embed
    with. A release whose root lacks the model trains it first (`flows.recipe`), from pairs mined
    out of its own extraction tables (`embed.pairs`; the queries and targets of the release's suites,
    the project's and `exclude_suites` never reach training). `base`: `default` (the bundled MiniLM)
    or a model directory relative to the sources file. `pairs`: the pair kinds mined and each kind's
    share of the training examples (None: `embed.train.DEFAULT_MIX`). `train_max_seq_length`: texts
    are cut to this many tokens while training (None: `max_seq_length`, which the model keeps).
    `hard_negatives`: true, one negative per pair from the same module or file; `engine`, the
    published release's top hit for the anchor that is not the positive (none published: true's).
    `corpora`: training corpora, entries as `sources:` takes them: read, pinned and mined for pairs
    beside the release's own tables when the model is trained, never indexed (`flows.recipe`)."""

    name: str = Field("mathindex-minilm", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)
    base: str = Field("default", min_length=1)
    seed: int = Field(0, ge=0, le=2**32 - 1)
    steps: int = Field(500, ge=1, le=1_000_000)
    batch_size: int = Field(32, ge=1, le=4096)
    lr: float = Field(5e-5, gt=0, le=1)
    warmup_ratio: float = Field(0.1, ge=0, lt=1)
    max_seq_length: int = Field(128, ge=8, le=512)
    train_max_seq_length: int | None = Field(None, ge=8, le=512)
    hard_negatives: bool | Literal["engine"] = True  # engine: the published release's near-misses (`search.negatives`)
    pairs: dict[PairKind, float] | None = Field(None, min_length=1)
    exclude_suites: list[str] = []
    pool: RecipePool = RecipePool()
    corpora: list[SourceSpec] = []

    @field_validator("hard_negatives", mode="before")
    @classmethod
    def _true_false_or_engine(cls, v):
        if not isinstance(v, bool) and v != "engine":
            raise ValueError(f"hard_negatives must be true, false or engine (given {v!r})")
        return v

    @field_validator("pairs")
    @classmethod
    def _shares_are_positive(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        bad = sorted(k for k, share in (v or {}).items() if not 0 < share <= 1)
        if bad:
            raise ValueError(f"each pair kind's share must be in (0, 1]; not {', '.join(f'{k}: {v[k]}' for k in bad)}")
        return v

    @model_validator(mode="after")
    def _training_cut_within_the_model(self) -> "EmbedderRecipeSpec":
        if self.train_max_seq_length is not None and self.train_max_seq_length > self.max_seq_length:
            raise ValueError(f"train_max_seq_length {self.train_max_seq_length} exceeds max_seq_length {self.max_seq_length}")
        return self


class SourcesFile(_Strict):
    """The sources file (`data/sources.yaml`): corpora and suites of a release, its informaliser,
    and the recipe of its embedder (None: no recipe; the release embeds with `--model`'s model)."""

    sources: list[SourceSpec]
    suites: list[SuiteSpec] = []
    informaliser: InformaliserSpec = InformaliserSpec()
    embedder: EmbedderRecipeSpec | None = None

    def corpora(self) -> list[SourceSpec]:
        """Every corpus the file names: its sources, then its embedder recipe's training corpora."""
        return [*self.sources, *(self.embedder.corpora if self.embedder else [])]

    @model_validator(mode="after")
    def _corpus_names_are_unique(self) -> "SourcesFile":
        names = [s.name for s in self.corpora()]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"corpus names must be unique over sources and embedder.corpora; given twice: {', '.join(twice)}")
        return self


class CorpusPin(_Recorded):
    """A corpus as it was read: the content hash of every input file it contributed."""

    name: str
    kind: Literal["lean", "latex"]
    path: str
    sha256: str
    files: int
    commit: str | None = None


class EmbedderInfo(_Recorded):
    name: str
    revision: str
    dim: int
    normalised: bool = True


class EmbeddingRun(_Figures):
    """`vector_index.embedding`: what the embed stage did (`embed.embedder.EmbedStats`, the backend
    that ran, the precision, and `renderings`: the informal renderings it embedded into the cache,
    `search.informal.embed_renderings`'s counts; `shards`: the content-keyed shards that embedded the
    missing texts first, `tasks.embed.embed_in_shards`, and the `runner` that ran them)."""

    rows: int | None = None
    distinct: int | None = None
    cached: int | None = None
    embedded: int | None = None
    seconds: Number | None = None
    encode_seconds: Number | None = None
    index_reused: bool | None = None
    index_updated: bool | None = None
    backend: str | None = None
    precision: str | None = None
    renderings: dict[str, Number] | None = None  # the informal channel's renderings embedded into the cache
    shards: dict[str, Number] | None = None  # the shards run before: count, texts, seconds (summed), lost runs
    runner: str | None = None  # what ran the shards: local (the flow's thread pool) or dask


class IndexUpdate(_Figures):
    """`vector_index.update`: the last release's index brought up to date rather than rebuilt."""

    from_key: str | None = Field(None, alias="from")  # the content key of the index updated
    appended: int | None = None
    deleted: int | None = None
    changed_since_build: int | None = None
    limit: Number | None = None
    recall_queries_searched: int | None = None


class VectorIndexEntry(_Figures):
    """`vector_index`: the FAISS index's sidecar (`embed.vector_index`, less the embedder), the model
    reference (None: the bundled model; else `models/<name>@<rev16>` under the root), the facets
    embedded and the embedding run."""

    model: str | None = None
    facets: list[str] | None = None
    embedding: EmbeddingRun | None = None
    metric: str | None = None
    normalised: bool | None = None
    factory: str | None = None
    M: int | None = None
    ef_construction: int | None = None
    ef_search: int | None = None
    count: int | None = None
    rows: int | None = None
    deleted: int | None = None
    recall_at_10: Number | None = None
    recall_by_ef_search: dict[int, Number] | None = None
    recall_queries: int | None = None
    recall_seed: int | None = None
    flat_float32_bytes: int | None = None
    index_bytes: int | None = None
    memory_ratio_to_flat: Number | None = None
    content_key: str | None = None
    update: IndexUpdate | None = None


class FormulaIndexEntry(_Figures):
    """`formula_index`: the formula index's figures (`formula.formula_index`; only `formulas` when
    no index was built) and its scoring constants."""

    formulas: int
    format: str | None = None
    groups: int | None = None
    tokens: int | None = None
    postings: int | None = None
    k1: Number | None = None
    b: Number | None = None
    weights: dict[str, Number] | None = None


class FormalIndexEntry(_Figures):
    """`formal_index`: the formal index's figures (`formal.formal_index`): keys, postings, statements
    parsed and from the cache, statements with notation resolved, build seconds, bytes on disk."""

    format: str | None = None
    declarations: int | None = None
    keys: int | None = None
    postings: int | None = None
    vocabulary: int | None = None
    unparsed_types: int | None = None
    statements_parsed: int | None = None
    statements_cached: int | None = None
    notation_statements: int | None = None  # statements with a notation leaf resolved (formal.notation)
    seconds: Number | None = None
    table_bytes: int | None = None
    directory_bytes: int | None = None


class PremiseSplit(_Figures):
    """How the Lean files were split (seeded, by file): part -> number of files."""

    seed: int | None = None
    files: dict[str, int] = {}


class PremiseSuite(_Figures):
    """The held-out suite: its theorems, files, goals the parser refused, theorems scored."""

    queries: int
    files: int | None = None
    rejected_goals: int | None = None
    evaluated: int | None = None


class PremiseModelFit(_Figures):
    """The tree model's fit (`premises.fit.fit_model`) and the linear ranker alone (None without a model)."""

    queries: int | None = None
    rows: int | None = None
    positives: int | None = None
    rerank: int | None = None
    fitted: bool | None = None
    reason: str | None = None
    trees: int | None = None
    linear_ranker: dict[str, Number] | None = Field(None, alias="linear ranker")


class PremiseCarry(_Figures):
    """Weights and figures carried from an earlier premise build (`premises.build`): which, and how
    much changed since."""

    measured_build: str
    changed_files: int
    changed_declarations: int
    declarations: int
    share: Number
    carried: list[str] = []


class PremisesEntry(_Figures):
    """`premises`: premise selection's split, suite, weights, figures (method -> metric -> points),
    the model fit, the priors' counts, build seconds (`premises.build`)."""

    split: PremiseSplit
    suite: PremiseSuite
    tune_queries: int
    fitted: bool | None = None
    weights: dict[str, Number] = {}
    figures: dict[str, dict[str, Number]] = {}
    model: PremiseModelFit | None = None
    declarations: int | None = None
    training_proofs: int | None = None
    training_premise_uses: int | None = None
    import_graph_files: int | None = None
    seconds: Number | None = None
    carried: PremiseCarry | None = None


class InformaliserEntry(_Figures):
    """`informaliser`: which backend rendered the informalisations (the informalise stage's report):
    its model and prompt version, the endpoint's host (never its path or a key), and how many
    renderings the backend made now, came from the cache, fell back to the rules, or are empty."""

    backend: str
    model: str
    prompt_version: str
    endpoint: str | None = None
    rendered: int = 0
    cached: int = 0
    fell_back: int = 0
    empty: int = 0
    no_answer: str | None = None  # why no request succeeded, when none did


class EmbedderRecipeEntry(_Figures):
    """`embedder_recipe`: how a release whose sources file names an embedder recipe got its model
    (`flows.recipe`): `source` is `trained` (by this release), `installed` (a model of ROOT/models
    trained from the same recipe and held-out suites, these tables first) or `published` (the
    published release's model, of the same recipe and held-out suites: a nightly keeps it when its
    tables change). The keys are sha256 digests: the recipe with its base model's revision, the
    suites kept out of training, this release's tables the miner reads, and those the model was
    trained on."""

    name: str
    source: Literal["trained", "installed", "published"]
    model: str  # the reference the manifest's vector_index.model records
    recipe: dict[str, Any]  # the sources file's section as the trainer ran it (base, seed, steps, ...)
    recipe_key: str
    holdout_key: str
    tables_key: str
    model_tables_key: str | None = None
    base: str | None = None  # name@rev16 of the base model
    seconds: Number | None = None  # training seconds spent by this release (0 when reused)
    resumed_from: int | None = None  # the step this release's training started at
    pairs: dict[str, int] | None = None  # pairs mined, by kind (trained only)
    negatives: dict[str, Any] | None = None  # hard_negatives: engine only: where they came from, and counts
    corpora: list[CorpusPin] | None = None  # the recipe's training corpora as read (None: it names none)


class BenchEntry(_Figures):
    """`bench`: the headline metrics (points), what the gate compared with (`release <id>` or the
    committed baselines), each suite's pin."""

    headline: dict[str, Number | None] = {}
    baseline: str = "unknown"
    suites: list[SuitePin] = []


class GateCheck(_Figures):
    """One headline metric against its baseline (`evaluation.gate.MetricCheck`)."""

    metric: str
    baseline: Number | None = None
    current: Number | None = None
    delta: Number | None = None
    ok: bool
    note: str = ""


class GateEntry(_Figures):
    """`gate`: the verdict (`evaluation.gate.GateReport.to_dict`)."""

    passed: bool
    gated: bool = True
    summary: str | None = None
    tolerance: Number | None = None
    problems: list[str] = []
    checks: list[GateCheck] = []


def _empty_is_none(v: Any) -> Any:
    return None if v == {} else v


class Manifest(_Recorded):
    """`manifest.json`, written last: what a release is made of and how it scored. Written strictly
    (a field that is not declared here is an error); read by `store.read_manifest` through
    `from_json`, which keeps the keys another version wrote in `unknown` (at every level), so old
    releases open."""

    release_id: str
    code_version: str
    corpora: list[CorpusPin]
    embedder: EmbedderInfo
    vector_index: VectorIndexEntry
    formula_index: FormulaIndexEntry
    formal_index: FormalIndexEntry | None = None  # `{}` in the file: built before mathindex.formal, or reembed's copy of such
    premises: PremisesEntry | None = None  # `{}` in the file: built before mathindex.premises
    informaliser: InformaliserEntry | None = None  # `{}` in the file: built before the informaliser was recorded
    # written only by a release whose sources file names an embedder recipe
    embedder_recipe: EmbedderRecipeEntry | None = Field(None, exclude_if=lambda v: v is None)
    stages: dict[str, str]
    row_counts: dict[str, int]
    files: dict[str, str]  # relative path -> sha256
    sizes: dict[str, int] = {}  # relative path -> bytes (the quick check); empty before it existed
    bench: BenchEntry
    gate: GateEntry
    published: bool
    previous_release: str | None = None

    _sections_may_be_empty = field_validator("formal_index", "premises", "informaliser", mode="before")(_empty_is_none)

    @field_serializer("formal_index", "premises", "informaliser")
    def _none_is_empty(self, v: BaseModel | None) -> dict:
        return {} if v is None else v.model_dump(mode="json")

    @classmethod
    def from_json(cls, obj: dict) -> "Manifest":
        """A manifest as another version may have written it: the keys declared here validated,
        the others kept in `unknown` of the model that holds them (and dropped when written again)."""
        return cls.model_validate(obj, context={LENIENT: True})

    def to_json(self) -> dict:
        return self.model_dump(mode="json")
