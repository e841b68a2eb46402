"""The optional extras of the package (pyproject.toml's optional-dependencies) and the check
that a piece of work makes before it starts: that the packages it will import are installed,
or an error that names the extra to install.

The check looks the packages up without importing them (milliseconds), so that a command that
lacks one fails at once rather than after minutes of work.
"""

from __future__ import annotations

import importlib.metadata

from invdyn.errors import MissingExtraError

#: the packages each extra brings, by their names on the package index
EXTRAS: dict[str, tuple[str, ...]] = {
    "sim": ("mujoco", "gymnasium"),
    "oracle": ("pin", "example-robot-data"),
    "learn": ("torch", "safetensors", "pyarrow", "h5py", "av"),
    "control": ("proxsuite",),
    "ray": ("ray",),
}

#: how to install torch without a CUDA build, which a plain ``pip install torch`` fetches on
#: Linux (several GB)
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


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
    absent = {extra: [p for p in EXTRAS[extra] if not installed(p)] for extra in extras}
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
