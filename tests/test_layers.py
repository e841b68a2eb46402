"""The import graph of invdyn: no cycles, and every import goes down the layers.

Every import counts: at module level, inside functions and under ``TYPE_CHECKING``; ``import
a.b``, ``from a import b`` (``b`` a name of ``a`` or its submodule) and relative imports.

Layers, bottom up; a module imports only from its own layer (without cycles) or from lower ones:
  0 base, usable by all: errors, extras, metrics, _files, _waits, _headless, _settings.
  1 core: spatial, model, io, configuration, kinematics, dynamics, centroidal, regressor, kernels,
    _arrays, _tensors, _parallel, and the package ``invdyn`` (its ``__init__`` imports core
    modules).
  2 control (uses core); viz (uses only core and base). Neither imports the other.
  3 sim (uses control and core).
  4 experiments (closed loops: use sim, control and viz); learn (uses core, control, sim and
    viz). Neither imports the other.
  5 ident (may use learn and sim; learn never imports ident).
  6 cli (uses everything; nothing imports it).
  7 ``invdyn.__main__``, which only calls cli.
No module imports the top-level package ``invdyn`` itself: it imports the defining module.
A module that `LAYERS` does not place fails the test: a new package is given its layer here.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

# the modules of each layer, and everything below each package; the top-level package
# ``invdyn`` is core, and only itself (its modules are placed one by one)
PLACES = {
    "base": (
        "errors",
        "extras",
        "metrics",
        "_files",
        "_waits",
        "_headless",
        "_settings",
    ),
    "core": (
        "spatial",
        "model",
        "io",
        "configuration",
        "kinematics",
        "dynamics",
        "centroidal",
        "regressor",
        "kernels",
        "_arrays",
        "_tensors",
        "_parallel",
    ),
    "control": ("control",),
    "viz": ("viz",),
    "sim": ("sim",),
    "experiments": ("experiments",),
    "learn": ("learn",),
    "ident": ("ident",),
    "cli": ("cli",),
    "main": ("__main__",),
}
LAYERS = {"invdyn": "core"} | {
    f"invdyn.{name}": layer for layer, names in PLACES.items() for name in names
}
# layers of one rank are apart: neither imports the other
RANK = {
    "base": 0,
    "core": 1,
    "control": 2,
    "viz": 2,
    "sim": 3,
    "experiments": 4,
    "learn": 4,
    "ident": 5,
    "cli": 6,
    "main": 7,
}
HEAVY = (
    "numba",
    "torch",
    "mujoco",
    "matplotlib",
    "scipy.optimize",
    "scipy.sparse",
    "scipy.signal",
    "scipy.interpolate",
)
SOURCE = Path(str(importlib.util.find_spec("invdyn").origin)).parent


# -- the graph --------------------------------------------------------------------------------


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module (or package, or extension module) at `path` inside the
    folder `root` that holds the top-level package."""
    parts = [*path.relative_to(root).parent.parts, path.name.split(".")[0]]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(node: ast.AST, module: str, is_package: bool, names: set[str]) -> list[str]:
    """The modules that the import statement `node` of `module` imports, as absolute names;
    ``from a import b`` imports ``a.b`` when that is one of the module `names`, else ``a``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        # a relative import, from the package that holds `module` (or is it) upwards
        package = module.split(".")[: None if is_package else -1]
        parts = package[: len(package) - node.level + 1] + ([base] if base else [])
        base = ".".join(parts)
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names]


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same top-level package that it imports, for every module
    of the package at the folder `package`."""
    root = package.parent
    top = package.name
    names = {
        module_name(path, root)
        for path in package.rglob("*")
        if "__pycache__" not in path.parts
        and (path.is_dir() or path.suffix in (".py", ".pyi", ".so", ".pyd"))
    } | {top}
    graph = {}
    for path in sorted(package.rglob("*.py")):
        module = module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets = {
            target
            for node in ast.walk(tree)
            for target in imported(node, module, path.name == "__init__.py", names)
        }
        graph[module] = {t for t in targets if t == top or t.startswith(f"{top}.")} - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """A cycle ``[a, b, ..., a]`` for each back edge of a depth-first search of `graph`: at
    least one per set of modules that import each other, none when there are none."""
    found: list[list[str]] = []
    path: list[str] = []
    state: dict[str, str] = {}

    def visit(node: str) -> None:
        state[node] = "open"
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                found.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def layer_of(module: str) -> str | None:
    """The layer of `module` in `LAYERS`: its own entry or its closest package's (the entry of
    the top-level package places only itself); None when it has neither."""
    name = module
    while "." in name:
        if name in LAYERS:
            return LAYERS[name]
        name = name.rpartition(".")[0]
    return LAYERS.get(module)


