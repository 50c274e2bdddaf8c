"""Nodes that state one fact: the `same_as` table, its groups, and their folding into one hit.

A Lean declaration's cross-reference attribute (`@[stacks 0BQX]`, `@[stacks 0BQX "(1)"]`,
`@[kerodon 00V3]`, as the extraction keeps it in `declarations.attributes`) cites a tag of another
corpus; when the release holds the LaTeX statement of that tag, the pair is an edge. Edges join into
groups (connected components: a tag cited by two declarations makes a group of three). At query time
the members of a group that answer one query fold into one entry (`folded_entries`, `fold_lists`):
the member that scored best unfolded names it, and each channel's list holds the group once, at its
best member's place, so the group is fused as one node.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.names import LEAN_PREFIX, hit_name
from mathindex.schemas.search import SAME_AS
from mathindex.search.fusion import ChannelRanks, Member, fused_totals, gap_weights
from mathindex.store.layout import ReleaseLayout

log = logging.getLogger(__name__)

# `stacks 0BQX`, `kerodon 00V3`: the attribute as the extraction keeps it (a comment after the tag,
# `"(1)"`, comes blanked by the Lean lexer, so which part of the statement is meant is not known)
CROSS_REFERENCE = re.compile(r"^(stacks|kerodon)\s+([0-9A-Z]{4})\b")
STACKS_ALIAS = r"^stacks\s+([0-9A-Z]{4})\b"  # a declaration's Stacks tags, its aliases (search/nodes.py, polars)
# The schemes whose tags a release's tagged LaTeX statements carry: the tags file of a LaTeX source
# is in the Stacks format and the resolver calls its tags Stacks tags. No source is a Kerodon corpus
# yet, so `kerodon` attributes are read and counted but find no statement.
TAGGED_SCHEMES = ("stacks",)
# The declarations that carry an attribute as written (an anonymous instance is named by
# generation); the fields, constructors and simps lemmas that inherit it state other facts.
CITING_ORIGINS = ("source", "instance_name")


def cross_reference(attribute: str) -> tuple[str, str] | None:
    """(scheme, tag) of a cross-reference attribute; None for any other attribute."""
    m = CROSS_REFERENCE.match(attribute.strip())
    return (m.group(1), m.group(2)) if m else None


def same_as_table(declarations: pa.Table | None, statements: pa.Table | None) -> pa.Table:
    """One SAME_AS row per (declaration, statement, scheme): each citing declaration's attribute
    whose tag a tagged LaTeX statement of this release carries, sorted by node ids; the first
    attribute of a repeated pair is kept. Attributes citing a tag the release lacks are counted in the log."""
    if declarations is None or statements is None or not declarations.num_rows or not statements.num_rows:
        return SAME_AS.empty_table()
    tagged: dict[str, list[tuple[str, str]]] = {}
    for s in statements.select(["node_id", "tag", "label", "full_label", "statement_id"]).to_pylist():
        if s["tag"]:
            tagged.setdefault(s["tag"], []).append((s["node_id"], hit_name(s["tag"], s["full_label"] or s["label"], s["statement_id"])))
    citing = pl.from_arrow(declarations.select(["full_name", "origin", "attributes", "file", "line_start"])).filter(
        pl.col("origin").is_in(CITING_ORIGINS)
        & pl.col("attributes").list.eval(pl.element().str.contains(CROSS_REFERENCE.pattern)).list.any())
    rows, seen, missing = [], set(), 0
    for d in citing.sort(["file", "line_start", "full_name"]).iter_rows(named=True):
        for scheme, tag in filter(None, map(cross_reference, d["attributes"])):
            targets = tagged.get(tag, []) if scheme in TAGGED_SCHEMES else []
            missing += not targets
            for target_id, target in targets:
                key = (LEAN_PREFIX + d["full_name"], target_id, scheme)
                if key not in seen:
                    seen.add(key)
                    rows.append({"node_id": key[0], "name": d["full_name"], "target_node_id": target_id, "target": target,
                                 "via": scheme, "tag": tag, "file": d["file"], "line": d["line_start"]})
    log.info("same_as: %d edges; %d cross-reference attributes cite a tag this release has no statement of", len(rows), missing)
    rows.sort(key=lambda r: (r["node_id"], r["target_node_id"], r["via"]))
    return pa.Table.from_pylist(rows, schema=SAME_AS)


@dataclass(frozen=True)
class SameAsGroups:
    """A release's same_as groups: each member's name -> its group (the members' names, sorted), and
    the scheme of the attribute that ties it in (`stacks`). Empty for a release without the table."""

    group_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    via: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, edges: Iterable[tuple[str, str, str]]) -> SameAsGroups:
        """The groups of (name, target, via) edges: connected components (union-find)."""
        parent: dict[str, str] = {}
        via: dict[str, str] = {}

        def root(n: str) -> str:
            while parent.setdefault(n, n) != n:
                parent[n] = parent[parent[n]]
                n = parent[n]
            return n

        for name, target, scheme in edges:
            via.setdefault(name, scheme)
            via.setdefault(target, scheme)
            a, b = root(name), root(target)
            if a != b:
                parent[max(a, b)] = min(a, b)
        members: dict[str, list[str]] = {}
        for n in parent:
            members.setdefault(root(n), []).append(n)
        return cls({n: group for ns in members.values() for group in (tuple(sorted(ns)),) for n in ns}, via)

    def __bool__(self) -> bool:
        return bool(self.group_of)

    def key(self, name: str) -> str:
        """The name its group is known by (its first member by name); a name in no group is its own key."""
        group = self.group_of.get(name)
        return group[0] if group else name


def read_groups(release: Path) -> SameAsGroups:
    """The release's groups (`same_as.parquet`); none for a release built before the table."""
    path = ReleaseLayout(release).table("same_as")
    if not path.is_file():
        return SameAsGroups()
    t = pq.read_table(path, columns=["name", "target", "via"])
    return SameAsGroups.of(zip(*(t.column(c).to_pylist() for c in ("name", "target", "via"))))


def answering_groups(groups: SameAsGroups, present: Iterable[str]) -> list[list[str]]:
    """The members of `present` (in their order, each once) of each group that has two or more of them."""
    found: dict[tuple[str, ...], list[str]] = {}
    for name in present:
        group = groups.group_of.get(name)
        if group is not None and name not in (have := found.setdefault(group, [])):
            have.append(name)
    return [names for names in found.values() if len(names) > 1]


def folded_entries(answering: list[list[str]], score: Mapping[str, float]) -> dict[str, str]:
    """member -> the member its entry is named by: of each group's answering members, the one with
    the best `score` (unfolded fused score; ties by name)."""
    out: dict[str, str] = {}
    for names in answering:
        best = min(names, key=lambda n: (-score.get(n, 0.0), n))
        out.update((n, best) for n in names)
    return out


def fold_lists(results: dict[str, list[tuple[str, float]]], entry_of: Mapping[str, str]) -> dict[str, list[tuple[str, float]]]:
    """Each channel's (name, score) list with every folded member renamed to its entry and kept at its
    first (best) place only; names that fold into nothing keep their places relative to each other."""
    out = {}
    for channel, hits in results.items():
        if not any(name in entry_of for name, _ in hits):
            out[channel] = hits
            continue
        seen: set[str] = set()
        kept = []
        for name, score in hits:
            entry = entry_of.get(name)
            if entry is not None:
                if entry in seen:
                    continue
                seen.add(entry)
                name = entry
            kept.append((name, score))
        out[channel] = kept
    return out


def entry_members(entry_of: Mapping[str, str], order: Callable[[str], tuple]) -> dict[str, list[str]]:
    """entry -> its members (the entry first, then the others by `order`)."""
    out: dict[str, list[str]] = {}
    for member, entry in entry_of.items():
        out.setdefault(entry, []).append(member)
    return {e: [e] + sorted((m for m in ms if m != e), key=order) for e, ms in out.items()}


@dataclass(frozen=True)
class Folding:
    """One query's folded candidates: the channel lists and resolved names with each folded member
    renamed to its entry, and what each entry's other members scored and ranked unfolded."""

    results: dict[str, list[tuple[str, float]]]
    resolved: list[str]
    members: dict[str, list[str]]  # entry -> its members, the entry first
    unfolded: dict[str, float]  # each candidate's fused score before folding
    ranks: ChannelRanks  # each candidate's ranks before folding
    identifier: dict[str, int]  # a resolved member's place in the resolver's answer

    def also(self, entry: str) -> list[Member]:
        """The members folded into `entry` but itself, each with its own unfolded score and ranks."""
        return [Member(m, round(self.unfolded.get(m, 0.0), 8), self._channels(m)) for m in self.members.get(entry, [])[1:]]

    def _channels(self, member: str) -> dict[str, int]:
        """A member's ranks as a hit's: its place in the resolver's answer first, then each channel's."""
        ranks = dict(sorted(self.ranks[member].items()))
        return {"identifier": self.identifier[member], **ranks} if member in self.identifier else ranks


def fold(groups: SameAsGroups, results: dict[str, list[tuple[str, float]]], resolved: list[str],
         weights: dict[str, float]) -> Folding | None:
    """The query's candidates with the members of each group that answer together folded into one
    entry (`folded_entries`, `fold_lists`); None when no group has two members among them (then
    nothing changes, and nothing is computed beyond a look-up per candidate)."""
    if not groups:
        return None
    answering = answering_groups(groups, [*resolved, *(name for hits in results.values() for name, _ in hits)])
    if not answering:
        return None
    unfolded = fused_totals(results, gap_weights(results, weights))
    entry_of = folded_entries(answering, unfolded)
    members = entry_members(entry_of, lambda n: (-unfolded.get(n, 0.0), n))
    return Folding(fold_lists(results, entry_of), list(dict.fromkeys(entry_of.get(n, n) for n in resolved)), members,
                   unfolded, ChannelRanks(results), {n: i for i, n in enumerate(resolved, 1)})
