"""MJCF (MuJoCo XML) descriptions, compiled by MuJoCo itself and converted into a `Model`.

MuJoCo compiles the file (defaults, ``<include>``, inertias from geoms, ``<compiler>`` options),
then `from_mujoco` maps the compiled ``MjModel`` onto invdyn's conventions:

* **Joints.** hinge -> REVOLUTE (one coordinate, even when unlimited), slide -> PRISMATIC,
  ball -> SPHERICAL, free -> FREE. ``q`` equals MuJoCo's ``qpos`` joint by joint (quaternions
  reordered from ``[w, x, y, z]`` to ``[x, y, z, w]``): a joint's ``ref`` is folded into its
  joint frame, so that ``q = qpos`` also at a non-zero ``qpos0``.
* **Anchors.** A MuJoCo hinge or ball joint rotates about its anchor ``jnt_pos`` in the body
  frame. invdyn's joint frame sits at the anchor, so the body frame of invdyn is the MuJoCo body
  frame shifted by the anchor; centres of mass, child placements and frames are shifted to match.
* **Several joints in one body** become a chain of massless bodies named
  ``f"{body}__{joint}"``, one joint each, with the real body (and its inertia) last.
* **Bodies without a joint** are welded to their parent: their inertia is merged exactly
  (parallel axis theorem) and they stay as frames. Mass welded to the world is ignored.
* **Free joints** place the body frame in the world directly (MuJoCo ignores ``pos`` for them);
  their body hangs from the world in the `Model` whatever its MuJoCo parent. MuJoCo's free
  ``qvel`` is ``[linear in the world frame, angular in the body frame]`` while invdyn's ``v`` is
  ``[linear, angular]`` in the body frame: see `invdyn.io.mujoco_state`.
* **Frames.** Every MuJoCo body (the world included) and every site becomes a frame. A site whose
  name is already a body's is renamed ``f"{site}_site"``. Unnamed objects get generated names:
  ``f"body{i}"``, ``f"joint{j}"``, ``f"site{k}"`` with MuJoCo's index (a joint's counted with
  every joint of the file, the free joints that ``floating_base=False`` welds included), except
  an unnamed free joint of MuJoCo joint 0, which is ``"root_joint"`` as in Pinocchio.
* **Limits and friction.** Limited hinge and slide joints give ``q_lower``/``q_upper``; other
  coordinates are unbounded. ``dof_armature`` is MuJoCo's plus, for each actuator
  driving a hinge or slide directly, its ``armature`` times its gear squared (as MuJoCo adds it
  to the mass matrix). ``dof_damping`` (joint plus actuator damping, alike) and ``dof_friction``
  (MuJoCo's ``frictionloss``) are read only with ``friction=True`` (loading warns of them
  otherwise). The effort limit of a
  hinge or slide joint sums the bounds of the actuators that drive it (``|gear| * max|forcerange|``,
  or ``|gear * gain| * max|ctrlrange|`` for a plain motor without a force range), capped by the
  joint's ``actuatorfrcrange``; it is ``+inf`` when nothing bounds it. Velocity limits are
  ``+inf``. Armature on a free joint's translations acts on the body-frame acceleration here and
  on the world-frame one in MuJoCo (the forces differ by ``armature * (ω × v)``): loading such a
  file warns.
* **Actuation.** ``dof_actuated`` marks the coordinates that some actuator's transmission
  reaches (joint, tendon, site ...); a coordinate none reaches is passive (a pendulum's hinge, a
  hopper's root slides). Adhesion actuators and those of disabled groups reach none; a file
  without any other actuator leaves every coordinate actuated.

Gravity is ``opt.gravity``, zero under ``<flag gravity="disable"/>``; damping and friction
are zero under the ``damper`` and ``frictionloss`` (or ``constraint``) flags, as in MuJoCo.
Tendons, equality constraints, contacts, springs, gravity compensation, fluid forces and
actuator dynamics are not part of a `Model` and are dropped (loading names, in a warning, those
that the file's flags leave on); mocap bodies have no joint and so are welded.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from invdyn._files import check_regular_file
from invdyn.errors import InputError, ModelError, ModelWarning, warn
from invdyn.model import JOINTS, JointType, Model
from invdyn.spatial import axis_angle_to_matrix, inertia_doubts, quaternion_to_matrix

Float = NDArray[np.float64]

# mujoco enum values (mjtJoint, mjtTrn, mjtGain, mjtBias, mjtDyn), read without importing mujoco
MJ_FREE, MJ_BALL, MJ_SLIDE, MJ_HINGE = 0, 1, 2, 3
# MuJoCo's joint types by name (`invdyn.model.JointSpec`'s), and each one's sizes in qpos, qvel
MJ_JOINT_TYPES = {"free": MJ_FREE, "ball": MJ_BALL, "slide": MJ_SLIDE, "hinge": MJ_HINGE}
MJ_SIZES = {MJ_FREE: (7, 6), MJ_BALL: (4, 3), MJ_SLIDE: (1, 1), MJ_HINGE: (1, 1)}
_TRN_JOINT, _TRN_JOINTINPARENT, _TRN_BODY = 0, 1, 5
_GAIN_FIXED, _BIAS_NONE, _DYN_NONE = 0, 0, 0
# random configurations, besides qpos0, at which the actuators' moment arms are read, and the
# share of an arm's largest entry below which an entry is rounding (a moment that is zero)
ACTUATION_DRAWS = 2
ACTUATION_TOLERANCE = 1e-9

# the name mujoco gives a model whose <mujoco> element has none
_DEFAULT_MODEL_NAME = "MuJoCo Model"

# the invdyn type that each MuJoCo joint type is read as
JOINT_TYPES = {MJ_JOINT_TYPES[spec.mjcf]: t for t, spec in JOINTS.items() if spec.mjcf}


def load_mjcf(
    path: str | os.PathLike[str],
    *,
    floating_base: bool | None = None,
    strict: bool = False,
    friction: bool = False,
) -> Model:
    """Load an MJCF file, compiled by MuJoCo, as a `Model`.

    Args:
      path: the ``.xml`` file.
      floating_base: None keeps the file's joints; False welds every body that a free joint
        moves to its parent at its pose in the file (MuJoCo's ``qpos0``), as if the free joint
        were not there (and drops the file's keyframes, whose ``qpos`` counts it); True
        requires a free joint on the root body of the file's first tree.
      strict: raise `ModelError` instead of warning on physically doubtful inertias.
      friction: read joint damping and Coulomb friction (``frictionloss``) into the model.

    Returns:
      The validated model; see the module docstring for how MuJoCo's concepts map onto it.

    Raises:
      InputError, ModelError: as `compile_mjcf`.
    """
    mj_model = compile_mjcf(path, floating_base=floating_base)
    return from_mujoco(mj_model, source=str(path), strict=strict, friction=friction)


def compile_mjcf(path: str | os.PathLike[str], *, floating_base: bool | None = None) -> Any:
    """The ``mujoco.MjModel`` of an MJCF file, as `load_mjcf` reads it: the plant that
    simulates the file itself (`invdyn.sim.rollout`'s ``mj_model``).

    Args:
      path: the ``.xml`` file.
      floating_base: as in `load_mjcf`.

    Returns:
      The compiled model.

    Raises:
      InputError: `path` is not a regular file (a directory, a pipe, a device).
      ModelError: the file is missing, MuJoCo cannot compile it (MuJoCo's message included),
        or `floating_base` is True and its first joint is not free.
    """
    path = Path(path)
    check_regular_file(path, "an MJCF file")
    if not path.is_file():
        raise ModelError(f"{path}: cannot read the file (no such file)")
    try:
        import mujoco
    except ImportError as error:
        raise ImportError(f"{path}: loading MJCF needs mujoco: pip install invdyn[sim]") from error
    try:
        spec = mujoco.MjSpec.from_file(str(path))
        if floating_base is False:
            _name_unnamed_joints(spec)
            for joint in [j for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_FREE]:
                spec.delete(joint)
            # keyframes give qpos of the joints as written: of another size without them
            for key in list(spec.keys):
                spec.delete(key)
        mj_model = spec.compile()
    except Exception as error:  # mujoco reports compile errors as ValueError
        message = " ".join(str(error).split())
        raise ModelError(f"{path}: mujoco cannot compile it: {message}") from None
    if floating_base and not (mj_model.njnt and mj_model.jnt_type[0] == MJ_FREE):
        others = [joint_names(mj_model)[j] for j in np.flatnonzero(mj_model.jnt_type == MJ_FREE)]
        elsewhere = f" (the free joints {others} move other bodies)" if others else ""
        raise ModelError(
            f"{path}: no free joint at the root of the first body tree to float on{elsewhere}; "
            "an MJCF file declares its own (add <freejoint/> to the root body); "
            "without floating_base (invdyn: without --floating-base) the file is taken as it is"
        )
    return mj_model


def from_mujoco(
    mj_model: Any,
    *,
    name: str | None = None,
    source: str = "",
    strict: bool = False,
    friction: bool = False,
) -> Model:
    """Convert a compiled ``mujoco.MjModel`` into a `Model`.

    Args:
      mj_model: the compiled MuJoCo model.
      name: robot name; by default the MJCF ``model`` attribute, else the file stem of `source`,
        else ``"mujoco"``.
      source: where the model came from, kept in `Model.source` and error messages.
      strict: raise `ModelError` instead of warning on physically doubtful inertias.
      friction: read joint damping and Coulomb friction (``frictionloss``) into the model.

    Returns:
      The validated model; see the module docstring for how MuJoCo's concepts map onto it.
    """
    check_mj_model(mj_model)
    where = source or "mujoco model"
    if name is None:
        name = _model_name(mj_model) or (Path(source).stem if source else "mujoco")
    bodies = body_names(mj_model)
    joints = joint_names(mj_model)
    _check_inertias(mj_model, bodies, where, strict)
    _check_free_armature(mj_model, joints, where)
    _check_reversed_ranges(mj_model, joints, where)
    _check_left_out(mj_model, where, friction)

    tree = _Tree()
    # placement of each mujoco body frame in the invdyn body that carries it (-1: the world)
    carrier = np.full(mj_model.nbody, -1, dtype=np.int64)
    rot = np.tile(np.eye(3), (mj_model.nbody, 1, 1))
    pos = np.zeros((mj_model.nbody, 3))
    taken = set(bodies)
    for b in range(1, mj_model.nbody):
        parent = int(mj_model.body_parentid[b])
        body = carrier[parent]
        # the body's rest frame in the invdyn body of its parent
        r_pre = rot[parent] @ _quat_wxyz_to_matrix(mj_model.body_quat[b])
        p_pre = pos[parent] + rot[parent] @ mj_model.body_pos[b]
        first, count = int(mj_model.body_jntadr[b]), int(mj_model.body_jntnum[b])
        for k, j in enumerate(range(first, first + count)):
            jtype = int(mj_model.jnt_type[j])
            if jtype == MJ_FREE and k > 0:
                raise ModelError(f"{where}: free joint {joints[j]!r} follows other joints")
            # one invdyn body per joint, the real mujoco body last
            link = bodies[b] if k == count - 1 else _unique(f"{bodies[b]}__{joints[j]}", taken)
            jnt_rot, jnt_pos, axis = _joint_frame(mj_model, j, r_pre, p_pre)
            body = tree.add(
                link, joints[j], -1 if jtype == MJ_FREE else body, JOINT_TYPES[jtype], axis
            )
            tree.jnt_rot[-1], tree.jnt_pos[-1] = jnt_rot, jnt_pos
            # the mujoco body frame sits at minus the anchor in the moved joint frame
            r_pre = np.eye(3)
            p_pre = np.zeros(3) if jtype == MJ_FREE else -np.asarray(mj_model.jnt_pos[j], float)
        carrier[b], rot[b], pos[b] = body, r_pre, p_pre
        # inertia of the mujoco body, in the invdyn body that carries it
        if body >= 0:
            r_inertia = r_pre @ _quat_wxyz_to_matrix(mj_model.body_iquat[b])
            inertia = r_inertia @ np.diag(mj_model.body_inertia[b]) @ r_inertia.T
            com = p_pre + r_pre @ mj_model.body_ipos[b]
            tree.merge(body, float(mj_model.body_mass[b]), com, inertia)

    # frames: every body, then every site
    frame_names = list(bodies)
    frame_body, frame_pos, frame_rot = list(carrier), list(pos), list(rot)
    frame_taken = set(bodies)
    for k, site in enumerate(_names(mj_model, "site", mj_model.nsite)):
        b = int(mj_model.site_bodyid[k])
        frame_names.append(_unique(site if site not in bodies else f"{site}_site", frame_taken))
        frame_body.append(carrier[b])
        frame_pos.append(pos[b] + rot[b] @ mj_model.site_pos[k])
        frame_rot.append(rot[b] @ _quat_wxyz_to_matrix(mj_model.site_quat[k]))

    # coordinates: limits per q, dof parameters per v, in mujoco's joint order
    q_lower, q_upper = _position_limits(mj_model)
    dofs = _dof_order(mj_model)
    zeros = np.zeros(len(dofs))
    return Model(
        name=name,
        body_name=tuple(tree.body_name),
        jnt_name=tuple(tree.jnt_name),
        body_parent=np.array(tree.body_parent, dtype=np.int64),
        body_mass=np.array(tree.body_mass),
        body_com=np.array(tree.body_com).reshape(-1, 3),
        body_inertia=np.array(tree.body_inertia).reshape(-1, 3, 3),
        jnt_type=np.array(tree.jnt_type, dtype=np.int64),
        jnt_axis=np.array(tree.jnt_axis).reshape(-1, 3),
        jnt_pos=np.array(tree.jnt_pos).reshape(-1, 3),
        jnt_rot=np.array(tree.jnt_rot).reshape(-1, 3, 3),
        q_lower=q_lower,
        q_upper=q_upper,
        dof_velocity_limit=np.full(len(dofs), np.inf),
        dof_effort_limit=_effort_limits(mj_model)[dofs],
        dof_armature=(mj_model.dof_armature + _actuator_dof_sum(mj_model, "armature"))[dofs],
        dof_damping=(mj_model.dof_damping + _actuator_dof_sum(mj_model, "damping"))[dofs]
        if friction and applies_force(mj_model, "damper")
        else zeros,
        dof_friction=np.asarray(mj_model.dof_frictionloss, float)[dofs]
        if friction and applies_force(mj_model, "frictionloss")
        else zeros,
        frame_name=tuple(frame_names),
        frame_body=np.array(frame_body, dtype=np.int64),
        frame_pos=np.array(frame_pos).reshape(-1, 3),
        frame_rot=np.array(frame_rot).reshape(-1, 3, 3),
        gravity=_gravity(mj_model),
        source=source,
        dof_actuated=_actuated_dofs(mj_model)[dofs],
    )


def _gravity(mj_model: Any) -> Float:
    """(3,) the gravity the model's dynamics feel: ``opt.gravity``, or zero when its
    ``<flag gravity="disable"/>`` is set."""
    if not applies_force(mj_model, "gravity"):
        return np.zeros(3)
    return np.array(mj_model.opt.gravity, dtype=np.float64)


# MuJoCo's disable flags (mjtDisableBit, without "mjDSBL_") that turn each force off: the
# passive forces other than springs and dampers (gravity compensation, fluid forces) go with
# both of them, the constraint forces with their own flag or that of every constraint
_TURNED_OFF_BY: dict[str, list[tuple[str, ...]]] = {
    "gravity": [("GRAVITY",)],
    "spring": [("SPRING",)],
    "damper": [("DAMPER",)],
    "passive": [("SPRING", "DAMPER")],
    "gravcomp": [("SPRING", "DAMPER"), ("GRAVITY",)],
    "frictionloss": [("FRICTIONLOSS",), ("CONSTRAINT",)],
    "equality": [("EQUALITY",), ("CONSTRAINT",)],
    "limit": [("LIMIT",), ("CONSTRAINT",)],
}


def applies_force(mj_model: Any, force: str) -> bool:
    """Whether MuJoCo applies `force` (a key of `_TURNED_OFF_BY`) under the model's
    ``<flag>`` settings: none of its sets of disable flags is wholly set."""
    flags = int(mj_model.opt.disableflags)
    return not any(
        all(flags & _disable_bit(name) for name in names) for names in _TURNED_OFF_BY[force]
    )


def _disable_bit(name: str) -> int:
    """MuJoCo's disable flag ``mjDSBL_<name>``: before MuJoCo 3.3.6, which split it into
    SPRING and DAMPER, one PASSIVE flag turned both off; a flag a version lacks is never set."""
    import mujoco

    bits = mujoco.mjtDisableBit
    if not hasattr(bits, f"mjDSBL_{name}") and name in ("SPRING", "DAMPER"):
        name = "PASSIVE"
    return int(getattr(bits, f"mjDSBL_{name}", 0))


def turned_off_by(force: str) -> str:
    """The ``<flag>`` settings that turn MuJoCo's `force` off, in words."""
    return " or ".join(
        " with ".join(f'<flag {name.lower()}="disable"/>' for name in names)
        for names in _TURNED_OFF_BY[force]
    )


def check_mj_model(mj_model: Any) -> None:
    """`InputError` unless `mj_model` is a compiled ``mujoco.MjModel`` (an ``MjData`` or an
    ``MjSpec`` in its place is a common slip), told without importing mujoco."""
    if type(mj_model).__name__ != "MjModel":
        raise InputError(
            f"mj_model must be a compiled mujoco.MjModel, got {type(mj_model).__name__}"
        )


def body_names(mj_model: Any) -> tuple[str, ...]:
    """Names of the MuJoCo bodies as invdyn uses them, ``f"body{i}"`` where unnamed.

    Args:
      mj_model: the compiled MuJoCo model.

    Returns:
      (nbody,) names, the world body first.
    """
    check_mj_model(mj_model)
    return _names(mj_model, "body", mj_model.nbody)


def _name_unnamed_joints(spec: Any) -> None:
    """Name the unnamed joints of an ``MjSpec`` as `joint_names` names them in its compiled
    model, so that they keep their names when its free joints are then deleted."""
    joints = list(spec.joints)
    taken = {joint.name for joint in joints if joint.name}
    root = bool(joints) and int(joints[0].type) == MJ_FREE
    for i, joint in enumerate(joints):
        if not joint.name:
            joint.name = _unique("root_joint" if i == 0 and root else f"joint{i}", taken)


def joint_names(mj_model: Any) -> tuple[str, ...]:
    """Names of the MuJoCo joints as invdyn uses them, ``f"joint{j}"`` where unnamed.

    An unnamed free joint that is MuJoCo's joint 0 is called ``"root_joint"``, as in Pinocchio.

    Args:
      mj_model: the compiled MuJoCo model.

    Returns:
      (njnt,) names, in MuJoCo's joint order.
    """
    check_mj_model(mj_model)
    root = mj_model.njnt > 0 and int(mj_model.jnt_type[0]) == MJ_FREE
    return _names(mj_model, "joint", mj_model.njnt, first="root_joint" if root else None)


# helpers


@dataclasses.dataclass
class _Tree:
    """The growing per-body lists of the model under construction."""

    body_name: list[str] = dataclasses.field(default_factory=list)
    jnt_name: list[str] = dataclasses.field(default_factory=list)
    body_parent: list[int] = dataclasses.field(default_factory=list)
    body_mass: list[float] = dataclasses.field(default_factory=list)
    body_com: list[Float] = dataclasses.field(default_factory=list)
    body_inertia: list[Float] = dataclasses.field(default_factory=list)
    jnt_type: list[int] = dataclasses.field(default_factory=list)
    jnt_axis: list[Float] = dataclasses.field(default_factory=list)
    jnt_pos: list[Float] = dataclasses.field(default_factory=list)
    jnt_rot: list[Float] = dataclasses.field(default_factory=list)

    def add(self, body: str, joint: str, parent: int, jtype: JointType, axis: Float) -> int:
        """Append a massless body and its joint; return the body's index."""
        self.body_name.append(body)
        self.jnt_name.append(joint)
        self.body_parent.append(parent)
        self.body_mass.append(0.0)
        self.body_com.append(np.zeros(3))
        self.body_inertia.append(np.zeros((3, 3)))
        self.jnt_type.append(int(jtype))
        self.jnt_axis.append(axis)
        self.jnt_pos.append(np.zeros(3))
        self.jnt_rot.append(np.eye(3))
        return len(self.body_name) - 1

    def merge(self, i: int, mass: float, com: Float, inertia: Float) -> None:
        """Add a rigidly attached inertia (about its own `com`) to body `i`."""
        self.body_mass[i], self.body_com[i], self.body_inertia[i] = combine_inertias(
            self.body_mass[i], self.body_com[i], self.body_inertia[i], mass, com, inertia
        )


def combine_inertias(
    mass_a: float, com_a: Float, inertia_a: Float, mass_b: float, com_b: Float, inertia_b: Float
) -> tuple[float, Float, Float]:
    """Mass, centre of mass and inertia about it of two rigidly joined bodies.

    I = sum_k I_k + m_k (|d_k|^2 1 - d_k d_k^T), d_k = c_k - c (parallel axis theorem).

    Args:
      mass_a: mass of the first body.
      com_a: (3,) its centre of mass.
      inertia_a: (3, 3) its inertia about `com_a`.
      mass_b: mass of the second body.
      com_b: (3,) its centre of mass, in the same frame.
      inertia_b: (3, 3) its inertia about `com_b`, in the same frame.

    Returns:
      The mass, (3,) centre of mass and (3, 3) inertia about it of the union.
    """
    mass = mass_a + mass_b
    if mass <= 0.0:
        return 0.0, np.zeros(3), inertia_a + inertia_b
    com = (mass_a * np.asarray(com_a) + mass_b * np.asarray(com_b)) / mass
    inertia = np.array(inertia_a + inertia_b, dtype=np.float64)
    for m, c in ((mass_a, com_a), (mass_b, com_b)):
        d = np.asarray(c) - com
        inertia += m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, inertia


def _joint_frame(mj_model: Any, j: int, r_pre: Float, p_pre: Float) -> tuple[Float, Float, Float]:
    """Joint frame (rotation, origin) in the invdyn parent body, and the joint axis in it.

    The frame sits at the joint's anchor; a hinge's or slide's ``ref`` (its ``qpos0``) is folded
    in, so that the invdyn coordinate equals MuJoCo's ``qpos``.
    """
    jtype = int(mj_model.jnt_type[j])
    if jtype == MJ_FREE:
        return np.eye(3), np.zeros(3), np.array([0.0, 0.0, 1.0])
    anchor = np.asarray(mj_model.jnt_pos[j], dtype=np.float64)
    axis = np.asarray(mj_model.jnt_axis[j], dtype=np.float64)
    if jtype == MJ_BALL:
        return r_pre, p_pre + r_pre @ anchor, np.array([0.0, 0.0, 1.0])
    axis = axis / np.linalg.norm(axis)
    ref = float(mj_model.qpos0[mj_model.jnt_qposadr[j]])
    if jtype == MJ_HINGE:
        return r_pre @ axis_angle_to_matrix(axis, -ref), p_pre + r_pre @ anchor, axis
    return r_pre, p_pre + r_pre @ (anchor - ref * axis), axis


def _dof_order(mj_model: Any) -> NDArray[np.int64]:
    """(nv,) MuJoCo dof index of each invdyn velocity coordinate (joints in MuJoCo's order)."""
    starts = mj_model.jnt_dofadr
    spans = [
        np.arange(starts[j], starts[j] + MJ_SIZES[int(t)][1])
        for j, t in enumerate(mj_model.jnt_type)
    ]
    return np.concatenate([np.zeros(0, dtype=np.int64), *spans]).astype(np.int64)


def _position_limits(mj_model: Any) -> tuple[Float, Float]:
    """(nq,) lower and (nq,) upper limits: the range of limited hinges and slides, else inf."""
    lower, upper = [], []
    for j in range(mj_model.njnt):
        jtype = int(mj_model.jnt_type[j])
        n = MJ_SIZES[jtype][0]
        lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
        if jtype in (MJ_HINGE, MJ_SLIDE) and bool(mj_model.jnt_limited[j]):
            lo[0], hi[0] = mj_model.jnt_range[j]
        lower.append(lo)
        upper.append(hi)
    empty = [np.zeros(0)]
    return np.concatenate(lower or empty), np.concatenate(upper or empty)


def _joint_actuators(mj_model: Any) -> list[tuple[int, int, float]]:
    """(actuator, dof, gear) of each actuator that drives a hinge or slide directly (a zero
    gear drives nothing)."""
    driven = []
    for a in range(mj_model.nu):
        j = int(mj_model.actuator_trnid[a, 0])
        gear = float(mj_model.actuator_gear[a, 0])
        if int(mj_model.actuator_trntype[a]) not in (_TRN_JOINT, _TRN_JOINTINPARENT) or gear == 0:
            continue
        if int(mj_model.jnt_type[j]) in (MJ_HINGE, MJ_SLIDE):
            driven.append((a, int(mj_model.jnt_dofadr[j]), gear))
    return driven


def servo_joints(mj_model: Any) -> list[str]:
    """The joints driven directly by an actuator whose force depends on the joint's state
    (a bias or a gain of its own: position and velocity servos, dampers, muscles), not on its
    command alone as a motor's does."""
    import mujoco

    names = joint_names(mj_model)
    plain = (int(mujoco.mjtGain.mjGAIN_FIXED), int(mujoco.mjtBias.mjBIAS_NONE))
    return sorted(
        {
            names[int(mj_model.actuator_trnid[a, 0])]
            for a, _, _ in _joint_actuators(mj_model)
            if (int(mj_model.actuator_gaintype[a]), int(mj_model.actuator_biastype[a])) != plain
        }
    )


def _actuated_dofs(mj_model: Any) -> NDArray[np.bool_]:
    """(mujoco nv,) whether the transmission of some enabled actuator reaches each dof (a
    joint's own dofs, a tendon's joints, a site's kinematic chain); every dof when the model
    declares no such actuator. Adhesion actuators (body transmissions) act through contacts and
    drive no dof; actuators of a group that ``opt.disableactuator`` turns off do nothing.

    A dof counts as reached where an actuator's moment arm on it exceeds `ACTUATION_TOLERANCE`
    of the arm's largest entry, at ``qpos0`` or at one of `ACTUATION_DRAWS` seeded random
    configurations: one configuration alone may be singular (a site force along a straight
    arm has no moment about its hinges).
    """
    import mujoco

    disabled = (int(mj_model.opt.disableactuator) >> np.asarray(mj_model.actuator_group)) & 1
    drivers = (np.asarray(mj_model.actuator_trntype) != _TRN_BODY) & (disabled == 0)
    if not drivers.any():
        return np.ones(mj_model.nv, dtype=bool)
    data = mujoco.MjData(mj_model)
    rng = np.random.default_rng(0)
    reached = np.zeros(mj_model.nv, dtype=bool)
    for draw in range(1 + ACTUATION_DRAWS):
        if draw:
            data.qpos[:] = mj_model.qpos0 + rng.uniform(-1.0, 1.0, mj_model.nq)
            mujoco.mj_normalizeQuat(mj_model, data.qpos)
        for stage in (mujoco.mj_kinematics, mujoco.mj_comPos, mujoco.mj_tendon):
            stage(mj_model, data)
        mujoco.mj_transmission(mj_model, data)
        for a in np.flatnonzero(drivers):
            span = slice(data.moment_rowadr[a], data.moment_rowadr[a] + data.moment_rownnz[a])
            arm = np.abs(data.actuator_moment[span])
            if arm.size:
                reached[data.moment_colind[span][arm > ACTUATION_TOLERANCE * arm.max()]] = True
    return reached


def _actuator_dof_sum(mj_model: Any, attribute: str) -> Float:
    """(mujoco nv,) ``sum gear^2 * actuator_<attribute>`` over the actuators of each dof.

    MuJoCo adds an actuator's reflected ``armature`` to the mass matrix and its ``damping`` to
    the passive forces, both scaled by the square of the gear; versions without these fields
    count them as zero.
    """
    total = np.zeros(mj_model.nv)
    values = getattr(mj_model, f"actuator_{attribute}", None)
    if values is None:
        return total
    for a, dof, gear in _joint_actuators(mj_model):
        total[dof] += gear**2 * float(values[a])
    return total


def _effort_limits(mj_model: Any) -> Float:
    """(mujoco nv,) bound on the actuator force of each dof, +inf where nothing bounds it."""
    limit = np.zeros(mj_model.nv)
    driven = np.zeros(mj_model.nv, dtype=bool)
    # sum the bounds of the actuators that drive a hinge or slide
    for a, dof, gear in _joint_actuators(mj_model):
        driven[dof] = True
        limit[dof] += abs(gear) * _actuator_force_bound(mj_model, a)
    limit[~driven] = np.inf
    # the joint's own actuator force range caps the sum
    for j in range(mj_model.njnt):
        if bool(mj_model.jnt_actfrclimited[j]):
            start = int(mj_model.jnt_dofadr[j])
            end = int(mj_model.jnt_dofadr[j + 1]) if j + 1 < mj_model.njnt else mj_model.nv
            cap = float(np.max(np.abs(mj_model.jnt_actfrcrange[j])))
            limit[start:end] = np.minimum(limit[start:end], cap)
    return limit


def _actuator_force_bound(mj_model: Any, a: int) -> float:
    """Bound on the scalar force of actuator `a` (before its gear), +inf when unknown."""
    if bool(mj_model.actuator_forcelimited[a]):
        return float(np.max(np.abs(mj_model.actuator_forcerange[a])))
    plain_motor = (
        int(mj_model.actuator_gaintype[a]) == _GAIN_FIXED
        and int(mj_model.actuator_biastype[a]) == _BIAS_NONE
        and int(mj_model.actuator_dyntype[a]) == _DYN_NONE
    )
    if plain_motor and bool(mj_model.actuator_ctrllimited[a]):
        gain = abs(float(mj_model.actuator_gainprm[a, 0]))
        return gain * float(np.max(np.abs(mj_model.actuator_ctrlrange[a])))
    return np.inf


def _check_inertias(mj_model: Any, bodies: tuple[str, ...], where: str, strict: bool) -> None:
    """Warn (or raise under `strict`) on each body whose inertia is physically doubtful."""
    for b in range(1, mj_model.nbody):
        moments = np.asarray(mj_model.body_inertia[b], dtype=np.float64)
        for doubt in inertia_doubts(float(mj_model.body_mass[b]), np.diag(moments)):
            message = f"{where}: body {bodies[b]!r}: {doubt}"
            if strict:
                raise ModelError(message)
            warn(message, ModelWarning)


def _check_free_armature(mj_model: Any, joints: tuple[str, ...], where: str) -> None:
    """Warn on each free joint with armature on its translations, which MuJoCo applies to the
    world-frame acceleration and invdyn to the body-frame one (`Model.dof_armature`): their
    dynamics then differ by ``armature * (ω × v)``."""
    for j in np.flatnonzero(mj_model.jnt_type == MJ_FREE):
        start = int(mj_model.jnt_dofadr[j])
        if np.any(mj_model.dof_armature[start : start + 3] != 0.0):
            warn(
                f"{where}: free joint {joints[j]!r} has armature on its translations, which "
                "invdyn applies in the body frame and MuJoCo in the world frame: the forces "
                "differ by armature * (angular velocity x linear velocity)",
                ModelWarning,
            )


def _check_reversed_ranges(mj_model: Any, joints: tuple[str, ...], where: str) -> None:
    """Warn on each hinge or slide whose ``range`` has its lower bound above its upper one,
    which MuJoCo reads, unless ``limited="true"`` is set, as no limit at all."""
    for j in range(mj_model.njnt):
        lower, upper = mj_model.jnt_range[j]
        if int(mj_model.jnt_type[j]) in (MJ_HINGE, MJ_SLIDE) and lower > upper:
            warn(
                f"{where}: joint {joints[j]!r} has a range whose lower bound is above its upper "
                f"({lower:.4g} > {upper:.4g} as compiled), which MuJoCo reads as no limit: "
                "the joint is unlimited",
                ModelWarning,
            )


def _check_left_out(mj_model: Any, where: str, friction: bool) -> None:
    """Warn, in one message, of what MuJoCo adds to the joints' dynamics and a `Model` leaves
    out (contacts and actuator dynamics aside, which most files have and the module docstring
    states), under the file's ``<flag>`` settings, so that a user comparing with MuJoCo knows
    where the two differ."""
    joint_actuators = [a for a, _, _ in _joint_actuators(mj_model)]
    other_actuators = np.setdiff1d(np.arange(mj_model.nu), joint_actuators)
    armature = getattr(mj_model, "actuator_armature", np.zeros(mj_model.nu))
    m = mj_model
    # what MuJoCo applies: its name, the force it belongs to (None: any flags) and its values
    left_out = [
        ("equality constraints", "equality", [m.eq_active0]),
        ("joint springs (stiffness)", "spring", [m.jnt_stiffness, _v4(m, "jnt_stiffnesspoly")]),
        ("gravity compensation (gravcomp)", "gravcomp", [m.body_gravcomp]),
        ("fluid forces (density, viscosity)", "passive", [m.opt.density, m.opt.viscosity]),
        ("tendon armature", None, [m.tendon_armature]),
        ("tendon springs", "spring", [m.tendon_stiffness, _v4(m, "tendon_stiffnesspoly")]),
        ("tendon damping", "damper", [m.tendon_damping]),
        ("tendon limits", "limit", [m.tendon_limited]),
        ("armature of actuators not on a hinge or slide", None, [armature[other_actuators]]),
    ]
    polynomial = [_v4(m, f"{k}_dampingpoly") for k in ("dof", "actuator", "tendon")]
    left_out.append(("damping of higher order (dampingpoly)", "damper", polynomial))
    if friction:
        left_out.append(("tendon friction (frictionloss)", "frictionloss", [m.tendon_frictionloss]))
    else:
        # one entry for both, which friction=True reads together
        unread = [m.dof_damping, _actuator_dof_sum(m, "damping")]
        unread = (unread if applies_force(m, "damper") else []) + (
            [m.dof_frictionloss] if applies_force(m, "frictionloss") else []
        )
        left_out.append(("joint damping and friction (read with friction=True)", None, unread))
    found = [
        name
        for name, force, values in left_out
        if (force is None or applies_force(m, force)) and any(np.any(x) for x in values)
    ]
    if found:
        warn(
            f"{where}: MuJoCo applies {', '.join(found)}, which the model leaves out: its "
            "dynamics differ from MuJoCo's by them",
            ModelWarning,
        )


def _v4(mj_model: Any, field: str) -> Any:
    """A field that came with MuJoCo 4 (polynomial springs and dampers), empty before."""
    return getattr(mj_model, field, np.zeros(0))


def _model_name(mj_model: Any) -> str:
    """The MJCF ``<mujoco model="...">`` attribute, or '' where MuJoCo filled in its default."""
    names = bytes(mj_model.names)
    name = names.split(b"\0", 1)[0].decode("utf-8", errors="replace")
    return "" if name == _DEFAULT_MODEL_NAME else name


def _names(mj_model: Any, kind: str, count: int, first: str | None = None) -> tuple[str, ...]:
    """Unique names of MuJoCo objects of `kind`, generated where MuJoCo has none."""
    accessor = getattr(mj_model, kind)
    given = [accessor(i).name for i in range(count)]
    taken = {n for n in given if n}
    names = []
    for i, name in enumerate(given):
        if not name:
            name = _unique(first if i == 0 and first else f"{kind}{i}", taken)
        names.append(name)
    return tuple(names)


def _unique(name: str, taken: set[str]) -> str:
    """`name`, suffixed with a number if it is already in `taken`; added to `taken`."""
    candidate, k = name, 1
    while candidate in taken:
        candidate, k = f"{name}_{k}", k + 1
    taken.add(candidate)
    return candidate


def _quat_wxyz_to_matrix(quat: Float) -> Float:
    """(3, 3) rotation of a MuJoCo ``[w, x, y, z]`` quaternion, normalised first."""
    quat = np.asarray(quat, dtype=np.float64)
    quat = quat / np.linalg.norm(quat)
    return quaternion_to_matrix(np.roll(quat, -1))
