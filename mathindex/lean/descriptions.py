"""Descriptions of declarations written elsewhere than their docstring, in the Lean corpus itself.

Two kinds, both human-written English about a named declaration:

- module docs (`/-! ... -/`): the bullets of "Main definitions" / "Main statements" style lists,
  ``* `Sylow.exists_subgroup_card_pow_prime`: A generalization of Sylow's first theorem ...``; the
  name is resolved to a declaration of the corpus: its full name, else the one declaration of the
  same file whose full name ends with `.<name>` (names in module docs are often written relative
  to the namespace that follows);
- the library's curated lists, when the corpus root has them (Mathlib's `docs/100.yaml` and
  `docs/1000.yaml`: a theorem's title and its `decl`/`decls`; `docs/undergrad.yaml` and
  `docs/overview.yaml`: a topic path ending in a declaration name); exact full names only.

A description that names no declaration of the corpus is left out (counted in the log). Each
(declaration, text) pair is one row of the `descriptions` table; `description_texts` joins the
texts of each declaration for the `description` facet of the embedding texts.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import yaml

from mathindex.corpusfiles import CorpusRoot, Refused, max_bytes_for, read_file
from mathindex.schemas.lean import DESCRIPTIONS

log = logging.getLogger(__name__)

SOURCE_MODULE_DOC = "module_doc"
# curated lists under the corpus root: file -> how its entries name declarations
TITLE_LISTS = ("docs/100.yaml", "docs/1000.yaml")
# what a title list's keys are (mathindex/identifiers.py kinds): Freek's numbers, Wikidata QIDs
TITLE_LIST_SCHEMES = {"docs/100.yaml": "freek", "docs/1000.yaml": "wikidata"}
TOPIC_LISTS = ("docs/undergrad.yaml", "docs/overview.yaml")
MAX_DESCRIPTION_CHARS = 600

_MODULE_DOC = re.compile(r"/-!(.*?)-/", re.S)
_BULLET = re.compile(r"^(\s*)[*+-]\s+(.*)$")
_HEADER = re.compile(r"^\s*#+\s*(.*?)\s*#*\s*$")
# one or more backticked names (`a`, `b` / `a` and `b` / `a` (`b`)) then `:`, a dash, or a verb
_NAMED = re.compile(r"^((?:`[^`]+`(?:\s*(?:,|and|or|/|\(|\))\s*)*)+)\s*(?:[:：—–-]+\s*|(?=(?:is|are|states|says|gives|proves|shows)\b))(.+)$")
_TICKED = re.compile(r"`([^`]+)`")
_LIST_KEY = re.compile(rb"^([^\s#:][^:\n]*):")  # a title list's entry key, at the start of a line
_IDENT = re.compile(r"^[^\s`()\[\]{}:,;⟨⟩\"]*[A-Za-z][^\s`()\[\]{}:,;⟨⟩\"]*$")


@dataclass(frozen=True)
class RawDescription:
    """A description as found: the name as written, where, and its text."""

    name: str
    text: str
    source: str
    file: str
    line: int | None


def _clean(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_DESCRIPTION_CHARS else text[:MAX_DESCRIPTION_CHARS].rsplit(" ", 1)[0] + " ..."


def _names(ticked: str) -> list[str]:
    """The identifiers a bullet's backticked head names: each backticked part that is a name applied
    to names (`Sylow p G` names `Sylow`); a part with notation in it (`x ∈ s`) names nothing."""
    out = []
    for part in _TICKED.findall(ticked):
        tokens = part.split()
        if tokens and all(_IDENT.match(t) for t in tokens) and tokens[0] not in out:
            out.append(tokens[0])
    return out


def module_docs(text: str):
    """(1-based line of its first line, body) of each module doc (`/-! ... -/`) of a Lean file."""
    for block in _MODULE_DOC.finditer(text):
        yield text.count("\n", 0, block.start(1)) + 1, block.group(1)


def module_doc_descriptions(text: str, file: str) -> list[RawDescription]:
    """Bullet descriptions of every module doc of one Lean file (see the module docstring).

    A bullet runs on over its indented continuation lines until a blank line, a header or the next
    bullet; its text is prefixed with the module doc's title (its first `#` header) when there is
    one, so that "Sylow theorems: The type of Sylow p-subgroups of G." keeps the topic.
    """
    out: list[RawDescription] = []
    for first_line, body in module_docs(text):
        title = ""
        current: list | None = None  # [names, text, line]

        def flush() -> None:
            if current and current[1].strip():
                desc = _clean(current[1])
                full = f"{title}: {desc}" if title and not desc.lower().startswith(title.lower()) else desc
                out.extend(RawDescription(n, full, SOURCE_MODULE_DOC, file, current[2]) for n in current[0])

        for offset, line in enumerate(body.split("\n")):
            header = _HEADER.match(line)
            bullet = _BULLET.match(line)
            if header and not bullet:
                flush()
                current = None
                if not title:
                    title = _clean(header.group(1))
            elif bullet:
                flush()
                named = _NAMED.match(bullet.group(2).strip())
                names = _names(named.group(1)) if named else []
                current = [names, named.group(2), first_line + offset] if names else None
            elif current is not None and line.strip():
                current[1] += " " + line.strip()
            else:
                flush()
                current = None
        flush()
    return out


def _leaves(node, path: list[str]):
    """(topic path, value) for every string leaf of a nested topic list."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                yield from _leaves(value, path + [str(key)])
            elif isinstance(value, str):
                yield path + [str(key)], value
    elif isinstance(node, list):
        for value in node:
            if isinstance(value, str):
                yield path, value
            else:
                yield from _leaves(value, path)


