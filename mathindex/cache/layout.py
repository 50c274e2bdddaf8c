"""`CacheLayout`: where every cache lives under a root's cache directory (`RootLayout(root).cache`).

The only module that names a cache folder; a cache module asks its layout for its directory and
never spells one. Folders that depend on code carry that code's digest (`cache.codes`), so an edit
to the code that makes a cache's values starts a fresh folder rather than reusing stale rows.
"""

from __future__ import annotations

from pathlib import Path


class CacheLayout:
    """The folders of one cache directory, one attribute or method per cache (see `cache.codes`)."""

    TOKENS = "tokens"  # search.lexical: tokens of a text, by the text's sha256
    STAGES = "stages"  # cache.stages.StageCache: whole-stage tables, by their inputs' content
    FORMULAS = "formulas"  # formula.parse_cache: parse rows, by (source, text)
    FORMULA_FEATURES = "formula-features"  # formula.formula_index: per-tree features, by the tree
    INFORMAL = "informal"  # informal.informalise.InformalCache: renderings, by statement and context
    INFORMAL_MODEL = "informal-model"  # the same for a model's renderings (no code digest: they are the model's)
    EMBEDDINGS = "embeddings"  # embed.embedder.EmbeddingCache: vectors, by model and text sha256
    LEAN = "lean"  # lean.shards: per-file rows, by file contents; lean.extract: whole-tree tables
    FORMAL = "formal"  # formal.shards: statement facts, by statement text
    PREMISES = "premises"  # premises.premise_cache: the premise stage's files, by its inputs
    PREMISE_FEATURES = "premise-features"  # premises.shards: each goal's candidates and features, by the goal
    BENCH = "bench"  # tasks.bench: benchmark results, by the release's files and the suites
    ONNX = "onnx"  # embed.onnx: checked ONNX exports, by model and exporter
    NEGATIVES = "negatives"  # search.negatives: an engine's top hits for training anchors, by engine and anchor

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def tokens(self, code: str) -> Path:
        return self.root / self.TOKENS / code

    def stage(self, stage: str) -> Path:
        """The entries (`<key>.parquet`) of one whole-stage cache."""
        return self.root / self.STAGES / stage

    def formulas(self, code: str) -> Path:
        return self.root / self.FORMULAS / code

    def formula_features(self, code: str) -> Path:
        return self.root / self.FORMULA_FEATURES / code

    def informal(self, code: str) -> Path:
        return self.root / self.INFORMAL / code

    def informal_model(self) -> Path:
        """A model's renderings (HTTP informaliser), keyed by type hash, model and prompt version."""
        return self.root / self.INFORMAL_MODEL

    def embeddings(self, entry: str) -> Path:
        """The shards of one embedder (`entry`: `embed.models.entry_name(name, revision)`)."""
        return self.root / self.EMBEDDINGS / entry

    @property
    def lean(self) -> Path:
        return self.root / self.LEAN

    def lean_rows(self, version: str) -> Path:
        """Per-file raw rows of one (code, corpus) version: its entries (`lean_rows_entry`)."""
        return self.lean / f"lean-{version}"

    def lean_rows_entry(self, version: str, key: str) -> Path:
        """One entry of per-file rows (`key`: its files' contents): files, raw and errors Arrow files."""
        return self.lean_rows(version) / key

    def lean_rows_entries(self, version: str) -> list[Path]:
        """Every entry of per-file rows of one version, by name (run marks and temporaries left out)."""
        d = self.lean_rows(version)
        return sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith(".")) if d.is_dir() else []

    def lean_final(self, key: str) -> Path:
        """The finished tables of one whole tree (`key`: the code and every file's digest)."""
        return self.lean / f"lean-final-{key}"

    def lean_finals(self, prefix: str = "") -> list[Path]:
        """Every whole-tree entry there is (whose key starts with `prefix`)."""
        return sorted(self.lean.glob(f"lean-final-{prefix}*")) if self.lean.is_dir() else []

    def formal_statements(self, code: str) -> Path:
        """The statement facts of one code version (a folder of `cache.shards.ShardStore` shards)."""
        return self.root / self.FORMAL / f"statements-{code}"

    @property
    def premises(self) -> Path:
        return self.root / self.PREMISES

    @property
    def premise_features(self) -> Path:
        """Every folder of goals' candidate rows (`premise_feature_set`), newest kept."""
        return self.root / self.PREMISE_FEATURES

    def premise_feature_set(self, key: str) -> Path:
        """The candidate rows of the goals ranked over one set of ranker inputs (`key`: the code,
        the release files the ranker reads and its query embedder), as `cache.shards.ShardStore` shards."""
        return self.premise_features / key

    @property
    def bench(self) -> Path:
        return self.root / self.BENCH

    @property
    def onnx(self) -> Path:
        return self.root / self.ONNX

    def negatives(self, engine: str) -> Path:
        """The top hits of one engine (`engine`: `search.negatives.engine_key`) for training anchors."""
        return self.root / self.NEGATIVES / engine
