"""Duplicate folding: the `same_as` edges (`@[stacks TAG]` -> the statement of that tag), their
groups, the fold at fusion time as plain functions, scoring by fact, and the folded hit's shape in
the engine, the CLI's --json, the HTTP declaration page and the MCP models (the sample release)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathindex.cli.search import _fused_json
from mathindex.evaluation.bench import run_suite
from mathindex.evaluation.metrics import ndcg_at_k, same_fact
from mathindex.evaluation.suites import Query, Suite
from mathindex.schemas import table_specs
from mathindex.schemas.search import SAME_AS
from mathindex.search.fusion import fused_totals
from mathindex.search.sameas import (SameAsGroups, answering_groups, cross_reference, fold, fold_lists,
                                     folded_entries, same_as_table)
from mathindex.serve.mcp import over_stdio
from mathindex.serve.pages import declaration_page
from mathindex.serve.release import ServedRelease
from mathindex.serve.responses import StdioSearchResponse
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import published_release


def declarations(rows: list[tuple[str, str, list[str]]]) -> pa.Table:
    """A declarations table of (full_name, origin, attributes) rows, one file, a line each."""
    return pa.Table.from_pylist([
        {"full_name": n, "origin": o, "attributes": a, "file": "A.lean", "line_start": i}
        for i, (n, o, a) in enumerate(rows, 1)])


STATEMENTS = pa.Table.from_pylist([
    {"node_id": "tex:stacks:s1", "tag": "0BQX", "label": "lemma-a", "full_label": "alg-lemma-a", "statement_id": "s1"},
    {"node_id": "tex:stacks:s2", "tag": "00DV", "label": "lemma-b", "full_label": "alg-lemma-b", "statement_id": "s2"},
    {"node_id": "tex:stacks:s3", "tag": None, "label": "lemma-c", "full_label": "alg-lemma-c", "statement_id": "s3"},
])


def test_cross_reference_attributes_as_the_extraction_keeps_them():
    assert cross_reference("stacks 0BQX") == ("stacks", "0BQX")
    assert cross_reference('stacks 09GI "            "') == ("stacks", "09GI")  # the comment comes blanked
    assert cross_reference("kerodon 00V3") == ("kerodon", "00V3")
    for other in ("simp", "inherit_doc stacksTagFn", "stacks 0bqx", "stacks", "to_dual (attr := stacks 003B) Epi"):
        assert cross_reference(other) is None, other


def test_edges_join_declarations_to_the_statements_of_their_tags():
    decls = declarations([
        ("Foo.bar", "source", ["simp", "stacks 0BQX"]),
        ("Foo.baz", "source", ["stacks 0BQX", "stacks 0BQX"]),  # the same pair twice: one edge
        ("Foo.mk", "constructor", ["stacks 0BQX"]),  # inherited by a generated name: not the same fact
        ("Foo.qux", "source", ["stacks 0ZZZ"]),  # a tag this release has no statement of
        ("Foo.ker", "source", ["kerodon 00DV"]),  # a Kerodon tag is not a Stacks tag
        ("instFoo", "instance_name", ["stacks 00DV"]),
    ])
    t = same_as_table(decls, STATEMENTS)
    assert t.schema == SAME_AS and table_specs()["same_as"].schema == SAME_AS
    assert [(r["name"], r["target"], r["target_node_id"], r["via"], r["line"]) for r in t.to_pylist()] == [
        ("Foo.bar", "0BQX", "tex:stacks:s1", "stacks", 1),
        ("Foo.baz", "0BQX", "tex:stacks:s1", "stacks", 2),
        ("instFoo", "00DV", "tex:stacks:s2", "stacks", 6),
    ]
    assert t.column("node_id").to_pylist() == ["lean:Foo.bar", "lean:Foo.baz", "lean:instFoo"]
    assert same_as_table(decls, STATEMENTS.slice(0, 0)).num_rows == 0
    assert same_as_table(None, STATEMENTS).num_rows == 0


def test_groups_are_connected_components():
    groups = SameAsGroups.of([("Foo.bar", "0BQX", "stacks"), ("Foo.baz", "0BQX", "stacks"), ("instFoo", "00DV", "stacks")])
    assert groups.group_of["Foo.baz"] == ("0BQX", "Foo.bar", "Foo.baz") == groups.group_of["0BQX"]
    assert groups.key("Foo.bar") == "0BQX" and groups.key("Other") == "Other"
    assert groups.via["00DV"] == "stacks" and groups and not SameAsGroups()


GROUPS = SameAsGroups.of([("Foo.bar", "0BQX", "stacks"), ("Foo.baz", "0BQX", "stacks"), ("Lone.one", "00DV", "stacks")])


def test_only_groups_with_two_answering_members_fold():
    present = ["x", "0BQX", "Foo.bar", "y", "0BQX", "Lone.one"]
    assert answering_groups(GROUPS, present) == [["0BQX", "Foo.bar"]]  # 00DV did not answer: Lone.one alone
    entry = folded_entries([["0BQX", "Foo.bar"]], {"0BQX": 0.01, "Foo.bar": 0.03})
    assert entry == {"0BQX": "Foo.bar", "Foo.bar": "Foo.bar"}
    assert folded_entries([["b", "a"]], {}) == {"a": "a", "b": "a"}  # ties: by name


def test_fold_lists_keeps_a_group_once_at_its_best_place():
    results = {"lexical": [("0BQX", 9.0), ("x", 8.0), ("Foo.bar", 7.0), ("y", 6.0)],
               "vector": [("x", 0.9), ("y", 0.8)]}
    folded = fold_lists(results, {"0BQX": "Foo.bar", "Foo.bar": "Foo.bar"})
    assert folded["lexical"] == [("Foo.bar", 9.0), ("x", 8.0), ("y", 6.0)]
    assert folded["vector"] is results["vector"]  # a list with no member is left as it is


def test_fold_fuses_the_group_as_one_node_and_keeps_each_members_ranks():
    results = {"lexical": [("0BQX", 9.0), ("x", 8.0), ("Foo.bar", 7.0)],
               "formal": [("Foo.bar", 5.0), ("z", 4.0)]}
    weights = {"lexical": 1.0, "formal": 1.0}
    folding = fold(GROUPS, results, ["0BQX"], weights)
    unfolded = fused_totals(results, weights)
    assert unfolded["Foo.bar"] > unfolded["0BQX"]  # the declaration names the entry
    assert folding.results["lexical"] == [("Foo.bar", 9.0), ("x", 8.0)]
    assert folding.resolved == ["Foo.bar"]
    total = fused_totals(folding.results, weights)
    # the group's score: the best member's place in each channel, fused as one node
    assert total["Foo.bar"] == pytest.approx(1 / 61 + 1 / 61) and total["Foo.bar"] > unfolded["Foo.bar"]
    [also] = folding.also("Foo.bar")
    assert (also.name, also.channels) == ("0BQX", {"identifier": 1, "lexical": 1})
    assert also.score == round(unfolded["0BQX"], 8)
    assert folding.also("x") == []
    assert fold(GROUPS, {"lexical": [("0BQX", 1.0), ("x", 0.5)]}, [], weights) is None  # one member: nothing folds
    assert fold(SameAsGroups(), results, [], weights) is None


def test_scoring_by_fact_counts_a_folded_hit_whichever_member_names_it():
    key = GROUPS.key
    ranked, gold = same_fact(["x", "Foo.bar", "y"], {"0BQX"}, key)
    assert ranked == ["x", "0BQX", "y"] and gold == {"0BQX"}
    # two gold members of one group are one answer; an unfolded list counts the group once
    ranked, gold = same_fact(["Foo.baz", "0BQX", "y"], {"0BQX", "Foo.bar"}, key)
    assert gold == {"0BQX"} and ndcg_at_k(ranked, gold, 10) == 100.0
    suite = Suite(name="t", k=10, headline=("ndcg@10",), queries=(Query(id="q1", style="s", text="q", gold=frozenset({"Foo.bar"})),))
    summary, rows = run_suite(lambda q, k: ["x", "0BQX"], suite, key)
    assert rows[0]["rank"] == 2 and rows[0]["top"] == ["x", "Foo.bar"] and rows[0]["gold"] == ["Foo.bar"]
    assert run_suite(lambda q, k: ["x", "0BQX"], suite)[1][0]["rank"] is None  # not by fact: a miss


@pytest.fixture(scope="module")
def sample_release(sample_release_root) -> Path:
    return published_release(sample_release_root)


def test_sample_release_folds_a_declaration_and_its_stacks_statement(sample_release):
    edges = pq.read_table(ReleaseLayout(sample_release).table("same_as")).to_pylist()
    assert len(edges) == 10 and len({e["target"] for e in edges}) == 9
    assert {"name": "MiniMath.mul_left_cancel_iff", "target": "MA02"}.items() <= edges[-1].items()
    served = ServedRelease(sample_release, verify="none", warm=False, cache_size=0, premises=False, lazy=True)
    answer = served.search("you can cancel a common factor on the left in a group", 5)
    first = answer.hits[0]
    names = {first.name, *(m.name for m in first.also)}
    assert {"MiniMath.mul_left_cancel", "MA02"} <= names
    stacks = next(m for m in first.also if m.name == "MA02")
    assert stacks.also_in == "Stacks" and stacks.via == "stacks" and stacks.location.file == "algebra.tex"
    assert stacks.channels and stacks.score > 0
    assert all(n not in {h.name for h in answer.hits[1:]} for n in names)  # one hit per fact
    # --json: the same hit with what was folded into it
    hit = json.loads(json.dumps(_fused_json(answer)))["hits"][0]
    assert {"name", "also_in", "via", "score", "channels", "kind", "title", "file", "line"} == set(hit["also"][0])
    assert all(h["also"] == [] for h in json.loads(json.dumps(_fused_json(answer)))["hits"][1:] if h["name"] not in names)
    # MCP: each folded node's location as {corpus, path, line, url}
    stdio = over_stdio(answer, StdioSearchResponse).model_dump()
    also = next(m for m in stdio["hits"][0]["also"] if m["name"] == "MA02")
    assert also["location"] == {"corpus": "sample-latex", "path": "algebra.tex", "line": 49, "url": None}
    # the declaration page names the other members
    declared = served.declaration("MiniMath.mul_left_cancel")
    assert declared.same_as == ["MA02", "MiniMath.mul_left_cancel_iff"]
    assert "Same fact as" in declaration_page(declared) and "/decl/MA02" in declaration_page(declared)
    served.close()
