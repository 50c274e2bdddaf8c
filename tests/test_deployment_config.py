"""prefect.yaml cannot drift from the flows and the CLI: every deployment parameter is a parameter
of its flow and an option of the matching `mathindex` verb, its comment names that option (and
the option's choices, as `mathindex release --help` lists them), its default is the CLI's, and
docs/deployment.md tables exactly these parameters. The flows' signatures are read from their
syntax tree, without importing the flows."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest
import yaml
from prefect.client.schemas.objects import ConcurrencyLimitStrategy

from mathindex.cli.parser import build_parser

REPO = Path(__file__).resolve().parents[1]
CONFIG_TEXT = (REPO / "prefect.yaml").read_text(encoding="utf-8")
CONFIG = yaml.safe_load(CONFIG_TEXT)
DOCS = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
VERB_OF_FLOW = {"release_flow": "release", "reembed_flow": "reembed"}  # the CLI verb that runs each flow
# flow parameters the CLI spells otherwise than `--name-with-dashes` (positionals by their dest)
OPTION_OF = {"sources_file": "--sources", "suites": "--suite", "release": "release"}
NOT_PARAMETERS = {"return_state"}


def deployments() -> dict[str, dict]:
    """`flow/deployment` -> its entry in prefect.yaml (the flow's name is its function's without `_flow`)."""
    return {f"{d['entrypoint'].rsplit(':', 1)[1].removesuffix('_flow')}/{d['name']}": d for d in CONFIG["deployments"]}


def flow_signature(entrypoint: str) -> dict[str, bool]:
    """The flow function's parameters -> whether each has a default, from its source."""
    path, name = entrypoint.split(":")
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    [func] = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name]
    args = func.args.args + func.args.kwonlyargs
    defaults = [False] * (len(func.args.args) - len(func.args.defaults)) + [True] * len(func.args.defaults)
    defaults += [d is not None for d in func.args.kw_defaults]
    return {a.arg: has for a, has in zip(args, defaults)}


def cli_actions(verb: str) -> dict[str, argparse.Action]:
    """A verb's options by their first option string, positionals by their dest."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices[verb]
    return {(a.option_strings[0] if a.option_strings else a.dest): a for a in sub._actions}


def option_of(param: str) -> str:
    return OPTION_OF.get(param, "--" + param.replace("_", "-"))


def option_label(action: argparse.Action) -> str:
    """How the comments and the docs name an option: `--out`, or a positional's metavar `RELEASE`."""
    return action.option_strings[0] if action.option_strings else action.dest.upper()


def parameter_comments() -> dict[str, dict[str, str]]:
    """`flow/deployment` -> parameter -> its comment in prefect.yaml: the comment lines right above
    it and the comment at its line's end, joined."""
    names = iter(deployments())
    found: dict[str, dict[str, str]] = {}
    current, in_params, above = None, False, []
    for line in CONFIG_TEXT.splitlines():
        stripped = line.strip()
        if stripped.startswith("- name:") and line.startswith("  - "):
            current, in_params = next(names), False
            found[current] = {}
        elif current and stripped == "parameters:":
            in_params, above = True, []
        elif in_params and stripped.startswith("#"):
            above.append(stripped.lstrip("# "))
        elif in_params and re.match(r"^ {6}[a-z_]+:", line):
            key, _, rest = stripped.partition(":")
            tail = rest.split(" # ", 1)[1] if " # " in rest else ""
            found[current][key] = " ".join(above + [tail]).strip()
            above = []
        elif in_params and stripped and not line.startswith("      "):
            in_params = False
    return found


def docs_rows() -> dict[str, dict[str, list[str]]]:
    """`flow/deployment` -> parameter -> the cells of its row in docs/deployment.md."""
    rows: dict[str, dict[str, list[str]]] = {}
    current = None
    for line in DOCS.splitlines():
        heading = re.match(r"^### `([^`]+)`$", line)
        if heading:
            current = heading.group(1)
            rows[current] = {}
        elif current and line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[current][cells[0].strip("`")] = cells[1:]
        elif line.startswith("## "):
            current = None
    return rows


ALL = sorted(deployments())


def test_the_deployments_are_the_ones_the_docs_describe():
    assert ALL == ["reembed/reembed", "release/nightly-release"]
    assert sorted(docs_rows()) == ALL


@pytest.mark.parametrize("name", ALL)
def test_every_parameter_is_the_flows_and_every_required_one_is_given(name):
    deployment = deployments()[name]
    signature = flow_signature(deployment["entrypoint"])
    assert set(deployment["parameters"]) <= set(signature), set(deployment["parameters"]) - set(signature)
    assert {p for p, has_default in signature.items() if not has_default} <= set(deployment["parameters"])


@pytest.mark.parametrize("name", ALL)
def test_every_flow_parameter_is_an_option_of_its_verb_with_the_same_default(name):
    deployment = deployments()[name]
    function = deployment["entrypoint"].rsplit(":", 1)[1]
    actions = cli_actions(VERB_OF_FLOW[function])
    for param in set(flow_signature(deployment["entrypoint"])) - NOT_PARAMETERS:
        assert option_of(param) in actions, f"{function}({param}) has no `mathindex {VERB_OF_FLOW[function]}` option"
    for param, value in deployment["parameters"].items():
        action = actions[option_of(param)]
        if isinstance(action, argparse._StoreTrueAction):
            assert value is False, (param, value)
        elif value is None:
            assert action.default is None, (param, action.default)


@pytest.mark.parametrize("name", ALL)
def test_each_parameter_comment_names_its_option_and_its_choices(name):
    deployment, comments = deployments()[name], parameter_comments()[name]
    assert set(comments) == set(deployment["parameters"])
    actions = cli_actions(VERB_OF_FLOW[deployment["entrypoint"].rsplit(":", 1)[1]])
    for param, comment in comments.items():
        action = actions[option_of(param)]
        assert option_label(action) in comment, f"{name} {param}: the comment does not name {option_label(action)}"
        if action.choices:
            choices = list(action.choices)
            listed = ", ".join(choices[:-1]) + " or " + choices[-1]
            assert listed in comment, f"{name} {param}: the comment should list {listed!r}: {comment!r}"


@pytest.mark.parametrize("name", ALL)
def test_the_docs_table_matches_prefect_yaml_and_the_cli(name):
    deployment, rows = deployments()[name], docs_rows()[name]
    assert set(rows) == set(deployment["parameters"])
    actions = cli_actions(VERB_OF_FLOW[deployment["entrypoint"].rsplit(":", 1)[1]])
    for param, (option, default, meaning) in rows.items():
        assert option == f"`{option_label(actions[option_of(param)])}`", (param, option)
        value = deployment["parameters"][param]
        template = re.fullmatch(r"\{\{ \$([A-Z_]+) \}\}", value) if isinstance(value, str) else None
        expected = (f"`${template.group(1)}` when you deploy" if template else "null" if value is None
                    else str(value).lower() if isinstance(value, bool) else f"`{value}`")  # fmt: skip
        assert default == expected, (param, default, expected)
        if actions[option_of(param)].choices:
            choices = list(actions[option_of(param)].choices)
            assert ", ".join(choices[:-1]) + " or " + choices[-1] in meaning, (param, meaning)


@pytest.mark.parametrize("name", ALL)
def test_each_deployment_queues_a_second_run(name):
    limit = deployments()[name]["concurrency_limit"]
    assert limit == {"limit": 1, "collision_strategy": "ENQUEUE"}
    assert ConcurrencyLimitStrategy(limit["collision_strategy"]) is ConcurrencyLimitStrategy.ENQUEUE
