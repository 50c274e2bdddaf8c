"""The command line's arguments: `build_parser()`, every subcommand with its options, help texts,
examples and argument types. Light on purpose (argparse, pathlib, store.layout): `mathindex --help`
and every verb parse with it before the chosen verb's module is loaded. docs/cli.md is rendered
from it (`python -m mathindex.cli.docs`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mathindex import __version__
from mathindex.cli.exits import UsageError
from mathindex.cli.helptext import DESCRIPTIONS, EPILOG
from mathindex.store.layout import OutputRootError, check_output_root


class _Parser(argparse.ArgumentParser):
    late_positional: str | None = None  # an optional positional's dest (search's QUERY), see parse_known_args

    def error(self, message: str):  # one line, exit 2
        raise UsageError(f"{self.prog}: {message}")

    def parse_known_args(self, args=None, namespace=None):
        """argparse matches positionals before the first option only, so an optional positional
        after an option (`search ROOT --k 3 QUERY`: QUERY is optional since --queries) is left over:
        the first word left over is then `late_positional`."""
        ns, extras = super().parse_known_args(args, namespace)
        if self.late_positional and getattr(ns, self.late_positional, None) is None:
            words = [i for i, a in enumerate(extras) if not a.startswith("-")]
            if words:
                setattr(ns, self.late_positional, extras.pop(words[0]))
        return ns, extras


def _existing_dir(value: str) -> Path:
    p = Path(value)
    if not p.is_dir():
        raise argparse.ArgumentTypeError(f"directory not found: {value}")
    return p


def _existing_file(value: str) -> Path:
    p = Path(value)
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"file not found: {value}")
    return p


def _model_spec(value: str) -> str:
    """`default`, an entry of ROOT/models (`name@rev16` or a bare `name`) or a model directory;
    resolved against --out by `cli.release.check_model` (models load offline, so nothing else can load)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("empty model name")
    return value


WAIT_HELP = ("when another release runs on ROOT, wait up to SECONDS for it to finish "
             "(default 0: exit 5 at once, naming its pid)")


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value}")
    return seconds


def _at_least_one(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"not a whole number of at least 1: {value}")
    return number


def _out_root(value: str) -> Path:
    """A release root that a release can be written to (`store.check_output_root`: not empty, a
    writable directory or one that can be created there), checked as the arguments are read."""
    try:
        check_output_root(value)
    except OutputRootError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return Path(value)


BASE_URL_HELP = ("where `mathindex serve` of this root is reached (`https://host:port`): hits then carry an "
                 "absolute `url` to their source line (default: $MATHINDEX_BASE_URL, else none)")
RELEASE_HELP = "a release directory, or a release root (its published release)"
# A RELEASE argument is read as a path here and resolved by the verb (`cli.common.resolved_release`):
# store.releases loads pydantic and pyarrow, which `--help` and the light verbs do without.
EXAMPLES = {  # one per subcommand, shown by `mathindex VERB --help`
    "release": "mathindex release --out build                       # the bundled sample; exit 3 when the gate fails",
    "extract": "mathindex extract lean data/sample/lean --out /tmp/decls.parquet",
    "formula": "mathindex formula '\\sum_{d \\mid n} \\varphi(d) = n' --json",
    "search": "mathindex search build \"sum of totient over divisors\" --k 5",
    "premises": "mathindex premises build --goal 'a * b ≤ a * c' --context '{a b c : ℕ} (h : b ≤ c)'",
    "bench": "mathindex bench build --suite data/sample/queries.json --json",
    "gate": "mathindex gate --baseline bench/baselines/sample.json --current build/releases/ID/bench/metrics.json",
    "reembed": "mathindex reembed build --model default --out build",
    "verify": "mathindex verify build --quick",
    "get-corpus": "mathindex get-corpus --sources bench/sources/mathlib.yaml   # Mathlib, Batteries, Lean core, Stacks from GitHub",
    "warm": "mathindex warm build                                  # every rendering embedded once, before serving",
    "train-embedder": "mathindex train-embedder build/releases/ID --out build/models --steps 500",
    "serve": "mathindex serve build --port 8000",
    "mcp": "mathindex mcp build --base-url http://127.0.0.1:8000",
    "prune": "mathindex prune build --keep 5 --dry-run              # what would go, and why the others stay",
}
NO_GATE_HELP = "publish without the gate (the notes and the manifest say: not gated); a release with no suite needs it"
PRECISION_CHOICES = ("fp32", "bf16", "int8")  # embed.embedder.PRECISIONS (not imported here: the CLI starts without torch)
INFORMALISER_CHOICES = ("rules", "http")  # schemas.manifest.InformaliserSpec.backend (not imported: pydantic)
INFORMALISER_HELP = ("how Lean statements are rendered into English: rules (the rule templates) or http (the "
                     "OpenAI-compatible endpoint and model of the sources file's informaliser section; what it does "
                     "not answer gets the rules rendering); without it: the sources file's backend, else rules")
