"""Closed-loop tracking runs: controllers drive a simulated plant along a reference trajectory.

`track` runs one controller against the plant in MuJoCo (`invdyn.sim.rollout`) and measures the
tracking error ``e = q_ref ⊖ q`` and the torque it used; `compare` runs several controllers on
the same trajectory, plant and bandwidth. The gains of every controller come from one bandwidth
(`gains_for`): in acceleration units for computed torque, scaled by the joint inertia at the
start of the trajectory for the laws in torque units, so that each closes a critically damped
loop of the same natural frequency on the nominal robot.

Needs the ``sim`` extra (MuJoCo).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import check_positive
from invdyn.configuration import difference, integrate, neutral
from invdyn.control.computed_torque import CONTROLLERS, Gains, joint_inertia
from invdyn.control.trajectories import JointTrajectory, Trajectory, minimum_jerk
from invdyn.errors import InputError, warn
from invdyn.model import Model

Float = NDArray[np.float64]

# rad/s, the default closed-loop natural frequency of every controller's gains: at 20 rad/s the
# PD laws, whose gains are fixed, chatter on the Panda where its shoulder and arm axes align
DEFAULT_BANDWIDTH = 10.0
# bandwidth times control period above which critically damped gains sampled at the control
# rate are near instability (a double integrator under them is unstable beyond 2 (sqrt 2 - 1),
# about 0.83)
SAMPLED_LIMIT = 0.4
# the workspace motion: each joint from this fraction of its range to one minus it, turning by
# at most MAX_TURN (rad) about the middle of its range
WORKSPACE_MARGIN = 0.2
MAX_TURN = np.pi
# and reaching at most this share of its velocity limit
SPEED_SHARE = 0.8
# the move of a joint without finite limits (rad or m), centred on its neutral position
UNBOUNDED_MOVE = 1.0


@dataclasses.dataclass(frozen=True)
class JointMetrics:
    """Tracking error and torque use of one degree of freedom over a run.

    Attributes:
      name: the degree of freedom's label (the joint name).
      rms_error: root mean square of the error (rad, or m for prismatic joints).
      max_error: largest absolute error.
      rms_torque: root mean square of the applied torque (N m, or N).
      max_torque: largest absolute applied torque.
      saturated: fraction of control steps at which the torque limit clipped the command.
    """

    name: str
    rms_error: float
    max_error: float
    rms_torque: float
    max_torque: float
    saturated: float


@dataclasses.dataclass(frozen=True, eq=False)
class TrackingResult:
    """One controller's run: the rollout, its reference and the metrics.

    Attributes:
      controller: the controller's name (a key of `CONTROLLERS`).
      rollout: the simulated run (`invdyn.sim.Rollout`).
      q_ref: (T, nq) reference positions at the rollout's times.
      error: (T, nv) tracking error ``q_ref ⊖ q``.
      rms_error: root mean square of the error over all joints and the whole run.
      max_error: largest absolute error over all joints and the whole run.
      joints: per degree of freedom metrics, in v order.
    """

    controller: str
    rollout: Any
    q_ref: Float
    error: Float
    rms_error: float
    max_error: float
    joints: tuple[JointMetrics, ...]

    def metrics(self) -> dict[str, Any]:
        """The metrics as plain JSON data: rms_error, max_error and per_joint by name."""
        return {
            "controller": self.controller,
            "rms_error": self.rms_error,
            "max_error": self.max_error,
            "per_joint": {
                joint.name: {
                    key: value for key, value in dataclasses.asdict(joint).items() if key != "name"
                }
                for joint in self.joints
            },
        }


def workspace_motion(model: Model, *, duration: float = 5.0) -> JointTrajectory:
    """A minimum-jerk move across the workspace: each joint from 20 % to 80 % of its range.

    A revolute joint turns by at most `MAX_TURN` about the middle of its range; joints without
    finite limits move by `UNBOUNDED_MOVE` about their neutral position; and every move is
    shortened where needed so that its peak speed, ``1.875 move / duration``, stays within
    `SPEED_SHARE` of the joint's velocity limit.

    Args:
      model: the robot (revolute, prismatic and continuous joints).
      duration: the time of the move in seconds.

    Returns:
      The trajectory.
    """
    start, end = _workspace_ends(model, check_positive("duration", duration))
    return minimum_jerk(model, start, end, duration)


def gains_for(model: Model, controller: str, bandwidth: float, q: Float) -> Gains:
    """Critically damped gains of bandwidth `bandwidth` (rad/s) for the named controller.

    Computed torque takes them in acceleration units; the other laws in torque units, scaled by
    the joint inertia ``diag M(q)`` at `q` (nq,).
    """
    _check_controller(controller)
    if controller == "computed_torque":
        return Gains.critically_damped(bandwidth)
    return Gains.critically_damped(bandwidth, joint_inertia(model, q))


def track(
    model: Model,
    trajectory: Trajectory,
    controller: str,
    *,
    bandwidth: float = DEFAULT_BANDWIDTH,
    plant: Any = None,
    control_rate: float = 1000.0,
    mj_model: Any = None,
    progress: bool = False,
) -> TrackingResult:
    """Run the named controller on the simulated plant along `trajectory`, and measure it.

    The controller uses `model`; the plant (`invdyn.sim.Plant`) may differ from it on purpose
    (payload, mass error, friction, noise, delay), and so may the MuJoCo model it is simulated
    in, when one is given (an MJCF file's own, with what `model` leaves out: tendons, equality
    constraints, contacts, springs). The run starts on the trajectory, at its first point and
    velocity, and lasts its duration.

    Args:
      model: the controller's model of the robot.
      trajectory: the reference.
      controller: a key of `CONTROLLERS`.
      bandwidth: closed-loop natural frequency of the gains (`gains_for`), rad/s.
      plant: the simulated plant; None for the exact model.
      control_rate: controller calls per second.
      mj_model: a compiled ``mujoco.MjModel`` to simulate (`invdyn.io.mjcf.compile_mjcf`);
        None builds one from `model` (`invdyn.sim.build_mujoco`).
      progress: show a progress bar.

    Returns:
      The run and its metrics.
    """
    from invdyn.sim import Plant, rollout, torque_limits

    _check_controller(controller)
    plant = Plant() if plant is None else plant
    q_start, v_start, _ = trajectory(0.0)
    law = CONTROLLERS[controller](
        model, trajectory, gains_for(model, controller, bandwidth, q_start)
    )
    sampled = bandwidth / check_positive("control_rate", control_rate)
    if sampled > SAMPLED_LIMIT:
        warn(
            f"bandwidth {bandwidth:g} rad/s at {control_rate:g} Hz: {sampled:.2g} rad per "
            "control period, where sampled critically damped gains turn unstable at about "
            f"0.83; keep the bandwidth below {SAMPLED_LIMIT * control_rate:g} rad/s, or "
            "control faster"
        )
    run = rollout(
        model,
        law,
        q0=q_start,
        v0=v_start,
        duration=trajectory.duration,
        control_rate=control_rate,
        plant=plant,
        mj_model=mj_model,
        progress=progress,
    )
    q_ref, _, _ = trajectory(run.time)
    error = difference(model, run.q, q_ref)
    limit = torque_limits(model, plant)
    return TrackingResult(
        controller=controller,
        rollout=run,
        q_ref=q_ref,
        error=error,
        rms_error=float(np.sqrt(np.mean(error**2))),
        max_error=float(np.max(np.abs(error))),
        joints=_joint_metrics(model, error, run.tau_command, run.tau_applied, limit),
    )


def compare(
    model: Model,
    trajectory: Trajectory,
    controllers: Sequence[str] = tuple(CONTROLLERS),
    **options: Any,
) -> dict[str, TrackingResult]:
    """`track` each named controller with the same trajectory and options, in order."""
    for name in controllers:
        _check_controller(name)
    return {name: track(model, trajectory, name, **options) for name in controllers}


def _workspace_ends(model: Model, duration: float) -> tuple[Float, Float]:
    """(nq,) start and end of `workspace_motion`."""
    lower, upper = model.q_lower, model.q_upper
    rest = neutral(model)
    move = np.zeros(model.nv)
    start_offset = np.zeros(model.nv)
    for i, spec in enumerate(model.jnt_spec):
        if not spec.axial:
            continue
        qa, va = model.jnt_qadr[i], model.jnt_vadr[i]
        if spec.bounded and np.isfinite(lower[qa]) and np.isfinite(upper[qa]):
            move[va] = (1.0 - 2.0 * WORKSPACE_MARGIN) * (upper[qa] - lower[qa])
            if spec.turns:
                move[va] = min(move[va], MAX_TURN)
            start_offset[va] = 0.5 * (lower[qa] + upper[qa] - move[va]) - rest[qa]
        else:
            # no finite limits (a continuous joint, say): about the neutral position
            start_offset[va] = -0.5 * UNBOUNDED_MOVE
            move[va] = UNBOUNDED_MOVE
        # a minimum-jerk move peaks at 1.875 move / duration
        speed = model.dof_velocity_limit[va]
        if np.isfinite(speed) and speed > 0.0:
            slower = min(move[va], SPEED_SHARE * speed * duration / 1.875)
            start_offset[va] += 0.5 * (move[va] - slower)
            move[va] = slower
    start = integrate(model, rest, start_offset)
    return start, integrate(model, start, move)


def _joint_metrics(
    model: Model, error: Float, command: Float, applied: Float, limit: Float
) -> tuple[JointMetrics, ...]:
    """Per-dof metrics of a run: error (T, nv), commanded and applied torques (T, nv)."""
    clipped = np.abs(command) > limit
    return tuple(
        JointMetrics(
            name=name,
            rms_error=float(np.sqrt(np.mean(error[:, k] ** 2))),
            max_error=float(np.max(np.abs(error[:, k]))),
            rms_torque=float(np.sqrt(np.mean(applied[:, k] ** 2))),
            max_torque=float(np.max(np.abs(applied[:, k]))),
            saturated=float(np.mean(clipped[:, k])),
        )
        for k, name in enumerate(model.joint_names)
    )


def _check_controller(name: str) -> None:
    if name not in CONTROLLERS:
        raise InputError(
            f"unknown controller {name!r}; expected one of {', '.join(sorted(CONTROLLERS))}"
        )
