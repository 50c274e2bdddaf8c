"""docs/cli.md, rendered from the argument parser (`cli.parser.build_parser`): every verb's usage,
description, arguments and example, so the reference cannot drift from `--help`.
`python -m mathindex.cli.docs > docs/cli.md` regenerates it; tests/test_cli_docs.py compares."""

from __future__ import annotations

import argparse
import sys

from mathindex.cli.parser import build_parser

WIDTH = 100  # usage lines wrap here, whatever the terminal (the page must not depend on it)
REGENERATE = "python -m mathindex.cli.docs > docs/cli.md"


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole page: the top-level description and epilog, then one section per verb."""
    parser = parser or build_parser()
    verbs, summaries = verb_parsers(parser)
    lines = ["# The command line", "",
             f"Generated from `mathindex/cli/parser.py` by `{REGENERATE}`: edit the parser and "
             "`mathindex/cli/helptext.py`, not this page. `mathindex VERB --help` prints the same.", "",
             parser.description or "", "",
             " ".join(f"[{name}](#mathindex-{name})" for name in verbs), "",
             *_block(parser.epilog or ""), ""]
    for name, sub in verbs.items():
        lines += _verb(name, sub, summaries.get(name, ""))
    return "\n".join(lines).rstrip() + "\n"


def verb_parsers(parser: argparse.ArgumentParser) -> tuple[dict[str, argparse.ArgumentParser], dict[str, str]]:
    """The verbs' parsers in the parser's order, and each verb's one-line help."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices), {c.dest: c.help or "" for c in sub._choices_actions}


def _verb(name: str, parser: argparse.ArgumentParser, summary: str) -> list[str]:
    """One verb's section: summary, usage, description, arguments, example."""
    usage = argparse.HelpFormatter(parser.prog, width=WIDTH)
    usage.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    lines = [f"## mathindex {name}", ""]
    if summary:
        lines += [summary, ""]
    lines += ["```", usage.format_help().strip(), "```", ""]
    if parser.description:
        lines += [*_block(parser.description), ""]
    arguments = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    if arguments:
        lines += [f"- {_argument(a, parser.prog)}" for a in arguments] + [""]
    if parser.epilog:
        lines += ["```", parser.epilog.strip(), "```", ""]
    return lines


def _argument(action: argparse.Action, prog: str) -> str:
    """`--k K` (default 10): its help; a positional by its name, a choice by its values."""
    if action.option_strings:
        metavar = "" if action.nargs == 0 else " " + _metavar(action)
        name = ", ".join(f"{o}{metavar}" for o in action.option_strings)
    else:
        name = _metavar(action)
    notes = []
    if action.required and action.option_strings:
        notes.append("required")
    if isinstance(action, argparse._AppendAction):
        notes.append("repeatable")
    help_text = (action.help or "") % {**vars(action), "prog": prog} if action.help else ""
    unset = action.default is None or action.default is False or action.default in ([], "", argparse.SUPPRESS)
    shown_default = not unset and action.nargs != 0
    if shown_default and "default" not in help_text:
        notes.append(f"default {action.default}")
    head = f"`{name}`" + (f" ({'; '.join(notes)})" if notes else "")
    return f"{head}: {help_text}" if help_text else head


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _block(text: str) -> list[str]:
    """Help text as markdown paragraphs: its line breaks inside a paragraph become spaces."""
    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n")]
    return "\n\n".join(paragraphs).split("\n")


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
