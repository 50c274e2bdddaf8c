"""Response models of the HTTP API (and the MCP tools): what `/openapi.json` documents.

Hits carry names, channel ranks and fused scores, never vectors."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorBody(_Model):
    """Every 4xx and 5xx answer: one line of JSON."""

    error: str = Field(description="what was wrong, in one sentence")
    status: int = Field(description="the HTTP status code, repeated")


class Location(_Model):
    corpus: str | None = None
    file: str | None = None
    line: int | None = None
    source_url: str | None = Field(None, description="this server's view of the source file at that line")
    url: str | None = Field(None, description="source_url as an absolute URL, when the server was given its "
                                              "base URL (`--base-url`, MATHINDEX_BASE_URL)")


class SourceLocation(_Model):
    """A node's source over MCP (stdio), where a relative link means nothing."""

    corpus: str | None = None
    path: str | None = Field(None, description="the file, relative to its corpus root")
    line: int | None = None
    url: str | None = Field(None, description="the source line on the HTTP server, only when a base URL is configured")


class Node(_Model):
    """A searchable node: a Lean declaration or a LaTeX statement."""

    name: str
    kind: str | None = None
    title: str | None = Field(None, description="signature or statement opening")
    location: Location


class TextPart(_Model):
    """A piece of a title or statement: prose (`text`), or a formula (`latex`) with its sanitised MathML."""

    text: str | None = None
    latex: str | None = None
    mathml: str | None = Field(None, description="MathML of `latex` rebuilt from an allowlist of MathML elements and attributes")


ALSO = "other nodes that state the same fact and answered too, folded into this hit, each with its location and its own ranks"


class FoldedNode(Node):
    """A node folded into a hit: it states the same fact (the release's `same_as` table: a declaration's
    `@[stacks TAG]` and the statement of that tag) and answered the same query."""

    also_in: str = Field(description="what the hit is also in: `Stacks` for the statement of a tag, else the node's "
                                     "corpus (\"also in Stacks 0BQX\")")
    via: str | None = Field(None, description="the attribute that ties it to the hit (stacks)")
    score: float = Field(description="its own fused score, as it would have ranked unfolded")
    channels: dict[str, int] = Field(description="its own rank in each channel that found it, unfolded")


class SearchHit(Node):
    rank: int = Field(description="1-based position in the answer")
    score: float = Field(description="fused score (weighted reciprocal rank, then the reference prior); for a "
                                     "folded hit the group's, fused as one node")
    channels: dict[str, int] = Field(description="the hit's rank in each channel that found it "
                                                 "(identifier, lexical, embedding, formula, formal, parent); for a "
                                                 "folded hit the group's best member's, in each channel any member is in")
    also: list[FoldedNode] = Field(default_factory=list, description=ALSO)
    title_parts: list[TextPart] | None = Field(None, description="a LaTeX statement's title as prose and MathML "
                                               "parts, when it has formulas (HTTP only)")


class SearchResponse(_Model):
    release_id: str
    query: str
    query_kind: str = Field(description="`words`, `formula` or `lean`: which fusion weights were used")
    k: int
    match: Literal["strong", "weak", "none"] = Field(
        description="how well the hits match: strong (an exact identifier, or channels agreeing on the first hit), "
                    "weak (hits, but no channel convincing), none (nothing in the release matches; the hits are "
                    "the nearest there are)")
    notice: str | None = Field(None, description="said before the hits: the query looks like an identifier the "
                                                 "release lacks (\"no Stacks tag 0BCD in this release\")")
    hits: list[SearchHit]
    resolved: list[str] = Field(description="names the identifier resolver matched (ranked first)")
    unavailable: dict[str, str] = Field(description="channels that could not open, with the reason")
    took_ms: float = Field(description="time the engine took for this answer")
    cached: bool = Field(False, description="answered from this release's answer cache (took_ms is the first answer's)")


class FormalHit(Node):
    """A declaration matching every term of a Loogle-style query (mathindex/formal/search.py)."""

    rank: int = Field(description="1-based position in the answer")
    exact_conclusion: bool = Field(description="its conclusion has a pattern's very shape")


class FormalSearchResponse(_Model):
    """`/search?mode=formal` and the MCP `formal` tool: Loogle mode, the formal index alone."""

    release_id: str
    query: str
    mode: Literal["formal"] = "formal"
    k: int
    count: int = Field(description="declarations matching every term")
    count_exact: bool = Field(description="false when `count` is estimated from the smallest candidate sets")
    hits: list[FormalHit]
    notes: list[str]
    took_ms: float = Field(description="time the formal index took for this answer")


class ResolveResponse(_Model):
    release_id: str
    query: str
    nodes: list[Node] = Field(description="what the identifier resolver alone matched, in its order (the nodes an "
                                          "external identifier names: the most referenced first)")
    notice: str | None = Field(None, description="when nothing matched and the query looks like an identifier: that "
                                                 "the release has none such (\"no DOI 10.5555/x in this release\")")


