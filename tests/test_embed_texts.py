"""Embedding texts: facets per node, stable ids, hit names, empty and oversized texts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa

from mathindex.embed import embedding_texts, text_id
from mathindex.informal import RuleInformaliser, informalise
from mathindex.embed.texts import MAX_TEXT_CHARS
from mathindex.schemas.embed import EMBEDDING_TEXTS

FIXTURES = Path(__file__).parent / "fixtures" / "embed"


def decls() -> pa.Table:
    return pa.Table.from_pylist(json.loads((FIXTURES / "declarations.json").read_text()))


def statements() -> pa.Table:
    return pa.Table.from_pylist([
        {"node_id": "tex:stacks:lemma-1", "statement_id": "lemma-1", "kind": "lemma", "title": "Nakayama",
         "label": "lemma-nakayama", "tag": "00DV", "body": "Let $M$ be a finite $R$-module ...",
         "body_normalised": "Let M be a finite R-module with IM = M ...", "slogan": "Nakayama's lemma."},
        {"node_id": "tex:stacks:def-2", "statement_id": "def-2", "kind": "definition", "title": None,
         "label": "definition-ring", "tag": None, "body": "A ring is ...", "body_normalised": None, "slogan": ""},
        {"node_id": "tex:notes:thm-3", "statement_id": "thm-3", "kind": "theorem", "title": "",
         "label": None, "tag": None, "body": "x" * 1_000_000, "body_normalised": None, "slogan": None},
        {"node_id": "tex:notes:thm-4", "statement_id": "thm-4", "kind": "theorem", "title": "",
         "label": None, "tag": None, "body": "   ", "body_normalised": "", "slogan": None},
    ])


def test_lean_and_latex_facets():
    d = decls()
    inf = informalise(d, RuleInformaliser(), None)
    out = embedding_texts(d, inf, statements())
    assert out.schema == EMBEDDING_TEXTS
    rows = out.to_pylist()
    keys = [(r["node_id"], r["facet"]) for r in rows]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert len(set(out.column("text_id").to_pylist())) == out.num_rows
    lean = [r for r in rows if r["node_id"].startswith("lean:")]
    # 7 name_signature + 7 informal + 4 non-empty docstrings
    assert len(lean) == 18
    add = {r["facet"]: r for r in lean if r["node_id"] == "lean:Nat.add_comm"}
    assert set(add) == {"name_signature", "informal", "docstring"}
    assert add["name_signature"]["text"] == (
        "theorem Nat.add_comm (n m : ℕ) : n + m = m + n -- natural number add commutative")
    assert add["docstring"]["text"] == "Addition of natural numbers is commutative."
    assert add["informal"]["name"] == "Nat.add_comm"
    for r in rows:
        assert r["sha256"] == hashlib.sha256(r["text"].encode()).hexdigest()
        assert r["text_id"] == text_id(r["node_id"], r["facet"])
    tex = {(r["node_id"], r["facet"]): r for r in rows if r["node_id"].startswith("tex:")}
    assert tex[("tex:stacks:lemma-1", "latex_body")]["text"] == "Lemma (Nakayama). Let M be a finite R-module with IM = M ..."
    assert tex[("tex:stacks:lemma-1", "latex_body")]["name"] == "00DV"  # tag first
    assert tex[("tex:stacks:lemma-1", "slogan")]["text"] == "Nakayama's lemma."
    assert tex[("tex:stacks:def-2", "latex_body")]["name"] == "definition-ring"  # then label
    assert ("tex:stacks:def-2", "slogan") not in tex  # empty facets are left out
    assert not any(k[0] == "tex:notes:thm-4" for k in tex)  # whitespace-only body: no row
    big = tex[("tex:notes:thm-3", "latex_body")]
    assert big["name"] == "thm-3" and big["truncated"] and len(big["text"]) == MAX_TEXT_CHARS


def test_ids_are_stable_and_deterministic():
    assert text_id("lean:Nat.add_comm", "informal") == int.from_bytes(
        hashlib.sha256(b"lean:Nat.add_comm\0informal").digest()[:8], "big", signed=True)
    d = decls()
    a = embedding_texts(d, None, None)
    b = embedding_texts(d.take(list(reversed(range(d.num_rows)))), None, None)
    assert a.equals(b)
    assert set(a.column("facet").to_pylist()) == {"name_signature", "docstring"}


def test_empty_inputs():
    out = embedding_texts(None, None, None)
    assert out.num_rows == 0 and out.schema == EMBEDDING_TEXTS


def test_latex_name_prefers_the_corpus_unique_full_label():
    st = statements().append_column("full_label", pa.array(["x", "notes/definition-ring", None, None]))
    rows = embedding_texts(None, None, st).to_pylist()
    names = {r["node_id"]: r["name"] for r in rows}
    assert names["tex:stacks:lemma-1"] == "00DV" and names["tex:stacks:def-2"] == "notes/definition-ring"
    assert names["tex:notes:thm-3"] == "thm-3"


def test_members_facet_states_a_definition_by_its_fields_or_constructors():
    """A structure's or class's `members` text lists its fields with their statements in source
    order, an inductive type's its constructors; parent projections, a structure's `mk` and members
    of a name that is no structure are left out."""
    from mathindex.embed.texts import EMBEDDED_FACETS, member_texts

    rows = [
        ("Cat.Functor", "structure", "(C D : Type)", "source", 10),
        ("Cat.Functor.map_comp", "field", ": ∀ f g, map (f ≫ g) = map f ≫ map g", "field", 14),
        ("Cat.Functor.map_id", "field", ": ∀ X, map (𝟙 X) = 𝟙 (obj X)", "field", 12),
        ("Cat.Functor.toPrefunctor", "field", "(C D : Type) extends Prefunctor C D", "parent_projection", 10),
        ("Cat.Functor.mk", "constructor", "", "constructor", 10),
        ("Shape", "inductive", ": Type", "source", 20),
        ("Shape.circle", "constructor", "circle (r : Nat) : Shape", "constructor", 21),
        ("Shape.dot", "constructor", "dot : Shape", "constructor", 22),
        ("Shape.area", "field", ": Nat", "field", 30),  # a field under an inductive: not a member
    ]
    table = pa.Table.from_pylist([
        {"decl_id": f"d{i}", "full_name": n, "kind": k, "signature": s, "type": None, "docstring": None,
         "origin": o, "file": "F.lean", "line_start": line} for i, (n, k, s, o, line) in enumerate(rows)])
    members = dict(member_texts(table).iter_rows())
    assert members == {
        "Cat.Functor": "structure Cat.Functor where map_id : ∀ X, map (𝟙 X) = 𝟙 (obj X); "
                       "map_comp : ∀ f g, map (f ≫ g) = map f ≫ map g",
        "Shape": "inductive Shape where | circle (r : Nat) : Shape; | dot : Shape",
    }
    out = {(r["node_id"], r["facet"]): r["text"] for r in embedding_texts(table, None, None).to_pylist()}
    assert out[("lean:Cat.Functor", "members")] == members["Cat.Functor"]
    assert ("lean:Cat.Functor.map_id", "members") not in out
    assert "members" in EMBEDDED_FACETS
