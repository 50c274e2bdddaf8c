"""Fusion, identifier resolution and lexical tokens: the query-time pieces as plain functions."""

import pyarrow as pa
import pytest

from mathindex.search.fusion import best_per_name, fuse
from mathindex.search.identifier import IdentifierResolver
from mathindex.search.lexical import LexicalIndex, build_lexical_index
from mathindex.search.nodes import build_nodes, node_documents
from mathindex.search.text import tokens


def test_words_are_stemmed():
    assert tokens("groups of continuous homomorphisms") == ["group", "continu", "homomorph"]


def test_tokens_split_identifiers():
    assert tokens("Nat.Prime.two_le") == ["nat", "prime", "two", "le"]
    assert tokens("IsCyclic of the HTTPServer") == ["cyclic", "http", "server"]  # "is", "of", "the" are stopwords


def test_fusion_weights_and_score_factor():
    results = {
        "lexical": [("A", 10.0), ("B", 1.0)],  # B's factor is clipped at 0.5
        "embedding": [("B", 0.9), ("A", 0.8)],
    }
    hits = fuse(results, {"lexical": 1.0, "embedding": 0.5})
    a = 1 / 61 + 0.5 * (0.8 / 0.9) / 62
    b = 0.5 / 62 + 0.5 / 61
    assert [h.name for h in hits] == ["A", "B"]
    assert abs(hits[0].score - round(a, 8)) < 1e-9 and abs(hits[1].score - round(b, 8)) < 1e-9
    assert hits[0].channels == {"embedding": 2, "lexical": 1}


def test_fusion_score_factor_is_clipped_to_half_and_one_on_any_score():
    """The factor is min(1, max(0.5, score / top)): above the top, at the edges, negative, NaN."""
    from mathindex.search.fusion import fused_scores

    scores = [2.0, 3.0, 1.0, 0.5, 0.25, 0.0, -1.0, float("nan"), float("inf"), 1.5, 0.999]
    hits = [(f"n{i}", s) for i, s in enumerate(scores)]
    total, ranks = fused_scores({"lexical": hits}, {"lexical": 2.0})
    want = {f"n{i}": 2.0 * min(1.0, max(0.5, s / 2.0)) / (60 + i + 1) for i, s in enumerate(scores)}
    assert total == want and ranks["n7"] == {"lexical": 8}
    flat, _ = fused_scores({"lexical": [("a", 0.0), ("b", -2.0)]}, {})
    assert flat == {"a": 0.5 / 61, "b": 0.5 / 62}


def test_fusion_ties_break_by_name():
    hits = fuse({"lexical": [("b", 1.0)], "formula": [("a", 1.0)]}, {})
    assert [h.name for h in hits] == ["a", "b"]


def test_best_per_name():
    assert best_per_name([("a", 0.1), ("b", 0.5), ("a", 0.7)]) == [("a", 0.7), ("b", 0.5)]


def test_named_rows_keep_each_names_best_as_best_per_name_does():
    """The vector channel's numpy look-up gives `best_per_name` over a dict of its ids: unknown ids
    dropped, an id listed twice keeps its last name, ties by name, 0.0 kept before -0.0."""
    import random

    import numpy as np

    from mathindex.channel import NamedRows

    rng = random.Random(3)
    levels = [0.0, -0.0, 0.5, -0.5, 1e-30, 0.25, 3.0, -3.0]
    for trial in range(400):
        ids = [rng.randrange(-50, 50) for _ in range(rng.randrange(1, 40))]
        names = [rng.choice("abcdef") + str(rng.randrange(6)) for _ in ids]
        name_of = dict(zip(ids, names))
        asked = [rng.randrange(-60, 60) for _ in range(rng.randrange(0, 70))]
        scores = [rng.choice(levels) if trial % 2 else rng.gauss(0, 1) for _ in asked]
        scores = np.asarray(scores, dtype=np.float32)
        k = rng.randrange(1, 50)
        want = best_per_name([(name_of[i], s) for i, s in zip(asked, scores.tolist()) if i in name_of])[:k]
        got = NamedRows(np.asarray(ids), names).best(np.asarray(asked, dtype=np.int64), scores, k)
        assert repr(got) == repr(want), (ids, names, asked, scores.tolist(), k)
        for ordered in (ids, sorted(set(ids))):  # the lazy rows, on ids as given and ascending distinct ones
            want = best_per_name([(dict(zip(ordered, names))[i], s) for i, s in zip(asked, scores.tolist())
                                  if i in ordered])[:k]
            lazy = NamedRows(np.asarray(ordered), names[:len(ordered)], lazy=True)
            assert repr(lazy.best(np.asarray(asked, dtype=np.int64), scores, k)) == repr(want), (ordered, asked, k)
    for lazy in (False, True):
        assert NamedRows(np.asarray([7, 7]), ["first", "last"], lazy=lazy).best(np.asarray([7]), np.asarray([1.0]), 5) == [("last", 1.0)]
        assert NamedRows(np.zeros(0, dtype=np.int64), [], lazy=lazy).best(np.asarray([1]), np.asarray([1.0]), 5) == []


