"""Premise selection (issue 12): the split, the suite, the priors' isolation from held-out proofs,
the ranker on a hand-written corpus, the API, the CLI's bad input, the release stage."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathindex.cache.layout import CacheLayout
from mathindex.cli import main
from mathindex.formal import build_formal_index
from mathindex.formal.search import FormalIndex
from mathindex.lean import extract_lean_tree
from mathindex.premises import GoalError, PremiseRanker
from mathindex.premises.priors import PREMISES_DIR, PRIORS_FILE, write_premise_index
from mathindex.premises.split import TEST, TRAIN, TUNE, file_part, split_files
from mathindex.premises.suite import build_suite
from mathindex.schemas import table_specs
from mathindex.premises.api import premises
from mathindex.store.tables import write_table

FILES = [f"Tiny/F{i}.lean" for i in range(6)]
LIBRARY = """namespace Tiny

def double (n : Nat) : Nat := n + n

theorem double_eq_two_mul (n : Nat) : double n = 2 * n := by
  unfold double
  omega

theorem double_add (m n : Nat) : double (m + n) = double m + double n := by
  simp only [double_eq_two_mul, Nat.mul_add]

end Tiny
"""
OTHER = """namespace Tiny

def triple (n : Nat) : Nat := n + n + n

theorem triple_eq_three_mul (n : Nat) : triple n = 3 * n := by
  unfold triple
  omega

theorem triple_double (n : Nat) : triple (double n) = 6 * n := by
  rw [triple_eq_three_mul, double_eq_two_mul]
  omega

end Tiny
"""
TUNED = """theorem Tiny.double_triple (n : Nat) : Tiny.double (Tiny.triple n) = 6 * n := by
  rw [Tiny.double_eq_two_mul, Tiny.triple_eq_three_mul]
  omega
"""
HELD_OUT = """theorem Tiny.double_double (n : Nat) : Tiny.double (Tiny.double n) = 4 * n := by
  rw [{lemma}, Tiny.double_eq_two_mul]
  omega
"""


def _parts() -> dict[str, str]:
    return split_files(FILES)


def write_corpus(root: Path, held_out_lemma: str = "Tiny.double_eq_two_mul", library: str = LIBRARY) -> Path:
    """Library files in `train`, one theorem in the `tune` file and one in the `test` file."""
    parts = _parts()
    train = [f for f in FILES if parts[f] == TRAIN]
    texts = {train[0]: library, train[1]: OTHER}
    texts |= {f: TUNED for f in FILES if parts[f] == TUNE} | {f: HELD_OUT.format(lemma=held_out_lemma) for f in FILES if parts[f] == TEST}
    for f in FILES:
        path = root / f
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(texts.get(f, f"theorem Tiny.filler_{FILES.index(f)} : True := trivial\n"), encoding="utf-8")
    return root


def build_release(tmp: Path, **corpus) -> tuple[Path, object]:
    """A release-like directory with the formal index and the premise index of the corpus."""
    ex = extract_lean_tree(write_corpus(tmp / "src", **corpus), "tiny")
    rel = tmp / "rel"
    rel.mkdir()
    statements, _ = build_formal_index(ex.declarations, ex.dependencies, rel / "formal")
    write_table(statements, table_specs()["formal_statements"], rel)
    write_premise_index(ex.declarations, ex.dependencies, split_files(ex.declarations.column("file").to_pylist()), rel / PREMISES_DIR)
    return rel, ex


def reextract(src: Path, rel: Path):
    """The corpus extracted again, with the release's formal index rebuilt from it."""
    ex = extract_lean_tree(src, "tiny")
    shutil.rmtree(rel / "formal", ignore_errors=True)
    statements, _ = build_formal_index(ex.declarations, ex.dependencies, rel / "formal")
    write_table(statements, table_specs()["formal_statements"], rel)
    return ex


def ranker_of(rel: Path) -> PremiseRanker:
    return PremiseRanker(rel, FormalIndex(rel), None, weights={"lexical": 1.0, "knn": 1.0, "formal": 1.0, "cooc": 1.0})


