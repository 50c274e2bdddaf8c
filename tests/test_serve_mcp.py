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
    return out


def test_mcp_tools_answer_from_the_sample_release(root):
    out = anyio.run(_session, root)
    assert {"search", "resolve", "formula", "declaration"} <= set(out["tools"])
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

    for name in ("bad_k", "bad_formula", "unknown"):
        result = out[name]
        assert result.is_error, name
        text = " ".join(getattr(c, "text", "") for c in result.content)
        assert {"bad_k": "between 1 and 100", "bad_formula": "malformed formula", "unknown": "no declaration"}[name] in text
