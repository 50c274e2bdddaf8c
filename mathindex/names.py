"""Node names and ids: the one place that says how a hit is named and how the engine's parts share
name objects. Low level: it imports nothing of mathindex."""

from __future__ import annotations


# a Lean declaration's node id is this and its full name, whatever library (corpus) declares it:
# Lean core, Batteries and Mathlib share one name space (a build that imports them all can hold a
# name once), so `lean:Nat.succ_le_iff` names the same node in a release of one library or of
# three. A name two corpora both declare (a `private` name, a misread) is one node, built from the
# first corpus by name; the extract stage records the others as errors rows.
LEAN_PREFIX = "lean:"
TEX_PREFIX = "tex:"  # a LaTeX statement's node id is this, its corpus, ":" and its statement id


def lean_node_id(full_name: str) -> str:
    """A Lean declaration's node id."""
    return LEAN_PREFIX + full_name


def tex_node_id(corpus: str, statement_id: str) -> str:
    """A LaTeX statement's node id."""
    return f"{TEX_PREFIX}{corpus}:{statement_id}"


def hit_name(tag: str | None, label: str | None, statement_id: str) -> str:
    """A LaTeX statement's hit name: its tag, else its corpus-unique label, else its statement id."""
    return tag or label or statement_id


def shared_names(names, shared: dict[str, str] | None) -> list[str]:
    """`names` as a list, each name that `shared` (name -> itself: the search engine's name
    objects) holds replaced by that str object, so that the channels' tables do not each hold a
    copy of every name (about 25 MB a copy on whole Mathlib)."""
    return list(names) if shared is None else [shared.get(n, n) for n in names]