def test_named_rows_order_names_as_python_does():
    """Names are ranked in Arrow by their UTF-8 bytes: the order `sorted` gives str, non-ASCII too,
    whether they come as a list or an Arrow column."""
    import numpy as np
    import pyarrow as pa

    from mathindex.channel import NamedRows

    names = ["b", "ℝ.x", "Z", "a_b", "é", "a.b", "𝔽", "a", "\u00ff", "ǅ", "b", "a"]
    for given in (names, pa.chunked_array([pa.array(names[:5]), pa.array(names[5:])])):
        rows = NamedRows(np.arange(len(names)), given)
        assert rows.names == sorted(set(names))
        assert [rows.names[i] for i in rows.name] == names  # ids 0.. in order: each id's own name


def test_channel_ranks_are_fused_scores_ranks_read_on_demand():
    """`ChannelRanks` (what `rank` reads a hit's channels from) holds fused_scores' ranks: every
    name's, a name listed twice at its last rank, none for a name in no list; `setdefault` adds a
    channel outside the lists; `fused_totals` is fused_scores' totals."""
    from mathindex.search.fusion import ChannelRanks, fused_scores, fused_totals

    results = {"lexical": [("a", 3.0), ("b", 2.0), ("a", 1.0)], "embedding": [("c", 0.9), ("b", 0.8)], "formula": []}
    total, ranks = fused_scores(results, {"lexical": 1.0, "embedding": 0.5})
    lazy = ChannelRanks(results)
    assert fused_totals(results, {"lexical": 1.0, "embedding": 0.5}) == total
    assert all(lazy[n] == ranks[n] and n in lazy for n in ranks) and lazy["a"] == {"lexical": 3}
    assert "d" not in lazy and lazy["d"] == {}
    lazy.setdefault("d", {})["parent"] = 1
    lazy.setdefault("b", {})["parent"] = 2
    assert "d" in lazy and lazy["d"] == {"parent": 1} and lazy["b"] == {"lexical": 2, "embedding": 2, "parent": 2}


@pytest.mark.parametrize("lazy", [False, True])
def test_identifier_resolver(lazy):
    aliases = pa.array([[], [], ["lemma-foo", "0BQX"]], pa.list_(pa.string()))
    for given in ([[], [], ["lemma-foo", "0BQX"]], aliases):
        r = IdentifierResolver(["Nat.Prime.two_le", "Foo.two_le", "0BQX"], given, lazy=lazy)
        assert r.resolve("Nat.Prime.two_le") == ["Nat.Prime.two_le"]
        assert r.resolve("two_le") == ["Foo.two_le", "Nat.Prime.two_le"]
        assert r.resolve("tag 0bqx") == ["0BQX"]
        assert r.resolve("lemma-foo") == ["0BQX"]
        assert r.resolve("a prime is at least two") == []


def test_a_lazy_resolver_answers_as_the_tables_do():
    """Arrow scans (`lazy`) against the tables, on names with aliases, dotted suffixes, cases, a
    Kelvin sign (it lowercases to `k`) and names listed twice."""
    names = ["Nat.Prime.two_le", "Foo.two_le", "two_le", "Order.Lattice", "Lattice", "lattice_thing", "Nat.Prime",
             "X.\u212aey", "X.key", "Lattice", "0BQX", "Fundamental.FundamentalGroupoid", "a.b.c", "b.c"]
    aliases = [[], ["ftl"], [], [], ["lat"], [], [], [], [], [], ["lemma-foo", "0BQX"], [], [], ["ftl"]]
    eager, lazy = IdentifierResolver(names, aliases), IdentifierResolver(names, aliases, lazy=True)
    for q in ["two_le", "Prime.two_le", "lattice", "Lattice", "key", "KEY", "ftl", "0bqx", "tag 0BQX", "lemma-foo", "c",
              "b.c", "fundamental groupoid", "lattice thing", "prime", "nothing here", "Nat.Prime", "_root_.Nat.Prime"]:
        assert lazy.resolve(q) == eager.resolve(q), q