@dataclass(frozen=True)
class ListEntry:
    """One entry of a title list (TITLE_LISTS) as written: its key (a Wikidata QID in 1000.yaml,
    Freek's number in 100.yaml), what the key is (`scheme`: TITLE_LIST_SCHEMES), its title, the
    declarations it names and the 1-based line of its key."""

    list: str
    key: str
    scheme: str
    title: str
    decls: tuple[str, ...]
    line: int | None


def _load_yaml(rel: str, data: bytes):
    """The YAML document of a curated list; None (logged) when it is not readable YAML."""
    try:
        return yaml.safe_load(data.decode("utf-8", errors="replace"))
    except yaml.YAMLError as exc:
        log.warning("descriptions: %s is not readable YAML (%s); skipped", rel, str(exc).splitlines()[0])
        return None


def list_entries(rel: str, data: bytes) -> list[ListEntry]:
    """The entries of one title list (TITLE_LISTS) with a `title`; `decls` holds its `decl` or
    `decls` names that look like names (none: an entry not formalised)."""
    doc = _load_yaml(rel, data)
    if rel not in TITLE_LISTS or not isinstance(doc, dict):
        return []
    lines: dict[bytes, int] = {}
    for number, text in enumerate(data.split(b"\n"), 1):
        if m := _LIST_KEY.match(text):
            lines.setdefault(m.group(1), number)
    out = []
    for key, entry in doc.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("title"), str):
            continue
        decls = entry.get("decls") if isinstance(entry.get("decls"), list) else [entry.get("decl")]
        out.append(ListEntry(rel, str(key), TITLE_LIST_SCHEMES[rel], _clean(entry["title"]),
                             tuple(d.strip() for d in decls if isinstance(d, str) and _IDENT.match(d.strip())),
                             lines.get(str(key).encode())))
    return out


def list_descriptions(rel: str, data: bytes) -> list[RawDescription]:
    """Descriptions from one curated YAML list (TITLE_LISTS: `title` + `decl`/`decls` per entry;
    TOPIC_LISTS: a topic path whose leaf is a declaration name). Unreadable YAML: none, logged."""
    if rel in TITLE_LISTS:
        return [RawDescription(d, e.title, rel, rel, None) for e in list_entries(rel, data) for d in e.decls]
    doc = _load_yaml(rel, data)
    out: list[RawDescription] = []
    if rel in TOPIC_LISTS and doc is not None:
        for path, value in _leaves(doc, []):
            if path and _IDENT.match(value.strip()) and "://" not in value:
                topic = path[-1] if len(path) == 1 else f"{path[-1]} ({', '.join(path[:-1])})"
                out.append(RawDescription(value.strip(), _clean(topic), rel, rel, None))
    return out


