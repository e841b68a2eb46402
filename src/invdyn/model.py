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
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
from collections.abc import Callable, Hashable
from enum import IntEnum
from functools import cached_property
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from invdyn.errors import InputError, ModelError

Float = NDArray[np.float64]
Int = NDArray[np.int64]
T = TypeVar("T")
_DERIVED = "_derived"  # the instance attribute of `Model.derived`


class JointType(IntEnum):
    """Moving joint types, with their sizes in ``q`` and ``v``.

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


JOINT_NQ = {
    JointType.REVOLUTE: 1,
    JointType.CONTINUOUS: 2,
    JointType.PRISMATIC: 1,
    JointType.SPHERICAL: 4,
    JointType.FREE: 7,
}
JOINT_NV = {
    JointType.REVOLUTE: 1,
    JointType.CONTINUOUS: 1,
    JointType.PRISMATIC: 1,
    JointType.SPHERICAL: 3,
    JointType.FREE: 6,
}

# the axis suffixes of the velocity coordinates of joints with several
_DOF_SUFFIXES = {
    JointType.SPHERICAL: ("wx", "wy", "wz"),
    JointType.FREE: ("vx", "vy", "vz", "wx", "wy", "wz"),
}

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
    def jnt_nq(self) -> Int:
        """(nbody,) number of configuration coordinates of each joint."""
        return _readonly(np.array([JOINT_NQ[JointType(t)] for t in self.jnt_type], dtype=np.int64))

    @cached_property
    def jnt_nv(self) -> Int:
        """(nbody,) number of velocity coordinates of each joint."""
        return _readonly(np.array([JOINT_NV[JointType(t)] for t in self.jnt_type], dtype=np.int64))

    @cached_property
    def jnt_qadr(self) -> Int:
        """(nbody,) first index of each joint in ``q``."""
        return _readonly((np.cumsum(self.jnt_nq) - self.jnt_nq).astype(np.int64))

    @cached_property
    def jnt_vadr(self) -> Int:
        """(nbody,) first index of each joint in ``v``."""
        return _readonly((np.cumsum(self.jnt_nv) - self.jnt_nv).astype(np.int64))

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
        for name, jtype in zip(self.jnt_name, self.jnt_type, strict=True):
            suffixes = _DOF_SUFFIXES.get(JointType(jtype))
            names += [f"{name}.{s}" for s in suffixes] if suffixes else [name]
        return tuple(names)

    @cached_property
    def dof_force_units(self) -> tuple[str, ...]:
        """(nv,) the unit of each velocity coordinate's generalised force: "N" for a
        translation (a prismatic joint, a free flyer's linear coordinates), "N·m" for a
        rotation."""
        units: list[str] = []
        for jtype in self.jnt_type:
            if jtype == JointType.PRISMATIC:
                units.append("N")
            elif jtype == JointType.FREE:
                units += ["N"] * 3 + ["N·m"] * 3
            else:
                units += ["N·m"] * (3 if jtype == JointType.SPHERICAL else 1)
        return tuple(units)

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
        """The packed arrays that the compiled kernels read; see `invdyn.kernels.cpu`."""
        from invdyn.kernels.cpu import pack_model

        return pack_model(self)

    def derived(self, build: Callable[..., T], *key: Hashable) -> T:
        """``build(self, *key)``, computed on first use and kept with the model: the caches of
        the kinematics and the tensor kernels, in plain dictionaries that torch.compile
        traces. Left out when the model is pickled."""
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
    nq = int(sum(JOINT_NQ[JointType(t)] for t in model.jnt_type))
    nv = int(sum(JOINT_NV[JointType(t)] for t in model.jnt_type))
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
    revolute_like = np.isin(
        model.jnt_type, [JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC]
    )
    norms = np.linalg.norm(model.jnt_axis, axis=-1)
    if np.any(revolute_like & (np.abs(norms - 1.0) > 1e-9)):
        i = int(np.argmax(revolute_like & (np.abs(norms - 1.0) > 1e-9)))
        raise ModelError(f"{where}: joint {model.jnt_name[i]!r} axis is not a unit vector")
