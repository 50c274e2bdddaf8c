"""A LaTeX statement as reading text (a node's title): structural commands (\\label, \\index, ...)
dropped, text markup unwrapped, accents composed, display environments written as $$…$$ and math
kept between dollars; and the split of such text into its prose and math pieces."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

TITLE_CHARS = 300  # a title's length at most (its math pieces are never cut)

# commands dropped with their argument wherever they stand (math included): references and layout
_DROPPED = re.compile(r"\\(?:label|index|nomenclature|glossary|hypertarget|phantomsection|footnote|marginpar|"
                      r"[vh]space|tag|nonumber|notag|noindent|medskip|smallskip|bigskip|newline|linebreak|"
                      r"pagebreak|newpage)(?![A-Za-z])\*?\s*(?:\[[^\]]*\]\s*)?(?:\{(?:[^{}]|\{[^{}]*\})*\})?")
_DISPLAY_ENVS = ("equation", "displaymath", "math")
_ALIGNED_ENVS = ("align", "eqnarray", "gather", "multline", "flalign", "alignat")
_ENV = re.compile(r"\\begin\s*\{(" + "|".join(_DISPLAY_ENVS + _ALIGNED_ENVS) + r")(\*?)\}(.*?)\\end\s*\{\1\2\}", re.S)
# $$…$$, $…$, \[…\] and \(…\), an escaped \$ being no delimiter
_MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$|\\\[(.+?)\\\]|\\\((.+?)\\\)", re.S)
_TEXT_WRAPPERS = re.compile(r"\\(?:emph|textbf|textit|textsl|textsc|textrm|textsf|texttt|textup|textnormal|text|"
                            r"underline|mbox|hbox|ref|eqref|cref|Cref|autoref|url)(?![A-Za-z])\s*\{([^{}]*)\}")
_CITE = re.compile(r"\\cite[tp]?\*?(?![A-Za-z])\s*(?:\[([^\]]*)\])?\s*\{([^{}]*)\}")
_FONT_GROUP = re.compile(r"\{\\(?:it|bf|em|sl|rm|sc|sf|tt|normalfont|bfseries|itshape|upshape)(?![A-Za-z])\s*([^{}]*)\}")
_ENV_MARK = re.compile(r"\\(?:begin|end)\s*\{[A-Za-z*]+\}(?:\[[^\]]*\])?")
_ACCENT = re.compile(r"\\([`'^\"~=.]|[cuvHkr](?![A-Za-z]))\s*(?:\{\s*(\\?[A-Za-z])\s*\}|(\\?[A-Za-z]))")
_COMBINING = {"`": "\u0300", "'": "\u0301", "^": "\u0302", "~": "\u0303", "=": "\u0304", "u": "\u0306",
              ".": "\u0307", '"': "\u0308", "r": "\u030a", "H": "\u030b", "v": "\u030c", "c": "\u0327", "k": "\u0328"}
_SYMBOLS = {"---": "\u2014", "--": "\u2013", "``": "\u201c", "''": "\u201d", "~": " ", "\\\\": " ", "\\item": "\u2022",
            "\\&": "&", "\\%": "%", "\\$": "$", "\\#": "#", "\\_": "_", "\\{": "{", "\\}": "}", "\\ldots": "\u2026",
            "\\dots": "\u2026", "\\ss": "\u00df", "\\i": "\u0131"}
_SYMBOL = re.compile("|".join(re.escape(s) + ("(?![A-Za-z])" if s[-1].isalpha() else "")
                             for s in sorted(_SYMBOLS, key=len, reverse=True)))
_WS = re.compile(r"\s+")


class Piece(NamedTuple):
    """A run of prose (`math` False) or one formula's LaTeX without its delimiters."""

    text: str
    math: bool
    display: bool = False


def pieces(text: str) -> list[Piece]:
    """`text` split into prose and math pieces, in order; an unclosed `$` stays prose."""
    out: list[Piece] = []
    at = 0
    for m in _MATH.finditer(text):
        if m.start() > at:
            out.append(Piece(text[at : m.start()], False))
        display = m.group(1) is not None or m.group(3) is not None
        out.append(Piece(next(g for g in m.groups() if g is not None).strip(), True, display))
        at = m.end()
    if at < len(text):
        out.append(Piece(text[at:], False))
    return out


def plain_statement(latex: str, limit: int | None = None) -> str:
    """`latex` as one line of reading text with its math between dollars ($$…$$ for displays);
    with `limit`, cut to at most that many characters at a piece or word boundary, ending in "…"."""
    text = _ENV.sub(_display, _DROPPED.sub(" ", latex))
    parts = []
    for p in pieces(text):
        if p.math:
            math = _WS.sub(" ", p.text).strip()
            if math:
                parts.append(f"$${math}$$" if p.display else f"${math}$")
        else:
            parts.append(_prose(p.text))
    joined = _WS.sub(" ", "".join(parts)).strip()
    return joined if limit is None else shorten(joined, limit)


def shorten(text: str, limit: int = TITLE_CHARS) -> str:
    """`text` when it fits in `limit` characters, else its longest head of whole pieces and words
    that fits with a closing "…" (a formula is kept whole or left out)."""
    if len(text) <= limit:
        return text
    out = ""
    for p in pieces(text):
        chunk = (f"$${p.text}$$" if p.display else f"${p.text}$") if p.math else p.text
        if len(out) + len(chunk) < limit:
            out += chunk
            continue
        if not p.math:
            room = chunk[: limit - len(out) - 1]
            out += room.rsplit(" ", 1)[0] if " " in room else room
        break
    return out.rstrip() + "\u2026"


def _display(m: re.Match) -> str:
    body = m.group(3).strip()
    if m.group(1) in _ALIGNED_ENVS:
        body = f"\\begin{{aligned}}{body}\\end{{aligned}}"
    return f" $${body}$$ "


def _prose(text: str) -> str:
    """Prose with its markup unwrapped, citations as [key], accents composed and the rest of
    the environment markers dropped."""
    for _ in range(3):  # nested markup: {\it the \emph{closure}}
        text = _FONT_GROUP.sub(r"\1", _TEXT_WRAPPERS.sub(r"\1", text))
    text = _CITE.sub(lambda m: f"[{m.group(2)}{', ' + m.group(1) if m.group(1) else ''}]", text)
    text = _ENV_MARK.sub(" ", text)
    text = _ACCENT.sub(_accented, text)
    text = _SYMBOL.sub(lambda m: _SYMBOLS.get(m.group(0), m.group(0)), text)
    return text


def _accented(m: re.Match) -> str:
    letter = m.group(2) or m.group(3)
    base = {"\\i": "\u0131", "\\j": "\u0237"}.get(letter, letter.lstrip("\\"))
    return unicodedata.normalize("NFC", base + _COMBINING[m.group(1)])
