"""The command line: the public interface (`mathindex VERB …`, also `python -m mathindex`).

Exit codes: 0 success, 3 failing gate, 2 bad usage or bad input path, 4 integrity (a file that
differs from its release's manifest, an unreadable manifest or published.json), 5 another release
runs on the root (its lock is held), 1 any other failure.
Errors print as one line on stderr, never as a traceback (MATHINDEX_DEBUG=1 shows it), also those
raised inside a flow run (`flows.logs.quiet_flow_errors`). A reader that closes stdout early
(`… | head`) ends the command quietly, exit 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_GATE, EXIT_INTEGRITY, EXIT_BUSY = 0, 1, 2, 3, 4, 5

ENV_DEFAULTS = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # the model's weight-loading bar; our stage bars stay
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "warning",
}


class UsageError(Exception):
    """Bad usage or a bad input path: exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


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
    resolved against --out by `_check_model` (models load offline, so nothing else can load)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("empty model name")
    return value


def _check_model(verb: str, spec: str | None, root: Path) -> None:
    """The model `spec` names for releases under `root` (no --model: the last published release's
    model, else the bundled one) must resolve to a directory with weights; checked before Prefect
    starts, writing nothing (`embed.models.resolve_model`)."""
    from mathindex.embed.models import ModelError, resolve_model

    try:
        resolve_model(spec, root)
    except ModelError as exc:
        raise UsageError(f"mathindex {verb}: {' '.join(str(exc).split())}") from None


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


def _out_root(value: str) -> Path:
    """A release root that a release can be written to (`store.check_output_root`: not empty, a
    writable directory or one that can be created there), checked as the arguments are read."""
    from mathindex.store.layout import OutputRootError, check_output_root

    try:
        check_output_root(value)
    except OutputRootError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return Path(value)


def _release_dir(value: str) -> Path:
    """A release directory, or a release root standing for its published release
    (`store.resolve_release`; an unreadable published.json is exit 4)."""
    from mathindex.store.releases import resolve_release

    try:
        return resolve_release(value)
    except FileNotFoundError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


RELEASE_HELP = "a release directory, or a release root (its published release)"
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
    "warm": "mathindex warm build                                  # every rendering embedded once, before serving",
    "train-embedder": "mathindex train-embedder build/releases/ID --out build/models --steps 500",
    "serve": "mathindex serve build --port 8000",
    "mcp": "mathindex mcp build",
}
NO_GATE_HELP = "publish without the gate (the notes and the manifest say: not gated); a release with no suite needs it"
PRECISION_CHOICES = ("fp32", "bf16", "int8")  # embed.embedder.PRECISIONS (not imported here: the CLI starts without torch)
PRECISION_HELP = ("how texts are embedded: fp32 (the model as trained), bf16 (torch autocast on the CPU's bf16 units, "
                  "about 1.9x fp32's texts/s) or int8 (ONNX Runtime, about 2x); bf16 and int8 are other model names")


