"""The MCP server (`mathindex mcp ROOT`, stdio transport): the API's search, formal (Loogle) search,
resolve, formula, declaration and premises as tools, over the same hot-swapped release holder as
the HTTP server. Arguments carry descriptions and bounds in their schemas; locations are
`{corpus, path, line}`, with an absolute `url` only when a base URL is configured."""

from __future__ import annotations

import functools
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from mathindex.serve.responses import (
    FormulaResponse,
    StdioDeclarationResponse,
    StdioFormalSearchResponse,
    StdioPremisesResponse,
    StdioResolveResponse,
    StdioSearchResponse,
)
from mathindex.limits import MAX_K, MAX_QUERY_BYTES, BadInput, checked_k, checked_place, checked_text
from mathindex.serve.release import PREMISES_K, describe
from mathindex.serve.swap import ReleaseHolder

INSTRUCTIONS = (
    "Search a mathindex release of Lean 4 declarations (Mathlib) and LaTeX statements. `search` takes "
    "words, LaTeX between $…$, a Lean term between backticks or a declaration name, and says how well its "
    "hits match (`match`: strong, weak or none; a `notice` when the query names an identifier the release "
    "lacks); `formal` is Loogle-style search over Lean types; `resolve` looks a name, tag, label or "
    "external identifier (Wikidata QID, arXiv id, DOI, MR, Zbl, OEIS) up exactly; `formula` parses one formula; `declaration` gives a declaration's statement, dependencies and "
    "the declarations that cite it; `premises` suggests declarations a proof of a Lean goal is likely to use."
)
LOCATION_KEYS = ("location", "defined_at")  # the fields of the answers that hold a Location

T = TypeVar("T", bound=BaseModel)


def _text(what: str) -> Any:
    return Field(description=what, min_length=1, max_length=MAX_QUERY_BYTES)


Query = Annotated[str, _text("words, LaTeX between $…$, a Lean term between backticks, or a declaration "
                             "name, Stacks tag or label")]
LoogleQuery = Annotated[str, _text("Loogle syntax: constants (`Real.sqrt`), \"name fragments\", patterns with _ "
                                   "and ?x (`_ * (_ ^ _)`), `⊢ conclusion`, separated by commas")]
Identifier = Annotated[str, _text("a full or dotted-suffix declaration name, a Stacks tag, a LaTeX label, or an external "
                                   "identifier (Q11518, A000010, arXiv:2106.01234, a DOI, MR0344216, Zbl 0273.12001)")]
Latex = Annotated[str, _text("one formula, LaTeX (`\\frac{a}{b}`) or a Lean term")]
Name = Annotated[str, _text("a declaration's full name or a LaTeX statement's name, as hits give it")]
Goal = Annotated[str, _text("the goal, a Lean term (`a * b ≤ c`)")]
Context = Annotated[str, Field(description="hypotheses as Lean binders (`{a b : ℕ} (h : a ≤ b)`)",
                               max_length=MAX_QUERY_BYTES)]
File = Annotated[str | None, Field(description="the goal's file (`Mathlib/Order/Basic.lean`) or module: only "
                                               "what it imports and declares above `line`", max_length=MAX_QUERY_BYTES)]
Line = Annotated[int | None, Field(description="the goal's line in `file` (needs `file`)", ge=1)]


def _k(what: str) -> Any:
    return Field(description=f"{what} to return, 1 to {MAX_K}", ge=1, le=MAX_K)


def _answers(fn):
    """Bad input reaches the client as the tool's error message (not a crash, no traceback)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BadInput as exc:
            raise ToolError(str(exc)) from None
    return wrapper


def over_stdio(answer: BaseModel, model: type[T]) -> T:
    """`answer` as `model`, its Stdio* twin (serve/responses.py): each location as `{corpus, path,
    line, url}`, the absolute url only where the release was given a base URL."""
    return model.model_validate(_relocated(answer.model_dump()))


def _relocated(value: Any) -> Any:
    if isinstance(value, list):
        return [_relocated(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {key: _source(v) if key in LOCATION_KEYS and isinstance(v, dict) else _relocated(v) for key, v in value.items()}


def _source(location: dict) -> dict:
    return {"corpus": location.get("corpus"), "path": location.get("file"), "line": location.get("line"),
            "url": location.get("url")}


def build_mcp(holder: ReleaseHolder) -> MCPServer:
    """The tools over `holder`'s current release (read once per call)."""
    server = MCPServer("mathindex", instructions=INSTRUCTIONS)

    @server.tool()
    @_answers
    def search(query: Query, k: Annotated[int, _k("hits")] = 10) -> StdioSearchResponse:
        """Ranked declarations and statements for a query, each with kind, title, {corpus, path, line}
        and its rank in every channel (identifier, lexical, embedding, formula, formal, parent), and
        `match` (strong, weak, none): whether anything in the release matches at all."""
        return over_stdio(holder.current.search(checked_text(query, "query"), checked_k(k)), StdioSearchResponse)

    @server.tool()
    @_answers
    def formal(query: LoogleQuery, k: Annotated[int, _k("declarations")] = 10) -> StdioFormalSearchResponse:
        """Loogle-style search over Lean types: every declaration matching all terms, ranked (those
        whose conclusion has a pattern's shape first), with the count of all matches."""
        return over_stdio(holder.current.formal(checked_text(query, "query"), checked_k(k)), StdioFormalSearchResponse)

    @server.tool()
    @_answers
    def resolve(identifier: Identifier) -> StdioResolveResponse:
        """The identifier resolver alone: exact names, aliases (Stacks tags, labels), external identifiers
        (Wikidata QID, OEIS, arXiv, DOI, MR, Zbl), dotted suffixes; a `notice` when nothing matches."""
        return over_stdio(holder.current.resolve(checked_text(identifier, "identifier")), StdioResolveResponse)

    @server.tool()
    @_answers
    def formula(latex: Latex) -> FormulaResponse:
        """Operator tree, path tokens, canonical form and parse status of one formula (LaTeX or Lean)."""
        return describe(checked_text(latex, "latex"))

    @server.tool()
    @_answers
    def declaration(name: Name) -> StdioDeclarationResponse:
        """A declaration's (or statement's) row, dependencies, the declarations citing it and its location."""
        release = holder.current
        found = release.declaration(checked_text(name, "name"))
        if found is None:
            raise BadInput(f"no declaration or statement named {name!r} in release {release.release_id}")
        return over_stdio(found, StdioDeclarationResponse)

    @server.tool()
    @_answers
    def premises(goal: Goal, context: Context = "", k: Annotated[int, _k("premises")] = PREMISES_K,
                 file: File = None, line: Line = None) -> StdioPremisesResponse:
        """Declarations a proof of the Lean goal (under the hypotheses `context`, as Lean binders) is
        likely to name, each with its score, signals, kind and location. With `file` (the goal's
        file or module) and `line`, only what that file imports and declares above the line."""
        answer = holder.current.premises(checked_text(goal, "goal"), checked_text(context, "context", empty_ok=True),
                                         checked_k(k), *checked_place(file, line))
        return over_stdio(answer, StdioPremisesResponse)

    return server
