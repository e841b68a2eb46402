"""Loading URDF robot descriptions into a `Model`.

The parser is strict at the boundary: the XML is read with defusedxml (no DTDs, entities or
external references) under a size cap, every number must be finite and well formed, and the links
and joints must form one tree. Any problem raises `ModelError` naming the file, the element and
the fault; mesh files are never opened. Inertias that are usable but physically doubtful load
with a `ModelWarning`, or raise under ``strict=True``.

The layout follows Pinocchio's ``buildModelFromUrdf`` exactly, so joint order, placements and
inertias compare one to one:

* bodies are numbered depth first from the root link, and the child joints of a link are visited
  in the order of their names (urdfdom keeps joints in a ``std::map``), fixed ones included;
* fixed joints are merged into the moving body they hang from, and every link survives as a frame
  placed in the body it is fixed to;
* with a fixed base the root link is the world (its inertia is ignored); with
  ``floating_base=True`` it is body 0, carried by a free-flyer joint named ``root_joint``.

One reading differs from Pinocchio's: a revolute or prismatic joint whose ``<limit>`` leaves
``lower`` and ``upper`` both 0 (or out: the format's default) has no position limits (infinite
`Model.q_lower` and `Model.q_upper`), as MuJoCo's URDF importer reads it; Pinocchio keeps the
empty range [0, 0], in which the joint could not move. Files write it so for joints meant to
turn freely (example-robot-data's ``double_pendulum``, ``quadruped``, ``centauro``'s wheels).

A ``<mimic>`` element is not a constraint here: the mimicking joint is a degree of freedom of
its own (the Panda's second finger, say), as in Pinocchio's default reading; MuJoCo's URDF
importer makes it a joint equality constraint instead. Couple it in the controller, or weld it
in the description, where the hardware couples it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import xml.etree.ElementTree
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar
from xml.etree.ElementTree import Element, ParseError

import defusedxml
import defusedxml.ElementTree
import numpy as np

from invdyn._files import atomic_open, check_regular_file
from invdyn.errors import InputError, ModelError, ModelWarning, warn
from invdyn.model import JOINTS, Float, JointType, Model
from invdyn.spatial import inertia_doubts, rpy_to_matrix

MAX_URDF_BYTES = 64 * 1024 * 1024
"""Largest URDF accepted, in bytes."""

ROOT_JOINT_NAME = "root_joint"
"""Name of the free-flyer joint added by ``floating_base=True`` (Pinocchio's name)."""

# round-off below this is not a violation of the inertia checks
_TOL = 1e-12
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# the moving URDF joint types, and those of them that move about or along an axis
_MOVING = {name: jtype for jtype, spec in JOINTS.items() for name in spec.urdf}
_AXIAL = tuple(name for name, jtype in _MOVING.items() if JOINTS[jtype].axial)
_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


@dataclasses.dataclass(frozen=True)
class _Link:
    """A link as written: mass, centre of mass, rotational inertia about it; link frame."""

    name: str
    mass: float
    com: Float
    inertia: Float


@dataclasses.dataclass(frozen=True)
class _Joint:
    """A joint as written, with its origin as a rotation and a position in the parent link."""

    name: str
    kind: str
    parent: str
    child: str
    rot: Float
    pos: Float
    axis: Float
    lower: float
    upper: float
    velocity: float
    effort: float
    damping: float
    friction: float


@dataclasses.dataclass(frozen=True)
class _Placed:
    """A link fixed to a body (-1 for the world): the link frame's placement in the body frame."""

    name: str
    body: int
    rot: Float
    pos: Float


@dataclasses.dataclass(frozen=True)
class _Body:
    """A moving body: its link, its joint (None for the free flyer), parent and placement."""

    link: str
    joint: _Joint | None
    parent: int
    rot: Float
    pos: Float


_Named = TypeVar("_Named", _Link, _Joint)


def load_urdf(
    path: str | os.PathLike[str],
    *,
    floating_base: bool = False,
    strict: bool = False,
    friction: bool = False,
) -> Model:
    """Load a robot from a URDF file.

    Args:
      path: the ``.urdf`` file; mesh files it names are never opened.
      floating_base: carry the root link on a free-flyer joint ``root_joint`` (body 0); otherwise
        the root link is the world.
      strict: raise `ModelError` instead of warning on physically doubtful inertias.
      friction: read ``<dynamics damping friction>`` into the model; otherwise they are zero.

    Returns:
      The validated model, with ``source`` the file path.

    Raises:
      InputError: `path` is not a regular file (a directory, a pipe, a device).
      ModelError: the file cannot be read, or is not a valid URDF.
    """
    source = os.fsdecode(path)
    check_regular_file(source, "a URDF file")
    # read one byte past the cap, so that an oversize file is seen without reading it all
    try:
        with open(source, "rb") as file:
            text = file.read(MAX_URDF_BYTES + 1)
    except OSError as error:
        raise ModelError(f"{source}: cannot read the file ({error.strerror or error})") from error
    model, doubts = _build(text, source, floating_base=floating_base, friction=friction)
    _report(doubts, strict=strict)
    return model


def parse_urdf(
    text: str | bytes,
    *,
    source: str = "<string>",
    floating_base: bool = False,
    strict: bool = False,
    friction: bool = False,
) -> Model:
    """Build a robot from the text of a URDF.

    Args:
      text: the XML document.
      source: the name that error messages and ``Model.source`` give the document.
      floating_base: carry the root link on a free-flyer joint ``root_joint`` (body 0); otherwise
        the root link is the world.
      strict: raise `ModelError` instead of warning on physically doubtful inertias.
      friction: read ``<dynamics damping friction>`` into the model; otherwise they are zero.

    Returns:
      The validated model.
    """
    model, doubts = _build(text, source, floating_base=floating_base, friction=friction)
    _report(doubts, strict=strict)
    return model


def _build(
    text: str | bytes, source: str, *, floating_base: bool, friction: bool
) -> tuple[Model, list[str]]:
    """The model of a URDF document and the physical doubts about it, one message each."""
    robot = _parse_xml(text, source)
    name = robot.get("name")
    if not name:
        raise ModelError(f"{source}: <robot> has no name attribute")

    # links and joints as written, names unique
    links = _unique(
        [_parse_link(e, i, source) for i, e in enumerate(robot.findall("link"))], "link", source
    )
    joints = _unique(
        [_parse_joint(e, i, source) for i, e in enumerate(robot.findall("joint"))], "joint", source
    )
    if not links:
        raise ModelError(f"{source}: robot {name!r} has no links")
    if floating_base and ROOT_JOINT_NAME in joints:
        raise ModelError(
            f"{source}: joint {ROOT_JOINT_NAME!r}: the name is reserved for the floating base"
        )

    # the tree, walked depth first as Pinocchio walks it
    root, children = _tree(links, joints, source)
    placed, bodies = _walk(root, children, floating_base=floating_base)
    for link in links:
        if link not in placed:
            raise ModelError(
                f"{source}: link {link!r} is not reachable from the root link {root!r}: "
                "its joints form a cycle"
            )

    inertias = _body_inertias(links, placed.values(), len(bodies))
    doubts = _inertia_doubts(links, list(placed.values()), inertias[0], inertias[2], source)
    massless = _massless_doubts(bodies, inertias[0], inertias[2], source)

    frames = list(placed.values())
    model = _assemble(name, bodies, frames, inertias, friction=friction, source=source)
    # a joint that moves a massless subtree already says why the mass matrix is singular
    return model, doubts + (massless or _singular_doubts(model, source))


def _report(doubts: list[str], *, strict: bool) -> None:
    """Warn about each doubt, or raise `ModelError` on the first under `strict`."""
    if strict and doubts:
        more = f" (and {len(doubts) - 1} more)" if len(doubts) > 1 else ""
        raise ModelError(doubts[0] + more)
    for doubt in doubts:
        warn(f"{doubt}; loaded as written", ModelWarning)


def _parse_xml(text: str | bytes, source: str) -> Element:
    """The root element of a document no larger than `MAX_URDF_BYTES`, parsed safely."""
    size = len(text.encode("utf-8", "replace")) if isinstance(text, str) else len(text)
    if size > MAX_URDF_BYTES:
        raise ModelError(
            f"{source}: the file is larger than the {MAX_URDF_BYTES} bytes a URDF may hold"
        )
    try:
        root = defusedxml.ElementTree.fromstring(
            text, forbid_dtd=True, forbid_entities=True, forbid_external=True
        )
    except defusedxml.DTDForbidden as error:
        raise ModelError(f"{source}: document type declarations (DTD) are not allowed") from error
    except defusedxml.EntitiesForbidden as error:
        raise ModelError(f"{source}: entity declarations are not allowed") from error
    except defusedxml.ExternalReferenceForbidden as error:
        raise ModelError(f"{source}: external references are not allowed") from error
    except (ParseError, defusedxml.DefusedXmlException, ValueError) as error:
        raise ModelError(f"{source}: malformed XML ({error})") from error
    namespace = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""
    if root.tag != namespace + "robot":
        raise ModelError(f"{source}: the root element is <{root.tag}>, expected <robot>")
    _check_not_xacro(root, source)
    # a default namespace (<robot xmlns="...">), which urdfdom ignores, is dropped from the tags
    # it names; elements of other namespaces keep theirs and are ignored
    for element in root.iter():
        if isinstance(element.tag, str) and namespace and element.tag.startswith(namespace):
            element.tag = element.tag[len(namespace) :]
    return root


def _check_not_xacro(root: Element, source: str) -> None:
    """`ModelError` if the document holds xacro markup (``<xacro:macro>``, ``<xacro:include>``,
    a macro's call...), which only the xacro processor expands: loaded as written, the robot
    would lack whatever the macros and includes make."""
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag.startswith("{") and "xacro" in element.tag:
            name = element.tag[element.tag.index("}") + 1 :]
            raise ModelError(
                f"{source}: <xacro:{name}> is xacro markup, not URDF: expand the file with "
                "xacro first (xacro robot.urdf.xacro > robot.urdf)"
            )


def _unique(items: list[_Named], kind: str, source: str) -> dict[str, _Named]:
    """`items` by name, raising `ModelError` on a name used twice."""
    by_name: dict[str, _Named] = {}
    for item in items:
        if item.name in by_name:
            raise ModelError(f"{source}: {kind} {item.name!r} is defined twice")
        by_name[item.name] = item
    return by_name


def _name(element: Element, index: int, source: str, kind: str) -> tuple[str, str]:
    """The element's name and the prefix its errors start with; an unnamed one is an error."""
    name = element.get("name")
    if not name:
        raise ModelError(f"{source}: {kind} #{index + 1} has no name")
    return name, f"{source}: {kind} {name!r}"


def _parse_link(element: Element, index: int, source: str) -> _Link:
    """A <link>: its inertia moved to the link frame, zero when it has no <inertial>."""
    name, where = _name(element, index, source, "link")
    inertial = _optional_child(element, "inertial", where)
    if inertial is None:
        return _Link(name, 0.0, np.zeros(3), np.zeros((3, 3)))

    # mass, and the rotational inertia about the centre of mass in the inertial frame
    rot, com = _origin(inertial, where, "inertial origin")
    mass = _number(_child(inertial, "mass", where).get("value"), where, "mass value")
    if mass < 0:
        raise ModelError(f"{where}: mass {mass:g} is negative")
    values = _child(inertial, "inertia", where)
    ixx, ixy, ixz, iyy, iyz, izz = (
        _number(values.get(k), where, f"inertia {k}") for k in _INERTIA_KEYS
    )
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])

    # rotated into the link frame
    return _Link(name, mass, com, rot @ tensor @ rot.T)


