"""Loading robot descriptions: URDF files, MJCF files and built-in robot names."""

from __future__ import annotations

import os
from pathlib import Path
from xml.etree.ElementTree import ParseError

import defusedxml
import defusedxml.ElementTree

from invdyn._files import check_regular_file
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
      source: a built-in robot name (see `invdyn.io.robots.available_robots`) or a file path:
        ``.urdf``, or ``.xml`` for MJCF (and URDF, by its ``<robot>`` root element).
      floating_base: attach the root link to the world by a free-flyer joint. ``None`` keeps the
        built-in robot's default, or the description's own choice for a file (fixed for URDF).
        An MJCF file declares its own free joints: False welds the bodies they move where the
        file places them, True requires one (`invdyn.io.mjcf.load_mjcf`).
      strict: raise `ModelError` instead of warning on physically doubtful inertias.
      friction: read joint damping and Coulomb friction from the description into the model;
        otherwise they are zero and the dynamics are those of the ideal rigid-body tree.

    Returns:
      The validated model.

    Raises:
      InputError: bad options, XML text as `source`, or a path (a source with a suffix or a
        '/') that is not a regular file: a directory, a pipe (``/dev/fd/63`` of a shell's
        ``<(...)``), a device.
      ModelError: an unknown name, or a description that cannot be read or used.
    """
    from invdyn.io import mjcf, robots, urdf

    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"source must be a robot name or a file path, got {type(source).__name__}")
    for name, flag in (
        ("floating_base", floating_base),
        ("strict", strict),
        ("friction", friction),
    ):
        if not (isinstance(flag, bool) or (flag is None and name == "floating_base")):
            allowed = "True, False or None" if name == "floating_base" else "True or False"
            raise InputError(f"{name} must be {allowed}, got {flag!r}")
    if isinstance(source, str) and source.lstrip().startswith("<"):
        raise InputError(
            "source is XML text, not a robot name or a file path: give invdyn.io.urdf.parse_urdf "
            "the text of a URDF, or write it to a .urdf or .xml file"
        )
    path = Path(source)
    if names_a_file(source):
        check_regular_file(path, "a robot description file (.urdf or .xml)")
    if is_mjcf(path):
        return mjcf.load_mjcf(path, floating_base=floating_base, strict=strict, friction=friction)
    if path.suffix.lower() in (".urdf", ".xml"):
        # .xml with a <robot> root: a URDF saved as .xml
        return urdf.load_urdf(
            path, floating_base=bool(floating_base), strict=strict, friction=friction
        )
    if path.suffix.lower() == ".xacro":
        raise ModelError(
            f"{source}: a xacro template, not a URDF: expand it with xacro first (xacro "
            f"{path.name} > {path.name[: -len(path.suffix)].removesuffix('.urdf')}.urdf)"
        )
    if path.suffix:
        raise ModelError(
            f"{source}: unknown description format {path.suffix!r}, expected .urdf or .xml"
        )
    return robots.load_robot(
        str(source), floating_base=floating_base, strict=strict, friction=friction
    )


def load_simulated(source: str | os.PathLike[str], *, floating_base: bool | None = None) -> Model:
    """`load` as the simulation commands read a robot: an MJCF file with its joint damping and
    friction, which MuJoCo simulates as part of the file; a URDF file or a built-in robot as the
    ideal rigid-body tree."""
    return load(source, floating_base=floating_base, friction=is_mjcf(source))


def names_a_file(source: str | os.PathLike[str]) -> bool:
    """Whether `source` is a file path rather than a built-in robot's name: it has a suffix or
    a '/' (``/dev/fd/63``, say, of a shell's process substitution), or is ``.`` or ``..``."""
    text = os.fspath(source)
    return bool(Path(source).suffix) or os.sep in text or text in (os.curdir, os.pardir)


def is_mjcf(source: str | os.PathLike[str]) -> bool:
    """Whether `invdyn.load` reads `source` as MJCF: an ``.xml`` file whose root element is not
    URDF's ``<robot>``."""
    path = Path(source)
    return path.suffix.lower() == ".xml" and _root_tag(path) != "robot"


def _root_tag(path: Path) -> str | None:
    """The local name of an XML file's root element, None when it is not a file or does not
    parse (the loader then reports the file's fault)."""
    if not path.is_file():
        return None
    try:
        for _, element in defusedxml.ElementTree.iterparse(path, events=("start",)):
            return str(element.tag).rpartition("}")[2]  # without a default namespace
    except (ParseError, defusedxml.DefusedXmlException, OSError):
        return None
    return None


__all__ = ["is_mjcf", "load", "load_simulated", "names_a_file"]
