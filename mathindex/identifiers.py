"""External identifiers: the one module that knows their syntax (imports nothing of mathindex).

Kinds: a Wikidata item (`Q11518`), a number of Freek Wiedijk's 100 theorems, an OEIS sequence
(`A000010`), an arXiv id (`2106.01234`, `math/0412512`), a DOI, a MathSciNet number (`MR0344216`),
a zbMATH Zbl number (`Zbl 0273.12001`) and a zbMATH document number. `parse` reads what a user
types (prefixed, bare or as a URL), `from_bib` the fields of a BibTeX entry, `in_text` the URLs and
prefixed forms written in a docstring; each gives `Identifier`s in one normal form, whose `alias`
is the key the nodes table and the resolver share (`doi:10.1007/978-1-4684-9884-4`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

CREDITED = " (module doc)"  # see Identifier.credited_alias
KINDS = ("wikidata", "freek", "oeis", "arxiv", "doi", "mr", "zbl", "zbmath")
# how an identifier of each kind is named to a user ("no DOI 10.5555/x in this release")
_SHOWN = {"wikidata": "Wikidata item {}", "freek": "entry {} of Freek's 100 theorems", "oeis": "OEIS sequence {}",
          "arxiv": "arXiv paper {}", "doi": "DOI {}", "mr": "MathSciNet review {}", "zbl": "zbMATH review Zbl {}",
          "zbmath": "zbMATH document {}"}

_QID = r"[Qq]([1-9]\d{0,11})"
_NEW_ARXIV = r"(\d{2})(\d{2})\.(\d{4,5})"  # YYMM.NNNN (2007-2014) or YYMM.NNNNN (2015 on)
_OLD_ARXIV = r"([a-z]+(?:-[a-z]+)*)(?:\.[A-Za-z]{2})?/(\d{7})"  # archive[.SC]/YYMMNNN
_ARXIV_ID = rf"(?:{_NEW_ARXIV}|{_OLD_ARXIV})(?:v\d+)?"
_DOI = r"(10\.\d{4,9}/[^\s\"<>{}]+)"
_ZBL = r"(\d{4}\.\d{5})"

_TYPED: tuple[tuple[str, re.Pattern], ...] = tuple((kind, re.compile(p, re.IGNORECASE)) for kind, p in (
    ("wikidata", rf"^(?:(?:wikidata|wd)\s*:?\s*)?{_QID}X?$"),
    ("wikidata", rf"^(?:https?://)?(?:www\.|m\.)?wikidata\.org/(?:wiki|entity)/{_QID}/?$"),
    ("freek", r"^(?:freek(?:\s*100)?|100\s*theorems)\s*[:#]?\s*#?\s*(\d{1,3})$"),
    ("oeis", r"^(?:oeis\s*:?\s*)?(A\d{6})$"),
    ("oeis", r"^(?:https?://)?(?:www\.)?oeis\.org/(A\d{6})/?$"),
    ("arxiv", rf"^(?:arxiv\s*:?\s*)?{_ARXIV_ID}$"),
    ("arxiv", rf"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/{_ARXIV_ID}(?:\.pdf)?/?$"),
    ("doi", rf"^(?:doi\s*:?\s*|(?:https?://)?(?:dx\.)?doi\.org/)?{_DOI}$"),
    ("mr", r"^(?:mr\s*:\s*(?:MR)?|MR\s*:?)\s*(\d{1,7})$"),
    ("mr", r"^(?:https?://)?mathscinet\.ams\.org/\S*?[?&]mr=(?:MR)?(\d{1,7})\S*$"),
    ("zbl", rf"^(?:zbl|zbmath)\s*[.:]?\s*{_ZBL}$"),
    ("zbl", rf"^(?:https?://)?(?:www\.)?zbmath\.org/\?q=an:?{_ZBL}$"),
    ("zbmath", r"^zbmath\s*:?\s*(\d{1,9})$"),
))
# the bare forms: a typed query that is only these is an identifier (the rest needs a prefix or a URL)
_ARXIV_OK = re.compile(rf"^{_ARXIV_ID}$", re.IGNORECASE)
# identifiers written in prose (docstrings, module docs): URLs and prefixed forms only
_IN_TEXT = re.compile(
    r"https?://(?:www\.|m\.)?wikidata\.org/(?:wiki|entity)/Q\d+"
    r"|https?://(?:www\.)?oeis\.org/A\d{6}"
    r"|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/[\w./-]+"
    r"|https?://(?:dx\.)?doi\.org/10\.\d{4,9}/[^\s\"<>{}\[\]()]+"
    r"|https?://mathscinet\.ams\.org/\S*?[?&]mr=(?:MR)?\d{1,7}"
    r"|https?://(?:www\.)?zbmath\.org/\?q=an:?\d{4}\.\d{5}"
    r"|\barXiv:\s?(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?"
    r"|\bdoi:\s?10\.\d{4,9}/[^\s\"<>{}\[\]()]+"
    r"|\bOEIS\s+A\d{6}\b|\bMR\s?\d{5,7}\b|\bZbl\.?\s?\d{4}\.\d{5}\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, order=True)
class Identifier:
    """An identifier in normal form: `kind` one of KINDS, `value` as `normal` writes it."""

    kind: str
    value: str

    @property
    def alias(self) -> str:
        """The key the nodes table's aliases and the resolver share: `kind:value`."""
        return f"{self.kind}:{self.value}"

    @property
    def credited_alias(self) -> str:
        """The key of a node the identifier's work is only credited to (by its file's module doc):
        the resolver gives these after the nodes that carry `alias` itself."""
        return self.alias + CREDITED

    @property
    def shown(self) -> str:
        """How a user is told of it: "arXiv paper 2106.01234"."""
        return _SHOWN[self.kind].format(self.value)


