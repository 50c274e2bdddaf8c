"""The MCP server (`mathindex mcp ROOT`, stdio) driven by the `mcp` client library."""

from __future__ import annotations

import os
import sys

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.serving import copy_root


@pytest.fixture(scope="module")
def root(sample_release_root, tmp_path_factory):
    return copy_root(sample_release_root, tmp_path_factory.mktemp("mcp-root"))


async def _session(root):
    params = StdioServerParameters(command=sys.executable, args=["-m", "mathindex", "mcp", str(root)],
                                   env={k: v for k, v in os.environ.items() if k.startswith(("HF_", "TRANSFORMERS", "PREFECT", "PYTHON"))})
    out = {}
    async with Client(params, read_timeout_seconds=180) as client:
        out["tools"] = {t.name: t for t in (await client.list_tools()).tools}
        out["search"] = await client.call_tool("search", {"query": "lattice join meet", "k": 3})
        out["resolve"] = await client.call_tool("resolve", {"identifier": "Nat.Prime.two_le"})
        out["formula"] = await client.call_tool("formula", {"latex": "a^2+b^2"})
        out["declaration"] = await client.call_tool("declaration", {"name": "MiniMath.Nat.Prime.two_le"})
        out["bad_k"] = await client.call_tool("search", {"query": "lattice", "k": 500})
        out["bad_formula"] = await client.call_tool("formula", {"latex": "\\frac{"})
        out["unknown"] = await client.call_tool("declaration", {"name": "No.Such.Name"})
        out["premises"] = await client.call_tool("premises", {"goal": "Nat.Prime p → 2 ≤ p", "context": "(p : Nat)", "k": 4})
        out["bad_goal"] = await client.call_tool("premises", {"goal": "a + (b"})
        out["bad_premises_k"] = await client.call_tool("premises", {"goal": "a = b", "k": 0})
    return out


def test_mcp_tools_answer_from_the_sample_release(root):
    out = anyio.run(_session, root)
    assert {"search", "resolve", "formula", "declaration", "premises"} <= set(out["tools"])
    assert {"goal", "context", "k", "file", "line"} <= set(out["tools"]["premises"].input_schema["properties"])
    assert "query" in out["tools"]["search"].input_schema["properties"]

    search = out["search"]
    assert not search.is_error
    hits = search.structured_content["hits"]
    assert 1 <= len(hits) <= 3 and "MiniMath.Lattice" in [h["name"] for h in hits]
    assert all(h["channels"] and h["location"]["file"] for h in hits)

    assert [n["name"] for n in out["resolve"].structured_content["nodes"]] == ["MiniMath.Nat.Prime.two_le"]
    assert out["formula"].structured_content["canonical"] == "a**2 + b**2"
    decl = out["declaration"].structured_content
    assert decl["row"]["kind"] == "theorem" and decl["dependencies"][0]["target"] == "MiniMath.Nat.Prime"

    premises = out["premises"]
    assert not premises.is_error
    body = premises.structured_content
    assert 1 <= len(body["premises"]) <= 4 and "MiniMath.Nat.Prime.two_le" in [p["name"] for p in body["premises"]]
    assert all(p["signals"] and p["location"]["file"] and p["rank"] == i for i, p in enumerate(body["premises"], 1))

    says = {"bad_k": "between 1 and 100", "bad_formula": "malformed formula", "unknown": "no declaration",
            "bad_goal": "position 5", "bad_premises_k": "between 1 and 100"}
    for name in says:
        result = out[name]
        assert result.is_error, name
        text = " ".join(getattr(c, "text", "") for c in result.content)
        assert says[name] in text, (name, text)
