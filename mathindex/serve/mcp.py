"""The MCP server (`mathindex mcp ROOT`, stdio transport): the API's search, resolve, formula and
declaration as tools, over the same hot-swapped release holder as the HTTP server."""

from __future__ import annotations

import functools

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mathindex.serve.models import (
    DeclarationResponse,
    FormulaResponse,
    ResolveResponse,
    SearchResponse,
)
from mathindex.serve.release import BadInput, describe
from mathindex.serve.swap import ReleaseHolder

MAX_QUERY_BYTES = 4096
MAX_K = 100

INSTRUCTIONS = (
    "Search a mathindex release of Lean 4 declarations (Mathlib) and LaTeX statements. `search` takes "
    "words, LaTeX between $…$, a Lean term between backticks or a declaration name; `resolve` looks a "
    "name, tag or label up exactly; `formula` parses one formula; `declaration` gives a declaration's "
    "statement, dependencies and the declarations that cite it."
)


def _text(value: str, what: str) -> str:
    if len(value.encode("utf-8", errors="replace")) > MAX_QUERY_BYTES:
        raise BadInput(f"{what} is longer than {MAX_QUERY_BYTES} bytes")
    if not value.strip():
        raise BadInput(f"{what} is empty")
    return value


def _answers(fn):
    """Bad input reaches the client as the tool's error message (not a crash, no traceback)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BadInput as exc:
            raise ToolError(str(exc)) from None
    return wrapper


def build_mcp(holder: ReleaseHolder) -> MCPServer:
    server = MCPServer("mathindex", instructions=INSTRUCTIONS)

    @server.tool()
    @_answers
    def search(query: str, k: int = 10) -> SearchResponse:
        """Ranked declarations and statements for a query, each with kind, title, file:line and its
        rank in every channel (identifier, lexical, embedding, formula)."""
        if not 1 <= k <= MAX_K:
            raise BadInput(f"k must be between 1 and {MAX_K}")
        return holder.current.search(_text(query, "query"), k)

    @server.tool()
    @_answers
    def resolve(identifier: str) -> ResolveResponse:
        """The identifier resolver alone: exact names, aliases (Stacks tags, labels), dotted suffixes."""
        return holder.current.resolve(_text(identifier, "identifier"))

    @server.tool()
    @_answers
    def formula(latex: str) -> FormulaResponse:
        """Operator tree, path tokens, canonical form and parse status of one formula (LaTeX or Lean)."""
        return describe(_text(latex, "latex"))

    @server.tool()
    @_answers
    def declaration(name: str) -> DeclarationResponse:
        """A declaration's (or statement's) row, dependencies, the declarations citing it and its location."""
        release = holder.current
        found = release.declaration(_text(name, "name"))
        if found is None:
            raise BadInput(f"no declaration or statement named {name!r} in release {release.release_id}")
        return found

    return server
