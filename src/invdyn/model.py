"""The robot model: a frozen structure of arrays shared by every algorithm.

A `Model` is a kinematic tree of ``nbody`` moving bodies. Body ``i`` is attached to its parent
``body_parent[i]`` (``-1`` for the world) by exactly one moving joint; fixed joints are merged
into their parent when a description is loaded, and the links they carried survive as frames.
Bodies are ordered depth first, so a parent always comes before its children.

The body frame of body ``i`` is its joint frame after the joint has moved: at ``q`` the placement
of body ``i`` in its parent is ``(jnt_rot[i] @ R_j(q), jnt_pos[i] + jnt_rot[i] @ p_j(q))`` with
``(R_j, p_j)`` the joint's own motion about or along ``jnt_axis[i]`` (see `JointType`).
Inertias are expressed in the body frame: ``body_com`` is the centre of mass and
``body_inertia`` the rotational inertia about it.

Joint types are described in one table, `JOINTS`: each type's sizes, neutral configuration,
integration and difference of velocities, motion subspace, names in URDF and MJCF, and MuJoCo
layout. Code that handles joints looks their type up there rather than comparing types; a new
joint type is one entry of the table and its code in the kernels (`invdyn.kernels`).
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
from collections.abc import Callable, Hashable, Mapping
from enum import IntEnum
from functools import cached_property
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import packed
from invdyn.errors import InputError, ModelError
from invdyn.spatial import (
    quat_conjugate,
    quat_exp,
    quat_log,
    quat_multiply,
    quaternion_to_matrix,
    so3_left_jacobian,
    so3_left_jacobian_inverse,
    wxyz_to_xyzw,
    xyzw_to_wxyz,
)

Float = NDArray[np.float64]
Int = NDArray[np.int64]
T = TypeVar("T")
_DERIVED = "_derived"  # the instance attribute of `Model.derived`


class JointType(IntEnum):
    """Moving joint types, with their sizes in ``q`` and ``v``; `JOINTS` describes each, and a
    type's value is the code the compiled kernels read (``invdyn.kernels.cpu.REVOLUTE`` ...).

    REVOLUTE: angle about ``jnt_axis`` (nq 1, nv 1).
    CONTINUOUS: unbounded revolute stored as ``(cos, sin)`` (nq 2, nv 1), as in Pinocchio.
    PRISMATIC: displacement along ``jnt_axis`` (nq 1, nv 1).
    SPHERICAL: quaternion ``[x, y, z, w]`` and angular velocity in the body frame (nq 4, nv 3).
    FREE: ``[x, y, z, qx, qy, qz, qw]`` and ``[linear, angular]`` velocity in the body frame
      (nq 7, nv 6).
    """

    REVOLUTE = 0
    CONTINUOUS = 1
    PRISMATIC = 2
    SPHERICAL = 3
    FREE = 4


@dataclasses.dataclass(frozen=True)
class Direction:
    """The coordinates of a joint's ``q`` that hold a direction rather than values: a rotation
    stored as a quaternion or a ``(cos θ, sin θ)`` pair, read as the rotation it points to
    whatever its norm (a zero one has none).

    Attributes:
      start: the first coordinate, in the joint's ``q``.
      stop: one past the last.
      name: what they hold, for messages.
      draw: ``draw(rng, shape)``: (*shape, stop - start) uniformly distributed unit directions
        (uniform rotations, uniform angles).
    """

    start: int
    stop: int
    name: str
    draw: Callable[[np.random.Generator, tuple[int, ...]], Float]


@dataclasses.dataclass(frozen=True)
class JointSpec:
    """What invdyn knows of one joint type outside the compiled kernels: its coordinates, how
    they move, and what other formats call it. A new joint type is one entry of `JOINTS` and
    its code in the kernels.

    The functions take any leading dimensions: ``q`` (..., nq), ``v`` (..., nv).

    Attributes:
      nq: number of coordinates in ``q``.
      nv: number of coordinates in ``v``.
      neutral: (nq,) the neutral configuration (Pinocchio's ``neutral``).
      integrate: ``integrate(q, v)``, (..., nq): ``q ⊕ v``, exact on the joint's manifold
        (see `invdyn.configuration.integrate`).
      difference: ``difference(q0, q1)``, (..., nv): ``q1 ⊖ q0``, the inverse of `integrate`.
      motion: ``motion(axis)``, (nv, 6): the motion of each velocity coordinate in the body
        frame (the columns of S, [angular; linear]), of the joint's (3,) ``jnt_axis``.
      sampling_width: (nq,) for each coordinate of ``q``, how far beyond zero, or beyond a
        finite limit, random configurations reach where a limit is infinite (unused for the
        coordinates of `direction`, which are drawn apart).
      dof_units: (nv,) the unit of each velocity coordinate's displacement: "rad" or "m".
      mujoco: the MuJoCo joint type that simulates it ("hinge", "slide", "ball", "free").
      to_mujoco: ``to_mujoco(q, v)``: MuJoCo's (..., qpos size) and (..., qvel size) of the
        joint (see `invdyn.io.mujoco_state`).
      from_mujoco: ``from_mujoco(qpos, qvel)``: the joint's (..., nq) ``q`` and (..., nv) ``v``.
      direction: the coordinates of ``q`` that hold a direction, None where none do.
      q_names: suffixes that name the coordinates of ``q`` (columns of recordings), empty for
        a joint of one coordinate.
      v_names: the same of ``v``.
      force_names: the same of the joint's generalised forces.
      turns: whether the joint is one rotation about ``jnt_axis``.
      bounded: whether ``q`` is the joint's one coordinate itself, an angle or a length, which
        position limits bound and velocities add to (``q ⊕ v = q + v``).
      axial: whether the joint moves about or along ``jnt_axis`` (one velocity coordinate).
      urdf: the URDF joint types read as this type.
      mjcf: the MuJoCo joint type that the MJCF reader reads as this type; None for a type it
        does not produce (it reads a hinge as REVOLUTE).
    """

    nq: int
    nv: int
    neutral: tuple[float, ...]
    integrate: Callable[[Float, Float], Float]
    difference: Callable[[Float, Float], Float]
    motion: Callable[[Float], Float]
    sampling_width: tuple[float, ...]
    dof_units: tuple[str, ...]
    mujoco: str
    to_mujoco: Callable[[Float, Float], tuple[Float, Float]]
    from_mujoco: Callable[[Float, Float], tuple[Float, Float]]
    direction: Direction | None = None
    q_names: tuple[str, ...] = ()
    v_names: tuple[str, ...] = ()
    force_names: tuple[str, ...] = ()
    turns: bool = False
    bounded: bool = False
    axial: bool = False
    urdf: tuple[str, ...] = ()
    mjcf: str | None = None


# the joint types' functions, on (..., nq) configurations and (..., nv) velocities


def _add(q: Float, v: Float) -> Float:
    """q ⊕ v of a coordinate that velocities add to."""
    return q + v


def _subtract(q0: Float, q1: Float) -> Float:
    """q1 ⊖ q0 of a coordinate that velocities add to."""
    return q1 - q0


def _turn_pair(q: Float, v: Float) -> Float:
    """(cos θ, sin θ) turned by the angle v, renormalised."""
    c, s = q[..., 0], q[..., 1]
    cd, sd = np.cos(v[..., 0]), np.sin(v[..., 0])
    cs = np.stack([c * cd - s * sd, s * cd + c * sd], axis=-1)
    return cs / np.linalg.norm(cs, axis=-1, keepdims=True)


def _pair_difference(q0: Float, q1: Float) -> Float:
    """The angle from the (cos, sin) pair q0 to q1, in [-pi, pi]."""
    c0, s0, c1, s1 = q0[..., 0], q0[..., 1], q1[..., 0], q1[..., 1]
    return np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)[..., None]


def _turn_quaternion(q: Float, v: Float) -> Float:
    """R exp(ω): the quaternion turned by the rotation vector v in its own frame."""
    return _unit(quat_multiply(q, quat_exp(v)))


def _quaternion_difference(q0: Float, q1: Float) -> Float:
    """log(R0^T R1): the shortest rotation from q0 to q1, in q0's frame."""
    return quat_log(_unit(quat_multiply(quat_conjugate(q0), q1)))


def _move_free(q: Float, v: Float) -> Float:
    """M exp(v) on SE(3), the translation through the left Jacobian of SO(3), the quaternion in
    its start's hemisphere (as Pinocchio picks it)."""
    linear, angular = v[..., :3], v[..., 3:]
    quat = q[..., 3:]
    step = _apply(so3_left_jacobian(angular), linear)
    position = q[..., :3] + _apply(quaternion_to_matrix(_unit(quat)), step)
    moved = _turn_quaternion(quat, angular)
    flip = np.sum(moved * quat, axis=-1, keepdims=True) < 0.0
    return np.concatenate([position, np.where(flip, -moved, moved)], axis=-1)


def _free_difference(q0: Float, q1: Float) -> Float:
    """log(M0^-1 M1) on SE(3), the translation through the inverse left Jacobian."""
    quat0, quat1 = q0[..., 3:], q1[..., 3:]
    angular = _quaternion_difference(quat0, quat1)
    offset = _apply(
        np.swapaxes(quaternion_to_matrix(_unit(quat0)), -1, -2), q1[..., :3] - q0[..., :3]
    )
    return np.concatenate([_apply(so3_left_jacobian_inverse(angular), offset), angular], axis=-1)


def _as_is(x: Float, y: Float) -> tuple[Float, Float]:
    """Coordinates that MuJoCo stores as invdyn does."""
    return x, y


def _pair_to_angle(q: Float, v: Float) -> tuple[Float, Float]:
    """MuJoCo's hinge angle of a (cos, sin) pair."""
    return np.arctan2(q[..., 1], q[..., 0])[..., None], v


def _angle_to_pair(qpos: Float, qvel: Float) -> tuple[Float, Float]:
    """The (cos, sin) pair of MuJoCo's hinge angle."""
    return np.stack([np.cos(qpos[..., 0]), np.sin(qpos[..., 0])], axis=-1), qvel


def _to_wxyz(q: Float, v: Float) -> tuple[Float, Float]:
    """MuJoCo's ball joint: the quaternion as [w, x, y, z]."""
    return xyzw_to_wxyz(q), v


def _to_xyzw(qpos: Float, qvel: Float) -> tuple[Float, Float]:
    """A MuJoCo ball joint's quaternion as [x, y, z, w]."""
    return wxyz_to_xyzw(qpos), qvel


def _free_to_mujoco(q: Float, v: Float) -> tuple[Float, Float]:
    """MuJoCo's free joint: the quaternion as [w, x, y, z], the linear velocity in the world
    frame."""
    quat = q[..., 3:]
    rotation = quaternion_to_matrix(_unit(quat))
    qpos = np.concatenate([q[..., :3], xyzw_to_wxyz(quat)], axis=-1)
    return qpos, np.concatenate([_apply(rotation, v[..., :3]), v[..., 3:]], axis=-1)


def _free_from_mujoco(qpos: Float, qvel: Float) -> tuple[Float, Float]:
    """A MuJoCo free joint's quaternion as [x, y, z, w], its linear velocity in the body
    frame."""
    quat = wxyz_to_xyzw(qpos[..., 3:])
    rotation = np.swapaxes(quaternion_to_matrix(_unit(quat)), -1, -2)
    q = np.concatenate([qpos[..., :3], quat], axis=-1)
    return q, np.concatenate([_apply(rotation, qvel[..., :3]), qvel[..., 3:]], axis=-1)


def _turning(axis: Float) -> Float:
    """(1, 6) a rotation about `axis`."""
    return np.concatenate([axis, np.zeros(3)])[None]


def _sliding(axis: Float) -> Float:
    """(1, 6) a translation along `axis`."""
    return np.concatenate([np.zeros(3), axis])[None]


def _rotating(axis: Float) -> Float:
    """(3, 6) rotations about the body axes."""
    return np.eye(3, 6)


def _floating(axis: Float) -> Float:
    """(6, 6) translations along the body axes, then rotations about them ([linear, angular]
    velocities)."""
    return np.roll(np.eye(6), 3, axis=1)


def _uniform_pair(rng: np.random.Generator, shape: tuple[int, ...]) -> Float:
    """(*shape, 2) (cos θ, sin θ) of uniform angles."""
    angle = rng.uniform(-np.pi, np.pi, size=shape)
    return np.stack([np.cos(angle), np.sin(angle)], axis=-1)


def _uniform_quaternion(rng: np.random.Generator, shape: tuple[int, ...]) -> Float:
    """(*shape, 4) unit quaternions of uniform rotations."""
    quat = rng.standard_normal(size=(*shape, 4))
    return quat / np.linalg.norm(quat, axis=-1, keepdims=True)


def _apply(matrix: Float, vector: Float) -> Float:
    """(..., 3) products of (..., 3, 3) matrices and (..., 3) vectors."""
    return np.einsum("...ij,...j->...i", matrix, vector)


def _unit(quat: Float) -> Float:
    """(..., 4) unit quaternions along `quat`."""
    return quat / np.linalg.norm(quat, axis=-1, keepdims=True)


# where a limit is infinite, random angles reach this far (rad), random lengths this far (m)
_ANGLE_RANGE = np.pi
_LENGTH_RANGE = 1.0

JOINTS: Mapping[JointType, JointSpec] = MappingProxyType(
    {
        JointType.REVOLUTE: JointSpec(
            nq=1,
            nv=1,
            neutral=(0.0,),
            integrate=_add,
            difference=_subtract,
            motion=_turning,
            sampling_width=(_ANGLE_RANGE,),
            dof_units=("rad",),
            mujoco="hinge",
            to_mujoco=_as_is,
            from_mujoco=_as_is,
            turns=True,
            bounded=True,
            axial=True,
            urdf=("revolute",),
            mjcf="hinge",
        ),
        JointType.CONTINUOUS: JointSpec(
            nq=2,
            nv=1,
            neutral=(1.0, 0.0),
            integrate=_turn_pair,
            difference=_pair_difference,
            motion=_turning,
            sampling_width=(0.0, 0.0),
            dof_units=("rad",),
            mujoco="hinge",
            to_mujoco=_pair_to_angle,
            from_mujoco=_angle_to_pair,
            direction=Direction(0, 2, "(cos, sin)", _uniform_pair),
            q_names=("cos", "sin"),
            turns=True,
            axial=True,
            urdf=("continuous",),
        ),
        JointType.PRISMATIC: JointSpec(
            nq=1,
            nv=1,
            neutral=(0.0,),
            integrate=_add,
            difference=_subtract,
            motion=_sliding,
            sampling_width=(_LENGTH_RANGE,),
            dof_units=("m",),
            mujoco="slide",
            to_mujoco=_as_is,
            from_mujoco=_as_is,
            bounded=True,
            axial=True,
            urdf=("prismatic",),
            mjcf="slide",
        ),
        JointType.SPHERICAL: JointSpec(
            nq=4,
            nv=3,
            neutral=(0.0, 0.0, 0.0, 1.0),
            integrate=_turn_quaternion,
            difference=_quaternion_difference,
            motion=_rotating,
            sampling_width=(0.0,) * 4,
            dof_units=("rad",) * 3,
            mujoco="ball",
            to_mujoco=_to_wxyz,
            from_mujoco=_to_xyzw,
            direction=Direction(0, 4, "quaternion", _uniform_quaternion),
            q_names=("qx", "qy", "qz", "qw"),
            v_names=("wx", "wy", "wz"),
            force_names=("tx", "ty", "tz"),
            mjcf="ball",
        ),
        JointType.FREE: JointSpec(
            nq=7,
            nv=6,
            neutral=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            integrate=_move_free,
            difference=_free_difference,
            motion=_floating,
            sampling_width=(_LENGTH_RANGE,) * 3 + (0.0,) * 4,
            dof_units=("m",) * 3 + ("rad",) * 3,
            mujoco="free",
            to_mujoco=_free_to_mujoco,
            from_mujoco=_free_from_mujoco,
            direction=Direction(3, 7, "quaternion", _uniform_quaternion),
            q_names=("x", "y", "z", "qx", "qy", "qz", "qw"),
            v_names=("vx", "vy", "vz", "wx", "wy", "wz"),
            force_names=("fx", "fy", "fz", "tx", "ty", "tz"),
            urdf=("floating",),
            mjcf="free",
        ),
    }
)
"""Each joint type's `JointSpec`."""

# the unit of the generalised force along a displacement of each unit
_FORCE_UNITS = {"rad": "N·m", "m": "N"}


@dataclasses.dataclass(frozen=True, eq=False)
class JointGroup:
    """The joints of a model that share a type, to handle them in one vectorised step.

    Attributes:
      type: their type.
      bodies: (n,) their bodies, in order.
      q: (n, nq) the indices in ``q`` of each one's coordinates.
      v: (n, nv) the indices in ``v`` of each one's coordinates.
    """

    type: JointType
    bodies: Int
    q: Int
    v: Int

    @property
    def spec(self) -> JointSpec:
        """The type's `JointSpec`."""
        return JOINTS[self.type]


# per-body array fields and the trailing shape of each
_BODY_FIELDS = {
    "body_parent": (),
    "body_mass": (),
    "body_com": (3,),
    "body_inertia": (3, 3),
    "jnt_type": (),
    "jnt_axis": (3,),
    "jnt_pos": (3,),
    "jnt_rot": (3, 3),
}
_DOF_FIELDS = (
    "dof_velocity_limit",
    "dof_effort_limit",
    "dof_armature",
    "dof_damping",
    "dof_friction",
)
# rotation matrices (and symmetric inertias) may be off by this much round-off
ROTATION_TOLERANCE = 1e-6
_FRAME_FIELDS = {"frame_body": (), "frame_pos": (3,), "frame_rot": (3, 3)}
_NAME_FIELDS = ("body_name", "jnt_name", "frame_name")
_INT_FIELDS = ("body_parent", "jnt_type", "frame_body")
_BOOL_FIELDS = ("dof_actuated",)
# the array fields that are not float64
_FIELD_DTYPES = {**dict.fromkeys(_INT_FIELDS, np.int64), **dict.fromkeys(_BOOL_FIELDS, np.bool_)}


@dataclasses.dataclass(frozen=True, eq=False)
class Model:
    """A rigid-body tree as a frozen structure of arrays.

    Attributes:
      name: robot name.
      body_name: (nbody,) names of the links the moving joints carry.
      jnt_name: (nbody,) names of the moving joints, in ``v`` order.
      body_parent: (nbody,) parent body index, -1 for the world.
      body_mass: (nbody,) masses, fixed children merged in.
      body_com: (nbody, 3) centres of mass in the body frame.
      body_inertia: (nbody, 3, 3) rotational inertias about the centre of mass, body frame.
      jnt_type: (nbody,) `JointType` values.
      jnt_axis: (nbody, 3) unit joint axes in the joint frame (unused by SPHERICAL and FREE).
      jnt_pos: (nbody, 3) joint frame origins in the parent body frame.
      jnt_rot: (nbody, 3, 3) joint frame orientations in the parent body frame.
      q_lower: (nq,) lower position limits, -inf where unbounded.
      q_upper: (nq,) upper position limits, +inf where unbounded.
      dof_velocity_limit: (nv,) velocity limits, +inf where unknown.
      dof_effort_limit: (nv,) effort limits, +inf where unknown.
      dof_armature: (nv,) rotor inertias added to the mass matrix diagonal.
      dof_damping: (nv,) viscous friction coefficients, ``tau += damping * v``.
      dof_friction: (nv,) Coulomb friction, ``tau += friction * sign(v)``.
      frame_name: (nframe,) names of the frames (every link of the description).
      frame_body: (nframe,) body each frame is fixed to, -1 for the world.
      frame_pos: (nframe, 3) frame origins in their body frame.
      frame_rot: (nframe, 3, 3) frame orientations in their body frame.
      gravity: (3,) gravity in the world frame.
      source: the file the model was loaded from, or a built-in name.
      dof_actuated: (nv,) whether an actuator can exert a force on each velocity coordinate;
        None (the default) for every one. An MJCF file that declares actuators leaves the
        coordinates no actuator reaches passive (a pendulum's hinge, a hopper's root slides);
        a URDF's joints are all driven and the floating base it is loaded with is passive.
    """

    name: str
    body_name: tuple[str, ...]
    jnt_name: tuple[str, ...]
    body_parent: Int
    body_mass: Float
    body_com: Float
    body_inertia: Float
    jnt_type: Int
    jnt_axis: Float
    jnt_pos: Float
    jnt_rot: Float
    q_lower: Float
    q_upper: Float
    dof_velocity_limit: Float
    dof_effort_limit: Float
    dof_armature: Float
    dof_damping: Float
    dof_friction: Float
    frame_name: tuple[str, ...]
    frame_body: Int
    frame_pos: Float
    frame_rot: Float
    gravity: Float = dataclasses.field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    source: str = ""
    # None on construction stands for every coordinate; __post_init__ stores the array
    dof_actuated: NDArray[np.bool_] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.dof_actuated is None:
            every = np.ones(np.shape(self.dof_effort_limit), dtype=bool)
            object.__setattr__(self, "dof_actuated", every)
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name in _NAME_FIELDS:
                object.__setattr__(self, field.name, tuple(str(n) for n in value))
            elif field.name not in ("name", "source"):
                if field.name in _BOOL_FIELDS and not _holds_flags(value):
                    raise ModelError(
                        f"model {self.name!r}: field {field.name} must hold booleans (or 0 and "
                        f"1), got {value!r}"
                    )
                dtype = _FIELD_DTYPES.get(field.name, np.float64)
                try:
                    array: np.ndarray = np.array(value, dtype=dtype)
                except (TypeError, ValueError) as exc:
                    raise ModelError(f"model {self.name!r}: field {field.name}: {exc}") from None
                object.__setattr__(self, field.name, _readonly(array))
        _validate(self)
        # every derived property computed now, so that no traced call (torch.compile) does
        for name in _CACHED:
            getattr(self, name)

    # sizes and layout, derived from the joint types
    @cached_property
    def nbody(self) -> int:
        """Number of moving bodies (one moving joint each)."""
        return len(self.body_parent)

    @cached_property
    def jnt_spec(self) -> tuple[JointSpec, ...]:
        """(nbody,) the `JointSpec` of each joint's type."""
        return tuple(JOINTS[JointType(t)] for t in self.jnt_type)

    @cached_property
    def jnt_nq(self) -> Int:
        """(nbody,) number of configuration coordinates of each joint."""
        return _readonly(np.array([spec.nq for spec in self.jnt_spec], dtype=np.int64))

    @cached_property
    def jnt_nv(self) -> Int:
        """(nbody,) number of velocity coordinates of each joint."""
        return _readonly(np.array([spec.nv for spec in self.jnt_spec], dtype=np.int64))

    @cached_property
    def jnt_qadr(self) -> Int:
        """(nbody,) first index of each joint in ``q``."""
        return _readonly((np.cumsum(self.jnt_nq) - self.jnt_nq).astype(np.int64))

    @cached_property
    def jnt_vadr(self) -> Int:
        """(nbody,) first index of each joint in ``v``."""
        return _readonly((np.cumsum(self.jnt_nv) - self.jnt_nv).astype(np.int64))

    @cached_property
    def jnt_groups(self) -> tuple[JointGroup, ...]:
        """The joints grouped by type, in `JointType` order, each type that the model has."""
        groups = []
        for code in np.unique(self.jnt_type):
            jtype, bodies = JointType(code), np.flatnonzero(self.jnt_type == code)
            q = self.jnt_qadr[bodies, None] + np.arange(JOINTS[jtype].nq)
            v = self.jnt_vadr[bodies, None] + np.arange(JOINTS[jtype].nv)
            groups.append(JointGroup(jtype, _readonly(bodies), _readonly(q), _readonly(v)))
        return tuple(groups)

    @cached_property
    def dof_body(self) -> Int:
        """(nv,) body moved by each velocity coordinate."""
        return _readonly(np.repeat(np.arange(self.nbody, dtype=np.int64), self.jnt_nv))

    @cached_property
    def nq(self) -> int:
        """Size of the configuration vector ``q``."""
        return int(self.jnt_nq.sum())

    @cached_property
    def nv(self) -> int:
        """Size of the velocity vector ``v`` (degrees of freedom)."""
        return int(self.jnt_nv.sum())

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the moving joints, in ``v`` order."""
        return self.jnt_name

    @cached_property
    def dof_names(self) -> tuple[str, ...]:
        """(nv,) a name per velocity coordinate: its joint's, with an axis for joints of
        several (``<joint>.wx`` for a ball joint, ``<joint>.vx`` ... ``.wz`` for a free flyer)."""
        names: list[str] = []
        for name, spec in zip(self.jnt_name, self.jnt_spec, strict=True):
            names += [f"{name}.{s}" for s in spec.v_names] if spec.v_names else [name]
        return tuple(names)

    @cached_property
    def dof_units(self) -> tuple[str, ...]:
        """(nv,) the unit of each velocity coordinate's displacement: "m" for a translation (a
        prismatic joint, a free flyer's linear coordinates), "rad" for a rotation."""
        return tuple(unit for spec in self.jnt_spec for unit in spec.dof_units)

    @cached_property
    def dof_force_units(self) -> tuple[str, ...]:
        """(nv,) the unit of each velocity coordinate's generalised force: "N" for a
        translation (a prismatic joint, a free flyer's linear coordinates), "N·m" for a
        rotation."""
        return tuple(_FORCE_UNITS[unit] for unit in self.dof_units)

    @property
    def passive_dofs(self) -> tuple[str, ...]:
        """Names (`dof_names`) of the coordinates that no actuator drives."""
        return tuple(n for n, on in zip(self.dof_names, self.dof_actuated, strict=True) if not on)

    @property
    def floating_base(self) -> bool:
        """Whether the first joint is a free flyer attached to the world."""
        return bool(self.nbody > 0 and self.jnt_type[0] == JointType.FREE)

    @property
    def total_mass(self) -> float:
        """Sum of the moving bodies' masses."""
        return float(self.body_mass.sum())

    @property
    def subtree_mass(self) -> Float:
        """(nbody,) mass of each body with every body below it."""
        mass = np.array(self.body_mass, dtype=np.float64)
        for i in range(self.nbody - 1, -1, -1):  # parents come before their children
            if self.body_parent[i] >= 0:
                mass[self.body_parent[i]] += mass[i]
        return mass

    def replace(self, **changes: Any) -> Model:
        """A copy with some fields replaced, validated again; a model actuated on every
        coordinate stays so when the changes resize the coordinates."""
        if "dof_actuated" not in changes and self.dof_actuated.all():
            changes["dof_actuated"] = None
        return dataclasses.replace(self, **changes)

    @cached_property
    def kernel_data(self) -> tuple[Int, Float]:
        """The model packed into the two read-only, C-contiguous arrays that the compiled
        kernels of `invdyn.kernels.cpu` read, so that a call unboxes few arguments:

        * ``ints`` (nbody, 5): parent, joint type, first index in ``q``, first index in ``v``,
          and the coordinate axis (0, 1, 2) a revolute joint turns about, or -1 for any other
          axis (most robots turn about coordinate axes, which take a cheaper rotation).
        * ``reals`` (nbody + nv + 1, 28): per body, the joint axis (3), joint rotation in the
          parent, row-major (9), joint origin in the parent (3), mass (1), first mass moment
          ``m c`` (3) and rotational inertia about the body origin, row-major (9), all in body
          coordinates; then ``dofs = reals[nbody:]``: armature, viscous and Coulomb friction per
          degree of freedom in its first three columns, and a last row with gravity, ``nq`` and
          whether any of those terms is non-zero.
        """
        nbody = self.nbody
        aligned = np.full(nbody, -1)
        for i, (spec, axis) in enumerate(zip(self.jnt_spec, self.jnt_axis, strict=True)):
            if spec.turns and np.count_nonzero(axis) == 1:
                k = int(np.flatnonzero(axis)[0])
                aligned[i] = k if axis[k] == 1.0 else -1
        ints = np.stack(
            [self.body_parent, self.jnt_type, self.jnt_qadr, self.jnt_vadr, aligned], axis=1
        )
        mass = self.body_mass
        first_moment = mass[:, None] * self.body_com
        # rotational inertia about the body origin: I_c + m (|c|^2 1 - c c^T)
        c = self.body_com
        shift = (c * c).sum(-1)[:, None, None] * np.eye(3) - c[:, :, None] * c[:, None, :]
        inertia_origin = self.body_inertia + mass[:, None, None] * shift
        reals = np.concatenate(
            [
                self.jnt_axis,
                self.jnt_rot.reshape(nbody, 9),
                self.jnt_pos,
                mass[:, None],
                first_moment,
                inertia_origin.reshape(nbody, 9),
            ],
            axis=1,
        )
        # the rows after the bodies: armature, damping, friction per dof, then gravity and nq
        dofs = np.zeros((self.nv + 1, reals.shape[1]))
        dofs[:-1, 0] = self.dof_armature
        dofs[:-1, 1] = self.dof_damping
        dofs[:-1, 2] = self.dof_friction
        dofs[-1, :3] = self.gravity
        dofs[-1, 3] = self.nq
        dofs[-1, 4] = float(np.any(dofs[:-1, :3] != 0.0))
        # read-only: batches read them on other threads, without the GIL
        return (
            _readonly(np.ascontiguousarray(ints, dtype=np.int64)),
            _readonly(np.ascontiguousarray(np.concatenate([reals, dofs]), dtype=np.float64)),
        )

    @cached_property
    def motion_subspace(self) -> Float:
        """(nv, 6) the motion of each velocity coordinate in its body's coordinates: S, column
        by dof, [angular; linear]."""
        columns = [np.zeros((0, 6))]
        columns += [spec.motion(axis) for spec, axis in zip(self.jnt_spec, self.jnt_axis)]
        return _readonly(np.concatenate(columns))

    @cached_property
    def frame_targets(self) -> dict[str | int, tuple[int, int, Float]]:
        """Each frame by name and by index: its index, the body that carries it (-1 for the
        world) and its (12,) rotation (row-major) and position in that body, as the frame
        kernels of `invdyn.kernels.cpu` read them."""
        rows = np.concatenate([self.frame_rot.reshape(-1, 9), self.frame_pos], axis=1)
        rows = np.ascontiguousarray(rows, dtype=np.float64)
        bodies = [int(body) for body in self.frame_body]
        targets: dict[str | int, tuple[int, int, Float]] = {}
        for index, name in enumerate(self.frame_name):
            targets[index] = (index, bodies[index], rows[index])
            targets.setdefault(name, targets[index])
        return targets

    def derived(self, build: Callable[..., T], *key: Hashable) -> T:
        """``build(self, *key)``, computed on first use and kept with the model: the caches of
        the tensor kernels, in plain dictionaries that torch.compile traces. Left out when the
        model is pickled."""
        cache: dict[tuple[Hashable, ...], Any] = self.__dict__.setdefault(_DERIVED, {})
        index = (build, *key)
        if index not in cache:
            cache[index] = build(self, *key)
        return cache[index]

    def has_derived(self, build: Callable[..., Any], *key: Hashable) -> bool:
        """Whether `derived` holds ``build(self, *key)`` already."""
        return (build, *key) in self.__dict__.get(_DERIVED, {})

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key != _DERIVED}

    def __repr__(self) -> str:
        """Name, sizes and source, not the arrays (tens of thousands of characters)."""
        base = "floating" if self.floating_base else "fixed"
        return (
            f"Model(name={self.name!r}, nq={self.nq}, nv={self.nv}, nbody={self.nbody}, "
            f"nframe={len(self.frame_name)}, {base} base, total_mass={self.total_mass:.6g}, "
            f"source={self.source!r})"
        )

    def frame_id(self, name: str) -> int:
        """Index of the frame called `name`; `InputError`, with the closest names, if none is."""
        try:
            return self.frame_name.index(name)
        except ValueError:
            close = difflib.get_close_matches(str(name), self.frame_name, n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise InputError(f"{self.name} has no frame named {name!r}{hint}") from None


_CACHED = tuple(name for name, value in vars(Model).items() if isinstance(value, cached_property))


def _holds_flags(value: Any) -> bool:
    """Whether `value` is an array of booleans, or of the integers 0 and 1 (or empty)."""
    try:
        array = np.asarray(value)
    except ValueError:  # ragged
        return False
    if array.size == 0 or array.dtype == np.bool_:
        return True
    return array.dtype.kind in "iu" and bool(np.isin(array, (0, 1)).all())


def _not_rotations(rotations: np.ndarray) -> np.ndarray:
    """(n,) whether each of (n, 3, 3) `rotations` is not orthonormal with determinant +1."""
    gram = rotations @ rotations.swapaxes(1, 2)
    off = np.abs(gram - np.eye(3)).max(axis=(1, 2), initial=0.0) > ROTATION_TOLERANCE
    return off | (np.linalg.det(rotations) <= 0)


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _validate(model: Model) -> None:
    """Raise `ModelError` unless the arrays of `model` are consistent and finite."""
    nbody = len(model.body_parent)
    where = f"model {model.name!r}" + (f" ({model.source})" if model.source else "")
    for name, trailing in _BODY_FIELDS.items():
        shape = getattr(model, name).shape
        if shape != (nbody, *trailing):
            raise ModelError(f"{where}: {name} has shape {shape}, expected {(nbody, *trailing)}")
    for name in ("body_name", "jnt_name"):
        names = getattr(model, name)
        if len(names) != nbody:
            raise ModelError(f"{where}: {name} has {len(names)} names, expected {nbody}")
        repeated = [n for n, count in collections.Counter(names).items() if count > 1]
        if repeated:
            raise ModelError(f"{where}: {name} holds {repeated[0]!r} more than once")
    known = set(int(t) for t in JointType)
    for i, t in enumerate(model.jnt_type):
        if int(t) not in known:
            raise ModelError(f"{where}: joint {model.jnt_name[i]!r} has unknown type {int(t)}")
        if not -1 <= model.body_parent[i] < i:
            raise ModelError(
                f"{where}: body {model.body_name[i]!r} has parent {int(model.body_parent[i])}; "
                "parents must come before their children"
            )
    nq = int(sum(JOINTS[JointType(t)].nq for t in model.jnt_type))
    nv = int(sum(JOINTS[JointType(t)].nv for t in model.jnt_type))
    sized = [("q_lower", nq), ("q_upper", nq)] + [(f, nv) for f in (*_DOF_FIELDS, *_BOOL_FIELDS)]
    for name, size in sized:
        shape = getattr(model, name).shape
        if shape != (size,):
            raise ModelError(f"{where}: {name} has shape {shape}, expected {(size,)}")
    nframe = len(model.frame_name)
    for name, trailing in _FRAME_FIELDS.items():
        shape = getattr(model, name).shape
        if shape != (nframe, *trailing):
            raise ModelError(f"{where}: {name} has shape {shape}, expected {(nframe, *trailing)}")
    if np.any((model.frame_body < -1) | (model.frame_body >= nbody)):
        raise ModelError(f"{where}: frame_body holds an index outside [-1, {nbody})")
    if model.gravity.shape != (3,):
        raise ModelError(f"{where}: gravity has shape {model.gravity.shape}, expected (3,)")
    for name in [*_BODY_FIELDS, "frame_pos", "frame_rot", "gravity", *_DOF_FIELDS[2:]]:
        if not np.all(np.isfinite(getattr(model, name))):
            raise ModelError(f"{where}: {name} holds a non-finite value")
    # limits may be infinite, never NaN
    for name in ("q_lower", "q_upper", *_DOF_FIELDS[:2]):
        if np.isnan(getattr(model, name)).any():
            raise ModelError(f"{where}: {name} holds NaN (an absent limit is inf)")
    for name, names in (("jnt_rot", model.jnt_name), ("frame_rot", model.frame_name)):
        bad = _not_rotations(getattr(model, name))
        if bad.any():
            raise ModelError(
                f"{where}: {name} of {names[int(np.argmax(bad))]!r} is not a rotation matrix"
            )
    asymmetric = np.abs(model.body_inertia - model.body_inertia.swapaxes(1, 2)).max(
        axis=(1, 2), initial=0.0
    ) > ROTATION_TOLERANCE * np.abs(model.body_inertia).max(axis=(1, 2), initial=0.0)
    if asymmetric.any():
        name = model.body_name[int(np.argmax(asymmetric))]
        raise ModelError(f"{where}: body_inertia of body {name!r} is not symmetric")
    if np.any(model.body_mass < 0):
        i = int(np.argmin(model.body_mass))
        raise ModelError(f"{where}: body {model.body_name[i]!r} has negative mass")
    for name in _DOF_FIELDS:
        negative = getattr(model, name) < 0
        if negative.any():
            k = int(np.argmax(negative))
            joint = model.jnt_name[int(model.dof_body[k])]
            raise ModelError(
                f"{where}: {name}[{k}] (joint {joint!r}) is {getattr(model, name)[k]:g}; "
                "it cannot be negative"
            )
    if np.any(model.q_lower > model.q_upper):
        k = int(np.argmax(model.q_lower > model.q_upper))
        raise ModelError(f"{where}: q_lower[{k}] is above q_upper[{k}]")
    axial = np.array([JOINTS[JointType(t)].axial for t in model.jnt_type], dtype=bool)
    norms = np.linalg.norm(model.jnt_axis, axis=-1)
    if np.any(axial & (np.abs(norms - 1.0) > 1e-9)):
        i = int(np.argmax(axial & (np.abs(norms - 1.0) > 1e-9)))
        raise ModelError(f"{where}: joint {model.jnt_name[i]!r} axis is not a unit vector")


def inertial_parameters(model: Model) -> Float:
    """The model's dynamic parameters, in the order of the columns of
    `invdyn.regressor.joint_torque_regressor` (Pinocchio's order).

    Args:
      model: the robot.

    Returns:
      (10 nbody + 3 nv,) per body ``[m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz,
      I_zz]`` (the rotational inertia about the body origin, in body coordinates), then the
      armature, the viscous and the Coulomb friction of every degree of freedom.
    """
    bodies = packed(model)[1][: model.nbody]
    inertia = bodies[:, 19:28].reshape(-1, 3, 3)
    rotational = inertia[:, [0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    body_parameters = np.concatenate([bodies[:, 15:19], rotational], axis=1)
    return np.concatenate(
        [body_parameters.ravel(), model.dof_armature, model.dof_damping, model.dof_friction]
    )
