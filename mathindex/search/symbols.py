"""The LaTeX-to-Lean symbol map: which Lean name words a LaTeX command stands for, mined from the
corpus itself, and its use at query time.

A document is a declaration (its docstring and type) or a module doc or description attached to
one; its mathematics, the LaTeX commands of the prose (`\\binom`, `\\varphi`, `\\|`) and the Unicode
symbols of the type (`‖`, `∑`, `φ`: what notation declarations print), is paired with the words of
the Lean names beside it: the declaration's own name, the identifiers of its type and the names in
backticks. A command counts under its Unicode character where it has one (`\\|` -> ‖). An association
is kept when it is frequent (`MIN_PAIR_DOCS` documents and `MIN_PRECISION` of the command's) and
specific (pointwise mutual information at least `MIN_PMI`), at most `TOP_WORDS` words a command. At query time
the words of a formula query's commands are appended to what the lexical channel sees, so
`\\binom{n}{k}` meets `Nat.choose n k`.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from latex2mathml.symbols_parser import convert_symbol

from mathindex.formula.symbols import GREEK, UNICODE
from mathindex.schemas.search import LATEX_SYMBOLS
from mathindex.store.layout import ReleaseLayout

SYMBOLS_FILE = "latex_symbols.parquet"
# frequent and specific: bench/experiments/symbol_map.py, whole-Mathlib release, MathlibQR dev (two-fold CV by target)
MIN_PAIR_DOCS, MIN_PRECISION, MIN_PMI, TOP_WORDS = 2, 0.05, 2.0, 3
COMMAND_PATTERN = r"\\(?:[A-Za-z]+|\|)"
# Unicode mathematics in Lean types: Greek letters, arrows, operators, ‖
SYMBOL_PATTERN = r"[\u0370-\u03FF\u2016\u2190-\u22FF\u2980-\u2AFF]"
# commands that carry no constant: spacing, fonts, delimiters' sizes, environments, text
LAYOUT_COMMANDS = frozenset(
    r"\left \right \big \Big \bigg \Bigg \bigl \bigr \Bigl \Bigr \biggl \biggr \quad \qquad \mathrm \mathbf "
    r"\mathit \mathsf \mathtt \text \textrm \textbf \textit \emph \operatorname \begin \end \label \ref \cite "
    r"\displaystyle \limits \nolimits \cdots \ldots \dots \vdots \ddots \item \hline \mathcal \mathbb \mathfrak "
    r"\mathscr \boldsymbol \tfrac \dfrac \frac \sqrt \hat \bar \tilde \overline \underline \widehat \widetilde "
    r"\mbox \hbox \newline \noindent \par \url \href \footnote \infty".split()
)
_CAMEL = r"([a-z0-9])([A-Z])"
WORD_STOP = frozenset("the and for with theorem lemma def instance type prop sort".split())


def documents(declarations: pl.LazyFrame, descriptions: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """(doc, math, names): one row per declaration and per description attached to one. `math` is
    the LaTeX of its docstring or description and the Unicode mathematics of its type (`‖x‖`, `φ n`:
    what notation declarations print); `names` its Lean text: the declaration's name, the identifiers
    of its type and the names in backticks."""
    typed = declarations.select(pl.col("full_name").alias("name"), pl.col("type").fill_null("").alias("type"))
    parts = [declarations.select(pl.col("full_name").alias("name"), pl.col("docstring").fill_null("").alias("text"))]
    if descriptions is not None:
        parts.append(descriptions.select(pl.col("full_name").alias("name"), pl.col("text").fill_null("")))
    code = pl.col("text").str.extract_all(r"`[^`]*`").list.join(" ")
    return (pl.concat(parts).join(typed, on="name", how="left").with_row_index("doc")
            .select("doc", pl.concat_str([pl.col("text"), pl.col("type").fill_null("")], separator=" ").alias("math"),
                    pl.concat_str([pl.col("name"), pl.col("type").fill_null(""), code], separator=" ").alias("names")))


def _grammar_keys() -> tuple[dict[str, str], dict[str, str]]:
    """(Greek letter name -> the letter Lean prints, command -> its Unicode symbol), from the formula
    grammar's own tables (formula/symbols.py GREEK and UNICODE): `\\phi`, `\\varphi`, ϕ -> φ; `\\le` -> ≤."""
    letters: dict[str, str] = {}
    for key, name in GREEK.items():
        if len(key) == 1 and not key.isascii():
            letters.setdefault(name, key)
    symbols: dict[str, str] = {}
    for char, command in UNICODE.items():
        if len(char) == 1 and command.startswith("\\"):
            symbols.setdefault(command, char)
    return letters, symbols


