"""Closed-loop rollouts in MuJoCo: a controller in invdyn's layout drives the simulated plant.

At each control step k (time ``t_k = k / control_rate``) the controller sees the measured state
(the true state plus the plant's sensor noise, in invdyn's ``q``/``v`` layout) and returns joint
forces ``tau_command[k]``. The force that acts during ``[t_k, t_k+1)`` is the command of step
``k - delay`` (zero before the first one arrives), saturated at the plant's torque limit; it is
held for the whole control period, a whole number of physics steps, as MuJoCo's generalised
applied force ``qfrc_applied`` (a free joint's linear part is turned from the base frame into
the world frame at every physics step, as MuJoCo's free-joint velocity is in the world frame).
A controller that raises `StopRollout` ends the run there (the robot fell, say).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from tqdm.auto import tqdm

from invdyn._arrays import as_finite_array, check_positive
from invdyn._files import atomic_open
from invdyn.configuration import integrate
from invdyn.errors import InputError, InvdynError
from invdyn.io.mujoco_state import mujoco_index, mujoco_state_reader, to_mujoco_state
from invdyn.model import JointType, Model
from invdyn.sim.mujoco_model import (
    build_mujoco,
    checked_plant,
    dof_addresses,
    import_mujoco,
    prepare_mujoco,
)
from invdyn.sim.plant import Plant, Push, torque_limits
from invdyn.spatial import quaternion_to_matrix

if TYPE_CHECKING:
    import mujoco

Float = NDArray[np.float64]
Controller = Callable[[float, Float, Float], ArrayLike]

# the control period must be this close (relative) to a whole number of physics steps
_PERIOD_TOLERANCE = 1e-9


class StopRollout(Exception):
    """Raised by a controller to end its rollout early: `rollout` returns the samples before the
    control step that raised it."""


@dataclasses.dataclass(frozen=True, eq=False)
class Rollout:
    """A simulated trajectory, sampled at the control rate.

    Row k holds the true state at ``time[k]`` and the forces that act from then on; the last
    row's forces were computed but not simulated.

    Attributes:
      time: (T,) sample times in seconds, ``k / control_rate``.
      q: (T, nq) true joint positions (without sensor noise).
      v: (T, nv) true joint velocities (without sensor noise).
      tau_command: (T, nv) joint forces returned by the controller.
      tau_applied: (T, nv) joint forces applied to the plant, after delay and saturation.
    """

    time: Float
    q: Float
    v: Float
    tau_command: Float
    tau_applied: Float

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            array = np.array(getattr(self, field.name), dtype=np.float64)
            array.setflags(write=False)
            object.__setattr__(self, field.name, array)
        count = self.time.shape
        if len(count) != 1:
            raise InputError(f"Rollout.time has shape {count}, expected (T,)")
        for name in ("q", "v", "tau_command", "tau_applied"):
            shape = getattr(self, name).shape
            if len(shape) != 2 or shape[0] != count[0]:
                raise InputError(f"Rollout.{name} has shape {shape}, expected ({count[0]}, n)")
        if self.tau_command.shape != self.v.shape or self.tau_applied.shape != self.v.shape:
            raise InputError(
                f"Rollout forces have shapes {self.tau_command.shape} and "
                f"{self.tau_applied.shape}, expected {self.v.shape} as v"
            )

    def __len__(self) -> int:
        return int(self.time.shape[0])


def rollout(
    model: Model,
    controller: Controller,
    *,
    q0: ArrayLike,
    v0: ArrayLike | None = None,
    duration: float,
    control_rate: float = 1000.0,
    plant: Plant | None = None,
    mj_model: mujoco.MjModel | None = None,
    progress: bool = False,
) -> Rollout:
    """Simulate `model` as the plant `plant` in MuJoCo, driven by `controller`.

    See the module docstring for the timing of measurements, delay and saturation.

    Args:
      model: the robot, in whose layout the controller works.
      controller: ``controller(t, q, v) -> tau`` with the measured (nq,) ``q`` and (nv,) ``v``
        at time ``t``, returning (nv,) joint forces; a free joint's six entries are a force and
        a torque on the base, in the base frame (zero for an unactuated base).
      q0: (nq,) initial joint positions.
      v0: (nv,) initial joint velocities; None for rest.
      duration: simulated time in seconds, > 0, rounded up to whole control periods.
      control_rate: controller calls per second; ``1 / control_rate`` must be a whole number
        of ``plant.timestep``.
      plant: the simulated plant; None for `Plant()`.
      mj_model: a compiled MuJoCo model of the robot (from an MJCF file, say) to simulate
        instead of building one from `model`; it is copied and set up by
        `invdyn.sim.prepare_mujoco`, which disables its actuators.
      progress: show a progress bar (tqdm).

    Returns:
      The trajectory, ``ceil(duration * control_rate) + 1`` samples from ``t = 0``; those before
      the control step whose controller call raised `StopRollout`, if one did.

    Raises:
      InputError: a bad argument, a control period that is not a whole number of physics
        steps or longer than the duration, or a controller output of the wrong shape or not
        finite (the message names the control step).
      InvdynError: the simulation diverged (MuJoCo's warnings, or a non-finite state).
    """
    mujoco = import_mujoco()
    plant = checked_plant(plant)
    if not callable(controller):
        raise InputError(f"controller must be callable, got {type(controller).__name__}")
    rate = check_positive("control_rate", control_rate)
    period = 1.0 / rate
    substeps = _physics_steps(period, plant.timestep)
    duration = check_positive("duration", duration)
    if period > duration * (1.0 + _PERIOD_TOLERANCE):
        # one period would be one long physics call that nothing can interrupt
        raise InputError(
            f"the duration (--duration) {duration:g} s is shorter than one control period, "
            f"1 / control_rate (--rate) = {period:g} s"
        )
    nsteps = math.ceil(duration * rate - _PERIOD_TOLERANCE)
    q_start = _state("q0", q0, model.nq)
    v_start = np.zeros(model.nv) if v0 is None else _state("v0", v0, model.nv)

    # the plant in mujoco, and where invdyn's forces go in it
    if mj_model is None:
        sim = build_mujoco(model, plant=plant)
    else:
        sim = prepare_mujoco(model, mj_model, plant=plant)
    data = mujoco.MjData(sim)
    dofs = dof_addresses(model, sim)
    free = _free_joints(model, sim)
    limit = torque_limits(model, plant)
    pushed = [_pushed_body(model, sim, push) for push in plant.pushes]
    read_state = mujoco_state_reader(model, sim)
    qpos, qvel = to_mujoco_state(model, sim, q_start, v_start)
    data.qpos[:], data.qvel[:] = qpos, qvel
    mujoco.mj_forward(sim, data)

    count = nsteps + 1
    qpos_log = np.empty((count, sim.nq))
    qvel_log = np.empty((count, sim.nv))
    tau_command = np.empty((count, model.nv))
    tau_applied = np.empty((count, model.nv))
    rng = np.random.default_rng(plant.seed)
    watched = [
        mujoco.mjtWarning.mjWARN_BADQACC,
        mujoco.mjtWarning.mjWARN_BADQPOS,
        mujoco.mjtWarning.mjWARN_BADQVEL,
    ]

    with tqdm(total=nsteps, disable=not progress, desc=f"rollout {model.name}", unit="step") as bar:
        for k in range(count):
            t = k * period
            qpos_log[k], qvel_log[k] = data.qpos, data.qvel
            # measure, then ask the controller
            q, v = _measure(model, read_state(data.qpos, data.qvel), plant, rng)
            try:
                tau_command[k] = _command(controller, t, q, v, k, model.nv)
            except StopRollout:
                count = k
                break
            # delay, then saturation
            delayed = tau_command[k - plant.delay] if k >= plant.delay else np.zeros(model.nv)
            tau_applied[k] = np.clip(delayed, -limit, limit)
            if k == nsteps:
                break
            # hold the force, and any push, for one control period
            data.qfrc_applied[:] = 0.0
            data.xfrc_applied[:] = 0.0
            for push, body in zip(plant.pushes, pushed, strict=True):
                if push.acts_at(t):
                    data.xfrc_applied[body, :3] += push.force
            if free:
                for _ in range(substeps):
                    _apply(data, tau_applied[k], dofs, free)
                    mujoco.mj_step(sim, data)
            else:
                data.qfrc_applied[dofs] = tau_applied[k]
                mujoco.mj_step(sim, data, nstep=substeps)
            _check_diverged(data, watched, t + period, k)
            bar.update(1)

    q_true, v_true = read_state(qpos_log[:count], qvel_log[:count])
    return Rollout(
        time=np.arange(count, dtype=np.float64) * period,
        q=q_true,
        v=v_true,
        tau_command=tau_command[:count],
        tau_applied=tau_applied[:count],
    )


def _pushed_body(model: Model, sim: Any, push: Push) -> int:
    """The MuJoCo body id that `push` acts on, or `InputError`."""
    name = model.body_name[0] if push.body is None else push.body
    if name not in model.body_name:
        raise InputError(f"Push.body: {model.name} has no body named {name!r}")
    joint = mujoco_index(model, sim)[model.body_name.index(name)]
    return int(sim.jnt_bodyid[joint])


def save_csv(rollout: Rollout, model: Model, path: str | os.PathLike[str]) -> Path:
    """Write a rollout to a CSV file atomically: a temporary file, then ``os.replace``.

    The header names each column: ``time``, then ``q.<joint>``, ``v.<joint>``,
    ``tau_command.<joint>`` and ``tau_applied.<joint>`` in invdyn's order, with a coordinate
    suffix for joints of several coordinates (``q.<joint>.cos`` / ``.sin`` for continuous
    joints, ``.qx .qy .qz .qw`` for quaternions, ``.x .y .z`` for positions, ``.vx .vy .vz`` and
    ``.wx .wy .wz`` for velocities, ``.fx .fy .fz`` and ``.tx .ty .tz`` for forces). Numbers
    are written with 17 significant digits, so ``numpy.loadtxt(path, delimiter=",",
    skiprows=1)`` reads them back exactly.

    Args:
      rollout: the trajectory.
      model: the robot it belongs to, for the joint names.
      path: the file to write; its directory is created if missing.

    Returns:
      The path written.

    Raises:
      InputError: the rollout's sizes are not the model's.
    """
    if not isinstance(rollout, Rollout):
        raise InputError(f"rollout must be an invdyn.sim.Rollout, got {type(rollout).__name__}")
    if rollout.q.shape[1] != model.nq or rollout.v.shape[1] != model.nv:
        raise InputError(
            f"rollout has nq {rollout.q.shape[1]} and nv {rollout.v.shape[1]}, but "
            f"{model.name!r} has nq {model.nq} and nv {model.nv}"
        )
    path = Path(path)
    table = np.column_stack(
        [rollout.time, rollout.q, rollout.v, rollout.tau_command, rollout.tau_applied]
    )
    with atomic_open(path) as stream:
        csv.writer(stream, lineterminator="\n").writerow(csv_columns(model))
        np.savetxt(stream, table, delimiter=",", fmt="%.17g")
    return path


def csv_columns(model: Model) -> list[str]:
    """Column names of `save_csv`: time, then q, v, tau_command and tau_applied by joint."""
    columns = ["time"]
    for prefix, field in (
        ("q", "q_names"),
        ("v", "v_names"),
        ("tau_command", "force_names"),
        ("tau_applied", "force_names"),
    ):
        for joint, spec in zip(model.jnt_name, model.jnt_spec, strict=True):
            names = getattr(spec, field)
            columns += [f"{prefix}.{joint}.{c}" for c in names] if names else [f"{prefix}.{joint}"]
    return columns


# helpers


def _physics_steps(period: float, timestep: float) -> int:
    """Number of physics steps in a control period, or `InputError` if not a whole number."""
    steps = round(period / timestep)
    if steps < 1 or abs(steps * timestep - period) > _PERIOD_TOLERANCE * period:
        raise InputError(
            f"the control period 1 / control_rate (--rate) = {period:g} s is not a whole "
            f"multiple of the physics step Plant.timestep (--timestep) = {timestep:g} s"
        )
    return steps


def _measure(
    model: Model, true: tuple[Float, Float], plant: Plant, rng: np.random.Generator
) -> tuple[Float, Float]:
    """(nq,) and (nv,) measured state: the `true` one with the plant's sensor noise.

    Position noise is drawn in the tangent space (nv values) and integrated, so that continuous
    joints and quaternions stay on their manifolds.
    """
    q, v = true
    q_std, v_std = (float(s) for s in np.asarray(plant.sensor_noise).reshape(2))
    if q_std > 0.0:
        q = integrate(model, q, rng.normal(0.0, q_std, model.nv))
    if v_std > 0.0:
        v = v + rng.normal(0.0, v_std, model.nv)
    return q, v


def _state(name: str, value: ArrayLike, size: int) -> Float:
    """A single finite (size,) state, or `InputError`."""
    array = as_finite_array(name, value, size)
    if array.shape != (size,):
        raise InputError(f"{name} has shape {array.shape}, expected ({size},)")
    return array


def _command(controller: Controller, t: float, q: Float, v: Float, k: int, nv: int) -> Float:
    """The controller's (nv,) output at control step `k`, or `InputError` naming the step."""
    where = f"at control step {k} (t = {t:.6g} s)"
    output = controller(t, q, v)
    try:
        tau = np.asarray(output, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(
            f"controller returned {type(output).__name__} {where}, expected an ({nv},) array"
        ) from None
    if tau.shape != (nv,):
        raise InputError(f"controller returned shape {tau.shape} {where}, expected ({nv},)")
    if not np.all(np.isfinite(tau)):
        bad = int(np.flatnonzero(~np.isfinite(tau))[0])
        raise InputError(f"controller returned a non-finite force {where}: tau[{bad}] = {tau[bad]}")
    return tau


def _free_joints(model: Model, mj_model: Any) -> list[tuple[int, int, int]]:
    """(first index in v, MuJoCo qpos address, MuJoCo dof address) of each free joint."""
    return [
        (int(model.jnt_vadr[i]), int(mj_model.jnt_qposadr[j]), int(mj_model.jnt_dofadr[j]))
        for i, j in enumerate(mujoco_index(model, mj_model))
        if model.jnt_type[i] == JointType.FREE
    ]


def _apply(
    data: Any, tau: Float, dofs: NDArray[np.int64], free: list[tuple[int, int, int]]
) -> None:
    """Write invdyn's forces `tau` into ``qfrc_applied``, free-joint forces in the world frame."""
    data.qfrc_applied[dofs] = tau
    for vs, ps, ds in free:
        # the base's force from its own frame into the world frame: R f
        quat = np.roll(data.qpos[ps + 3 : ps + 7], -1)
        rotation = quaternion_to_matrix(quat / np.linalg.norm(quat))
        data.qfrc_applied[ds : ds + 3] = rotation @ tau[vs : vs + 3]


def _check_diverged(data: Any, watched: list[Any], t: float, k: int) -> None:
    """`InvdynError` if MuJoCo warned about the state or acceleration, or it is not finite."""
    warned = [w for w in watched if data.warning[w].number > 0]
    finite = np.all(np.isfinite(data.qpos)) and np.all(np.isfinite(data.qvel))
    if warned or not finite:
        reason = ", ".join(str(w.name) for w in warned) or "a non-finite state"
        raise InvdynError(
            f"the simulation diverged during control step {k} (before t = {t:.6g} s): MuJoCo "
            f"reports {reason}; reduce Plant.timestep or the controller's forces"
        )