def _parse_joint(element: Element, index: int, source: str) -> _Joint:
    """A <joint>: type, links, origin, unit axis, limits and dynamics, checked."""
    name, where = _name(element, index, source, "joint")
    kind = element.get("type")
    if kind is None:
        raise ModelError(f"{where}: has no type attribute")
    if kind == "planar":
        raise ModelError(
            f"{where}: planar joints are not supported; "
            "use two prismatic joints and a revolute joint instead"
        )
    if kind not in (*_MOVING, "fixed"):
        raise ModelError(
            f"{where}: unknown joint type {kind!r}; "
            "expected revolute, continuous, prismatic, fixed or floating"
        )
    parent = _child(element, "parent", where).get("link")
    child = _child(element, "child", where).get("link")
    if not parent or not child:
        raise ModelError(f"{where}: <parent> and <child> need a link attribute")
    rot, pos = _origin(element, where, "origin")

    # axis, limits and dynamics matter to the joints that move along an axis
    axis, lower, upper = np.array([1.0, 0.0, 0.0]), -np.inf, np.inf
    velocity, effort, damping, friction = np.inf, np.inf, 0.0, 0.0
    if kind in _AXIAL:
        axis = _axis(element, where)
        limit = _optional_child(element, "limit", where)
        if limit is None and kind != "continuous":
            raise ModelError(f"{where}: a {kind} joint needs a <limit> element")
        if limit is not None:
            velocity = _number(limit.get("velocity"), where, "limit velocity", np.inf, sign=True)
            effort = _number(limit.get("effort"), where, "limit effort", np.inf, sign=True)
        if limit is not None and kind != "continuous":
            lower = _number(limit.get("lower"), where, "limit lower", 0.0)
            upper = _number(limit.get("upper"), where, "limit upper", 0.0)
            if lower > upper:
                raise ModelError(f"{where}: limit lower {lower:g} is above upper {upper:g}")
            if lower == upper == 0.0:
                lower, upper = -np.inf, np.inf
        dynamics = _optional_child(element, "dynamics", where)
        if dynamics is not None:
            damping = _number(dynamics.get("damping"), where, "dynamics damping", 0.0, sign=True)
            friction = _number(dynamics.get("friction"), where, "dynamics friction", 0.0, sign=True)
    return _Joint(
        name, kind, parent, child, rot, pos, axis, lower, upper, velocity, effort, damping, friction
    )


