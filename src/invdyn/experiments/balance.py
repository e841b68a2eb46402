"""Balance scenarios in MuJoCo: a legged robot on its feet, under whole-body control.

The robot starts in its SRDF's standing configuration (`invdyn.io.srdf`), or another one that
`Scenario.pose` names, with its feet on the ground: a point foot (a frame named ``*foot``, or
one of `Scenario.feet`) stands on its origin, a flat foot (named ``*sole`` or ``*sole_link``, or
one of `Scenario.soles`) on the four corners of `Scenario.sole`; built-in robots whose
descriptions name neither have them in `STANCES`. Each point is a contact of
`invdyn.control.wbc` and a sphere in the simulation, and the `WholeBodyController` tracks a
centre of mass reference:

* ``stand``: hold the starting centre of mass;
* ``sway``: side to side, ``amplitude`` either way at ``frequency``, the swing faded in over
  its first period so that it starts from rest;
* ``squat``: down by twice ``amplitude`` (the sway's range) and back up, at ``frequency``;
* ``push``: stand, and take a push of ``push`` newtons forwards on the base for
  ``push_duration`` seconds at ``push_start``;
* ``lift``: move the centre of mass over the other feet (``shift`` seconds), then lift the first
  foot by ``lift_height`` (``shift`` seconds more) and keep it up, on the others alone.

`run_balance` returns the run with the controller's solution at every step, and the measures
the tests and the ``invdyn wbc`` command report: centre of mass error, friction cone and torque
margins, and whether the robot fell. A robot that loses balance (its capture point leaves the
support of its feet, or its centre of mass sinks) ends the run there, whether its QP still has
a solution or not.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import check_positive, check_real, repeated
from invdyn.centroidal import center_of_mass, center_of_mass_jacobian
from invdyn.configuration import neutral, normalize
from invdyn.control.wbc import (
    CenterOfMassTask,
    FramePositionTask,
    OrientationTask,
    PointContact,
    PostureTask,
    QPError,
    Step,
    WholeBodyController,
)
from invdyn.dynamics import singular_joints
from invdyn.errors import InputError
from invdyn.io import is_mjcf
from invdyn.io.mujoco_state import keyframes
from invdyn.io.robots import is_installed, robot_path
from invdyn.io.srdf import robot_configurations
from invdyn.kinematics import frame_placement, frame_point
from invdyn.model import Model
from invdyn.spatial import quat_exp, quat_multiply

Float = NDArray[np.float64]
SCENARIOS = ("stand", "sway", "squat", "push", "lift")
# the centre of mass this far below its reference means the robot fell, m
FALL = 0.05
# flat feet further than this from level, once the base is turned to level them, rad (1 degree)
LEVEL_TOLERANCE = math.radians(1.0)
# the SRDF states or MJCF keyframes a legged robot starts from, in order of preference
STANDING = (
    "standing",
    "half_sitting",
    "standing_with_arm_home",
    "standing_with_arm_up",
    "stand",
    "home",
)
# the pose that `Scenario.pose` names for the model's neutral configuration (`neutral`)
NEUTRAL = "neutral"
# the corners of a flat foot in its frame, (x_min, x_max, y_min, y_max, z), m: TALOS's soles
DEFAULT_SOLE = (-0.1, 0.1, -0.065, 0.065, 0.0)
# a contact point this far above the ground at the start does not stand on it, m
GROUND_TOLERANCE = 1e-3


@dataclasses.dataclass(frozen=True)
class Stance:
    """How a built-in robot stands where its description does not say: the `Scenario` fields
    of the same names, which `with_stance` fills in."""

    feet: tuple[str, ...] | None = None
    soles: tuple[str, ...] | None = None
    sole: tuple[float, float, float, float, float] | None = None
    pose: str | tuple[float, ...] | None = None


# the Unitree G1 on its ankle links, whose URDF contact spheres are its soles' corners, legs
# straight
_G1 = Stance(
    soles=("left_ankle_roll_link", "right_ankle_roll_link"),
    sole=(-0.05, 0.12, -0.03, 0.03, -0.03),
    pose=NEUTRAL,
)
STANCES = {
    "g1": _G1,
    "g1_with_hands": _G1,
    # on the contact frames at the tips of its legs, which are straight
    "quadruped": Stance(
        feet=("FL_contact", "FR_contact", "BL_contact", "BR_contact"), pose=NEUTRAL
    ),
    # its SRDF has no state: knees bent (its neutral pose is outside their limits)
    "laikago": Stance(pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0) + (0.0, 0.6, -1.2) * 4),
}
"""The stances of the built-in robots (`invdyn.io.robots`) whose descriptions name no feet or
no standing state."""


@dataclasses.dataclass(frozen=True)
class Scenario:
    """What a balance run asks of the robot.

    Attributes:
      name: one of `SCENARIOS`.
      duration: simulated seconds, > 0.
      amplitude: centre of mass motion of ``sway`` (either way) and ``squat`` (half its
        depth), m, > 0.
      frequency: its frequency, Hz, > 0.
      push: force of the push, N, forwards along the world x axis.
      push_start: when the push starts, s, >= 0 and before the end of the run.
      push_duration: how long it lasts, s.
      friction: friction coefficient of the feet on the ground, > 0.
      foot_radius: radius of the simulated feet, m, > 0.
      lift_height: how high ``lift`` raises its foot, m, > 0.
      shift: seconds of each of ``lift``'s moves, > 0; the foot lifts after the first, before
        the end of the run.
      sole: ``(x_min, x_max, y_min, y_max, z)``, m: the corners of a flat foot in its frame,
        ``x_min < x_max``, ``y_min < y_max``; None for `DEFAULT_SOLE`. Only for a robot with
        flat feet.
      feet: frames of point feet; `soles`: frames of flat feet. None for both: those of the
        built-in robot's `STANCES` entry, else the frames named ``*foot`` and ``*sole`` (or
        ``*sole_link``; its body then has no ``*foot`` point); naming either names every foot
        (the other then None for none).
      pose: the configuration to stand in: the name of an SRDF state or MJCF keyframe, or
        `NEUTRAL` for the model's neutral one (unless its SRDF or keyframes name one so), or
        the (nq,) configuration itself (its base then placed by `standing`); None for the
        built-in robot's `STANCES` entry, else the first of `STANDING` that the robot has.
    """

    name: str = "stand"
    duration: float = 10.0
    amplitude: float = 0.02
    frequency: float = 0.5
    push: float = 50.0
    push_start: float = 1.0
    push_duration: float = 0.1
    friction: float = 0.8
    foot_radius: float = 0.02
    lift_height: float = 0.05
    shift: float = 1.5
    sole: tuple[float, float, float, float, float] | None = None
    feet: tuple[str, ...] | None = None
    soles: tuple[str, ...] | None = None
    pose: str | tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.name not in SCENARIOS:
            raise InputError(f"scenario must be one of {', '.join(SCENARIOS)}, got {self.name!r}")
        for name in (
            "duration",
            "amplitude",
            "frequency",
            "friction",
            "foot_radius",
            "lift_height",
            "shift",
        ):
            check_positive(f"Scenario.{name}", getattr(self, name))
        # stored as tuples: a frozen scenario holds no lists
        fields = {
            "sole": None if self.sole is None else _sole(self.sole),
            "feet": _frames("Scenario.feet", self.feet),
            "soles": _frames("Scenario.soles", self.soles),
            "pose": _pose(self.pose),
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)
        named = (*(self.feet or ()), *(self.soles or ()))
        twice = sorted(repeated(named))
        if twice:
            raise InputError(f"Scenario: feet named twice: {', '.join(twice)}")
        # the push, and the foot's lift, must come before the end
        events = {
            "push": check_real("Scenario.push_start", self.push_start, minimum=0.0),
            "lift": self.shift,
        }
        if self.name in events and self.duration <= events[self.name]:
            raise InputError(
                f"the {self.name} scenario: the run of {self.duration:g} s (--duration) ends "
                f"before the {self.name} at {events[self.name]:g} s"
            )

    def reference(self, start: Float) -> Any:
        """``t -> (c, c_dot, c_ddot)``: the centre of mass reference from `start` (3,), at
        rest there at t = 0."""
        motions = {"sway": ((0.0, 1.0, 0.0), _faded_in_sine), "squat": ((0.0, 0.0, -1.0), _dip)}
        # the other scenarios hold the start
        axis, wave = motions.get(self.name, ((0.0, 0.0, 0.0), _dip))
        direction = self.amplitude * np.array(axis)
        omega = 2.0 * math.pi * self.frequency

        def reference(t: float) -> tuple[Float, Float, Float]:
            x, rate, acceleration = wave(omega, t)
            return start + direction * x, direction * rate, direction * acceleration

        return reference


def _faded_in_sine(omega: float, t: float) -> tuple[float, float, float]:
    """``sin(omega t)`` times a quintic smoothstep from 0 to 1 over its first period, and its
    first two time derivatives: all three 0 at t = 0."""
    k = omega / (2.0 * math.pi)
    x = min(k * t, 1.0)
    fade = x**3 * (10.0 - 15.0 * x + 6.0 * x**2)
    fade_rate = 30.0 * x**2 * (1.0 - x) ** 2 * k
    fade_acceleration = 60.0 * x * (1.0 - x) * (1.0 - 2.0 * x) * k**2
    s, c = math.sin(omega * t), math.cos(omega * t)
    return (
        s * fade,
        omega * c * fade + s * fade_rate,
        -(omega**2) * s * fade + 2.0 * omega * c * fade_rate + s * fade_acceleration,
    )


def _dip(omega: float, t: float) -> tuple[float, float, float]:
    """``1 - cos(omega t)``, from rest at 0 to 2 and back each period, and its first two time
    derivatives."""
    s, c = math.sin(omega * t), math.cos(omega * t)
    return 1.0 - c, omega * s, omega**2 * c


@dataclasses.dataclass(frozen=True)
class BalanceRun:
    """A balance run and its measures.

    Attributes:
      scenario: what was asked.
      contacts: the contact points of the feet.
      time: (T,) control step times, s.
      q: (T, nq) measured joint positions.
      com: (T, 3) centre of mass.
      com_reference: (T, 3) its reference.
      steps: the controller's solution at every step (`invdyn.control.wbc.Step`).
      torque_limit: (nv - 6,) the joints' torque bounds.
      joints: (nv - 6,) the names of the coordinates they bound (`Model.dof_names` past the
        floating base's).
      fell_at: when the robot lost balance and the run stopped, s (its QP had no solution
        then); None when it did not.
      unsolved: why the run stopped while the robot still stood: the `QPError` of the step
        whose QP had no solution (it says when); None when every step's was solved.
    """

    scenario: Scenario
    contacts: tuple[PointContact, ...]
    time: Float
    q: Float
    com: Float
    com_reference: Float
    steps: list[Step]
    torque_limit: Float
    joints: tuple[str, ...]
    fell_at: float | None = None
    unsolved: str | None = None

    @property
    def com_rms(self) -> float:
        """Root mean square of the centre of mass error, m."""
        return float(np.sqrt(np.mean(np.sum((self.com - self.com_reference) ** 2, axis=1))))

    @property
    def forces(self) -> Float:
        """(T, ncontacts, 3) the controller's contact forces, world axes; NaN off contact."""
        forces = np.full((len(self.steps), len(self.contacts), 3), np.nan)
        for k, step in enumerate(self.steps):
            for contact, force in zip(step.contacts, step.forces, strict=True):
                forces[k, self.contacts.index(contact)] = force
        return forces

    @property
    def joint_torques(self) -> Float:
        """(T, nv - 6) the controller's joint torques at every step, N m or N."""
        return np.array([step.tau[6:] for step in self.steps])

    @property
    def feet(self) -> tuple[str, ...]:
        """The frames of the feet, in order."""
        return tuple(dict.fromkeys(contact.frame for contact in self.contacts))

    @property
    def lifted(self) -> str | None:
        """The foot that the ``lift`` scenario raises (the first), None in the others."""
        return self.feet[0] if self.scenario.name == "lift" else None

    @property
    def labels(self) -> tuple[str, ...]:
        """A name for each contact (`contact_labels`)."""
        return contact_labels(self.contacts)

    @property
    def cone_margin(self) -> float:
        """Smallest ``mu f_z - |f_t|`` over every step and foot held, N (>= 0: in the cones),
        of each foot's whole force: a flat foot's corners summed, as it slides only as a whole
        (a corner that bears nothing leaves it far from sliding)."""
        forces = self.forces
        frames = [contact.frame for contact in self.contacts]
        feet = np.stack(
            [
                forces[:, [k for k, f in enumerate(frames) if f == foot]].sum(1)
                for foot in self.feet
            ],
            axis=1,
        )  # NaN where a foot is lifted
        tangential = np.hypot(feet[..., 0], feet[..., 1])
        return float(np.nanmin(self.scenario.friction * feet[..., 2] - tangential))

    @property
    def torque_margin(self) -> float:
        """Smallest ``1 - |tau| / limit`` over every step and joint with a limit: the share of
        its limit that the most loaded joint leaves (>= 0: within limits; NaN for a robot
        without limits). A share, not N m, so that a wrist of 1 N m does not hide the legs'
        load."""
        torques = np.abs(self.joint_torques)
        limited = np.isfinite(self.torque_limit)
        if not limited.any():
            return math.nan
        return float(np.min(1.0 - torques[:, limited] / self.torque_limit[limited]))

    @property
    def fell(self) -> bool:
        """Whether the robot lost balance, or its centre of mass sank more than `FALL` below
        its reference."""
        sank = np.min(self.com[:, 2] - self.com_reference[:, 2]) < -FALL
        return self.fell_at is not None or bool(sank)

    def summary(self) -> dict[str, Any]:
        """The measures, for a JSON report."""
        return {
            "scenario": dataclasses.asdict(self.scenario),
            "feet": list(self.feet),
            "lifted_foot": self.lifted,
            "com_rms_m": self.com_rms,
            "com_max_error_m": float(np.max(np.linalg.norm(self.com - self.com_reference, axis=1))),
            "cone_margin_N": self.cone_margin,
            "torque_margin": self.torque_margin,
            "fell": self.fell,
            "fell_at_s": self.fell_at,
            "unsolved": self.unsolved,
        }


def contact_labels(contacts: Sequence[PointContact]) -> tuple[str, ...]:
    """A name for each contact: its frame, with the point when the frame has several."""
    frames = [contact.frame for contact in contacts]
    return tuple(
        c.frame
        if frames.count(c.frame) == 1
        else f"{c.frame} ({c.position[0]:+.2f}, {c.position[1]:+.2f})"
        for c in contacts
    )


def with_stance(model: Model, scenario: Scenario) -> Scenario:
    """`scenario` with the feet, sole and pose it leaves to the robot taken from the built-in
    robot's `STANCES` entry, if `model` is one loaded by name: its feet (and their sole) where
    it names none, its pose where it names none."""
    stance = STANCES.get(model.name)
    # a robot of the same name from elsewhere (an MJCF file, say) is not the built-in one
    if (
        stance is None
        or not is_installed(model.name)
        or model.source != str(robot_path(model.name))
    ):
        return scenario
    changes: dict[str, Any] = {}
    if scenario.feet is None and scenario.soles is None:
        changes.update(feet=stance.feet, soles=stance.soles)
        if scenario.sole is None:
            changes.update(sole=stance.sole)
    if scenario.pose is None:
        changes.update(pose=stance.pose)
    return dataclasses.replace(scenario, **changes)


def foot_contacts(model: Model, scenario: Scenario) -> tuple[PointContact, ...]:
    """The contact points of a legged robot's feet (`Scenario.feet`, `Scenario.soles`): the
    origin of each point foot, the four corners (`Scenario.sole`) of each flat one; or
    `InputError`."""
    feet, soles = _foot_frames(model, scenario)
    if scenario.sole is not None and not soles:
        raise InputError(
            f"Scenario.sole describes flat feet, and {model.name} stands on none "
            f"(its feet: {', '.join(feet) or 'none'}); name them in Scenario.soles (--soles)"
        )
    x_min, x_max, y_min, y_max, z = scenario.sole or DEFAULT_SOLE
    corners = [(x, y, z) for x in (x_max, x_min) for y in (y_max, y_min)]
    contacts = [PointContact(n, friction=scenario.friction) for n in feet] + [
        PointContact(n, p, friction=scenario.friction) for n in soles for p in corners
    ]
    if not contacts and (scenario.feet is not None or scenario.soles is not None):
        raise InputError(
            "Scenario.feet and Scenario.soles (--feet, --soles) name no foot to stand on"
        )
    if not contacts:
        raise InputError(
            f"{model.name} has no frame named *foot or *sole to stand on: name its feet "
            "(Scenario.feet for point feet, Scenario.soles for flat ones; invdyn wbc --feet, "
            "--soles)"
        )
    return tuple(contacts)


def _foot_frames(model: Model, scenario: Scenario) -> tuple[list[str], list[str]]:
    """The frames of `model`'s point feet and of its flat feet that `scenario` names, or by
    default those named ``*foot`` and ``*sole``/``*sole_link`` (a body with a sole stands on
    it, not on a ``*foot`` frame of the same body too)."""
    if scenario.feet is not None or scenario.soles is not None:
        named = [*(scenario.feet or ()), *(scenario.soles or ())]
        for name in named:
            model.frame_id(name)  # InputError naming close frames
        return list(scenario.feet or ()), list(scenario.soles or ())
    soles = [n for n in model.frame_name if n.lower().endswith(("sole", "sole_link"))]
    sole_bodies = {frame_point(model, n)[0] for n in soles}
    feet = [
        n
        for n in model.frame_name
        if n.lower().endswith("foot") and frame_point(model, n)[0] not in sole_bodies
    ]
    return feet, soles


def _sole(sole: object) -> tuple[float, ...]:
    """`sole` as a tuple ``(x_min, x_max, y_min, y_max, z)``; `InputError` unless it is five
    finite numbers, each minimum below its maximum."""
    try:
        values = np.asarray(sole, dtype=float)
    except (TypeError, ValueError):
        values = np.empty(0)
    if values.shape != (5,) or not np.isfinite(values).all():
        raise InputError(
            "Scenario.sole (--sole) must be five finite numbers (x_min, x_max, y_min, y_max, "
            f"z), m; got {sole!r}"
        )
    x_min, x_max, y_min, y_max, _ = values
    if not (x_min < x_max and y_min < y_max):
        raise InputError(
            f"Scenario.sole (--sole) (x_min, x_max, y_min, y_max, z) = {sole!r}: each minimum "
            "must be below its maximum"
        )
    return tuple(float(v) for v in values)


def _frames(name: str, frames: object) -> tuple[str, ...] | None:
    """`frames` as a tuple of frame names, or None; `InputError` for anything else (a string
    alone is one name, not a sequence of them)."""
    if frames is None:
        return None
    if isinstance(frames, str) or not isinstance(frames, Sequence):
        raise InputError(f"{name} must be a sequence of frame names, got {frames!r}")
    if not all(isinstance(f, str) for f in frames):
        raise InputError(f"{name} must hold frame names (strings), got {list(frames)!r}")
    return tuple(frames)


def _pose(pose: object) -> str | tuple[float, ...] | None:
    """`pose` as a name, a tuple of finite numbers, or None; `InputError` for anything else
    (its length is checked against the robot's by `standing`)."""
    if pose is None or isinstance(pose, str):
        return pose
    try:
        values = np.asarray(pose, dtype=float)
    except (TypeError, ValueError):
        values = np.empty(0)
    if values.ndim != 1 or not values.size or not np.isfinite(values).all():
        raise InputError(
            "Scenario.pose (--pose) must be a configuration's name or its finite (nq,) values, "
            f"got {pose!r}"
        )
    return tuple(float(v) for v in values)


def standing(
    model: Model,
    contacts: Sequence[PointContact],
    radius: float,
    pose: str | Sequence[float] | None = None,
) -> Float:
    """(nq,) the robot's standing configuration: `pose` (`Scenario.pose`) itself, or the one of
    that name among the SRDF states that `invdyn.io.srdf.robot_configurations` finds and, for
    an MJCF file, its keyframes (which win), or `NEUTRAL`; for None the first of `STANDING`
    there. Its base is turned so that its flat feet are level (`_level`), and lifted so that
    its contact spheres of `radius` stand on the ground. `InputError` when there is none, it
    puts joints outside their limits, its soles are not parallel, its feet do not all reach
    the ground (`GROUND_TOLERANCE`), or its centre of mass is not above their support."""
    if pose is not None and not isinstance(pose, str):
        q = normalize(model, pose, "Scenario.pose (--pose)")
        if q.ndim != 1:
            raise InputError(
                f"Scenario.pose (--pose) must be one configuration of {model.nq} values"
            )
        return _on_the_ground(model, q, contacts, radius, "Scenario.pose")
    configurations = robot_configurations(model)
    mjcf = is_mjcf(model.source)
    if mjcf:
        configurations |= keyframes(model)
    configurations.setdefault(NEUTRAL, neutral(model))
    wanted = STANDING if pose is None else (pose,)
    found = next((n for n in wanted if n in configurations), None)
    if found is None:
        srdf = Path(model.source).parent.parent / "srdf"
        keys = f" or among the keyframes of {model.source}" if mjcf else ""
        raise InputError(
            f"{model.name} has no standing configuration ({', '.join(wanted)}) in the SRDF "
            f"files that fit it in {srdf}{keys}; it has {', '.join(sorted(configurations))}, "
            "or give the configuration's values (Scenario.pose; invdyn wbc --pose)"
        )
    return _on_the_ground(model, configurations[found].copy(), contacts, radius, repr(found))


def _on_the_ground(
    model: Model, q: Float, contacts: Sequence[PointContact], radius: float, name: str
) -> Float:
    """The configuration `q` (`name` in messages) checked against the joint limits, turned
    level on its flat feet and lifted onto the ground, each contact's sphere of `radius` on
    it; `InputError` where it cannot stand so (see `standing`)."""
    outside = (q < model.q_lower) | (q > model.q_upper)
    joints = [
        f"{joint} = {q[start]:.4g} not in [{model.q_lower[start]:.4g}, {model.q_upper[start]:.4g}]"
        for joint, start, size in zip(model.jnt_name, model.jnt_qadr, model.jnt_nq)
        if outside[start : start + size].any()
    ]
    if joints:
        raise InputError(
            f"{model.name}: the standing configuration {name} puts joints outside their limits: "
            f"{', '.join(joints)}"
        )
    q = _level(model, q, contacts, name)
    heights = np.array([float(_point(model, q, c)[2]) for c in contacts])
    q[2] += radius - heights.min()
    heights -= heights.min()
    if heights.max() > GROUND_TOLERANCE:
        above = ", ".join(
            f"{label} {1000 * h:.1f} mm"
            for label, h in zip(contact_labels(contacts), heights)
            if h > GROUND_TOLERANCE
        )
        raise InputError(
            f"{model.name}: in the standing configuration {name} not every foot reaches the "
            f"ground: {above} above it"
        )
    center = center_of_mass(model, q)
    if center[2] <= radius:
        raise InputError(
            f"{model.name}: in the standing configuration {name} its centre of mass is not above "
            "its feet (are they feet?)"
        )
    if not _supported(model, q, contacts, radius, center[:2]):
        feet = ", ".join(dict.fromkeys(c.frame for c in contacts))
        raise InputError(
            f"{model.name}: in the standing configuration {name} its centre of mass, at "
            f"({center[0]:.3f}, {center[1]:.3f}) m, is not above the support of its feet "
            f"{feet}: it would fall"
        )
    return q


def _level(model: Model, q: Float, contacts: Sequence[PointContact], name: str) -> Float:
    """`q` with its base turned about a horizontal axis by the rotation that levels the mean
    normal of its flat feet (frames of several contact points), which stand on the ground
    only level; `InputError` when the soles stay more than `LEVEL_TOLERANCE` from level, not
    parallel to each other. Point feet stand at any angle: `q` as it is."""
    frames = [c.frame for c in contacts]
    soles = [f for f in dict.fromkeys(frames) if frames.count(f) > 1]
    if not soles:
        return q
    normals = np.array([frame_placement(model, q, f)[0][:, 2] for f in soles])
    mean = np.mean(normals, axis=0)
    mean /= np.linalg.norm(mean)
    axis = np.cross(mean, (0.0, 0.0, 1.0))
    angle = math.atan2(float(np.linalg.norm(axis)), float(mean[2]))
    if np.linalg.norm(axis) > 0.0:
        axis *= angle / np.linalg.norm(axis)
    level = q.copy()
    level[3:7] = quat_multiply(quat_exp(axis), q[3:7])
    tilts = {f: _tilt(model, level, f) for f in soles}
    if max(tilts.values()) > LEVEL_TOLERANCE:
        listed = ", ".join(f"{f} {math.degrees(t):.1f} deg" for f, t in tilts.items())
        raise InputError(
            f"{model.name}: the standing configuration {name} holds its soles at angles to "
            f"each other, so they cannot all stand flat on the ground (tilt from level, the base "
            f"turned to level them on average: {listed})"
        )
    return level


def _tilt(model: Model, q: Float, frame: str) -> float:
    """Angle between the z-axis of `frame` and the vertical, rad."""
    rotation = frame_placement(model, q, frame)[0]
    return math.acos(min(1.0, max(-1.0, float(rotation[2, 2]))))


def _on(model: Model, contact: PointContact, frame: str) -> bool:
    """Whether `contact` is on the body that carries `frame`."""
    return frame_point(model, contact.frame)[0] == frame_point(model, frame)[0]


def _point(model: Model, q: Float, contact: PointContact) -> Float:
    """(3,) world position of a contact point."""
    rotation, origin = frame_placement(model, q, contact.frame)
    return origin + rotation @ np.asarray(contact.position)


def run_balance(model: Model, scenario: Scenario, *, progress: bool = False) -> BalanceRun:
    """Simulate `scenario` on the floating-base `model` in MuJoCo under whole-body control,
    until the end, until the robot loses balance (`BalanceRun.fell_at`), or until its QP has
    no solution while it stands (`BalanceRun.unsolved`); `QPError` when that is at the first
    step."""
    from invdyn.sim import Plant, Push, StopRollout, rollout

    scenario = with_stance(model, scenario)
    contacts = foot_contacts(model, scenario)
    q0 = standing(model, contacts, scenario.foot_radius, scenario.pose)
    # joints that together move no inertia, yet carry mass (iCub's neck, not massless
    # fingers, which throw nothing about): the simulation cannot follow torques on them
    carried = model.subtree_mass
    still = [j for j in singular_joints(model, q0) if carried[model.jnt_name.index(j)] > 0.0]
    if still:
        raise InputError(
            f"{model.name}: the mass matrix is singular in the standing configuration: joints "
            f"{', '.join(map(repr, still))} together move links of mass but no inertia, so "
            "the simulation cannot follow torques on them (give their links rotational "
            "inertia, or the model armature: Model.replace(dof_armature=...))"
        )
    start = center_of_mass(model, q0)
    lifted = contacts[0].frame
    if scenario.name == "lift":
        # over the middle of the other feet's contacts, at the same height
        others = [_point(model, q0, c) for c in contacts if not _on(model, c, lifted)]
        if not others:
            raise InputError(f"lift needs another foot to stand on; {model.name} has one")
        over = np.r_[np.mean(others, axis=0)[:2], start[2]]
        reference = _blend(start, over, 0.0, scenario.shift)
    else:
        reference = scenario.reference(start)
    tasks = [CenterOfMassTask(reference), OrientationTask(), PostureTask()]
    wbc = WholeBodyController(model, contacts, tasks)
    controller = _lifting(wbc, lifted, q0, scenario) if scenario.name == "lift" else wbc
    fell_at: float | None = None
    unsolved: str | None = None

    def balancing(t: float, q: Float, v: Float) -> Float:
        # losing balance ends the run, whether the QP still has a solution or not; a QP
        # without one while the robot stands ends it too, with what it has to report
        nonlocal fell_at, unsolved
        com = reference(t)[0]
        try:
            tau = controller(t, q, v)
        except QPError as error:
            if not wbc.steps:
                raise
            if _lost(model, wbc.contacts, q, v, com, scenario.foot_radius):
                fell_at = round(t, 9)
            else:
                unsolved = str(error)
            raise StopRollout from None
        if len(wbc.steps) > 1 and _lost(model, wbc.contacts, q, v, com, scenario.foot_radius):
            fell_at = round(t, 9)
            wbc.steps.pop()  # the step that the run, ending here, does not take
            raise StopRollout
        return tau

    pushes: tuple[Any, ...] = ()
    if scenario.name == "push":
        force = (scenario.push, 0.0, 0.0)
        pushes = (Push(force, start=scenario.push_start, duration=scenario.push_duration),)
    plant = Plant(
        feet=tuple((c.frame, c.position) for c in contacts),
        foot_radius=scenario.foot_radius,
        ground_friction=scenario.friction,
        pushes=pushes,
    )
    run = rollout(
        model, balancing, q0=q0, duration=scenario.duration, plant=plant, progress=progress
    )
    return BalanceRun(
        scenario=scenario,
        contacts=contacts,
        time=run.time,
        q=run.q,
        com=center_of_mass(model, run.q),
        com_reference=np.array([reference(t)[0] for t in run.time]),
        steps=wbc.steps,
        torque_limit=wbc.torque_limit,
        joints=model.dof_names[6:],
        fell_at=fell_at,
        unsolved=unsolved,
    )


def _lost(
    model: Model,
    contacts: Sequence[PointContact],
    q: Float,
    v: Float,
    com_reference: Float,
    radius: float,
) -> bool:
    """Whether the robot has lost balance on `contacts`: its centre of mass sank more than
    `FALL` below the (3,) `com_reference`, or its capture point ``c + c_dot sqrt(c_z / g)``
    (Pratt et al. 2006: where it must step to stop) left the support polygon of the contact
    points (`_supported`)."""
    center = center_of_mass(model, q)
    if center[2] < com_reference[2] - FALL or center[2] <= 0.0:
        return True
    velocity = center_of_mass_jacobian(model, q) @ v
    capture = center[:2] + velocity[:2] * math.sqrt(center[2] / -model.gravity[2])
    return not _supported(model, q, contacts, radius, capture)


def _supported(
    model: Model, q: Float, contacts: Sequence[PointContact], radius: float, point: Float
) -> bool:
    """Whether the (2,) ground `point` lies in the support polygon of the contact points at
    q, each widened to a disc of the feet's `radius` (two point feet have an area too)."""
    from scipy.spatial import ConvexHull

    angles = np.linspace(0.0, 2.0 * math.pi, 8, endpoint=False)
    disc = radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    points = np.array([_point(model, q, c)[:2] for c in contacts])
    hull = ConvexHull((points[:, None, :] + disc).reshape(-1, 2))
    return not bool(np.any(hull.equations[:, :2] @ point + hull.equations[:, 2] > 0.0))


def _lifting(controller: WholeBodyController, foot: str, q0: Float, scenario: Scenario) -> Any:
    """`controller` that, once the centre of mass has moved, lets go of `foot`'s contact and
    raises it by ``scenario.lift_height`` in ``scenario.shift`` seconds."""
    model = controller.model
    ground = frame_placement(model, q0, foot)[1]
    raised = ground + np.array([0.0, 0.0, scenario.lift_height])
    path = _blend(ground, raised, scenario.shift, 2.0 * scenario.shift)

    lifted = frame_point(model, foot)[0]

    def lifting(t: float, q: Float, v: Float) -> Float:
        held = [body != lifted for body, _ in controller.frames] if t >= scenario.shift else []
        if not all(held):
            controller.set_contacts(
                [c for c, h in zip(controller.contacts, held, strict=True) if h]
            )
            controller.tasks = (*controller.tasks, FramePositionTask(foot, path))
        return controller(t, q, v)

    return lifting


def _blend(start: Float, end: Float, t0: float, t1: float) -> Any:
    """``t -> (x, x_dot, x_ddot)`` from `start` to `end` between `t0` and `t1` (a quintic
    with zero velocity and acceleration at both ends), held outside."""
    span = t1 - t0
    change = np.asarray(end, dtype=np.float64) - start

    def blend(t: float) -> tuple[Float, Float, Float]:
        s = min(max((t - t0) / span, 0.0), 1.0)
        shape = s**3 * (10.0 - 15.0 * s + 6.0 * s**2)
        rate = 30.0 * s**2 * (1.0 - s) ** 2 / span
        curvature = 60.0 * s * (1.0 - s) * (1.0 - 2.0 * s) / span**2
        return start + change * shape, change * rate, change * curvature

    return blend
