"""The command line: the public interface (`mathindex VERB …`, also `python -m mathindex`).

`main` parses the arguments (`cli.parser`), then loads only the chosen verb's module (`VERBS`) and
calls its `run(args)`, so `--help` and the light verbs start without Prefect, torch or pyarrow.
Exit codes: 0 success, 3 failing gate, 2 bad usage or bad input path, 4 integrity (a file that
differs from its release's manifest, an unreadable manifest or published.json), 5 another release
runs on the root (its lock is held), 1 any other failure.
Errors print as one line on stderr, never as a traceback (MATHINDEX_DEBUG=1 shows it), also those
raised inside a flow run (`flows.logs.quiet_flow_errors`). A reader that closes stdout early
(`… | head`) ends the command quietly, exit 1.
"""

from __future__ import annotations

import importlib
import os
import select
import sys

from mathindex.cli.exits import EXIT_BUSY, EXIT_FAILURE, EXIT_GATE, EXIT_INTEGRITY, EXIT_OK, EXIT_USAGE, UsageError
from mathindex.cli.parser import PRECISION_CHOICES, build_parser
from mathindex.errors import IntegrityError, ModelError, PairError, RootBusy, SourceError

__all__ = ["EXIT_BUSY", "EXIT_FAILURE", "EXIT_GATE", "EXIT_INTEGRITY", "EXIT_OK", "EXIT_USAGE", "PRECISION_CHOICES",
           "UsageError", "build_parser", "main"]

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

VERBS = {  # subcommand -> its module in mathindex.cli, each with run(args) -> exit code
    "release": "release",
    "reembed": "release",
    "extract": "extract",
    "formula": "formula",
    "search": "search",
    "premises": "premises",
    "bench": "bench",
    "gate": "gate",
    "verify": "verify",
    "get-corpus": "get_corpus",
    "warm": "warm",
    "train-embedder": "train",
    "serve": "serve",
    "mcp": "serve",
    "prune": "prune",
}

# what the long-running servers run under, set before the interpreter starts (`main` re-runs the command
# with it): glibc's malloc for Python's small objects too. With pymalloc's arenas, each hot swap left
# 50-100 MB more resident (whole Mathlib, 3 swaps in 8 minutes under load: RSS +15.6 %); glibc's heap,
# which the swap's malloc_trim hands back, +5.7 % (bench/serve_stress.py soak, docs/results/serving.md)
SERVER_ENV = {"serve": {"PYTHONMALLOC": "malloc"}, "mcp": {"PYTHONMALLOC": "malloc"}}

# verbs that start work before their module loads (cli/prestart.py): a formula query's SymPy worker
PRESTART = {"search"}

# the extra each verb needs beyond the base dependencies (pyproject.toml), named when a library is missing
EXTRAS = {"serve": "serve", "mcp": "serve", "release": "build", "reembed": "build", "bench": "build", "warm": "build",
          "train-embedder": "build"}


def main(argv: list[str] | None = None) -> int:
    """Runs one subcommand; its exit code, an error as one line on stderr."""
    for k, v in ENV_DEFAULTS.items():
        os.environ.setdefault(k, v)
    try:
        args = build_parser().parse_args(argv)
        if argv is None:  # a real command line (not a call from Python): it may run again, as itself
            _rerun_with(SERVER_ENV.get(args.command, {}))
        if args.command in PRESTART:
            importlib.import_module(f"{__name__}.prestart").start(args)
        code = _verb(args.command).run(args)
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
        code = EXIT_USAGE if isinstance(exc, (SourceError, FileNotFoundError, PairError, ModelError)) else EXIT_FAILURE
        code = EXIT_INTEGRITY if isinstance(exc, IntegrityError) else EXIT_BUSY if isinstance(exc, RootBusy) else code
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"mathindex: error: {msg}", file=sys.stderr)
        return code


def _rerun_with(env: dict[str, str]) -> None:
    """Replaces this process (same pid, stdio and arguments) by `python -m mathindex …` with `env`
    set, when a variable of it is unset (one the interpreter reads only at start); a value the
    user set is kept."""
    missing = {k: v for k, v in env.items() if k not in os.environ}
    if missing:
        os.execve(sys.executable, [sys.executable, "-m", "mathindex", *sys.argv[1:]], {**os.environ, **missing})


def _verb(command: str):
    """The module of `command`; a library it needs that is not installed is a one-line usage error
    naming the extra that brings it (pyproject.toml: base, `serve`, `build`)."""
    try:
        return importlib.import_module(f"{__name__}.{VERBS[command]}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "mathindex":
            raise
        extra = EXTRAS.get(command)
        how = f"it comes with the {extra} extra: pip install 'mathindex[{extra}]'" if extra else "reinstall mathindex"
        raise UsageError(f"mathindex {command}: {exc.name} is not installed; {how}") from None


def _stdout_closed() -> bool:
    """True when stdout is a pipe whose reader went away (`mathindex search … | head`: poll says
    POLLERR); stdout then points at /dev/null, so the interpreter's last flush stays quiet too."""
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
