"""Configurations and velocities: neutral and random ``q``, and integration on the joint
manifolds.

The layout follows Pinocchio (see `invdyn.model.JOINTS`): a CONTINUOUS joint stores
``(cos θ, sin θ)``, a SPHERICAL joint a quaternion ``[x, y, z, w]`` with the angular velocity in
its body frame, and a FREE joint ``[x, y, z, qx, qy, qz, qw]`` with ``v = [linear, angular]``
both in its body frame. `integrate` and `difference` are exact on SO(3) and SE(3), as in
Pinocchio (``q ⊕ v = q · exp(v)``, velocities on the right, in the body frame). Quaternions and
``(cos θ, sin θ)`` pairs need not be of unit norm: every function reads each as the rotation it
points to, as MuJoCo does (the dynamics a zero one as no rotation); `normalize` scales them.

Each function handles the joints of one type at once (`invdyn.model.Model.jnt_groups`), by the
functions of the type's `invdyn.model.JointSpec`. `invdyn.io.mujoco_state` converts to and from
MuJoCo's ``qpos``/``qvel`` layout.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import as_finite_array, batch_shape, check_real
from invdyn.errors import InputError
from invdyn.model import JointGroup, Model

Float = NDArray[np.float64]
Int = NDArray[np.int64]


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
    for group in model.jnt_groups:
        q[group.q] = group.spec.neutral
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
    # directions: uniform rotations, uniform angles, drawn joint by joint
    for start, spec in zip(model.jnt_qadr, model.jnt_spec, strict=True):
        if spec.direction is not None:
            part = slice(start + spec.direction.start, start + spec.direction.stop)
            q[..., part] = spec.direction.draw(rng, shape)
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
    out = as_configuration(model, q, name=name).copy()
    for _, part in _directions(model):
        directions = _gather(out, part)
        out[..., part] = directions / np.linalg.norm(directions, axis=-1, keepdims=True)
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
    q = as_configuration(model, q)
    v = as_finite_array("v", v, model.nv) * check_real("dt", dt)
    batch = batch_shape({"q": (q, 1), "v": (v, 1)})
    q = np.broadcast_to(q, (*batch, model.nq))
    v = np.broadcast_to(v, (*batch, model.nv))
    out = np.array(q, dtype=np.float64)
    for group in model.jnt_groups:
        out[..., group.q] = group.spec.integrate(_gather(q, group.q), _gather(v, group.v))
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
    q0 = as_configuration(model, q0, name="q0")
    q1 = as_configuration(model, q1, name="q1")
    batch = batch_shape({"q0": (q0, 1), "q1": (q1, 1)})
    q0 = np.broadcast_to(q0, (*batch, model.nq))
    q1 = np.broadcast_to(q1, (*batch, model.nq))
    v = np.zeros((*batch, model.nv))
    for group in model.jnt_groups:
        v[..., group.v] = group.spec.difference(_gather(q0, group.q), _gather(q1, group.q))
    return v


def as_configuration(model: Model, q: ArrayLike, *, name: str = "q") -> Float:
    """`q` as a finite (..., nq) float array whose quaternions and ``(cos θ, sin θ)`` pairs
    have a direction (a norm above zero).

    Args:
      model: the robot.
      q: (..., nq) configurations.
      name: what messages call `q`.

    Raises:
      InputError: `q` is not such an array; for a direction of zero norm, naming the first
        joint that has one.
    """
    q = as_finite_array(name, q, model.nq)
    zero: list[int] = []
    for group, part in _directions(model):
        none = np.linalg.norm(_gather(q, part), axis=-1) == 0.0
        zero += group.bodies[none.any(axis=tuple(range(none.ndim - 1)))].tolist()
    if zero:
        joint = min(zero)
        direction = model.jnt_spec[joint].direction
        assert direction is not None
        start = int(model.jnt_qadr[joint])
        raise InputError(
            f"{name}: the {direction.name} of joint {model.jnt_name[joint]!r} "
            f"({name}[..., {start + direction.start}:{start + direction.stop}]) has zero norm"
        )
    return q


def _directions(model: Model) -> list[tuple[JointGroup, Int]]:
    """Each joint group of `model` whose joints hold a direction (a quaternion or a
    ``(cos θ, sin θ)`` pair) rather than values, with the (n, size) indices in q of its
    joints' directions."""
    out = []
    for group in model.jnt_groups:
        direction = group.spec.direction
        if direction is not None:
            out.append((group, group.q[:, direction.start : direction.stop]))
    return out


def _gather(x: Float, index: Int) -> Float:
    """(..., *index.shape) C-contiguous ``x[..., index]``: the layout of the joints' coordinates
    that the types' functions compute on as on slices of `x` (numpy's sums of products round
    otherwise on other layouts)."""
    return x.take(index, axis=-1)


def _sampling_bounds(model: Model) -> tuple[Float, Float]:
    """(nq,) finite lower and upper bounds of the sampling interval of each coordinate."""
    lower, upper = np.array(model.q_lower), np.array(model.q_upper)
    width = np.array([w for spec in model.jnt_spec for w in spec.sampling_width], dtype=float)
    # directions are drawn apart; any finite bounds do here
    for _, part in _directions(model):
        lower[part], upper[part] = 0.0, 0.0
    finite_lower, finite_upper = np.isfinite(lower), np.isfinite(upper)
    lower = np.where(
        finite_lower, lower, np.minimum(-width, np.where(finite_upper, upper, 0) - width)
    )
    upper = np.where(finite_upper, upper, np.maximum(width, lower + width))
    return lower, upper
