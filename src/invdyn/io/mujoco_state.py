"""MuJoCo's ``qpos`` and ``qvel`` converted to and from invdyn's ``q`` and ``v``.

MuJoCo stores quaternions ``[w, x, y, z]``, a hinge as its angle, and a free joint's velocity as
``[linear in the world frame, angular in the body frame]``; invdyn's layout follows Pinocchio
(`invdyn.configuration`). Joints are matched by name (`mujoco_index`), and each joint type
converts its coordinates by the functions of its `invdyn.model.JointSpec`, every joint of a
type at once. These are named apart from `invdyn.io.mjcf.from_mujoco`, which converts a whole
``MjModel``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import as_finite_array, batch_shape
from invdyn.configuration import as_configuration
from invdyn.errors import InputError
from invdyn.io.mjcf import MJ_JOINT_TYPES, MJ_SIZES, compile_mjcf, joint_names
from invdyn.model import JointSpec, JointType, Model

Float = NDArray[np.float64]
Int = NDArray[np.int64]

# the name of each MuJoCo joint type, for messages
_MJ_TYPE_NAMES = {code: name for name, code in MJ_JOINT_TYPES.items()}


def mujoco_index(model: Model, mj_model: Any) -> Int:
    """MuJoCo joint of each joint of `model`, matched by name.

    Names of unnamed MuJoCo joints are generated as `invdyn.io.mjcf.joint_names` does, so a
    model loaded from an MJCF file matches the ``MjModel`` it was compiled from.

    Args:
      model: the robot.
      mj_model: a compiled ``mujoco.MjModel`` holding a joint of the same name and a compatible
        type for each joint of `model` (`invdyn.model.JointSpec.mujoco`: hinge for revolute and
        continuous joints, slide for prismatic, ball for spherical, free for free); it may hold
        more joints.

    Returns:
      (nbody,) MuJoCo joint ids.

    Raises:
      InputError: a joint of `model` is missing from `mj_model` or has another type there.
    """
    ids = {name: j for j, name in enumerate(joint_names(mj_model))}
    index = np.zeros(model.nbody, dtype=np.int64)
    for i, (name, spec) in enumerate(zip(model.jnt_name, model.jnt_spec, strict=True)):
        if name not in ids:
            raise InputError(f"mj_model has no joint named {name!r} (a joint of {model.name!r})")
        j = index[i] = ids[name]
        expected, found = MJ_JOINT_TYPES[spec.mujoco], int(mj_model.jnt_type[j])
        if found != expected:
            raise InputError(
                f"joint {name!r} is {JointType(model.jnt_type[i]).name} in {model.name!r} but a "
                f"{_MJ_TYPE_NAMES.get(found, found)} joint in mj_model, expected {spec.mujoco}"
            )
    return index


def to_mujoco_state(
    model: Model, mj_model: Any, q: ArrayLike, v: ArrayLike | None = None
) -> tuple[Float, Float]:
    """MuJoCo's ``qpos`` and ``qvel`` of invdyn configurations and velocities.

    Joints are matched by name (`mujoco_index`); MuJoCo joints that `model` lacks keep
    ``qpos0`` and zero velocity. Quaternions are reordered to ``[w, x, y, z]``, continuous
    joints become angles, and a free joint's linear velocity is rotated into the world frame.
    A free joint is assumed to have the identity joint frame at the world (as loaders build it).

    Args:
      model: the robot.
      mj_model: the compiled ``mujoco.MjModel``.
      q: (..., nq) configurations.
      v: (..., nv) velocities, leading dimensions broadcast with those of `q`; None for rest.

    Returns:
      (..., mujoco nq) ``qpos`` and (..., mujoco nv) ``qvel``.

    Raises:
      InputError: a quaternion or ``(cos θ, sin θ)`` pair of zero norm, which has no direction.
    """
    groups = _layout(model, mj_model)
    q = as_configuration(model, q)
    v = np.zeros(model.nv) if v is None else as_finite_array("v", v, model.nv)
    batch = batch_shape({"q": (q, 1), "v": (v, 1)})
    qpos = np.array(np.broadcast_to(mj_model.qpos0, (*batch, mj_model.nq)), dtype=np.float64)
    qvel = np.zeros((*batch, mj_model.nv))
    q = np.broadcast_to(q, (*batch, model.nq))
    v = np.broadcast_to(v, (*batch, model.nv))
    for spec, q_at, v_at, qpos_at, qvel_at in groups:
        converted = spec.to_mujoco(q.take(q_at, axis=-1), v.take(v_at, axis=-1))
        qpos[..., qpos_at], qvel[..., qvel_at] = converted
    return qpos, qvel


def from_mujoco_state(
    model: Model, mj_model: Any, qpos: ArrayLike, qvel: ArrayLike | None = None
) -> tuple[Float, Float]:
    """invdyn configurations and velocities of MuJoCo's ``qpos`` and ``qvel``.

    The inverse of `to_mujoco_state`: joints are matched by name (`mujoco_index`) and MuJoCo
    joints that `model` lacks are ignored. `mujoco_state_reader` matches them once for many
    calls.

    Args:
      model: the robot.
      mj_model: the compiled ``mujoco.MjModel``.
      qpos: (..., mujoco nq) MuJoCo positions.
      qvel: (..., mujoco nv) MuJoCo velocities, leading dimensions broadcast with those of
        `qpos`; None for rest.

    Returns:
      (..., nq) configurations and (..., nv) velocities.
    """
    return mujoco_state_reader(model, mj_model)(qpos, qvel)


def mujoco_state_reader(
    model: Model, mj_model: Any
) -> Callable[[ArrayLike, ArrayLike | None], tuple[Float, Float]]:
    """`from_mujoco_state` of `model` and `mj_model` as a function of ``(qpos, qvel)``, the
    joints matched once: what a simulation calls at every step."""
    groups = _layout(model, mj_model)
    mj_nq, mj_nv = int(mj_model.nq), int(mj_model.nv)

    def read(qpos: ArrayLike, qvel: ArrayLike | None = None) -> tuple[Float, Float]:
        qpos = as_finite_array("qpos", qpos, mj_nq)
        qvel = np.zeros(mj_nv) if qvel is None else as_finite_array("qvel", qvel, mj_nv)
        if qpos.ndim != 1 or qvel.ndim != 1:
            batch = batch_shape({"qpos": (qpos, 1), "qvel": (qvel, 1)})
            qpos = np.broadcast_to(qpos, (*batch, mj_nq))
            qvel = np.broadcast_to(qvel, (*batch, mj_nv))
        q = np.zeros((*qpos.shape[:-1], model.nq))
        v = np.zeros((*qpos.shape[:-1], model.nv))
        for spec, q_at, v_at, qpos_at, qvel_at in groups:
            converted = spec.from_mujoco(qpos.take(qpos_at, axis=-1), qvel.take(qvel_at, axis=-1))
            q[..., q_at], v[..., v_at] = converted
        return q, v

    return read


def keyframes(model: Model) -> dict[str, Float]:
    """The named keyframes (``<keyframe><key name=... qpos=...>``) of the MJCF file `model` was
    loaded from, as (nq,) configurations by name; unnamed keys and those without a ``qpos``
    left out.

    Raises:
      InputError, ModelError: as `invdyn.io.mjcf.compile_mjcf`.
    """
    mj_model = compile_mjcf(model.source, floating_base=model.floating_base or None)
    named = [k for k in range(mj_model.nkey) if mj_model.key(k).name]
    return {
        mj_model.key(k).name: from_mujoco_state(model, mj_model, mj_model.key_qpos[k])[0]
        for k in named
    }


def _layout(model: Model, mj_model: Any) -> list[tuple[JointSpec, Int, Int, Int, Int]]:
    """Each joint group of `model` (`invdyn.model.Model.jnt_groups`) matched in `mj_model`:
    the type's spec and its joints' (n, size) indices in q, v, qpos and qvel."""
    index = mujoco_index(model, mj_model)
    layout = []
    for group in model.jnt_groups:
        spec, joints = group.spec, index[group.bodies]
        qpos_size, qvel_size = MJ_SIZES[MJ_JOINT_TYPES[spec.mujoco]]
        qpos_at = mj_model.jnt_qposadr[joints, None] + np.arange(qpos_size)
        qvel_at = mj_model.jnt_dofadr[joints, None] + np.arange(qvel_size)
        layout.append((spec, group.q, group.v, qpos_at, qvel_at))
    return layout
