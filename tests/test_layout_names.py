"""One owner for the names of a release's and a root's folders and files (issue 30): no module of
the package but `store/layout.py` spells them as path parts. A literal that is exactly an
unambiguous name (`published.json`, `releases`, `.staging-`, a table's file), or any of the names
joined into a path (`root / "releases"`, `Path(d, "vector")`, `"lexical/x"`, `f"{root}/cache"`),
fails here with its file and line."""

from __future__ import annotations

import ast
from pathlib import Path

import mathindex
from mathindex.schemas import table_specs
from mathindex.store.layout import ReleaseLayout, RootLayout

PACKAGE = Path(mathindex.__file__).parent
OWNER = PACKAGE / "store" / "layout.py"
# names that mean nothing but a file or folder of a release or a root: refused as any literal
FILE_NAMES = {ReleaseLayout.MANIFEST, ReleaseLayout.NOTES, ReleaseLayout.DUCKDB, ReleaseLayout.METRICS,
              RootLayout.RELEASES, RootLayout.PUBLISHED, RootLayout.LOCK, RootLayout.STAGING} | {
    ReleaseLayout.table_file(t) for t in table_specs()}  # fmt: skip
# names that are also channel, stage and section names: refused only as parts of a path
FOLDER_NAMES = {ReleaseLayout.VECTOR, ReleaseLayout.FORMULA, ReleaseLayout.FORMAL, ReleaseLayout.LEXICAL,
                ReleaseLayout.PREMISES, RootLayout.CACHE, RootLayout.MODELS} | FILE_NAMES  # fmt: skip
# (module, source of the expression): names inside an index's own folder or the root's cache, which
# their modules own (the caches' folders are the cache layout's, not the release layout's)
NOT_RELEASE_NAMES = {
    ("search/lexical.py", '"nodes.parquet"'),  # lexical/nodes.parquet: the index's own names file
    ("formal/formal_index.py", 'here.parent / "formula"'),  # the package's formula/ sources, hashed into the code version
    ("tasks/formal.py", 'cache_dir / "formal"'),  # ROOT/cache/formal: the formal stage's cache
}


def _parts(text: str, relative: bool = True) -> set[str]:
    """The parts of a literal that reads as a path (no spaces); `relative`: not one that starts
    with `/` (a URL route), which only an f-string's tail may do."""
    if "/" not in text or " " in text or (relative and text.startswith("/")):
        return set()
    return set(text.split("/"))


def _is_path_join(node: ast.AST, parent: ast.AST | None) -> bool:
    """Whether a string literal is an operand of `/` or an argument of Path(...), os.path.join,
    .joinpath(...)."""
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        f = parent.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in {"Path", "PurePath", "join", "joinpath"}
    return False


def offenders(path: Path, package: Path = PACKAGE) -> list[str]:
    """`file:line: 'literal'` for each release or root name the module spells as a path part."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    rel = path.relative_to(package).as_posix()
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        parent = parents.get(node)
        in_fstring = isinstance(parent, ast.JoinedStr)
        value = node.value
        bad = (value in FILE_NAMES or _parts(value, relative=not in_fstring) & FOLDER_NAMES
               or (value in FOLDER_NAMES and _is_path_join(node, parent)))  # fmt: skip
        if not bad:
            continue
        expr = parent if isinstance(parent, ast.BinOp) else node
        if (rel, ast.get_source_segment(source, expr)) in NOT_RELEASE_NAMES:
            continue
        found.append((node.lineno, f"{rel}:{node.lineno}: {value!r}"))
    return [line for _, line in sorted(found)]


def test_no_module_but_the_layout_spells_a_release_or_root_name():
    found = [line for p in sorted(PACKAGE.rglob("*.py")) if p != OWNER for line in offenders(p)]
    assert found == [], "spell these through store.layout (ReleaseLayout, RootLayout):\n" + "\n".join(found)


def test_the_check_sees_a_new_module_that_spells_them(tmp_path):
    module = tmp_path / "new.py"
    module.write_text('from pathlib import Path\n\n'
                      'def f(root, rid):\n'
                      '    a = root / "releases" / rid\n'
                      '    b = Path(root, "vector")\n'
                      '    c = f"{root}/cache/x"\n'
                      '    d = root / "search.duckdb"\n'
                      '    return {"vector": 1, "formula": "the formula channel"}\n', encoding="utf-8")  # fmt: skip
    assert offenders(module, tmp_path) == ["new.py:4: 'releases'", "new.py:5: 'vector'", "new.py:6: '/cache/x'",
                                 "new.py:7: 'search.duckdb'"]  # fmt: skip