def test_split_is_seeded_deterministic_and_by_file():
    files = [f"Mathlib/A{i}/B{i % 7}.lean" for i in range(3000)]
    parts = split_files(files)
    shuffled = files[:]
    random.Random(1).shuffle(shuffled)
    assert split_files(shuffled) == parts  # a pure function of the paths, not of their order
    assert split_files(files, seed=13) != parts  # the seed matters
    assert set(parts) == set(files) and set(parts.values()) == {TEST, TUNE, TRAIN}
    share = sum(p == TEST for p in parts.values()) / len(files)
    assert 0.02 < share < 0.04  # about 3 % held out
    assert all(file_part(f) == parts[f] for f in files)  # adding or removing files moves no other file
    small = split_files(FILES)  # a tiny corpus still gets one held-out and one tune file
    assert sorted(small.values()).count(TEST) == 1 and sorted(small.values()).count(TUNE) == 1


def test_suite_holds_held_out_theorems_with_their_proof_premises(tmp_path):
    _, ex = build_release(tmp_path)
    suite = build_suite(ex.declarations, ex.dependencies)
    parts = _parts()
    assert [q["theorem"] for q in suite["queries"]] == ["Tiny.double_double"]
    q = suite["queries"][0]
    assert parts[q["file"]] == TEST
    assert q["gold"] == ["Tiny.double_eq_two_mul"]  # the proof's premise; the statement's `double` is not one
    assert q["query"] == "Tiny.double (Tiny.double n) = 4 * n" and q["context"] == "(n : Nat)"
    tune = build_suite(ex.declarations, ex.dependencies, part=TUNE)["queries"]
    assert {parts[t["file"]] for t in tune} == {TUNE} and not {t["theorem"] for t in tune} & {q["theorem"]}


def test_held_out_proofs_never_feed_the_priors(tmp_path):
    """The priors are the same whatever the held-out file's proof names; a training proof does move them."""
    base, _ = build_release(tmp_path / "a")
    changed, _ = build_release(tmp_path / "b", held_out_lemma="Tiny.double_add")
    read = lambda rel: pq.read_table(rel / PREMISES_DIR / PRIORS_FILE).to_pylist()  # noqa: E731
    before = read(base)
    assert before == read(changed)
    held = next(r for r in before if r["name"] == "Tiny.double_double")
    assert held["part"] == TEST and held["proof"] == []
    assert next(r for r in before if r["name"] == "Tiny.double_add")["usage"] == 0  # named only by the held-out proof
    trained, _ = build_release(tmp_path / "c", library=LIBRARY.replace("simp only [double_eq_two_mul, Nat.mul_add]", "omega"))
    assert read(trained) != before  # a training proof's premises are the priors
    used = {r["name"]: r["usage"] for r in before}
    assert used["Tiny.double_eq_two_mul"] == 2  # double_add and triple_double (train); the tune and test proofs do not count


def test_ranker_finds_the_gold_premise_of_a_held_out_goal(tmp_path):
    rel, _ = build_release(tmp_path)
    ranker = ranker_of(rel)
    result = premises(ranker, "Tiny.double (Tiny.double n) = 4 * n", k=3, context="(n : Nat)")
    names = [p.name for p in result.premises]
    assert "Tiny.double_eq_two_mul" in names
    assert "Tiny.double" not in names  # the goal's own vocabulary is no premise
    assert "Tiny.double" in result.constants and result.fallback is None
    top = result.premises[names.index("Tiny.double_eq_two_mul")]
    assert top.score > 0 and {"lexical", "formal"} <= set(top.signals)


def test_a_one_query_ranker_answers_as_the_servers_does(tmp_path):
    """`lazy` (the CLI's ranker: co-occurrence rows made per query, the import graph when a file is
    named, no shared names) gives the same premises, scores and signals, with and without a file."""
    weights = {"lexical": 1.0, "knn": 1.0, "formal": 1.0, "cooc": 1.0, "earlier": 1.0, "near": 1.0, "imported": 1.0}
    cases = {build_release(tmp_path / "tiny")[0]: ("Tiny.double (Tiny.double n) = 4 * n", [(None, None)]),
             scope_release(tmp_path / "scope"): ("Scope.twice (Scope.twice n) = 4 * n",
                                                 [(None, None), ("Scope/Goal.lean", 10), ("Scope.Goal", None)])}
    compared = 0
    for rel, (goal, places) in cases.items():
        eager = PremiseRanker(rel, FormalIndex(rel), None, weights=weights)
        lazy = PremiseRanker(rel, FormalIndex(rel), None, weights=weights, lazy=True)
        assert lazy.cooc is None and "imports" not in lazy.__dict__
        for file, line in places:
            want, got = eager.rank(goal, "(n : Nat)", 10, file=file, line=line), lazy.rank(goal, "(n : Nat)", 10, file=file, line=line)
            assert [(p.name, p.score, p.signals) for p in got.premises] == [(p.name, p.score, p.signals) for p in want.premises]
            assert got.premises and got.constants == want.constants
        ids = np.arange(len(eager.constant_idf), dtype=np.int64)[::-1].copy()
        assert (eager.cooc[ids] != lazy._cooc_rows(ids)).nnz == 0 and eager.cooc[ids].dtype == lazy._cooc_rows(ids).dtype
        compared += eager.cooc.nnz
    assert compared  # the Tiny library's training proofs make co-occurrence rows


