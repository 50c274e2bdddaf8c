"""`mathindex serve ROOT` (HTTP: API and web page) and `mathindex mcp ROOT` (an MCP server on stdio):
ROOT's published release (or a pinned one), hot-swapped when published.json changes."""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import signal
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.serve.app import configure_runtime, serve as serve_http
from mathindex.serve.mcp import build_mcp
from mathindex.serve.release import ServedRelease
from mathindex.serve.swap import NoRelease, ReleaseHolder


def run(args: argparse.Namespace) -> int:
    with sigterm_unwinds():
        return mcp(args) if args.command == "mcp" else serve(args)


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """SIGTERM raises SystemExit (exit 143) in the main thread, so that `finally` blocks run and the
    holder removes its served marker (`store.serving`). uvicorn captures SIGTERM while it serves and
    raises it again once it has shut down; without this, that second SIGTERM killed the process."""
    def _exit(signum, _frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve(args: argparse.Namespace) -> int:
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
        serve_http(holder, args.host, args.port, threads=args.threads, budget_s=args.budget, access_log=args.access_log)
    finally:
        holder.stop()
    return EXIT_OK


def mcp(args: argparse.Namespace) -> int:
    with contextlib.redirect_stdout(sys.stderr):  # stdout carries the protocol only
        holder = _holder("mcp", args)
        server = build_mcp(holder)
    holder.watch()
    try:
        server.run("stdio")
    finally:
        holder.stop()
    return EXIT_OK


BASE_URL_ENV = "MATHINDEX_BASE_URL"


def base_url(verb: str, args: argparse.Namespace) -> str | None:
    """--base-url, else $MATHINDEX_BASE_URL, else None: an http(s) URL with a host, no query or fragment."""
    url = args.base_url if args.base_url is not None else os.environ.get(BASE_URL_ENV) or None
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise UsageError(f"mathindex {verb}: --base-url must be an http(s) URL such as http://127.0.0.1:8000, not {url!r}")
    return url.rstrip("/")


def _holder(verb: str, args: argparse.Namespace, cache: int = 1024) -> ReleaseHolder:
    """The release holder of `serve` and `mcp`: ROOT's published (or --release) release, opened."""
    url = base_url(verb, args)  # before the release opens: a bad URL fails at once
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("mathindex.serve").setLevel(logging.INFO)
    configure_runtime()
    try:
        return ReleaseHolder(args.root, args.release, opener=functools.partial(ServedRelease, cache_size=cache, base_url=url))
    except NoRelease as exc:
        raise UsageError(f"mathindex {verb}: {exc}") from None
