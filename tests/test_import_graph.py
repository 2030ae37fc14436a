"""The import graph of the project's packages, read statically with `ast`.

The rules (docs/architecture.md, "Import rules"):

- No cycles, whatever the level of the imports. An import inside a function defers
  loading the module; it does not remove the dependency, so a cycle closed by one is a
  cycle of the design all the same. Imports under `if TYPE_CHECKING:` are not counted
  (nothing runs them).
- The pipeline stages, in order: frontend (`triton_spirv/ttir/`) -> `ttir_to_linalg` ->
  `memref_stage` -> `emitter_opencl` / `triton_spirv/spirv` -> `launcher`. A stage
  module imports its own stage, earlier stages and the shared leaves, never a later
  stage (a stage hands its IR on; it does not call the stages after it) and never a
  driver (`compiler.py`, `driver.py`, `stages.py`, `hlo/`, the tools: the modules that
  call the stages).
- The shared leaves (`opencl_abi`, `triton_spirv/ir_helpers.py`, ...) import no module of
  ours but other leaves; `opencl_abi` imports nothing of ours at all.
- The launcher imports neither `triton_spirv` nor `emitter_opencl`, and Triton only inside
  functions (the Triton path's error types and caches), so it loads without Triton.
"""
from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("triton_spirv", "emitter_opencl", "launcher", "opencl_abi")

# Pipeline stages in order; a module belongs to the stage whose prefix it has.
STAGES = (
    ("triton_spirv.ttir",),
    ("triton_spirv.ttir_to_linalg",),
    ("triton_spirv.memref_stage",),
    ("emitter_opencl", "triton_spirv.spirv"),
    ("launcher",),
)
# Modules every stage may import; they import nothing of ours but each other.
SHARED_LEAVES = ("opencl_abi", "triton_spirv.ir_helpers", "triton_spirv.dialect_modules",
                 "triton_spirv.ir_dump")


def _in(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _modules() -> dict[str, tuple[str, bool]]:
    """Module name -> (file, is a package)."""
    found = {}
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for file in files:
                if not file.endswith(".py"):
                    continue
                path = os.path.join(folder, file)
                name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                is_package = name.endswith(".__init__")
                found[name[:-len(".__init__")] if is_package else name] = (path, is_package)
    return found


MODULES = _modules()


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imported_names(name: str, is_package: bool, node: ast.AST) -> list[str]:
    """The modules an import statement names (for `from m import x`: m.x where x is a
    module, else m)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    package = name if is_package else name.rpartition(".")[0]
    if node.level:
        base = package
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        module = base + ("." + node.module if node.module else "")
    else:
        module = node.module
    return [f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module
            for alias in node.names]


def _imports(name: str) -> list[tuple[str, str, int]]:
    """(imported module, "module" or "function", line) for each import of `name`; a
    module of ours is named as found in MODULES, others (triton, mlir) as written."""
    path, is_package = MODULES[name]
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []

    def visit(node, level):
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            inner = "function" if isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else level
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in _imported_names(name, is_package, child):
                    ours = target
                    while ours not in MODULES and "." in ours:
                        ours = ours.rpartition(".")[0]
                    found.append((ours if ours in MODULES else target, inner, child.lineno))
            visit(child, inner)
    visit(tree, "module")
    return [(target, level, line) for target, level, line in found if target != name]


IMPORTS = {name: _imports(name) for name in MODULES}


def _ours(target: str) -> bool:
    return target in MODULES


def _stage(module: str) -> int | None:
    for index, prefixes in enumerate(STAGES):
        if any(_in(module, prefix) for prefix in prefixes):
            return index
    return None


def _is_leaf(module: str) -> bool:
    return any(_in(module, leaf) for leaf in SHARED_LEAVES)


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph = {name: sorted({t for t, _, _ in IMPORTS[name] if _ours(t)}) for name in MODULES}
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for name in sorted(MODULES):
        if name not in index:
            connect(name)
    return components


def _describe(component: list[str]) -> str:
    members = set(component)
    edges = [f"  {name}:{line} imports {target} ({level} level)"
             for name in component for target, level, line in IMPORTS[name]
             if target in members]
    return "cycle of " + ", ".join(component) + "\n" + "\n".join(sorted(set(edges)))


def test_the_graph_is_read():
    # The rules below pass vacuously on an empty or misread graph.
    assert len(MODULES) > 100
    assert ("opencl_abi", "module") in {(t, level) for t, level, _ in IMPORTS["launcher.bounds"]}
    assert any(t == "triton_spirv.hlo.compile" for t, _, _ in IMPORTS["triton_spirv.hlo.runtime"])
    assert any(level == "function" for name in MODULES for _, level, _ in IMPORTS[name])


def test_no_import_cycles():
    cycles = _cycles()
    assert not cycles, "\n".join(_describe(c) for c in cycles)


def test_stages_import_no_later_stage_and_no_driver():
    wrong = []
    for name in MODULES:
        stage = _stage(name)
        if stage is None or _is_leaf(name):
            continue
        for target, level, line in IMPORTS[name]:
            if not _ours(target) or _is_leaf(target):
                continue
            other = _stage(target)
            if other is None:
                wrong.append(f"{name}:{line} imports the driver module {target} ({level} level)")
            elif other > stage:
                wrong.append(f"{name}:{line} imports the later stage's {target} ({level} level)")
    assert not wrong, "\n".join(sorted(set(wrong)))


@pytest.mark.parametrize("leaf", SHARED_LEAVES)
def test_shared_leaves_import_only_leaves(leaf):
    assert any(_in(name, leaf) for name in MODULES), f"no module {leaf}"
    wrong = [f"{name}:{line} imports {target}"
             for name in MODULES if _in(name, leaf)
             for target, _, line in IMPORTS[name]
             if _ours(target) and not (_is_leaf(target) and leaf != "opencl_abi")
             and not _in(target, leaf)]
    assert not wrong, "\n".join(wrong)


def test_launcher_imports_no_compiler_and_no_triton_at_module_level():
    wrong = []
    for name in MODULES:
        if not _in(name, "launcher"):
            continue
        for target, level, line in IMPORTS[name]:
            if _ours(target) and not (_in(target, "launcher") or _in(target, "opencl_abi")):
                wrong.append(f"{name}:{line} imports {target}")
            if _in(target, "triton") and level == "module":
                wrong.append(f"{name}:{line} imports {target} at module level")
    assert not wrong, "\n".join(wrong)
