"""The identifier resolver: a query that is a name, tag or label resolves before any channel."""

from __future__ import annotations

import re

_TAG_QUERY = re.compile(r"^(?:stacks\s+)?(?:tag\s+)?([0-9A-Z]{4})$", re.IGNORECASE)
_IDENT = re.compile(r"^[^\s]+$")
_WORDS = re.compile(r"^[A-Za-z][A-Za-z'-]*(?: [A-Za-z][A-Za-z'-]*){0,3}$")  # a nickname: 1-4 plain words
MAX_NICKNAME_HITS = 5
# What looks like an identifier, for the notice a query gets when the release has no such one
# (`unknown_identifier`): a Stacks tag as typed (four letters and digits with a digit, and an upper-case
# letter or a leading 0: `0BCD`, `MA03`, not `2024` or `ring`), a Lean name (one token, dotted:
# `Nat.Prime.foo`, or snake_case: `mul_foo_bar`) and a LaTeX label (`lemma-foo`, `thm:main`).
_TAG_TYPED = re.compile(r"^(?=.*[0-9])(?=.*[A-Z]|0)[0-9A-Za-z]{4}$")
_TAG_NAMED = re.compile(r"^(?:stacks\s+tag|stacks|tag)\s+([0-9A-Za-z]{4})$", re.IGNORECASE)
_NAME_PART = r"[^\W\d][\w'!?₀-₉]*"
_LEAN_NAME = re.compile(rf"^(?:_root_\.)?{_NAME_PART}(?:\.{_NAME_PART})+$|^[^\W\d_][^\W_]+(?:_[\w'!?₀-₉]+)+$")
LABEL_KINDS = ("definition", "lemma", "theorem", "proposition", "remark", "example", "corollary", "section",
               "subsection", "equation", "exercise", "situation", "notation", "def", "lem", "thm", "prop", "cor", "eq", "sec")
_LABEL = re.compile(r"^(?:[a-z]+(?:-[a-z]+)*-)?(?:" + "|".join(LABEL_KINDS) + r")[-:][\w:.-]+$")


class IdentifierResolver:
    """Exact names, aliases (labels, tags) and dotted suffixes (`two_le` -> `Nat.Prime.two_le`).

    Each table maps a key to its one name (a str) or to a tuple of names: on whole Mathlib most of
    the 800 k keys have one name, and a list per key was about 70 MB of the server's memory."""

    def __init__(self, names: list[str], aliases: list[list[str]]):
        self.exact: dict[str, str | tuple[str, ...]] = {}
        self.suffix: dict[str, str | tuple[str, ...]] = {}
        self.last: dict[str, str | tuple[str, ...]] = {}  # lowercased last component -> names
        more: dict[int, dict[str, list[str]]] = {id(t): {} for t in (self.exact, self.suffix, self.last)}
        for name, alias in zip(names, aliases):
            for key in {name, *alias}:
                _add(self.exact, more, key, name)
            parts = name.split(".")
            for i in range(1, len(parts)):
                _add(self.suffix, more, ".".join(parts[i:]), name)
            _add(self.last, more, parts[-1].lower(), name)
        for table in (self.exact, self.suffix, self.last):
            table.update((key, tuple(found)) for key, found in more[id(table)].items())

    def resolve(self, query: str) -> list[str]:
        q = query.strip().strip("`").strip()
        m = _TAG_QUERY.match(q)
        if m and m.group(1).upper() in self.exact:
            return sorted(set(_names(self.exact, m.group(1).upper())))
        if _WORDS.match(q) and q not in self.exact:
            return self.nickname(q)
        if not _IDENT.match(q):
            return []
        q = q.removeprefix("_root_.")
        found = sorted(set(_names(self.exact, q)))
        more = sorted(set(_names(self.suffix, q)) - set(found), key=lambda n: (len(n), n))
        return found + more[:20]

    def nickname(self, q: str) -> list[str]:
        """A concept's name in words (`fundamental groupoid`, `lattice`) resolves to declarations
        whose last name component is those words in CamelCase or snake_case, shortest names first."""
        words = q.replace("-", " ").replace("'", "").lower().split()
        keys = {"".join(words), "_".join(words)}
        found = {n for k in keys for n in _names(self.last, k)}
        return sorted(found, key=lambda n: (n.count("."), len(n), n))[:MAX_NICKNAME_HITS]


def unknown_identifier(query: str) -> str | None:
    """The notice for a query that looks like a Stacks tag, a Lean name or a label (the patterns
    above), for the caller to give when `resolve` found nothing ("no Stacks tag 0BCD in this
    release"); None for any other query."""
    q = query.strip().strip("`").strip()
    if (m := _TAG_NAMED.match(q)) or _TAG_TYPED.match(q):
        return f"no Stacks tag {(m.group(1) if m else q).upper()} in this release"
    if _LABEL.match(q):
        return f"no label {q} in this release"
    if _LEAN_NAME.match(q):
        return f"no declaration named {q} in this release"
    return None


def _add(table: dict, more: dict[int, dict[str, list[str]]], key: str, name: str) -> None:
    """Adds `name` under `key` in `table`: the first name as the str itself; with a second, every
    name of the key goes to `more[id(table)]`, a list the caller turns into the key's tuple."""
    have = table.setdefault(key, name)
    if have is not name:
        more[id(table)].setdefault(key, [have]).append(name)


def _names(table: dict[str, str | tuple[str, ...]], key: str) -> tuple[str, ...]:
    """The names `table` (built by `_add`) holds under `key` (none when it has no such key)."""
    value = table.get(key, ())
    return (value,) if isinstance(value, str) else value
