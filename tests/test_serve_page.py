"""The web page in a real headless browser (Debian's chromium, which .ci/run installs): type a
query, see the hits with their channels and source links, the formula rendered; keep a screenshot
(build/screenshots/, or $MATHINDEX_SCREENSHOTS)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mathindex.serve.app import create_app
from mathindex.serve.swap import ReleaseHolder
from tests.serving import Chromium, ServerThread, chromium_binary, copy_root

SCREENSHOTS = Path(os.environ.get("MATHINDEX_SCREENSHOTS", Path(__file__).resolve().parent.parent / "build" / "screenshots"))
QUERY = "$a^2 + b^2 \\ge 2ab$ inequality"

pytestmark = pytest.mark.skipif(chromium_binary() is None,
                                reason="no chromium on this machine (.ci/run installs Debian's chromium with apt-get)")


@pytest.fixture(scope="module")
def server(sample_release_root, tmp_path_factory):
    holder = ReleaseHolder(copy_root(sample_release_root, tmp_path_factory.mktemp("page-root")))
    with ServerThread(create_app(holder, threads=2)) as srv:
        yield srv


@pytest.fixture()
def browser():
    b = Chromium(chromium_binary())
    try:
        yield b
    finally:
        b.close()


def test_typing_a_query_shows_hits_with_channels_links_and_the_rendered_formula(server, browser):
    browser.open(server.url + "/")
    browser.wait_for("document.getElementById('release').textContent.startsWith('release ')")
    browser.evaluate("document.getElementById('q').focus()")
    browser.type(QUERY)
    assert browser.evaluate("document.getElementById('q').value") == QUERY
    browser.press_enter()
    n = browser.wait_for("document.querySelectorAll('#hits li.hit').length")
    assert 1 <= n <= 10
    hits = json.loads(browser.evaluate("""JSON.stringify([...document.querySelectorAll('#hits li.hit')].map(li => ({
        name: li.querySelector('.name').textContent,
        channels: [...li.querySelectorAll('.channel')].map(c => c.textContent),
        loc: li.querySelector('.loc').textContent,
        href: li.querySelector('a.loc') ? li.querySelector('a.loc').getAttribute('href') : null})))"""))
    assert all(h["channels"] for h in hits)
    assert any(c.startswith("formula #") for h in hits for c in h["channels"])
    first = hits[0]
    assert ":" in first["loc"] and first["href"].startswith("/source/") and "#L" in first["href"]
    # the formula as typed, rendered as MathML (a <math> element with a superscript)
    browser.wait_for("document.querySelector('#rendered math msup') !== null")
    assert "?q=" in browser.evaluate("location.href")
    shot = browser.screenshot(SCREENSHOTS / "serve-search-page.png")
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # the hit's source link opens the file at that line
    browser.open(server.url + first["href"])
    line = first["href"].rsplit("#L", 1)[1]
    assert browser.evaluate(f"document.getElementById('L{line}') !== null")
    assert browser.evaluate("location.hash") == f"#L{line}"


def test_a_bad_query_shows_the_error_not_a_blank_page(server, browser):
    browser.open(server.url + "/?q=" + "x" * 5000)
    text = browser.wait_for("document.getElementById('status').textContent.startsWith('error') && "
                            "document.getElementById('status').textContent")
    assert "longer than 4096 bytes" in text