def keys_of(commands: list[str]) -> dict[str, str]:
    """command or symbol -> the key it is counted under: the symbol the formula grammar's tables
    give it (Greek letters by name, so `\\phi`, `\\varphi`, ϕ and φ meet), else the Unicode
    character latex2mathml gives it (as search/text.py does: `\\|` and `\\Vert` -> ‖, `\\sqrt` -> √),
    else the command itself."""
    letters, symbols = _grammar_keys()
    out = {}
    for c in commands:
        if c in GREEK and GREEK[c] in letters:
            out[c] = letters[GREEK[c]]
        elif c in symbols:
            out[c] = symbols[c]
        else:
            code = convert_symbol(c) if c.startswith("\\") else None
            out[c] = chr(int(code, 16)) if code else c
    return out


def _words(names: pl.Expr) -> pl.Expr:
    """The lowercase words (3+ letters) of the identifiers in a Lean text: `Nat.choose_symm` ->
    nat, choose, symm; `(p + 1).choose i` -> choose."""
    return (names.str.replace_all(_CAMEL, "${1}_${2}").str.extract_all(r"[A-Za-z]{3,}")
            .list.eval(pl.element().str.to_lowercase()))


def mine(docs: pl.LazyFrame, min_pair_docs: int = MIN_PAIR_DOCS, min_pmi: float = MIN_PMI,
         top_words: int = TOP_WORDS, min_precision: float = MIN_PRECISION) -> pl.DataFrame:
    """The symbol map (LATEX_SYMBOLS columns) from `documents`: document counts of each command,
    word and pair; kept when frequent and specific, the `top_words` best by PMI a command."""
    docs = docs.collect().lazy()  # once: a join's row order differs between two runs of one plan
    found = (docs.select("doc", pl.col("math").str.extract_all(f"{COMMAND_PATTERN}|{SYMBOL_PATTERN}").alias("command"))
             .explode("command").drop_nulls().filter(~pl.col("command").is_in(list(LAYOUT_COMMANDS))))
    keys = keys_of(found.select(pl.col("command").unique()).collect().to_series().to_list())
    commands = found.with_columns(pl.col("command").replace_strict(keys, return_dtype=pl.String)).unique()
    words = (docs.select("doc", _words(pl.col("names")).alias("word")).explode("word")
             .filter(pl.col("word").is_not_null() & ~pl.col("word").is_in(list(WORD_STOP))).unique())
    n_docs = commands.select(pl.col("doc").n_unique()).collect().item()
    c_docs = commands.group_by("command").agg(pl.len().alias("command_docs"))
    w_docs = words.group_by("word").agg(pl.len().alias("word_docs"))
    pairs = (commands.join(words, on="doc").group_by("command", "word").agg(pl.len().alias("pair_docs"))
             .filter(pl.col("pair_docs") >= min_pair_docs)
             .join(c_docs, on="command").join(w_docs, on="word")
             .with_columns((pl.lit(float(max(n_docs, 1))) * pl.col("pair_docs")
                            / (pl.col("command_docs") * pl.col("word_docs"))).log().alias("pmi"))
             .filter((pl.col("pmi") >= min_pmi) & (pl.col("pair_docs") >= min_precision * pl.col("command_docs"))))
    ranked = pairs.sort(["command", "pmi", "pair_docs", "word"], descending=[False, True, True, False])
    return (ranked.group_by("command", maintain_order=True).head(top_words)
            .select([f.name for f in LATEX_SYMBOLS]).with_columns(pl.col(c).cast(pl.Int64) for c in ("pair_docs", "command_docs", "word_docs"))
            .collect())


