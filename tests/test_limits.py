"""mathindex.limits, the one owner of the input limits, and each front end applying them: the CLI
(`search`, `premises`, `search --queries`), the HTTP API and the MCP server refuse the same input
with the same words (a query over 4 KB, k over 100, text that is not valid UTF-8)."""

from __future__ import annotations

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp.server.mcpserver.exceptions import ToolError

from mathindex.cli import main
from mathindex.limits import MAX_K, MAX_QUERY_BYTES, BadInput, checked_k, checked_place, checked_text, checked_url_part, query_problem
from tests.serving import copy_root

LONG = "a" * (3 * MAX_QUERY_BYTES)  # the 12 KB query the server refuses


def test_checked_text_refuses_blank_long_and_undecodable_text():
    assert checked_text("lattice", "query") == "lattice"
    assert checked_text("", "context", empty_ok=True) == ""
    assert checked_text("é" * (MAX_QUERY_BYTES // 2), "query")  # bytes are counted, not characters
    for value, status, says in (("", 400, "query is empty"), (" \t", 400, "query is empty"),
                                ("lattice \udcff", 400, "query is not valid UTF-8"),
                                ("é" * (MAX_QUERY_BYTES // 2 + 1), 413, f"query is longer than {MAX_QUERY_BYTES} bytes")):
        with pytest.raises(BadInput, match=says) as exc:
            checked_text(value, "query")
        assert exc.value.status == status


def test_checked_k_and_place():
    assert checked_k(1) == 1 and checked_k(MAX_K) == MAX_K
    for k in (0, -1, MAX_K + 1, 100_000):
        with pytest.raises(BadInput, match=f"between 1 and {MAX_K}"):
            checked_k(k)
    assert checked_place(" Mathlib/Order/Basic.lean ", 3) == ("Mathlib/Order/Basic.lean", 3)
    with pytest.raises(BadInput, match="line needs a file"):
        checked_place(None, 3)


def test_url_parts_must_decode_to_utf8():
    assert checked_url_part(b"q=%C3%A9t%C3%A9&k=3", "query string")
    for raw in (b"q=%FF%FE", b"q=%C3", b"q=\xff"):
        with pytest.raises(BadInput, match="query string is not valid UTF-8"):
            checked_url_part(raw, "query string")


def test_the_engines_query_problem_has_no_size_limit():
    assert query_problem(LONG) is None
    assert query_problem(" ") == "query is empty" and query_problem("\udcff") == "query is not valid UTF-8"


# -- the front ends ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def root(sample_release_root, tmp_path_factory):
    return copy_root(sample_release_root, tmp_path_factory.mktemp("limits-root"))


@pytest.mark.parametrize(("argv", "says"), [
    (["search", "{root}", "lattice", "--k", "100000"], "mathindex search: k must be between 1 and 100"),
    (["search", "{root}", "lattice", "--k", "0"], "mathindex search: k must be between 1 and 100"),
    (["search", "{root}", LONG], f"mathindex search: query is longer than {MAX_QUERY_BYTES} bytes"),
    (["search", "{root}", "--formal", LONG], f"mathindex search: query is longer than {MAX_QUERY_BYTES} bytes"),
    (["premises", "{root}", "--goal", LONG], f"mathindex premises: goal is longer than {MAX_QUERY_BYTES} bytes"),
    (["premises", "{root}", "--goal", "a = b", "--context", "\udcff"], "mathindex premises: context is not valid UTF-8"),
    (["premises", "{root}", "--goal", "a = b", "--k", "101"], "mathindex premises: k must be between 1 and 100"),
])
def test_the_cli_refuses_what_the_server_refuses(root, capsys, argv, says):
    assert main([a.format(root=root) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == says


def test_http_refuses_text_that_is_not_utf8_with_a_400(root):
    from mathindex.serve.app import create_app
    from mathindex.serve.swap import ReleaseHolder

    with TestClient(create_app(ReleaseHolder(root), threads=1)) as client:
        for path, says in (("/search?q=%FF%FE", "query string is not valid UTF-8"),
                           ("/search?q=lattice%20%C3", "query string is not valid UTF-8"),
                           ("/declaration/Nat.%FF", "path is not valid UTF-8")):
            r = client.get(path)
            assert r.status_code == 400 and r.json() == {"error": says, "status": 400}, (path, r.text)
        r = client.get("/search", params={"q": LONG})
        assert r.status_code == 413 and "longer than 4096 bytes" in r.json()["error"]
        assert client.get("/search", params={"q": "lattice", "k": 101}).status_code == 400
        assert client.get("/search", params={"q": "treillis été"}).status_code == 200  # UTF-8 is fine


def test_mcp_refuses_text_that_is_not_utf8_or_too_long(root):
    from mathindex.serve.mcp import build_mcp
    from mathindex.serve.swap import ReleaseHolder

    server = build_mcp(ReleaseHolder(root))

    async def refused(tool: str, arguments: dict) -> str:
        with pytest.raises(ToolError) as exc:
            await server.call_tool(tool, arguments)
        return str(exc.value)

    # the tools' schemas (max_length, 1 <= k <= MAX_K) refuse first; checked_text refuses what a
    # schema cannot see: bytes of UTF-8 (a query under MAX_QUERY_BYTES characters but over its bytes)
    assert "valid string" in anyio.run(refused, "search", {"query": "lattice \udcff"})
    assert "at most 4096 characters" in anyio.run(refused, "search", {"query": LONG})
    assert "less than or equal to 100" in anyio.run(refused, "search", {"query": "lattice", "k": 100_000})
    wide = "ℕ" * (MAX_QUERY_BYTES // 2)  # 2048 characters, 6144 bytes
    assert f"query is longer than {MAX_QUERY_BYTES} bytes" in anyio.run(refused, "search", {"query": wide})
    assert "valid string" in anyio.run(refused, "premises", {"goal": "a = \udcff"})