def unplaced(graph: dict[str, set[str]]) -> list[str]:
    """The modules of `graph` that `LAYERS` does not place."""
    return sorted(m for m in {*graph, *(t for ts in graph.values() for t in ts)} if not layer_of(m))


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """The imports of `graph` that go up the layers or across layers of one rank, each as
    ``"importer (layer) -> imported (layer)"``."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            mine, theirs = layer_of(module), layer_of(target)
            if mine and theirs and not (mine == theirs or RANK[theirs] < RANK[mine]):
                found.append(f"{module} ({mine}) -> {target} ({theirs})")
    return found


def importers_of(package: str, graph: dict[str, set[str]]) -> list[str]:
    """The modules of `graph` that import the package `package` itself."""
    return sorted(module for module, targets in graph.items() if package in targets)


def chains(found: list[list[str]]) -> str:
    return "\n".join(" -> ".join(cycle) for cycle in found)


# -- invdyn ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(SOURCE)


def test_no_module_imports_its_importers(graph):
    found = cycles(graph)
    assert not found, f"import cycles:\n{chains(found)}"


def test_every_module_has_a_layer(graph):
    found = unplaced(graph)
    assert not found, f"give these modules a layer in LAYERS: {found}"


def test_imports_go_down_the_layers(graph):
    found = wrong_way(graph)
    assert not found, "imports against the layers:\n" + "\n".join(found)


def test_no_module_imports_the_top_level_package(graph):
    found = importers_of("invdyn", graph)
    assert not found, f"these import invdyn itself, not the module that defines the name: {found}"


def test_importing_invdyn_loads_nothing_heavy():
    code = f"import sys, invdyn; print(sorted(set({HEAVY!r}) & set(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]", f"import invdyn loads {run.stdout.strip()}"


# -- the checks find what they look for ----------------------------------------------------------


def write_package(root: Path, files: dict[str, str]) -> Path:
    """A package of `files` (path in the package -> source) in `root`; its folder."""
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root / Path(next(iter(files))).parts[0]


def test_the_graph_holds_every_form_of_import(tmp_path):
    package = write_package(
        tmp_path,
        {
            "invdyn/__init__.py": "from invdyn.model import Model\n",
            "invdyn/model.py": "import numpy\n",
            "invdyn/kernels/cpu.py": "from invdyn.kernels import _cpu\n",
            "invdyn/kernels/_cpu.pyi": "",
            "invdyn/learn/__init__.py": "",
            "invdyn/learn/a.py": "import invdyn.model\nfrom . import b\n",
            "invdyn/learn/b.py": "def f():\n    from ..learn.c import g\n",
            "invdyn/learn/c.py": "from invdyn import learn\nfrom .. import model\n",
        },
    )
    assert import_graph(package) == {
        "invdyn": {"invdyn.model"},
        "invdyn.model": set(),
        "invdyn.kernels.cpu": {"invdyn.kernels._cpu"},
        "invdyn.learn": set(),
        "invdyn.learn.a": {"invdyn.model", "invdyn.learn.b"},
        "invdyn.learn.b": {"invdyn.learn.c"},
        "invdyn.learn.c": {"invdyn.learn", "invdyn.model"},
    }


def test_a_cycle_is_found_as_a_chain(tmp_path):
    package = write_package(
        tmp_path,
        {
            "invdyn/learn/a.py": "from invdyn.learn.b import f\n",
            "invdyn/learn/b.py": "def f():\n    from invdyn.learn import c\n",
            "invdyn/learn/c.py": "import invdyn.learn.a\n",
            "invdyn/learn/d.py": "from invdyn.learn import a\n",
        },
    )
    found = cycles(import_graph(package))
    assert chains(found) == "invdyn.learn.a -> invdyn.learn.b -> invdyn.learn.c -> invdyn.learn.a"


def test_imports_against_the_layers_are_found(tmp_path):
    package = write_package(
        tmp_path,
        {
            "invdyn/__init__.py": "from invdyn.model import Model\n",
            "invdyn/model.py": "def f():\n    from invdyn.learn import config\n",
            "invdyn/viz/plots.py": "from invdyn.control.laws import CONTROLLERS\n",
            "invdyn/control/laws.py": "from invdyn import errors\n",
            "invdyn/errors.py": "",
            "invdyn/learn/config.py": "from invdyn import Model\n",
            "invdyn/experiments/tracking.py": "from invdyn.learn import config\n",
            "invdyn/ident/run.py": "from invdyn.learn import config\n",
            "invdyn/robots/new.py": "",
        },
    )
    graph = import_graph(package)
    assert wrong_way(graph) == [
        "invdyn.experiments.tracking (experiments) -> invdyn.learn.config (learn)",
        "invdyn.model (core) -> invdyn.learn.config (learn)",
        "invdyn.viz.plots (viz) -> invdyn.control.laws (control)",
    ]
    assert importers_of("invdyn", graph) == ["invdyn.learn.config"]
    assert unplaced(graph) == ["invdyn.robots.new"]