def normal(kind: str, value: str) -> Identifier | None:
    """`value` of `kind` in normal form, None when it is not one: a Wikidata QID `Q<n>` (a 1000+
    list's second entry `Q<n>X` is the same item), a Freek number without zeros in front, OEIS
    `A<6 digits>`, an arXiv id without its version (old style `archive/YYMMNNN`, without the
    subject class), a DOI in lower case (DOIs are case-insensitive), `MR<7 digits>`, a Zbl number
    `NNNN.NNNNN`, a zbMATH document number."""
    value = value.strip()
    if kind == "wikidata":
        m = re.fullmatch(r"[Qq]?([1-9]\d{0,11})X?", value)
        return Identifier(kind, f"Q{m.group(1)}") if m else None
    if kind == "freek":
        return Identifier(kind, str(int(value))) if value.isdigit() and 0 < int(value) <= 999 else None
    if kind == "oeis":
        return Identifier(kind, value.upper()) if re.fullmatch(r"[Aa]\d{6}", value) else None
    if kind == "arxiv":
        m = _ARXIV_OK.match(value)
        if not m:
            return None
        if m.group(1):
            yy, mm, number = m.group(1), m.group(2), m.group(3)
            five = (int(yy), int(mm)) >= (15, 1)
            return Identifier(kind, f"{yy}{mm}.{number}") if 1 <= int(mm) <= 12 and len(number) == (5 if five else 4) else None
        return Identifier(kind, f"{m.group(4).lower()}/{m.group(5)}")
    if kind == "doi":
        m = re.fullmatch(_DOI, unquote(value).rstrip(".,;"))
        return Identifier(kind, m.group(1).lower()) if m else None
    if kind == "mr":
        m = re.fullmatch(r"(?:MR)?\s*(\d{1,7})", value, re.IGNORECASE)
        return Identifier(kind, f"MR{int(m.group(1)):07d}") if m and int(m.group(1)) else None
    if kind == "zbl":
        return Identifier(kind, value) if re.fullmatch(_ZBL, value) else None
    if kind == "zbmath":
        return Identifier(kind, str(int(value))) if value.isdigit() and int(value) else None
    return None


