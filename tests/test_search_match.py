"""The `match` verdict and the notice for an identifier the release lacks: the rules on evidence
(search/confidence.py, search/identifier.py), and the CLI's text and JSON over the sample release."""

from __future__ import annotations

import json

import pytest

from mathindex.cli import main
from mathindex.search.confidence import NONE, STRONG, WEAK, Evidence, evidence, match_of
from mathindex.search.identifier import unknown_identifier


@pytest.mark.parametrize(("query", "notice"), [
    ("0BCD", "no Stacks tag 0BCD in this release"),
    ("tag 0bcd", "no Stacks tag 0BCD in this release"),
    ("`Nat.Prime.no_such`", "no declaration named Nat.Prime.no_such in this release"),
    ("mul_foo_bar", "no declaration named mul_foo_bar in this release"),
    ("lemma-no-such", "no label lemma-no-such in this release"),
    ("thm:main", "no label thm:main in this release"),
    ("2024", None), ("ring", None), ("a_1", None), ("lattice join meet", None), ("zxqv florbish wumpus", None),
    ("a * b = a * c → b = c", None), ("well-known", None),
])
def test_what_looks_like_an_identifier(query, notice):
    assert unknown_identifier(query) == notice


def _e(**kw) -> Evidence:
    return Evidence(**{"kind": "words", "resolved": False, "answered": 2, "agree": 2, "cosine": 0.7,
                       "coverage": 1.0, "cosine_lead": 0.1, "lead": 0.2, **kw})


def test_the_rules_on_evidence():
    assert match_of(_e()) == STRONG
    assert match_of(_e(), notice="no Stacks tag 0BCD in this release") == NONE
    assert match_of(_e(resolved=True, agree=0, cosine=0.1, coverage=0.0)) == STRONG
    assert match_of(_e(agree=0)) == WEAK
    assert match_of(_e(agree=1, lead=0.01)) == WEAK and match_of(_e(agree=1, lead=0.3)) == STRONG
    assert match_of(_e(coverage=0.2)) == NONE  # most words unknown
    assert match_of(_e(cosine=0.3)) == NONE  # embedded near nothing
    assert match_of(_e(coverage=0.6, cosine=0.45, agree=1)) == NONE and match_of(_e(coverage=0.6)) == STRONG
    assert match_of(_e(coverage=None)) == NONE  # prose without a word token (emoji, control characters)
    assert match_of(_e(kind="lean", coverage=None)) == STRONG  # `_ * _ = _ * _` has no word token either
    assert match_of(_e(answered=0, agree=0, cosine=None, coverage=None)) == NONE
    assert match_of(_e(cosine=None)) == STRONG  # no embedding channel: judged on the rest


def test_evidence_counts_agreeing_channels_and_the_leads():
    results = {"lexical": [("a", 9.0), ("b", 3.0)], "embedding": [("a", 0.8), ("c", 0.7), ("b", 0.5)],
               "informal": [("a", 0.9)]}
    e = evidence("words", results, [], [({"lexical": 1, "embedding": 1, "informal": 1}, 0.04), ({"lexical": 2}, 0.01)], 0.5)
    assert (e.answered, e.agree, e.cosine, e.coverage) == (2, 2, 0.8, 0.5)  # informal is no independent evidence
    assert e.lead == pytest.approx(0.75) and e.cosine_lead == pytest.approx(0.3)
    assert evidence("words", {}, [], [], None).agree == 0


def test_the_cli_prints_the_notice_first_and_the_match(sample_release_root, capsys):
    assert main(["search", str(sample_release_root), "0BCD", "--k", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "no Stacks tag 0BCD in this release; the nearest hits:" and lines[1].startswith("match: none")
    assert main(["search", str(sample_release_root), "Nat.Prime.two_le", "--k", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("match: strong")
    assert main(["search", str(sample_release_root), "zxqv florbish wumpus", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["match"] == "none" and body["notice"] is None and body["hits"]
