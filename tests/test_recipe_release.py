"""The embedder recipe of a sources file: parsed and checked (one-line errors), its keys, the model
found on a root, the miner fed from a run's own tables, and the release flow that trains the model
once, reuses it, and trains again (a re-embedding, in the notes) when the recipe changes.

Training uses the bundled MiniLM cut to one layer for 2-3 steps of 4 pairs (seconds)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import get_args

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from mathindex.cli import main
from mathindex.embed.models import CARD_JSON, TRAINING_DIR, model_revision
from mathindex.embed.pairs import KINDS, frames, mine_pairs, read_release_tables, run_tables
from mathindex.embed.recipe import RECIPE_KEYS, RecipeKeys, find_model, recipe_key, tables_key, trainer_recipe
from mathindex.embed.train import DEFAULT_MIX, ENGINE, pairs_sha256
from mathindex.tasks.train import train_model
from mathindex.errors import SourceError
from mathindex.evaluation.notes import input_changes, recipe_section
from mathindex.evaluation.suites import project_suite_queries
from mathindex.flows import recipe as flows_recipe
from mathindex.flows.recipe import release_stages, resolve_recipe
from mathindex.flows.release import STAGES
from mathindex.schemas.manifest import EmbedderRecipeSpec, Manifest, PairKind
from mathindex.sources import PACKAGE_ROOT, load_embedder_recipe, pin_source, recipe_sources
from mathindex.store.layout import ReleaseLayout
from mathindex.store.releases import publish
from mathindex.tables import extraction_tables, write_extraction_tables
from tests.manifests import manifest_json
from tests.models import cut_minilm

FIXTURE = Path(__file__).parent / "fixtures" / "recipe" / "sources.yaml"
SAMPLE = PACKAGE_ROOT / "data" / "sample"


def _sources(tmp_path: Path, embedder: dict | None, name: str = "sources.yaml") -> Path:
    """The fixture's sources file in `tmp_path`, its paths absolute, its `embedder:` section replaced."""
    raw = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    for entry in raw["sources"] + raw["suites"]:
        entry["path"] = str((FIXTURE.parent / entry["path"]).resolve())
    if embedder is None:
        raw.pop("embedder")
    else:
        raw["embedder"] = embedder
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_the_fixture_recipe_parses_and_the_sample_names_none():
    spec = load_embedder_recipe(FIXTURE)
    assert (spec.name, spec.base, spec.steps, spec.batch_size, spec.max_seq_length) == ("tiny-recipe", "default", 2, 4, 32)
    assert spec.pairs == {"docstring": 0.5, "informal": 0.3, "label": 0.2} and spec.pool.size == 5
    assert load_embedder_recipe(PACKAGE_ROOT / "data" / "sources.yaml") is None
    assert resolve_recipe(None, [], [], None) is None  # the sample release follows no recipe
    assert resolve_recipe(str(FIXTURE), [], [], "default") is None  # --model names the model outright
    assert resolve_recipe(None, [str(SAMPLE / "lean")], [], None) is None
    assert release_stages(STAGES, None) == STAGES
    stages = release_stages(STAGES, spec)
    assert stages[stages.index("embedder") + 1] == "embed" and len(stages) == len(STAGES) + 1


@pytest.mark.parametrize(
    "embedder, says",
    [
        ({"steps": 0}, "embedder.steps: Input should be greater than or equal to 1 (given 0)"),
        ({"batch_size": "many"}, "embedder.batch_size: Input should be a valid integer"),
        ({"lr": -1}, "embedder.lr: Input should be greater than 0 (given -1)"),
        ({"pairs": {"docs": 1}}, "embedder.pairs.docs: Input should be 'docstring', 'description', 'informal'"),
        ({"pairs": {"docstring": 0}}, "each pair kind's share must be in (0, 1]; not docstring: 0"),
        ({"pairs": {}}, "embedder.pairs: Dictionary should have at least 1 item"),
        ({"max_seq_length": 64, "train_max_seq_length": 128}, "train_max_seq_length 128 exceeds max_seq_length 64"),
        ({"epochs": 3}, "embedder.epochs: Extra inputs are not permitted"),
        ({"name": "a/b"}, "embedder.name: String should match pattern"),
        ({"pool": {"size": -1}}, "embedder.pool.size: Input should be greater than or equal to 0"),
        ({"hard_negatives": "nearby"}, "hard_negatives must be true, false or engine (given 'nearby')"),
        ({"base": "no-such-model"}, "embedder base 'no-such-model': not a model directory"),
        ({"exclude_suites": ["missing.json"]}, "embedder exclude_suites: suite file not found"),
        ({"base": "/etc"}, "embedder base: path /etc, inside the system directory /etc; refused"),
        ({"corpora": [{"name": "extra", "kind": "latex", "path": "no-such-dir"}]}, "source 'extra': directory not found"),
        ({"corpora": [{"name": "sample-lean", "kind": "lean", "path": str(SAMPLE / "lean")}]},
         "corpus names must be unique over sources and embedder.corpora; given twice: sample-lean"),
        ({"corpora": [{"name": "x", "kind": "pdf", "path": "."}]}, "embedder.corpora.0.kind: Input should be 'lean' or 'latex'"),
    ],
)
def test_a_bad_recipe_is_one_line_naming_the_field(tmp_path, embedder, says):
    with pytest.raises(SourceError) as err:
        load_embedder_recipe(_sources(tmp_path, embedder))
    message = str(err.value)
    assert "\n" not in message and says in message, message


