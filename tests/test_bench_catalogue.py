"""The benchmark catalogue (bench/benchmarks.yaml): it parses, names every script under bench/, each
entry's module imports and prints the figures the entry names, and every entry's `sample` command
runs on a release of the bundled sample."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.common.catalogue import CATALOGUE, fill, load_catalogue, table
from mathindex.store.releases import published_release

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
CAT = load_catalogue()
SAMPLE_RUNS = [b for b in CAT.benchmarks if b.sample is not None]


def _scripts(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}


def test_the_catalogue_names_every_script_under_bench_and_nothing_else() -> None:
    assert CATALOGUE == BENCH / "benchmarks.yaml"
    assert {b.name for b in CAT.benchmarks} == _scripts(BENCH)
    assert len(CAT.benchmarks) >= 20 and sum(b.kind == "tool" for b in CAT.benchmarks) <= 5


@pytest.mark.parametrize("name", sorted(b.name for b in CAT.benchmarks))
def test_each_entry_imports_has_a_main_and_prints_its_figures(name: str) -> None:
    entry = next(b for b in CAT.benchmarks if b.name == name)
    module = importlib.import_module(entry.module)
    assert callable(module.main)
    source = Path(module.__file__).read_text(encoding="utf-8")
    shared = re.findall(r"^from (bench\.common\.\w+) import", source, flags=re.M)  # printers it shares
    source += "".join(Path(importlib.import_module(m).__file__).read_text(encoding="utf-8") for m in shared)
    assert [f for f in entry.figures if f not in source] == []  # each figure is a literal its script prints


def test_no_code_under_bench_edits_the_import_path() -> None:
    offenders = [str(p.relative_to(REPO)) for p in BENCH.rglob("*.py") if "sys.path" in p.read_text(encoding="utf-8")]
    assert offenders == []


def test_every_experiment_imports_and_has_its_line_in_the_experiments_readme() -> None:
    experiments = _scripts(BENCH / "experiments")
    readme = (BENCH / "experiments" / "README.md").read_text(encoding="utf-8")
    assert set(re.findall(r"^\| `(\w+)` \|", readme, flags=re.M)) == experiments
    assert experiments.isdisjoint(_scripts(BENCH))
    for name in sorted(experiments):
        assert callable(importlib.import_module(f"bench.experiments.{name}").main)


def test_the_bench_readme_shows_the_catalogue_as_it_is() -> None:
    assert table(CAT) in (BENCH / "README.md").read_text(encoding="utf-8")


def test_fill_substitutes_placeholders_and_the_interpreter() -> None:
    argv = fill("python -m bench.premises {sample_release} --latency 50", {"sample_release": "/r"}, python="/py")
    assert argv == ["/py", "-m", "bench.premises", "/r", "--latency", "50"]
    with pytest.raises(KeyError):
        fill("python -m bench.premises {mathlib_release}", {"sample_release": "/r"})


@pytest.fixture(scope="module")
def sample_values(sample_release_root, tmp_path_factory) -> dict[str, str]:
    """The placeholders a `sample` command may use: a copy of the session's sample root with its
    caches (the informal renderings the engine reads; what a benchmark writes stays in the copy)
    and a scratch directory."""
    root = tmp_path_factory.mktemp("bench") / "root"
    shutil.copytree(sample_release_root, root, symlinks=True)
    return {"sample_release": str(published_release(root)), "tmp": str(tmp_path_factory.mktemp("bench-tmp"))}


@pytest.mark.e2e
@pytest.mark.parametrize("name", [b.name for b in SAMPLE_RUNS])
def test_sample_command_runs_and_prints_its_figures(name: str, sample_values: dict[str, str]) -> None:
    entry = next(b for b in SAMPLE_RUNS if b.name == name)
    run = subprocess.run(fill(entry.sample, sample_values), cwd=REPO, capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-3000:]
    assert [f for f in entry.figures if f not in output] == [], output[-3000:]
