"""Hardened XML reader: MediaWiki exports and LaTeXML/JATS-style documents into statement/formula rows.

The file is read through `mathindex.corpusfiles` (inside the corpus root, a regular file, size cap
before the read, bounded read) and fed to one pull parser configured never to load a DTD, expand an
entity or touch the network, with a resolver that refuses any external load. The DOCTYPE precedes
the root element, so at the root's start event the parser has read all of it, wherever it sits in
the file: a document whose DOCTYPE declares entities (billion laughs, external entities) is refused.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from lxml import etree

from mathindex.corpusfiles import CHUNK_BYTES, MAX_BYTES, BoundedReader, CorpusRoot, Refused, open_file
from mathindex.latex.macros import KIND_WORDS, kind_of
from mathindex.latex.tex import FileTimeout, TexResult, short_id
from mathindex.latex.texscan import Lines
from mathindex.names import tex_node_id

MAX_XML_BYTES = MAX_BYTES[".xml"]
_BOMS = (b"\xff\xfe", b"\xfe\xff")  # UTF-16: NUL bytes are text there
_WIKI_MATH = re.compile(r"<math(?P<attrs>[^>]*)>(?P<tex>.*?)</math\s*>|\$\$(?P<dd>.+?)\$\$|\$(?P<d>[^$\n]+?)\$", re.S)
_WIKI_HEADING = re.compile(r"^(={2,6})\s*(.+?)\s*\1\s*$", re.M)
_WIKI_LINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_TEMPLATE_START = re.compile(r"\{\{\s*([A-Za-z][A-Za-z ]*?)\s*\|")
_TEMPLATE_PARAM = re.compile(r"\s*(name|title|label)\s*=\s*([^|{}]*)\|")
_WS = re.compile(r"\s+")
# A wiki heading that is itself a statement (ProofWiki: "== Theorem ==", "== Proof ==", "== Lemma 2 ==").
_SECTION_STATEMENT = re.compile(
    r"(?i)^(theorem|lemma|proposition|corollary|definition|conjecture|axiom|proof)(\s+(\d+|[A-Z]))?\s*:?$"
)


class XmlRefused(ValueError):
    """The document is refused (entity declarations, an external load, binary content)."""


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


class _NoExternalLoads(etree.Resolver):
    """Refuses every external DTD or entity the parser would load (none, as configured: a second wall)."""

    def resolve(self, url, pubid, context):
        raise XmlRefused(f"external load refused ({url})")


def _parser(events: tuple[str, ...]) -> etree.XMLPullParser:
    parser = etree.XMLPullParser(
        events=events, resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
        huge_tree=False, remove_comments=True, remove_pis=True,
    )
    parser.resolvers.add(_NoExternalLoads())
    return parser


def refuse_entities(docinfo: etree.DocInfo) -> None:
    """XmlRefused when the document's DOCTYPE declares any entity (general or parameter)."""
    dtd = docinfo.internalDTD
    if dtd is not None and next(iter(dtd.entities()), None) is not None:
        raise XmlRefused("DOCTYPE declares entities (entity expansion and external entities are refused)")


class _Sink:
    """Collects rows of one XML file."""

    def __init__(self, rel: str, corpus: str, deadline: float) -> None:
        self.rel, self.corpus, self.deadline = rel, corpus, deadline
        self.statements: list[dict] = []
        self.formulas: list[dict] = []
        self.errors: list[tuple[int | None, str]] = []

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise FileTimeout("time budget per file exceeded")

    def formula(self, line: int, tex: str, display: str, sid: str | None, role: str | None) -> None:
        position = len(self.formulas)
        tex = tex.strip()
        self.formulas.append(
            {
                "formula_id": short_id(self.corpus, self.rel, "xml", position),
                "corpus": self.corpus,
                "node_id": tex_node_id(self.corpus, sid) if sid else None,
                "statement_id": sid,
                "source": "xml",
                "file": self.rel,
                "line": line,
                "position": position,
                "display": display,
                "latex": tex,
                "latex_normalised": tex,
                "role": role,
            }
        )

    def statement(self, *, env: str, kind: str, line_start: int, line_end: int, body: str, normalised: str,
                  title: str | None, label: str | None, proof: str | None, cites: list, section_path: list) -> str:
        sid = short_id(self.corpus, self.rel, line_start, env)
        self.statements.append(
            {
                "statement_id": sid,
                "node_id": tex_node_id(self.corpus, sid),
                "corpus": self.corpus,
                "source": "xml",
                "env": env,
                "kind": kind,
                "title": title,
                "label": label,
                "full_label": label,
                "tag": None,
                "body": body,
                "body_normalised": normalised,
                "proof": proof,
                "cites": list(dict.fromkeys(cites)),
                "bib_cites": [],
                "section_path": section_path,
                "file": self.rel,
                "line_start": line_start,
                "line_end": line_end,
                "slogan": None,
            }
        )
        return sid


