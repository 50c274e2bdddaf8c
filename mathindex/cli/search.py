"""`mathindex search RELEASE QUERY`: the ranked hits of every channel fused, or with --formal the
formal channel alone in Loogle's syntax and output; with --queries FILE, one JSON line per query of a
JSON Lines file, from one process. Queries run on the server's query path (cli/query.py)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from mathindex.cli.exits import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError
from mathindex.cli.query import node_fields, node_place, one_query, served, usage
from mathindex.cli.release_arg import resolved_release
from mathindex.formal.query import FormalQueryError, UnknownConstant
from mathindex.formal.search import FormalIndex, looks_like_loogle
from mathindex.limits import BadInput, checked_k, checked_text
from mathindex.search.confidence import MEANING
from mathindex.serve.release import ServedRelease
from mathindex.serve.responses import SearchResponse
from mathindex.store.integrity import check_release
from mathindex.store.layout import ReleaseLayout

MODES = ("fused", "formal")  # a --queries line's "mode": every channel fused (default), or the formal channel alone
MAX_LINE_BYTES = 64 << 10  # a --queries line longer than this is that line's error (its query is at most 4 KB)


def run(args: argparse.Namespace) -> int:
    if (args.query is None) == (args.queries is None):
        raise UsageError("mathindex search: give a QUERY or --queries FILE, not both or neither")
    release = resolved_release(args)
    try:
        k = checked_k(args.k)
        query = None if args.query is None else checked_text(args.query, "query")  # before the release is opened
    except BadInput as exc:
        raise usage("search", exc) from None
    if args.queries is not None:
        return _batch(release, args)
    if args.formal:
        return _formal_search(release, query, k, args)
    with one_query():
        opened = served(release, args)
        opened.ready_for(query)
        answer = opened.search(query, k)
    formal = opened.engine.channel("formal") if looks_like_loogle(query) else None  # else no notes
    if formal is not None:
        for note in formal.index.query_notes(query):
            print(f"(formal: {note})", file=sys.stderr)
    return _print_fused(answer, args.json)


def _print_fused(answer: SearchResponse, as_json: bool) -> int:
    if as_json:
        print(json.dumps(_fused_json(answer), ensure_ascii=False, indent=2))
        return EXIT_OK
    for ch, why in answer.unavailable.items():
        print(f"(channel {ch} unavailable: {why})", file=sys.stderr)
    if answer.notice:
        print(f"{answer.notice}; the nearest hits:" if answer.hits else answer.notice)
    print(f"match: {answer.match} ({MEANING[answer.match]})")
    for h in answer.hits:
        chans = " ".join(f"{c}#{r}" for c, r in h.channels.items())
        print(f"{h.rank:>3}. {h.name}  ({node_place(h)})  [{chans}]")
        if h.title:
            print(f"       {' '.join(h.title.split())[:110]}")
        for m in h.also:
            chans = " ".join(f"{c}#{r}" for c, r in m.channels.items())
            print(f"       also in {m.also_in} {m.name}  ({node_place(m)})  [{chans}]")
    if not answer.hits:
        print("no results")
    return EXIT_OK


def _fused_json(answer: SearchResponse) -> dict:
    """`search --json`: the query, the match verdict and notice, each hit's rank, name, score, channel
    ranks, kind, title and place, and what was folded into it (`also`: nodes stating the same fact,
    each with its name, own score and ranks, kind, title and place), and the channels that could not open."""
    hits = [{"rank": h.rank, "name": h.name, "score": h.score, "channels": h.channels, **node_fields(h),
             "also": [{"name": m.name, "also_in": m.also_in, "via": m.via, "score": m.score, "channels": m.channels,
                       **node_fields(m)} for m in h.also]}
            for h in answer.hits]  # fmt: skip
    return {"query": answer.query, "match": answer.match, "notice": answer.notice, "hits": hits,
            "unavailable": answer.unavailable}


def _formal_index(release: Path, verify: bool) -> FormalIndex:
    """The formal index alone (torch-free, as the engine's formal channel opens it), after the check
    the engine makes; a release without one is a usage error."""
    if not ReleaseLayout(release).table("formal_statements").is_file():
        raise UsageError(f"mathindex search: {release} has no formal index (a release built before the formal channel)")
    check_release(release, quick=not verify)
    return FormalIndex(release)


def _formal_json(index: FormalIndex, query: str, k: int) -> dict:
    """`search --formal --json`: Loogle's answer (count, hits with name, signature and module,
    notes); FormalQueryError or UnknownConstant for a query it cannot read."""
    res = index.loogle(query, k)
    hits = [{"rank": i, "name": h.name, "exact_conclusion": h.exact, "channels": {"formal": i}, **index.describe_name(h.name)}
            for i, h in enumerate(res.hits, 1)]  # fmt: skip
    return {"query": res.query, "count": res.count, "count_exact": res.exact_count, "hits": hits,
            "notes": res.notes, "seconds": res.seconds}


def _formal_search(release: Path, query: str, k: int, args: argparse.Namespace) -> int:
    """`search --formal`: Loogle-like output (name, type, module) with the count of all matches."""
    index = _formal_index(release, args.verify)
    try:
        answer = _formal_json(index, query, k)
    except (FormalQueryError, UnknownConstant) as exc:
        raise UsageError(f"mathindex search: {exc}") from None
    if args.json:
        print(json.dumps(answer, ensure_ascii=False, indent=2))
        return EXIT_OK
    n, exact = answer["count"], answer["count_exact"]
    print(f"Found {'' if exact else 'about '}{n} declaration{'s' * (n != 1)} matching "
          f"{answer['query']}{'' if exact else ' (estimated from the smallest candidates)'}; showing {len(answer['hits'])}")
    for h in answer["hits"]:
        print(f"{h['rank']:>3}. {h['name']}  [formal#{h['rank']}]\n       {' '.join(h['signature'].split())[:200]}\n"
              f"       {h['module']}")
    for note in answer["notes"]:
        print(f"  {note}")
    return EXIT_OK


# -- batch mode (--queries FILE) ---------------------------------------------------------------------


def _batch(release: Path, args: argparse.Namespace) -> int:
    """One JSON line per query line of args.queries (blank lines skipped), from one opened release:
    the answer of `search --json` (or `--formal --json`) with its `line`, `mode` and `k`, or
    {"line", "error"} for a line that is not a query or a query that cannot be answered. Exit 0 when
    every line was answered, 2 when only bad lines failed, 1 when a query failed otherwise."""
    default_mode = "formal" if args.formal else "fused"
    opened: ServedRelease | None = None
    formal: FormalIndex | None = None
    bad_input = failed = False
    with _queries_file(args.queries) as fh:
        for n, raw in _lines(fh):
            try:
                query, k, mode = _parsed_line(raw, args.k, default_mode)
            except BadInput as exc:
                bad_input = True
                print(json.dumps({"line": n, "error": _one_line(exc)}, ensure_ascii=False), flush=True)
                continue
            if mode == "formal":  # opened once, when first needed; a release that does not open ends the batch
                formal = formal or _batch_formal(release, args, opened)
            else:
                opened = opened or served(release, args)
            try:
                if mode == "fused":
                    opened.ready_for(query)
                out = _formal_json(formal, query, k) if mode == "formal" else _fused_json(opened.search(query, k))
                out = {"line": n, "mode": mode, "k": k, **out}
            except (BadInput, FormalQueryError, UnknownConstant) as exc:
                bad_input, out = True, {"line": n, "query": query, "error": _one_line(exc)}
            except Exception as exc:  # noqa: BLE001 - one query's failure is its line's answer, not the batch's end
                failed, out = True, {"line": n, "query": query, "error": f"{type(exc).__name__}: {_one_line(exc)}"}
            print(json.dumps(out, ensure_ascii=False), flush=True)
    return EXIT_FAILURE if failed else EXIT_USAGE if bad_input else EXIT_OK


def _batch_formal(release: Path, args: argparse.Namespace, opened: ServedRelease | None) -> FormalIndex:
    """The formal index of a batch: the opened engine's, else opened alone."""
    channel = opened.engine.channel("formal") if opened is not None else None
    return channel.index if channel is not None else _formal_index(release, args.verify)


