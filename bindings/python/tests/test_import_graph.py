"""The package's import graph (issue 36, §2): no cycle, counting every
import a module makes at run time (at the top or inside a function; not
the `if TYPE_CHECKING:` ones), and the core never imports an adapter:
adapters (the numpy and torch modules, the safetensors shims, the
distributed helpers) import the core, never the reverse. Also: no file of
the package past ~500 lines."""

import ast
import os

import pytest

import ztensor

PACKAGE = os.path.dirname(ztensor.__file__)
# The adapters: framework and peer-API layers over the core. Everything
# else (reader, writer, _bulk, _table, _lib, ...) is the core.
ADAPTERS = {"torch", "numpy", "_torch_open", "_torch_shared", "_safe", "_frameworks", "_serialize",
            "_safetensors_format", "_errors", "distributed", "_v2", "_v2_index"}
FACADE = "__init__"  # the package itself: re-exports both, imported by nothing inside


def _modules():
    return sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py"))


def _is_type_checking(node):
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(module):
    """The package modules `module` imports at run time."""
    with open(os.path.join(PACKAGE, module + ".py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    found = set()
    known = set(_modules())

    def visit(node):
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is None:  # from . import x
                found.update(a.name for a in node.names if a.name in known)
            elif node.level == 1:  # from .x import y
                found.add(node.module.split(".")[0])
            elif node.level == 0 and node.module and node.module.split(".")[0] == "ztensor":
                parts = node.module.split(".")
                found.add(parts[1] if len(parts) > 1 else FACADE)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "ztensor":
                    found.add(parts[1] if len(parts) > 1 else FACADE)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return {m for m in found if m in known or m == FACADE}


GRAPH = {m: _imports(m) for m in _modules()}


def test_the_graph_is_read():
    # a sanity check of the parser: edges we know exist
    assert "reader" in GRAPH["_safe"] and "_safe" in GRAPH["torch"]
    assert "_bulk" in GRAPH["_reader_bulk"] and "_lib" in GRAPH["reader"]
    assert "_torch_open" in GRAPH["_frameworks"]  # a function-level import counts


def test_no_import_cycle():
    state = {}
    path = []

    def walk(m):
        state[m] = "open"
        path.append(m)
        for n in sorted(GRAPH.get(m, ())):
            if state.get(n) == "open":
                pytest.fail("import cycle: " + " -> ".join(path[path.index(n):] + [n]))
            if n not in state:
                walk(n)
        path.pop()
        state[m] = "done"

    for m in GRAPH:
        if m not in state:
            walk(m)


def test_nothing_inside_imports_the_package_itself():
    assert [m for m, deps in GRAPH.items() if FACADE in deps and m != FACADE] == []


def test_the_core_imports_no_adapter():
    bad = {m: sorted(deps & ADAPTERS) for m, deps in GRAPH.items()
           if m not in ADAPTERS and m != FACADE and deps & ADAPTERS}
    assert bad == {}


def test_no_file_past_500_lines():
    long = {}
    for m in _modules():
        with open(os.path.join(PACKAGE, m + ".py"), encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > 520:
            long[m] = n
    assert long == {}
