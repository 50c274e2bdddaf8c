"""The formal channel on a tiny self-written index: each Loogle query form, `?x` binding,
hypotheses in any order, notation normalisation, error messages and ranking."""

from __future__ import annotations

import json

import numpy as np

import pytest

from mathindex.formal.query import FormalQueryError, UnknownConstant
from mathindex.formal.search import FormalIndex, looks_like_loogle
from tests.formal_fixture import build
from tests.manifests import manifest_json


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("formal")
    info = build(root)
    assert info["declarations"] == 20 and info["postings"] > 0
    return FormalIndex(root)


def names(index, query, k=20):
    return [h.name for h in index.loogle(query, k).hits]


def test_constants_conjunction(index):
    assert names(index, "Real.sqrt, Real.pi") == ["Real.sqrt_pi_pos"]
    # `√` is Real.sqrt: notation resolves to the constant Loogle would name
    assert {"Real.sqrt_mul_self'", "Real.sqrt_two_lt", "Real.sqrt_pi_pos"} <= set(names(index, "Real.sqrt"))


def test_name_fragment(index):
    assert set(names(index, '"tsum_"')) == {"Demo.tsum_mul_left", "Demo.tsum_lt_tsum", "Demo.tsum_le_tsum"}
    assert names(index, '"sqrt", Real.pi') == ["Real.sqrt_pi_pos"]


def test_pattern_with_holes(index):
    got = names(index, "_ * (_ ^ _)")
    assert got == ["Demo.mul_pow_le"]


def test_metavariable_binds_the_same_subterm(index):
    assert names(index, "Real.sqrt ?a * Real.sqrt ?a") == ["Real.sqrt_mul_self'"]
    assert names(index, "?a * ?b = ?b * ?a") == ["Demo.mul_comm"]
    assert names(index, "?a * ?a = ?b * ?a") == []  # ?a cannot be both a and b


def test_conclusion_pattern_with_hypotheses_in_any_order(index):
    assert names(index, "⊢ tsum _ = _ * tsum _") == ["Demo.tsum_mul_left"]
    # `f i < g i` is the second hypothesis of Demo.tsum_lt_tsum, not the last
    assert names(index, "|- _ < _ → tsum _ < tsum _") == ["Demo.tsum_lt_tsum"]
    assert names(index, "⊢ Summable _ → _ < _ → tsum _ < tsum _") == ["Demo.tsum_lt_tsum"]
    assert names(index, "⊢ (∀ n, _ ≤ _) → tsum _ ≤ tsum _") == ["Demo.tsum_le_tsum"]


def test_notation_is_normalised_alike(index):
    # x⁻¹ and x ^ (-1), in queries and in statements
    assert set(names(index, "⊢ ?a⁻¹ * ?a = 1")) == {"Demo.inv_mul", "Demo.zpow_neg_one_mul"}
    assert set(names(index, "⊢ ?a ^ (-1 : ℤ) * ?a = 1")) == {"Demo.inv_mul", "Demo.zpow_neg_one_mul"}
    # ∑ x ∈ s, f x and Finset.sum s f
    assert set(names(index, "Finset.sum ?s ?f = Finset.sum ?s ?g")) == {"Demo.sum_eq_finset_sum"}
    assert set(names(index, "∑ x ∈ ?s, ?f x = ∑ x ∈ ?s, ?g x")) == {"Demo.sum_eq_finset_sum"}
    assert "Demo.sum_add" in names(index, "Finset.sum ?s ?f + Finset.sum ?s ?g")
    # a to_additive twin is searched in its additive form
    assert names(index, "⊢ Finset.sum _ (fun _ => 0) = 0") == ["Demo.sum_zero"]


def test_ranking_exact_conclusion_first(index):
    hits = index.loogle("Real.sqrt _ * Real.sqrt _", 10).hits
    assert hits[0].name == "Real.sqrt_mul_self'"
    hits = index.loogle("_ < _", 10).hits
    exact = [h.exact for h in hits]
    assert exact == sorted(exact, reverse=True) and exact[0]


def test_count_reports_all_matches(index):
    res = index.loogle("Real.sqrt", 1)
    assert res.count >= 4 and len(res.hits) == 1 and res.exact_count


