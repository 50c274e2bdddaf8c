"""The query channels' interface. A channel opens from a release's files and the context the engine
lends it (`ChannelContext`), and answers a `Query` with its candidates (name, score), best first;
the engine fuses the lists (search/fusion.py). A channel's `name` labels its ranks in hits and is
its key in the weights (search/weights.py). The engine's registry (`engine.CHANNELS`) lists them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from mathindex.store.layout import RootLayout

Hits = list[tuple[str, float]]


@dataclass(frozen=True)
class ChannelContext:
    """What the engine lends each channel as it opens: the release, its `nodes` name column and
    one str object per name (`shared`: the channels' lists hold those, not a copy of every name,
    about 25 MB on whole Mathlib), the release root, the query model (a manifest's reference or a
    path; None: the bundled one), whether the embedder only encodes queries (a server), a symbol
    map file to use instead of the release's own, and the channels opened before this one."""

    release: Path
    names: list[str]
    shared: dict[str, str]
    root: Path
    model: str | Path | None = None
    queries_only: bool = False
    symbols: Path | None = None
    opened: dict[str, Channel] = field(default_factory=dict)

    @property
    def cache_dir(self) -> Path:
        """The release root's cache directory."""
        return RootLayout(self.root).cache


@dataclass
class Query:
    """One query as the channels see it: its text (the corpora's macros expanded), kind
    (search/kinds.py), whether it is TeX or math and not Lean (`latex`), the embedding channel's
    vector once encoded, and `head(depth)`: the names the lists before it fuse to, best first."""

    text: str
    kind: str
    latex: bool
    vector: Any = None
    head: Callable[[int], list[str]] | None = None


class Channel(ABC):
    """One query channel over one index of a release."""

    name: ClassVar[str]

    @classmethod
    @abstractmethod
    def open(cls, context: ChannelContext) -> Channel | None:
        """The channel over `context.release`; None when the release has none of its index and that
        is no fault (a release built before it); an error when its files fail to open."""

    @abstractmethod
    def hits(self, query: Query, k: int) -> Hits | None:
        """The best k candidates, best first; None when the channel does not run for this query."""
