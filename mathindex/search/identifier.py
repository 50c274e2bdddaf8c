"""The identifier resolver: a query that is a name, tag, label or external identifier (a Wikidata
QID, a DOI, an arXiv id, ...: mathindex/identifiers.py) resolves before any channel."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mathindex import identifiers

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
    the 800 k keys have one name, and a list per key was about 70 MB of the server's memory. With
    `lazy` (a one-query CLI) there are no tables: each look-up is an Arrow scan of the names (a few
    ms; the tables took 0.4-0.8 s of CPU on whole Mathlib), with the same answers."""

    def __init__(self, names: Sequence[str], aliases: Sequence[list[str]] | pa.ChunkedArray | pa.Array, lazy: bool = False,
                 order: Mapping[str, float] | None = None):
        """`aliases[i]`: the aliases (labels, tags, `identifiers.Identifier.alias`) of `names[i]`, as
        lists or an Arrow list column. `order`: name -> a score (the engine's reference prior) that
        orders the several nodes one external identifier names, highest first (then by name)."""
        self._names, self._aliases, self._lazy, self._order = names, aliases, lazy, order or {}
        if not lazy:
            _ = self.exact, self.suffix, self.last

    @cached_property
    def exact(self) -> dict[str, str | tuple[str, ...]]:
        """Each name and alias -> its names."""
        aliases = self._aliases.to_pylist() if isinstance(self._aliases, (pa.Array, pa.ChunkedArray)) else self._aliases
        return _table((key, name) for name, alias in zip(self._names, aliases) for key in {name, *alias})

    @cached_property
    def suffix(self) -> dict[str, str | tuple[str, ...]]:
        """Each proper dotted suffix of a name (`Prime.two_le`, `two_le`) -> its names."""
        return _table((".".join(parts[i:]), name) for name in self._names
                      for parts in (name.split("."),) for i in range(1, len(parts)))

    @cached_property
    def last(self) -> dict[str, str | tuple[str, ...]]:
        """The lowercased last component of each name -> its names."""
        return _table((name.rsplit(".", 1)[-1].lower(), name) for name in self._names)

    def resolve(self, query: str) -> list[str]:
        q = query.strip().strip("`").strip()
        m = _TAG_QUERY.match(q)
        if m and (tagged := self._exact(m.group(1).upper())):
            return sorted(set(tagged))
        external = identifiers.parse(q)
        if external is not None:  # only the nodes it names, then those it is credited to: never a suffix or a nickname
            named = set(self._exact(external.alias)) or set(self._exact(q))
            credited = set(self._exact(external.credited_alias)) - named
            return [n for group in (named, credited) for n in sorted(group, key=lambda n: (-self._order.get(n, 0.0), n))]
        if _WORDS.match(q) and not self._exact(q):
            return self.nickname(q)
        if not _IDENT.match(q):
            return []
        q = q.removeprefix("_root_.")
        found = sorted(set(self._exact(q)))
        more = sorted(set(self._suffix(q)) - set(found), key=lambda n: (len(n), n))
        return found + more[:20]

    def nickname(self, q: str) -> list[str]:
        """A concept's name in words (`fundamental groupoid`, `lattice`) resolves to declarations
        whose last name component is those words in CamelCase or snake_case, shortest names first."""
        words = q.replace("-", " ").replace("'", "").lower().split()
        keys = {"".join(words), "_".join(words)}
        found = {n for k in keys for n in self._last(k)}
        return sorted(found, key=lambda n: (n.count("."), len(n), n))[:MAX_NICKNAME_HITS]

    # -- look-ups: a table's, or with `lazy` an Arrow scan giving the same names ------------------

    @cached_property
    def _column(self) -> pa.Array:
        return pa.array(self._names, pa.string())

    def _taken(self, mask) -> tuple[str, ...]:
        return tuple(self._names[i] for i in np.flatnonzero(mask.to_numpy(zero_copy_only=False)).tolist())

    def _exact(self, key: str) -> tuple[str, ...]:
        """The names that are `key` or have it as an alias."""
        if not self._lazy:
            return _names(self.exact, key)
        aliases = self._aliases if isinstance(self._aliases, (pa.Array, pa.ChunkedArray)) else pa.array(self._aliases, pa.list_(pa.string()))
        aliases = aliases.combine_chunks() if isinstance(aliases, pa.ChunkedArray) else aliases
        named = np.flatnonzero(pc.equal(pc.list_flatten(aliases), key).to_numpy(zero_copy_only=False))
        rows = pc.list_parent_indices(aliases).to_numpy()[named].tolist()
        return self._taken(pc.equal(self._column, key)) + tuple(self._names[i] for i in rows)

    def _suffix(self, key: str) -> tuple[str, ...]:
        """The names of which `key` is a proper dotted suffix (they end in `.key`)."""
        if not self._lazy:
            return _names(self.suffix, key)
        return self._taken(pc.ends_with(self._column, "." + key))

    def _last(self, key: str) -> tuple[str, ...]:
        """The names whose lowercased last component is `key` (found among those that have `key`
        in any case, then checked as the table's key is made)."""
        if not self._lazy:
            return _names(self.last, key)
        maybe = self._taken(pc.match_substring(self._column, key, ignore_case=True))
        return tuple(n for n in maybe if n.rsplit(".", 1)[-1].lower() == key)


def unknown_identifier(query: str) -> str | None:
    """The notice for a query that looks like a Stacks tag, an external identifier
    (`identifiers.parse`), a Lean name or a label (the patterns above), for the caller to give when
    `resolve` found nothing ("no Stacks tag 0BCD in this release", "no DOI 10.5555/x in this
    release"); None for any other query."""
    q = query.strip().strip("`").strip()
    if m := _TAG_NAMED.match(q):
        return f"no Stacks tag {m.group(1).upper()} in this release"
    if (external := identifiers.parse(q)) is not None:
        return identifiers.not_found(external)
    if _TAG_TYPED.match(q):
        return f"no Stacks tag {q.upper()} in this release"
    if _LABEL.match(q):
        return f"no label {q} in this release"
    if _LEAN_NAME.match(q):
        return f"no declaration named {q} in this release"
    return None


def _table(pairs: Iterable[tuple[str, str]]) -> dict[str, str | tuple[str, ...]]:
    """key -> its one name (the str itself), or the tuple of its names in order, of (key, name) pairs."""
    table: dict[str, str | tuple[str, ...]] = {}
    more: dict[str, list[str]] = {}
    for key, name in pairs:
        have = table.setdefault(key, name)
        if have is not name:
            more.setdefault(key, [have]).append(name)
    table.update((key, tuple(found)) for key, found in more.items())
    return table


def _names(table: dict[str, str | tuple[str, ...]], key: str) -> tuple[str, ...]:
    """The names `table` (built by `_add`) holds under `key` (none when it has no such key)."""
    value = table.get(key, ())
    return (value,) if isinstance(value, str) else value