def test_unknown_constant_suggests_close_names(index):
    with pytest.raises(UnknownConstant) as exc:
        index.loogle("Real.sqr", 10)
    assert str(exc.value) == "unknown constant Real.sqr; did you mean Real.sqrt?"
    with pytest.raises(UnknownConstant):
        index.loogle("Real.sqr ?a * _", 10)


@pytest.mark.parametrize("query, position", [
    ("_ * (_ ^ _", 5), ("Real.sqrt, _ * ", 14), ('"differ', 1), ("Real.sqrt,, Real.pi", 11), ("_ * (_ ^ _))", 12),
])
def test_malformed_pattern_gives_the_position(index, query, position):
    with pytest.raises(FormalQueryError) as exc:
        index.loogle(query, 10)
    assert exc.value.position + 1 == position
    assert str(exc.value).endswith(f"at position {position}")


def test_empty_answer_is_explained(index):
    res = index.loogle("Real.pi, _ * (_ ^ _)", 10)
    assert res.count == 0 and any("alone" in n for n in res.notes)


def test_soft_mode_ranks_lean_pieces(index):
    got = [n for n, _ in index.soft("the lemma `√x * √x = x` for `0 ≤ x`", 5)]
    assert got[0] == "Real.sqrt_mul_self'"
    got = [n for n, _ in index.soft("`∑' x, c * g x = c * ∑' x, g x`", 5)]
    assert got[0] == "Demo.tsum_mul_left"


def test_loogle_syntax_detection():
    for q in ("Real.sqrt, Real.pi", '"differ"', "_ * (_ ^ _)", "⊢ tsum _ = _", "?a + ?b", "Real.sqrt"):
        assert looks_like_loogle(q), q
    for q in ("square root of pi", "$\\sqrt{\\pi}$", "an `InfHom` `j`", "sqrt"):
        assert not looks_like_loogle(q), q


