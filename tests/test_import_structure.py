"""The package structure stays as the redesign left it: no import inside a function body but the
heavy optional dependencies, each with its reason beside it, and no import cycle between the
packages of mathindex (a package is a folder under mathindex/, or a top-level module)."""

from __future__ import annotations

import ast
from pathlib import Path

import mathindex

PACKAGE = Path(mathindex.__file__).parent
# Loaded inside the function that needs them, and only there: each is heavy (torch and what sits on
# it, matplotlib) or must load after the process set its threads (faiss reads OMP_NUM_THREADS once),
# or is needed only on one path (the optional Dask runner, Prefect's temporary server).
LAZY = ("torch", "sentence_transformers", "transformers", "sklearn", "onnx", "onnxruntime", "tokenizers",
        "matplotlib", "faiss", "prefect_dask", "prefect.server", "huggingface_hub", "bm25s")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _imported(node: ast.AST) -> str:
    return node.module or "" if isinstance(node, ast.ImportFrom) else node.names[0].name


def test_no_import_inside_a_function_but_a_heavy_optional_one_with_its_reason():
    offenders = []
    for path in _modules():
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                name = _imported(node)
                lazy = any(name == m or name.startswith(m + ".") for m in LAZY)
                said = "#" in lines[node.lineno - 1] or "#" in lines[node.lineno - 2]  # the reason, beside or above
                if not (lazy and said):
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}")
    assert offenders == []


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "mathindex" and len(parts) > 1 else None


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in _modules():
        rel = path.relative_to(PACKAGE)
        here = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names] if node.module == "mathindex" else [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                there = _package_of(name)
                real = there and ((PACKAGE / there).is_dir() or (PACKAGE / f"{there}.py").is_file())
                if real and there != here:
                    graph.setdefault(here, set()).add(there)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of `graph` as a path of packages, or [] when it has none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_packages_import_each_other_without_a_cycle():
    graph = _package_graph()
    assert {"search", "embed", "formula", "formal", "store"} <= set(graph) and "cache" in graph["store"]
    assert _cycle(graph) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}}) == []
