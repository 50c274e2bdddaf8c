"""The MCP server (`mathindex mcp ROOT`, stdio) driven by the `mcp` package's own client session,
started with the client configuration block of docs/mcp.md."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mathindex.limits import MAX_K, MAX_QUERY_BYTES
from tests.serving import copy_root

DOCS = Path(__file__).resolve().parents[1] / "docs" / "mcp.md"
TOOLS = {"search", "formal", "resolve", "formula", "declaration", "premises"}


@pytest.fixture(scope="module")
def root(sample_release_root, tmp_path_factory):
    return copy_root(sample_release_root, tmp_path_factory.mktemp("mcp-root"))


def documented_server(root: Path) -> tuple[str, list[str]]:
    """docs/mcp.md's client configuration block: its command (found on PATH or beside this Python)
    and its arguments with the documented root replaced by `root`."""
    block = re.search(r"```json\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    assert block, "docs/mcp.md has no JSON configuration block"
    server = json.loads(block.group(1))["mcpServers"]["mathindex"]
    command = shutil.which(server["command"]) or shutil.which(server["command"], path=str(Path(sys.executable).parent))
    assert command, f"{server['command']} is neither on PATH nor beside {sys.executable}"
    args = [str(root) if a.startswith("/path/to/") else a for a in server["args"]]
    assert str(root) in args and args[0] == "mcp"
    return command, args


async def _session(command, args):
    params = StdioServerParameters(command=command, args=args,
                                   env={k: v for k, v in os.environ.items() if k.startswith(("HF_", "TRANSFORMERS", "PREFECT", "PYTHON"))})
    calls = {
        "search": ("search", {"query": "lattice join meet", "k": 3}),
        "folded": ("search", {"query": "you can cancel a common factor on the left in a group", "k": 3}),
        "nonsense": ("search", {"query": "zxqv florbish wumpus", "k": 3}),
        "unknown_tag": ("search", {"query": "0BCD", "k": 3}),
        "formal": ("formal", {"query": "_ * _ = _ * _", "k": 3}),
        "resolve": ("resolve", {"identifier": "Nat.Prime.two_le"}),
        "resolve_doi": ("resolve", {"identifier": "https://doi.org/10.5555/mathindex.sample.divisors"}),
        "resolve_missing": ("resolve", {"identifier": "Q11518"}),
        "formula": ("formula", {"latex": "a^2+b^2"}),
        "declaration": ("declaration", {"name": "MiniMath.Nat.Prime.two_le"}),
        "premises": ("premises", {"goal": "Nat.Prime p → 2 ≤ p", "context": "(p : Nat)", "k": 4}),
        "bad_k": ("search", {"query": "lattice", "k": 500}),
        "long_query": ("search", {"query": "x" * (MAX_QUERY_BYTES + 1)}),
        "long_bytes": ("search", {"query": "ℕ" * (MAX_QUERY_BYTES // 2)}),  # under maxLength, over the bytes
        "bad_formal": ("formal", {"query": "No.Such.Constant"}),
        "bad_formula": ("formula", {"latex": "\\frac{"}),
        "unknown": ("declaration", {"name": "No.Such.Name"}),
        "bad_goal": ("premises", {"goal": "a + (b"}),
        "bad_premises_k": ("premises", {"goal": "a = b", "k": 0}),
    }
    out = {}
    async with Client(params, read_timeout_seconds=180) as client:
        out["tools"] = {t.name: t for t in (await client.list_tools()).tools}
        for key, (tool, arguments) in calls.items():
            out[key] = await client.call_tool(tool, arguments)
    return out


@pytest.fixture(scope="module")
def session(root):
    return anyio.run(_session, *documented_server(root))


def test_every_tool_argument_has_a_description_and_its_bounds(session):
    tools = session["tools"]
    assert TOOLS <= set(tools)
    for name in TOOLS:
        assert tools[name].description, name
        properties = tools[name].input_schema["properties"]
        for arg, schema in properties.items():
            assert schema.get("description"), (name, arg)
            if arg == "k":
                assert (schema["minimum"], schema["maximum"]) == (1, MAX_K), (name, schema)
            kinds = {schema.get("type")} | {s.get("type") for s in schema.get("anyOf", [])}
            if "string" in kinds:
                text = schema if schema.get("type") == "string" else next(s for s in schema["anyOf"] if s.get("type") == "string")
                assert text["maxLength"] == MAX_QUERY_BYTES, (name, arg, schema)
    assert {"goal", "context", "k", "file", "line"} <= set(tools["premises"].input_schema["properties"])
    assert tools["premises"].input_schema["properties"]["line"]["anyOf"][0]["minimum"] == 1
    assert tools["search"].output_schema and "match" in tools["search"].output_schema["properties"]


def test_search_and_formal_answer_with_stdio_locations(session):
    search = session["search"]
    assert not search.is_error
    body = search.structured_content
    hits = body["hits"]
    assert 1 <= len(hits) <= 3 and "MiniMath.Lattice" in [h["name"] for h in hits]
    assert body["match"] in ("strong", "weak") and body["notice"] is None
    for h in hits:
        assert h["channels"]
        location = h["location"]
        assert set(location) == {"corpus", "path", "line", "url"} and location["path"] and location["line"] >= 1
        # the documented --base-url makes the url absolute: the source line on that HTTP server
        assert location["url"] == (f"http://127.0.0.1:8000/source/{location['corpus']}/{location['path']}"
                                   f"#L{location['line']}")

    # a declaration and the Stacks statement it cites (@[stacks MA02]) are one hit, both located
    first = session["folded"].structured_content["hits"][0]
    also = {m["name"]: m for m in first["also"]}
    assert first["name"] == "MiniMath.mul_left_cancel" and also["MA02"]["also_in"] == "Stacks"
    assert also["MA02"]["location"]["path"] == "algebra.tex" and also["MA02"]["channels"]

    assert session["nonsense"].structured_content["match"] == "none"
    unknown = session["unknown_tag"].structured_content
    assert unknown["match"] == "none" and unknown["notice"] == "no Stacks tag 0BCD in this release"

    formal = session["formal"]
    assert not formal.is_error
    body = formal.structured_content
    assert body["mode"] == "formal" and body["count"] >= len(body["hits"]) >= 1
    assert all(h["location"]["path"] and "file" not in h["location"] for h in body["hits"])
    assert any(h["exact_conclusion"] for h in body["hits"])


def test_the_other_tools_answer_from_the_sample_release(session):
    assert [n["name"] for n in session["resolve"].structured_content["nodes"]] == ["MiniMath.Nat.Prime.two_le"]
    doi = session["resolve_doi"].structured_content
    assert doi["nodes"][0]["name"] == "MiniMath.Nat.totient" and doi["notice"] is None
    assert doi["nodes"][0]["location"]["path"] == "MiniMath/NumberTheory/Divisors.lean"
    missing = session["resolve_missing"].structured_content
    assert missing["nodes"] == [] and missing["notice"] == "no Wikidata item Q11518 in this release"
    assert session["formula"].structured_content["canonical"] == "a**2 + b**2"
    decl = session["declaration"].structured_content
    assert decl["row"]["kind"] == "theorem" and decl["dependencies"][0]["target"] == "MiniMath.Nat.Prime"
    assert decl["defined_at"]["path"] == decl["node"]["location"]["path"] and decl["defined_at"]["line"]

    premises = session["premises"]
    assert not premises.is_error
    body = premises.structured_content
    assert 1 <= len(body["premises"]) <= 4 and "MiniMath.Nat.Prime.two_le" in [p["name"] for p in body["premises"]]
    assert all(p["signals"] and p["location"]["path"] and p["rank"] == i for i, p in enumerate(body["premises"], 1))


def test_bad_input_is_the_tools_error_in_one_sentence(session):
    says = {"bad_k": "less than or equal to 100", "long_query": "at most 4096 characters",
            "long_bytes": "longer than 4096 bytes", "bad_formal": "unknown constant No.Such.Constant",
            "bad_formula": "malformed formula", "unknown": "no declaration", "bad_goal": "position 5",
            "bad_premises_k": "greater than or equal to 1"}
    for name in says:
        result = session[name]
        assert result.is_error, name
        text = " ".join(getattr(c, "text", "") for c in result.content)
        assert says[name] in text, (name, text)
        assert "Traceback" not in text
