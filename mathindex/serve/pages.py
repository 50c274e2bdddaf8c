"""What the server sends a browser beyond JSON: the security headers of every response, the HTML
pages it renders (a source file, a declaration) with every corpus string escaped, and hits' titles
as text and sanitised MathML parts for the search page (serve/mathml.py makes the MathML)."""

from __future__ import annotations

import html
from urllib.parse import quote

from starlette.datastructures import MutableHeaders

from mathindex.latex.plain import plain_statement
from mathindex.serve.mathml import text_parts
from mathindex.serve.responses import DeclarationResponse, SearchResponse, TextPart

# no inline script or style, nothing from another origin, no plugins, no framing, no <base>
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = {"content-security-policy": CSP, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer"}


class SecurityHeaders:
    """ASGI middleware: HEADERS on every HTTP response (pages, static files, JSON, errors)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in HEADERS.items():
                    headers[key] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


def with_title_parts(answer: SearchResponse, is_statement) -> SearchResponse:
    """`answer` with each LaTeX statement hit's title as parts (`title_parts`); `is_statement`
    tells a LaTeX statement's name from a Lean declaration's (whose title is Lean, not LaTeX)."""
    hits = [h.model_copy(update={"title_parts": [TextPart(**p) for p in text_parts(h.title)]})
            if h.title and "$" in h.title and is_statement(h.name) else h for h in answer.hits]
    return answer.model_copy(update={"hits": hits})


def source_page(corpus: str, file: str, text: str) -> str:
    """A corpus file with numbered lines, each line an `L<n>` anchor."""
    rows = "\n".join(f'<tr id="L{i}"><td class="n"><a href="#L{i}">{i}</a></td><td><pre>{html.escape(line)}</pre></td></tr>'
                     for i, line in enumerate(text.splitlines(), 1))
    title = html.escape(f"{corpus}/{file}")
    return _page(title, "source", f'<header><a href="/">mathindex</a> · {title}</header><table class="code">{rows}</table>')


def declaration_page(d: DeclarationResponse) -> str:
    """A declaration or statement: its statement (LaTeX formulas as MathML), informal rendering,
    docstring, what it uses, what uses it, and its source line."""
    node, row = d.node, d.row
    name = html.escape(node.name)
    loc = d.defined_at
    where = html.escape(f"{loc.file}:{loc.line}" if loc.file and loc.line else loc.file or "")
    place = (f'<a class="loc" href="{html.escape(loc.source_url, quote=True)}">{where}</a>' if loc.source_url
             else f'<span class="loc">{where}</span>')
    body = [f'<h1><code>{name}</code> <span class="kind">{html.escape(node.kind or "")}</span></h1>',
            f'<p class="muted">defined at {place} · release {html.escape(d.release_id)} · '
            f'<a href="/declaration/{quote(node.name, safe="")}">JSON</a></p>']
    if "signature" in row:  # a Lean declaration
        statement = " ".join(p for p in (node.kind, node.name, row.get("signature")) if p)
        body.append(_section("Statement", f'<pre class="lean">{html.escape(statement)}</pre>'))
    else:
        head = " · ".join(html.escape(str(row[k])) for k in ("title", "tag", "label") if row.get(k))
        text = plain_statement(str(row.get("body_normalised") or row.get("body") or ""))
        body.append(_section("Statement", (f'<p class="muted">{head}</p>' if head else "") +
                             f'<div class="statement">{parts_html(text)}</div>'))
    if d.same_as:
        body.append(_section("Same fact as", _names([(n, "same_as", True) for n in d.same_as], len(d.same_as))))
    if d.informal:
        body.append(_section("Informal", f'<p class="informal">{html.escape(d.informal)}</p>'))
    if row.get("docstring"):
        body.append(_section("Docstring", f'<pre class="doc">{html.escape(str(row["docstring"]))}</pre>'))
    if row.get("slogan"):
        body.append(_section("Slogan", f"<p>{html.escape(str(row['slogan']))}</p>"))
    uses = [(x.target, x.role, x.resolved) for x in d.dependencies]
    body.append(_section(f"Uses ({d.dependencies_total})", _names(uses, d.dependencies_total)))
    used = [(x.name, x.role, True) for x in d.cited_by]
    body.append(_section(f"Used by ({d.cited_by_total})", _names(used, d.cited_by_total)))
    return _page(name, "decl", f'<header><a href="/">mathindex</a> · {name}</header><main>{"".join(body)}</main>')


def parts_html(text: str) -> str:
    """Prose escaped, each formula the converter reads as its sanitised MathML."""
    return "".join(p["mathml"] if "mathml" in p else html.escape(p["text"]) for p in text_parts(text))


def _names(items: list[tuple[str, str, bool]], total: int) -> str:
    if not items:
        return '<p class="muted">none</p>'
    lis = "".join(f'<li><a href="/decl/{quote(n, safe="")}">{html.escape(n)}</a> <span class="muted">{html.escape(role)}</span></li>'
                  if resolved else f'<li><code>{html.escape(n)}</code> <span class="muted">{html.escape(role)} · '
                  f'not in this release</span></li>' for n, role, resolved in items)
    more = f'<p class="muted">and {total - len(items)} more</p>' if total > len(items) else ""
    return f'<ul class="names">{lis}</ul>{more}'


def _section(heading: str, inner: str) -> str:
    return f"<section><h2>{html.escape(heading)}</h2>{inner}</section>"


def _page(title: str, body_class: str, inner: str) -> str:
    """A whole page around escaped `title` and `inner`: the shared stylesheet, no script."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<link rel="stylesheet" href="/static/style.css"></head><body class="{body_class}">{inner}</body></html>')
