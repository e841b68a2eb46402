"""Loading robot descriptions: URDF files, MJCF files and built-in robot names."""

from __future__ import annotations

import os
from pathlib import Path

from invdyn.errors import InputError, ModelError
from invdyn.model import Model


def load(
    source: str | os.PathLike[str],
    *,
    floating_base: bool | None = None,
    strict: bool = False,
    friction: bool = False,
) -> Model:
    """Load a robot from a built-in name, a ``.urdf`` file or an MJCF ``.xml`` file.

    Args:
      source: a built-in robot name (see `invdyn.io.robots.available_robots`) or a file path.
      floating_base: attach the root link to the world by a free-flyer joint. ``None`` keeps the
        built-in robot's default, or the description's own choice for a file (fixed for URDF).
      strict: raise `ModelError` instead of warning on physically doubtful inertias.
      friction: read joint damping and Coulomb friction from the description into the model;
        otherwise they are zero and the dynamics are those of the ideal rigid-body tree.

    Returns:
      The validated model.
    """
    from invdyn.io import mjcf, robots, urdf

    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"source must be a robot name or a file path, got {type(source).__name__}")
    path = Path(source)
    if path.suffix.lower() == ".urdf":
        return urdf.load_urdf(
            path, floating_base=bool(floating_base), strict=strict, friction=friction
        )
    if path.suffix.lower() == ".xml":
        if floating_base:
            raise ModelError(
                f"{path}: MJCF files declare their own free joints; drop floating_base"
            )
        return mjcf.load_mjcf(path, strict=strict, friction=friction)
    if path.suffix:
        raise ModelError(
            f"{source}: unknown description format {path.suffix!r}, expected .urdf or .xml"
        )
    return robots.load_robot(
        str(source), floating_base=floating_base, strict=strict, friction=friction
    )


__all__ = ["load"]