def _statements():
    return pa.table({
        "node_id": ["tex:c:s1", "tex:c:s2"], "statement_id": ["s1", "s2"], "kind": ["lemma", "theorem"],
        "corpus": ["c", "c"], "title": [None, "Main"], "label": ["lemma-a", None], "full_label": ["a-lemma-a", None], "tag": ["0ABC", None],
        "file": ["a.tex", "a.tex"], "line_start": pa.array([1, 9], pa.int32()), "body": ["Let $x$ be", "Every"],
    })  # fmt: skip


def _declarations():
    return pa.table({
        "full_name": ["A.b", "A.b", "C"], "kind": ["theorem"] * 3, "corpus": ["l"] * 3,
        "signature": ["theorem A.b : True", "dup", "theorem C"], "file": ["x.lean", "y.lean", "x.lean"],
        "line_start": pa.array([3, 1, 9], pa.int32()), "attributes": [["simp", "stacks 0ABC"], [], []],
    })  # fmt: skip


def test_build_nodes_names_and_aliases():
    nodes = build_nodes(_declarations(), _statements()).to_pylist()
    by_id = {n["node_id"]: n for n in nodes}
    assert len(nodes) == 4  # the duplicate A.b keeps its first occurrence
    assert by_id["lean:A.b"]["file"] == "x.lean" and by_id["lean:A.b"]["aliases"] == ["0ABC"]
    assert by_id["tex:c:s1"]["name"] == "0ABC" and by_id["tex:c:s1"]["aliases"] == ["lemma-a", "a-lemma-a", "0ABC"]
    assert by_id["tex:c:s2"]["name"] == "s2" and by_id["tex:c:s2"]["title"] == "Main"


def test_lexical_index_round_trip(tmp_path):
    texts = pa.table({"name": ["G", "G", "P"], "facet": ["a", "b", "a"],
                      "text": ["Lagrange theorem", "order of a subgroup divides", "primes are infinite"]})
    names, docs = node_documents(texts)
    assert names == ["G", "P"] and docs[0] == "Lagrange theorem\norder of a subgroup divides"
    build_lexical_index(names, docs, tmp_path / "lex")
    index = LexicalIndex(tmp_path / "lex")
    assert [n for n, _ in index.search("subgroup order", 5)] == ["G"]
    assert index.search("zzz unknown", 5) == []


def test_nickname_resolves_to_the_concept_name():
    r = IdentifierResolver(["Lattice", "Order.Lattice.sup_le", "FundamentalGroupoid", "Nat.Prime"], [[]] * 4)
    assert r.resolve("lattice") == ["Lattice"]
    assert r.resolve("fundamental groupoid") == ["FundamentalGroupoid"]
    assert r.resolve("prime") == ["Nat.Prime"]
    assert r.resolve("every prime is odd or two") == []


def test_latex_macros_meet_lean_symbols():
    assert tokens(r"a poset with binary $\sqcup$ and $a \le b$") == ["poset", "binari", "⊔", "≤", "b"]
    assert tokens(r"$\sqcup$ \le \mathbb{N}") == ["⊔", "≤", "mathbb", "n"]
    assert tokens("a ⊔ b ≤ c") == ["⊔", "b", "≤", "c"]


def test_lexical_document_drops_the_glosses_of_used_constants():
    from mathindex.informal.rules import render_rules, without_context

    rendering = render_rules("Foo.bar", "theorem", "theorem Foo.bar (n : ℕ) : n ≤ n + 1", "n ≤ n + 1",
                             "Uses nothing else. Monotone.", (("Nat.succ", "The successor of a natural number."),))
    assert "Nat.succ" in rendering
    kept = without_context(rendering)
    assert "Nat.succ" not in kept and kept.endswith("Uses nothing else. Monotone.")  # the docstring stays whole
    texts = pa.table({"name": ["Foo.bar", "Foo.bar"], "facet": ["informal", "docstring"],
                      "text": [rendering, "Uses nothing else. Monotone."]})
    names, docs = node_documents(texts)
    assert names == ["Foo.bar"] and "successor" not in docs[0] and "Monotone" in docs[0]