def parse(query: str) -> Identifier | None:
    """The identifier a typed query is, in normal form: `Q11518`, `wikidata:Q11518`, a Wikidata
    URL, `freek 11`, `A000010`, `oeis:A000010`, `arXiv:2106.01234`, `2106.01234v2`, an arXiv abs or
    pdf URL, `10.1007/...`, `doi:10...`, `https://doi.org/...`, `MR0344216`, `MR 344216`, a
    MathSciNet URL, `Zbl 0273.12001`, a zbMATH URL, `zbmath:783754`; None for anything else."""
    q = query.strip().strip("`<>").strip()
    q = unquote(q) if "%" in q else q  # a URL as copied: https://doi.org/10.1016%2F...
    for kind, pattern in _TYPED:
        m = pattern.match(q)
        if m:
            found = normal(kind, _arxiv_part(m) if kind == "arxiv" else m.group(1))
            if found is not None:
                return found
    return None


def _arxiv_part(m: re.Match) -> str:
    """The id of a prefixed or URL arXiv match (the groups of `_ARXIV_ID`, version dropped)."""
    return f"{m.group(1)}{m.group(2)}.{m.group(3)}" if m.group(1) else f"{m.group(4)}/{m.group(5)}"


def in_text(text: str) -> list[tuple[int, Identifier]]:
    """(offset, identifier) of each identifier a docstring or module doc writes as a URL or a
    prefixed form (`arXiv:...`, `doi:...`, `OEIS A000045`, `MR 1234567`, `Zbl 0273.12001`), in
    order, each identifier once."""
    out: dict[Identifier, int] = {}
    for m in _IN_TEXT.finditer(text or ""):
        raw = m.group(0).rstrip(".,;:")
        found = parse(re.sub(r"^(OEIS|Zbl\.?)\s+", lambda p: p.group(1).rstrip(".") + ":", raw, flags=re.IGNORECASE))
        if found is not None:
            out.setdefault(found, m.start())
    return [(offset, found) for found, offset in out.items()]


def from_bib(fields: Mapping[str, str]) -> list[Identifier]:
    """The identifiers of a BibTeX entry's fields (lower-case names): `doi`, `eprint` (with
    `archiveprefix` arXiv, or an arXiv id or a URL), `arxiv`, `mrnumber`, `zbl`, `zbmath`, and a
    `url` that is one of the URLs `parse` knows; each once, in that order."""
    values: list[Identifier | None] = []
    for doi in _split(fields.get("doi")):
        values.append(parse(doi) or normal("doi", doi))
    for eprint in _split(fields.get("eprint")):
        arxiv = fields.get("archiveprefix", "").strip().lower() == "arxiv"
        values.append(normal("arxiv", eprint) if arxiv else parse(eprint) if "/" in eprint else normal("arxiv", eprint))
    values.extend(parse(v) for v in _split(fields.get("arxiv")))
    values.extend(normal("mr", v.split("(")[0]) for v in _split(fields.get("mrnumber"), ","))
    values.extend(normal("zbl", v.removeprefix("Zbl").strip()) for v in _split(fields.get("zbl"), ","))
    values.extend(normal("zbmath", v) for v in _split(fields.get("zbmath"), ","))
    values.extend(parse(v) for v in _split(fields.get("url")))
    out: list[Identifier] = []
    for v in values:
        if v is not None and v not in out:
            out.append(v)
    return out


def _split(value: str | None, extra: str = "") -> Iterable[str]:
    """A field's whitespace- (and `extra`-) separated parts."""
    if not value:
        return ()
    return [p for p in re.split(rf"[\s{re.escape(extra)}]+", value.strip()) if p]


def not_found(identifier: Identifier) -> str:
    """The notice for an identifier no node of the release carries."""
    return f"no {identifier.shown} in this release"


__all__ = ["KINDS", "Identifier", "from_bib", "in_text", "normal", "not_found", "parse"]
