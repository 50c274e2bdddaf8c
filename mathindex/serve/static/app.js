// The search page: plain DOM code, shipped in the package (no framework, nothing fetched elsewhere).
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// MathML from the server is sanitised there (serve/mathml.py); it is rebuilt here again from the same
// allowlist with DOM calls (tests/test_serve_mathml.py checks the lists agree), never parsed as HTML.
const MATHML_NS = "http://www.w3.org/1998/Math/MathML";
const MATHML_ELEMENTS = new Set([
  "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub", "msubsup", "mfrac", "msqrt",
  "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom",
  "menclose", "merror", "mfenced", "mmultiscripts", "mprescripts", "none", "semantics", "annotation",
]);
const MATHML_TOKENS = new Set(["mi", "mn", "mo", "ms", "mtext", "annotation"]);
const MATHML_ATTRIBUTES = new Set([
  "display", "displaystyle", "scriptlevel", "mathvariant", "mathsize", "mathcolor", "mathbackground", "dir",
  "stretchy", "fence", "form", "separator", "lspace", "rspace", "accent", "accentunder", "movablelimits",
  "largeop", "symmetric", "minsize", "maxsize", "width", "height", "depth", "voffset", "linethickness",
  "notation", "columnalign", "rowalign", "columnspan", "rowspan", "columnlines", "rowlines", "columnspacing",
  "rowspacing", "frame", "open", "close", "separators", "encoding",
]);
const MATHML_VALUE = /^[\w#.,%+\- ()\[\]{}|/]{0,64}$/u;

// A <math> element built with createElementNS from the allowed part of `markup` (XML), or null.
function mathNode(markup) {
  if (typeof markup !== "string" || !markup) return null;
  const doc = new DOMParser().parseFromString(markup, "application/xml");
  const root = doc.documentElement;
  if (doc.getElementsByTagName("parsererror").length || root.namespaceURI !== MATHML_NS || root.localName !== "math") return null;
  const copy = (source, depth) => {
    const node = document.createElementNS(MATHML_NS, source.localName);
    for (const a of source.attributes) {
      if (!a.namespaceURI && MATHML_ATTRIBUTES.has(a.localName) && MATHML_VALUE.test(a.value)) node.setAttribute(a.localName, a.value);
    }
    for (const child of source.childNodes) {
      if (child.nodeType === Node.TEXT_NODE || child.nodeType === Node.CDATA_SECTION_NODE) {
        node.append(document.createTextNode(child.nodeValue));
      } else if (child.nodeType === Node.ELEMENT_NODE && depth < 64 && !MATHML_TOKENS.has(source.localName)
                 && child.namespaceURI === MATHML_NS && MATHML_ELEMENTS.has(child.localName) && child.localName !== "math") {
        node.append(copy(child, depth + 1));
      }
    }
    return node;
  };
  return copy(root, 0);
}

// Text with its formulas: server parts ({text} or {latex, mathml}) as text nodes and MathML.
function partsNode(tag, cls, parts) {
  const node = el(tag, { class: cls });
  for (const p of parts) {
    const math = p.mathml ? mathNode(p.mathml) : null;
    if (math) node.append(math);
    else node.append(document.createTextNode(p.text !== undefined && p.text !== null ? p.text : `$${p.latex || ""}$`));
  }
  return node;
}

// The formulas of a query as the user typed them: its $…$, \(…\) and `…` pieces, else the whole
// query when it looks like LaTeX (a backslash, ^ or _).
function formulaPieces(q) {
  const found = [];
  const re = /\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|`([^`]+)`/gs;
  let m;
  while ((m = re.exec(q)) !== null) {
    const text = (m[1] || m[2] || m[3] || m[4] || "").trim();
    if (text) found.push({ text, lean: m[4] !== undefined });
  }
  if (!found.length && /[\\^_]/.test(q)) found.push({ text: q.trim(), lean: false });
  return found;
}

async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

async function renderQuery(q) {
  const box = $("rendered");
  box.replaceChildren();
  const pieces = formulaPieces(q);
  $("query-view").hidden = pieces.length === 0;
  for (const piece of pieces) {
    const item = el("div", { class: "formula" });
    box.append(item);
    if (piece.lean) {
      item.append(el("code", {}, piece.text));
      continue;
    }
    try {
      const f = await getJSON(`/formula?latex=${encodeURIComponent(piece.text)}`);
      const math = mathNode(f.mathml);
      item.append(math || el("code", {}, piece.text));
      item.append(el("span", { class: "muted parse" }, ` ${f.parser} · ${f.status}` + (f.canonical ? ` · ${f.canonical}` : "")));
    } catch (err) {
      item.append(el("code", {}, piece.text), el("span", { class: "error" }, ` ${err.message}`));
    }
  }
}

function channelsNode(ranks) {
  const channels = el("span", { class: "channels" });
  for (const [name, rank] of Object.entries(ranks || {})) {
    const known = /^[a-z]+$/.test(name) ? name : "other";
    channels.append(el("span", { class: `channel ch-${known}`, title: `${name} channel rank ${rank}` }, `${name} #${rank}`));
  }
  return channels;
}