def _child(element: Element, tag: str, where: str) -> Element:
    """The <tag> child of `element`, raising `ModelError` when there is none or several."""
    found = _optional_child(element, tag, where)
    if found is None:
        raise ModelError(f"{where}: <{element.tag}> has no <{tag}> element")
    return found


def _optional_child(element: Element, tag: str, where: str) -> Element | None:
    """The <tag> child of `element`, None when there is none, `ModelError` when there are
    several (the format allows one, and readers differ on which of several they take)."""
    found = element.findall(tag)
    if len(found) > 1:
        raise ModelError(
            f"{where}: <{element.tag}> has {len(found)} <{tag}> elements; the format allows one"
        )
    return found[0] if found else None


def _origin(element: Element, where: str, what: str) -> tuple[Float, Float]:
    """(3, 3) rotation and (3,) position of `element`'s <origin>, identity when it has none."""
    origin = _optional_child(element, "origin", where)
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = _numbers(origin.get("xyz"), 3, where, f"{what} xyz", default=(0.0, 0.0, 0.0))
    rpy = _numbers(origin.get("rpy"), 3, where, f"{what} rpy", default=(0.0, 0.0, 0.0))
    return rpy_to_matrix(rpy), xyz


def _axis(element: Element, where: str) -> Float:
    """(3,) unit joint axis, (1, 0, 0) when there is no <axis>."""
    found = _optional_child(element, "axis", where)
    text = None if found is None else found.get("xyz")
    axis = _numbers(text, 3, where, "axis xyz", default=(1.0, 0.0, 0.0))
    norm = float(np.linalg.norm(axis))
    if norm < _TOL:
        raise ModelError(f"{where}: axis xyz={text!r} has zero length")
    return axis / norm


