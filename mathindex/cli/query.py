"""What the query verbs (`search`, `premises`) share: the release opened as `mathindex serve` opens it
(serve/release.py ServedRelease: queries encoded without torch from the root's ONNX exports), input
checked by `mathindex.limits` as HTTP and MCP check it, and a hit's CLI row."""

from __future__ import annotations

import argparse
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mathindex.cli.exits import UsageError
from mathindex.limits import BadInput
from mathindex.serve.release import ServedRelease
from mathindex.serve.responses import Node


def served(release: Path, args: argparse.Namespace, *, premises: bool = False) -> ServedRelease:
    """`release` opened for a few queries: every file at its recorded size (every sha256 with
    --verify), not warmed, no answer cache, each channel opened at the first query that runs it
    (`lazy`: a prose query never opens the formula or formal index); the premise ranker only for
    `premises`."""
    return ServedRelease(release, verify="full" if getattr(args, "verify", False) else "quick", cache_size=0,
                         warm=False, premises=premises, lazy=True)


@contextmanager
def one_query() -> Iterator[None]:
    """Around opening a release and answering one query: no cyclic garbage collection (its passes
    over the millions of objects an opened whole-Mathlib release holds cost 0.1-0.15 s of CPU). Not
    for --queries, whose process runs on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def usage(verb: str, exc: BadInput) -> UsageError:
    """Bad input as the CLI says it: one line, exit 2."""
    return UsageError(f"mathindex {verb}: {' '.join(str(exc).split())}")


def node_fields(node: Node) -> dict:
    """kind, title, file and line of a hit, as `mathindex search --json` and `premises --json` list them."""
    return {"kind": node.kind, "title": node.title, "file": node.location.file, "line": node.location.line}


def node_place(node: Node) -> str:
    """`kind, file:line` of a hit's text row."""
    return f"{node.kind or '?'}, {node.location.file or '?'}:{node.location.line or '?'}"