def _list_files(root: Path, rels: tuple[str, ...]):
    """(rel, bytes) of each curated list present under a corpus root (read through corpusfiles: a
    refused file is skipped with a warning, like any corpus file that cannot be read)."""
    confined = CorpusRoot.of(root)
    for rel in rels:
        path = Path(root) / rel
        if not path.exists():
            continue
        try:
            yield rel, read_file(confined, path, max_bytes_for(path))
        except Refused as exc:
            log.warning("descriptions: %s skipped: %s", rel, exc)


def read_lists(root: Path) -> list[RawDescription]:
    """The descriptions of the curated lists present under a corpus root."""
    return [d for rel, data in _list_files(root, TITLE_LISTS + TOPIC_LISTS) for d in list_descriptions(rel, data)]


def read_list_entries(root: Path) -> list[ListEntry]:
    """The entries of the title lists present under a corpus root, keys and all."""
    return [e for rel, data in _list_files(root, TITLE_LISTS) for e in list_entries(rel, data)]


def resolve(raw: list[RawDescription], declarations: pa.Table) -> pa.Table:
    """DESCRIPTIONS rows: each raw description joined to one declaration, one row per (declaration,
    text). A module doc's name is looked up in its own file first (the full name, else the unique
    declaration ending in `.<name>`: `Equiv` in a file about Lie algebra extensions is theirs, not
    the global `Equiv`), then as a full name anywhere; a curated list's name is a full name."""
    if not raw or declarations.num_rows == 0:
        return DESCRIPTIONS.empty_table()
    found = pl.DataFrame(
        {"name": [r.name for r in raw], "text": [r.text for r in raw], "source": [r.source for r in raw],
         "file": [r.file for r in raw], "line": [r.line for r in raw]},
        schema={"name": pl.Utf8, "text": pl.Utf8, "source": pl.Utf8, "file": pl.Utf8, "line": pl.Int32},
    ).with_row_index("raw")
    decls = pl.from_arrow(declarations.select(["decl_id", "full_name", "file"]))
    decls = decls.unique(subset=["full_name"], keep="first", maintain_order=True).sort("full_name")
    docs = found.filter(pl.col("source") == SOURCE_MODULE_DOC)
    in_file = (
        docs.join(decls.rename({"file": "decl_file"}), left_on="file", right_on="decl_file", how="inner")
        .filter((pl.col("full_name") == pl.col("name")) | pl.col("full_name").str.ends_with("." + pl.col("name")))
        .with_columns(exact=pl.col("full_name") == pl.col("name"))
        .sort(["raw", "exact"], descending=[False, True])
        .filter(pl.col("exact") | (pl.len().over("raw") == 1))
        .unique(subset=["raw"], keep="first")
    )
    rest = found.filter(~pl.col("raw").is_in(in_file["raw"].implode()))
    anywhere = rest.join(decls.select("decl_id", "full_name"), left_on="name", right_on="full_name", how="inner")
    anywhere = anywhere.with_columns(full_name=pl.col("name"))
    cols = ["decl_id", "full_name", "source", "text", "file", "line"]
    rows = pl.concat([in_file.select(cols), anywhere.select(cols)]).unique(subset=["decl_id", "text"], keep="first")
    rows = rows.sort(["full_name", "source", "file", "line", "text"], nulls_last=True)
    log.info("descriptions: %d found, %d resolved to %d declarations", len(raw), rows.height, rows["decl_id"].n_unique())
    return rows.to_arrow().select(cols).cast(DESCRIPTIONS)


def description_texts(descriptions: pa.Table) -> dict[str, str]:
    """decl_id -> its descriptions joined (module docs first, then the lists, each text once)."""
    if descriptions is None or descriptions.num_rows == 0:
        return {}
    df = pl.from_arrow(descriptions.select(["decl_id", "source", "file", "line", "text"]))
    df = df.with_columns(order=pl.when(pl.col("source") == SOURCE_MODULE_DOC).then(0).otherwise(1))
    joined = (df.sort(["decl_id", "order", "file", "line"], nulls_last=True)
              .group_by("decl_id", maintain_order=True).agg(pl.col("text").unique(maintain_order=True).str.join(" ; ")))
    return dict(zip(joined["decl_id"].to_list(), joined["text"].to_list()))


__all__ = ["ListEntry", "RawDescription", "description_texts", "list_descriptions", "list_entries", "module_doc_descriptions", "module_docs",
           "read_list_entries", "read_lists", "resolve"]
