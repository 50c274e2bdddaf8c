"""The code each cache's values are made by (`digest.CodeSet`): the registry a cache's key takes
its code digest from. Data only: this module imports no cache and no maker.

`makers` are the modules whose functions compute the cached values; `modules` holds them and every
mathindex module they import, transitively (a package names all of its modules), which
tests/test_cache_layer.py checks by static import analysis, so a set cannot silently miss a module.
The cache layer itself (`mathindex.cache`) stores values and never makes one: it is in no set.
"""

from __future__ import annotations

from mathindex.cache.digest import CodeSet

_SCHEMAS = "mathindex.schemas"  # a package: every table schema (its __init__ imports them all)
_LEAN_TEXT = ("mathindex.informal.rules", "mathindex.lean.binders", "mathindex.lean.lexer")

# search.token_cache: a text's BM25 tokens (the tokenizer, and the gloss-stripping of renderings)
TOKENS = CodeSet(
    makers=("mathindex.search.token_cache",),
    modules=("mathindex.search.token_cache", "mathindex.search.text", *_LEAN_TEXT),
    libraries=("PyStemmer", "latex2mathml"),
)
# informal.informalise: renderings (the informalise stage's table and each statement's rendering);
# informal.http renders them when the HTTP backend is given (the stage does not import it)
INFORMAL = CodeSet(
    makers=("mathindex.informal.informalise",),
    modules=("mathindex.informal.informalise", "mathindex.informal.http", *_LEAN_TEXT, _SCHEMAS),
)
# embed.texts: the embedding_texts stage's table
EMBEDDING_TEXTS = CodeSet(
    makers=("mathindex.embed.texts",),
    modules=("mathindex.embed.texts", "mathindex.lean.descriptions", "mathindex.corpusfiles", "mathindex.names",
             "mathindex.textfold", *_LEAN_TEXT, _SCHEMAS),
)
# formula.sympy_worker computes the canonical forms in its own process (canonical.py starts it by name)
_FORMULA = ("mathindex.formula.api", "mathindex.formula.canonical", "mathindex.formula.grammar",
            "mathindex.formula.mathml", "mathindex.formula.optree", "mathindex.formula.parse_cache",
            "mathindex.formula.parser", "mathindex.formula.paths", "mathindex.formula.symbols",
            "mathindex.formula.sympy_worker", "mathindex.formula.tokens", "mathindex.names", "mathindex.textfold",
            _SCHEMAS)
# formula.api: a formula's parse row (tree, tokens, canonical form, errors); the SymPy budget is
# part of the key beside this digest (it decides `timeout`)
FORMULAS = CodeSet(makers=("mathindex.formula.api",), modules=_FORMULA, libraries=("sympy", "latex2mathml", "lxml"))
# formula.formula_index: a tree's index features
FORMULA_FEATURES = CodeSet(makers=("mathindex.formula.formula_index",),
                           modules=("mathindex.formula.formula_index", *_FORMULA))
# lean.shards: per-file raw rows; lean.extract: a whole tree's tables (files are read through corpusfiles)
LEAN = CodeSet(
    makers=("mathindex.lean.extract", "mathindex.lean.shards"),
    modules=("mathindex.lean.extract", "mathindex.lean.shards", "mathindex.lean.scanner", "mathindex.lean.finalise",
             "mathindex.lean.dependencies", "mathindex.lean.descriptions", "mathindex.lean.citations",
             "mathindex.lean.instances", "mathindex.bibtex", "mathindex.identifiers", "mathindex.names",
             "mathindex.lean.names", "mathindex.lean.twins", "mathindex.lean.proof_refs", "mathindex.lean.binders", "mathindex.lean.lexer",
             "mathindex.corpusfiles", "mathindex.workers", _SCHEMAS),
)
# formal.facts: a statement's telescope facts (stored by formal.shards)
FORMAL = CodeSet(
    makers=("mathindex.formal.facts",),
    modules=("mathindex.formal.facts", "mathindex.formal.keys", "mathindex.formal.normal", "mathindex.formal.notation",
             "mathindex.formal.telescope", "mathindex.formula.grammar", "mathindex.formula.optree",
             "mathindex.formula.parser", "mathindex.formula.symbols", "mathindex.formula.tokens",
             "mathindex.store.layout", "mathindex.workers", "mathindex.lean.binders", "mathindex.lean.lexer",
             "mathindex.lookups", _SCHEMAS),
)
# The search engine and what it opens: the premise stage and the benchmarks run queries through it.
_ENGINE = ("mathindex.search", "mathindex.channel", "mathindex.embed", "mathindex.formal", "mathindex.formula", "mathindex.store",
           "mathindex.evaluation.metrics", "mathindex.latex.macros", "mathindex.latex.texscan",
           "mathindex.corpusfiles", "mathindex.errors", "mathindex.limits", "mathindex.lookups", "mathindex.names",
           "mathindex.textfold", "mathindex.workers", *_LEAN_TEXT,
           "mathindex.lean.descriptions", "mathindex.identifiers", _SCHEMAS)
