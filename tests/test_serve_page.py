"""The web page in a real headless browser (Debian's chromium, which .ci/run installs): type a
query, see the hits with their channels and source links, the formula rendered; keep a screenshot
(build/screenshots/, or $MATHINDEX_SCREENSHOTS)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

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
        page: li.querySelector('.name').getAttribute('href'),
        title: (li.querySelector('.title') || {}).textContent || '',
        math: li.querySelectorAll('.title math').length,
        channels: [...li.querySelectorAll('.channel')].map(c => c.textContent),
        loc: li.querySelector('.loc').textContent,
        href: li.querySelector('a.loc') ? li.querySelector('a.loc').getAttribute('href') : null})))"""))
    assert all(h["channels"] for h in hits)
    assert any(c.startswith("formula #") for h in hits for c in h["channels"])
    assert all(h["page"] == "/decl/" + quote(h["name"], safe="") for h in hits)
    assert not any("\\label" in h["title"] for h in hits)
    assert any(h["math"] for h in hits)  # a LaTeX statement's title with its formulas as MathML
    assert set(browser.evaluate("[...document.querySelectorAll('.legend .channel')].map(c => c.textContent)")) >= {
        "identifier", "lexical", "embedding", "formula", "formal", "informal", "parent"}
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

    # the hit's name opens its declaration page: statement, uses, used by, the source line
    browser.open(server.url + first["page"])
    assert browser.evaluate("document.querySelector('h1 code').textContent") == first["name"]
    headings = browser.evaluate("[...document.querySelectorAll('h2')].map(h => h.textContent)")
    assert headings[0] == "Statement" and any(h.startswith("Uses (") for h in headings) and any(
        h.startswith("Used by (") for h in headings)
    assert browser.evaluate("document.querySelector('a.loc').getAttribute('href')") == first["href"]


def test_a_bad_query_shows_the_error_not_a_blank_page(server, browser):
    browser.open(server.url + "/?q=" + "x" * 5000)
    text = browser.wait_for("document.getElementById('status').textContent.startsWith('error') && "
                            "document.getElementById('status').textContent")
    assert "longer than 4096 bytes" in text


# XSS vectors through the query (each a whole-LaTeX query: the page renders it through /formula and
# searches it). Each tries to set window.__xss and to request /xss-probe-N from the server; none may.
# The HTML tokenizer ends a tag name at '/', so the payloads use '/' where a space would go (the
# converter writes a space in \text as &#x000A0;).
XSS_VECTORS = {
    "img onerror (issue 34)": "\\text{<img/src='x'/onerror=\"window.__xss=1;fetch('/xss-probe-1')\">}",
    "event-handler attribute": "\\text{<details/open/ontoggle=\"window.__xss=2;fetch('/xss-probe-2')\">}",
    "javascript: link": ("\\href{javascript:window.__xss=3}{x} "
                         "\\text{<a/id='xss3'/href=\"javascript:window.__xss=3;fetch('/xss-probe-3')\">x</a>}"),
    "svg in mathml": "\\text{<svg/onload=\"window.__xss=4;fetch('/xss-probe-4')\"><image/href='x'/onerror='window.__xss=4'/></svg>}",
}


@pytest.mark.e2e
@pytest.mark.parametrize("vector", list(XSS_VECTORS))
def test_xss_vectors_in_the_query_do_not_run(server, browser, vector):
    payload = XSS_VECTORS[vector]
    browser.open(server.url + "/?q=" + quote(payload, safe=""))
    assert browser.evaluate("document.getElementById('q').value") == payload
    # the page has finished: the formula box holds the rendering (or the text) and the search answered
    browser.wait_for("document.querySelector('#rendered .formula .parse, #rendered .formula .error') !== null")
    browser.wait_for("/hits|error/.test(document.getElementById('status').textContent)")
    # a link the payload made, if any, is followed as a user would (javascript: runs on a click)
    browser.evaluate("[...document.querySelectorAll('#rendered [href], #hits [href]')]"
                     ".filter(e => !e.getAttribute('href').startsWith('/'))"
                     ".forEach(e => e.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}))); true")
    browser.evaluate("new Promise(r => setTimeout(r, 1500))")  # an onerror/onload/ontoggle fires within this
    assert browser.evaluate("window.__xss === undefined"), f"{vector}: the payload ran"
    probes = browser.evaluate("performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)"
                              ".filter(p => p.startsWith('/xss-probe') || p === '/x')")  # its fetch, its src='x'
    assert probes == [], f"{vector}: the payload made a request"
    assert browser.evaluate("document.title") == "mathindex search"
    # and no element of the payload reached the page: the text stays text
    assert browser.evaluate("document.querySelector('#rendered img, #rendered details, #rendered a, #rendered svg, "
                            "#rendered [onerror], #rendered [href]') === null")