def _numbers(
    text: str | None, count: int, where: str, what: str, default: Sequence[float] | None = None
) -> Float:
    """(count,) finite numbers written in `text`, `default` when it is absent."""
    if text is None:
        if default is None:
            raise ModelError(f"{where}: {what} is missing")
        return np.array(default, dtype=np.float64)
    words = text.split()
    values = np.array([float(w) for w in words if _NUMBER.fullmatch(w)], dtype=np.float64)
    if len(words) != count or len(values) != count or not np.all(np.isfinite(values)):
        expected = "a finite number" if count == 1 else f"{count} finite numbers"
        raise ModelError(f"{where}: {what}={text!r} is not {expected}")
    return values


def _number(
    text: str | None, where: str, what: str, default: float | None = None, *, sign: bool = False
) -> float:
    """A finite number written in `text`, `default` when absent; non-negative under `sign`."""
    value = float(_numbers(text, 1, where, what, None if default is None else (default,))[0])
    if sign and value < 0:
        raise ModelError(f"{where}: {what} {value:g} is negative")
    return value


def _tree(
    links: dict[str, _Link], joints: dict[str, _Joint], source: str
) -> tuple[str, dict[str, list[_Joint]]]:
    """The root link, and the child joints of each link in the order of their names."""
    parent_joint: dict[str, str] = {}
    children: dict[str, list[_Joint]] = {name: [] for name in links}
    for joint in sorted(joints.values(), key=lambda j: j.name):
        where = f"{source}: joint {joint.name!r}"
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise ModelError(f"{where}: {role} link {link!r} does not exist")
        if joint.parent == joint.child:
            raise ModelError(f"{where}: joins link {joint.child!r} to itself (a cycle)")
        if joint.child in parent_joint:
            raise ModelError(
                f"{source}: link {joint.child!r} is the child of two joints, "
                f"{parent_joint[joint.child]!r} and {joint.name!r} (a cycle); "
                "a URDF must be a tree"
            )
        parent_joint[joint.child] = joint.name
        children[joint.parent].append(joint)

    # exactly one link is no joint's child
    roots = [name for name in links if name not in parent_joint]
    if not roots:
        raise ModelError(f"{source}: no root link: every link is a joint's child (a cycle)")
    if len(roots) > 1:
        names = ", ".join(repr(r) for r in roots)
        raise ModelError(
            f"{source}: {len(roots)} root links ({names}); a URDF must have exactly one"
        )
    return roots[0], children


