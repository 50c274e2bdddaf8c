"""The identifier resolver: a query that is a name, tag or label resolves before any channel."""

from __future__ import annotations

import re
from collections import defaultdict

_TAG_QUERY = re.compile(r"^(?:stacks\s+)?(?:tag\s+)?([0-9A-Z]{4})$", re.IGNORECASE)
_IDENT = re.compile(r"^[^\s]+$")
_WORDS = re.compile(r"^[A-Za-z][A-Za-z'-]*(?: [A-Za-z][A-Za-z'-]*){0,3}$")  # a nickname: 1-4 plain words
MAX_NICKNAME_HITS = 5


class IdentifierResolver:
    """Exact names, aliases (labels, tags) and dotted suffixes (`two_le` -> `Nat.Prime.two_le`)."""

    def __init__(self, names: list[str], aliases: list[list[str]]):
        self.exact: dict[str, list[str]] = defaultdict(list)
        self.suffix: dict[str, list[str]] = defaultdict(list)
        self.last: dict[str, list[str]] = defaultdict(list)  # lowercased last component -> names
        for name, alias in zip(names, aliases):
            for key in {name, *alias}:
                self.exact[key].append(name)
            parts = name.split(".")
            for i in range(1, len(parts)):
                self.suffix[".".join(parts[i:])].append(name)
            self.last[parts[-1].lower()].append(name)

    def resolve(self, query: str) -> list[str]:
        q = query.strip().strip("`").strip()
        m = _TAG_QUERY.match(q)
        if m and m.group(1).upper() in self.exact:
            return sorted(set(self.exact[m.group(1).upper()]))
        if _WORDS.match(q) and not self.exact.get(q):
            return self.nickname(q)
        if not _IDENT.match(q):
            return []
        q = q.removeprefix("_root_.")
        found = sorted(set(self.exact.get(q, [])))
        more = sorted(set(self.suffix.get(q, [])) - set(found), key=lambda n: (len(n), n))
        return found + more[:20]

    def nickname(self, q: str) -> list[str]:
        """A concept's name in words (`fundamental groupoid`, `lattice`) resolves to declarations
        whose last name component is those words in CamelCase or snake_case, shortest names first."""
        words = q.replace("-", " ").replace("'", "").lower().split()
        keys = {"".join(words), "_".join(words)}
        found = {n for k in keys for n in self.last.get(k, [])}
        return sorted(found, key=lambda n: (n.count("."), len(n), n))[:MAX_NICKNAME_HITS]
