"""Named configurations from SRDF files: the ``group_state`` elements (MoveIt's semantic robot
description), such as example-robot-data's ``standing`` of its quadrupeds and ``half_sitting``
of Talos.

A group state gives values to some joints by name; the others keep their neutral value. A
floating base (``root_joint``, or the SRDF's floating ``virtual_joint``) takes seven values,
position then quaternion ``x y z w``, as invdyn's layout; a continuous joint's angle becomes
its ``(cos, sin)`` pair.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from xml.etree.ElementTree import ParseError

import defusedxml.ElementTree as ElementTree
import numpy as np
from numpy.typing import NDArray

from invdyn.configuration import neutral
from invdyn.errors import InputError, ModelError
from invdyn.model import JointType, Model

Float = NDArray[np.float64]


def reference_configurations(
    model: Model, path: str | os.PathLike[str], *, skip_unknown: bool = False
) -> dict[str, Float]:
    """The configurations of the SRDF file `path`'s group states, by name: (nq,) each.

    Args:
      model: the robot.
      path: the SRDF file.
      skip_unknown: leave out the joints that `model` lacks (a reduced model of the file's
        robot, as Pinocchio does), rather than refuse the file.

    Raises:
      ModelError: the file is missing or not XML, or a state names a joint that `model` lacks
        (unless `skip_unknown`) or gives it the wrong number of values.
    """
    path = Path(path)
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ParseError) as exc:
        raise ModelError(f"{path}: cannot read an SRDF file ({exc})") from None
    floating = {
        element.get("name")
        for element in root.iter("virtual_joint")
        if element.get("type") == "floating"
    }
    configurations = {}
    for state in root.iter("group_state"):
        name = state.get("name", "")
        q = neutral(model)
        for joint in state.iter("joint"):
            joint_name = str(joint.get("name"))
            values = joint.get("value", "").split()
            if joint_name in floating or joint_name == "root_joint":
                if not model.floating_base:
                    continue  # a fixed-base model has no floating base to place
                joint_name = model.jnt_name[0]
            elif skip_unknown and joint_name not in model.jnt_name:
                continue
            _set_joint(model, q, joint_name, values, f"{path}: group_state {name!r}")
        configurations[name] = q
    return configurations


def _set_joint(model: Model, q: Float, joint: str, values: list[str], where: str) -> None:
    """Write a joint's SRDF `values` into `q`, or `ModelError`."""
    try:
        index = model.jnt_name.index(joint)
    except ValueError:
        raise ModelError(f"{where}: {model.name} has no joint named {joint!r}") from None
    try:
        numbers = [float(x) for x in values]
    except ValueError:
        raise ModelError(f"{where}: joint {joint!r} has a value that is not a number") from None
    kind, start = JointType(model.jnt_type[index]), int(model.jnt_qadr[index])
    if kind == JointType.CONTINUOUS and len(numbers) == 1:
        q[start : start + 2] = math.cos(numbers[0]), math.sin(numbers[0])
        return
    size = int(model.jnt_nq[index])
    if len(numbers) != size or not all(math.isfinite(x) for x in numbers):
        raise ModelError(f"{where}: joint {joint!r} needs {size} finite values, got {values}")
    q[start : start + size] = numbers


def robot_configurations(model: Model) -> dict[str, Float]:
    """The reference configurations of a built-in robot of example-robot-data (loaded from its
    URDF, ``invdyn.load(name)``), from the SRDF files next to it (``../srdf/*.srdf``): those of
    the file named after the URDF (``anymal-kinova.srdf`` for ``anymal-kinova.urdf``), the
    joints it names that `model` lacks left out (``romeo_small.srdf`` names the toes that
    ``romeo_small.urdf`` drops), as the others describe sibling robots; else those of every
    file that fits `model`; empty when none does.

    Raises:
      InputError: `model` was not loaded from a file.
    """
    source = Path(model.source)
    if not source.is_file():
        raise InputError(f"{model.name}: not loaded from a file, so it has no SRDF files")
    found: dict[str, Float] = {}
    for srdf in sorted((source.parent.parent / "srdf").glob("*.srdf")):
        own = srdf.stem == source.stem
        try:
            states = reference_configurations(model, srdf, skip_unknown=own)
        except ModelError:
            continue
        if own:
            return states
        found = states | found
    return found
