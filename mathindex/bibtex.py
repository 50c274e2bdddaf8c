"""A small BibTeX reader: entries' keys, types and fields (imports nothing of mathindex).

What BibTeX itself reads: text outside `@type{...}` is a comment; `@comment` and `@preamble` are
skipped; `@string{name = value}` defines a macro; a field's value is `{...}` (nested braces),
`"..."`, a number or a macro, joined with `#`; `(...)` may stand for the outer braces. Field names
are lower-cased, values' whitespace collapsed and their braces kept out. An entry that does not
parse is skipped and counted (`Bibliography.skipped`), never fatal; an `@` that opens none is text. We need keys and a few
identifier fields, so a parser package would bring little: this is ~100 lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NAME = re.compile(r"[^\s\"#%'(),={}]+")
_MONTHS = {m: str(i) for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                            "nov", "dec"), 1)}


@dataclass(frozen=True)
class BibEntry:
    """One entry: its key as written, its type (lower case), its fields and the line of its `@`."""

    key: str
    type: str
    fields: dict[str, str]
    line: int


@dataclass
class Bibliography:
    """The entries of one file, by key (the first of a duplicated key wins), and how many `@`s were
    skipped because they did not parse."""

    entries: dict[str, BibEntry] = field(default_factory=dict)
    skipped: int = 0


class _Bad(Exception):
    pass


class _Reader:
    def __init__(self, text: str):
        self.text, self.pos, self.strings = text, 0, dict(_MONTHS)

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def expect(self, chars: str) -> str:
        self.skip_space()
        if self.pos >= len(self.text) or self.text[self.pos] not in chars:
            raise _Bad
        self.pos += 1
        return self.text[self.pos - 1]

    def name(self) -> str:
        self.skip_space()
        m = _NAME.match(self.text, self.pos)
        if not m:
            raise _Bad
        self.pos = m.end()
        return m.group(0)

    def delimited(self, close: str) -> str:
        """The text up to the `close` that balances (braces nest in either kind of value)."""
        depth, start = 0, self.pos
        while self.pos < len(self.text):
            c = self.text[self.pos]
            self.pos += 1
            if c == "{":
                depth += 1
            elif c == "}" and depth > 0:
                depth -= 1
            elif c == close and depth == 0:
                return self.text[start:self.pos - 1]
        raise _Bad

    def value(self) -> str:
        """A field value: its parts joined by `#`."""
        parts = []
        while True:
            self.skip_space()
            c = self.text[self.pos:self.pos + 1]
            if c in ("{", '"'):
                self.pos += 1
                parts.append(self.delimited("}" if c == "{" else '"'))
            else:
                word = self.name()
                parts.append(word if word.isdigit() else self.strings.get(word.lower(), ""))
            self.skip_space()
            if self.text[self.pos:self.pos + 1] != "#":
                return " ".join("".join(parts).replace("{", "").replace("}", "").split())
            self.pos += 1

    def fields(self, close: str) -> dict[str, str]:
        out: dict[str, str] = {}
        while True:
            self.skip_space()
            if self.text[self.pos:self.pos + 1] == close:
                self.pos += 1
                return out
            name = self.name().lower()
            self.expect("=")
            out.setdefault(name, self.value())
            if self.expect("," + close) == close:
                return out


def parse_bib(text: str) -> Bibliography:
    """Every entry of a `.bib` text (see the module docstring)."""
    bib, reader = Bibliography(), _Reader(text)
    at = text.find("@")
    while at >= 0:
        reader.pos = at + 1
        try:
            kind = reader.name().lower()
            close = ")" if reader.expect("{(") == "(" else "}"
        except (_Bad, IndexError):  # an @ that opens no entry (in a comment): text, as BibTeX reads it
            at = text.find("@", at + 1)
            continue
        try:
            if kind in ("comment", "preamble"):
                reader.delimited(close)
            elif kind == "string":
                reader.strings.update((k, v) for k, v in reader.fields(close).items())
            else:
                key = reader.name().rstrip(",")
                if reader.text[reader.pos:reader.pos + 1] == ",":
                    reader.pos += 1
                entry = BibEntry(key, kind, reader.fields(close), text.count("\n", 0, at) + 1)
                bib.entries.setdefault(key, entry)
        except (_Bad, IndexError):
            bib.skipped += 1
            reader.pos = at + 1
        at = text.find("@", max(reader.pos, at + 1))
    return bib


__all__ = ["BibEntry", "Bibliography", "parse_bib"]
