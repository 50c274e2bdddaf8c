"""The MCP server (`mathindex mcp ROOT`, stdio transport): the API's search, resolve, formula,
declaration and premises as tools, over the same hot-swapped release holder as the HTTP server."""

from __future__ import annotations

import functools

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mathindex.serve.responses import (
    DeclarationResponse,
    FormulaResponse,
    PremisesResponse,
    ResolveResponse,
    SearchResponse,
)
from mathindex.limits import BadInput, checked_k, checked_place, checked_text
from mathindex.serve.release import PREMISES_K, describe
from mathindex.serve.swap import ReleaseHolder

INSTRUCTIONS = (
    "Search a mathindex release of Lean 4 declarations (Mathlib) and LaTeX statements. `search` takes "
    "words, LaTeX between $…$, a Lean term between backticks or a declaration name; `resolve` looks a "
    "name, tag or label up exactly; `formula` parses one formula; `declaration` gives a declaration's "
    "statement, dependencies and the declarations that cite it; `premises` suggests declarations a "
    "proof of a Lean goal is likely to use."
)


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
        rank in every channel (identifier, lexical, embedding, formula, formal, parent)."""
        return holder.current.search(checked_text(query, "query"), checked_k(k))

    @server.tool()
    @_answers
    def resolve(identifier: str) -> ResolveResponse:
        """The identifier resolver alone: exact names, aliases (Stacks tags, labels), dotted suffixes."""
        return holder.current.resolve(checked_text(identifier, "identifier"))

    @server.tool()
    @_answers
    def formula(latex: str) -> FormulaResponse:
        """Operator tree, path tokens, canonical form and parse status of one formula (LaTeX or Lean)."""
        return describe(checked_text(latex, "latex"))

    @server.tool()
    @_answers
    def declaration(name: str) -> DeclarationResponse:
        """A declaration's (or statement's) row, dependencies, the declarations citing it and its location."""
        release = holder.current
        found = release.declaration(checked_text(name, "name"))
        if found is None:
            raise BadInput(f"no declaration or statement named {name!r} in release {release.release_id}")
        return found

    @server.tool()
    @_answers
    def premises(goal: str, context: str = "", k: int = PREMISES_K, file: str | None = None,
                 line: int | None = None) -> PremisesResponse:
        """Declarations a proof of the Lean goal (under the hypotheses `context`, as Lean binders) is
        likely to name, each with its score, signals, kind and file:line. With `file` (the goal's
        file or module) and `line`, only what that file imports and declares above the line."""
        return holder.current.premises(checked_text(goal, "goal"), checked_text(context, "context", empty_ok=True),
                                       checked_k(k), *checked_place(file, line))

    return server