def _walk(
    root: str, children: dict[str, list[_Joint]], *, floating_base: bool
) -> tuple[dict[str, _Placed], list[_Body]]:
    """Links placed in their bodies, and the moving bodies, both depth first from `root`."""
    placed: dict[str, _Placed] = {}
    bodies: list[_Body] = []
    stack: list[tuple[str, _Joint | None]] = [(root, None)]
    while stack:
        link, joint = stack.pop()
        if joint is None:
            # the root link: the world, or body 0 on a free flyer
            if floating_base:
                bodies.append(_Body(link, None, -1, np.eye(3), np.zeros(3)))
            placed[link] = _Placed(link, len(bodies) - 1, np.eye(3), np.zeros(3))
        else:
            # the joint frame in the body that carries the parent link
            up = placed[joint.parent]
            rot, pos = up.rot @ joint.rot, up.rot @ joint.pos + up.pos
            if joint.kind == "fixed":
                placed[link] = _Placed(link, up.body, rot, pos)
            else:
                bodies.append(_Body(link, joint, up.body, rot, pos))
                placed[link] = _Placed(link, len(bodies) - 1, np.eye(3), np.zeros(3))
        stack.extend((j.child, j) for j in reversed(children[link]))
    return placed, bodies


def _body_inertias(
    links: dict[str, _Link], placed: Iterable[_Placed], nbody: int
) -> tuple[Float, Float, Float]:
    """(nbody,) masses, (nbody, 3) centres of mass and (nbody, 3, 3) inertias about them.

    The links fixed to a body combine exactly: m = sum m_i, c = sum m_i c_i / m and
    I = sum R_i I_i R_i^T + m_i (|d_i|^2 E - d_i d_i^T) with d_i = c_i - c (parallel axes).
    """
    mass, com, inertia = np.zeros(nbody), np.zeros((nbody, 3)), np.zeros((nbody, 3, 3))
    parts: list[list[tuple[float, Float, Float]]] = [[] for _ in range(nbody)]
    for frame in placed:
        if frame.body >= 0:
            link = links[frame.name]
            com_in_body = frame.rot @ link.com + frame.pos
            inertia_in_body = frame.rot @ link.inertia @ frame.rot.T
            parts[frame.body].append((link.mass, com_in_body, inertia_in_body))
    for i, body_parts in enumerate(parts):
        # total mass and centre of mass
        mass[i] = sum(m for m, _, _ in body_parts)
        if mass[i] > 0:
            com[i] = sum(m * c for m, c, _ in body_parts) / mass[i]
        # rotational inertias moved to the common centre of mass
        for m, c, rotational in body_parts:
            d = c - com[i]
            inertia[i] += rotational + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, inertia


def _inertia_doubts(
    links: dict[str, _Link], placed: list[_Placed], mass: Float, inertia: Float, source: str
) -> list[str]:
    """What is physically doubtful about the inertias: each link's as written, and where links
    are welded into one body, that body's, which is what the dynamics see. A link that is part
    of a body (or fixed to the world) may break the triangle inequality, as a massless dummy
    link's rank-one inertia does, when the body it makes up does not.

    Args:
      mass, inertia: (nbody,) and (nbody, 3, 3), as `_body_inertias` merges them.
    """
    parts = Counter(frame.body for frame in placed)
    doubts, doubted_bodies = [], set()
    for frame in placed:
        link = links[frame.name]
        alone = frame.body >= 0 and parts[frame.body] == 1
        for doubt in inertia_doubts(link.mass, link.inertia, triangle=alone):
            doubts.append(f"{source}: link {link.name!r}: {doubt}")
            doubted_bodies.add(frame.body)
    for body in sorted(parts):
        if body < 0 or parts[body] == 1 or body in doubted_bodies:
            continue
        names = ", ".join(repr(frame.name) for frame in placed if frame.body == body)
        for doubt in inertia_doubts(mass[body], inertia[body]):
            doubts.append(f"{source}: links {names}, welded together: {doubt}")
    return doubts


def _massless_doubts(bodies: list[_Body], mass: Float, inertia: Float, source: str) -> list[str]:
    """A message for each moving joint whose subtree has no mass and no inertia."""
    subtree_mass = mass.copy()
    subtree_inertia = np.abs(inertia).sum(axis=(1, 2))
    for i in range(len(bodies) - 1, -1, -1):
        if bodies[i].parent >= 0:
            subtree_mass[bodies[i].parent] += subtree_mass[i]
            subtree_inertia[bodies[i].parent] += subtree_inertia[i]
    return [
        f"{source}: joint {_joint_name(body)!r}: moves a subtree with zero mass and zero inertia, "
        "so the mass matrix is singular"
        for i, body in enumerate(bodies)
        if subtree_mass[i] <= _TOL and subtree_inertia[i] <= _TOL
    ]


