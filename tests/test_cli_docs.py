"""The user-facing docs cannot drift: docs/cli.md is what `python -m mathindex.cli.docs` renders from
the parser, every `mathindex` command the front pages show names a real verb and real options, the
README stays a short front page whose links resolve, and no page carries internal notes."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mathindex.cli.docs import REGENERATE, render, verb_parsers
from mathindex.cli.parser import build_parser

REPO = Path(__file__).resolve().parents[1]
CLI_MD = REPO / "docs" / "cli.md"
README = REPO / "README.md"
FRONT_PAGES = [README] + [REPO / "docs" / f"{page}.md" for page in ("serving", "deployment", "mathlib")]
NO_INTERNAL_NOTES = [README, CLI_MD, REPO / "bench" / "README.md"] + [
    REPO / "docs" / f"{page}.md" for page in ("serving", "operations", "deployment", "mathlib", "mcp")]
INTERNAL = re.compile(r"\bissue\s*#?\d+|\bsessions?\b|\bload \d", re.IGNORECASE)


def _verbs() -> dict:
    return verb_parsers(build_parser())[0]


def test_docs_cli_md_is_what_the_parser_renders() -> None:
    assert CLI_MD.read_text(encoding="utf-8") == render(), f"docs/cli.md is stale: run `{REGENERATE}`"


def test_the_module_prints_the_page() -> None:
    run = subprocess.run([sys.executable, "-m", "mathindex.cli.docs"], cwd=REPO, capture_output=True, text=True,
                         timeout=120, env={"COLUMNS": "40", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr
    assert run.stdout == render()  # the terminal's width does not reach the page


def test_the_page_has_every_verb_its_usage_and_every_option() -> None:
    page = render()
    for name, parser in _verbs().items():
        section = page.split(f"## mathindex {name}\n", 1)[1].split("\n## ", 1)[0]
        assert f"mathindex {name} [-h]" in section
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in section, (name, option)
        assert parser.description and parser.description.split()[0] in section
        assert parser.epilog.split("\n")[1].strip() in section  # the example


def test_every_verb_has_a_description() -> None:
    assert [name for name, parser in _verbs().items() if not parser.description] == []


def _commands(path: Path) -> list[str]:
    """The `mathindex …` lines of a page's fenced sh blocks."""
    blocks = re.findall(r"```sh\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip().startswith("mathindex ")]


@pytest.mark.parametrize("page", FRONT_PAGES, ids=lambda p: p.name)
def test_each_command_shown_names_a_verb_and_its_options(page: Path) -> None:
    verbs = _verbs()
    commands = _commands(page)
    assert commands
    for command in commands:
        argv = shlex.split(command, comments=True)
        assert argv[1] in verbs, command
        known = {o for a in verbs[argv[1]]._actions for o in a.option_strings}
        assert [t for t in argv[2:] if t.startswith("--") and t.split("=")[0] not in known] == [], command


def test_the_readme_is_a_front_page_whose_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) < 8 * 1024
    for heading in ("## Set up", "## Search", "## Serve", "## Search all of Mathlib", "## Words used here"):
        assert heading in text
    for term in ("channel", "headline metric", "gate", "release root"):
        assert f"- **{term}**:" in text
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert len(links) >= 8 and [link for link in links if not (REPO / link).exists()] == []


def test_the_set_up_commands_are_the_makefile_targets_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    for target in re.findall(r"^make ([\w-]+)", text, flags=re.M):
        assert re.search(rf"^{target}:", makefile, flags=re.M), target
    assert "make test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", NO_INTERNAL_NOTES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_page_carries_issue_or_session_numbers(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert [m.group(0) for m in INTERNAL.finditer(text)] == []


def test_the_internal_note_pattern_finds_what_it_must() -> None:
    found = [bool(INTERNAL.search(s)) for s in ("issue 12", "Issue #3", "the ninth session", "at load 7-11",
                                                "a session", "issues", "download 3 files", "the gate passed")]
    assert found == [True, True, True, True, True, False, False, False]
