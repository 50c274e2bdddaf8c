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
      if (f.mathml) item.innerHTML = f.mathml;  // MathML from the server's converter, rendered natively
      else item.append(el("code", {}, piece.text));
      item.append(el("span", { class: "muted parse" }, ` ${f.parser} · ${f.status}` + (f.canonical ? ` · ${f.canonical}` : "")));
    } catch (err) {
      item.append(el("code", {}, piece.text), el("span", { class: "error" }, ` ${err.message}`));
    }
  }
}

function renderHit(h) {
  const channels = el("span", { class: "channels" });
  for (const [name, rank] of Object.entries(h.channels)) {
    channels.append(el("span", { class: `channel ch-${name}`, title: `${name} channel rank ${rank}` }, `${name} #${rank}`));
  }
  const loc = h.location || {};
  const where = loc.file ? `${loc.file}${loc.line ? ":" + loc.line : ""}` : "";
  const place = loc.source_url ? el("a", { href: loc.source_url, class: "loc" }, where) : el("span", { class: "loc" }, where);
  return el("li", { class: "hit" },
    el("div", { class: "head" },
      el("a", { href: `/declaration/${encodeURIComponent(h.name)}`, class: "name" }, h.name),
      el("span", { class: "kind" }, h.kind || ""), place, channels),
    h.title ? el("pre", { class: "title" }, h.title) : "");
}

async function search(q, k) {
  const status = $("status");
  const hits = $("hits");
  hits.replaceChildren();
  status.textContent = "searching…";
  renderQuery(q);
  try {
    const r = await getJSON(`/search?q=${encodeURIComponent(q)}&k=${k}`);
    $("release").textContent = `release ${r.release_id}`;
    status.textContent = `${r.hits.length} hits (${r.query_kind} query, ${r.took_ms} ms)`;
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
