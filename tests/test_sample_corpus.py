"""Checks on the bundled sample corpus and its query set, with plain Python (no project imports).

The corpus is data: these tests pin its size, its internal cross-references (tags, `\\ref`,
`@[stacks]`) and that every gold name of `queries.json` really names something in it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
import yaml
from lxml import etree

DATA = Path(__file__).resolve().parent.parent / "data"
SAMPLE = DATA / "sample"
LEAN = SAMPLE / "lean"
LATEX = SAMPLE / "latex"
XML = SAMPLE / "xml"
TAGS = LATEX / "tags" / "tags"
QUERIES = SAMPLE / "queries.json"

STYLES = {"natural", "latex", "lean", "identifier"}
TAG_RE = re.compile(r"^[0-9A-Z]{4}$")
DECL_KEYWORDS = ("theorem", "lemma", "def", "abbrev", "instance", "structure", "class", "inductive", "opaque", "axiom")
DECL_RE = re.compile(
    r"^(?:@\[[^\]]*\]\s*)*(?:(?:private|protected|noncomputable|partial|unsafe|nonrec)\s+)*"
    rf"(?P<kw>{'|'.join(DECL_KEYWORDS)})\b\s*(?P<name>[^\s:({{\[⦃]+)?"
)
ENV_NAMES = ("theorem", "lemma", "proposition", "corollary", "definition", "remark", "example", "thm", "lem", "prop")
ENV_RE = re.compile(r"\\begin\{(" + "|".join(ENV_NAMES) + r")\}")
LABEL_RE = re.compile(r"\\label\{([^}]+)\}")
REF_RE = re.compile(r"\\ref\{([^}]+)\}")


def _strip_lean_comments(text: str) -> str:
    """Lean source with `--` line comments and (nested) `/- … -/` block comments blanked."""
    out, i, depth = [], 0, 0
    while i < len(text):
        if text.startswith("/-", i):
            depth, i = depth + 1, i + 2
        elif depth and text.startswith("-/", i):
            depth, i = depth - 1, i + 2
        elif depth:
            out.append("\n" if text[i] == "\n" else " ")
            i += 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _lean_full_names(text: str) -> list[str]:
    """Full names of the named top-level declarations, tracking `namespace`/`section`/`end`."""
    scopes: list[list[str]] = []  # each scope: the name components it adds (empty for sections)
    names = []
    for raw in _strip_lean_comments(text).splitlines():
        line = raw.strip()
        if m := re.match(r"^namespace\s+(\S+)", line):
            scopes.append(m.group(1).split("."))
        elif re.match(r"^(?:noncomputable\s+)?section\b", line):
            scopes.append([])
        elif re.match(r"^end\b", line):
            scopes.pop()
        elif raw[:1] not in (" ", "\t") and (m := DECL_RE.match(line)) and m.group("name"):
            name = m.group("name")
            prefix = [c for scope in scopes for c in scope]
            names.append(name[len("_root_."):] if name.startswith("_root_.") else ".".join([*prefix, name]))
    assert not scopes, "unbalanced namespace/section/end"
    return names


@cache
def lean_names() -> frozenset[str]:
    return frozenset(n for f in sorted(LEAN.rglob("*.lean")) for n in _lean_full_names(f.read_text(encoding="utf-8")))


@cache
def tex_labels() -> dict[str, set[str]]:
    """`\\label`s per chapter (file stem)."""
    return {f.stem: set(LABEL_RE.findall(f.read_text(encoding="utf-8"))) for f in sorted(LATEX.glob("*.tex"))}


@cache
def tags() -> dict[str, str]:
    """tag -> full label, from the Stacks-format tags file."""
    lines = [ln for ln in TAGS.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    return dict(ln.split(",", 1) for ln in lines)


@cache
def suite() -> dict:
    return json.loads(QUERIES.read_text(encoding="utf-8"))


def _resolves(full_label: str) -> bool:
    """A full label `<chapter>-<label>` names a `\\label` in `<chapter>.tex`."""
    return any(full_label.startswith(stem + "-") and full_label[len(stem) + 1 :] in labels for stem, labels in tex_labels().items())


def test_lean_files_and_declaration_count():
    files = sorted(LEAN.rglob("*.lean"))
    assert len(files) >= 6
    assert all(f.relative_to(LEAN).parts[0] == "MiniMath" for f in files)
    per_file = {f.name: len(_lean_full_names(f.read_text(encoding="utf-8"))) for f in files}
    assert all(n >= 8 for n in per_file.values()), per_file
    assert len(lean_names()) >= 70


def test_lean_has_the_constructs_a_scanner_must_handle():
    text = "\n".join(f.read_text(encoding="utf-8") for f in sorted(LEAN.rglob("*.lean")))
    for needle in ("/-!", "/--", "@[simp]", "@[to_additive", "@[simp, norm_cast]", "@[stacks ", "protected ",
                   "private ", "_root_.", "variable {", "open ", "\nwhere\n", "\nlemma ", "\nabbrev ",
                   "\ninductive ", "\nstructure ", "\nclass ", "extends ", "\ninstance : ", "\ninstance ",
                   "  | ", "∑", "∏", "⁻¹", "∣", "↔", "∀", "∃", "⊆", "ℕ", "ℝ", "ℤ", "≤", "→", "∈"):
        assert needle in text, needle
    assert "MiniMath.Nat.xgcd" in lean_names() and "MiniMath.Prod.instGroup" in lean_names()
    assert "Function.Injective.group_mul_left" in lean_names()


def test_lean_stacks_attributes_name_tags():
    text = "\n".join(f.read_text(encoding="utf-8") for f in sorted(LEAN.rglob("*.lean")))
    cited = re.findall(r"@\[stacks ([0-9A-Z]{4})\]", text)
    assert len(cited) >= 4
    assert set(cited) <= set(tags())


def test_latex_environments_labels_and_refs():
    files = {f.stem: f.read_text(encoding="utf-8") for f in sorted(LATEX.glob("*.tex"))}
    assert len([s for s, t in files.items() if ENV_RE.search(t)]) >= 3
    envs = Counter(e for t in files.values() for e in ENV_RE.findall(t))
    assert sum(envs.values()) >= 35, envs
    assert {"theorem", "lemma", "proposition", "corollary", "definition", "remark", "example"} <= set(envs)
    assert sum(t.count("\\begin{proof}") for t in files.values()) >= 25
    for stem, text in files.items():
        for ref in REF_RE.findall(text):
            assert ref in tex_labels()[stem] or _resolves(ref), f"{stem}.tex: \\ref{{{ref}}} resolves to no label"
    preamble = files["preamble"]
    assert re.search(r"\\newtheorem\{lemma\}\[theorem\]", preamble) and "\\DeclareMathOperator" in preamble
    assert all("\\input{preamble}" in t for s, t in files.items() if ENV_RE.search(t))


def test_tags_file_format_and_targets():
    raw = [ln for ln in TAGS.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    assert all(re.fullmatch(r"[0-9A-Z]{4},[a-z0-9-]+", ln) for ln in raw)
    assert len(raw) == len(tags()) >= 20
    assert list(tags()) == sorted(tags())
    unresolved = [f"{t},{lab}" for t, lab in tags().items() if not _resolves(lab)]
    assert not unresolved


def test_xml_pages_with_math():
    files = sorted(XML.glob("*.xml"))
    assert len(files) == 1
    ns = {"m": "http://www.mediawiki.org/xml/export-0.10/"}
    pages = etree.parse(str(files[0])).findall(".//m:page", ns)
    assert 2 <= len(pages) <= 3
    for page in pages:
        text = page.find(".//m:text", ns).text
        assert text.count("<math") >= 3 and text.count("<math") == text.count("</math>")
        assert int(page.find(".//m:text", ns).get("bytes")) == len(text.encode("utf-8"))


def test_queries_format_and_styles():
    s = suite()
    assert (s["suite"], s["version"], s["k"]) == ("sample", 1, 10)
    assert s["headline"] == ["ndcg@10", "recall@10", "mrr@10"]
    qs = s["queries"]
    assert len(qs) >= 48
    assert len({q["id"] for q in qs}) == len(qs)
    assert len({q["query"] for q in qs}) == len(qs)
    styles = Counter(q["style"] for q in qs)
    assert set(styles) == STYLES
    assert styles["natural"] >= 18 and all(styles[st] >= 10 for st in STYLES), styles
    assert all(q["query"].strip() and 1 <= len(q["gold"]) <= 2 for q in qs)


@pytest.mark.parametrize("query", suite()["queries"], ids=lambda q: q["id"])
def test_gold_is_in_the_corpus(query):
    for gold in query["gold"]:
        if TAG_RE.match(gold):
            assert gold in tags(), f"tag {gold} not in tags/tags"
        elif gold in lean_names():
            continue
        else:
            assert any(gold in labels for labels in tex_labels().values()), f"{gold}: neither a Lean name, a tag nor a label"


def test_natural_queries_are_not_docstring_copies():
    docs = " ".join(" ".join(re.findall(r"/--(.*?)-/", f.read_text(encoding="utf-8"), re.S)) for f in LEAN.rglob("*.lean"))
    docs = re.sub(r"\s+", " ", docs).lower()
    for q in suite()["queries"]:
        if q["style"] == "natural":
            assert q["query"].lower() not in docs, q["id"]


def test_sources_yaml_points_at_the_sample():
    spec = yaml.safe_load((DATA / "sources.yaml").read_text(encoding="utf-8"))
    assert [s["name"] for s in spec["sources"]] == ["sample-lean", "sample-latex", "sample-wiki"]
    for s in spec["sources"]:
        assert (DATA / s["path"]).is_dir(), s
    assert [(DATA / s["path"]).is_file() for s in spec["suites"]] == [True]
    assert (SAMPLE / "README.md").is_file()