def _singular_doubts(model: Model, source: str) -> list[str]:
    """Messages for a mass matrix that is singular at the neutral configuration: joints that
    together move no mass or inertia, which no torque can control and no simulation can
    follow. A free joint that floats a link of zero mass and zero inertia whose children's
    joints can undo its motion is named as such, whatever the configuration; otherwise the
    joints of the motion that moves nothing."""
    from invdyn.configuration import neutral
    from invdyn.dynamics import singular_joints

    joints = singular_joints(model, neutral(model))
    if not joints:
        return []
    children = set(model.body_parent.tolist())
    floating = [
        i
        for i in range(model.nbody)
        if model.jnt_type[i] == JointType.FREE
        and i in children
        and model.body_mass[i] <= _TOL
        and np.abs(model.body_inertia[i]).sum() <= _TOL
    ]
    if floating:
        return [
            f"{source}: joint {model.jnt_name[i]!r}: floats link {model.body_name[i]!r}, which "
            "has zero mass and zero inertia, and the joints below it can undo its motion, so "
            f"the mass matrix is singular (give {model.body_name[i]!r} an <inertial>)"
            for i in floating
        ]
    return [
        f"{source}: the mass matrix is singular at the neutral configuration: joints "
        f"{', '.join(map(repr, joints))} together move links of no mass or inertia (the "
        "smallest eigenvalue is ~0), so forward dynamics is undefined and a simulation cannot "
        "follow torques on them (give their links rotational inertia, or armature)"
    ]


def _joint_name(body: _Body) -> str:
    """The name of the joint that carries `body`."""
    return ROOT_JOINT_NAME if body.joint is None else body.joint.name


def _limits(
    joint: _Joint | None, jtype: JointType, *, friction: bool
) -> tuple[Float, Float, Float]:
    """Position limits, and per degree of freedom limits and losses, of one joint.

    Returns:
      (nq,) lower and (nq,) upper position limits, and (nv, 4) rows of velocity limit, effort
      limit, damping and Coulomb friction; the free flyer is unbounded and lossless.
    """
    nq, nv = JOINTS[jtype].nq, JOINTS[jtype].nv
    if joint is None or jtype == JointType.FREE:
        dof = np.tile([np.inf, np.inf, 0.0, 0.0], (nv, 1))
        return np.full(nq, -np.inf), np.full(nq, np.inf), dof
    loss = (joint.damping, joint.friction) if friction else (0.0, 0.0)
    dof = np.array([[joint.velocity, joint.effort, *loss]])
    return np.full(nq, joint.lower), np.full(nq, joint.upper), dof


def _assemble(
    name: str,
    bodies: list[_Body],
    frames: list[_Placed],
    inertias: tuple[Float, Float, Float],
    *,
    friction: bool,
    source: str,
) -> Model:
    """The `Model` of the walked tree: bodies, joints, limits per coordinate and frames."""
    nbody = len(bodies)
    types = [JointType.FREE if b.joint is None else _MOVING[b.joint.kind] for b in bodies]
    axes = [
        b.joint.axis if b.joint is not None and JOINTS[t].axial else np.zeros(3)
        for b, t in zip(bodies, types, strict=True)
    ]

    # limits per coordinate of q and of v
    limits = [_limits(b.joint, t, friction=friction) for b, t in zip(bodies, types, strict=True)]
    q_lower = np.concatenate([np.zeros(0), *(lower for lower, _, _ in limits)])
    q_upper = np.concatenate([np.zeros(0), *(upper for _, upper, _ in limits)])
    dof = np.concatenate([np.zeros((0, 4)), *(d for _, _, d in limits)])

    mass, com, inertia = inertias
    return Model(
        name=name,
        body_name=tuple(b.link for b in bodies),
        jnt_name=tuple(_joint_name(b) for b in bodies),
        body_parent=np.array([b.parent for b in bodies], dtype=np.int64),
        body_mass=mass,
        body_com=com,
        body_inertia=inertia,
        jnt_type=np.array([int(t) for t in types], dtype=np.int64),
        jnt_axis=np.array(axes, dtype=np.float64).reshape(nbody, 3),
        jnt_pos=np.array([b.pos for b in bodies], dtype=np.float64).reshape(nbody, 3),
        jnt_rot=np.array([b.rot for b in bodies], dtype=np.float64).reshape(nbody, 3, 3),
        q_lower=q_lower,
        q_upper=q_upper,
        dof_velocity_limit=dof[:, 0],
        dof_effort_limit=dof[:, 1],
        dof_armature=np.zeros(len(dof)),
        dof_damping=dof[:, 2],
        dof_friction=dof[:, 3],
        frame_name=tuple(f.name for f in frames),
        frame_body=np.array([f.body for f in frames], dtype=np.int64),
        frame_pos=np.array([f.pos for f in frames], dtype=np.float64).reshape(-1, 3),
        frame_rot=np.array([f.rot for f in frames], dtype=np.float64).reshape(-1, 3, 3),
        gravity=np.array([0.0, 0.0, -9.81]),
        source=source,
        # a URDF describes no actuators: its joints are driven, the floating base is not
        dof_actuated=np.concatenate(
            [np.zeros(0, dtype=bool), *(np.full(JOINTS[t].nv, t != JointType.FREE) for t in types)]
        ),
    )


