"""What a Lean file can see: its `import` header, read from the corpus, as a file graph.

A proof in file F can name only the declarations of the files F imports (transitively) and those
written earlier in F (ReProver's "accessible premises"). The premise ranker restricts and ranks its
candidates by that when the caller says which file the goal is in (`mathindex premises --file`;
the benchmark knows each goal's file). The graph is read from the sources, not from proofs: a
file's header is what an agent working in it knows, so the held-out files' headers are fair input
(their proofs never are).

`premises/imports.parquet`: one row per Lean file of the corpus roots (with or without
declarations: a file of tactics only still passes its imports on), its imports as corpus files
(imports outside the corpus, `Aesop`, `Batteries`, are left out)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import scipy  # its submodules load when first used (scipy.sparse: 0.18 s, not on a search's path)

from mathindex.corpusfiles import MAX_BYTES, CorpusRoot, Refused, list_files, open_file
from mathindex.lean.lexer import blank

IMPORTS_FILE = "imports.parquet"
IMPORTS = pa.schema([
    pa.field("file", pa.string(), nullable=False),  # relative to its corpus root, as declarations.file
    pa.field("imports", pa.list_(pa.string()), nullable=False),
])
FIRST_BYTES = 1 << 12  # read first: a Mathlib header (copyright, imports) fits
HEADER_BYTES = 1 << 16  # a header longer than this (comments included) is read up to here
_WORD = re.compile(r"\S+")
_MODIFIERS = {"public", "private", "meta", "all"}


def header_imports(text: str) -> list[str]:
    """The modules a Lean file's header imports, in order: `import A`, `public import A`, `meta
    import A`, `import all A`, after an optional `module` or `prelude`, comments skipped. Reading
    stops at the first word that is none of those."""
    return _header(text)[0]


def _header(text: str) -> tuple[list[str], bool]:
    """(header_imports, whether a word after the header was reached: False when `text` may end
    inside the header)."""
    out: list[str] = []
    words = _WORD.findall(blank(text).text)
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("module", "prelude") and not out:
            i += 1
        elif w in _MODIFIERS or w == "import":
            j = i
            while j < len(words) and words[j] in _MODIFIERS:
                j += 1
            if j < len(words) and words[j] != "import":
                return out, True
            j += 1
            while j < len(words) and words[j] in _MODIFIERS:  # `import all A`
                j += 1
            if j >= len(words):
                return out, False
            out.append(words[j])
            i = j + 1
        else:
            return out, True
    return out, False


def module_file(module: str) -> str:
    """`Mathlib.Data.Nat.Basic` -> `Mathlib/Data/Nat/Basic.lean` (a module's file under its root)."""
    return module.replace(".", "/") + ".lean"


def read_imports(roots: list[Path | str]) -> pa.Table:
    """The import graph of every `.lean` file under the roots (IMPORTS), sorted by file. Files are
    read through `corpusfiles` (a FIFO, a link out of the tree or an unreadable file is never
    opened or never blocks); a file that cannot be read imports nothing."""
    heads: dict[str, list[str]] = {}
    for root in roots:
        corpus = CorpusRoot.of(root)
        for rel, path in list_files(Path(root), (".lean",)):
            heads[rel] = [module_file(m) for m in _file_imports(corpus, path)]
    files = sorted(heads)
    return pa.table({"file": files, "imports": [[g for g in heads[f] if g in heads] for f in files]}, schema=IMPORTS)


def _file_imports(corpus: CorpusRoot, path: Path) -> list[str]:
    """The modules a file's header imports: its first FIRST_BYTES, up to HEADER_BYTES for a long
    header; [] for a file corpusfiles refuses."""
    try:
        with open_file(corpus, path, MAX_BYTES[".lean"]) as fh:
            head = fh.read(FIRST_BYTES)
            found, complete = _header(head.decode("utf-8", errors="replace"))
            if not complete and len(head) == FIRST_BYTES:  # a long header: read on
                found = header_imports((head + fh.read(HEADER_BYTES - FIRST_BYTES)).decode("utf-8", errors="replace"))
            return found
    except (Refused, OSError):
        return []


class FileGraph:
    """The import graph over files, opened once: `depths(file)` is each file's import distance from
    it (1: imported directly; 0: the file itself; -1: not imported), cached per file."""

    def __init__(self, table: pa.Table, files: list[str]):
        names = sorted(set(files) | set(table.column("file").to_pylist()))
        self.index = {f: i for i, f in enumerate(names)}
        self.files = [self.index[f] for f in files]  # the caller's file order -> graph node
        src, dst = [], []
        for f, imports in zip(table.column("file").to_pylist(), table.column("imports").to_pylist()):
            for g in imports:
                if g in self.index:
                    src.append(self.index[f])
                    dst.append(self.index[g])
        n = len(names)
        self.graph = scipy.sparse.csr_matrix((np.ones(len(src), np.int8), (src, dst)), shape=(n, n))
        self._cache: dict[str, np.ndarray] = {}

    def __contains__(self, file: str) -> bool:
        return file in self.index

    def depths(self, file: str) -> np.ndarray:
        """int32 import distance of each of the caller's files from `file` (-1 where unreachable)."""
        got = self._cache.get(file)
        if got is None:
            d = scipy.sparse.csgraph.shortest_path(self.graph, indices=self.index[file], unweighted=True)
            got = np.where(np.isfinite(d), d, -1).astype(np.int32)[self.files]
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[file] = got
        return got