def mine_release(release: Path, **limits) -> pl.DataFrame:
    """The symbol map of a built release, from its declarations and descriptions."""
    layout = ReleaseLayout(release)

    def scan(name: str, columns: list[str]) -> pl.LazyFrame | None:
        path = layout.table(name)
        return pl.scan_parquet(path).select(columns) if path.exists() else None

    docs = documents(scan("declarations", ["full_name", "type", "docstring"]), scan("descriptions", ["full_name", "text"]))
    return mine(docs, **limits)


def notation_associations(notations: pl.DataFrame, scopes: tuple[str, ...] = ("global", "scoped")) -> pl.DataFrame:
    """The symbol map (LATEX_SYMBOLS columns) that notation declarations state (lean/notations.py:
    `scoped notation "φ" => Nat.totient` gives φ -> totient): each atom of a command in `scopes`
    (local notations are mostly a proof's abbreviations) with the words of its target's last name
    component, counted over notation commands as `mine` counts documents, every association kept."""
    rows = (notations.filter(pl.col("scope").is_in(list(scopes)) & pl.col("target").is_not_null())
            .with_row_index("doc")
            .select("doc", pl.col("atoms").alias("command"),
                    _words(pl.col("target").str.split(".").list.last()).alias("word")))
    if rows.height == 0:
        return pl.from_arrow(LATEX_SYMBOLS.empty_table())
    keys = keys_of(rows["command"].explode().drop_nulls().unique().to_list())
    pairs = (rows.explode("command").explode("word").drop_nulls()
             .with_columns(pl.col("command").replace_strict(keys, return_dtype=pl.String)).unique())
    n_docs = pairs["doc"].n_unique()
    c_docs = pairs.select("doc", "command").unique().group_by("command").agg(pl.len().alias("command_docs"))
    w_docs = pairs.select("doc", "word").unique().group_by("word").agg(pl.len().alias("word_docs"))
    return (pairs.group_by("command", "word").agg(pl.len().alias("pair_docs"))
            .join(c_docs, on="command").join(w_docs, on="word")
            .with_columns((pl.lit(float(n_docs)) * pl.col("pair_docs") / (pl.col("command_docs") * pl.col("word_docs"))).log().alias("pmi"))
            .sort(["command", "pmi", "pair_docs", "word"], descending=[False, True, True, False])
            .select([f.name for f in LATEX_SYMBOLS])
            .with_columns(pl.col(c).cast(pl.Int64) for c in ("pair_docs", "command_docs", "word_docs")))


def write_symbols(table: pl.DataFrame, path: Path) -> None:
    """Writes the map against LATEX_SYMBOLS (sorted by command, then PMI), via a staging file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_suffix(".tmp")
    pq.write_table(pa.Table.from_pylist(table.to_dicts(), schema=LATEX_SYMBOLS), staged)
    staged.replace(path)


class SymbolMap:
    """command -> its words, best first; `expand` appends a query's words to it."""

    def __init__(self, table: pl.DataFrame, min_pmi: float = 0.0, top_words: int | None = None):
        kept = table.filter(pl.col("pmi") >= min_pmi).sort(["command", "pmi"], descending=[False, True])
        self.words: dict[str, list[str]] = {}
        for command, word in kept.select("command", "word").iter_rows():
            if top_words is None or len(self.words.setdefault(command, [])) < top_words:
                self.words.setdefault(command, []).append(word)

    @classmethod
    def read(cls, path: Path, **limits) -> "SymbolMap":
        return cls(pl.read_parquet(path), **limits)

    def words_of(self, query: str) -> list[str]:
        """The mapped words of the query's commands, each once, in the order they come."""
        out: dict[str, None] = {}
        found = re.findall(f"{COMMAND_PATTERN}|{SYMBOL_PATTERN}", query)
        for key in keys_of(found).values():
            out.update(dict.fromkeys(self.words.get(key, ())))
        return list(out)

    def expand(self, query: str) -> str:
        """The query with its commands' words appended (the query itself when none is mapped)."""
        words = self.words_of(query)
        return f"{query} {' '.join(words)}" if words else query


def release_symbols(release: Path, path: Path | None = None) -> SymbolMap | None:
    """The LaTeX symbol map the lexical channel expands formula queries with: `path`, else the
    release's own file, else None (no expansion)."""
    path = path if path is not None else Path(release) / SYMBOLS_FILE
    return SymbolMap.read(path) if path.exists() else None
