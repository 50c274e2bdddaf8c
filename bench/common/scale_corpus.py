"""A synthetic corpus k times a base (bench/scale.py): k renamed copies of a Lean tree and of a
Stacks-style LaTeX tree, so that nothing collides between copies and references resolve inside each.

Lean, copy i: every identifier component that names a namespace (a `namespace A.B` component, a
non-last component of a declared name, a top-level module directory; capitalised, so no keyword,
tactic or attribute is touched) gets the suffix `_k<i>` everywhere in the copy's text (imports,
namespaces, declaration names, references, doc comments) and in its file paths (module paths), and
each file's body is wrapped in `namespace ScaleK<i>` after its header, so root-level declarations
differ too. The renaming is one bijection on components, applied to every component alike, so a
written name resolves to the renamed full name exactly as it resolved before. `@[stacks TAG]`
attributes cite the copy's own tags.

LaTeX, copy i (a folder `k<i>/` of the source: file stems stay, so Stacks' `<file>-<label>` labels
still work): every key of `\\label`, `\\ref` (and `\\eqref`, `\\cref`, `\\hyperref[...]`, ...) gets the
suffix `-k<i>`, and the tags file (one, at `tags/tags`) lists every copy's labels with tags of its
own: base tags (the tags file's and those Lean cites) numbered in order, copy i's tag of the r-th is
the base-36 number i * n + r, so copies never share one.

A fraction of the base is taken by a seeded order of its files (Lean files; LaTeX chapters, the
files with `\\begin{document}`; the others, preamble and chapter list, always come along) until the
fraction of its bytes is reached. Imports of files left out stay unresolved (extraction tolerates them).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

LEAN_IDENT = re.compile(r"(?<![\w'₀-₉ₐ-ₜᵢ-ᵪ])[^\W\d][\w'₀-₉ₐ-ₜᵢ-ᵪ]*")
NAMESPACE = re.compile(r"^[ \t]*namespace[ \t]+(\S+)", re.M)
DECL_HEAD = re.compile(r"\b(?:theorem|lemma|def|abbrev|instance|structure|class|inductive|opaque|axiom)[ \t]+([^\s(\[{:]+)")
RESERVED = frozenset({"Type", "Prop", "Sort"})  # capitalised keywords
# words a `_root_.` declaration's first component must not be (it is renamed whatever its case)
KEYWORDS = frozenset("at by calc do else end exact fun have if in instance let match namespace open section show "
                     "simp theorem then where with".split())
HEADER_LINE = re.compile(r"(?:module|prelude)\b|(?:(?:public|private|meta)\s+)*import\b")
STACKS_ATTR = re.compile(r"(\bstacks[ \t]+)([0-9A-Z]{4})\b")
TEX_KEYS = re.compile(r"(\\(?:label|ref|eqref|cref|Cref|autoref|pageref|nameref|vref)\*?\{)([^{}]*)(\})")
TEX_HYPERREF = re.compile(r"(\\hyperref\[)([^\]]*)(\])")
COPY_MARK = r"ScaleK\d|_k\d"  # what every renamed Lean name carries (a regex): one without it is shared by the copies
TAG_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
TAG_SPACE = len(TAG_CHARS) ** 4
TAGS_FILE = Path("tags") / "tags"
LEFT_OUT_LEAN_DIRS = ("docs",)  # Mathlib's docs/ (tutorials, curated lists): not copied


@dataclass(frozen=True, eq=False)
class BaseSelection:
    """The files of the base a synthetic corpus copies: Lean files and LaTeX files (chapters and
    their support files), each relative to its root, and the tags file's entries for the chapters."""

    lean_root: Path | None
    lean_files: tuple[str, ...]
    latex_root: Path | None
    latex_files: tuple[str, ...]
    tags: tuple[tuple[str, str], ...]  # (tag, full label) of the kept chapters, in the file's order
    namespaces: frozenset[str]  # the Lean components every copy renames
    tag_rank: dict[str, int]  # every base tag (tags file and Lean citations) -> its place in sorted order

    def renaming(self, copy: int) -> "Renaming":
        return Renaming(copy, self.namespaces, self.tag_rank)


def seeded_share(files: list[tuple[str, int]], fraction: float, seed: int) -> list[str]:
    """The files (relative path, bytes) taken first in a seeded order until `fraction` of their bytes
    is reached (at least one), sorted by path."""
    if fraction >= 1:
        return sorted(rel for rel, _ in files)
    order = sorted(files, key=lambda f: hashlib.sha256(f"{seed}\0{f[0]}".encode()).hexdigest())
    goal, total, taken = fraction * sum(size for _, size in files), 0, []
    for rel, size in order:
        if taken and total >= goal:
            break
        taken.append(rel)
        total += size
    return sorted(taken)