def test_goal_without_known_constants_falls_back_and_says_so(tmp_path):
    rel, _ = build_release(tmp_path)
    result = ranker_of(rel).rank("zorblax qux", "", 5)
    assert result.fallback == "lexical" and result.constants == []  # no vector index here: BM25
    assert any("no known constant" in n for n in result.notes)


@pytest.mark.parametrize("goal, position", [("a + (b", 5), ("", 1), ("a = ", 3)])
def test_goal_that_does_not_parse_is_an_error_with_its_position(tmp_path, goal, position):
    rel, _ = build_release(tmp_path)
    with pytest.raises(GoalError, match=f"position {position}"):
        ranker_of(rel).rank(goal)


@pytest.fixture(scope="module")
def sample_release(sample_release_root):
    return next(p for p in (sample_release_root / "releases").iterdir() if (p / "manifest.json").is_file())


def test_release_stage_writes_weights_suite_and_figures(sample_release):
    manifest = json.loads((sample_release / "manifest.json").read_text())
    for name in ("weights.json", "suite.json", "priors.parquet", "metrics.json"):
        assert f"{PREMISES_DIR}/{name}" in manifest["files"]
    figures = manifest["premises"]["figures"]
    assert set(figures) == {"ranker", "bm25 over statements", "embedding channel alone"}
    assert "## Premise selection" in (sample_release / "release-notes.md").read_text()
    suite = json.loads((sample_release / PREMISES_DIR / "suite.json").read_text())
    parts = split_files(pq.read_table(sample_release / "declarations.parquet", columns=["file"]).column("file").to_pylist())
    assert suite["queries"] and {parts[q["file"]] for q in suite["queries"]} == {TEST}
    weights = json.loads((sample_release / PREMISES_DIR / "weights.json").read_text())
    assert weights["weights"] == manifest["premises"]["weights"]


