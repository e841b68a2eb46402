"""The optional extras of the package (pyproject.toml's optional-dependencies) and the check
that a piece of work makes before it starts: that the packages it will import are installed,
or an error that names the extra to install.

The check looks the packages up without importing them (milliseconds), so that a command that
lacks one fails at once rather than after minutes of work.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re

from invdyn.errors import MissingExtraError

#: how to install torch without a CUDA build, which a plain ``pip install torch`` fetches on
#: Linux (several GB)
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"

_NAME = re.compile(r"[A-Za-z0-9._-]+")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


@functools.cache
def extra_packages() -> dict[str, tuple[str, ...]]:
    """The packages of each extra, by their names on the package index, as the installed
    package's metadata declares them (pyproject.toml's optional-dependencies); empty where
    invdyn runs from its sources without being installed."""
    try:
        requirements = importlib.metadata.requires("invdyn") or []
    except importlib.metadata.PackageNotFoundError:
        return {}
    packages: dict[str, tuple[str, ...]] = {}
    for requirement in requirements:
        extra, name = _EXTRA.search(requirement), _NAME.match(requirement)
        if extra is not None and name is not None:
            packages[extra[1]] = (*packages.get(extra[1], ()), name[0])
    return packages


def installed(package: str) -> bool:
    """Whether the distribution `package` is installed."""
    try:
        importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def require_extras(*extras: str, purpose: str) -> None:
    """Raise MissingExtraError, naming the extras and packages, unless every package of
    `extras` is installed; `purpose` says what needs them (``"invdyn train"``)."""
    declared = extra_packages()
    absent = {e: [p for p in declared.get(e, ()) if not installed(p)] for e in extras}
    absent = {extra: packages for extra, packages in absent.items() if packages}
    if not absent:
        return
    names = ",".join(absent)
    packages = [package for group in absent.values() for package in group]
    message = f"{purpose} needs the {names} extra{'s' if len(absent) > 1 else ''} "
    message += f"({', '.join(packages)} missing): pip install 'invdyn[{names}]'"
    if "torch" in packages:
        message += f"; without a GPU, install torch first from its CPU-only index: {CPU_TORCH}"
    raise MissingExtraError(message)