# -- MediaWiki ---------------------------------------------------------------------------------
def _wiki_plain(text: str) -> str:
    text = _WIKI_MATH.sub(lambda m: f"${(m.group('tex') or m.group('dd') or m.group('d')).strip()}$", text)
    text = _WIKI_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    return _WS.sub(" ", text.replace("'''", "").replace("''", "")).strip()


def _template_spans(text: str) -> list[tuple[int, int, str, str | None, int]]:
    """(start, end, kind, name, body_start) of theorem-like `{{Theorem|name=...|body}}` templates."""
    spans = []
    for m in _TEMPLATE_START.finditer(text):
        word = m.group(1).strip().lower()
        if word not in KIND_WORDS:
            continue
        depth, pos = 1, m.end()
        while depth and pos < len(text):
            nxt_open, nxt_close = text.find("{{", pos), text.find("}}", pos)
            if nxt_close < 0:
                break
            if 0 <= nxt_open < nxt_close:
                depth, pos = depth + 1, nxt_open + 2
            else:
                depth, pos = depth - 1, nxt_close + 2
        if depth:
            continue
        name, body_start = None, m.end()
        while (p := _TEMPLATE_PARAM.match(text, body_start)) is not None:
            if p.group(1) in ("name", "title"):
                name = p.group(2).strip() or None
            body_start = p.end()
        spans.append((m.start(), pos, KIND_WORDS[word], name, body_start))
    return spans


def _wiki_page(sink: _Sink, title: str, text: str, base_line: int) -> None:
    """Statements (theorem-like templates and sections, ProofWiki `Definition:` pages) and formulas of a page."""

    lines = Lines(text)

    def line_at(offset: int) -> int:
        return base_line + lines.line(offset) - 1

    headings = [(m.start(), m.end(), len(m.group(1)), m.group(2).strip()) for m in _WIKI_HEADING.finditer(text)]
    blocks: list[dict] = []  # start, end, kind, env, title, proof span
    for start, end, kind, name, body_start in _template_spans(text):
        blocks.append({"start": start, "end": end, "body": (body_start, end - 2), "kind": kind,
                       "env": text[start + 2 : text.index("|", start)].strip(), "title": name, "proof": None})
    for i, (hs, he, level, head) in enumerate(headings):
        word = head.split()[0].lower().strip(":") if _SECTION_STATEMENT.match(head) else ""
        stop = next((h[0] for h in headings[i + 1 :] if h[2] <= level), len(text))
        if word == "proof":
            prev = [b for b in blocks if b["end"] <= hs]
            if prev:
                max(prev, key=lambda b: b["end"])["proof"] = (he, stop)
        elif word in KIND_WORDS and not any(b["start"] <= hs < b["end"] for b in blocks):
            blocks.append({"start": hs, "end": stop, "body": (he, stop), "kind": KIND_WORDS[word], "env": head,
                           "title": None, "proof": None})
    if not blocks and ":" in title and title.split(":", 1)[0].lower() in KIND_WORDS:
        blocks.append({"start": 0, "end": len(text), "body": (0, len(text)),
                       "kind": KIND_WORDS[title.split(":", 1)[0].lower()], "env": title.split(":", 1)[0],
                       "title": None, "proof": None})
    blocks.sort(key=lambda b: b["start"])
    owners: list[tuple[int, int, str, str]] = []
    for n, b in enumerate(blocks):
        sink.tick()
        bs, be = b["body"]
        body = text[bs:be].strip()
        proof = text[b["proof"][0] : b["proof"][1]].strip() if b["proof"] else None
        section = [title] + [h[3] for h in headings if h[0] < b["start"] and h[3] != b["env"]][-1:]
        label = title if len(blocks) == 1 else f"{title}#{b['title'] or b['env']}-{n + 1}"
        sid = sink.statement(
            env=b["env"], kind=b["kind"], line_start=line_at(b["start"]), line_end=line_at(max(b["start"], b["end"] - 1)),
            body=body, normalised=_wiki_plain(body), title=b["title"], label=label, proof=proof,
            cites=[m.group(1).strip() for m in _WIKI_LINK.finditer(proof or "")], section_path=section,
        )
        owners.append((bs, be, sid, "statement"))
        if b["proof"]:
            owners.append((b["proof"][0], b["proof"][1], sid, "proof"))
    for m in _WIKI_MATH.finditer(text):
        tex = m.group("tex") if m.group("tex") is not None else (m.group("dd") or m.group("d"))
        display = "inline"
        if m.group("dd") is not None or (m.group("attrs") and "block" in m.group("attrs")):
            display = "display"
        own = next(((sid, role) for s, e, sid, role in owners if s <= m.start() < e), (None, None))
        sink.formula(line_at(m.start()), tex, display, *own)