def test_cli_premises_json_and_bad_goal(sample_release, capsys):
    assert main(["premises", str(sample_release), "--goal", "a + (b", "--context", "(a b : Nat)"]) == 2
    err = capsys.readouterr().err.strip()
    assert "position 5" in err and "\n" not in err and "Traceback" not in err
    assert main(["premises", str(sample_release), "--goal", "zorblax qux", "--json", "--k", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["fallback"] == "embedding" and out["notes"] and len(out["premises"]) == 3
    assert main(["premises", str(sample_release), "--goal", "a * b = b * a", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["fallback"] is None and out["premises"] and all("signals" in p and "score" in p for p in out["premises"])
    assert main(["premises", str(sample_release), "--goal", "a * b = b * a", "--file", "MiniMath/Nope.lean"]) == 2
    err = capsys.readouterr().err.strip()
    assert "MiniMath/Nope.lean is not a file of the release" in err and "\n" not in err
    assert main(["premises", str(sample_release), "--goal", "a * b = b * a", "--line", "3"]) == 2
    assert "--line needs --file" in capsys.readouterr().err
    assert (sample_release / PREMISES_DIR / "imports.parquet").is_file()  # the flow passed the Lean roots
    assert main(["premises", str(sample_release), "--goal", "a * b = b * a", "--json", "--file", "MiniMath.Algebra.Group"]) == 0
    assert json.loads(capsys.readouterr().out)["file"] == "MiniMath.Algebra.Group"


def counting_channels(rel: Path):
    """(a list that grows by one each time the ranker's channels are opened, the opener) for cached_premises."""
    opened = []

    def open_channels():
        opened.append(1)
        return FormalIndex(rel), None

    return opened, open_channels


def _stage_files(rel: Path) -> dict[str, bytes]:
    base = rel / PREMISES_DIR
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def test_unchanged_inputs_reuse_the_cached_stage_and_never_open_the_channels(tmp_path):
    from mathindex.premises.build import cached_premises

    rel, ex = build_release(tmp_path)
    opened, open_channels = counting_channels(rel)

    cache = tmp_path / "cache"
    first = cached_premises(rel, ex.declarations, ex.dependencies, open_channels, cache)
    files = _stage_files(rel)
    assert opened == [1] and {"priors.parquet", "suite.json", "weights.json", "metrics.json"} <= set(files)
    shutil.rmtree(rel / PREMISES_DIR)
    second = cached_premises(rel, ex.declarations, ex.dependencies, open_channels, cache)
    assert opened == [1], "a cache hit opened the ranker's channels"
    assert _stage_files(rel) == files
    assert {k: v for k, v in second.items() if k != "seconds"} == {k: v for k, v in first.items() if k != "seconds"}
    assert list(second) == list(first)  # the manifest gets its keys in the same order
    changed = ex.dependencies.slice(0, ex.dependencies.num_rows - 1)  # one edge less: another key, a fresh build
    cached_premises(rel, ex.declarations, changed, open_channels, cache)
    assert opened == [1, 1]
    cached_premises(rel, ex.declarations, ex.dependencies, open_channels, cache, seed=13)
    assert opened == [1, 1, 1]
    assert len([p for p in CacheLayout(cache).premises.iterdir() if not p.name.startswith(".")]) == 3


def test_ordered_sorts_only_the_rows_at_or_above_the_kth_score_and_keeps_the_full_sort_order():
    import numpy as np

    from mathindex.premises.ranker import FEATURES, Candidates, ordered, weight_vector

    rng = np.random.default_rng(0)
    weights = {"lexical": 0.5, "knn": 5.0, "formal": 2.0, "usage": 0.7}
    for trial in range(200):
        n = int(rng.integers(0, 120))
        # coarse values: many ties, at the cut too; some rows score 0
        features = (rng.integers(0, 4, size=(n, len(FEATURES))) / 4).astype(np.float32)
        docs = np.sort(rng.choice(10_000, size=n, replace=False))
        cand = Candidates(docs, features, [])
        scores = features @ weight_vector(weights)
        positive = np.flatnonzero(scores > 0)
        for k in (1, 10, 32, 200):
            full = positive[np.lexsort((docs[positive], -scores[positive]))][:k]  # the whole sort, as before
            got, got_scores = ordered(cand, weight_vector(weights), k)
            assert got.tolist() == full.tolist() and np.array_equal(got_scores, scores)
            assert ordered(cand, weights, k)[0].tolist() == full.tolist()


def test_a_small_training_change_carries_weights_and_figures_and_says_so(tmp_path):
    """A change to `train` files only, under the carry share, rebuilds the priors and carries the
    measured build's weights and figures, labelled; a held-out change, or one over the share,
    measures anew."""
    from mathindex.evaluation.notes import premise_section
    from mathindex.schemas.manifest import PremisesEntry
    from mathindex.premises.build import cached_premises

    rel, ex = build_release(tmp_path)
    opened, open_channels = counting_channels(rel)

    cache = tmp_path / "cache"
    first = cached_premises(rel, ex.declarations, ex.dependencies, open_channels, cache, carry_share=0.5)
    weights = (rel / PREMISES_DIR / "weights.json").read_bytes()
    parts = _parts()
    filler = next(f for f in FILES if parts[f] == TRAIN and "filler" in (tmp_path / "src" / f).read_text())
    (tmp_path / "src" / filler).write_text("theorem Tiny.filler_new : 1 = 1 := rfl\n", encoding="utf-8")
    ex2 = reextract(tmp_path / "src", rel)
    shutil.rmtree(rel / PREMISES_DIR)
    carried = cached_premises(rel, ex2.declarations, ex2.dependencies, open_channels, cache, carry_share=0.5)
    assert opened == [1], "a carried stage opened the ranker's channels"
    assert carried["figures"] == first["figures"] and carried["weights"] == first["weights"]
    c = carried["carried"]
    assert c["changed_files"] == 1 and c["carried"] == ["weights", "figures"] and 0 < c["share"] <= 0.5
    assert (rel / PREMISES_DIR / "weights.json").read_bytes() == weights
    priors = pq.read_table(rel / PREMISES_DIR / PRIORS_FILE).column("name").to_pylist()
    assert "Tiny.filler_new" in priors, "the priors are not today's"
    assert json.loads((rel / PREMISES_DIR / "metrics.json").read_text())["carried"] == c
    assert any("Carried, not measured" in line for line in premise_section(PremisesEntry.model_validate(carried)))
    assert not any("Carried" in line for line in premise_section(PremisesEntry.model_validate(first)))
    # the held-out file changes: measured anew
    held = next(f for f in FILES if parts[f] == TEST)
    (tmp_path / "src" / held).write_text(HELD_OUT.format(lemma="Tiny.double_add"), encoding="utf-8")
    ex3 = reextract(tmp_path / "src", rel)
    third = cached_premises(rel, ex3.declarations, ex3.dependencies, open_channels, cache, carry_share=0.5)
    assert opened == [1, 1] and "carried" not in third
    # over the share: measured anew
    (tmp_path / "src" / filler).write_text("theorem Tiny.filler_other : 2 = 2 := rfl\n", encoding="utf-8")
    ex4 = reextract(tmp_path / "src", rel)
    cached_premises(rel, ex4.declarations, ex4.dependencies, open_channels, cache, carry_share=0.0)
    assert opened == [1, 1, 1]


SCOPE_BASE = """namespace Scope

def twice (n : Nat) : Nat := n + n

theorem twice_eq (n : Nat) : twice n = 2 * n := by
  unfold twice
  omega

end Scope
"""
SCOPE_OTHER = """namespace Scope

theorem twice_twice_other (n : Nat) : twice (twice n) = 4 * n := by
  omega

end Scope
"""
SCOPE_GOAL = """/- a header comment -/
module
public import Scope.Base -- the only import

namespace Scope

theorem twice_helper (n : Nat) : twice (twice n) = twice n + twice n := by
  rfl

theorem twice_twice (n : Nat) : twice (twice n) = 4 * n := by
  rw [twice_helper, twice_eq]
  omega

theorem twice_later (n : Nat) : twice (twice (twice n)) = 8 * n := by
  omega

end Scope
"""


def scope_release(tmp: Path) -> Path:
    """A release-like directory of three files, `Scope/Goal.lean` importing `Scope/Base.lean` only,
    with the import graph read from the sources."""
    from mathindex.premises.imports import read_imports

    src = tmp / "src"
    for name, text in (("Base", SCOPE_BASE), ("Other", SCOPE_OTHER), ("Goal", SCOPE_GOAL)):
        (src / "Scope").mkdir(parents=True, exist_ok=True)
        (src / "Scope" / f"{name}.lean").write_text(text, encoding="utf-8")
    ex = extract_lean_tree(src, "tiny")
    rel = tmp / "rel"
    rel.mkdir()
    statements, _ = build_formal_index(ex.declarations, ex.dependencies, rel / "formal")
    write_table(statements, table_specs()["formal_statements"], rel)
    write_premise_index(ex.declarations, ex.dependencies, split_files(ex.declarations.column("file").to_pylist()),
                        rel / PREMISES_DIR, imports=read_imports([src]))
    return rel


def test_header_imports_reads_the_module_system_header_and_stops_at_the_first_command():
    from mathindex.premises.imports import header_imports, module_file

    assert header_imports(SCOPE_GOAL) == ["Scope.Base"]
    text = "/- Copyright -/\nmodule\n\npublic import A.B\nmeta import C -- c\nimport all D\npublic meta import E\n\n" \
           "/-! doc -/\ntheorem x : True := trivial\nimport F\n"
    assert header_imports(text) == ["A.B", "C", "D", "E"]
    assert header_imports("theorem x : True := trivial") == []
    assert module_file("Mathlib.Data.Nat.Basic") == "Mathlib/Data/Nat/Basic.lean"


def test_read_imports_keeps_corpus_files_only_and_reads_past_a_long_header_comment(tmp_path):
    from mathindex.premises.imports import FIRST_BYTES, read_imports

    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "B.lean").write_text("theorem b : True := trivial\n", encoding="utf-8")
    long = "/-\n" + "x" * (2 * FIRST_BYTES) + "\n-/\n"
    (tmp_path / "A" / "C.lean").write_text(long + "import Aesop\nimport A.B\n\ntheorem c : True := trivial\n", encoding="utf-8")
    table = read_imports([tmp_path])
    assert table.column("file").to_pylist() == ["A/B.lean", "A/C.lean"]
    assert table.column("imports").to_pylist() == [[], ["A/B.lean"]]  # Aesop is no corpus file


def test_read_imports_never_opens_a_fifo_or_a_link_out_of_the_corpus(tmp_path):
    import os
    import threading

    from mathindex.premises.imports import read_imports

    corpus, outside = tmp_path / "corpus", tmp_path / "outside.lean"
    (corpus / "A").mkdir(parents=True)
    (corpus / "A" / "B.lean").write_text("import A.C\n\ntheorem b : True := trivial\n", encoding="utf-8")
    os.mkfifo(corpus / "A" / "C.lean")  # opening it for reading would block until a writer comes
    outside.write_text("import A.B\n", encoding="utf-8")
    os.symlink(outside, corpus / "A" / "D.lean")
    result = {}
    reader = threading.Thread(target=lambda: result.update(table=read_imports([corpus])), daemon=True)
    reader.start()
    reader.join(20)
    assert "table" in result, "read_imports blocked on a FIFO"
    table = result["table"]
    assert table.column("file").to_pylist() == ["A/B.lean", "A/C.lean", "A/D.lean"]
    assert table.column("imports").to_pylist() == [["A/C.lean"], [], []]  # neither refused file imports anything


def test_a_goal_in_its_file_sees_only_its_imports_and_the_declarations_above_it(tmp_path):
    rel = scope_release(tmp_path)
    weights = {"lexical": 1.0, "knn": 1.0, "formal": 1.0, "earlier": 1.0, "near": 1.0, "imported": 1.0}
    ranker = PremiseRanker(rel, FormalIndex(rel), None, weights=weights)
    goal, context, exclude = "Scope.twice (Scope.twice n) = 4 * n", "(n : Nat)", frozenset(["Scope.twice_twice"])
    anywhere = [p.name for p in ranker.rank(goal, context, 10, exclude).premises]
    assert "Scope.twice_twice_other" in anywhere  # without a file, a file it does not import competes
    in_file = ranker.rank(goal, context, 10, exclude, file="Scope/Goal.lean", line=10)
    names = [p.name for p in in_file.premises]
    assert "Scope.twice_twice_other" not in names  # Scope/Other.lean is not imported
    assert "Scope.twice_later" not in names  # below the goal
    assert {"Scope.twice_helper", "Scope.twice_eq"} <= set(names)
    helper = in_file.premises[names.index("Scope.twice_helper")]
    assert helper.signals["earlier"] == 1.0 and helper.signals["near"] > 0.9
    assert in_file.premises[names.index("Scope.twice_eq")].signals["imported"] == 1.0  # imported directly
    by_module = ranker.rank(goal, context, 10, exclude, file="Scope.Goal", line=10)
    assert [p.name for p in by_module.premises] == names
    with pytest.raises(GoalError, match="not a file of the release"):
        ranker.rank(goal, context, 10, file="Scope/Missing.lean")


def test_the_import_graph_is_a_stage_file_and_part_of_its_key(tmp_path):
    from mathindex.premises.build import cached_premises
    from mathindex.premises.imports import read_imports

    rel, ex = build_release(tmp_path)
    opened, open_channels = counting_channels(rel)
    cache = tmp_path / "cache"
    imports = read_imports([tmp_path / "src"])
    cached_premises(rel, ex.declarations, ex.dependencies, open_channels, cache, imports=imports)
    assert "imports.parquet" in _stage_files(rel) and opened == [1]
    suite = json.loads((rel / PREMISES_DIR / "suite.json").read_text())
    assert all(isinstance(q["line"], int) and q["line"] > 0 for q in suite["queries"])
    cached_premises(rel, ex.declarations, ex.dependencies, open_channels, cache, imports=imports)
    assert opened == [1]  # unchanged: a hit
    other = imports.set_column(1, "imports", pa.array([[f] for f in imports.column("file").to_pylist()][::-1],
                                                      type=imports.schema.field("imports").type))
    cached_premises(rel, ex.declarations, ex.dependencies, open_channels, cache, imports=other)
    assert opened == [1, 1]  # another header: measured anew


# -- the tree model (issue 12, tenth session) ------------------------------------------------------


def test_tree_model_predicts_as_sklearn_and_reads_back_from_its_json():
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    from mathindex.premises.boosted import TreeModel, from_sklearn

    rng = np.random.default_rng(0)
    x = rng.random((2000, 4))
    x[:, 2] = np.round(3 * x[:, 2])
    y = (x[:, 0] + x[:, 1] * x[:, 2] > 1.2).astype(int)
    fitted = HistGradientBoostingClassifier(max_iter=20, max_leaf_nodes=7, early_stopping=False, random_state=0).fit(x, y)
    model = from_sklearn(fitted, ["a", "b", "c", "d"])
    again = TreeModel.from_json(json.loads(json.dumps(model.to_json())))
    z = rng.random((300, 4))
    z[:, 2] = np.round(3 * z[:, 2])
    assert np.allclose(model.predict(z), fitted.decision_function(z), atol=1e-9)
    assert np.allclose(again.predict(z), fitted.decision_function(z), atol=1e-9)


def test_the_tree_model_reorders_the_linear_rankers_best(tmp_path):
    """A model that scores the linear top candidate below every other puts it last, the others kept."""
    import numpy as np

    from mathindex.premises.ranker import MODEL_FEATURES
    from mathindex.premises.boosted import TreeModel

    rel, _ = build_release(tmp_path)
    ranker = ranker_of(rel)
    goal, context = "Tiny.double (Tiny.double n) = 4 * n", "(n : Nat)"
    linear = ranker.rank(goal, context, k=50).premises
    assert len(linear) >= 2 and linear[0].score > linear[1].score
    cut = (linear[0].score + linear[1].score) / 2
    ranker.model = TreeModel(list(MODEL_FEATURES), 0.0, np.array([[MODEL_FEATURES.index("linear"), -1, -1]]),
                             np.array([[cut, 0.0, 0.0]]), np.array([[1, 0, 0]]), np.array([[2, 0, 0]]), np.array([[0.0, 1.0, -1.0]]))
    got = [p.name for p in ranker.rank(goal, context, k=50).premises]
    assert got[-1] == linear[0].name and sorted(got[:-1]) == sorted(p.name for p in linear[1:])


def test_fit_model_learns_what_the_linear_score_misses():
    """Gold rows are those with the `simp` flag, whatever their linear score: the trees learn it."""
    import numpy as np

    from mathindex.premises.fit import MIN_MODEL_QUERIES, Run, fit_model, score
    from mathindex.premises.ranker import EXTRA, FEATURES, Candidates

    rng = np.random.default_rng(1)
    names = [f"d{i}" for i in range(40)]
    runs = []
    for _ in range(MIN_MODEL_QUERIES + 20):
        features = np.zeros((40, len(FEATURES)), np.float32)
        features[:, FEATURES.index("lexical")] = rng.random(40)
        extra = np.zeros((40, len(EXTRA)), np.float32)
        gold = rng.choice(40, 3, replace=False)
        extra[gold, EXTRA.index("simp")] = 1.0
        runs.append(Run(Candidates(np.arange(40), features, ["c"], None, extra), {names[g] for g in gold}))
    ranker = SimpleNamespace(names=names)
    model, how = fit_model(ranker, runs[:MIN_MODEL_QUERIES], {"lexical": 1.0})
    assert how["fitted"] and how["queries"] == MIN_MODEL_QUERIES
    held = runs[MIN_MODEL_QUERIES:]
    assert score(ranker, held, {"lexical": 1.0}, model=model)["recall@10"] == 100.0
    assert score(ranker, held, {"lexical": 1.0})["recall@10"] < 50.0
    few, why = fit_model(ranker, runs[:10], {"lexical": 1.0})
    assert few is None and not why["fitted"]


def test_held_out_proofs_never_feed_the_tree_models_tables(tmp_path):
    """`imported_use` counts training proofs per file: a held-out proof does not move it; `simp` is
    the attribute."""
    import numpy as np

    base, _ = build_release(tmp_path / "a")
    changed, _ = build_release(tmp_path / "b", held_out_lemma="Tiny.double_add")
    a, b = ranker_of(base), ranker_of(changed)
    assert (a.file_use != b.file_use).nnz == 0
    row = a.doc_of["Tiny.double_eq_two_mul"]
    assert a.file_use[:, row].sum() == 2  # double_add and triple_double (train files); tune and test proofs do not count
    trained, _ = build_release(tmp_path / "c", library=LIBRARY.replace("simp only [double_eq_two_mul, Nat.mul_add]", "omega"))
    assert ranker_of(trained).file_use[:, row].sum() == 1
    assert not a.is_simp.any()
    simp, _ = build_release(tmp_path / "d", library=LIBRARY.replace("theorem double_eq_two_mul", "@[simp] theorem double_eq_two_mul"))
    flagged = ranker_of(simp)
    assert np.flatnonzero(flagged.is_simp).tolist() == [flagged.doc_of["Tiny.double_eq_two_mul"]]


ABOVE_BASE = """namespace Above

def twice (n : Nat) : Nat := n + n

theorem twice_eq (n : Nat) : twice n = 2 * n := by
  unfold twice
  omega

theorem twice_add (m n : Nat) : twice (m + n) = twice m + twice n := by
  unfold twice
  omega

end Above
"""
ABOVE_GOAL = """import Above.Base

namespace Above

theorem helper (n : Nat) : twice n + 0 = 2 * n := by
  rw [twice_eq]

theorem goal (m n : Nat) : twice (m + n) + 0 = twice m + twice n := by
  rw [twice_add]

theorem later (m n : Nat) : twice (m + n) = 2 * m + 2 * n := by
  rw [twice_add, twice_eq]
  omega

end Above
"""


def above_release(tmp: Path):
    """(release-like directory, extraction) of Above/Base.lean (train) and Above/Goal.lean (test)."""
    from mathindex.premises.imports import read_imports

    src = tmp / "src"
    (src / "Above").mkdir(parents=True)
    (src / "Above" / "Base.lean").write_text(ABOVE_BASE, encoding="utf-8")
    (src / "Above" / "Goal.lean").write_text(ABOVE_GOAL, encoding="utf-8")
    ex = extract_lean_tree(src, "tiny")
    rel = tmp / "rel"
    rel.mkdir()
    statements, _ = build_formal_index(ex.declarations, ex.dependencies, rel / "formal")
    write_table(statements, table_specs()["formal_statements"], rel)
    write_premise_index(ex.declarations, ex.dependencies, {"Above/Base.lean": TRAIN, "Above/Goal.lean": TEST},
                        rel / PREMISES_DIR, imports=read_imports([src]))
    return rel, ex


def test_pairs_is_the_share_of_the_goals_operator_pairs_a_statement_has(tmp_path):
    """`twice (m + n)` is the pair twice>HAdd.hAdd: `twice_add` has it, `twice_eq` does not."""
    from mathindex.premises.ranker import FEATURES

    rel, _ = above_release(tmp_path)
    ranker = PremiseRanker(rel, FormalIndex(rel), None, weights={"pairs": 1.0})
    cand = ranker.candidates("twice (m + n) + 0 = twice m + twice n", "(m n : Nat)", frozenset(["Above.goal"]))
    pairs = {ranker.names[int(d)]: float(row[FEATURES.index("pairs")]) for d, row in zip(cand.docs, cand.features)}
    assert pairs["Above.twice_add"] > pairs.get("Above.twice_eq", 0.0)
    assert 0.0 < pairs["Above.twice_add"] <= 1.0


def test_the_proofs_above_a_goal_in_its_file_vote_and_nothing_at_or_below_it_does(tmp_path):
    """`above` and `knn_above` read the proofs written above the goal in its own file (whatever the
    file's part: what the file says there), never the goal's own proof or one below it, and are 0
    without a file."""
    import numpy as np

    from mathindex.premises.priors import FILE_PROOFS_FILE
    from mathindex.premises.ranker import FEATURES

    rel, ex = above_release(tmp_path)
    assert pq.read_table(rel / PREMISES_DIR / FILE_PROOFS_FILE).num_rows == pq.read_table(rel / PREMISES_DIR / PRIORS_FILE).num_rows
    ranker = PremiseRanker(rel, FormalIndex(rel), None, weights={"lexical": 1.0, "above": 1.0, "knn_above": 1.0})
    line = next(r["line_start"] for r in ex.declarations.to_pylist() if r["full_name"] == "Above.goal")
    goal, context, exclude = "twice (m + n) + 0 = twice m + twice n", "(m n : Nat)", frozenset(["Above.goal"])
    cand = ranker.candidates(goal, context, exclude, file="Above/Goal.lean", line=line)
    signal = {ranker.names[int(d)]: dict(zip(FEATURES, row.tolist())) for d, row in zip(cand.docs, cand.features)}
    assert signal["Above.twice_eq"]["above"] == 1.0 and signal["Above.twice_eq"]["knn_above"] > 0  # helper's proof
    assert signal.get("Above.twice_add", {}).get("above", 0.0) == 0.0  # only the goal's own proof and one below name it
    assert signal.get("Above.twice_add", {}).get("knn_above", 0.0) == 0.0
    anywhere = ranker.candidates(goal, context, exclude)
    assert not anywhere.features[:, [FEATURES.index("above"), FEATURES.index("knn_above")]].any()
    # the held-out file's proofs are read above the goal, but never reach the priors
    priors = pq.read_table(rel / PREMISES_DIR / PRIORS_FILE).to_pylist()
    assert next(r for r in priors if r["name"] == "Above.helper")["proof"] == []
    assert np.diff(ranker.file_proof_offsets)[ranker.doc_of["Above.helper"]] == 1
