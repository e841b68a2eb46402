"""The optional extras of the package (pyproject.toml's optional-dependencies) and the check
that a piece of work makes before it starts: that the packages it will import are installed,
or an error that names the extra to install.

The check finds the packages without importing them (milliseconds), so that a command that
lacks one fails at once rather than after minutes of work.
"""

from __future__ import annotations

import importlib.util

from invdyn.errors import MissingExtraError

#: the modules each extra brings, as imported
EXTRAS: dict[str, tuple[str, ...]] = {
    "sim": ("mujoco", "gymnasium"),
    "oracle": ("pinocchio", "example_robot_data"),
    "learn": ("torch", "safetensors", "pyarrow", "h5py", "av"),
    "control": ("proxsuite",),
    "ray": ("ray",),
}

#: how to install torch without a CUDA build, which a plain ``pip install torch`` fetches on
#: Linux (several GB)
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def missing_modules(extra: str) -> list[str]:
    """The modules of `extra` that are not installed."""
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


def require_extras(*extras: str, purpose: str) -> None:
    """Raise MissingExtraError, naming the extras and modules, unless every module of
    `extras` is installed; `purpose` says what needs them (``"invdyn train"``)."""
    absent = {extra: missing_modules(extra) for extra in extras}
    absent = {extra: modules for extra, modules in absent.items() if modules}
    if not absent:
        return
    names = ",".join(absent)
    modules = ", ".join(module for group in absent.values() for module in group)
    message = f"{purpose} needs the {names} extra{'s' if len(absent) > 1 else ''} ({modules} "
    message += f"missing): pip install 'invdyn[{names}]'"
    if "torch" in modules.split(", "):
        message += f"; without a GPU, install torch first from its CPU-only index: {CPU_TORCH}"
    raise MissingExtraError(message)
