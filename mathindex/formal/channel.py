"""The formal channel: Loogle-style search over the release's formal index, for Lean-looking
queries (mathindex/channel.py)."""

from __future__ import annotations

from pathlib import Path

from mathindex.formal.search import FormalIndex
from mathindex.channel import Channel, ChannelContext, Hits, Query
from mathindex.store.layout import ReleaseLayout


class FormalChannel(Channel):
    """The formal index in soft mode, so that Lean in prose still ranks declarations by how much of
    each piece they match."""

    name = "formal"

    def __init__(self, release: Path, shared: dict[str, str] | None = None):
        self.index = FormalIndex(release, shared)

    @classmethod
    def open(cls, context: ChannelContext) -> FormalChannel | None:
        """None for a release built before the formal channel (no `formal_statements`): not an error."""
        if not ReleaseLayout(context.release).table("formal_statements").exists():
            return None
        return cls(context.release, context.shared)

    @classmethod
    def runs(cls, query: Query) -> bool:
        """Lean-looking queries only (`kinds.query_kind`)."""
        return query.kind == "lean"

    def hits(self, query: Query, k: int) -> Hits | None:
        return self.search(query.text, k) if self.runs(query) else None

    def search(self, query: str, k: int) -> Hits:
        return self.index.soft(query, k)
