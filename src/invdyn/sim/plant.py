"""The simulated plant: the robot as the simulator runs it, which may differ from the controller's
model on purpose (an unmodelled payload, wrong masses, extra friction, torque limits, sensor
noise, control delay).

`Plant` holds these differences as plain numbers, validated when it is built, and
`plant_model` applies the ones that belong to the rigid-body tree to a `Model`, so that the
plant's exact dynamics are available to invdyn's algorithms too (for example
``invdyn.gravity(plant_model(model, plant), q)`` is the torque that holds the plant still).
`PlantOptions` are the differences as the commands take them (``--payload``, ``--mass-error``,
...), which `PlantOptions.plant` turns into a `Plant`, its errors naming the options.
Nothing here imports MuJoCo.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import check_count
from invdyn.configuration import random_configuration
from invdyn.control.computed_torque import effort_limits
from invdyn.errors import InputError, warn
from invdyn.io.mjcf import combine_inertias
from invdyn.kinematics import end_effector, point_jacobian
from invdyn.model import Model

Float = NDArray[np.float64]
Integrator = Literal["euler", "implicit", "implicitfast", "rk4"]

INTEGRATORS: tuple[str, ...] = ("euler", "implicit", "implicitfast", "rk4")


# times closer than this are the same, s
TIME_TOLERANCE = 1e-9
# m/s of the payload's point per unit joint velocity below which no joint moves it
PAYLOAD_LEVER = 1e-9


@dataclasses.dataclass(frozen=True)
class Push:
    """A force on a body of the plant for a while: a push.

    Attributes:
      force: (3,) force in newtons, world axes, applied at the body's centre of mass.
      start: when it starts, seconds, >= 0.
      duration: how long it lasts, seconds, > 0 (whole control periods: it acts in the
        periods that start within it).
      body: the body's name (`Model.body_name`); None for the root body (a floating base).
    """

    force: ArrayLike
    start: float
    duration: float
    body: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "force", _vector3("Push.force", self.force))
        object.__setattr__(self, "start", _number("Push.start", self.start, minimum=0.0))
        object.__setattr__(
            self, "duration", _number("Push.duration", self.duration, minimum=0.0, open=True)
        )
        if self.body is not None and not isinstance(self.body, str):
            raise InputError(f"Push.body must be a body name or None, got {self.body!r}")

    def acts_at(self, t: float) -> bool:
        """Whether the push acts in the control period that starts at `t` (to within 1e-9 s,
        so that a push of whole periods acts in that many)."""
        return self.start - TIME_TOLERANCE <= t < self.start + self.duration - TIME_TOLERANCE


@dataclasses.dataclass(frozen=True)
class Plant:
    """How the simulated robot differs from the controller's `Model`, and how it is simulated.

    Per-dof options take a scalar (every dof) or an (nv,) sequence; they are stored as a float
    or a tuple of floats, and their length is checked against the model when the plant is used.

    Attributes:
      timestep: physics time step in seconds, > 0.
      payload: mass in kg of a point load rigidly attached at `payload_frame`, >= 0.
      payload_frame: name of a frame (`Model.frame_name`) or of a body (`Model.body_name`)
        that carries the payload; None for the end effector of the longest arm
        (`invdyn.kinematics.end_effector`).
      payload_offset: (3,) position of the payload in `payload_frame`, in metres.
      mass_scale: factor on every link's mass and rotational inertia (centres of mass stay),
        > 0; the payload and the joint armature are not scaled.
      damping: (nv,) viscous friction added to the model's ``dof_damping``, N m s / rad, >= 0.
      friction: (nv,) Coulomb friction (MuJoCo ``frictionloss``) added to the model's
        ``dof_friction``, N m, >= 0.
      torque_limit: (nv,) bound on the magnitude of the applied joint forces, > 0 or inf;
        None takes the model's ``dof_effort_limit`` (no bound where that is infinite). A
        coordinate that no actuator drives (``Model.dof_actuated``) gets no force either way.
      sensor_noise: standard deviation of the Gaussian noise on the measured ``q`` (rad, or m
        for lengths; drawn in the tangent space, so quaternions stay unit) and on the measured
        ``v`` (rad/s or m/s): one number for both or a pair ``(q_std, v_std)``, stored as the
        pair.
      delay: control delay, in control steps: the command computed at step k acts at step
        ``k + delay``; zero torque acts before the first command arrives.
      seed: seed of the sensor noise; None for a fresh one on every rollout.
      joint_limits: enforce the model's finite position limits (MuJoCo's soft limit
        constraints); False leaves every joint free.
      integrator: MuJoCo's integrator: ``"euler"`` (semi-implicit), ``"implicit"``,
        ``"implicitfast"`` or ``"rk4"``.
      feet: contact spheres: each a frame name (`Model.frame_name`), the sphere centred at the
        frame origin, or a pair ``(frame name, (x, y, z))``, centred at that point of the
        frame (the corners of a sole, say); with any, the plant stands on a ground plane at
        height 0 and its feet touch it (no other contacts). Empty: no ground, no contacts.
        Stored as pairs.
      foot_radius: radius of the feet's spheres in metres, > 0.
      ground_friction: friction coefficient between the feet and the ground, > 0.
      pushes: external forces on bodies for a while (`Push`).
    """

    timestep: float = 1e-3
    payload: float = 0.0
    payload_frame: str | None = None
    payload_offset: ArrayLike = (0.0, 0.0, 0.0)
    mass_scale: float = 1.0
    damping: ArrayLike = 0.0
    friction: ArrayLike = 0.0
    torque_limit: ArrayLike | None = None
    sensor_noise: ArrayLike = 0.0
    delay: int = 0
    seed: int | None = 0
    joint_limits: bool = True
    integrator: Integrator = "implicitfast"
    feet: tuple[Any, ...] = ()
    foot_radius: float = 0.02
    ground_friction: float = 1.0
    pushes: tuple[Push, ...] = ()

    def __post_init__(self) -> None:
        set_field = object.__setattr__
        if not all(isinstance(p, Push) for p in self.pushes):
            raise InputError(f"Plant.pushes must be a sequence of Push, got {self.pushes!r}")
        set_field(self, "pushes", tuple(self.pushes))
        if isinstance(self.feet, str):
            raise InputError(f"Plant.feet must be a sequence of feet, got {self.feet!r}")
        set_field(self, "feet", tuple(_foot(foot) for foot in self.feet))
        for name in ("foot_radius", "ground_friction"):
            set_field(self, name, _number(name, getattr(self, name), minimum=0.0, open=True))
        set_field(self, "timestep", _number("timestep", self.timestep, minimum=0.0, open=True))
        set_field(self, "payload", _number("payload", self.payload, minimum=0.0))
        if self.payload_frame is not None and not isinstance(self.payload_frame, str):
            raise InputError(
                "Plant.payload_frame must be a frame or body name (str) or None, got "
                f"{type(self.payload_frame).__name__}"
            )
        set_field(self, "payload_offset", _vector3("payload_offset", self.payload_offset))
        set_field(
            self, "mass_scale", _number("mass_scale", self.mass_scale, minimum=0.0, open=True)
        )
        set_field(self, "damping", _per_dof("damping", self.damping))
        set_field(self, "friction", _per_dof("friction", self.friction))
        if self.torque_limit is not None:
            limit = _per_dof("torque_limit", self.torque_limit, allow_inf=True)
            if np.any(np.asarray(limit) <= 0.0):
                raise InputError("Plant.torque_limit must be > 0 (or inf) for every dof")
            set_field(self, "torque_limit", limit)
        set_field(self, "sensor_noise", _noise(self.sensor_noise))
        set_field(self, "delay", check_count("Plant.delay", self.delay, minimum=0))
        if self.seed is not None:
            set_field(self, "seed", check_count("Plant.seed", self.seed, minimum=0))
        if not isinstance(self.joint_limits, (bool, np.bool_)):
            raise InputError(
                f"Plant.joint_limits must be True or False, got {type(self.joint_limits).__name__}"
            )
        set_field(self, "joint_limits", bool(self.joint_limits))
        if self.integrator not in INTEGRATORS:
            raise InputError(
                f"Plant.integrator must be one of {', '.join(INTEGRATORS)}, got {self.integrator!r}"
            )


# the options of a plant that a fixed-base robot's simulation reads (no feet, no pushes)
_RECORDED = (
    "timestep",
    "integrator",
    "payload",
    "payload_frame",
    "payload_offset",
    "mass_scale",
    "damping",
    "friction",
    "torque_limit",
    "sensor_noise",
    "delay",
    "seed",
    "joint_limits",
)


@dataclasses.dataclass(frozen=True)
class PlantOptions:
    """How the simulated plant differs from the robot's model, as the commands take it.

    Attributes:
      payload: kg of an unmodelled point mass at the origin of `payload_frame` (``--payload``).
      payload_frame: the frame or body that carries it; None for the model's end effector
        (`invdyn.kinematics.end_effector`) (``--payload-frame``).
      mass_error: the plant's link masses and inertias are (1 + mass_error) times the
        model's, > -1 (``--mass-error``).
      damping: unmodelled viscous friction on every joint, N m s/rad (``--damping``).
      friction: unmodelled Coulomb friction on every joint, N m (``--friction``).
      sensor_noise: standard deviation of the noise on measured positions and velocities
        (``--sensor-noise``).
      timestep: MuJoCo's physics time step, s; None for `Plant`'s (``--timestep``).
    """

    payload: float = 0.0
    payload_frame: str | None = None
    mass_error: float = 0.0
    damping: float = 0.0
    friction: float = 0.0
    sensor_noise: float = 0.0
    timestep: float | None = None

    def given(self) -> tuple[str, ...]:
        """The names of the options set (not None, 0 or empty), in field order."""
        return tuple(field.name for field in dataclasses.fields(self) if getattr(self, field.name))

    def plant(self, model: Model) -> Plant:
        """The `Plant` of these options for `model`, warning of a payload that no joint
        moves (`warn_of_a_payload_that_cannot_move`).

        Raises:
          InputError: a payload frame without a payload, or an option out of range, named
            as its command-line option.
        """
        if self.payload_frame is not None and not self.payload:
            raise InputError("--payload-frame places the --payload: give a mass too")
        plant = options_plant(
            payload=self.payload,
            payload_frame=self.payload_frame or (end_effector(model) if self.payload else None),
            mass_scale=mass_scale(self.mass_error),
            damping=self.damping,
            friction=self.friction,
            sensor_noise=self.sensor_noise,
            **({} if self.timestep is None else {"timestep": self.timestep}),
        )
        if plant.payload:
            warn_of_a_payload_that_cannot_move(model, plant, "--payload-frame")
        return plant


def mass_scale(mass_error: float) -> float:
    """`Plant.mass_scale` for a mass error (``--mass-error``), checked to be above -1."""
    if not (math.isfinite(mass_error) and mass_error > -1.0):
        raise InputError(f"--mass-error must be a number above -1, got {mass_error}")
    return 1.0 + mass_error


def options_plant(base: Plant | None = None, /, **fields: Any) -> Plant:
    """``Plant(**fields)``, or `base` with `fields` replaced, its errors naming the
    command-line option (``--payload``) rather than the field (``Plant.payload``)."""
    try:
        return Plant(**fields) if base is None else dataclasses.replace(base, **fields)
    except InputError as error:
        message = str(error)
        for field in fields:
            message = message.replace(f"Plant.{field} ", f"--{field.replace('_', '-')} ")
        raise InputError(message) from None


def warn_of_a_payload_that_cannot_move(model: Model, plant: Plant, placed_by: str) -> None:
    """A warning when the payload's point lies on the axes of every joint that moves it (at
    random configurations): a point mass there takes no force from them, nor gives any; the
    advice names what places it elsewhere (`placed_by`, an option)."""
    body, point = payload_point(model, plant)
    for q in random_configuration(model, rng=0, shape=3):
        if np.abs(point_jacobian(model, q, body, point)[3:]).max() > PAYLOAD_LEVER:
            return
    warn(
        f"the payload at {plant.payload_frame} lies on the axes of the joints that move it: "
        f"it changes no joint's torque; {placed_by} places it off them (frames of "
        f"{model.name}: {', '.join(model.frame_name)})"
    )


def plant_record(plant: Plant) -> dict[str, Any]:
    """The options of `plant` that a fixed-base robot's simulation reads (all but its feet and
    pushes), as JSON data: numbers, lists, text, None; an infinite torque limit as ``"inf"``.
    `recorded_plant` rebuilds the plant."""
    record = {name: getattr(plant, name) for name in _RECORDED}
    limit = record["torque_limit"]
    if isinstance(limit, tuple):
        record["torque_limit"] = [_finite_or_text(x) for x in limit]
    elif limit is not None:
        record["torque_limit"] = _finite_or_text(limit)
    return {name: list(v) if isinstance(v, tuple) else v for name, v in record.items()}


def recorded_plant(record: object) -> Plant:
    """The `Plant` of a `plant_record`; `InputError` for what is not one (an unknown or a
    bad option, named)."""
    if not isinstance(record, dict):
        raise InputError(f"a plant record must be an object, got {record!r}")
    unknown = sorted(set(record) - set(_RECORDED))
    if unknown:
        raise InputError(f"a plant record has unknown options {', '.join(unknown)}")
    options = dict(record)
    limit = options.get("torque_limit")
    if isinstance(limit, list):
        options["torque_limit"] = [math.inf if x == "inf" else x for x in limit]
    elif limit == "inf":
        options["torque_limit"] = math.inf
    return Plant(**options)


def _finite_or_text(x: float) -> float | str:
    return "inf" if math.isinf(x) else x


def plant_model(model: Model, plant: Plant) -> Model:
    """The `Model` of the simulated plant: masses scaled, payload attached, friction added.

    Link masses and inertias are multiplied by ``plant.mass_scale``; then the payload, a point
    mass, is merged into the body of ``plant.payload_frame`` (parallel axis theorem); the
    plant's damping and friction are added to the model's. Armature, limits, joints and frames
    stay as they are.

    Args:
      model: the controller's robot model.
      plant: the plant.

    Returns:
      The validated model of the plant (`model` itself when the plant changes nothing in it).

    Raises:
      InputError: a per-dof option has the wrong length, or the payload frame is unknown or
        fixed to the world.
    """
    damping = dof_values(model, "damping", plant.damping)
    friction = dof_values(model, "friction", plant.friction)
    if (
        plant.mass_scale == 1.0
        and plant.payload == 0.0
        and not damping.any()
        and not friction.any()
    ):
        return model
    mass = model.body_mass * plant.mass_scale
    com = np.array(model.body_com)
    inertia = model.body_inertia * plant.mass_scale
    if plant.payload > 0.0:
        body, point = payload_point(model, plant)
        mass[body], com[body], inertia[body] = combine_inertias(
            mass[body], com[body], inertia[body], plant.payload, point, np.zeros((3, 3))
        )
    return model.replace(
        body_mass=mass,
        body_com=com,
        body_inertia=inertia,
        dof_damping=model.dof_damping + damping,
        dof_friction=model.dof_friction + friction,
    )


def payload_point(model: Model, plant: Plant) -> tuple[int, Float]:
    """The body that carries the payload and the payload's position in that body's frame.

    Args:
      model: the robot.
      plant: the plant; its ``payload_frame`` names a frame or a body of `model`, None for its
        end effector (`invdyn.kinematics.end_effector`).

    Returns:
      The body index and the (3,) position of the payload in the body frame.

    Raises:
      InputError: the frame is unknown, fixed to the world, or the model has no body.
    """
    offset = np.asarray(plant.payload_offset, dtype=np.float64)
    name = plant.payload_frame
    if name is None:
        return model.body_name.index(end_effector(model)), offset
    if name in model.frame_name:
        k = model.frame_name.index(name)
        body = int(model.frame_body[k])
        if body < 0:
            raise InputError(
                f"Plant.payload_frame (--payload-frame) {name!r} is fixed to the world in "
                f"{model.name!r}; a payload needs a frame on a moving body"
            )
        return body, model.frame_pos[k] + model.frame_rot[k] @ offset
    if name in model.body_name:
        return model.body_name.index(name), offset
    close = difflib.get_close_matches(name, [*model.frame_name, *model.body_name], n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise InputError(
        f"Plant.payload_frame (--payload-frame) {name!r} is neither a frame nor a body of "
        f"{model.name!r}{hint}"
    )


def dof_values(model: Model, name: str, value: ArrayLike) -> Float:
    """(nv,) values of a per-dof plant option, a scalar broadcast to every dof.

    Args:
      model: the robot.
      name: the option's name, for the message.
      value: a scalar or an (nv,) tuple, as `Plant` stores it.

    Returns:
      (nv,) float array.

    Raises:
      InputError: `value` is a sequence whose length is not ``model.nv``.
    """
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        return np.full(model.nv, float(array))
    if array.shape != (model.nv,):
        raise InputError(
            f"Plant.{name} has shape {array.shape}, expected () or (nv,) = ({model.nv},) "
            f"for {model.name!r}"
        )
    return array


def torque_limits(model: Model, plant: Plant) -> Float:
    """(nv,) bound on the applied joint forces: the plant's, else the model's effort limits,
    and zero on the coordinates that no actuator drives (``Model.dof_actuated``).

    Args:
      model: the robot.
      plant: the plant.

    Returns:
      (nv,) non-negative bounds, inf where unbounded (a model's effort limit of zero or below
      counts as unknown: `invdyn.control.computed_torque.effort_limits`), zero where passive.
    """
    if plant.torque_limit is None:
        limit = effort_limits(model)
    else:
        limit = dof_values(model, "torque_limit", plant.torque_limit)
    return np.where(model.dof_actuated, limit, 0.0)


# validation of the fields, each error naming the field and what it expects


def _number(name: str, value: object, *, minimum: float, open: bool = False) -> float:
    """`value` as a finite float above `minimum` (strictly if `open`), or `InputError`."""
    bound = f"{'>' if open else '>='} {minimum:g}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise InputError(f"Plant.{name} must be a number {bound}, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number) or number < minimum or (open and number == minimum):
        raise InputError(f"Plant.{name} must be a finite number {bound}, got {number}")
    return number


def _array(name: str, value: object, expected: str) -> Float:
    """`value` as a float array, or `InputError` naming the field and the `expected` shape."""
    if isinstance(value, (str, bytes)):
        raise InputError(f"Plant.{name} must be {expected}, got a string")
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"Plant.{name} must be {expected}, got {value!r}") from None


def _foot(foot: object) -> tuple[str, tuple[float, float, float]]:
    """A foot of `Plant.feet` as ``(frame name, (x, y, z))``, or `InputError`."""
    if isinstance(foot, str):
        return foot, (0.0, 0.0, 0.0)
    if isinstance(foot, tuple) and len(foot) == 2 and isinstance(foot[0], str):
        return foot[0], _vector3(f"Plant.feet {foot[0]!r} point", foot[1])
    raise InputError(f"Plant.feet: a foot is a frame name or (name, (x, y, z)), got {foot!r}")


def _vector3(name: str, value: object) -> tuple[float, float, float]:
    """`value` as a finite (3,) tuple, or `InputError`."""
    array = _array(name, value, "a (3,) vector")
    if array.shape != (3,):
        raise InputError(f"Plant.{name} has shape {array.shape}, expected (3,)")
    if not np.all(np.isfinite(array)):
        raise InputError(f"Plant.{name} holds a non-finite value: {array.tolist()}")
    return (float(array[0]), float(array[1]), float(array[2]))


def _per_dof(name: str, value: object, *, allow_inf: bool = False) -> float | tuple[float, ...]:
    """A scalar or (nv,) option as a float or a tuple of floats, each >= 0, or `InputError`."""
    array = _array(name, value, "a scalar or an (nv,) array")
    if array.ndim > 1:
        raise InputError(f"Plant.{name} has shape {array.shape}, expected () or (nv,)")
    if np.any(np.isnan(array)) or (not allow_inf and not np.all(np.isfinite(array))):
        raise InputError(f"Plant.{name} holds a non-finite value")
    if np.any(array < 0.0):
        raise InputError(f"Plant.{name} must be >= 0, got {array.tolist()}")
    return float(array) if array.ndim == 0 else tuple(float(x) for x in array)


def _noise(value: object) -> tuple[float, float]:
    """The sensor noise as ``(q_std, v_std)``, each finite and >= 0, or `InputError`."""
    array = _array("sensor_noise", value, "a scalar or a pair (q_std, v_std)")
    if array.shape not in ((), (2,)):
        raise InputError(
            f"Plant.sensor_noise has shape {array.shape}, expected () or (2,) for (q_std, v_std)"
        )
    if not np.all(np.isfinite(array)) or np.any(array < 0.0):
        raise InputError(f"Plant.sensor_noise must be finite and >= 0, got {array.tolist()}")
    pair = np.broadcast_to(array, (2,))
    return (float(pair[0]), float(pair[1]))
