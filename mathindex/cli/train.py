"""`mathindex train-embedder RELEASE --out MODELS`: trains an embedder on pairs mined from a
release's tables, installs it under MODELS and prints its benchmark before and after."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.embed.models import ModelError, model_revision
from mathindex.embed.pairs import PairError, mine_pairs, read_release_tables
from mathindex.evaluation.suites import is_suite_file, project_suite_queries
from mathindex.flows.logs import quiet_flow_errors
from mathindex.flows.server import tie_temporary_server
from mathindex.flows.train_embedder import train_embedder_flow

RECIPE_OPTIONS = ("steps", "batch_size", "max_seq_length", "train_max_seq_length", "lr")


def run(args: argparse.Namespace) -> int:
    _check(args)
    recipe = {"name": args.name, "seed": args.seed, "hard_negatives": not args.no_hard_negatives}
    recipe |= {k: getattr(args, k) for k in RECIPE_OPTIONS if getattr(args, k) is not None}
    _log_training_to_stderr()
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


def _check(args: argparse.Namespace) -> None:
    """The arguments and the training data, checked before Prefect starts and before anything is
    written: a suite given as RELEASE, an unusable base model or option, a missing table or an
    empty pair set is a one-line usage error."""

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
    try:
        queries, targets, _ = project_suite_queries(args.release, args.suite)
        mine_pairs(read_release_tables(args.release), queries, targets, args.seed)
    except PairError as exc:
        refuse(str(exc))


def _log_training_to_stderr() -> None:
    """One line per 10 steps of the trainer's log on stderr: readable in a worker's log."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s", "%H:%M:%S"))
    train_log = logging.getLogger("mathindex.embed.train")
    train_log.addHandler(handler)
    train_log.setLevel(logging.INFO)
    train_log.propagate = False  # Prefect's handlers would print each line a second time