def _lean_files(root: Path) -> list[tuple[str, int]]:
    out = []
    for path in sorted(root.rglob("*.lean")):
        rel = path.relative_to(root)
        if len(rel.parts) > 1 and rel.parts[0] not in LEFT_OUT_LEAN_DIRS and not any(p.startswith(".") for p in rel.parts):
            out.append((rel.as_posix(), path.stat().st_size))
    return out


def lean_namespaces(texts: list[str], top_dirs: set[str]) -> frozenset[str]:
    """The components every copy renames: namespace components and non-last components of declared
    names, capitalised (lower-case ones are dot-notation namespaces such as `le`, whose words are
    also tactics and attributes), the first component after `_root_.` of a declared name whatever
    its case (the wrapper namespace does not reach it), and the top-level module directories."""
    found, rooted = set(top_dirs), set()
    for text in texts:
        for m in NAMESPACE.finditer(text):
            found.update(m.group(1).split("."))
        for m in DECL_HEAD.finditer(text):
            parts = m.group(1).split(".")
            found.update(parts[:-1])
            if parts[0] == "_root_" and len(parts) > 1:
                rooted.add(parts[1])
    capitalised = {c for c in found if c[:1].isupper() and c not in RESERVED}
    return frozenset(c for c in capitalised | (rooted - KEYWORDS - RESERVED) if LEAN_IDENT.fullmatch(c))


def _is_chapter(path: Path) -> bool:
    return "\\begin{document}" in path.read_text(encoding="utf-8", errors="replace")


def read_tags(path: Path) -> list[tuple[str, str]]:
    """(tag, full label) lines of a Stacks-format tags file, in order."""
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "," in line:
            tag, label = line.split(",", 1)
            out.append((tag.strip(), label.strip()))
    return out


def select_base(lean_root: Path | None, latex_root: Path | None, fraction: float, seed: int) -> BaseSelection:
    """The share `fraction` of the base's Lean files and LaTeX chapters (seeded), with what the
    copies need to rename them."""
    lean_files: list[str] = []
    texts: list[str] = []
    if lean_root is not None:
        lean_files = seeded_share(_lean_files(lean_root), fraction, seed)
        texts = [(lean_root / rel).read_text(encoding="utf-8", errors="replace") for rel in lean_files]
    latex_files: list[str] = []
    every: list[tuple[str, str]] = []
    tags: list[tuple[str, str]] = []
    if latex_root is not None:
        tex = sorted(latex_root.glob("*.tex"))
        chapters = [(p.name, p.stat().st_size) for p in tex if _is_chapter(p)]
        kept = seeded_share(chapters, fraction, seed)
        latex_files = sorted(kept + [p.name for p in tex if not _is_chapter(p)])
        if (latex_root / TAGS_FILE).is_file():
            stems = {Path(name).stem for name in kept}
            every = read_tags(latex_root / TAGS_FILE)
            tags = every if fraction >= 1 else [(t, label) for t, label in every
                                                if any(label.startswith(s + "-") for s in stems)]
    cited = {m.group(2) for text in texts for m in STACKS_ATTR.finditer(text)}
    ranks = {t: r for r, t in enumerate(sorted({t for t, _ in every} | cited))}
    top = {Path(rel).parts[0] for rel in lean_files}
    return BaseSelection(lean_root, tuple(lean_files), latex_root, tuple(latex_files), tuple(tags),
                         lean_namespaces(texts, top), ranks)


def tag_of(number: int) -> str:
    """The 4-character base-36 tag of `number`."""
    if not 0 <= number < TAG_SPACE:
        raise ValueError(f"tag number {number} out of the 4-character range")
    out = ""
    for _ in range(4):
        number, r = divmod(number, 36)
        out = TAG_CHARS[r] + out
    return out


