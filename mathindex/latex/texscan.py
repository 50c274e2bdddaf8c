"""Low-level TeX text helpers: decoding, comment stripping, balanced groups, line lookup."""

from __future__ import annotations

import bisect
import re

_PERCENT = re.compile("%")
_VERB = re.compile(r"\\verb\*?([^a-zA-Z\s*])[^\n]*?\1")
_IFFALSE = re.compile(r"\\iffalse(?![a-zA-Z@]).*?\\fi(?![a-zA-Z@])", re.S)
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f]")


class ScanError(ValueError):
    """A malformed construct at a known offset; turned into an `errors` row by the caller."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.offset = offset


def decode_source(data: bytes) -> str:
    """Text of a source file: UTF-8, else Latin-1; raises ValueError on binary content."""
    head = data[:65536]
    if b"\x00" in head:
        raise ValueError("binary content (NUL bytes)")
    if head and len(_CONTROL.findall(head)) > len(head) // 100 + 8:
        raise ValueError("binary content (control characters)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
        if sum(1 for c in text[:65536] if 0x7F <= ord(c) < 0xA0) > len(head) // 100 + 8:
            raise ValueError("binary content (undecodable bytes)") from None
        return text


def strip_comments(text: str) -> str:
    """Text with `%` comments removed (not `\\%`); every newline kept, so line numbers hold."""
    if "%" in text:
        out, pos = [], 0
        for m in _PERCENT.finditer(text):
            i = m.start()
            if i < pos:
                continue
            j = i
            while j > 0 and text[j - 1] == "\\":
                j -= 1
            if (i - j) % 2:
                continue
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            out.append(text[pos:i])
            pos = end
        out.append(text[pos:])
        text = "".join(out)
    text = _VERB.sub("\\\\verb||", text)
    return _IFFALSE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


class Lines:
    """Maps character offsets of one text to 1-based line numbers."""

    def __init__(self, text: str) -> None:
        self._nl = [m.start() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._nl, offset - 1) + 1


_BRACE = re.compile(r"\\.|[{}]", re.S)
_BRACKET = re.compile(r"\\.|[{}\[\]]", re.S)


def skip_space(text: str, pos: int) -> int:
    """First offset at or after pos that is not blank; stops before a blank line (a paragraph)."""
    n = len(text)
    newlines = 0
    while pos < n and text[pos] in " \t\r\n":
        if text[pos] == "\n":
            newlines += 1
            if newlines > 1:
                return pos
        pos += 1
    return pos


def brace_group(text: str, pos: int, limit: int = 200_000) -> tuple[str, int]:
    """(content, end) of the balanced `{...}` starting at text[pos] == '{'; ScanError if unbalanced."""
    depth = 0
    stop = min(len(text), pos + limit)
    for m in _BRACE.finditer(text, pos, stop):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == 0:
                return text[pos + 1 : m.start()], m.end()
    raise ScanError("unbalanced braces: group never closes", pos)


def bracket_group(text: str, pos: int, limit: int = 20_000) -> tuple[str, int]:
    """(content, end) of the `[...]` starting at text[pos] == '['; braces inside are respected."""
    depth = 0
    stop = min(len(text), pos + limit)
    for m in _BRACKET.finditer(text, pos + 1, stop):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
        elif tok == "]" and depth <= 0:
            return text[pos + 1 : m.start()], m.end()
    raise ScanError("unbalanced brackets: optional argument never closes", pos)


def brace_balance(text: str) -> int:
    """Unescaped '{' minus '}' in text."""
    depth = 0
    for m in _BRACE.finditer(text):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
    return depth