def test_cli_formal_output_and_bad_input(tmp_path, capsys):
    from mathindex.cli import main

    build(tmp_path)
    from mathindex.store.integrity import file_hashes, file_sizes

    # the CLI opens a release whose files match its manifest
    (tmp_path / "manifest.json").write_text(json.dumps(manifest_json(files=file_hashes(tmp_path), sizes=file_sizes(tmp_path))))
    assert main(["search", str(tmp_path), "--formal", "Real.sqrt, Real.pi"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Found 1 declaration matching Real.sqrt, Real.pi") and "Real.sqrt_pi_pos" in out
    assert main(["search", str(tmp_path), "--formal", "Real.sqr"]) == 2
    assert capsys.readouterr().err.strip() == "mathindex search: unknown constant Real.sqr; did you mean Real.sqrt?"
    assert main(["search", str(tmp_path), "--formal", "_ * (_ ^ _"]) == 2
    assert "position 5" in capsys.readouterr().err


def test_soft_scores_do_not_depend_on_the_hash_seed(tmp_path):
    """A soft piece's key weights are summed in key order: in a set's order (PYTHONHASHSEED) the
    float sums, and which candidates reached the bonus, differed between processes."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    build(tmp_path)
    script = ("import sys; from pathlib import Path; from mathindex.formal.search import FormalIndex\n"
              "ix = FormalIndex(Path(sys.argv[1]))\n"
              "print(repr(ix.soft('the lemma `√x * √x = x` for `0 ≤ x` and `a + b ≤ c`', 10)))\n")
    root = Path(__file__).resolve().parents[1]
    outs = {subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}).stdout
            for seed in ("1", "2", "3", "4", "5")}
    assert len(outs) == 1, outs
    index = FormalIndex(tmp_path)
    from mathindex.formal.query import pattern_term

    keys = list(index._piece_keys(pattern_term("a + b ≤ c * d", 0, index.vocab, strict=False)))
    assert keys == sorted(keys) and len(keys) > 1


def test_soft_mode_looks_for_no_suggestions(index, monkeypatch):
    """The fused channel drops a Loogle query's UnknownConstant: the close spellings (difflib over
    the vocabulary, 350 ms for one dev query on whole Mathlib) are looked for only when read."""
    from mathindex.formal.query import Vocabulary

    calls = []
    real = Vocabulary.suggest
    monkeypatch.setattr(Vocabulary, "suggest", lambda self, name, n=3: calls.append(name) or real(self, name, n))
    index.soft("Real.sqr, Real.pi", 5)
    assert calls == []
    with pytest.raises(UnknownConstant) as exc:
        index.loogle("Real.sqr, Real.pi", 10)
    assert exc.value.suggestions == ["Real.sqrt"] and calls == ["Real.sqr"]
    assert str(exc.value) == "unknown constant Real.sqr; did you mean Real.sqrt?" and calls == ["Real.sqr"]


SOFT_PIECES = ["√x * √x = x", "0 ≤ x", "a + b ≤ c", "∑' x, c * g x = c * ∑' x, g x", "a * b = b * a", "_ * (_ ^ _)",
               "f ≤ g → tsum f ≤ tsum g", "a⁻¹ * a = 1", "Real.sqrt x"]


def test_key_filter_never_drops_a_match(index):
    """`_may_match` is False only where the bonus is 0: a pattern's keys are in every statement it matches."""
    from mathindex.formal.query import pattern_term
    from mathindex.formal.search import _as_lists

    docs = np.arange(index.n, dtype=np.int32)
    matched = dropped = 0
    for piece in SOFT_PIECES:
        term = _as_lists(pattern_term(piece, 0, index.vocab, strict=False))
        may = index._may_match(docs, term)
        bonus = np.array([index._soft_bonus(int(d), term) for d in docs])
        assert not (bonus[~may] > 0).any(), piece
        matched += int((bonus > 0).sum())
        dropped += int((~may).sum())
    assert matched >= 8 and dropped > index.n


def test_soft_mode_reads_the_trees_of_possible_matches_only(index, monkeypatch):
    """A candidate lacking the piece's keys is not read (its trees are not decoded), and the scores
    stay those of checking every candidate."""
    query = "the lemma `√x * √x = x` for `0 ≤ x` and `a * b ^ n ≤ a * c`"
    read = []
    real = FormalIndex.conclusion
    monkeypatch.setattr(FormalIndex, "conclusion", lambda self, doc: read.append(doc) or real(self, doc))
    monkeypatch.setattr(FormalIndex, "_may_match", lambda self, docs, term: np.ones(docs.size, dtype=bool))
    every, read_every = index.soft(query, 20), set(read)
    monkeypatch.undo()
    monkeypatch.setattr(FormalIndex, "conclusion", lambda self, doc: read.append(doc) or real(self, doc))
    read.clear()
    assert index.soft(query, 20) == every
    assert set(read) < read_every and index.names.index("Real.sqrt_mul_self'") in read


def test_a_match_at_the_conclusion_does_not_decode_the_hypotheses(tmp_path, monkeypatch):
    """The bonus of a piece matching the conclusion at its root needs no hypotheses: they are
    decoded only when the conclusion does not decide (here for the piece that matches elsewhere)."""
    build(tmp_path)
    fresh = FormalIndex(tmp_path)
    decoded = []
    real = FormalIndex.hypotheses
    monkeypatch.setattr(FormalIndex, "hypotheses", lambda self, doc: decoded.append(self.names[doc]) or real(self, doc))
    got = dict(fresh.soft("`√x * √x = x`", 5))
    assert got and "Real.sqrt_mul_self'" in got and "Real.sqrt_mul_self'" not in decoded
    assert fresh.telescope(fresh.names.index("Real.sqrt_mul_self'"))[0]  # its hypothesis (0 ≤ x) is there


def test_a_structure_scores_as_its_best_field(tmp_path):
    """`_lift_structures` gives what np.maximum.at over the fields gave, and the same array when no
    field scored."""
    build(tmp_path)
    ix = FormalIndex(tmp_path)
    fields, parents = np.array([3, 1, 7, 8, 12, 2], np.int32), np.array([5, 5, 0, 19, 5, 0], np.int32)
    ix._set_fields(fields, parents)
    rng = np.random.default_rng(0)
    for trial in range(50):
        score = (rng.random(ix.n) * (rng.random(ix.n) < 0.4)).astype(np.float32)
        if trial % 5 == 0:
            score[fields] = 0
        want = np.zeros_like(score)
        np.maximum.at(want, parents, score[fields])
        want = np.maximum(score, want)
        got = ix._lift_structures(score)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        if not score[fields].any():
            assert got is score
    assert ix._members.sum() == 6 and ix._members[[1, 2, 3, 7, 8, 12]].all()