@dataclass(frozen=True, eq=False)
class Renaming:
    """How copy `copy` renames the base: Lean components, LaTeX label keys and tags."""

    copy: int
    namespaces: frozenset[str]
    tag_rank: dict[str, int]

    @property
    def suffix(self) -> str:
        return f"_k{self.copy}"

    @property
    def wrapper(self) -> str:
        return f"ScaleK{self.copy}"

    def tag(self, tag: str) -> str:
        """This copy's tag for base tag `tag` (a tag the base does not know is kept)."""
        rank = self.tag_rank.get(tag)
        return tag if rank is None else tag_of(self.copy * len(self.tag_rank) + rank)

    def lean_component(self, component: str) -> str:
        return component + self.suffix if component in self.namespaces else component

    def lean_text(self, text: str) -> str:
        """A Lean file of the copy: cited tags, renamed components, the body in the wrapper namespace."""
        text = STACKS_ATTR.sub(lambda m: m.group(1) + self.tag(m.group(2)), text)
        text = LEAN_IDENT.sub(lambda m: self.lean_component(m.group(0)), text)
        at = header_end(text)
        return f"{text[:at]}\n\nnamespace {self.wrapper}\n{text[at:]}"

    def lean_path(self, rel: str) -> str:
        """A Lean file's path in the copy: each module component renamed as its imports are."""
        parts = rel.split("/")
        stem = parts[-1].removesuffix(".lean")
        return "/".join([*map(self.lean_component, parts[:-1]), self.lean_component(stem) + ".lean"])

    def label(self, key: str) -> str:
        return f"{key.strip()}-k{self.copy}" if key.strip() else key

    def tex_text(self, text: str) -> str:
        """A LaTeX file of the copy: every label and reference key suffixed."""
        keys = lambda m: m.group(1) + ",".join(map(self.label, m.group(2).split(","))) + m.group(3)  # noqa: E731
        return TEX_HYPERREF.sub(keys, TEX_KEYS.sub(keys, text))


def header_end(text: str) -> int:
    """The offset just after a Lean file's last header line (`module`, `prelude`, imports), found
    by skipping blank lines, comments and header lines from the top; 0 when it has none. A doc
    comment (`/--`) ends the header: it belongs to the declaration after it."""
    i, end, n = 0, 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("/-", i) and not text.startswith("/--", i):
            i = _block_comment_end(text, i)
        elif text.startswith("--", i):
            i = _line_end(text, i)
        elif HEADER_LINE.match(text, i):
            i = end = _line_end(text, i)
        else:
            break
    return end


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j < 0 else j


def _block_comment_end(text: str, i: int) -> int:
    """The offset after the (nested) block comment opening at `i`."""
    depth, j = 0, i
    while j < len(text):
        if text.startswith("/-", j):
            depth, j = depth + 1, j + 2
        elif text.startswith("-/", j):
            depth, j = depth - 1, j + 2
            if depth == 0:
                return j
        else:
            j += 1
    return len(text)


def write_copies(base: BaseSelection, copies: int, out: Path) -> None:
    """Copies 0 .. copies-1 of the base under `out/lean/` (module folders of each copy side by side)
    and `out/latex/k<i>/`; a copy already written (its `.done` marker) is kept."""
    if copies * max(1, len(base.tag_rank)) > TAG_SPACE:
        raise ValueError(f"{copies} copies of {len(base.tag_rank)} tags do not fit in 4-character tags")
    for i in range(copies):
        done = out / f".done-k{i}"
        if done.exists():
            continue
        r = base.renaming(i)
        for rel in base.lean_files:
            target = out / "lean" / r.lean_path(rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(r.lean_text((base.lean_root / rel).read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
        for rel in base.latex_files:
            target = out / "latex" / f"k{i}" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(r.tex_text((base.latex_root / rel).read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
        done.touch()


def tags_text(base: BaseSelection, copies: int) -> str:
    """The tags file of `copies` copies: each copy's labels with its own tags."""
    lines = ["# Tags of a synthetic corpus (bench/scale.py): each copy's labels with tags of its own", "#\ttag,full_label"]
    for i in range(copies):
        r = base.renaming(i)
        lines += [f"{r.tag(tag)},{r.label(label)}" for tag, label in base.tags]
    return "\n".join(lines) + "\n"


def link_corpus(base: BaseSelection, copies: int, store: Path, out: Path) -> tuple[Path | None, Path | None]:
    """A corpus of the first `copies` copies of `store` (write_copies) at `out`, by hard links (the
    extractors read regular files): (Lean root, LaTeX root), None for a part the base lacks."""
    shutil.rmtree(out, ignore_errors=True)
    lean = latex = None
    if base.lean_files:
        lean = out / "lean"
        for i in range(copies):
            r = base.renaming(i)
            for rel in base.lean_files:
                _link(store / "lean" / r.lean_path(rel), lean / r.lean_path(rel))
    if base.latex_files:
        latex = out / "latex"
        for i in range(copies):
            for rel in base.latex_files:
                _link(store / "latex" / f"k{i}" / rel, latex / f"k{i}" / rel)
        if base.tags:
            (latex / TAGS_FILE).parent.mkdir(parents=True, exist_ok=True)
            (latex / TAGS_FILE).write_text(tags_text(base, copies), encoding="utf-8")
    return lean, latex


def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.link(src, dst)