def build_parser() -> argparse.ArgumentParser:
    from mathindex import __version__

    p = _Parser(prog="mathindex", description="Build, benchmark and gate releases of a mathematical search index.")
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
    r.add_argument("--wait", type=_seconds, default=0.0, metavar="SECONDS", help=WAIT_HELP)

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
    s.add_argument("release", type=_release_dir, help=RELEASE_HELP)
    s.add_argument("query", help="words, a name, LaTeX or a Lean type")
    s.add_argument("--k", type=int, default=10, help="hits to print (default 10)")
    s.add_argument("--json", action="store_true", help="the ranked hits as JSON, with each hit's channels and ranks")
    s.add_argument("--formal", action="store_true",
                   help="the formal channel alone, Loogle syntax: constants, \"fragments\", patterns with _ and ?x, ⊢")
    s.add_argument("--verify", action="store_true", help="check every file's sha256 against the manifest first "
                   "(without it: every file present at its recorded size)")

    pm = sub.add_parser("premises", help="rank declarations a proof of a Lean goal is likely to use")
    pm.add_argument("release", type=_release_dir, help=RELEASE_HELP)
    pm.add_argument("--goal", required=True, help="the goal, a Lean term (`a * b ≤ c`)")
    pm.add_argument("--context", default="", help="hypotheses as Lean binders (`{a b : ℕ} (h : a ≤ b)`)")
    pm.add_argument("--k", type=int, default=32, help="premises to print (default 32)")
    pm.add_argument("--file", help="the goal's file (`Mathlib/Data/Nat/Basic.lean` or its module name): only what "
                    "it imports and what it declares above --line are candidates")
    pm.add_argument("--line", type=int, help="the goal's line in --file (default: below the file's last declaration)")
    pm.add_argument("--json", action="store_true", help="each premise's score and signals as JSON")

    b = sub.add_parser("bench", help="run one query set against a release")
    b.add_argument("release", type=_release_dir, help=RELEASE_HELP)
    b.add_argument("--suite", required=True, type=_existing_file, help="a query set: the project's JSON format or MathlibQR's")
    b.add_argument("--json", action="store_true", help="the metrics as JSON")

    g = sub.add_parser("gate", help="compare metrics; exit 3 when a headline metric fell > 2 points")
    g.add_argument("--baseline", required=True, type=_existing_file, help="metrics.json (or its headline) to compare against")
    g.add_argument("--current", required=True, type=_existing_file, help="metrics.json of the candidate")
    g.add_argument("--tolerance", type=float, default=2.0, help="points a headline metric may fall (default 2.0)")

    re_ = sub.add_parser("reembed", help="a new release re-embedding every text of RELEASE")
    re_.add_argument("release", type=_release_dir, help=RELEASE_HELP + "; its extraction is reused")
    re_.add_argument("--model", required=True, type=_model_spec,
                     help="`default`, NAME@REV16 or NAME in ROOT/models, or a model directory (installed into ROOT/models)")
    re_.add_argument("--out", required=True, type=_out_root, help="release root the new release is written to (releases/, cache/, models/)")
    re_.add_argument("--no-gate", action="store_true", help=NO_GATE_HELP)
    re_.add_argument("--precision", choices=PRECISION_CHOICES, help=PRECISION_HELP + "; without it: RELEASE's")
    re_.add_argument("--wait", type=_seconds, default=0.0, metavar="SECONDS", help=WAIT_HELP)

    wm = sub.add_parser("warm", help="embed RELEASE's informal renderings into its root's cache, so no prose query embeds one")
    wm.add_argument("release", type=_release_dir, help=RELEASE_HELP)
    wm.add_argument("--limit", type=int, default=0, help="the first N renderings by name only (default: all)")

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

    mc = sub.add_parser("mcp", help="an MCP server (stdio) with search, resolve, formula, declaration and premises tools")
    mc.add_argument("root", type=_existing_dir, help="release root (releases/, published.json)")
    mc.add_argument("--release", help="serve this release id of ROOT (pinned: no hot swap)")
    for name, parser in sub.choices.items():
        parser.epilog = f"example:\n  {EXAMPLES[name]}"
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
    return p


