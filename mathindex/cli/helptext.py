"""The command line's long help: what `mathindex --help` says after the verbs (RELEASE, errors, exit
codes) and each verb's description, shown by `mathindex VERB --help` and rendered into docs/cli.md
(`cli.docs`). Plain text, line breaks kept as written (RawDescriptionHelpFormatter)."""

from __future__ import annotations

EPILOG = """\
RELEASE, wherever a verb takes it, is a release directory (ROOT/releases/<id>) or a release root,
which stands for its published release (the one ROOT/published.json names).
`python -m mathindex ...` is the same as `mathindex ...`.

Errors are one line on stderr, also those raised inside a flow run (MATHINDEX_DEBUG=1 shows the
traceback; the flow run's logs in the Prefect API keep theirs).

Exit codes: 0 ok; 1 other failure; 2 bad usage or input (a bad path, query, goal or model);
3 the gate failed; 4 integrity (a release file that differs from its manifest, an unreadable
manifest or published.json); 5 another release or reembed holds the root's lock (ROOT/.lock,
the message names its pid)."""

DESCRIPTIONS = {
    "release": """\
Runs the release flow (Prefect): pin the sources, extract, informalise, embed, parse formulas,
build the indexes, benchmark, gate and publish. Without --sources, --lean or --latex it builds the
bundled sample (data/sources.yaml). The release is built in ROOT/releases/.staging-<id>/, renamed to
ROOT/releases/<id>/ with its manifest written last, and named in ROOT/published.json when the gate
passes. Prints a progress bar over the stages on a terminal (elsewhere one line per stage), then
the release directory and the gate verdict.

The gate compares the release's headline metrics with those of the last published release under
ROOT, else with the committed baselines (bench/baselines/), and fails when one fell by more than
2 points: the release is written but not published (exit 3). A release with no benchmark suite
(--lean or --latex without --suite), or whose suites have no baseline, fails the gate; --no-gate
publishes it ungated, and its notes and manifest say "not gated".

Without --model: the model of the last published release under ROOT, else the bundled one; or,
when the sources file names an embedder recipe (its `embedder:` section), the recipe's model,
trained by the release first when ROOT lacks it (docs/embedder-recipe.md).
Without --precision: the last published release's precision, else fp32. bf16 runs torch's bfloat16
autocast on the CPU's AMX / AVX512-BF16 units; on a CPU without them it is several times slower
than fp32, and the release says so in a warning. int8 is the model's ONNX Runtime int8
quantisation (about twice fp32's texts/s, slightly lower recall). Both are other model names
(`<name>+bf16`, `<name>+onnx-int8`), so nothing is reused from fp32 vectors.

--informaliser http asks the OpenAI-compatible chat-completions endpoint (a llama.cpp or vLLM
server, say) and model named in the sources file's informaliser section, in dependency order,
each prompt showing the renderings of the constants its statement uses. Answers are cached by
type hash, model and prompt in ROOT/cache/, so an unchanged statement is never asked again. What
the endpoint does not answer (refused, timed out, 5xx after retries, malformed) gets the rules
rendering and is asked again next time; the build neither waits past its timeouts nor fails for
it. The notes and the manifest say which informaliser ran and what it did. See docs/operations.md.

A run first removes what interrupted runs left under ROOT/releases/ (staging directories, a release
without its manifest) and logs each removal. Caches that outlive releases live in ROOT/cache/, so
a rebuild with few changes recomputes little.

Exit codes: 0 gate passed, 3 gate failed, 2 bad usage, 4 integrity, 5 ROOT's lock is held (at
once, or after --wait SECONDS), 1 other failure.""",
    "extract": """\
Runs one extraction stage alone and writes its main table to the --out file (FILE.parquet); side
tables go beside it, to FILE.<table>.parquet.""",
    "formula": """\
Parses LaTeX formulas and prints, for each, its operator tree, path tokens, canonical form (SymPy),
the parser that read it and its status.""",
    "search": """\
Answers one query from a release: the ranked hits, with the channels that found each and its rank
there. A query may be words, a name, a Stacks tag, LaTeX or a Lean type; --formal runs the formal
channel alone with Loogle's syntax.

Opening the release checks every file against the manifest's sizes (--verify: every sha256) and
exits 4 naming a damaged file. An empty or blank query, or one that is not valid UTF-8, is refused
(exit 2).""",
    "premises": """\
Ranks the declarations a proof of a Lean goal is likely to name. Signals: lexical, proofs of
similar statements, formal constants, operator pairs and conclusion head, proof usage,
co-occurrence and the embedding. Their weights are fitted on a training split
(RELEASE/premises/weights.json), and gradient-boosted trees fitted on the tune goals
(RELEASE/premises/model.json) re-order the weighted sum's best 100.

With --file (a file of the release, or its module name) only what that file imports and declares
above --line is a candidate; the declarations just above the goal and the nearest imports rank
higher, and what the proofs above the goal in that file name counts.

A goal that does not parse is one line naming the position, a file the release does not hold one
line naming it; both exit 2. A goal naming no known constant is answered by the embedding channel alone, and says
so. From Python: mathindex.premises.api.premises(release, goal, k, file=, line=).""",
    "bench": """\
Runs one query set (the project's JSON format, or MathlibQR's) against a release and prints its
metrics in points.""",
    "gate": """\
Compares the headline metrics of two metrics files (a release's bench/metrics.json, or an object
of headline metrics as in bench/baselines/) and exits 3 when one fell by more than --tolerance
points. It fails closed, each with a one-line FAIL reason: an empty baseline, a baseline metric
missing from current, or a value that is not a finite number in 0..100. Exit 2 when a file is not
JSON or not an object of metrics, or --tolerance is not a finite number >= 0.""",
    "reembed": """\
Builds a new release from RELEASE's extraction, re-embedding every text with --model (at RELEASE's
precision unless --precision says otherwise). RELEASE's files are checked against its manifest
before they are copied (exit 4 naming the bad ones). The new release is gated against RELEASE and
its notes show the metrics before and after. Exit codes as for release.""",
    "warm": """\
Embeds every informal rendering of RELEASE (the informal channel's texts) that is not yet in its
root's embedding cache, so that no prose query embeds one at query time; without it each rendering
is embedded the first time a query needs it, and kept. The release's embed stage does the same for
the release it builds, so this is needed only for releases built before it did. Resumable; prints
the counts as JSON.""",
    "get-corpus": """\
Lays out the pinned corpora of a sources file's sources, and of its embedder recipe's training
corpora, that have an `upstream` block (Mathlib, Batteries and Lean core, and the Stacks Project the
recipe trains on, in bench/sources/mathlib.yaml) where the file's `path` points
(build/corpora/<name>): only the files the release reads, at the pinned commit (or the commit the
source's release tag names), read from git objects, with a COMMIT file written last; a source with
`upstream.root` (Lean core: src) has that folder laid out at the top, so its modules are `Init.…`.
REPOSITORY is a local clone, a git directory or a bare mirror (checked for the commit, nothing
fetched), or a URL (only the pinned commit is fetched, into build/corpora/<name>.git, kept for the
next run); with several such sources it needs --name. Without REPOSITORY each source (or --name's)
is fetched from https://github.com/<its upstream repository>. Refuses, with one line and exit 2, a
directory that is not a checkout of the upstream, a checkout without the pinned commit, and a URL
that cannot be fetched.""",
    "prune": """\
Removes old releases of ROOT, keeping the N newest. It never removes the published release, a
release a running `mathindex serve` or `mcp` holds (each server keeps a marker under ROOT/serving/),
or the release a kept release was gated against. It takes the root's lock (exit 5 while a build
runs, or waits with --wait), also clears what dead runs left (staging folders, releases without a
manifest), and removes each release by renaming it into releases/.trash/ first, so a crash never
leaves half a release that looks whole. --dry-run lists each release: kept (and why) or would go.""",
    "verify": """\
Checks every file of RELEASE against its manifest's sha256 (--quick: sizes only). Prints the bad
files one per line and exits 4, else exits 0.""",
    "train-embedder": """\
A Prefect flow: mines training pairs from the release's tables (no suite query or target ever
reaches training), trains the embedder (seeded; rerunning the same command resumes from its last
checkpoint), benchmarks the base and the trained model on a candidate pool, and installs
MODELS_DIR/<name>@<rev16>/ with a model card (README.md, mathindex-training.json). With
--out ROOT/models, release and reembed take it as --model NAME.""",
    "serve": """\
Serves the release ROOT/published.json names (or --release ID, pinned) over HTTP: a JSON API
documented in /openapi.json (/search, /resolve, /formula, /declaration/{name}, /premises,
/health, /release, /source/...) and a search page at /. When published.json names a new release,
the server verifies its files, opens it in the background and switches to it; requests in flight
finish on the old one, and a release that fails to open is refused and listed in /health.

Bad input (a query, goal or context over 4 KB, k outside 1..100, an unknown name) is a 4xx with a
one-line JSON body {"error": ..., "status": ...}; a request past its time budget is a 503.""",
    "mcp": """\
An MCP server on stdio over the same release as serve: the tools search, resolve, formula,
declaration and premises answer as the HTTP endpoints of the same names.""",
}
