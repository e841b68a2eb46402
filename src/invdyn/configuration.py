"""Configurations and velocities: neutral and random ``q``, integration on the joint manifolds,
and conversion to and from MuJoCo's ``qpos``/``qvel`` layout.

The layout follows Pinocchio (see `invdyn.model.JointType`): a CONTINUOUS joint stores
``(cos θ, sin θ)``, a SPHERICAL joint a quaternion ``[x, y, z, w]`` with the angular velocity in
its body frame, and a FREE joint ``[x, y, z, qx, qy, qz, qw]`` with ``v = [linear, angular]``
both in its body frame. `integrate` and `difference` are exact on SO(3) and SE(3), as in
Pinocchio (``q ⊕ v = q · exp(v)``, velocities on the right, in the body frame). Quaternions and
``(cos θ, sin θ)`` pairs need not be of unit norm: every function reads each as the rotation it
points to, as MuJoCo does (the dynamics a zero one as no rotation); `normalize` scales them.

MuJoCo stores quaternions ``[w, x, y, z]``, a hinge as its angle, and a free joint's velocity as
``[linear in the world frame, angular in the body frame]``. `to_mujoco_state` and
`from_mujoco_state` convert between the two layouts, matching joints by name (`mujoco_index`);
they are named apart from `invdyn.io.mjcf.from_mujoco`, which converts a whole ``MjModel``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import as_finite_array, batch_shape, check_real
from invdyn.errors import InputError
from invdyn.model import JointType, Model
from invdyn.spatial import quaternion_to_matrix, skew

Float = NDArray[np.float64]
Int = NDArray[np.int64]

# default half-widths of the sampling interval where a limit is infinite
_ANGLE_RANGE = np.pi
_LENGTH_RANGE = 1.0

# mujoco joint types (mjtJoint) and the invdyn types each can hold
_MJ_FREE, _MJ_BALL, _MJ_SLIDE, _MJ_HINGE = 0, 1, 2, 3
_MJ_TYPES = {
    JointType.REVOLUTE: _MJ_HINGE,
    JointType.CONTINUOUS: _MJ_HINGE,
    JointType.PRISMATIC: _MJ_SLIDE,
    JointType.SPHERICAL: _MJ_BALL,
    JointType.FREE: _MJ_FREE,
}
_MJ_TYPE_NAMES = {_MJ_FREE: "free", _MJ_BALL: "ball", _MJ_SLIDE: "slide", _MJ_HINGE: "hinge"}


def neutral(model: Model) -> Float:
    """The neutral configuration, as Pinocchio's ``neutral``.

    Zero for revolute and prismatic joints (even outside their limits), ``(1, 0)`` for continuous
    joints, the identity quaternion for spherical joints and the identity placement for free ones.

    Args:
      model: the robot.

    Returns:
      (nq,) configuration.
    """
    q = np.zeros(model.nq)
    for jtype, start, _, _ in _joints(model):
        if jtype == JointType.CONTINUOUS:
            q[start] = 1.0
        elif jtype == JointType.SPHERICAL:
            q[start + 3] = 1.0
        elif jtype == JointType.FREE:
            q[start + 6] = 1.0
    return q


def random_configuration(
    model: Model,
    *,
    rng: np.random.Generator | int | None = None,
    shape: int | tuple[int, ...] = (),
) -> Float:
    """Configurations drawn uniformly within the position limits.

    Revolute and prismatic coordinates and free-joint translations are uniform between their
    limits; where a limit is infinite the interval reaches pi (angles) or 1 m (lengths) beyond
    zero or beyond the finite limit. Quaternions are uniform on the unit sphere (uniform
    rotations) and continuous joints take a uniform angle.

    Args:
      model: the robot.
      rng: a generator or a seed; None draws a fresh seed.
      shape: leading batch shape of the result.

    Returns:
      (*shape, nq) configurations.
    """
    try:
        rng = np.random.default_rng(rng)
    except (TypeError, ValueError):
        raise InputError(f"rng must be a numpy Generator, a seed or None, got {rng!r}") from None
    shape = _sample_shape(shape)
    lower, upper = _sampling_bounds(model)
    q = lower + (upper - lower) * rng.uniform(size=(*shape, model.nq))
    # manifold coordinates: uniform rotations, uniform angles
    for jtype, start, _, _ in _joints(model):
        if jtype == JointType.CONTINUOUS:
            angle = rng.uniform(-np.pi, np.pi, size=shape)
            q[..., start], q[..., start + 1] = np.cos(angle), np.sin(angle)
        elif jtype in (JointType.SPHERICAL, JointType.FREE):
            s = start + (3 if jtype == JointType.FREE else 0)
            quat = rng.standard_normal(size=(*shape, 4))
            q[..., s : s + 4] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
    return q


def _sample_shape(shape: object) -> tuple[int, ...]:
    """`shape` (an integer or a sequence of them, each >= 0) as a tuple, or `InputError`."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    if isinstance(dims, (list, tuple)) and all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in dims
    ):
        return tuple(int(n) for n in dims)
    raise InputError(f"shape must be an integer >= 0 or a tuple of them, got {shape!r}")


