"""Sentences of Lean module docs (`/-! ... -/`) that name declarations: training anchors for the
declarations they name (`embed.pairs`, kind `module_doc`).

The release keeps no module doc text (only the "Main statements" bullets, as `descriptions`), so
the sentences are read again from the corpus files the declarations were extracted from (through
`corpusfiles`), and only when a recipe asks for them. A sentence names a declaration when a
backticked part of it is the declaration's name applied to names (`Sylow p G` names `Sylow`),
resolved as the `descriptions` rows are (`lean.descriptions.resolve`: in its own file the full
name, else the one declaration ending in `.<name>`), and kept when it is a declaration of that
module: a module doc mentions other modules' declarations in passing (`closure s`). In the anchor the
declaration's own name is masked (a bullet's `name:` head dropped, any other mention read `this`), so
that a pair teaches what the sentence says, not the name the statement already spells.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.corpusfiles import CorpusRoot, Refused, max_bytes_for, read_file
from mathindex.lean.descriptions import SOURCE_MODULE_DOC, RawDescription, module_docs, resolve

log = logging.getLogger(__name__)

MODULE_DOC_SENTENCES = pa.schema([pa.field("full_name", pa.string(), nullable=False),
                                  pa.field("text", pa.string(), nullable=False)])
MAX_NAMED = 4  # a sentence naming more declarations than this is a list, not a description of one
MAX_SENTENCE_CHARS = 600

_HEADER = re.compile(r"^\s*#+\s")
_BULLET = re.compile(r"^\s*(?:[*+-]|\d+[.)])\s+")
_FENCE = re.compile(r"^\s*```")
_SPAN = re.compile(r"(`[^`\n]+`)")
_CUT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")  # a sentence ends before a capital (`e.g. `f`` goes on)
_HEAD = re.compile(r"^((?:`[^`]+`(?:\s*(?:,|and|or|/)\s*)*)+)\s*[:：—–-]")  # a bullet's `name`, `name'`: head
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
# a Lean name as a module doc writes it: no spaces, brackets or notation, at least one letter
_NAME = re.compile(r"^[^\s`()\[\]{}:,;⟨⟩\"]*[A-Za-z][^\s`()\[\]{}:,;⟨⟩\"]*$")
MIN_NAME_CHARS = 3  # `p`, `G`, `nₚ`: the variables of the prose, not declarations
KEYWORDS = frozenset({"open", "variable", "namespace", "section", "theorem", "lemma", "def", "instance", "class",
                      "structure", "import", "simp", "by", "fun", "let", "have", "show", "Type", "Prop", "Sort",
                      "where", "with", "match", "example", "abbrev", "deriving", "local", "scoped", "attribute"})


def blocks(body: str) -> list[tuple[int, str]]:
    """(line offset, text) of the prose blocks of one module doc body: a paragraph or one bullet with
    its continuation lines; headers and fenced code left out."""
    out: list[tuple[int, str]] = []
    current: list | None = None  # [offset, text]
    fenced = False
    for offset, line in enumerate(body.split("\n")):
        if _FENCE.match(line):
            fenced = not fenced
            current = None
            continue
        if fenced or _HEADER.match(line) or not line.strip():
            current = None
            continue
        bullet = _BULLET.match(line)
        if bullet or current is None:
            current = [offset, line[bullet.end():] if bullet else line]
            out.append(current)
        else:
            current[1] += " " + line
    return [(offset, " ".join(text.split())) for offset, text in out]


def sentences(block: str) -> list[str]:
    """A block cut into sentences (never inside a backticked part), markdown emphasis and links read as text."""
    block = _LINK.sub(r"\1", block).replace("**", "")
    parts = _SPAN.split(block)
    out, current = [], ""
    for i, part in enumerate(parts):
        if i % 2:  # a backticked part
            current += part
            continue
        pieces = _CUT.split(part)
        current += pieces[0]
        for piece in pieces[1:]:
            out.append(current)
            current = piece
    out.append(current)
    return [s.strip() for s in out if s.strip()]


def named(sentence: str) -> list[str]:
    """The names a sentence's backticked parts are (each once, in order): a part that is a name
    applied to names names its first token; a part with notation in it, a keyword or a name shorter
    than MIN_NAME_CHARS names nothing. A sentence with a head (`` `a`, `b`: ... ``) names its head's
    names only: the others it mentions are what it is said with."""
    head = _HEAD.match(sentence)
    out: list[str] = []
    for span in _SPAN.findall(head.group(1) if head else sentence):
        tokens = span.strip("`").split()
        if (tokens and all(_NAME.match(t) for t in tokens) and len(tokens[0]) >= MIN_NAME_CHARS
                and tokens[0] not in KEYWORDS and tokens[0] not in out):
            out.append(tokens[0])
    return out


def masked(sentence: str, name: str) -> str:
    """The sentence with `name` masked: a leading `name ...`: head dropped, every other backticked
    part naming it read `this`."""
    own = r"`" + re.escape(name) + r"(?:\s[^`]*)?`"
    text = re.sub(r"^" + own + r"\s*(?:[:：—–-]+|\bis\b|\bare\b)?\s*", "", sentence)
    return " ".join(re.sub(own, "this", text).split()).lstrip(",;:.—–- ")


def file_sentences(text: str, file: str) -> list[RawDescription]:
    """One RawDescription per (sentence, name it names) of every module doc of one Lean file, the
    text masked for that name; sentences naming more than MAX_NAMED names, and TODOs, are left out."""
    out = []
    for first_line, body in module_docs(text):
        for offset, block in blocks(body):
            for sentence in sentences(block):
                names = named(sentence)
                if not names or len(names) > MAX_NAMED or len(sentence) > MAX_SENTENCE_CHARS or sentence.startswith("TODO"):
                    continue
                out.extend(RawDescription(n, masked(sentence, n), SOURCE_MODULE_DOC, file, first_line + offset)
                           for n in names)
    return out


def module_doc_sentences(roots: dict[str, Path], declarations: pa.Table) -> pa.Table:
    """MODULE_DOC_SENTENCES rows (declaration, masked sentence) of the module docs of every file the
    `declarations` (decl_id, corpus, full_name, file) come from, read under their corpus's root
    (`roots`: corpus name -> root); a corpus without a root, or a file that cannot be read, gives none."""
    files = declarations.select(["corpus", "file"]).group_by(["corpus", "file"]).aggregate([]).to_pylist()
    raw: list[RawDescription] = []
    for corpus, rel in sorted((f["corpus"], f["file"]) for f in files):
        root = roots.get(corpus)
        if root is None:
            continue
        path = Path(root) / rel
        try:
            data = read_file(CorpusRoot.of(root), path, max_bytes_for(path))
        except (Refused, OSError) as exc:
            log.warning("module doc sentences: %s skipped: %s", rel, exc)
            continue
        if b"/-!" in data:
            raw.extend(file_sentences(data.decode("utf-8", errors="replace"), rel))
    decls = declarations.select(["decl_id", "full_name", "file"])
    rows = pl.from_arrow(resolve(raw, decls)).select("full_name", "text", said_in="file")
    home = pl.from_arrow(decls).select("full_name", "file").unique("full_name", keep="first", maintain_order=True)
    rows = rows.join(home, on="full_name").filter(pl.col("file") == pl.col("said_in"))  # the module's own declarations
    return rows.select("full_name", "text").unique().sort(["full_name", "text"]).to_arrow().cast(MODULE_DOC_SENTENCES)


__all__ = ["MODULE_DOC_SENTENCES", "blocks", "file_sentences", "masked", "module_doc_sentences", "named", "sentences"]