def _read_page(sink: _Sink, elem: etree._Element) -> None:
    """One MediaWiki `<page>` (its last revision), then the element is cleared."""
    sink.tick()
    title, ns, text_el = "", "0", None
    for child in elem.iter():
        name = _local(child.tag)
        if name == "title" and not title:
            title = (child.text or "").strip()
        elif name == "ns":
            ns = (child.text or "0").strip()
        elif name == "text":
            text_el = child  # the last revision wins
    if text_el is not None and text_el.text and ns == "0":
        _wiki_page(sink, title, text_el.text, text_el.sourceline or elem.sourceline or 1)
    elem.clear()
    while elem.getprevious() is not None:
        del elem.getparent()[0]


# -- LaTeXML / JATS ------------------------------------------------------------------------------
_FORMULA_CONTAINERS = {"inline-formula", "disp-formula", "equation", "equationgroup"}
_SECTIONS = {"sec", "section", "subsection", "subsubsection", "chapter", "part", "paragraph", "appendix"}
_STATEMENTS = {"theorem", "statement"}
_NOT_BODY = {"label", "tags", "title", "caption"}


def _tex_of(elem: etree._Element) -> str | None:
    """The TeX source of a formula element (alttext, LaTeXML tex, TeX annotation, JATS tex-math)."""
    for node in elem.iter():
        name = _local(node.tag)
        if name == "math" and node.get("alttext"):
            return node.get("alttext")
        if name == "Math" and node.get("tex"):
            return node.get("tex")
        if name == "annotation" and "tex" in (node.get("encoding") or "").lower():
            return node.text or ""
        if name == "tex-math":
            tex = "".join(node.itertext()).strip()
            tex = re.sub(r"^\\begin\{document\}|\\end\{document\}$", "", tex).strip()
            return tex.strip("$").strip()
    return None


def _display_of(elem: etree._Element) -> str:
    name = _local(elem.tag)
    if name in ("disp-formula", "equation", "equationgroup"):
        return "display"
    if (elem.get("display") or "") == "block" or (elem.get("mode") or "") == "display":
        return "display"
    return "inline"


def _is_formula(elem: etree._Element) -> bool:
    name = _local(elem.tag)
    return name in _FORMULA_CONTAINERS or name in ("math", "Math", "tex-math")


def _kind_of_statement(elem: etree._Element) -> tuple[str, str]:
    cls = elem.get("class") or ""
    m = re.search(r"ltx_theorem_(\w+)", cls)
    hint = m.group(1) if m else (elem.get("content-type") or "")
    if not hint:
        label = next((c for c in elem if _local(c.tag) in ("label", "tags", "title")), None)
        hint = " ".join(label.itertext()) if label is not None else "statement"
    return hint, kind_of(hint, hint)