def test_lexical_index_files_do_not_depend_on_the_hash_seed(tmp_path):
    import hashlib
    import os
    import subprocess
    import sys

    script = ("import sys; from pathlib import Path; from mathindex.search.lexical import build_lexical_index; "
              "build_lexical_index(['a', 'b', 'c'], ['Lagrange theorem on subgroups', 'primes are infinite', "
              "'the order of a subgroup divides the order of the group ⊔ ≤'], Path(sys.argv[1]))")
    digests = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        subprocess.run([sys.executable, "-c", script, str(out)], check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        digests.append({p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())})
    assert digests[0] == digests[1]


def test_gap_confidence_is_zero_for_a_flat_list_and_near_one_for_a_clear_head():
    from mathindex.search.fusion import gap_confidence

    flat = [(f"n{i}", 4.6) for i in range(12)]  # a one-letter formula: thousands of exact matches
    clear = [("a", 4.6)] + [(f"n{i}", 0.46) for i in range(11)]
    assert gap_confidence(flat) == 0.0
    assert abs(gap_confidence(clear) - 0.9) < 1e-9
    assert gap_confidence([]) == 0.0
    assert gap_confidence([("a", 2.0), ("b", 1.0)]) == 0.5  # fewer than 10: the last one


def test_gap_weights_silence_a_flat_formula_list_in_the_fusion():
    from mathindex.search.fusion import fused_scores, gap_weights

    results = {"lexical": [("good", 3.0), ("noise", 2.9)],
               "formula": [("noise", 4.6)] + [(f"n{i}", 4.6) for i in range(12)]}
    plain = {"lexical": 1.0, "formula": 1.0}
    calibrated = {**plain, "gap:formula": 1.0}
    total, _ = fused_scores(results, plain)
    assert max(total, key=total.get) == "noise"  # the flat list's rank 1 outweighs lexical's
    scaled = gap_weights(results, calibrated)
    assert scaled["formula"] == 0.0 and scaled["lexical"] == 1.0
    total, _ = fused_scores(results, scaled)
    assert max(total, key=total.get) == "good"
    assert gap_weights(results, plain) == plain  # no gap key: unchanged


def test_prose_with_a_symbol_does_not_run_the_formula_channel():
    from mathindex.search.kinds import query_kind, runs_formula_channel
    from mathindex.search.weights import weights_for

    assert not runs_formula_channel("DFA appending one symbol = one transition step")  # prose: no formula
    assert query_kind("DFA appending one symbol = one transition step") == "formula"  # its weights stay
    for formula in ("x + y = y + x", "$a$ is odd and so is the rest", r"x \le y for all reals", "`a + b = b + a`",
                    "npow (m + n) a = npow m a * npow n a", "deriv (fun x => exp x * sin x) = g"):
        assert runs_formula_channel(formula), formula
    assert not runs_formula_channel("groups of prime order are cyclic")
    lean = weights_for("lean")
    assert lean["formula"] == 0.25 and lean["gap:formula"] == 1.0 and "gap:formula" not in weights_for("formula")


def test_the_channel_registry_names_each_channel_once_and_the_weights_name_only_those():
    from mathindex.channel import Channel
    from mathindex.search.engine import CHANNELS, SearchEngine
    from mathindex.search.fusion import GAP_PREFIX
    from mathindex.search.weights import WEIGHTS_BY_KIND

    names = [kind.name for _, kind in CHANNELS]
    assert names == ["lexical", "embedding", "formula", "formal", "informal"] and len(set(names)) == len(names)
    assert all(issubclass(kind, Channel) and hasattr(SearchEngine, attribute) for attribute, kind in CHANNELS)
    settings = {"prior", "parent", "parent_depth", "parent_others"}
    for kind, weights in WEIGHTS_BY_KIND.items():
        channels = {k.removeprefix(GAP_PREFIX) for k in weights if k not in settings}
        assert channels <= set(names), kind
