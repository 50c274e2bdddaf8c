"""train-embedder: leak-free pair mining, seeded and resumable training, the card, bad input.

Training uses the bundled MiniLM cut to one layer and a few steps of a few pairs (seconds).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from mathindex.cli import main
from mathindex.embed.models import model_revision
from mathindex.embed.pairs import PAIRS, PairError, drop_leaks, engine_negatives, mine_pairs, read_release_tables
from mathindex.embed.train import Recipe, schedule, train
from mathindex.evaluation.suites import project_suite_queries
from mathindex.flows.recipe import engine_hard_negatives
from mathindex.lean.moduledocs import masked, module_doc_sentences, named
from mathindex.search.negatives import DEPTH, near_misses
from mathindex.search.sameas import same_as_table
from mathindex.sources import PACKAGE_ROOT
from mathindex.store.releases import published_release
from mathindex.tables import extraction_tables, write_extraction_tables
from tests.models import cut_minilm
from tests.serving import copy_root

SAMPLE = PACKAGE_ROOT / "data" / "sample"
TINY = Recipe(steps=4, batch_size=4, max_seq_length=32, checkpoint_every=2, threads=1)


@pytest.fixture(scope="module")
def tables_dir(tmp_path_factory) -> Path:
    """The sample corpus's extraction tables, written as a release would (no embeddings)."""
    out = tmp_path_factory.mktemp("tables") / "sample"
    tables = extraction_tables([SAMPLE / "lean"], [SAMPLE / "latex", SAMPLE / "xml"], None)
    write_extraction_tables(tables, out)
    return out


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    """A real model, made offline: the bundled MiniLM cut to its first layer."""
    return cut_minilm(tmp_path_factory.mktemp("models") / "minilm-1layer", 1)


@pytest.fixture(scope="module")
def mined(tables_dir):
    queries, targets, files = project_suite_queries(tables_dir)
    pairs, info = mine_pairs(read_release_tables(tables_dir), queries, targets)
    return pairs, info, queries, targets, files


def test_no_training_text_contains_any_suite_query(mined):
    pairs, info, queries, targets, files = mined
    assert PACKAGE_ROOT / "data" / "sample" / "queries.json" in files
    assert info["dropped"]["query_overlap"] > 0  # the filter had something to remove
    texts = [t.lower() for c in ("anchor", "positive", "negative") for t in pairs.column(c).to_pylist() if t]
    needles = {" ".join(q.lower().split()) for q in queries}
    blob = "\n".join(" ".join(t.split()) for t in texts)
    assert not [q for q in needles if q in blob]
    assert not {f"lean:{t}" for t in targets} & set(pairs.column("node_id").to_pylist())


def test_pairs_by_kind_and_negatives_from_the_same_module(mined, tables_dir):
    pairs, info, *_ = mined
    assert set(info["pairs"]) >= {"docstring", "informal", "label"} and all(v > 0 for v in info["pairs"].values())
    df = pl.from_arrow(pairs).filter(pl.col("kind") == "docstring")
    texts = pl.read_parquet(tables_dir / "embedding_texts.parquet").filter(pl.col("facet") == "name_signature")
    decls = pl.read_parquet(tables_dir / "declarations.parquet", columns=["full_name", "module"]).unique("full_name")
    joined = texts.join(decls, left_on="name", right_on="full_name")
    module_of = dict(zip(joined["text"], joined["module"]))
    with_neg = df.filter(pl.col("negative").is_not_null())
    assert with_neg.height
    for row in with_neg.iter_rows(named=True):
        assert row["negative"] != row["positive"]
        assert module_of[row["negative"]] == module_of[row["positive"]]


def test_a_docstring_holding_a_query_is_dropped():
    pairs = pl.DataFrame({"kind": ["docstring", "docstring"], "node_id": ["lean:A", "lean:B"],
                          "anchor": ["The  Sum of TOTIENT over divisors is n", "something else entirely"],
                          "positive": ["theorem A", "theorem B"], "negative": [None, "theorem A"]})
    kept, dropped = drop_leaks(pairs, ["sum of totient over divisors"], {"C"})
    assert kept["node_id"].to_list() == ["lean:B"] and dropped == {"held_out_targets": 0, "query_overlap": 1}
    kept, dropped = drop_leaks(pairs, [], {"B"})
    assert kept["node_id"].to_list() == ["lean:A"] and dropped["held_out_targets"] == 1