def main(argv: list[str] | None = None) -> int:
    for k, v in ENV_DEFAULTS.items():
        os.environ.setdefault(k, v)
    try:
        args = build_parser().parse_args(argv)
        code = COMMANDS[args.command](args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers, not at interpreter exit
        return code
    except BrokenPipeError as exc:
        if not _stdout_closed():
            print(f"mathindex: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_FAILURE
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("mathindex: interrupted", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as exc:
        if os.environ.get("MATHINDEX_DEBUG"):
            raise
        from mathindex.embed.models import ModelError
        from mathindex.embed.pairs import PairError
        from mathindex.sources import SourceError
        from mathindex.store.integrity import IntegrityError
        from mathindex.store.lock import RootBusy

        code = EXIT_USAGE if isinstance(exc, (SourceError, FileNotFoundError, PairError, ModelError)) else EXIT_FAILURE
        code = EXIT_INTEGRITY if isinstance(exc, IntegrityError) else EXIT_BUSY if isinstance(exc, RootBusy) else code
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"mathindex: error: {msg}", file=sys.stderr)
        return code


def _stdout_closed() -> bool:
    """True when stdout is a pipe whose reader went away (`mathindex search … | head`: poll says
    POLLERR); stdout then points at /dev/null, so the interpreter's last flush stays quiet too."""
    import select

    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        closed = any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no real file behind stdout, or no poll here
        return False
    if closed:
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    return closed


def cmd_release(args) -> int:
    from mathindex.flows.release import release_flow, resolve_inputs

    try:  # bad inputs fail here, in a second, before Prefect starts
        resolve_inputs(str(args.sources) if args.sources else None, args.lean, args.latex, args.suite)
    except ValueError as exc:
        raise UsageError(f"mathindex release: {' '.join(str(exc).split())}") from None
    _check_model("release", args.model, args.out)
    flow = release_flow
    if args.runner == "dask":
        from prefect_dask import DaskTaskRunner

        runner = DaskTaskRunner(address=args.dask_address) if args.dask_address else DaskTaskRunner(cluster_kwargs={"n_workers": 2, "threads_per_worker": 1})
        flow = release_flow.with_options(task_runner=runner)
    elif args.dask_address:
        raise UsageError("mathindex release: --dask-address needs --runner dask")
    state = _run_locked(args.out, args.wait, flow, out=str(args.out), sources_file=str(args.sources) if args.sources else None,
                        lean=[str(d) for d in args.lean], latex=[str(d) for d in args.latex],
                        suites=[str(s) for s in args.suite], model=args.model, no_gate=args.no_gate,
                        precision=args.precision)
    return _report_release(_outcome_of(state))


def _run_locked(root: Path, wait_s: float, flow, **params):
    """The final state of a release-writing flow run under ROOT's lock, taken here before Prefect
    starts (RootBusy, exit 5, in a second), with Prefect's temporary server tied to this process."""
    from mathindex.flows.server import tie_temporary_server
    from mathindex.store.lock import root_lock

    from mathindex.flows.logs import quiet_flow_errors

    with root_lock(root, wait_s):
        tie_temporary_server()
        with quiet_flow_errors():
            return flow(**params, return_state=True)


def _outcome_of(state):
    """The ReleaseOutcome a release-writing flow's final state carries: Completed (gate passed) or
    Failed with the outcome as data (gate failed); any other failure is raised as its exception."""
    from mathindex.flows.finish import ReleaseOutcome

    result = state.result(raise_on_failure=False)
    if isinstance(result, BaseException):
        raise result
    if not isinstance(result, ReleaseOutcome):
        raise RuntimeError(state.message or f"flow run ended {state.type.value} without a release")
    return result


def _report_release(outcome) -> int:
    """The release directory, each reason the gate failed (also what an ungated gate would have
    said) and the verdict: exit 0 when published (gate passed, or --no-gate), else 3."""
    from mathindex.evaluation.gate import NOT_GATED, MetricCheck

    print(f"release: {outcome.release_dir}")
    for problem in outcome.gate.get("problems", []):
        print(f"  FAIL {problem}")
    for c in outcome.gate["checks"]:
        if not c["ok"]:
            print(f"  FAIL {MetricCheck(**c).reason()}")
    gated = outcome.gate.get("gated", True)
    print(f"gate: {NOT_GATED if not gated else 'passed' if outcome.passed else 'FAILED'}")
    return EXIT_OK if outcome.passed else EXIT_GATE


def cmd_extract(args) -> int:
    import pyarrow.parquet as pq

    from mathindex.sources import SourceError, check_allowed

    try:
        check_allowed(f"{args.kind} directory", args.dir, str(args.dir))
    except SourceError as exc:
        raise UsageError(f"mathindex extract: {exc}") from None
    corpus = args.corpus or args.dir.resolve().name
    out: Path = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.kind == "lean":
        from mathindex.lean import extract_lean_tree

        ex = extract_lean_tree(args.dir, corpus, cache_dir=args.cache)
        main_table, extra = ex.declarations, {"dependencies": ex.dependencies, "descriptions": ex.descriptions}
    else:
        from mathindex.latex import extract_latex_tree

        ex = extract_latex_tree(args.dir, corpus)
        main_table, extra = ex.statements, {"formulas": ex.formulas}
    pq.write_table(main_table, out)
    for name, t in {**extra, "errors": ex.errors}.items():
        pq.write_table(t, out.with_name(f"{out.stem}.{name}.parquet"))
    counts = ", ".join(f"{n} {t.num_rows}" for n, t in {"rows": main_table, **extra, "errors": ex.errors}.items())
    print(f"{out}: {counts}")
    return EXIT_OK


def cmd_formula(args) -> int:
    if (args.latex is None) == (args.file is None):
        raise UsageError("mathindex formula: give one LATEX argument or --file FILE")
    from mathindex.formula import describe_formula

    lines = [args.latex] if args.latex is not None else args.file.read_text(encoding="utf-8", errors="replace").splitlines()
    for line in lines:
        if args.file is not None and not line.strip():
            continue
        d = describe_formula(line)
        if args.json:
            print(json.dumps({"input": line, **d}, ensure_ascii=False, sort_keys=True))
        else:
            print(f"formula:    {line}")
            print(f"parser:     {d['parser']}  status: {d['status']}")
            print(f"tree:       {d.get('tree_text')}")
            print(f"paths:      {' '.join(d['path_tokens'][:40])}{' …' if len(d['path_tokens']) > 40 else ''}")
            print(f"canonical:  {d.get('canonical')}  ({d.get('canonical_status')})")
            print()
    return EXIT_OK


def cmd_search(args) -> int:
    from mathindex.search.engine import SearchEngine
    from mathindex.search.kinds import query_problem

    if args.k < 1:
        raise UsageError("mathindex search: --k must be at least 1")
    if (problem := query_problem(args.query)) is not None:  # before the release is opened
        raise UsageError(f"mathindex search: {problem}")
    if args.formal:
        return _formal_search(args)
    engine = SearchEngine(args.release, verify="full" if args.verify else "quick")
    result = engine.search(args.query, args.k)
    if engine.formal is not None:
        for note in engine.formal.index.query_notes(args.query):
            print(f"(formal: {note})", file=sys.stderr)
    about = engine.describe([h.name for h in result.hits])
    if args.json:
        hits = [{"rank": i, "name": h.name, "score": h.score, "channels": h.channels,
                 **{k: v for k, v in about.get(h.name, {}).items() if k != "name"}}
                for i, h in enumerate(result.hits, 1)]  # fmt: skip
        print(json.dumps({"query": result.query, "hits": hits, "unavailable": result.unavailable}, ensure_ascii=False, indent=2))
        return EXIT_OK
    for ch, why in result.unavailable.items():
        print(f"(channel {ch} unavailable: {why})", file=sys.stderr)
    for i, h in enumerate(result.hits, 1):
        chans = " ".join(f"{c}#{r}" for c, r in h.channels.items())
        node = about.get(h.name, {})
        print(f"{i:>3}. {h.name}  ({node.get('kind', '?')}, {node.get('file', '?')}:{node.get('line') or '?'})  [{chans}]")
        if node.get("title"):
            print(f"       {' '.join(node['title'].split())[:110]}")
    if not result.hits:
        print("no results")
    return EXIT_OK


def _formal_search(args) -> int:
    """`search --formal`: Loogle-like output (name, type, module) with the count of all matches."""
    from mathindex.formal.query import FormalQueryError, UnknownConstant
    from mathindex.formal.search import FormalIndex

    from mathindex.store.integrity import check_release
    from mathindex.store.layout import ReleaseLayout

    if not ReleaseLayout(args.release).table("formal_statements").is_file():
        raise UsageError(f"mathindex search: {args.release} has no formal index (a release built before the formal channel)")
    check_release(args.release, quick=not args.verify)  # as SearchEngine checks it
    index = FormalIndex(args.release)
    try:
        res = index.loogle(args.query, args.k)
    except (FormalQueryError, UnknownConstant) as exc:
        raise UsageError(f"mathindex search: {exc}") from None
    about = {h.name: index.describe_name(h.name) for h in res.hits}
    if args.json:
        hits = [{"rank": i, "name": h.name, "exact_conclusion": h.exact, "channels": {"formal": i}, **about[h.name]}
                for i, h in enumerate(res.hits, 1)]  # fmt: skip
        print(json.dumps({"query": res.query, "count": res.count, "count_exact": res.exact_count, "hits": hits,
                          "notes": res.notes, "seconds": res.seconds}, ensure_ascii=False, indent=2))
        return EXIT_OK
    print(f"Found {'' if res.exact_count else 'about '}{res.count} declaration{'s' * (res.count != 1)} matching "
          f"{res.query}{'' if res.exact_count else ' (estimated from the smallest candidates)'}; showing {len(res.hits)}")
    for i, h in enumerate(res.hits, 1):
        d = about[h.name]
        print(f"{i:>3}. {h.name}  [formal#{i}]\n       {' '.join(d['signature'].split())[:200]}\n       {d['module']}")
    for note in res.notes:
        print(f"  {note}")
    return EXIT_OK


def cmd_premises(args) -> int:
    """`premises`: the ranked declarations with their signals; a goal that does not parse is a
    one-line usage error with its position."""
    from mathindex.premises import GoalError
    from mathindex.premises.api import ranker_of
    from mathindex.premises.goal import check_goal
    from mathindex.premises.ranker import check_premise_index
    from mathindex.search.engine import SearchEngine

    if args.k < 1:
        raise UsageError("mathindex premises: --k must be at least 1")
    if args.line is not None and (args.file is None or args.line < 1):
        raise UsageError("mathindex premises: --line needs --file and is at least 1")
    try:
        check_goal(args.goal, args.context)  # before the release is opened: a typo costs no load
        check_premise_index(args.release)  # before the engine opens
        engine = SearchEngine(args.release)
        ranker = ranker_of(engine)
        result = ranker.rank(args.goal, args.context, args.k, file=args.file, line=args.line)
    except (GoalError, FileNotFoundError) as exc:
        raise UsageError(f"mathindex premises: {' '.join(str(exc).split())}") from None
    about = engine.describe([p.name for p in result.premises])
    if args.json:
        rows = [{"rank": i, "name": p.name, "score": p.score, "signals": p.signals,
                 **{k: v for k, v in about.get(p.name, {}).items() if k != "name"}}
                for i, p in enumerate(result.premises, 1)]  # fmt: skip
        print(json.dumps({"goal": result.goal, "context": result.context, "file": args.file, "constants": result.constants,
                          "fallback": result.fallback, "notes": result.notes, "premises": rows}, ensure_ascii=False, indent=2))
        return EXIT_OK
    for note in result.notes:
        print(f"({note})", file=sys.stderr)
    for i, p in enumerate(result.premises, 1):
        node = about.get(p.name, {})
        signals = " ".join(f"{k} {v:.2f}" for k, v in p.signals.items())
        print(f"{i:>3}. {p.name}  ({node.get('kind', '?')}, {node.get('file', '?')}:{node.get('line') or '?'})  "
              f"score {p.score:.3f}  [{signals}]")
    if not result.premises:
        print("no premises")
    return EXIT_OK


def cmd_bench(args) -> int:
    from mathindex.evaluation.bench import run_suite
    from mathindex.evaluation.suites import load_suite
    from mathindex.search.engine import SearchEngine

    suite = load_suite(args.suite)
    summary, _ = run_suite(SearchEngine(args.release).names, suite)
    if args.json:
        print(json.dumps({"suite": suite.name, **summary}, indent=2, sort_keys=True))
        return EXIT_OK
    print(f"suite {suite.name}: {summary['queries']} queries (points)")
    print("  " + "  ".join(f"{m} {v:.2f}" for m, v in summary["metrics"].items()))
    for style, m in summary["by_style"].items():
        print(f"  {style:<16} n={m['queries']:<4} " + "  ".join(f"{k} {v:.2f}" for k, v in m.items() if k != "queries"))
    if "fair" in summary:
        print("  fair subset      " + "  ".join(f"{k} {v}" for k, v in summary["fair"].items()))
    return EXIT_OK


def _headline_of(path: Path) -> dict:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UsageError(f"mathindex gate: {path}: not JSON ({exc})") from None
    head = raw.get("headline", raw) if isinstance(raw, dict) else None
    if not isinstance(head, dict):
        raise UsageError(f"mathindex gate: {path}: expected an object of metrics or a 'headline' object")
    return head


def cmd_gate(args) -> int:
    """Exit 3 when the gate fails, also on values that are not numbers in 0..100 or an empty
    baseline; exit 2 when a file is not a JSON object of metrics or --tolerance is not usable."""
    import math

    from mathindex.evaluation.gate import gate

    if not (math.isfinite(args.tolerance) and args.tolerance >= 0):
        raise UsageError(f"mathindex gate: --tolerance must be a finite number of points >= 0, not {args.tolerance}")
    report = gate(_headline_of(args.current), _headline_of(args.baseline), tolerance=args.tolerance)
    for problem in report.problems:
        print(f"FAIL {problem}")
    for c in report.checks:
        if not c.ok:
            print(f"FAIL {c.reason()}")
        elif c.delta is not None:
            print(f"ok   {c.metric}: {c.baseline:.2f} -> {c.current:.2f} ({c.delta:+.2f})")
        else:
            print(f"ok   {c.metric}: {c.current:.2f} ({c.note})")
    print(f"gate: {'passed' if report.passed else 'FAILED'}")
    return EXIT_OK if report.passed else EXIT_GATE


def cmd_reembed(args) -> int:
    from mathindex.flows.reembed import reembed_flow

    _check_model("reembed", args.model, args.out)
    state = _run_locked(args.out, args.wait, reembed_flow, release=str(args.release), model=args.model, out=str(args.out),
                        no_gate=args.no_gate, precision=args.precision)
    return _report_release(_outcome_of(state))


def cmd_warm(args) -> int:
    """Embeds the informal channel's renderings once per model (resumable: chunks are stored as done)."""
    from mathindex.search.engine import SearchEngine

    engine = SearchEngine(args.release)
    if engine.informal is None:
        print(f"error: {args.release} has no informal channel to warm "
              f"({engine.unavailable.get('informal') or engine.unavailable.get('embedding') or 'no renderings'})",
              file=sys.stderr)
        return 2
    counts = engine.informal.warm(engine.vector.embedder, args.limit)
    print(json.dumps(counts, sort_keys=True))
    return 0


def cmd_verify(args) -> int:
    """Every file of a release (a directory, or a root's published release) against its manifest:
    the bad ones one per line on stdout and exit 4, else one line saying how many matched."""
    from mathindex.store.integrity import read_manifest, verify_release
    from mathindex.store.releases import resolve_release

    try:  # IntegrityError (exit 4) when published.json is unreadable
        release = resolve_release(args.release)
    except FileNotFoundError as exc:
        raise UsageError(f"mathindex verify: {exc}") from None
    problems = verify_release(release, quick=args.quick)
    for line in problems:
        print(line)
    if problems:
        print(f"mathindex verify: release {release.name}: {len(problems)} bad file(s)", file=sys.stderr)
        return EXIT_INTEGRITY
    checked = "sizes" if args.quick else "sha256"
    print(f"release {release.name}: {len(read_manifest(release).files)} files match the manifest ({checked})")
    return EXIT_OK


def cmd_train_embedder(args) -> int:
    from mathindex.embed.models import ModelError, model_revision
    from mathindex.evaluation.suites import is_suite_file

    def refuse(msg: str):
        raise UsageError(f"mathindex train-embedder: {msg}")

    if args.release.is_file() and is_suite_file(args.release):
        refuse(f"{args.release} is a query suite; the pair miner never reads suites, give a release directory")
    if args.base is not None:
        try:
            model_revision(Path(args.base).expanduser())
        except (ModelError, OSError) as exc:
            refuse(f"base model {args.base}: {exc}")
    for name in ("steps", "batch_size", "max_seq_length", "train_max_seq_length"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            refuse(f"--{name.replace('_', '-')} must be at least 1")
    from mathindex.embed.pairs import PairError, mine_pairs, read_release_tables
    from mathindex.evaluation.suites import project_suite_queries

    try:  # a missing table or an empty pair set fails here, before Prefect starts and before anything is written
        queries, targets, _ = project_suite_queries(args.release, args.suite)
        mine_pairs(read_release_tables(args.release), queries, targets, args.seed)
    except PairError as exc:
        refuse(str(exc))
    recipe = {"name": args.name, "seed": args.seed, "hard_negatives": not args.no_hard_negatives}
    recipe |= {k: getattr(args, k) for k in ("steps", "batch_size", "max_seq_length", "train_max_seq_length", "lr") if getattr(args, k) is not None}
    import logging

    from mathindex.flows.logs import quiet_flow_errors
    from mathindex.flows.train_embedder import train_embedder_flow

    handler = logging.StreamHandler(sys.stderr)  # one line per 10 steps: readable in a worker's log
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s", "%H:%M:%S"))
    train_log = logging.getLogger("mathindex.embed.train")
    train_log.addHandler(handler)
    train_log.setLevel(logging.INFO)
    train_log.propagate = False  # Prefect's handlers would print each line a second time

    from mathindex.flows.server import tie_temporary_server

    tie_temporary_server()
    with quiet_flow_errors():
        record = train_embedder_flow(release=str(args.release), out=str(args.out), base=args.base, recipe=recipe,
                                     suites=[str(s) for s in args.suite], pool_size=args.pool, pool_seed=args.seed)
    print(f"model: {record['model_dir']}")
    print("pairs: " + ", ".join(f"{k} {v}" for k, v in record["data"]["pairs"].items()))
    t = record["training"]
    print(f"training: {t['steps']} steps, {t['seconds']:.0f} s, peak {t['peak_rss_mb']:.0f} MB, final loss {t['final_loss']}")
    for suite, after in (record["benchmark"] or {}).get("after", {}).get("suites", {}).items():
        before = record["benchmark"]["before"]["suites"][suite]["metrics"]
        print(f"{suite}: " + "  ".join(f"{m} {before[m]:.2f} -> {v:.2f}" for m, v in after["metrics"].items()))
    return EXIT_OK


def _holder(verb: str, args, cache: int = 1024):
    """The release holder of `serve` and `mcp`: ROOT's published (or --release) release, opened."""
    import functools
    import logging

    from mathindex.serve.app import configure_runtime
    from mathindex.serve.release import ServedRelease
    from mathindex.serve.swap import NoRelease, ReleaseHolder

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("mathindex.serve").setLevel(logging.INFO)
    configure_runtime()
    try:
        return ReleaseHolder(args.root, args.release, opener=functools.partial(ServedRelease, cache_size=cache))
    except NoRelease as exc:
        raise UsageError(f"mathindex {verb}: {exc}") from None


def cmd_serve(args) -> int:
    from mathindex.serve.app import serve

    for name, low in (("threads", 1), ("cache", 0)):
        if getattr(args, name) is not None and getattr(args, name) < low:
            raise UsageError(f"mathindex serve: --{name} must be at least {low}")
    if not 0 < args.port < 65536:
        raise UsageError("mathindex serve: --port must be between 1 and 65535")
    if not args.budget > 0 or not args.poll > 0:
        raise UsageError("mathindex serve: --budget and --poll must be positive")
    holder = _holder("serve", args, args.cache)
    holder.watch(args.poll)
    print(f"mathindex serve: release {holder.current.release_id} on http://{args.host}:{args.port}/"
          f"{' (pinned)' if holder.pinned else ''}", file=sys.stderr, flush=True)
    try:
        serve(holder, args.host, args.port, threads=args.threads, budget_s=args.budget, access_log=args.access_log)
    finally:
        holder.stop()
    return EXIT_OK


def cmd_mcp(args) -> int:
    import contextlib

    with contextlib.redirect_stdout(sys.stderr):  # stdout carries the protocol only
        holder = _holder("mcp", args)
        from mathindex.serve.mcp import build_mcp

        server = build_mcp(holder)
    holder.watch()
    try:
        server.run("stdio")
    finally:
        holder.stop()
    return EXIT_OK


COMMANDS = {
    "release": cmd_release,
    "extract": cmd_extract,
    "formula": cmd_formula,
    "search": cmd_search,
    "premises": cmd_premises,
    "bench": cmd_bench,
    "gate": cmd_gate,
    "reembed": cmd_reembed,
    "verify": cmd_verify,
    "warm": cmd_warm,
    "train-embedder": cmd_train_embedder,
    "serve": cmd_serve,
    "mcp": cmd_mcp,
}
