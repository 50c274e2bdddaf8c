"""Descriptions from module docs and curated lists (lean/descriptions.py), through extraction into
the embedding texts."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.embed.texts import EMBEDDED_FACETS, embedding_texts
from mathindex.lean import extract_lean_tree
from mathindex.lean.descriptions import list_descriptions, module_doc_descriptions

GROUPS = '''/-!
# Widget groups

Some words before the lists.

## Main definitions

* `Widget G` : the type of widgets of `G`,
  a structure with two fields.
* `Widget.trivial`: the trivial widget.
- `one_le_card` and `card_pos` - a widget group is never empty.
* `x ∈ s`: not a name, only notation.
* plain text bullet without a name.

## Main statements

* `Equiv` is the widget equivalence.
-/

structure Widget (G : Type) where
  a : G

namespace Widget

def trivial (G : Type) [Inhabited G] : Widget G := ⟨default⟩

theorem one_le_card : 1 ≤ 1 := le_refl 1

theorem card_pos : 0 < 1 := Nat.one_pos

def Equiv : Type := Unit

end Widget
'''

GLOBAL = '''/-- A global equivalence. -/
def Equiv : Type := Unit

/-!
Bullets with no title.

* `Equiv`: the global one, seen from another file.
* `trivial`: relative name of a declaration of another file: not resolved.
-/
'''

HUNDRED = b'''1:
  title  : The widget theorem
  decl   : Widget.card_pos
2:
  title  : A theorem nobody formalised
3:
  title  : Two at once
  decls  :
    - Widget.one_le_card
    - Missing.name
'''

UNDERGRAD = b'''Algebra:
  Widgets:
    widget group: 'Widget'
    a link: 'https://example.org/widgets'
    not done: '~'
'''


def test_module_doc_bullets():
    found = module_doc_descriptions(GROUPS, "W.lean")
    by_name = {d.name: d for d in found}
    assert by_name["Widget"].text == "Widget groups: the type of widgets of `G`, a structure with two fields."
    assert by_name["Widget"].line == 8
    assert by_name["Widget.trivial"].text == "Widget groups: the trivial widget."
    assert by_name["one_le_card"].text == by_name["card_pos"].text == "Widget groups: a widget group is never empty."
    assert by_name["Equiv"].text == "Widget groups: is the widget equivalence."
    assert "x" not in by_name  # a formula in backticks with no separator after the name part
    assert len(found) == 5


def test_module_doc_without_title_and_unclosed_doc():
    found = module_doc_descriptions(GLOBAL, "G.lean")
    assert [d.text for d in found] == ["the global one, seen from another file.",
                                       "relative name of a declaration of another file: not resolved."]
    assert module_doc_descriptions("/-! # T\n* `a`: never closed", "x.lean") == []


def test_lists():
    titled = list_descriptions("docs/100.yaml", HUNDRED)
    assert [(d.name, d.text) for d in titled] == [("Widget.card_pos", "The widget theorem"),
                                                  ("Widget.one_le_card", "Two at once"), ("Missing.name", "Two at once")]
    topics = list_descriptions("docs/undergrad.yaml", UNDERGRAD)
    assert [(d.name, d.text) for d in topics] == [("Widget", "widget group (Algebra, Widgets)")]
    assert list_descriptions("docs/100.yaml", b"1: [unclosed") == []


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    (root / "Lib").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "Lib" / "Widget.lean").write_text(GROUPS)
    (root / "Lib" / "Global.lean").write_text(GLOBAL)
    (root / "docs" / "100.yaml").write_bytes(HUNDRED)
    (root / "docs" / "undergrad.yaml").write_bytes(UNDERGRAD)
    return root


def test_extraction_resolves_names(tmp_path):
    root = _corpus(tmp_path)
    ex = extract_lean_tree(root, "lib", cache_dir=tmp_path / "cache")
    rows = ex.descriptions.to_pylist()
    got = sorted((r["full_name"], r["source"], r["text"]) for r in rows)
    assert ("Widget.Equiv", "module_doc", "Widget groups: is the widget equivalence.") in got  # its own file first
    assert ("Equiv", "module_doc", "the global one, seen from another file.") in got
    assert ("Widget.one_le_card", "module_doc", "Widget groups: a widget group is never empty.") in got
    assert ("Widget.card_pos", "docs/100.yaml", "The widget theorem") in got
    assert ("Widget", "docs/undergrad.yaml", "widget group (Algebra, Widgets)") in got
    assert not any(r["full_name"] == "Widget.trivial" and "another file" in r["text"] for r in rows)
    assert not any(r["full_name"] == "Missing.name" for r in rows)
    ids = {d["full_name"]: d["decl_id"] for d in ex.declarations.to_pylist()}
    assert all(ids[r["full_name"]] == r["decl_id"] for r in rows)
    again = extract_lean_tree(root, "lib", cache_dir=tmp_path / "cache")  # from the final cache
    assert again.descriptions.equals(ex.descriptions)


def test_description_facet_is_embedded(tmp_path):
    ex = extract_lean_tree(_corpus(tmp_path), "lib")
    texts = embedding_texts(ex.declarations, None, None, ex.descriptions)
    facet = {r["name"]: r["text"] for r in texts.to_pylist() if r["facet"] == "description"}
    assert "description" in EMBEDDED_FACETS
    assert facet["Widget"] == "Widget groups: the type of widgets of `G`, a structure with two fields. ; widget group (Algebra, Widgets)"
    assert facet["Widget.card_pos"] == "Widget groups: a widget group is never empty. ; The widget theorem"
    without = embedding_texts(ex.declarations, None, None)
    assert "description" not in set(without.column("facet").to_pylist())
    assert isinstance(texts, pa.Table)