def normalize(model: Model, q: ArrayLike, name: str = "q") -> Float:
    """`q` with unit quaternions and unit ``(cos θ, sin θ)`` pairs, as Pinocchio's ``normalize``.

    The dynamics and kinematics read a quaternion or ``(cos θ, sin θ)`` pair of any norm as
    the rotation it points to; a configuration that is stored, compared or handed to another
    library (Pinocchio reads them as they are) should pass through here first.

    Args:
      model: the robot.
      q: (..., nq) configurations.
      name: what messages call `q`.

    Returns:
      (..., nq) configurations, other coordinates unchanged.

    Raises:
      InputError: a quaternion or ``(cos θ, sin θ)`` pair of zero norm, which has no direction.
    """
    out = _configuration(model, name, q).copy()
    for _, part, _ in _directions(model):
        out[..., part] /= np.linalg.norm(out[..., part], axis=-1, keepdims=True)
    return out


def integrate(model: Model, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> Float:
    """Configuration reached from `q` by moving at velocity `v` for `dt`: ``q ⊕ v dt``.

    Exact on each joint's manifold, as Pinocchio's ``integrate``: ``R exp(ω dt)`` for spherical
    joints, ``M exp(v dt)`` on SE(3) for free joints, angle addition for continuous joints.
    Quaternions come out normalised; a free joint's keeps the sign closest to its start's, a
    spherical joint's is the plain product ``q exp(ω dt)`` (both as in Pinocchio).

    Args:
      model: the robot.
      q: (..., nq) configurations.
      v: (..., nv) velocities; leading dimensions broadcast with those of `q`.
      dt: duration.

    Returns:
      (..., nq) configurations.

    Raises:
      InputError: a quaternion or ``(cos θ, sin θ)`` pair of zero norm, which has no direction.
    """
    q = _configuration(model, "q", q)
    v = as_finite_array("v", v, model.nv) * check_real("dt", dt)
    batch = batch_shape({"q": (q, 1), "v": (v, 1)})
    q = np.broadcast_to(q, (*batch, model.nq))
    v = np.broadcast_to(v, (*batch, model.nv))
    out = np.array(q, dtype=np.float64)
    for jtype, qs, vs, _ in _joints(model):
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            out[..., qs] = q[..., qs] + v[..., vs]
        elif jtype == JointType.CONTINUOUS:
            # rotate (cos, sin) by the angle step, then renormalise
            c, s = q[..., qs], q[..., qs + 1]
            cd, sd = np.cos(v[..., vs]), np.sin(v[..., vs])
            cs = np.stack([c * cd - s * sd, s * cd + c * sd], axis=-1)
            out[..., qs : qs + 2] = cs / np.linalg.norm(cs, axis=-1, keepdims=True)
        elif jtype == JointType.SPHERICAL:
            out[..., qs : qs + 4] = _normalize(
                quat_multiply(q[..., qs : qs + 4], quat_exp(v[..., vs : vs + 3]))
            )
        else:
            # free: M exp(v), translation through the left Jacobian of SO(3)
            linear, angular = v[..., vs : vs + 3], v[..., vs + 3 : vs + 6]
            quat = q[..., qs + 3 : qs + 7]
            step = _apply(_so3_left_jacobian(angular), linear)
            rotation = quaternion_to_matrix(_normalize(quat))
            out[..., qs : qs + 3] = q[..., qs : qs + 3] + _apply(rotation, step)
            # the quaternion in the start's hemisphere, as Pinocchio picks it
            moved = _normalize(quat_multiply(quat, quat_exp(angular)))
            flip = np.sum(moved * quat, axis=-1, keepdims=True) < 0.0
            out[..., qs + 3 : qs + 7] = np.where(flip, -moved, moved)
    return out


def difference(model: Model, q0: ArrayLike, q1: ArrayLike) -> Float:
    """Velocity that leads from `q0` to `q1` in unit time: ``q1 ⊖ q0``, the inverse of `integrate`.

    Exact on each joint's manifold, as Pinocchio's ``difference``: ``log(R0^T R1)`` for spherical
    joints (the shortest rotation), ``log(M0^-1 M1)`` on SE(3) for free joints.

    Args:
      model: the robot.
      q0: (..., nq) start configurations.
      q1: (..., nq) end configurations; leading dimensions broadcast with those of `q0`.

    Returns:
      (..., nv) velocities.

    Raises:
      InputError: a quaternion or ``(cos θ, sin θ)`` pair of zero norm, which has no direction.
    """
    q0 = _configuration(model, "q0", q0)
    q1 = _configuration(model, "q1", q1)
    batch = batch_shape({"q0": (q0, 1), "q1": (q1, 1)})
    q0 = np.broadcast_to(q0, (*batch, model.nq))
    q1 = np.broadcast_to(q1, (*batch, model.nq))
    v = np.zeros((*batch, model.nv))
    for jtype, qs, vs, _ in _joints(model):
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            v[..., vs] = q1[..., qs] - q0[..., qs]
        elif jtype == JointType.CONTINUOUS:
            c0, s0, c1, s1 = q0[..., qs], q0[..., qs + 1], q1[..., qs], q1[..., qs + 1]
            v[..., vs] = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
        elif jtype == JointType.SPHERICAL:
            relative = quat_multiply(quat_conjugate(q0[..., qs : qs + 4]), q1[..., qs : qs + 4])
            v[..., vs : vs + 3] = quat_log(_normalize(relative))
        else:
            # free: log(M0^-1 M1), translation through the inverse left Jacobian
            quat0, quat1 = q0[..., qs + 3 : qs + 7], q1[..., qs + 3 : qs + 7]
            angular = quat_log(_normalize(quat_multiply(quat_conjugate(quat0), quat1)))
            offset = _apply(
                np.swapaxes(quaternion_to_matrix(_normalize(quat0)), -1, -2),
                q1[..., qs : qs + 3] - q0[..., qs : qs + 3],
            )
            v[..., vs : vs + 3] = _apply(_so3_left_jacobian_inverse(angular), offset)
            v[..., vs + 3 : vs + 6] = angular
    return v


def mujoco_index(model: Model, mj_model: Any) -> Int:
    """MuJoCo joint of each joint of `model`, matched by name.

    Names of unnamed MuJoCo joints are generated as `invdyn.io.mjcf.joint_names` does, so a
    model loaded from an MJCF file matches the ``MjModel`` it was compiled from.

    Args:
      model: the robot.
      mj_model: a compiled ``mujoco.MjModel`` holding a joint of the same name and a compatible
        type for each joint of `model` (hinge for revolute and continuous joints, slide for
        prismatic, ball for spherical, free for free); it may hold more joints.

    Returns:
      (nbody,) MuJoCo joint ids.

    Raises:
      InputError: a joint of `model` is missing from `mj_model` or has another type there.
    """
    from invdyn.io.mjcf import joint_names

    ids = {name: j for j, name in enumerate(joint_names(mj_model))}
    index = np.zeros(model.nbody, dtype=np.int64)
    for i, (name, jtype) in enumerate(zip(model.jnt_name, model.jnt_type, strict=True)):
        if name not in ids:
            raise InputError(f"mj_model has no joint named {name!r} (a joint of {model.name!r})")
        j = index[i] = ids[name]
        expected, found = _MJ_TYPES[JointType(jtype)], int(mj_model.jnt_type[j])
        if found != expected:
            raise InputError(
                f"joint {name!r} is {JointType(jtype).name} in {model.name!r} but a "
                f"{_MJ_TYPE_NAMES.get(found, found)} joint in mj_model, expected "
                f"{_MJ_TYPE_NAMES[expected]}"
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
    index = mujoco_index(model, mj_model)
    q = _configuration(model, "q", q)
    v = np.zeros(model.nv) if v is None else as_finite_array("v", v, model.nv)
    batch = batch_shape({"q": (q, 1), "v": (v, 1)})
    qpos = np.array(np.broadcast_to(mj_model.qpos0, (*batch, mj_model.nq)), dtype=np.float64)
    qvel = np.zeros((*batch, mj_model.nv))
    q = np.broadcast_to(q, (*batch, model.nq))
    v = np.broadcast_to(v, (*batch, model.nv))
    for i, jtype in enumerate(model.jnt_type):
        qs, vs, j = model.jnt_qadr[i], model.jnt_vadr[i], index[i]
        ps, ds = int(mj_model.jnt_qposadr[j]), int(mj_model.jnt_dofadr[j])
        nv = model.jnt_nv[i]
        qvel[..., ds : ds + nv] = v[..., vs : vs + nv]
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            qpos[..., ps] = q[..., qs]
        elif jtype == JointType.CONTINUOUS:
            qpos[..., ps] = np.arctan2(q[..., qs + 1], q[..., qs])
        elif jtype == JointType.SPHERICAL:
            qpos[..., ps : ps + 4] = xyzw_to_wxyz(q[..., qs : qs + 4])
        else:
            # free: linear velocity from the body frame to the world frame
            quat = q[..., qs + 3 : qs + 7]
            qpos[..., ps : ps + 3] = q[..., qs : qs + 3]
            qpos[..., ps + 3 : ps + 7] = xyzw_to_wxyz(quat)
            rotation = quaternion_to_matrix(_normalize(quat))
            qvel[..., ds : ds + 3] = _apply(rotation, v[..., vs : vs + 3])
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
    index = mujoco_index(model, mj_model)
    mj_nq, mj_nv = int(mj_model.nq), int(mj_model.nv)
    # one-coordinate joints in one gather
    simple = np.isin(model.jnt_type, (JointType.REVOLUTE, JointType.PRISMATIC))
    q_to, q_from = model.jnt_qadr[simple], mj_model.jnt_qposadr[index[simple]]
    v_to, v_from = model.jnt_vadr[simple], mj_model.jnt_dofadr[index[simple]]
    # the others: (type, invdyn q and v addresses, MuJoCo qpos and dof addresses, nv)
    others = [
        (
            JointType(model.jnt_type[i]),
            int(model.jnt_qadr[i]),
            int(model.jnt_vadr[i]),
            int(mj_model.jnt_qposadr[index[i]]),
            int(mj_model.jnt_dofadr[index[i]]),
            int(model.jnt_nv[i]),
        )
        for i in np.flatnonzero(~simple)
    ]

    def read(qpos: ArrayLike, qvel: ArrayLike | None = None) -> tuple[Float, Float]:
        qpos = as_finite_array("qpos", qpos, mj_nq)
        qvel = np.zeros(mj_nv) if qvel is None else as_finite_array("qvel", qvel, mj_nv)
        if qpos.ndim != 1 or qvel.ndim != 1:
            batch = batch_shape({"qpos": (qpos, 1), "qvel": (qvel, 1)})
            qpos = np.broadcast_to(qpos, (*batch, mj_nq))
            qvel = np.broadcast_to(qvel, (*batch, mj_nv))
        q = np.zeros((*qpos.shape[:-1], model.nq))
        v = np.zeros((*qpos.shape[:-1], model.nv))
        q[..., q_to] = qpos[..., q_from]
        v[..., v_to] = qvel[..., v_from]
        for jtype, qs, vs, ps, ds, nv in others:
            v[..., vs : vs + nv] = qvel[..., ds : ds + nv]
            if jtype == JointType.CONTINUOUS:
                q[..., qs], q[..., qs + 1] = np.cos(qpos[..., ps]), np.sin(qpos[..., ps])
            elif jtype == JointType.SPHERICAL:
                q[..., qs : qs + 4] = wxyz_to_xyzw(qpos[..., ps : ps + 4])
            else:
                # free: linear velocity from the world frame to the body frame
                quat = wxyz_to_xyzw(qpos[..., ps + 3 : ps + 7])
                q[..., qs : qs + 3] = qpos[..., ps : ps + 3]
                q[..., qs + 3 : qs + 7] = quat
                rotation = quaternion_to_matrix(_normalize(quat))
                v[..., vs : vs + 3] = _apply(np.swapaxes(rotation, -1, -2), qvel[..., ds : ds + 3])
        return q, v

    return read


def _configuration(model: Model, name: str, q: ArrayLike) -> Float:
    """`q` as a finite (..., nq) float array whose quaternions and ``(cos θ, sin θ)`` pairs
    have a direction (a norm above zero), or `InputError` naming the joint that has none."""
    q = as_finite_array(name, q, model.nq)
    for joint, part, what in _directions(model):
        if np.any(np.linalg.norm(q[..., part], axis=-1) == 0.0):
            raise InputError(
                f"{name}: the {what} of joint {joint!r} "
                f"({name}[..., {part.start}:{part.stop}]) has zero norm"
            )
    return q


def _directions(model: Model) -> list[tuple[str, slice, str]]:
    """(joint name, slice of q, what it holds) of each quaternion and ``(cos θ, sin θ)`` pair of
    `model`, the coordinates that hold a direction rather than a value."""
    parts = {
        JointType.CONTINUOUS: (0, 2, "(cos, sin)"),
        JointType.SPHERICAL: (0, 4, "quaternion"),
        JointType.FREE: (3, 7, "quaternion"),
    }
    out = []
    for name, (jtype, qs, _, _) in zip(model.jnt_name, _joints(model), strict=True):
        if jtype in parts:
            start, stop, what = parts[jtype]
            out.append((name, slice(qs + start, qs + stop), what))
    return out


def _joints(model: Model) -> list[tuple[JointType, int, int, int]]:
    """(type, first index in q, first index in v, size in q) of each joint of `model`."""
    return [
        (
            JointType(model.jnt_type[i]),
            int(model.jnt_qadr[i]),
            int(model.jnt_vadr[i]),
            int(model.jnt_nq[i]),
        )
        for i in range(model.nbody)
    ]


# quaternion helpers, [x, y, z, w] with any leading dimensions


def xyzw_to_wxyz(quat: ArrayLike) -> Float:
    """(..., 4) ``[w, x, y, z]`` quaternions (MuJoCo's order) of ``[x, y, z, w]`` ones."""
    return np.roll(np.asarray(quat, dtype=np.float64), 1, axis=-1)


def wxyz_to_xyzw(quat: ArrayLike) -> Float:
    """(..., 4) ``[x, y, z, w]`` quaternions of ``[w, x, y, z]`` ones (MuJoCo's order)."""
    return np.roll(np.asarray(quat, dtype=np.float64), -1, axis=-1)


def quat_multiply(a: ArrayLike, b: ArrayLike) -> Float:
    """(..., 4) Hamilton product ``a b`` of ``[x, y, z, w]`` quaternions.

    Args:
      a: (..., 4) left factors.
      b: (..., 4) right factors.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    va, wa, vb, wb = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    vector = wa * vb + wb * va + np.cross(va, vb)
    scalar = wa * wb - np.sum(va * vb, axis=-1, keepdims=True)
    return np.concatenate([vector, scalar], axis=-1)


def quat_conjugate(quat: ArrayLike) -> Float:
    """(..., 4) conjugates (inverses of unit quaternions) of ``[x, y, z, w]`` quaternions."""
    quat = np.asarray(quat, dtype=np.float64)
    return np.concatenate([-quat[..., :3], quat[..., 3:]], axis=-1)


def quat_exp(omega: ArrayLike) -> Float:
    """(..., 4) unit quaternion ``[x, y, z, w]`` of the rotation vector `omega` (exp on SO(3)).

    Args:
      omega: (..., 3) rotation vectors, angle times unit axis.
    """
    omega = np.asarray(omega, dtype=np.float64)
    theta = np.linalg.norm(omega, axis=-1, keepdims=True)
    # sin(θ/2) / θ, smooth at zero
    half_sinc = 0.5 * np.sinc(theta / (2.0 * np.pi))
    return np.concatenate([half_sinc * omega, np.cos(theta / 2.0)], axis=-1)


def quat_log(quat: ArrayLike) -> Float:
    """(..., 3) rotation vector of quaternions (log on SO(3)), angle in [0, pi].

    Args:
      quat: (..., 4) quaternions ``[x, y, z, w]``, of any norm above zero (each read as the
        unit quaternion along it); ``q`` and ``-q`` give the same result.

    Raises:
      InputError: a quaternion that is not finite or has zero norm, which has no rotation.
    """
    given = as_finite_array("quat", quat, 4)
    length = np.linalg.norm(given, axis=-1, keepdims=True)
    if np.any(length == 0.0):
        raise InputError("quat holds a quaternion of zero norm, which has no rotation")
    # the unit quaternion of the shortest rotation: the representative with w >= 0
    unit = given / np.where(given[..., 3:] < 0.0, -length, length)
    vector, w = unit[..., :3], unit[..., 3:]
    norm = np.linalg.norm(vector, axis=-1, keepdims=True)
    theta = 2.0 * np.arctan2(norm, w)
    # θ / sin(θ/2), smooth at zero: 2 atan(n / w) / n ~ (2 / w) (1 - (n / w)^2 / 3)
    small = norm < 1e-6
    exact = theta / np.where(small, 1.0, norm)
    ratio = norm / np.where(small, w, 1.0)
    series = 2.0 / np.where(small, w, 1.0) * (1.0 - ratio**2 / 3.0)
    return np.where(small, series, exact) * vector


def _so3_left_jacobian(omega: Float) -> Float:
    """(..., 3, 3) ``V(ω) = I + (1 - cos θ)/θ² [ω] + (θ - sin θ)/θ³ [ω]²``, translation of exp6."""
    theta = np.linalg.norm(omega, axis=-1)[..., None, None]
    k = skew(omega)
    a = 0.5 * np.sinc(theta / (2.0 * np.pi)) ** 2
    small = theta < 1e-2
    safe = np.where(small, 1.0, theta)
    b = np.where(
        small, 1.0 / 6.0 - theta**2 / 120.0 + theta**4 / 5040.0, (safe - np.sin(safe)) / safe**3
    )
    return np.eye(3) + a * k + b * (k @ k)


def _so3_left_jacobian_inverse(omega: Float) -> Float:
    """(..., 3, 3) ``V(ω)^-1 = I - [ω]/2 + (1 - θ sin θ / (2 (1 - cos θ)))/θ² [ω]²``, θ < 2π."""
    theta = np.linalg.norm(omega, axis=-1)[..., None, None]
    k = skew(omega)
    small = theta < 1e-2
    safe = np.where(small, 1.0, theta)
    exact = (1.0 - safe * np.sin(safe) / (2.0 * (1.0 - np.cos(safe)))) / safe**2
    c = np.where(small, 1.0 / 12.0 + theta**2 / 720.0 + theta**4 / 30240.0, exact)
    return np.eye(3) - 0.5 * k + c * (k @ k)


def _apply(matrix: Float, vector: Float) -> Float:
    """(..., 3) products of (..., 3, 3) matrices and (..., 3) vectors."""
    return np.einsum("...ij,...j->...i", matrix, vector)


def _normalize(quat: Float) -> Float:
    """(..., 4) unit quaternions along `quat`."""
    return quat / np.linalg.norm(quat, axis=-1, keepdims=True)


def _sampling_bounds(model: Model) -> tuple[Float, Float]:
    """(nq,) finite lower and upper bounds of the sampling interval of each coordinate."""
    lower, upper = np.array(model.q_lower), np.array(model.q_upper)
    width = np.zeros(model.nq)
    for jtype, start, _, nq in _joints(model):
        if jtype == JointType.REVOLUTE:
            width[start] = _ANGLE_RANGE
        elif jtype in (JointType.PRISMATIC, JointType.FREE):
            width[start : start + (1 if jtype == JointType.PRISMATIC else 3)] = _LENGTH_RANGE
        else:
            # manifold coordinates are drawn apart; any finite bounds do here
            lower[start : start + nq], upper[start : start + nq] = 0.0, 0.0
    finite_lower, finite_upper = np.isfinite(lower), np.isfinite(upper)
    lower = np.where(
        finite_lower, lower, np.minimum(-width, np.where(finite_upper, upper, 0) - width)
    )
    upper = np.where(finite_upper, upper, np.maximum(width, lower + width))
    return lower, upper