class FormulaResponse(_Model):
    input: str
    tree: Any = Field(description="the operator tree (nested objects)")
    tree_text: str | None = None
    path_tokens: list[str]
    canonical: str | None = None
    canonical_status: str
    parser: str = Field(description="grammar, mathml (fallback) or tokens")
    status: str = Field(description="ok, partial (a tree of the input with the tokens the grammar stumbled on dropped), fallback or error")
    syntax: str = Field(description="latex or lean")
    reason: str | None = None
    mathml: str | None = Field(None, description="the input rendered as MathML (LaTeX input only)")


class Dependency(_Model):
    target: str
    resolved: bool
    role: str = Field(description="statement or proof")


class Citation(_Model):
    name: str
    role: str = Field(description="whether the citing declaration names it in its statement or only its proof")


class DeclarationResponse(_Model):
    release_id: str
    node: Node
    row: dict[str, Any] = Field(description="the declarations row (Lean) or latex_statements row (LaTeX)")
    dependencies: list[Dependency]
    dependencies_total: int
    cited_by: list[Citation] = Field(description="declarations whose statement or proof names this one")
    cited_by_total: int
    defined_at: Location
    informal: str | None = Field(None, description="the informal rendering of a Lean declaration (informalisations)")
    same_as: list[str] = Field(default_factory=list, description="the other nodes that state the same fact "
                                                                 "(same_as: a declaration's Stacks tag, or the declarations citing a tag)")


class PremiseHit(Node):
    """A declaration a proof of the goal is likely to name (mathindex.premises)."""

    rank: int = Field(description="1-based position in the answer")
    score: float = Field(description="the ranker's weighted sum of the signals")
    signals: dict[str, float] = Field(description="each non-zero signal (lexical, knn, formal, usage, embedding, "
                                                  "cooc, covered, local), in 0..1")


class PremisesResponse(_Model):
    release_id: str
    goal: str
    context: str = Field(description="the hypotheses, as Lean binders")
    k: int
    file: str | None = Field(None, description="the goal's file: only what it imports and declares above `line` was ranked")
    line: int | None = None
    premises: list[PremiseHit]
    constants: list[str] = Field(description="the goal's constants as the ranker resolved them")
    fallback: str | None = Field(None, description="the channel that answered alone when the goal names no known constant")
    notes: list[str]
    took_ms: float = Field(description="time the ranker took for this answer")


class Refusal(_Model):
    release_id: str
    reason: str
    at: float = Field(description="unix time of the refusal")


class HealthResponse(_Model):
    status: str
    release_id: str
    watching: bool = Field(description="whether published.json is watched for new releases")
    swaps: int = Field(description="releases switched to since start")
    refused: list[Refusal] = Field(description="releases that failed to open (latest last)")
    uptime_s: float
    query_packs: dict[str, int] | None = Field(None, description="the served release's query encoder: packs run, "
                                               "texts and tokens in them (none when it encodes one query at a time)")


class GateCheck(_Model):
    model_config = ConfigDict(extra="allow")
    metric: str
    ok: bool


class Gate(_Model):
    model_config = ConfigDict(extra="allow")
    passed: bool
    checks: list[GateCheck] = []


class ReleaseResponse(_Model):
    release_id: str
    published: bool | None = None
    previous_release: str | None = None
    code_version: str | None = None
    corpora: list[dict[str, Any]]
    embedder: dict[str, Any] | None = None
    row_counts: dict[str, int]
    gate: Gate | None = None
    metrics: dict[str, Any] = Field(description="bench/metrics.json: headline and per-suite metrics (points)")
    premises: dict[str, Any] | None = Field(None, description="premise selection's figures (the manifest's), "
                                                              "or null for a release without a premise index")
    opened_at: float = Field(description="unix time this server opened the release")


# The MCP tools' answers: the same models with each location a SourceLocation (serve/mcp.py `over_stdio`).
class StdioNode(Node):
    location: SourceLocation


class StdioFoldedNode(FoldedNode):
    location: SourceLocation


class StdioSearchHit(SearchHit):
    location: SourceLocation
    also: list[StdioFoldedNode] = Field(default_factory=list, description=ALSO)


class StdioSearchResponse(SearchResponse):
    hits: list[StdioSearchHit]


class StdioFormalHit(FormalHit):
    location: SourceLocation


class StdioFormalSearchResponse(FormalSearchResponse):
    hits: list[StdioFormalHit]


class StdioResolveResponse(ResolveResponse):
    nodes: list[StdioNode]


class StdioDeclarationResponse(DeclarationResponse):
    node: StdioNode
    defined_at: SourceLocation


class StdioPremiseHit(PremiseHit):
    location: SourceLocation


class StdioPremisesResponse(PremisesResponse):
    premises: list[StdioPremiseHit]