def write_urdf(
    model: Model, path: str | os.PathLike[str], *, source: str | os.PathLike[str] | None = None
) -> None:
    """Write the URDF `model` was loaded from, with `model`'s masses, inertias and friction.

    The description is copied element for element except for the dynamic parameters: the link
    of each moving body carries that body's whole inertial (its centre of mass and its inertia
    about it, in the link frame), the links merged into it by fixed joints lose theirs, and each
    moving joint's ``<dynamics>`` holds its viscous (``damping``) and Coulomb (``friction``)
    friction. URDF has no rotor inertia, and a free flyer no joint: armature, and the free
    flyer's damping and friction, are not written. Loading the written file with
    ``invdyn.load(path, friction=True)`` (which reads ``<dynamics>``) gives `model`'s dynamics
    otherwise. The file is written atomically.

    Args:
      model: the robot, with the parameters to write (`invdyn.with_parameters` makes one of
        identified parameters).
      path: the URDF to write.
      source: the URDF `model` was loaded from; default ``model.source``.

    Raises:
      ModelError: the source is not a URDF of this robot (a link or joint is missing).
      InputError: `path` cannot be written.
    """
    source = Path(source if source is not None else model.source)
    if source.suffix.lower() != ".urdf" or not source.is_file():
        raise InputError(
            f"{model.name}: writing a URDF needs the URDF the model was loaded from; "
            f"{str(source)!r} is not one (pass source=)"
        )
    root = _parse_xml(source.read_bytes(), str(source))
    links = {element.get("name"): element for element in root.findall("link")}
    joints = {element.get("name"): element for element in root.findall("joint")}
    for i, name in enumerate(model.body_name):
        _set_inertial(_element(links, name, "link", source), model, i)
    for frame, body in zip(model.frame_name, model.frame_body):
        if body >= 0 and frame not in model.body_name and frame in links:
            for inertial in links[frame].findall("inertial"):
                links[frame].remove(inertial)
    for i, name in enumerate(model.jnt_name):
        if model.jnt_type[i] == JointType.FREE and name not in joints:
            continue
        dof = int(model.jnt_vadr[i])
        _set_dynamics(_element(joints, name, "joint", source), model, dof)
    text = xml.etree.ElementTree.tostring(root, encoding="unicode")
    try:
        with atomic_open(path) as out:
            out.write('<?xml version="1.0"?>\n' + text + "\n")
    except OSError as error:
        raise InputError(f"cannot write {path}: {error}") from None


def _element(elements: dict[str | None, Element], name: str, kind: str, source: Path) -> Element:
    if name not in elements:
        raise ModelError(f"{source}: no {kind} named {name!r}; is it the URDF of this model?")
    return elements[name]


def _set_inertial(link: Element, model: Model, i: int) -> None:
    """Replace the <inertial> of `link` by body i's."""
    for inertial in link.findall("inertial"):
        link.remove(inertial)
    inertial = xml.etree.ElementTree.SubElement(link, "inertial")
    com = model.body_com[i]
    xml.etree.ElementTree.SubElement(
        inertial, "origin", xyz=" ".join(repr(float(x)) for x in com), rpy="0 0 0"
    )
    xml.etree.ElementTree.SubElement(inertial, "mass", value=repr(float(model.body_mass[i])))
    inertia = model.body_inertia[i]
    xml.etree.ElementTree.SubElement(
        inertial,
        "inertia",
        {
            name: repr(float(inertia[r, c]))
            for name, (r, c) in {
                "ixx": (0, 0),
                "ixy": (0, 1),
                "ixz": (0, 2),
                "iyy": (1, 1),
                "iyz": (1, 2),
                "izz": (2, 2),
            }.items()
        },
    )


def _set_dynamics(joint: Element, model: Model, dof: int) -> None:
    """Set the <dynamics> of `joint` to the damping and friction of `dof`."""
    dynamics = joint.find("dynamics")
    if dynamics is None:
        dynamics = xml.etree.ElementTree.SubElement(joint, "dynamics")
    dynamics.set("damping", repr(float(model.dof_damping[dof])))
    dynamics.set("friction", repr(float(model.dof_friction[dof])))