def _queries_file(path: Path):
    """The --queries file as bytes (`-`: standard input)."""
    if str(path) == "-":
        return open(sys.stdin.fileno(), "rb", closefd=False)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise UsageError(f"mathindex search: --queries: {exc.strerror}: {path}") from None


def _lines(fh: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(line number, its bytes) of each non-blank line; None for a line longer than MAX_LINE_BYTES
    (read past in bounded pieces, never held whole)."""
    n = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        n += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := fh.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield n, None
        elif raw.strip():
            yield n, raw


def _parsed_line(raw: bytes | None, default_k: int, default_mode: str) -> tuple[str, int, str]:
    """(query, k, mode) of one --queries line, each checked as the single-query CLI checks it;
    BadInput for anything else."""
    if raw is None:
        raise BadInput(f"line is longer than {MAX_LINE_BYTES} bytes")
    try:
        row = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput("line is not valid UTF-8") from None
    except ValueError as exc:
        raise BadInput(f"line is not JSON: {exc}") from None
    if not isinstance(row, dict) or not isinstance(row.get("query"), str):
        raise BadInput('line is not a JSON object with a string "query"')
    k, mode = row.get("k", default_k), row.get("mode", default_mode)
    if isinstance(k, bool) or not isinstance(k, int):
        raise BadInput('"k" is not an integer')
    if mode not in MODES:
        raise BadInput(f'"mode" must be one of {", ".join(MODES)}')
    return checked_text(row["query"], "query"), checked_k(k), mode


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