PRECISION_HELP = ("how texts are embedded: fp32 (the model as trained), bf16 (torch autocast on the CPU's bf16 units, "
                  "about 1.9x fp32's texts/s) or int8 (ONNX Runtime, about 2x); bf16 and int8 are other model names")


def build_parser() -> argparse.ArgumentParser:
    """`mathindex` and its subcommands, each with its description (`cli.helptext`) and an example in its epilog."""
    p = _Parser(prog="mathindex", description="Build, benchmark and gate releases of a mathematical search index.",
                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"mathindex {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("release", help="run the release flow (default: the bundled sample corpus)")
    r.add_argument("--sources", type=_existing_file, help="sources YAML (corpora and suites)")
    r.add_argument("--lean", type=_existing_dir, action="append", default=[], help="a Lean source directory")
    r.add_argument("--latex", type=_existing_dir, action="append", default=[], help="a LaTeX/XML source directory")
    r.add_argument("--suite", type=_existing_file, action="append", default=[], help="an extra query set")
    r.add_argument("--out", required=True, type=_out_root, help="release root (releases/, cache/, published.json)")
    r.add_argument("--runner", choices=["local", "dask"], default="local",
                   help="local: a thread pool (default); dask: prefect-dask, a LocalCluster or --dask-address")
    r.add_argument("--dask-address", help="scheduler address of an existing Dask cluster")
    r.add_argument("--model", type=_model_spec, help="`default` (the bundled MiniLM), NAME@REV16 or NAME in ROOT/models, "
                   "or a model directory (installed into ROOT/models); without it: the last published release's model")
    r.add_argument("--no-gate", action="store_true", help=NO_GATE_HELP)
    r.add_argument("--precision", choices=PRECISION_CHOICES, help=PRECISION_HELP + "; without it: the last published release's")
    r.add_argument("--informaliser", choices=INFORMALISER_CHOICES, help=INFORMALISER_HELP)
    r.add_argument("--wait", type=_seconds, default=0.0, metavar="SECONDS", help=WAIT_HELP)
    r.add_argument("--keep", type=_at_least_one, metavar="N", help="after publishing, prune ROOT to its N newest "
                   "releases as `mathindex prune --keep N` does (default: prune nothing)")

    e = sub.add_parser("extract", help="run one extraction stage alone")
    e.add_argument("kind", choices=["lean", "latex"], help="which extractor: Lean 4 sources, or LaTeX/XML")
    e.add_argument("dir", type=_existing_dir, help="the corpus directory")
    e.add_argument("--out", required=True, type=Path, help="output .parquet")
    e.add_argument("--corpus", help="corpus name (default: the directory name)")
    e.add_argument("--cache", type=Path, help="cache directory (Lean: per-file rows kept in its lean/ folder)")

    f = sub.add_parser("formula", help="parse formulas: operator tree, path tokens, canonical form")
    f.add_argument("latex", nargs="?", help="one formula, LaTeX (or give --file)")
    f.add_argument("--file", type=_existing_file, help="one formula per line")
    f.add_argument("--json", action="store_true", help="one JSON object per formula")

    s = sub.add_parser("search", help="answer a query from a built release")
    s.late_positional = "query"
    s.add_argument("release", type=Path, help=RELEASE_HELP)
    s.add_argument("query", nargs="?", help="words, a name, LaTeX or a Lean type (or give --queries)")
    s.add_argument("--queries", type=Path, metavar="FILE", help="JSON Lines, one query a line: {\"query\": …, "
                   "\"k\": 10, \"mode\": \"fused\" or \"formal\"}; prints one JSON line per query (`-`: standard input)")
    s.add_argument("--k", type=int, default=10, help="hits to print (default 10, at most 100)")
    s.add_argument("--json", action="store_true", help="the ranked hits as JSON, with each hit's channels and ranks")
    s.add_argument("--formal", action="store_true",
                   help="the formal channel alone, Loogle syntax: constants, \"fragments\", patterns with _ and ?x, ⊢")
    s.add_argument("--verify", action="store_true", help="check every file's sha256 against the manifest first "
                   "(without it: every file present at its recorded size)")

    pm = sub.add_parser("premises", help="rank declarations a proof of a Lean goal is likely to use")
    pm.add_argument("release", type=Path, help=RELEASE_HELP)
    pm.add_argument("--goal", required=True, help="the goal, a Lean term (`a * b ≤ c`)")
    pm.add_argument("--context", default="", help="hypotheses as Lean binders (`{a b : ℕ} (h : a ≤ b)`)")
    pm.add_argument("--k", type=int, default=32, help="premises to print (default 32, at most 100)")
    pm.add_argument("--file", help="the goal's file (`Mathlib/Data/Nat/Basic.lean` or its module name): only what "
                    "it imports and what it declares above --line are candidates")
    pm.add_argument("--line", type=int, help="the goal's line in --file (default: below the file's last declaration)")
    pm.add_argument("--json", action="store_true", help="each premise's score and signals as JSON")

    b = sub.add_parser("bench", help="run one query set against a release")
    b.add_argument("release", type=Path, help=RELEASE_HELP)
    b.add_argument("--suite", required=True, type=_existing_file, help="a query set: the project's JSON format or MathlibQR's")
    b.add_argument("--json", action="store_true", help="the metrics as JSON")

    g = sub.add_parser("gate", help="compare metrics; exit 3 when a headline metric fell > 2 points")
    g.add_argument("--baseline", required=True, type=_existing_file, help="metrics.json (or its headline) to compare against")
    g.add_argument("--current", required=True, type=_existing_file, help="metrics.json of the candidate")
    g.add_argument("--tolerance", type=float, default=2.0, help="points a headline metric may fall (default 2.0)")

    re_ = sub.add_parser("reembed", help="a new release re-embedding every text of RELEASE")
    re_.add_argument("release", type=Path, help=RELEASE_HELP + "; its extraction is reused")
    re_.add_argument("--model", required=True, type=_model_spec,
                     help="`default`, NAME@REV16 or NAME in ROOT/models, or a model directory (installed into ROOT/models)")
    re_.add_argument("--out", required=True, type=_out_root, help="release root the new release is written to (releases/, cache/, models/)")
    re_.add_argument("--no-gate", action="store_true", help=NO_GATE_HELP)
    re_.add_argument("--precision", choices=PRECISION_CHOICES, help=PRECISION_HELP + "; without it: RELEASE's")
    re_.add_argument("--wait", type=_seconds, default=0.0, metavar="SECONDS", help=WAIT_HELP)

    wm = sub.add_parser("warm", help="embed RELEASE's informal renderings into its root's cache, so no prose query embeds one")
    wm.add_argument("release", type=Path, help=RELEASE_HELP)
    wm.add_argument("--limit", type=int, default=0, help="the first N renderings by name only (default: all)")

    gc = sub.add_parser("get-corpus", help="lay out a sources file's pinned corpora (e.g. Mathlib) from a clone or a git URL")
    gc.add_argument("repository", nargs="?", help="a local clone or git directory of the upstream repository (checked "
                    "for the pinned commit, nothing fetched), or its URL (only the pinned commit is fetched); "
                    "without it, each source is fetched from https://github.com/<its upstream repository>")
    gc.add_argument("--sources", required=True, type=_existing_file,
                    help="the sources file: each source with an `upstream` names the commit, the files and where they go")
    gc.add_argument("--name", help="which source of the file (needed with REPOSITORY when several have an upstream)")

    v = sub.add_parser("verify", help="check a release's files against its manifest; exit 4 naming the bad ones")
    v.add_argument("release", type=_existing_dir, help="a release directory, or a release root (its published release)")
    v.add_argument("--quick", action="store_true", help="sizes only (a stat per file), not every sha256")

    t = sub.add_parser("train-embedder", help="train an embedder on pairs mined from RELEASE's tables")
    t.add_argument("release", type=Path, help="a release directory (its tables are the training data)")
    t.add_argument("--out", required=True, type=Path, help="models directory (e.g. ROOT/models); the model lands in <name>@<rev16>/")
    t.add_argument("--base", help="base sentence-transformers model directory (default: the bundled MiniLM)")
    t.add_argument("--name", default="mathindex-minilm", help="the trained model's name")
    t.add_argument("--seed", type=int, default=0, help="seed of the pair sampling and batch schedule (default 0)")
    t.add_argument("--steps", type=int, help="optimiser steps (default: the recipe's)")
    t.add_argument("--batch-size", type=int, help="pairs per step (default: the recipe's)")
    t.add_argument("--max-seq-length", type=int, help="tokens per text of the installed model (default: the recipe's)")
    t.add_argument("--train-max-seq-length", type=int, help="cut texts to this many tokens while training (default: --max-seq-length)")
    t.add_argument("--lr", type=float, help="learning rate (default: the recipe's)")
    t.add_argument("--no-hard-negatives", action="store_true", help="train without the same-module hard negative")
    t.add_argument("--suite", type=_existing_file, action="append", default=[], help="an extra suite to benchmark (never trained on)")
    t.add_argument("--pool", type=int, default=10_000, help="sampled nodes in the benchmark pool, beside every gold node")
    sv = sub.add_parser("serve", help="serve a release over HTTP (API, web page); follows ROOT/published.json")
    sv.add_argument("root", type=_existing_dir, help="release root (releases/, published.json)")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    sv.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    sv.add_argument("--release", help="serve this release id of ROOT (pinned: no hot swap)")
    sv.add_argument("--threads", type=int, help="query threads (default: 1 per core)")
    sv.add_argument("--budget", type=float, default=5.0, help="seconds per request before a 503")
    sv.add_argument("--cache", type=int, default=1024, help="answers cached per release (0: none)")
    sv.add_argument("--poll", type=float, default=1.0, help="seconds between checks of published.json")
    sv.add_argument("--access-log", action="store_true", help="log every request")
    sv.add_argument("--base-url", help=BASE_URL_HELP)

    mc = sub.add_parser("mcp", help="an MCP server (stdio) with search, formal, resolve, formula, declaration and premises tools")
    mc.add_argument("root", type=_existing_dir, help="release root (releases/, published.json)")
    mc.add_argument("--release", help="serve this release id of ROOT (pinned: no hot swap)")
    mc.add_argument("--base-url", help=BASE_URL_HELP)

    pr = sub.add_parser("prune", help="remove old releases of ROOT, keeping the N newest, the published one, the ones "
                        "being served and those a kept release was gated against")
    pr.add_argument("root", type=_existing_dir, help="release root (releases/, published.json)")
    pr.add_argument("--keep", required=True, type=_at_least_one, metavar="N", help="the newest N releases stay (so do the published release, the ones a "
                    "running `serve` or `mcp` holds, and the release each kept one was gated against)")
    pr.add_argument("--dry-run", action="store_true", help="list what would be removed and why each other release stays; "
                    "remove nothing")
    pr.add_argument("--wait", type=_seconds, default=0.0, metavar="SECONDS", help=WAIT_HELP)
    for name, parser in sub.choices.items():
        parser.description = DESCRIPTIONS.get(name, parser.description)
        parser.epilog = f"example:\n  {EXAMPLES[name]}"
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
    return p
