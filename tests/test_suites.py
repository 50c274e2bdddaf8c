"""Query-set readers: the project's own format and MathlibQR's."""

import json

import pytest

from mathindex.evaluation.suites import SuiteError, load_suite


def test_mathlibqr_format_skips_empty_styles(tmp_path):
    targets = [
        {"id": "O1", "full_name": "Lattice", "q1a_lean": "a poset with ⊔", "q1b_latex": "", "q1c_natural": "join and meet",
         "q2_slogan": "", "q3_nickname": "lattice", "q4_special_case": "", "fair": True},
        {"id": "O2", "full_name": "Nat.Prime", "q1a_lean": "", "q1b_latex": "p prime", "q1c_natural": "",
         "q2_slogan": "", "q3_nickname": "", "q4_special_case": "", "fair": False},
    ]
    p = tmp_path / "m.json"
    p.write_text(json.dumps(targets))
    suite = load_suite(p)
    assert [q.id for q in suite.queries] == ["O1:q1a_lean", "O1:q1c_natural", "O1:q3_nickname", "O2:q1b_latex"]
    assert suite.queries[0].gold == frozenset({"Lattice"})
    assert [q.fair for q in suite.queries] == [True, True, True, False]


def test_own_format_and_errors(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"suite": "s", "k": 5, "headline": ["ndcg@5"], "queries": [{"id": "a", "style": "lean", "query": "x", "gold": ["X"]}]}))
    suite = load_suite(p)
    assert (suite.name, suite.k, suite.headline, len(suite.queries)) == ("s", 5, ("ndcg@5",), 1)
    p.write_text(json.dumps({"queries": [{"id": "a", "query": "x", "gold": []}]}))
    with pytest.raises(SuiteError):
        load_suite(p)
    p.write_text("{not json")
    with pytest.raises(SuiteError):
        load_suite(p)