# premises.build (through tasks.premises; the ranker reads the formal index and the embedding
# channel it is given): the premise stage's files
PREMISES = CodeSet(
    makers=("mathindex.premises.build", "mathindex.tasks.premises"),
    modules=("mathindex.premises", "mathindex.tasks", *_ENGINE),
)
# premises.shards: a goal's candidates and their features (the ranker, opened from a release's files)
PREMISE_FEATURES = CodeSet(makers=("mathindex.premises.shards",), modules=("mathindex.premises", *_ENGINE))
# tasks.bench: the suites' results through a SearchEngine
BENCH = CodeSet(
    makers=("mathindex.tasks.bench",),
    modules=("mathindex.tasks", "mathindex.evaluation.bench", "mathindex.evaluation.gate",
             "mathindex.evaluation.suites", "mathindex.sources", "mathindex.lean.citations", "mathindex.bibtex",
             *_ENGINE),  # sources pins a Lean corpus's root files, which lean.citations names
)
# search.negatives: an engine's top hits for training anchors (the engine's code; the release is in the key)
NEGATIVES = CodeSet(makers=("mathindex.search.negatives",), modules=_ENGINE)
# embed.onnx: a model's checked ONNX exports
ONNX = CodeSet(
    makers=("mathindex.embed.onnx",),
    modules=("mathindex.embed.onnx", "mathindex.embed.torch_ops", "mathindex.embed.models", "mathindex.embed.base",
             "mathindex.schemas.manifest", "mathindex.store.integrity", "mathindex.store.layout",
             "mathindex.store.releases", "mathindex.errors"),
    libraries=("torch", "transformers", "onnxruntime"),
)
# The embedding cache has no code digest: a vector is the model's, keyed by the embedder's name
# (which carries its precision and backend) and revision; the torch and ONNX paths are checked to
# agree (embed.onnx MIN_COSINE). Keying it on code would re-embed a whole corpus (hours) for an
# edit that cannot change a vector beyond that tolerance.
EMBEDDINGS = None
# The model's informal renderings (`informal.informalise.InformalCache`, remote) have none either: an
# answer is the model's, keyed by the type hash, the model's name and the prompt file's version
# (`informal.http.load_prompt`); keying it on code would ask an endpoint again for every statement
# of a corpus (hours of a served model) after any edit of the schemas or the rules.
INFORMAL_MODEL = None

CACHES: dict[str, CodeSet | None] = {
    "tokens": TOKENS, "stages/informalise": INFORMAL, "stages/embedding_texts": EMBEDDING_TEXTS,
    "informal": INFORMAL, "formulas": FORMULAS, "formula-features": FORMULA_FEATURES, "lean": LEAN,
    "formal": FORMAL, "premises": PREMISES, "premise-features": PREMISE_FEATURES, "bench": BENCH, "onnx": ONNX, "embeddings": EMBEDDINGS,
    "informal-model": INFORMAL_MODEL, "negatives": NEGATIVES,
}