function placeNode(loc) {
  loc = loc || {};
  const where = loc.file ? `${loc.file}${loc.line ? ":" + loc.line : ""}` : "";
  return loc.source_url ? el("a", { href: loc.source_url, class: "loc" }, where) : el("span", { class: "loc" }, where);
}

// A node folded into the hit (it states the same fact): "also in Stacks 0BQX", its place and its own ranks.
function renderAlso(m) {
  return el("div", { class: "also" },
    document.createTextNode(`also in ${m.also_in || ""} `),
    el("a", { href: `/decl/${encodeURIComponent(m.name)}`, class: "name" }, m.name),
    el("span", { class: "kind" }, m.kind || ""), placeNode(m.location), channelsNode(m.channels));
}

function renderHit(h) {
  return el("li", { class: "hit" },
    el("div", { class: "head" },
      el("a", { href: `/decl/${encodeURIComponent(h.name)}`, class: "name" }, h.name),
      el("span", { class: "kind" }, h.kind || ""), placeNode(h.location), channelsNode(h.channels)),
    ...(Array.isArray(h.also) ? h.also.map(renderAlso) : []),
    Array.isArray(h.title_parts) && h.title_parts.length ? partsNode("div", "title statement", h.title_parts)
      : h.title ? el("pre", { class: "title" }, h.title) : "");
}

// How sure the answer is (`match`: strong, weak or none) and what the server wants said first (`notice`),
// when the server sends them.
function renderVerdict(r) {
  const notice = $("notice");
  notice.replaceChildren();
  notice.hidden = true;
  if (typeof r.notice === "string" && r.notice) {
    notice.append(document.createTextNode(r.notice));
    notice.hidden = false;
  }
  const badge = $("match");
  badge.replaceChildren();
  badge.hidden = true;
  badge.className = "match";
  if (typeof r.match === "string" && ["strong", "weak", "none"].includes(r.match)) {
    const words = { strong: "strong match", weak: "weak match: read with care", none: "no convincing match" };
    badge.append(document.createTextNode(words[r.match]));
    badge.classList.add(`match-${r.match}`);
    badge.hidden = false;
  }
}

async function search(q, k) {
  const status = $("status");
  const hits = $("hits");
  hits.replaceChildren();
  renderVerdict({});
  status.textContent = "searching…";
  renderQuery(q);
  try {
    const r = await getJSON(`/search?q=${encodeURIComponent(q)}&k=${k}`);
    $("release").textContent = `release ${r.release_id}`;
    status.textContent = `${r.hits.length} hits (${r.query_kind} query, ${r.took_ms} ms)`;
    renderVerdict(r);
    for (const h of r.hits) hits.append(renderHit(h));
  } catch (err) {
    status.textContent = `error: ${err.message}`;
  }
}

$("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const q = $("q").value;
  const k = $("k").value;
  if (!q.trim()) return;
  history.replaceState(null, "", `/?q=${encodeURIComponent(q)}&k=${k}`);
  search(q, k);
});

const params = new URLSearchParams(location.search);
if (params.get("q")) {
  $("q").value = params.get("q");
  if (params.get("k")) $("k").value = params.get("k");
  search(params.get("q"), $("k").value);
}
getJSON("/health").then((h) => { if (!$("release").textContent) $("release").textContent = `release ${h.release_id}`; }).catch(() => {});
