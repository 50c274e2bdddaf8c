"""Cache keys: the digest of the code that makes a cache's values, and the digest of a table.

A cache declares its code as a `CodeSet` (`cache.codes`): the modules whose functions compute its
values (`makers`) and every mathindex module those import (`modules`, checked against the makers'
imports by a test), plus the library versions the values depend on. `code_digest` hashes the
modules' source bytes, so an edit to any of them moves the cache to a fresh key.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import pyarrow as pa

PACKAGE = "mathindex"
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def module_path(module: str) -> Path | None:
    """The source file of a mathindex module or package (its `__init__.py`); None when there is none."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return base.with_suffix(".py") if base.with_suffix(".py").is_file() else None


def expand(modules: tuple[str, ...] | list[str]) -> list[str]:
    """The modules `modules` names, sorted: a package stands for itself and every module under it."""
    out: set[str] = set()
    for name in modules:
        path = module_path(name)
        if path is None:
            raise ValueError(f"no mathindex module {name!r}")
        out.add(name)
        if path.name == "__init__.py":
            for sub in path.parent.rglob("*.py"):
                rel = sub.relative_to(PACKAGE_DIR).with_suffix("").parts
                out.add(".".join((PACKAGE, *rel[:-1])) if rel[-1] == "__init__" else ".".join((PACKAGE, *rel)))
    return sorted(out)


@lru_cache(maxsize=64)
def code_digest(modules: tuple[str, ...], libraries: tuple[str, ...] = ()) -> str:
    """sha256 (16 hex) over each module's name and source bytes (packages expanded, in name order)
    and the installed version of each library ("none" when not installed)."""
    h = hashlib.sha256()
    for name in expand(modules):
        h.update(name.encode() + b"\0" + module_path(name).read_bytes() + b"\0")
    for dist in libraries:
        try:
            h.update(f"{dist}={metadata.version(dist)}\0".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist}=none\0".encode())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class CodeSet:
    """The code one cache's values are made by: `makers` (the modules that compute them), `modules`
    (the makers and every mathindex module they import, transitively; packages allowed) and the
    `libraries` whose versions change the values."""

    makers: tuple[str, ...]
    modules: tuple[str, ...]
    libraries: tuple[str, ...] = ()

    def digest(self) -> str:
        return code_digest(self.modules, self.libraries)


def imported_modules(module: str) -> set[str]:
    """The mathindex modules `module`'s source imports anywhere (function bodies too), by `ast`:
    `from a.b import c` counts as `a.b.c` when that is a module, else as `a.b`."""
    path = module_path(module)
    tree = ast.parse(path.read_bytes(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.add(sub if module_path(sub) is not None else node.module)
    return {m for m in found if m.split(".")[0] == PACKAGE and module_path(m) is not None}


def import_closure(roots: tuple[str, ...] | list[str]) -> set[str]:
    """`roots` and every mathindex module they import, transitively."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(imported_modules(name) - seen)
    return seen


class _HashSink:
    """A write-only file object that feeds what is written to a hash (Arrow's IPC writer streams
    into it, so a table is hashed without a serialised copy)."""

    def __init__(self, h):
        self.h, self.closed = h, False

    def write(self, data) -> int:
        self.h.update(data)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def table_digest(table: pa.Table | None) -> str:
    """sha256 hex of a table's schema and rows as one Arrow IPC stream (chunking does not matter);
    "none" for None."""
    if table is None:
        return "none"
    h = hashlib.sha256()
    with pa.ipc.new_stream(_HashSink(h), table.schema) as writer:
        writer.write_table(table.combine_chunks())
    return h.hexdigest()
