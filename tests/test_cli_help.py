"""The command line's help and exit codes (issue 13): help text on every argument and an example
per subcommand; the same kind of error gives the same exit code in every subcommand."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mathindex.cli import EXIT_INTEGRITY, EXIT_USAGE, VERBS, build_parser, main


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_argument_has_help_and_every_subcommand_an_example():
    missing = [f"{name} {a.dest}" for name, parser in _subcommands().items() for a in parser._actions
               if not isinstance(a, argparse._HelpAction) and not a.help]  # fmt: skip
    assert missing == []
    for name, parser in _subcommands().items():
        text = parser.format_help()
        assert f"example:\n  mathindex {name} " in text, name


VERBS_TAKING_A_RELEASE = [["search", "{}", "q"], ["bench", "{}", "--suite", "{suite}"], ["premises", "{}", "--goal", "a"],
                          ["reembed", "{}", "--model", "default", "--out", "{out}"], ["verify", "{}"]]


@pytest.mark.parametrize("argv", VERBS_TAKING_A_RELEASE)
def test_a_path_that_is_no_release_is_exit_2_everywhere(argv, tmp_path, capsys):
    (tmp_path / "suite.json").write_text("{}")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([a.format(empty, suite=tmp_path / "suite.json", out=tmp_path / "out") for a in argv]) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert "neither a release" in err and "\n" not in err


@pytest.mark.parametrize("argv", VERBS_TAKING_A_RELEASE)
def test_an_unreadable_published_json_is_exit_4_everywhere(argv, tmp_path, capsys):
    (tmp_path / "suite.json").write_text("{}")
    root = tmp_path / "root"
    (root / "releases").mkdir(parents=True)
    (root / "published.json").write_text('{"release_id": ')  # a truncated write
    assert main([a.format(root, suite=tmp_path / "suite.json", out=tmp_path / "out") for a in argv]) == EXIT_INTEGRITY
    err = capsys.readouterr().err.strip()
    assert "published.json" in err and "\n" not in err


def test_nothing_published_is_exit_2_everywhere(tmp_path, capsys):
    root = tmp_path / "root"
    (root / "releases").mkdir(parents=True)
    (tmp_path / "suite.json").write_text(json.dumps({}))
    for argv in VERBS_TAKING_A_RELEASE:
        assert main([a.format(root, suite=tmp_path / "suite.json", out=tmp_path / "out") for a in argv]) == EXIT_USAGE
        assert "nothing is published under" in capsys.readouterr().err


def test_every_subcommand_has_a_verb_module_with_run():
    assert set(VERBS) == set(_subcommands())
    for module in sorted(set(VERBS.values())):
        assert callable(importlib.import_module(f"mathindex.cli.{module}").run), module


LIGHT_START = """
import sys
from mathindex.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
code = main(["gate", "--baseline", sys.argv[1], "--current", sys.argv[1]])
print(code, sorted(m for m in ("prefect", "pyarrow", "pydantic", "polars", "torch", "mathindex.store.releases")
                   if m in sys.modules))
"""


def test_help_and_gate_load_no_heavy_module(tmp_path):
    """`--help` and `gate` load only the parser and the gate: no Prefect, pyarrow, pydantic or torch."""
    metrics = tmp_path / "metrics.json"
    metrics.write_text(json.dumps({"headline": {"sample/mrr@10": 80.0}}))
    run = subprocess.run([sys.executable, "-c", LIGHT_START, str(metrics)], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parent.parent)
    assert run.stdout.splitlines()[-1] == "0 []", run.stderr