def test_a_bad_recipe_or_base_exits_2_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["release", "--sources", str(_sources(tmp_path, {"steps": 0})), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "embedder.steps" in err
    hollow = tmp_path / "hollow-model"
    hollow.mkdir()
    (hollow / "config.json").write_text("{}")
    assert main(["release", "--sources", str(_sources(tmp_path, {"base": str(hollow)})), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no weights" in err
    assert not out.exists()


def test_a_recipe_names_every_kind_the_miner_mines_and_engine_negatives():
    assert set(get_args(PairKind)) == set(KINDS)
    spec = EmbedderRecipeSpec(hard_negatives="engine", pairs={"module_doc": 0.5, "stacks": 0.5})
    assert trainer_recipe(spec).hard_negatives == ENGINE
    assert recipe_key(trainer_recipe(spec), "r" * 64) != recipe_key(
        trainer_recipe(spec.model_copy(update={"hard_negatives": True})), "r" * 64)


def test_the_recipe_key_follows_what_changes_the_weights():
    spec = EmbedderRecipeSpec()
    recipe = trainer_recipe(spec)
    assert recipe.mix == DEFAULT_MIX and recipe.train_max_seq_length == 0 and recipe.steps == 500
    key = recipe_key(recipe, "r" * 64)
    assert recipe_key(trainer_recipe(spec.model_copy(update={"pool": {"size": 9}})), "r" * 64) == key  # the card's benchmark only
    for changed in ({"steps": 501}, {"seed": 1}, {"train_max_seq_length": 64}, {"pairs": {"docstring": 1.0}}, {"name": "other"}):
        assert recipe_key(trainer_recipe(spec.model_copy(update=changed)), "r" * 64) != key, changed
    assert recipe_key(recipe, "s" * 64) != key  # another base model


def _entry(root: Path, name: str, keys: RecipeKeys | None, tables: str | None = None) -> Path:
    path = root / "models" / f"{name}@{'0' * 16}"
    path.mkdir(parents=True)
    if keys is not None:
        made = keys.card() | ({"tables": tables} if tables else {})
        (path / CARD_JSON).write_text(json.dumps({RECIPE_KEYS: made}))
    return path


def test_find_model_prefers_the_published_model_then_the_same_tables(tmp_path):
    keys = RecipeKeys("r" * 64, "h" * 64, "t" * 64, ("lean:a",))
    root = tmp_path / "root"
    assert find_model(root, keys) is None
    _entry(root, "foreign", None)  # a model made elsewhere: no card
    _entry(root, "other-recipe", replace(keys, recipe="x" * 64))
    _entry(root, "other-holdout", replace(keys, holdout="x" * 64))
    older = _entry(root, "older-tables", keys, tables="o" * 64)
    assert find_model(root, keys) == (older, "installed")  # made from other tables: reused, not trained again
    same = _entry(root, "same", keys)
    assert find_model(root, keys) == (same, "installed")  # made from these tables: preferred
    release = root / "releases" / "20261201T000000Z-0123abcd"
    release.mkdir(parents=True)
    (release / "manifest.json").write_text(json.dumps(manifest_json(vector_index={"model": f"models/{older.name}"})))
    publish(root, release.name)
    assert find_model(root, keys) == (older, "published")  # a nightly keeps its model when its tables change
    assert find_model(root, replace(keys, corpora=("lean:b",))) is None  # not for other corpora
    assert find_model(root, replace(keys, recipe="y" * 64)) is None
    assert find_model(root, replace(keys, holdout="x" * 64)) == (root / "models" / f"other-holdout@{'0' * 16}", "installed")


@pytest.mark.slow
def test_the_run_tables_give_the_pairs_of_the_written_release(tmp_path):
    """Mining the run's tables in memory gives the pairs `train-embedder` would mine from the
    release's written tables (the same rows in the same order)."""
    tables = extraction_tables([SAMPLE / "lean"], [SAMPLE / "latex", SAMPLE / "xml"], None)
    write_extraction_tables(tables, tmp_path / "t")
    queries, targets, _ = project_suite_queries(None, [SAMPLE / "queries.json"])
    shuffled = {k: v.take(pa.array(range(v.num_rows - 1, -1, -1), pa.int64())) for k, v in tables.items()}  # any order
    from_run, info = mine_pairs(frames(run_tables(shuffled)), queries, targets, 0, ["docstring", "informal", "label"])
    written, _ = mine_pairs(read_release_tables(tmp_path / "t"), queries, targets, 0, ["docstring", "informal", "label"])
    assert set(info["pairs"]) == {"docstring", "informal", "label"}
    assert from_run.num_rows and pairs_sha256(from_run) == pairs_sha256(written)


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory) -> Path:
    return cut_minilm(tmp_path_factory.mktemp("models") / "minilm-1layer", 1)


def _release(argv: list[str], capsys) -> tuple[Path, dict]:
    assert main(["release", *argv, "--no-gate"]) == 0
    out = capsys.readouterr().out
    release = Path(next(x for x in out.splitlines() if x.startswith("release: ")).removeprefix("release: "))
    return release, json.loads((release / "manifest.json").read_text())


def test_a_release_trains_the_recipe_once_and_again_when_it_changes(tmp_path, tiny_base, prefect_harness, capsys):
    """Empty root: the release trains the model (card, entry, manifest); the next release with the
    same recipe and tables reuses it without training; a changed recipe trains again, and the notes
    call it a re-embedding with the recipe before and after. The release's suites and the recipe's
    `exclude_suites` are kept out of training."""
    extra = tmp_path / "extra-suite.json"
    extra.write_text(json.dumps({"suite": "extra", "queries": [{"id": "x", "query": "a lattice", "gold": ["Some.node"]}]}))
    recipe = {"name": "tiny-recipe", "base": str(tiny_base), "steps": 2, "batch_size": 4, "max_seq_length": 32,
              "pairs": {"docstring": 0.5, "informal": 0.3, "label": 0.2}, "exclude_suites": [str(extra)]}
    root = tmp_path / "root"
    sources = _sources(tmp_path, recipe)
    first, m1 = _release(["--sources", str(sources), "--out", str(root)], capsys)
    r1 = m1["embedder_recipe"]
    assert r1["source"] == "trained" and r1["pairs"]["docstring"] > 0 and r1["model_tables_key"] == r1["tables_key"]
    (entry,) = [p for p in (root / "models").iterdir() if not p.name.startswith(".")]
    assert entry.name == f"tiny-recipe@{model_revision(entry)[:16]}" and m1["vector_index"]["model"] == f"models/{entry.name}"
    assert m1["embedder"]["name"] == "tiny-recipe" and "embedder" in m1["stages"]["seconds"]
    card = json.loads((entry / CARD_JSON).read_text())
    assert card[RECIPE_KEYS]["recipe"] == r1["recipe_key"] and card["recipe"]["steps"] == 2
    assert card["base"]["revision"] == model_revision(tiny_base)
    kept_out = set(card["data"]["excluded_suites"])
    assert {str(extra), str(SAMPLE / "queries.json")} <= kept_out and card["data"]["dropped"]["held_out_targets"] > 0
    assert "embedder stage of `mathindex release`" in (entry / "README.md").read_text()
    assert "trained by this release" in (first / "release-notes.md").read_text()
    runs = sorted((root / "models" / TRAINING_DIR / "runs").iterdir())

    second, m2 = _release(["--sources", str(sources), "--out", str(root)], capsys)
    r2 = m2["embedder_recipe"]
    assert (r2["source"], r2["seconds"], r2["model"]) == ("published", 0, r1["model"]) and "pairs" not in r2
    assert m2["vector_index"]["embedding"]["index_reused"] is True
    assert sorted((root / "models" / TRAINING_DIR / "runs").iterdir()) == runs  # nothing trained
    assert [p.name for p in (root / "models").iterdir() if not p.name.startswith(".")] == [entry.name]
    notes = (second / "release-notes.md").read_text()
    assert "the published release's model" in notes and "Re-embedding" not in notes and "embedder recipe:" not in notes

    # the changed recipe also names the kinds read beside the tables and takes the published
    # release's near-misses as its hard negatives
    changed = recipe | {"steps": 3, "hard_negatives": "engine",
                        "pairs": {"docstring": 0.4, "informal": 0.2, "label": 0.2, "module_doc": 0.1, "stacks": 0.1}}
    third, m3 = _release(["--sources", str(_sources(tmp_path, changed, "changed.yaml")), "--out", str(root)], capsys)
    r3 = m3["embedder_recipe"]
    assert r3["source"] == "trained" and r3["model"] != r1["model"] and r3["recipe_key"] != r1["recipe_key"]
    # the sample's 10 stacks pairs each cite a tag, or come from a declaration, that the sample suite
    # names as gold: the leak guard holds every one of them out (test_train_embedder mines them)
    assert r3["pairs"]["module_doc"] > 0 and "stacks" not in r3["pairs"]
    negatives = r3["negatives"]
    assert negatives["source"] == "engine" and negatives["release"] == second.name and negatives["replaced"] > 0
    assert any((root / "cache" / "negatives").iterdir())  # the near-misses, cached by content
    assert m3["vector_index"]["embedding"]["embedded"] > 0
    notes = (third / "release-notes.md").read_text()
    assert "**Re-embedding**: the embedder recipe changed, so every text was embedded again" in notes
    assert "| steps | 2 | 3 |" in notes and f"-> tiny-recipe@{m3['embedder']['revision'][:12]}" in notes
    assert "| style | queries | ndcg@10 before | ndcg@10 after | change |" in notes  # before and after per style


def test_training_corpora_are_resolved_and_named_in_the_keys(tmp_path):
    (tmp_path / "latex").mkdir()
    (tmp_path / "latex" / "a.tex").write_text("\\begin{theorem}$x$\\end{theorem}\n")
    spec = load_embedder_recipe(_sources(tmp_path, {"corpora": [{"name": "more", "kind": "latex", "path": "latex"}]}))
    (corpus,) = spec.corpora
    assert corpus.path == str(tmp_path / "latex")  # relative to the sources file, made absolute
    (source,) = recipe_sources(spec)
    assert source.root == tmp_path / "latex" and source.spec.name == "more"
    recipe = trainer_recipe(spec)
    assert recipe_key(recipe, "r" * 64, ["latex:more"]) != recipe_key(recipe, "r" * 64)  # other data: a new model
    tables = {"t": pa.table({"a": [1]})}
    pin = pin_source(source)
    assert tables_key(tables, [pin]) != tables_key(tables)
    assert tables_key(tables, [pin.model_copy(update={"sha256": "0" * 64})]) != tables_key(tables, [pin])


def test_a_release_mines_its_recipe_s_training_corpora_and_never_indexes_them(tmp_path, tiny_base, prefect_harness,
                                                                               capsys, monkeypatch):
    """The sample's LaTeX corpus named as a training corpus: its statements give pairs (the leak
    guard holding out the suite's queries and targets among them) and are pinned in the manifest,
    but no table, node or index of the release holds them; the next release reuses the model
    without reading the training corpus again."""
    recipe = {"name": "tiny-trained-on-more", "base": str(tiny_base), "steps": 2, "batch_size": 4, "max_seq_length": 32,
              "pairs": {"docstring": 0.5, "informal": 0.3, "label": 0.2},
              "corpora": [{"name": "train-tex", "kind": "latex", "path": str(SAMPLE / "latex")}]}
    sources = _sources(tmp_path, recipe)
    raw = yaml.safe_load(sources.read_text())
    raw["sources"] = [e for e in raw["sources"] if e["name"] != "sample-latex"]
    sources.write_text(yaml.safe_dump(raw))
    drawn = []

    def keep_pairs(pairs, *args):
        drawn.append(pairs)
        return train_model(pairs, *args)

    monkeypatch.setattr(flows_recipe, "train_model", keep_pairs)
    root = tmp_path / "root"
    first, m1 = _release(["--sources", str(sources), "--out", str(root)], capsys)
    r1 = m1["embedder_recipe"]
    (pin,) = r1["corpora"]
    assert (r1["source"], pin["name"], pin["kind"]) == ("trained", "train-tex", "latex") and pin["files"] > 0
    assert {p["name"] for p in m1["corpora"]} == {"sample-lean", "sample-wiki"}
    card = json.loads((root / r1["model"] / CARD_JSON).read_text())
    assert card["data"]["corpora"] == r1["corpora"]  # the model card says what it was trained on
    (pairs,) = drawn
    trained_on = pl.from_arrow(pairs)
    from_more = trained_on.filter(pl.col("node_id").str.starts_with("tex:train-tex:"))
    assert from_more.height > 0 and set(from_more["kind"].to_list()) == {"label"}
    queries, targets, _ = project_suite_queries(None, [SAMPLE / "queries.json"])
    tags = {n.rsplit(":", 1)[1] for n in from_more["node_id"].to_list()}
    assert tags and not tags & targets  # the suite's gold tags (MA02, MN05, ...) among the corpus are held out
    assert any(t.startswith("MA") for t in targets) and not any(
        q.lower() in " ".join(a.split()).lower() for q in queries for a in from_more["anchor"].to_list())
    for table in ("latex_statements", "embedding_texts", "nodes"):
        ids = pq.read_table(ReleaseLayout(first).table(table), columns=["node_id"]).column("node_id").to_pylist()
        assert ids and not [n for n in ids if n.startswith("tex:train-tex:")], table
    notes = (first / "release-notes.md").read_text()
    assert "Training corpora (mined for pairs, not indexed): `train-tex` (latex," in notes

    def unread(*args):
        raise AssertionError("the training corpora were read for a model the root holds")

    monkeypatch.setattr(flows_recipe, "training_tables", unread)
    _, m2 = _release(["--sources", str(sources), "--out", str(root)], capsys)
    r2 = m2["embedder_recipe"]
    assert (r2["source"], r2["model"], r2["corpora"]) == ("published", r1["model"], r1["corpora"])


def _recipe_manifest(revision: str, **entry) -> Manifest:
    recipe = {"name": "m", "source": "trained", "model": f"models/m@{revision[:16]}", "recipe": {"steps": 2},
              "recipe_key": "a" * 64, "holdout_key": "h" * 64, "tables_key": "t" * 64, "model_tables_key": "t" * 64,
              "base": "minilm@0123", "seconds": 12.0, "pairs": {"docstring": 3}} | entry
    return Manifest.model_validate(manifest_json(embedder={"name": "m", "revision": revision, "dim": 3},
                                                 vector_index={"model": f"models/m@{revision[:16]}"}, embedder_recipe=recipe))


def test_the_notes_say_how_the_model_was_got_and_why_it_was_re_embedded():
    trained = _recipe_manifest("1" * 64)
    assert trained.to_json()["embedder_recipe"]["source"] == "trained"
    assert "embedder_recipe" not in Manifest.model_validate(manifest_json()).to_json()  # no recipe: not written
    lines = "\n".join(recipe_section(trained, None))
    assert "trained by this release (12 s of training; pairs docstring 3)" in lines and "Re-embedding" not in lines
    reused = _recipe_manifest("1" * 64, source="published", seconds=0, model_tables_key="o" * 64, pairs=None)
    lines = "\n".join(recipe_section(reused, trained))
    assert "the published release's model" in lines and "trained on earlier tables" in lines and "Re-embedding" not in lines
    assert input_changes(reused, trained) == []
    held = _recipe_manifest("2" * 64, holdout_key="x" * 64)
    assert "**Re-embedding**: the suites kept out of training changed" in "\n".join(recipe_section(held, trained))
    steps = _recipe_manifest("2" * 64, recipe_key="b" * 64, recipe={"steps": 3})
    lines = "\n".join(recipe_section(steps, trained))
    assert "**Re-embedding**: the embedder recipe changed" in lines and "| steps | 2 | 3 |" in lines
    assert f"embedder recipe: `m` (recipe {'a' * 12}…, held-out suites {'h' * 12}…) -> `m` (recipe {'b' * 12}…" in \
        "\n".join(input_changes(steps, trained))
    plain = Manifest.model_validate(manifest_json())
    assert "the release now follows an embedder recipe" in "\n".join(recipe_section(trained, plain))
    assert "embedder recipe: none -> `m`" in "\n".join(input_changes(trained, plain))