class _Walker:
    def __init__(self, sink: _Sink) -> None:
        self.sink = sink
        self.sections: list[str] = []
        self.last: dict | None = None
        self.owner: tuple[str | None, str | None] = (None, None)

    def text_of(self, elem: etree._Element) -> str:
        """Text of elem with each formula as `$tex$`."""
        parts: list[str] = []

        def walk(node: etree._Element) -> None:
            if _is_formula(node):
                tex = _tex_of(node)
                parts.append(f"${tex.strip()}$" if tex is not None else "".join(node.itertext()))
            else:
                if node.text:
                    parts.append(node.text)
                for child in node:
                    if isinstance(child.tag, str) and _local(child.tag) not in _NOT_BODY:
                        walk(child)
                    if child.tail:
                        parts.append(child.tail)

        walk(elem)
        return _WS.sub(" ", "".join(parts)).strip()

    def walk(self, elem: etree._Element) -> None:
        self.sink.tick()
        name = _local(elem.tag)
        if _is_formula(elem):
            tex = _tex_of(elem)
            if tex is not None:
                self.sink.formula(elem.sourceline or 1, tex, _display_of(elem), *self.owner)
            return
        if name in _SECTIONS:
            title_el = next((c for c in elem if _local(c.tag) == "title"), None)
            self.sections.append(self.text_of(title_el) if title_el is not None else name)
            self.last = None
            for child in elem:
                if isinstance(child.tag, str):
                    self.walk(child)
            self.sections.pop()
            return
        is_proof = name == "proof" or (name == "statement" and (elem.get("content-type") or "").lower() == "proof")
        if name in _STATEMENTS and not is_proof:
            env, kind = _kind_of_statement(elem)
            title_el = next((c for c in elem if _local(c.tag) in ("title", "caption")), None)
            labels = (elem.get("labels") or "").split()
            label = labels[0].removeprefix("LABEL:") if labels else (elem.get("{http://www.w3.org/XML/1998/namespace}id") or elem.get("id"))
            body = self.text_of(elem)
            last_line = max((n.sourceline or 0) for n in elem.iter()) or (elem.sourceline or 1)
            row = dict(env=env, kind=kind, line_start=elem.sourceline or 1, line_end=last_line, body=body,
                       normalised=body, title=self.text_of(title_el) if title_el is not None else None, label=label,
                       proof=None, cites=[], section_path=list(self.sections))
            sid = self.sink.statement(**row)
            self.last = self.sink.statements[-1]
            saved, self.owner = self.owner, (sid, "statement")
            for child in elem:
                if isinstance(child.tag, str):
                    self.walk(child)
            self.owner = saved
            return
        if is_proof and self.last is not None:
            stmt = self.last
            stmt["proof"] = self.text_of(elem)
            refs = [r.get("labelref", "").removeprefix("LABEL:") or r.get("rid", "") for r in elem.iter()
                    if _local(r.tag) in ("ref", "xref")]
            stmt["cites"] = list(dict.fromkeys(r for r in refs if r))
            saved, self.owner = self.owner, (stmt["statement_id"], "proof")
            for child in elem:
                if isinstance(child.tag, str):
                    self.walk(child)
            self.owner = saved
            self.last = None
            return
        for child in elem:
            if isinstance(child.tag, str):
                self.walk(child)


def _parse(stream: BoundedReader, sink: _Sink) -> None:
    """Streams the document through one pull parser. At the root's start event (the DOCTYPE, which
    XML puts before the root, is then read whole) entity declarations are refused; a MediaWiki export
    is handled page by page as pages end, any other document walked once whole at the end."""
    parser = _parser(("start", "end"))
    kind: str | None = None  # the root element's name, once seen

    def handle(events) -> None:
        nonlocal kind
        for event, elem in events:
            if kind is None:
                refuse_entities(elem.getroottree().docinfo)
                kind = _local(elem.tag)
            if kind == "mediawiki" and event == "end" and _local(elem.tag) == "page":
                _read_page(sink, elem)

    first = True
    while chunk := stream.read(CHUNK_BYTES):
        if first and b"\x00" in chunk[:4096] and not chunk.startswith(_BOMS):
            raise XmlRefused("binary content (NUL bytes)")
        first = False
        sink.tick()
        parser.feed(chunk)
        handle(parser.read_events())
    root = parser.close()
    handle(parser.read_events())
    if kind != "mediawiki":
        _Walker(sink).walk(root)


def extract_xml_file(path: Path, rel: str, corpus: str, budget_s: float = 30.0, max_bytes: int = MAX_XML_BYTES,
                     root: CorpusRoot | None = None) -> TexResult:
    """Statements, formulas and (line, reason) errors of one XML file under `root` (default: the
    file's own directory); never raises for bad input."""
    sink = _Sink(rel, corpus, time.monotonic() + budget_s)
    try:
        with open_file(root or CorpusRoot.of(Path(path).parent), path, max_bytes) as stream:
            _parse(stream, sink)
    except Refused as exc:
        return TexResult([], [], [(None, str(exc))])
    except XmlRefused as exc:
        return TexResult([], [], [(None, f"XML refused: {exc}")])
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if isinstance(exc.lineno, int) and exc.lineno > 0 else None
        sink.errors.append((line, f"XML syntax error: {exc.msg}"))
    except FileTimeout as exc:
        return TexResult([], [], [(None, f"{exc} ({budget_s:g} s); file skipped")])
    except (OSError, ValueError, RecursionError) as exc:
        sink.errors.append((None, f"XML unreadable: {exc}"))
    return TexResult(sink.statements, sink.formulas, sink.errors)
