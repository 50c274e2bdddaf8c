"""The input limits every front end applies (the CLI, the HTTP API, the MCP server): a query's, name's,
formula's, goal's or context's size and encoding, how many hits or premises one answer holds, and a
premises request's place. Imports nothing of mathindex, so that any front end can check its input
before it opens a release."""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

MAX_QUERY_BYTES = 4096  # a query, formula, name, goal or context longer than this is refused (413)
MAX_K = 100  # hits or premises per answer


class BadInput(ValueError):
    """Input a front end will not answer: an HTTP status (4xx) and a one-line message; the CLI
    prints the message and exits 2, MCP returns it as the tool's error."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _problem(value: str, what: str, *, empty_ok: bool, max_bytes: int | None) -> BadInput | None:
    """Why `value` is refused, or None: blank (unless `empty_ok`), not valid UTF-8 (a lone
    surrogate: how Python reads undecodable bytes of a command line, or a JSON `\\udcff`), longer
    than `max_bytes` of UTF-8."""
    if not empty_ok and not value.strip():
        return BadInput(f"{what} is empty")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return BadInput(f"{what} is not valid UTF-8")
    if max_bytes is not None and size > max_bytes:
        return BadInput(f"{what} is longer than {max_bytes} bytes", 413)
    return None


def checked_text(value: str, what: str, *, empty_ok: bool = False) -> str:
    """`value` when it is valid UTF-8 (else BadInput 400), at most MAX_QUERY_BYTES of it (else 413)
    and, unless `empty_ok`, not blank (else 400)."""
    problem = _problem(value, what, empty_ok=empty_ok, max_bytes=MAX_QUERY_BYTES)
    if problem is not None:
        raise problem
    return value


def checked_k(k: int) -> int:
    """`k` when it is between 1 and MAX_K (else BadInput 400)."""
    if not 1 <= k <= MAX_K:
        raise BadInput(f"k must be between 1 and {MAX_K}")
    return k


def checked_place(file: str | None, line: int | None) -> tuple[str | None, int | None]:
    """(file, line) of a premises request: a file as `checked_text`, a line of at least 1 and only
    with a file (else BadInput 400)."""
    if file is not None:
        file = checked_text(file, "file").strip()
    if line is not None and (file is None or line < 1):
        raise BadInput("line needs a file and is at least 1")
    return file, line


def checked_url_part(raw: bytes, what: str) -> bytes:
    """`raw` (a request's raw path or query string) when it percent-decodes to valid UTF-8, else
    BadInput 400: a web framework decodes `%FF` to U+FFFD, so the bytes are checked before it."""
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{what} is not valid UTF-8") from None
    return raw


def query_problem(query: str) -> str | None:
    """Why the engine cannot search `query` (blank, or not valid UTF-8), or None; no size limit:
    the front ends apply `checked_text` before, and suites are searched as they are written."""
    problem = _problem(query, "query", empty_ok=False, max_bytes=None)
    return None if problem is None else str(problem)
