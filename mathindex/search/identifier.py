"""The identifier resolver: a query that is a name, tag or label resolves before any channel."""

from __future__ import annotations

import re
from collections import defaultdict

_TAG_QUERY = re.compile(r"^(?:stacks\s+)?(?:tag\s+)?([0-9A-Z]{4})$", re.IGNORECASE)
_IDENT = re.compile(r"^[^\s]+$")


class IdentifierResolver:
    """Exact names, aliases (labels, tags) and dotted suffixes (`two_le` -> `Nat.Prime.two_le`)."""

    def __init__(self, names: list[str], aliases: list[list[str]]):
        self.exact: dict[str, list[str]] = defaultdict(list)
        self.suffix: dict[str, list[str]] = defaultdict(list)
        for name, alias in zip(names, aliases):
            for key in {name, *alias}:
                self.exact[key].append(name)
            parts = name.split(".")
            for i in range(1, len(parts)):
                self.suffix[".".join(parts[i:])].append(name)

    def resolve(self, query: str) -> list[str]:
        q = query.strip().strip("`").strip()
        m = _TAG_QUERY.match(q)
        if m and m.group(1).upper() in self.exact:
            return sorted(set(self.exact[m.group(1).upper()]))
        if not _IDENT.match(q):
            return []
        q = q.removeprefix("_root_.")
        found = sorted(set(self.exact.get(q, [])))
        more = sorted(set(self.suffix.get(q, [])) - set(found), key=lambda n: (len(n), n))
        return found + more[:20]