def test_schedule_is_seeded_and_follows_the_mix(mined):
    pairs = mined[0]
    a, b = schedule(pairs, TINY), schedule(pairs, TINY)
    assert a.shape == (4, 4) and (a == b).all()
    assert not (schedule(pairs, replace(TINY, seed=1)) == a).all()
    kinds = np.asarray(pairs.column("kind").to_pylist())[schedule(pairs, replace(TINY, steps=50)).ravel()]
    present = set(pairs.column("kind").to_pylist()) & set(TINY.mix)  # kinds the corpus lacks are left out
    expected = TINY.mix["docstring"] / sum(TINY.mix[k] for k in present)
    assert abs((kinds == "docstring").mean() - expected) < 0.05


def _weights(model_dir: Path) -> dict:
    from safetensors.numpy import load_file

    return load_file(str(model_dir / "model.safetensors"))


def test_training_is_seeded_and_resumes_from_a_checkpoint(mined, tiny_model, tmp_path):
    pairs = mined[0]
    rev = model_revision(tiny_model)
    straight = train(pairs, tiny_model, rev, tmp_path / "a", TINY)

    def stop_after_three(step, total, loss):
        if step == 3:
            raise KeyboardInterrupt  # an interrupted run: the checkpoint at step 2 stays

    with pytest.raises(KeyboardInterrupt):
        train(pairs, tiny_model, rev, tmp_path / "b", TINY, progress=stop_after_three)
    resumed = train(pairs, tiny_model, rev, tmp_path / "b", TINY)
    assert resumed.resumed_from == 2 and straight.resumed_from == 0
    wa, wb = _weights(straight.model_dir), _weights(resumed.model_dir)
    assert wa.keys() == wb.keys()
    assert all(np.array_equal(wa[k], wb[k]) for k in wa)
    base = _weights(tiny_model)
    assert any(not np.array_equal(wa[k], base[k]) for k in wa if k in base)  # it did train


def test_train_embedder_installs_the_model_with_its_card(tables_dir, tiny_model, tmp_path, prefect_harness, capsys):
    out = tmp_path / "models"
    code = main(["train-embedder", str(tables_dir), "--out", str(out), "--base", str(tiny_model), "--name", "tiny",
                 "--steps", "2", "--batch-size", "4", "--max-seq-length", "32", "--pool", "20"])
    assert code == 0, capsys.readouterr().err
    (model,) = [p for p in out.iterdir() if not p.name.startswith(".")]
    assert model.name == f"tiny@{model_revision(model)[:16]}"
    card = json.loads((model / "mathindex-training.json").read_text())
    assert card["base"] == {"name": "minilm-1layer", "revision": model_revision(tiny_model)}
    assert len(card["data"]["sha256"]) == 64 and card["data"]["pairs"]["docstring"] > 0
    assert card["recipe"]["steps"] == 2 and card["training"]["peak_rss_mb"] > 0
    bench = card["benchmark"]
    assert set(bench["before"]["suites"]) == set(bench["after"]["suites"]) == {"sample"}
    readme = (model / "README.md").read_text()
    assert "minilm-1layer" in readme and card["data"]["sha256"] in readme and "| natural |" in readme
    from mathindex.embed import SentenceTransformerEmbedder

    assert SentenceTransformerEmbedder(str(model)).encode(["a lattice"]).shape == (1, 384)


