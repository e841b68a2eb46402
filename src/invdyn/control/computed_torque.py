"""Joint-space tracking controllers for computed-torque control, and their gains.

Four laws: PD, PD with gravity compensation, computed torque and inverse-dynamics feedforward
with PD feedback. A controller is called as ``tau = controller(t, q, v)``: from the time and the
measured state it returns joint torques that track a reference trajectory. The tracking errors are
``e = q_ref ⊖ q`` (`invdyn.configuration.difference`, so continuous joints wrap) and
``e_dot = v_ref - v``. Gains come in two units, depending on the law:

- torque units (`pd`, `pd_gravity`, `feedforward`): ``kp`` in N m/rad (N/m for prismatic
  joints) and ``kd`` in N m s/rad (N s/m). Scale them to the robot with
  ``Gains.critically_damped(bandwidth, joint_inertia(model, q))``.
- acceleration units (`computed_torque`): ``kp`` in 1/s² and ``kd`` in 1/s, the same for every
  joint since the inverse dynamics decouples them: ``Gains.critically_damped(bandwidth)``.

Every controller takes an optional ``torque_limit`` and clips its output to it. Arguments are
checked once, when the controller is built; each call then costs a trajectory evaluation and at
most one `invdyn.rnea` on plain vectors, fast enough for a 1 kHz loop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import as_float_array, check_positive, check_real, not_a_model
from invdyn.configuration import difference
from invdyn.control.trajectories import Trajectory, finite_array
from invdyn.dynamics import mass_matrix, rnea
from invdyn.errors import InputError
from invdyn.model import Model

Float = NDArray[np.float64]
State = tuple[Float, Float, Float]

Controller = Callable[[float, Float, Float], Float]
"""``tau = controller(t, q, v)``: (nv,) joint torques from the time, (nq,) q and (nv,) v."""


@dataclasses.dataclass(frozen=True, eq=False, init=False)
class Gains:
    """Proportional and derivative gains of a joint-space controller.

    Their units depend on the controller (see the module docstring): torque per error for
    `pd`, `pd_gravity` and `feedforward`, acceleration per error for `computed_torque`.

    Attributes:
      kp: (nv,) or () stiffness, finite and non-negative; a scalar applies to every joint.
      kd: (nv,) or () damping, finite and non-negative.
    """

    kp: Float
    kd: Float

    def __init__(self, kp: ArrayLike, kd: ArrayLike) -> None:
        object.__setattr__(self, "kp", _gain("kp", kp))
        object.__setattr__(self, "kd", _gain("kd", kd))
        if self.kp.ndim and self.kd.ndim and self.kp.shape != self.kd.shape:
            raise InputError(
                f"kp and kd must have the same shape, got {self.kp.shape} and {self.kd.shape}"
            )

    @classmethod
    def critically_damped(cls, bandwidth: float, inertia: ArrayLike = 1.0) -> Gains:
        """Gains that make each joint a critically damped second-order system.

        ``kp = I ω²`` and ``kd = 2 I ω`` (so ``kd² = 4 kp I``) with ``ω`` the bandwidth: the error
        of a joint of inertia ``I`` decays as ``(1 + ω t) exp(-ω t)``.

        Args:
          bandwidth: ω, the closed-loop natural frequency in rad/s, positive.
          inertia: (nv,) or () joint inertias I: 1 for `computed_torque` (acceleration units),
            `joint_inertia` for the laws in torque units.

        Returns:
          The gains.

        Raises:
          InputError: a bandwidth or inertia that is not finite and positive, or gains too
            large for floating point.
        """
        omega = np.float64(check_positive("bandwidth", bandwidth))
        inertia = _gain("inertia", inertia)
        with np.errstate(over="ignore"):
            kp, kd = inertia * omega**2, 2.0 * inertia * omega
        if not (np.isfinite(kp).all() and np.isfinite(kd).all()):
            raise InputError(f"bandwidth {omega:g} rad/s gives gains kp = I ω² that overflow")
        return cls(kp=kp, kd=kd)


def joint_inertia(model: Model, q: ArrayLike) -> Float:
    """Inertia each joint sees alone, ``diag M(q)``, to scale gains to torque units.

    The mass matrix carries the rotor armature on its diagonal, so this includes it.

    Args:
      model: the robot.
      q: (..., nq) joint positions.

    Returns:
      (..., nv) joint inertias (kg m² for revolute joints, kg for prismatic ones).
    """
    if not isinstance(model, Model):
        raise not_a_model(model)
    q = as_float_array("q", q, model.nq)
    return np.diagonal(mass_matrix(model, q), axis1=-2, axis2=-1).copy()


@dataclasses.dataclass(frozen=True, eq=False, init=False)
class JointController:
    """A tracking law bound to a model, a trajectory and gains; ``tau = controller(t, q, v)``.

    Build one with `pd`, `pd_gravity`, `computed_torque` or `feedforward`; this base holds the
    checks, the tracking errors and the saturation that the four laws share.

    Attributes:
      model: the robot model the law uses.
      trajectory: the reference, ``q_ref, v_ref, a_ref = trajectory(t)``.
      gains: the gains, in the law's units.
      torque_limit: (nv,) symmetric bounds on the output torques, or None.
    """

    model: Model = dataclasses.field(repr=False)
    trajectory: Trajectory = dataclasses.field(repr=False)
    gains: Gains
    torque_limit: Float | None = None
    # gains broadcast to (nv,), and whether e = q_ref - q (no continuous joint)
    _kp: Float = dataclasses.field(init=False, repr=False)
    _kd: Float = dataclasses.field(init=False, repr=False)
    _additive: bool = dataclasses.field(init=False, repr=False)

    def __init__(
        self,
        model: Model,
        trajectory: Trajectory,
        gains: Gains,
        torque_limit: ArrayLike | None = None,
    ) -> None:
        if not isinstance(model, Model):
            raise not_a_model(model)
        if not isinstance(gains, Gains):
            raise InputError(f"gains must be invdyn.control.Gains, got {type(gains).__name__}")
        check_actuated(model)
        _check_trajectory(model, trajectory)
        set_field = object.__setattr__
        set_field(self, "model", model)
        set_field(self, "trajectory", trajectory)
        set_field(self, "gains", gains)
        limit = None if torque_limit is None else _torque_limit(model, torque_limit)
        set_field(self, "torque_limit", limit)
        for name in ("kp", "kd"):
            gain = getattr(gains, name)
            if gain.ndim and gain.shape != (model.nv,):
                raise InputError(
                    f"gains.{name} must be a scalar or have shape (nv,) = ({model.nv},), "
                    f"got {gain.shape}"
                )
            set_field(self, f"_{name}", np.broadcast_to(gain, (model.nv,)).copy())
        set_field(self, "_additive", all(spec.bounded for spec in model.jnt_spec))

    def __call__(self, t: float, q: ArrayLike, v: ArrayLike) -> Float:
        """Joint torques that track the reference at time `t` from the measured state.

        Args:
          t: time in seconds, a finite number.
          q: (nq,) measured joint positions.
          v: (nv,) measured joint velocities.

        Returns:
          (nv,) joint torques, clipped to `torque_limit`.
        """
        q, v = self._state(q, v)
        q_ref, v_ref, a_ref = _reference(self.model, self.trajectory, check_real("t", t))
        e = q_ref - q if self._additive else difference(self.model, q, q_ref)
        tau = self._law(q, v, (q_ref, v_ref, a_ref), (e, v_ref - v))
        if not np.isfinite(tau).all():
            raise _non_finite(q, v)
        if self.torque_limit is not None:
            np.clip(tau, -self.torque_limit, self.torque_limit, out=tau)
        return tau

    def _law(self, q: Float, v: Float, reference: State, errors: tuple[Float, Float]) -> Float:
        """(nv,) unsaturated torques from the state, the reference and the errors (e, e_dot)."""
        raise NotImplementedError

    def _state(self, q: ArrayLike, v: ArrayLike) -> tuple[Float, Float]:
        """(nq,) q and (nv,) v as float64 arrays, or `InputError` naming the wrong one."""
        model = self.model
        for name, x, size, label in (("q", q, model.nq, "nq"), ("v", v, model.nv, "nv")):
            shape = np.shape(x)
            if shape != (size,):
                raise InputError(f"{name} must have shape ({label},) = ({size},), got {shape}")
        try:
            return np.asarray(q, dtype=np.float64), np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("q and v must be arrays of numbers") from None


class PD(JointController):
    """``tau = Kp e + Kd e_dot``, gains in torque units; see `pd`."""

    def _law(self, q: Float, v: Float, reference: State, errors: tuple[Float, Float]) -> Float:
        e, ed = errors
        return self._kp * e + self._kd * ed


class PDGravity(JointController):
    """``tau = Kp e + Kd e_dot + g(q)``, gains in torque units; see `pd_gravity`."""

    def _law(self, q: Float, v: Float, reference: State, errors: tuple[Float, Float]) -> Float:
        e, ed = errors
        zero = np.zeros(self.model.nv)
        return self._kp * e + self._kd * ed + rnea(self.model, q, zero, zero)


class ComputedTorque(JointController):
    """``tau = rnea(q, v, a_ref + Kd e_dot + Kp e)``, gains in acceleration units."""

    def _law(self, q: Float, v: Float, reference: State, errors: tuple[Float, Float]) -> Float:
        e, ed = errors
        return rnea(self.model, q, v, reference[2] + self._kd * ed + self._kp * e)


class Feedforward(JointController):
    """``tau = rnea(q_ref, v_ref, a_ref) + Kp e + Kd e_dot``, gains in torque units."""

    def _law(self, q: Float, v: Float, reference: State, errors: tuple[Float, Float]) -> Float:
        e, ed = errors
        return rnea(self.model, *reference) + self._kp * e + self._kd * ed


def pd(
    model: Model, trajectory: Trajectory, gains: Gains, *, torque_limit: ArrayLike | None = None
) -> JointController:
    """PD tracking: ``tau = Kp e + Kd e_dot`` with ``e = q_ref ⊖ q``, ``e_dot = v_ref - v``.

    Gains in torque units (N m/rad, N m s/rad). Without gravity compensation the robot sags
    by about ``g(q) / Kp`` under gravity.

    Args:
      model: the robot.
      trajectory: the reference, ``q_ref, v_ref, a_ref = trajectory(t)``.
      gains: Kp and Kd in torque units.
      torque_limit: (nv,) or () symmetric bounds on the output, positive; None for none.

    Returns:
      The controller, ``tau = controller(t, q, v)``.
    """
    return PD(model, trajectory, gains, torque_limit)


def pd_gravity(
    model: Model, trajectory: Trajectory, gains: Gains, *, torque_limit: ArrayLike | None = None
) -> JointController:
    """PD tracking with gravity compensation: ``tau = Kp e + Kd e_dot + g(q)``.

    Gains in torque units (N m/rad, N m s/rad). Regulation to a fixed point is asymptotically
    stable for any positive gains (Takegaki and Arimoto 1981); tracking lags a moving reference.

    Args:
      model: the robot.
      trajectory: the reference, ``q_ref, v_ref, a_ref = trajectory(t)``.
      gains: Kp and Kd in torque units.
      torque_limit: (nv,) or () symmetric bounds on the output, positive; None for none.

    Returns:
      The controller, ``tau = controller(t, q, v)``.
    """
    return PDGravity(model, trajectory, gains, torque_limit)


def computed_torque(
    model: Model, trajectory: Trajectory, gains: Gains, *, torque_limit: ArrayLike | None = None
) -> JointController:
    """Computed-torque control: ``tau = rnea(q, v, a_ref + Kd e_dot + Kp e)``.

    Inverse dynamics at the measured state turns the robot into decoupled double integrators:
    on a perfect model the closed loop is ``e_ddot + Kd e_dot + Kp e = 0`` for every joint
    (Siciliano et al. 2009, 8.5.2). Gains in acceleration units (1/s², 1/s), the same for
    every robot: ``Gains.critically_damped(bandwidth)``.

    Args:
      model: the robot model the law inverts (possibly an estimate of the real robot).
      trajectory: the reference, ``q_ref, v_ref, a_ref = trajectory(t)``.
      gains: Kp and Kd in acceleration units.
      torque_limit: (nv,) or () symmetric bounds on the output, positive; None for none.

    Returns:
      The controller, ``tau = controller(t, q, v)``.
    """
    return ComputedTorque(model, trajectory, gains, torque_limit)


def feedforward(
    model: Model, trajectory: Trajectory, gains: Gains, *, torque_limit: ArrayLike | None = None
) -> JointController:
    """Inverse-dynamics feedforward with PD feedback: ``tau = rnea(ref) + Kp e + Kd e_dot``.

    ``rnea(ref) = rnea(q_ref, v_ref, a_ref)`` depends on the reference only (it can be
    precomputed); the PD acts on the residual error. Gains in torque units (N m/rad,
    N m s/rad).

    Args:
      model: the robot model of the feedforward.
      trajectory: the reference, ``q_ref, v_ref, a_ref = trajectory(t)``.
      gains: Kp and Kd in torque units.
      torque_limit: (nv,) or () symmetric bounds on the output, positive; None for none.

    Returns:
      The controller, ``tau = controller(t, q, v)``.
    """
    return Feedforward(model, trajectory, gains, torque_limit)


class ControllerFactory(Protocol):
    """The signature shared by `pd`, `pd_gravity`, `computed_torque` and `feedforward`."""

    def __call__(
        self,
        model: Model,
        trajectory: Trajectory,
        gains: Gains,
        *,
        torque_limit: ArrayLike | None = None,
    ) -> JointController: ...


CONTROLLERS: Mapping[str, ControllerFactory] = MappingProxyType(
    {
        "pd": pd,
        "pd_gravity": pd_gravity,
        "computed_torque": computed_torque,
        "feedforward": feedforward,
    }
)
"""Controller constructors by name, for the command line."""


def check_actuated(model: Model) -> None:
    """`InputError` unless an actuator drives every coordinate of `model`: a joint-space law puts
    a force on each, which an underactuated robot cannot exert."""
    if model.passive_dofs:
        raise InputError(
            f"{model.name!r} is underactuated: no actuator drives "
            f"{', '.join(model.passive_dofs)}, and a "
            "joint-space tracking law needs a force on every coordinate; track its actuated "
            "joints with a controller of its own, or, for an idealised study, mark every "
            "coordinate actuated: model.replace(dof_actuated=None) in Python, or a <motor> "
            "on each of those joints in an MJCF file"
        )


def effort_limits(model: Model) -> Float:
    """(nv,) bounds on the joint forces from the model's ``dof_effort_limit``, inf where that
    is zero or below: URDFs write ``effort="0"`` for a limit nobody gave, so it bounds nothing."""
    limit = np.asarray(model.dof_effort_limit, dtype=np.float64)
    return np.where(limit > 0.0, limit, np.inf)


def _check_trajectory(model: Model, trajectory: Trajectory) -> None:
    """`InputError` unless `trajectory` gives references of the sizes of `model`."""
    other = getattr(trajectory, "model", None)
    if isinstance(other, Model) and other.joint_names != model.joint_names:
        raise InputError(
            f"the trajectory is for the joints {other.joint_names} of {other.name!r}, but the "
            f"controller's model {model.name!r} has {model.joint_names}"
        )
    if not callable(trajectory):
        raise InputError(f"trajectory must be callable as trajectory(t), got {trajectory!r}")
    _reference(model, trajectory, 0.0)


def _reference(model: Model, trajectory: Trajectory, t: float) -> State:
    """``trajectory(t)``: (nq,) q_ref, (nv,) v_ref and (nv,) a_ref, or `InputError`."""
    output = trajectory(t)
    count = len(output) if isinstance(output, (tuple, list)) else None
    if count != 3:
        got = type(output).__name__ if count is None else f"{count} values"
        raise InputError(f"trajectory({t!r}) must give (q, v, a), got {got}")
    sizes = {"q": (model.nq,), "v": (model.nv,), "a": (model.nv,)}
    for (name, size), value in zip(sizes.items(), output):
        if np.shape(value) != size:
            raise InputError(
                f"trajectory({t!r}) gives {name} of shape {np.shape(value)}, expected {size}"
            )
    return output


def _gain(name: str, x: ArrayLike) -> Float:
    """`x` as a read-only finite non-negative float64 scalar or vector, or `InputError`."""
    ndim = np.ndim(x)
    if ndim > 1:
        raise InputError(f"{name} must be a scalar or have shape (nv,), got {np.shape(x)}")
    shape = (None,) if ndim else ()
    array = finite_array(name, x, shape, ("nv",) if ndim else ())
    if np.any(array < 0.0):
        k = int(np.argmax(array < 0.0)) if ndim else 0
        raise InputError(f"{name} must be non-negative, got {array.flat[k]} at index {k}")
    array.setflags(write=False)
    return array


def _torque_limit(model: Model, x: ArrayLike) -> Float:
    """(nv,) positive bounds (inf allowed) from a scalar or (nv,) `x`, or `InputError`."""
    try:
        array = np.array(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"torque_limit must be numbers, got {x!r}") from None
    if array.ndim > 1 or (array.ndim and array.shape != (model.nv,)):
        raise InputError(
            f"torque_limit must be a scalar or have shape (nv,) = ({model.nv},), got {np.shape(x)}"
        )
    if np.isnan(array).any() or np.any(array <= 0.0):
        raise InputError(f"torque_limit must be positive (inf for no limit), got {array}")
    limit = np.broadcast_to(array, (model.nv,)).copy()
    limit.setflags(write=False)
    return limit


def _non_finite(q: Float, v: Float) -> InputError:
    """The error for a non-finite output, naming the non-finite input."""
    for name, x in (("q", q), ("v", v)):
        if not np.isfinite(x).all():
            return InputError(f"{name} holds a non-finite value (NaN or inf)")
    return InputError("the torque overflowed to a non-finite value")