@dataclasses.dataclass(frozen=True)
class Shape:
    """A geometry a URDF link shows, for drawing it: a mesh file or a primitive.

    Attributes:
      link: the link's name.
      kind: "mesh", "box", "cylinder" or "sphere".
      rot: (3, 3) orientation of the shape in the link frame.
      pos: (3,) position of the shape in the link frame.
      size: (3,) a box's half-sides, a cylinder's radius, half-length and 0, a sphere's
        radius and two 0, or a mesh's scale along its axes.
      file: a mesh's file, resolved to a path; None for a primitive.
    """

    link: str
    kind: str
    rot: Float
    pos: Float
    size: Float
    file: Path | None = None


MESH_SUFFIXES = (".stl", ".obj")
"""Mesh formats that MuJoCo reads, and so that `link_shapes` returns."""


def link_shapes(path: str | os.PathLike[str], *, element: str = "collision") -> list[Shape]:
    """The geometries of every link of a URDF: boxes, cylinders, spheres, and the meshes in
    `MESH_SUFFIXES` formats that exist.

    ``package://<package>/<path>`` resolves against the nearest directory named <package>
    above the URDF file (as example-robot-data installs), ``file://`` and absolute paths as
    they are, and relative paths against the URDF's directory. Meshes in other formats or whose
    file is missing are left out, with one `ModelWarning` that names them.

    Args:
      path: the URDF file.
      element: "collision" (simple closed meshes and primitives) or "visual".

    Raises:
      ModelError: a primitive's size, or an origin, that is not finite numbers.
    """
    source = Path(path)
    root = _parse_xml(source.read_bytes(), str(source))
    shapes, left_out = [], []
    for link in root.findall("link"):
        where = f"{source}: link {link.get('name')!r}"
        for element_ in link.findall(element):
            geometry = element_.find("geometry")
            found = _shape_geometry(source, geometry, where)
            if found is None:
                mesh = None if geometry is None else geometry.find("mesh")
                if mesh is not None:
                    left_out.append(mesh.get("filename") or "(no filename)")
                continue
            kind, size, file = found
            rot, pos = _origin(element_, where, f"{element} origin")
            shapes.append(Shape(str(link.get("name")), kind, rot, pos, size, file))
    if left_out:
        more = f" and {len(left_out) - 3} more" if len(left_out) > 3 else ""
        warn(
            f"{source}: {len(left_out)} {element} meshes left out, their files missing or not "
            f"{'/'.join(MESH_SUFFIXES)}: {', '.join(left_out[:3])}{more}",
            ModelWarning,
        )
    return shapes


def _shape_geometry(
    source: Path, geometry: Element | None, where: str
) -> tuple[str, Float, Path | None] | None:
    """Kind, (3,) size (as `Shape`) and mesh file of a <geometry>; None for a shape that
    cannot be drawn (a mesh in another format or missing, an unknown element, none)."""
    first = None if geometry is None else next(iter(geometry), None)
    if first is None:
        return None
    if first.tag == "mesh":
        file = _mesh_file(source, first.get("filename") or "")
        if file is None or file.suffix.lower() not in MESH_SUFFIXES or not file.is_file():
            return None
        scale = _numbers(first.get("scale"), 3, where, "mesh scale", default=(1.0, 1.0, 1.0))
        return "mesh", scale, file
    if first.tag == "box":
        return "box", 0.5 * _numbers(first.get("size"), 3, where, "box size"), None
    if first.tag == "cylinder":
        radius = _number(first.get("radius"), where, "cylinder radius", sign=True)
        length = _number(first.get("length"), where, "cylinder length", sign=True)
        return "cylinder", np.array([radius, 0.5 * length, 0.0]), None
    if first.tag == "sphere":
        radius = _number(first.get("radius"), where, "sphere radius", sign=True)
        return "sphere", np.array([radius, 0.0, 0.0]), None
    return None


def _mesh_file(source: Path, name: str) -> Path | None:
    """The path a URDF mesh filename names, or None when it cannot be resolved."""
    if name.startswith("package://"):
        # package:///<package>/... (an empty host, as talos_full writes it) names it too
        package, _, rest = name.removeprefix("package://").lstrip("/").partition("/")
        for folder in source.absolute().parents:
            if folder.name == package:
                return folder / rest
        return None
    if name.startswith("file://"):
        return Path(name.removeprefix("file://"))
    file = Path(name)
    return file if file.is_absolute() else source.parent / file