def _refused(argv: list[str], out: Path, capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err
    assert not out.exists()
    return err


def test_bad_inputs_exit_2_and_write_nothing(tables_dir, tmp_path, capsys, prefect_harness):
    out = tmp_path / "models"
    err = _refused(["train-embedder", str(SAMPLE / "queries.json"), "--out", str(out)], out, capsys)
    assert "suite" in err
    empty = tmp_path / "empty-release"
    empty.mkdir()
    assert "lacks" in _refused(["train-embedder", str(empty), "--out", str(out)], out, capsys)
    no_weights = tmp_path / "no-weights"
    no_weights.mkdir()
    (no_weights / "config.json").write_text("{}")
    assert "weights" in _refused(["train-embedder", str(tables_dir), "--out", str(out), "--base", str(no_weights)], out, capsys)
    hollow = tmp_path / "hollow-release"
    shutil.copytree(tables_dir, hollow)
    for name in ("embedding_texts", "latex_statements", "declarations"):
        t = pq.read_table(hollow / f"{name}.parquet")
        pq.write_table(t.slice(0, 0), hollow / f"{name}.parquet")
    assert "no training pairs" in _refused(["train-embedder", str(hollow), "--out", str(out)], out, capsys)


def test_mining_an_empty_release_is_a_pair_error(tables_dir, tmp_path):
    tables = {k: v.head(0) for k, v in read_release_tables(tables_dir).items()}
    with pytest.raises(PairError):
        mine_pairs(tables, [], set())


def test_an_extra_suite_is_kept_out_of_training(tables_dir, tmp_path):
    tables = read_release_tables(tables_dir)
    docs = tables["declarations"].filter(pl.col("docstring").str.len_chars() > 40)
    name, doc = docs["full_name"][0], docs["docstring"][0]
    phrase = " ".join(doc.split()[:5])
    suite = tmp_path / "extra.json"
    suite.write_text(json.dumps({"suite": "extra", "queries": [{"id": "x1", "query": phrase, "gold": ["Some.other"]}]}))
    queries, targets, files = project_suite_queries(tables_dir, [suite])
    assert suite.resolve() in files and phrase in queries and "Some.other" in targets
    pairs, _ = mine_pairs(tables, queries, targets)
    assert not any(phrase.lower() in (t or "").lower() for t in pairs.column("anchor").to_pylist())
    assert f"lean:{name}" not in set(pairs.filter(pc.equal(pairs["kind"], "docstring"))["node_id"].to_pylist())


# --- the kinds read beside the tables (module_doc, stacks) and the engine's negatives ---


@pytest.fixture(scope="module")
def with_extras(tables_dir) -> dict[str, pl.DataFrame]:
    """The sample's miner tables with the module doc sentences (read from data/sample/lean) and the
    same_as edges (as the search index stage makes them), as the release flow gives them."""
    tables = read_release_tables(tables_dir)
    decls = pq.read_table(tables_dir / "declarations.parquet")
    statements = pq.read_table(tables_dir / "latex_statements.parquet")
    (corpus,) = set(decls.column("corpus").to_pylist())
    docs = module_doc_sentences({corpus: SAMPLE / "lean"}, decls.select(["decl_id", "corpus", "full_name", "file"]))
    return {**tables, "module_docs": pl.from_arrow(docs), "same_as": pl.from_arrow(same_as_table(decls, statements))}


def test_module_doc_sentences_name_their_module_s_declarations_masked(with_extras):
    docs = with_extras["module_docs"]
    gauss = docs.filter(pl.col("full_name") == "MiniMath.Nat.sum_totient")["text"].to_list()
    assert any(t.startswith("Gauss's identity") for t in gauss), gauss  # the bullet's `name:` head dropped
    assert not any("MiniMath.Nat.sum_totient" in t for t in docs["text"].to_list())
    assert "`n`" not in set(docs["full_name"].to_list())  # variables of the prose name nothing
    # masked: the sentence teaches what it says, not the name the statement spells
    assert masked("`Foo.bar x`: the bar of `x`, see `Foo.baz`.", "Foo.bar") == "the bar of `x`, see `Foo.baz`."
    assert masked("We prove `Foo.bar` here.", "Foo.bar") == "We prove this here."
    assert named("`Foo.bar`, `Foo.baz`: two lemmas about `Nat.succ`.") == ["Foo.bar", "Foo.baz"]  # a head names its own


def test_stacks_pairs_join_a_stacks_statement_to_the_declaration_citing_it(with_extras):
    pairs, info = mine_pairs(with_extras, [], set(), kinds=["stacks", "module_doc"])
    assert info["pairs"]["stacks"] > 0 and info["pairs"]["module_doc"] > 0
    texts = with_extras["embedding_texts"]
    bodies = set(texts.filter(pl.col("facet") == "latex_body")["text"].to_list())
    stacks = pl.from_arrow(pairs).filter(pl.col("kind") == "stacks")
    edges = with_extras["same_as"]
    assert set(stacks["node_id"].to_list()) <= set(edges["node_id"].to_list())
    assert all(n.startswith("lean:") for n in stacks["node_id"].to_list())
    assert {" ".join(b.split()) for b in bodies} >= set(stacks["anchor"].to_list())  # LaTeX -> Lean


def _phrase(text: str) -> str:
    words = text.split()
    return " ".join(words[len(words) // 3: len(words) // 3 + 4])


@pytest.mark.parametrize("kind", ["module_doc", "stacks"])
def test_the_leak_guard_covers_each_new_kind(with_extras, kind):
    """A suite query inside a new kind's anchor or positive, or a suite target as its node or its
    anchor's node, drops the pair: without the guard the pair is there (the test then fails)."""
    unguarded = pl.from_arrow(mine_pairs(with_extras, [], set(), kinds=[kind])[0])
    row = unguarded.row(0, named=True)
    for column in ("anchor", "positive"):
        phrase = _phrase(row[column])
        assert phrase.lower() in " ".join(row[column].split()).lower()
        kept = pl.from_arrow(mine_pairs(with_extras, [phrase], set(), kinds=[kind])[0])
        assert not [t for t in kept[column].to_list() if phrase.lower() in t.lower()], (column, phrase)
    name = row["node_id"].removeprefix("lean:")
    kept = pl.from_arrow(mine_pairs(with_extras, [], {name}, kinds=[kind])[0])
    assert row["node_id"] not in set(kept["node_id"].to_list())
    assert name not in " ".join(kept["negative"].drop_nulls().to_list())  # nor as another pair's negative
    if kind == "stacks":  # the target written as the Stacks tag, as suites write it
        edge = with_extras["same_as"].filter(pl.col("node_id") == row["node_id"]).row(0, named=True)
        tag = with_extras["embedding_texts"].filter(pl.col("node_id") == edge["target_node_id"])["name"][0]
        kept = pl.from_arrow(mine_pairs(with_extras, [], {tag}, kinds=[kind])[0])
        assert row["anchor"] not in set(kept["anchor"].to_list())


def _texts(rows: list[tuple[str, str, str, str]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["node_id", "name", "facet", "text"], orient="row")


def test_engine_negatives_take_the_best_near_miss_the_guard_keeps():
    pairs = pa.table({"kind": ["docstring", "docstring", "label"], "node_id": ["lean:A", "lean:B", "tex:s:1"],
                      "anchor": ["anchor of A, long enough", "anchor of B, long enough", "anchor of 1, long enough"],
                      "positive": ["theorem A (x : X) : P x -- a", "theorem B : Q -- b", "body one"],
                      "negative": ["theorem M : M -- m", "theorem M : M -- m", "body two"]}).cast(PAIRS)
    texts = _texts([("lean:A", "A", "name_signature", "theorem A (x : X) : P x -- a"),
                    ("lean:B", "B", "name_signature", "theorem B : Q -- b"),
                    ("lean:A'", "A'", "name_signature", "theorem A' (x : X) : P x -- a"),  # A under another name
                    ("lean:T", "T", "name_signature", "theorem T : R -- t"),  # a held-out target
                    ("lean:Q", "Q", "name_signature", "theorem Q : the secret query -- q"),
                    ("lean:C", "C", "name_signature", "theorem C : S -- c"),
                    ("tex:s:2", "0ABC", "latex_body", "body three")])
    hits = {"anchor of A, long enough": ["A", "0ABC", "A'", "T", "Q", "C", "B"],
            "anchor of B, long enough": ["B"],
            "anchor of 1, long enough": ["A", "0ABC"]}
    out, counts = engine_negatives(pairs, [0, 1, 2], hits, texts, ["secret query"], {"T"})
    assert out.column("negative").to_pylist() == ["theorem C : S -- c", "theorem M : M -- m", "body three"]
    assert counts == {"replaced": 2, "kept_module": 1}
    out, _ = engine_negatives(pairs, [2], hits, texts, [], set())  # only the rows training draws
    assert out.column("negative").to_pylist()[:2] == pairs.column("negative").to_pylist()[:2]


def test_engine_negatives_on_a_cold_root_are_the_module_s():
    pairs = pa.table({"kind": ["docstring"], "node_id": ["lean:A"], "anchor": ["x" * 20], "positive": ["p"],
                      "negative": ["n"]}).cast(PAIRS)
    out, how = engine_hard_negatives(pairs, TINY, None, pa.table({}), [], set(), Path("."))
    assert out is pairs and how["source"] == "module" and "no published release" in how["why"]


def test_near_misses_are_searched_in_batches_once_then_cached(sample_release_root, tmp_path):
    root = copy_root(sample_release_root, tmp_path / "root")
    release = published_release(root)
    anchors = ["the sum of the divisors of a number", "a group is a monoid with inverses", "a lattice"]
    hits, stats = near_misses(release, anchors, tmp_path / "cache")
    assert stats["searched"] == 3 and stats["cached"] == 0
    assert all(0 < len(h) <= DEPTH for h in hits.values())
    again, stats = near_misses(release, anchors + anchors[:1], tmp_path / "cache")
    assert again == hits and (stats["searched"], stats["cached"], stats["anchors"]) == (0, 3, 3)
