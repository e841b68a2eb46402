"""The package's metadata: every imported package declared, the version written once, the
license file that the declared license names."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import invdyn

ROOT = Path(__file__).parents[1]
SOURCES = ROOT / "src" / "invdyn"


def _pyproject() -> dict[str, Any]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project


def _normalised(name: str) -> str:
    """A distribution's name as the package index compares names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_modules() -> dict[str, set[str]]:
    """The top-level modules of other packages that the sources import (at module level or
    inside functions), with the files that import each."""
    modules: dict[str, set[str]] = {}
    for file in SOURCES.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in {"invdyn", "__future__"}:
                    modules.setdefault(top, set()).add(str(file.relative_to(SOURCES)))
    return modules


def test_every_imported_package_is_declared() -> None:
    project = _pyproject()
    requirements = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        requirements += extra
    declared = {_normalised(re.match(r"[A-Za-z0-9._-]+", r)[0]) for r in requirements}
    distributions = importlib.metadata.packages_distributions()
    undeclared = {}
    for module, files in _imported_modules().items():
        names = {_normalised(name) for name in distributions.get(module, [module])}
        if not names & declared:
            undeclared[module] = sorted(files)
    assert not undeclared, f"imported, not declared in pyproject.toml: {undeclared}"


def test_the_version_is_the_installed_packages() -> None:
    assert invdyn.__version__ == importlib.metadata.version("invdyn")
    assert invdyn.__version__ == _pyproject()["version"]
    with pytest.raises(AttributeError, match="has no attribute 'version'"):
        invdyn.version  # noqa: B018


def test_the_license_file_is_the_declared_license() -> None:
    project = _pyproject()
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License\n")
    assert "Neither the name of the copyright holder nor the names of its" in text
