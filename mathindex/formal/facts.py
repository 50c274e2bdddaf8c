"""What a Lean statement's text alone determines (`FACTS`: its telescope's trees, heads, size,
tree keys, leaf symbols, free names and text hints), keyed by that text (`statement_key`), the
first pass of the formal index (`formal_index`), run in shards (`formal.shards`)."""

from __future__ import annotations

import hashlib
import json
import threading

import pyarrow as pa

from mathindex.formal.keys import free_names, text_hints, tree_facts
from mathindex.formal.normal import TooDeep, head
from mathindex.formal.telescope import TelescopeBuilder

# what a statement's text alone determines (the content cache's columns, after `key`)
FACTS = pa.schema([
    pa.field("key", pa.string(), nullable=False),
    pa.field("conclusion", pa.string()),
    pa.field("hypotheses", pa.string(), nullable=False),
    pa.field("conclusion_head", pa.string()),
    pa.field("hypothesis_heads", pa.list_(pa.string()), nullable=False),
    pa.field("size", pa.int32(), nullable=False),
    pa.field("tree_keys", pa.list_(pa.string()), nullable=False),
    pa.field("symbols", pa.list_(pa.string()), nullable=False),
    pa.field("free", pa.list_(pa.string()), nullable=False),  # keys.free_names: notation leaves
    pa.field("hints", pa.list_(pa.string()), nullable=False),  # keys.text_hints: `Nat.divisors` of `n.divisors`
])
_BUILDERS = threading.local()  # a thread's builder, kept across its shards (binder types repeat); not shared by threads


def dumps(tree: tuple) -> str:
    """The FORMULA_TREES JSON encoding (tuples serialise as lists)."""
    return json.dumps(tree, ensure_ascii=False, separators=(",", ":"))


def statement_key(signature: str | None, type_: str | None, variables: str | None, additive: bool) -> str:
    """Content id of what a statement's facts depend on."""
    text = "\0".join((signature or "", type_ or "", variables or "", "+" if additive else ""))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def facts_rows(keys: list[str], rows: list[dict]) -> pa.Table:
    """FACTS rows of statements (`rows`: signature, type, variables, origin) under `keys`."""
    builder = getattr(_BUILDERS, "builder", None)
    if builder is None:
        builder = _BUILDERS.builder = TelescopeBuilder()
    cols: dict[str, list] = {name: [] for name in FACTS.names}
    for key, d in zip(keys, rows):
        tele = _telescope(builder, d)
        hyps, concl = (tele.hypotheses, tele.conclusion) if tele is not None else ([], None)
        tree_keys, symbols, n = tree_facts(hyps, concl) if (hyps or concl is not None) else (set(), set(), 0)
        declared = tele.declared if tele is not None else {}
        free = free_names(hyps, concl, declared)
        hints = text_hints([d.get(c) or "" for c in ("signature", "type", "variables")], declared)
        for name, value in zip(FACTS.names, (
                key, dumps(concl) if concl is not None else None, dumps(hyps),
                head(concl) if concl is not None else None, [head(h) for h in hyps], n,
                sorted(tree_keys), sorted(symbols), sorted(free), sorted(hints))):
            cols[name].append(value)
    return pa.table(cols, schema=FACTS)


def _telescope(builder: TelescopeBuilder, d: dict):
    if not d.get("type"):
        return None
    try:
        return builder.of_declaration(d.get("signature") or "", d["type"], d.get("variables") or "",
                                      to_additive=d.get("origin") == "to_additive")
    except (TooDeep, RecursionError):
        return None
