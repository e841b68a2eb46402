"""Closed-loop tracking in MuJoCo: every controller meets its error bound, and bad input.

Each run drives the simulated plant (`invdyn.sim.rollout`, 1 kHz control, 1 ms physics steps)
along a reference with gains of the default bandwidth, 10 rad/s (`tracking.gains_for`).
Runs take about 0.2 s per second of motion, so each robot's runs are made once per module
(`functools.cache`) and shared by the tests that read them.

The bounds were measured with MuJoCo 4.0 and are set with a margin of about 3x; the measured
values are in the comments next to them. On the exact model, computed torque leaves only the
error of holding each torque for a control period, so it beats PD by orders of magnitude.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest

import invdyn
from conftest import requires_erd
from invdyn.control import CONTROLLERS, Gains, JointTrajectory, minimum_jerk, via_points
from invdyn.experiments.tracking import (
    DEFAULT_BANDWIDTH,
    TrackingResult,
    compare,
    track,
    workspace_motion,
)
from invdyn.kinematics import end_effector
from invdyn.model import Model
from invdyn.sim import Plant

BANDWIDTH = DEFAULT_BANDWIDTH
RATE = 1000.0

# the double pendulum: bounds on (rms, max) error in rad, with the values measured
PENDULUM_BOUNDS = {
    "pd": (0.25, 0.6),  # 8.54e-2, 1.92e-1
    "pd_gravity": (0.14, 0.3),  # 4.61e-2, 1.01e-1
    "computed_torque": (1.5e-3, 2.5e-3),  # 4.94e-4, 8.52e-4
    "feedforward": (1.5e-3, 2.5e-3),  # 4.25e-4, 7.75e-4
}

# panda with an unmodelled 2 kg payload and links 20 % heavier: bounds on (rms, max) error
PAYLOAD_BOUNDS = {
    "pd_gravity": (0.35, 1.4),  # 1.22e-1, 4.84e-1 (exact model: 2.70e-2, 1.06e-1)
    "computed_torque": (0.3, 1.4),  # 1.05e-1, 4.97e-1 (exact model: 3.93e-5, 7.16e-5)
}


def pendulum_motion(model: Model) -> JointTrajectory:
    """A 2 s spline through four via points, away from the hanging rest where gravity acts."""
    times = [0.0, 0.6, 1.4, 2.0]
    points = [[0.5, 0.0], [1.2, -0.6], [0.2, 0.9], [0.8, 0.3]]
    return via_points(model, times, points)


@functools.cache
def pendulum_run(controller: str) -> TrackingResult:
    """One controller on the double pendulum along `pendulum_motion`, run once."""
    model = invdyn.load("double_pendulum")
    return track(model, pendulum_motion(model), controller, bandwidth=BANDWIDTH, control_rate=RATE)


@functools.cache
def workspace_runs(name: str, perturbed: bool = False) -> dict[str, TrackingResult]:
    """Every controller along the 5 s `workspace_motion` of a robot, on the exact plant or on
    one with a 2 kg payload at the end effector and 20 % heavier links; run once."""
    model = invdyn.load(name)
    plant = None
    if perturbed:
        plant = Plant(payload=2.0, payload_frame=end_effector(model), mass_scale=1.2)
        controllers: tuple[str, ...] = ("pd_gravity", "computed_torque")
    else:
        controllers = tuple(CONTROLLERS)
    return compare(
        model,
        workspace_motion(model),
        controllers,
        bandwidth=BANDWIDTH,
        control_rate=RATE,
        plant=plant,
    )


def assert_consistent(result: TrackingResult, model: Model) -> None:
    """Finite errors, the maximum above the RMS, per joint and over all joints."""
    assert math.isfinite(result.rms_error) and math.isfinite(result.max_error)
    assert 0.0 < result.rms_error <= result.max_error
    assert [joint.name for joint in result.joints] == list(model.joint_names)
    for joint in result.joints:
        assert math.isfinite(joint.rms_error) and joint.rms_error <= joint.max_error
    assert result.max_error == max(joint.max_error for joint in result.joints)
    assert result.error.shape == (len(result.rollout), model.nv)


# exact model, across the workspace


@pytest.mark.parametrize("name", [pytest.param(n, marks=requires_erd) for n in ("panda", "ur5")])
def test_exact_model_ranks_the_controllers(name: str) -> None:
    # measured rms (rad), panda / ur5: pd 2.11e-1 / 7.35e-2, pd_gravity 2.70e-2 / 1.95e-2,
    # computed_torque 3.93e-5 / 5.12e-5, feedforward 5.33e-5 / 5.35e-5
    model = invdyn.load(name)
    runs = workspace_runs(name)
    assert list(runs) == list(CONTROLLERS)
    for result in runs.values():
        assert_consistent(result, model)
    rms = {law: result.rms_error for law, result in runs.items()}
    assert rms["computed_torque"] <= rms["pd"] / 20, rms
    assert rms["computed_torque"] < 1e-3, rms
    assert rms["feedforward"] <= rms["pd"] / 10, rms
    assert rms["pd_gravity"] < rms["pd"], rms
    # every law stays within the effort limits (at 20 rad/s the laws in torque units chatter
    # on the panda where joint2 crosses 0 and the axes of joints 1 and 3 line up)
    for law, result in runs.items():
        assert all(joint.saturated == 0.0 for joint in result.joints), law


# each controller alone, on the built-in double pendulum


@pytest.mark.parametrize("controller", list(CONTROLLERS))
def test_double_pendulum_tracks_within_bounds(controller: str) -> None:
    model = invdyn.load("double_pendulum")
    result = pendulum_run(controller)
    assert_consistent(result, model)
    rms_bound, max_bound = PENDULUM_BOUNDS[controller]
    assert result.rms_error < rms_bound, result.metrics()
    assert result.max_error < max_bound, result.metrics()
    assert all(joint.saturated == 0.0 for joint in result.joints)
    # the run follows the whole trajectory, at the control rate
    assert result.rollout.time[-1] == pytest.approx(pendulum_motion(model).duration)
    assert np.allclose(np.diff(result.rollout.time), 1.0 / RATE)


def test_double_pendulum_gravity_compensation_helps() -> None:
    # pd 8.54e-2 against pd_gravity 4.61e-2 rms
    assert pendulum_run("pd_gravity").rms_error < pendulum_run("pd").rms_error


# model error: the plant carries a payload and heavier links than the controller's model


@requires_erd
def test_model_error_degrades_tracking_within_bounds() -> None:
    model = invdyn.load("panda")
    exact = workspace_runs("panda")
    perturbed = workspace_runs("panda", perturbed=True)
    for law, (rms_bound, max_bound) in PAYLOAD_BOUNDS.items():
        result = perturbed[law]
        assert_consistent(result, model)
        assert result.rms_error > exact[law].rms_error, law
        assert result.rms_error < rms_bound, result.metrics()
        assert result.max_error < max_bound, result.metrics()
    # the gravity mismatch dominates at equal bandwidth, so computed torque gains little over
    # pd_gravity here: measured ratio pd_gravity / computed_torque = 1.16
    ct, pdg = perturbed["computed_torque"].rms_error, perturbed["pd_gravity"].rms_error
    assert ct <= 1.2 * pdg, (ct, pdg)


# metrics


@pytest.mark.parametrize("controller", list(CONTROLLERS))
def test_metrics_are_json(controller: str) -> None:
    model = invdyn.load("double_pendulum")
    result = pendulum_run(controller)
    metrics = json.loads(json.dumps(result.metrics()))
    assert metrics["controller"] == controller
    assert metrics["rms_error"] == result.rms_error
    assert metrics["max_error"] == result.max_error
    assert set(metrics["per_joint"]) == set(model.joint_names)
    for joint, values in zip(model.joint_names, result.joints, strict=True):
        assert metrics["per_joint"][joint]["rms_error"] == values.rms_error
        assert metrics["per_joint"][joint]["max_error"] == values.max_error


# bad input


@pytest.fixture
def pendulum() -> Model:
    return invdyn.load("double_pendulum")


def test_compare_rejects_an_unknown_controller(pendulum: Model) -> None:
    trajectory = minimum_jerk(pendulum, [0.0, 0.0], [0.5, 0.5], 1.0)
    with pytest.raises(invdyn.InputError, match="unknown controller 'pid'"):
        compare(pendulum, trajectory, ["pd", "pid"])


def test_track_rejects_an_unknown_controller(pendulum: Model) -> None:
    trajectory = minimum_jerk(pendulum, [0.0, 0.0], [0.5, 0.5], 1.0)
    with pytest.raises(invdyn.InputError, match="unknown controller 'pid'"):
        track(pendulum, trajectory, "pid")


@pytest.mark.parametrize(
    ("name", "joint"),
    [
        ("double_pendulum", "joint2"),
        pytest.param("panda", "panda_joint4", marks=requires_erd),
    ],
)
def test_trajectory_beyond_a_joint_limit(name: str, joint: str) -> None:
    model = invdyn.load(name)
    k = model.joint_names.index(joint)
    q0 = 0.5 * (model.q_lower + model.q_upper)
    q1 = q0.copy()
    q1[k] = model.q_upper[k] + 0.1
    with pytest.raises(invdyn.InputError, match=f"joint '{joint}' .* above its upper limit"):
        minimum_jerk(model, q0, q1, 5.0)


def test_nan_gains(pendulum: Model) -> None:
    trajectory = minimum_jerk(pendulum, [0.0, 0.0], [0.5, 0.5], 1.0)
    with pytest.raises(invdyn.InputError, match="kp"):
        Gains(kp=[np.nan, 1.0], kd=1.0)
    with pytest.raises(invdyn.InputError, match="kd"):
        Gains(kp=1.0, kd=[1.0, np.inf])
    with pytest.raises(invdyn.InputError, match="bandwidth"):
        Gains.critically_damped(np.nan)
    with pytest.raises(invdyn.InputError, match="bandwidth"):
        track(pendulum, trajectory, "pd", bandwidth=np.nan)


def test_gains_too_fast_for_the_control_rate_warn_and_diverge(pendulum: Model) -> None:
    """3 rad per control period: the sampled loop is unstable, and the warning says so before
    the run shows it; 0.1 rad per period tracks quietly."""
    trajectory = minimum_jerk(pendulum, [0.0, 0.0], [0.5, 0.5], 1.0)
    with pytest.warns(UserWarning, match=r"bandwidth 300 rad/s at 100 Hz: 3 rad per control"):
        unstable = track(pendulum, trajectory, "computed_torque", bandwidth=300, control_rate=100)
    stable = track(pendulum, trajectory, "computed_torque", bandwidth=10, control_rate=100)
    assert unstable.max_error > 100 * stable.max_error


@pytest.mark.parametrize("name", ["double_pendulum", pytest.param("kinova", marks=requires_erd)])
def test_workspace_motion_keeps_within_speed_limits(name: str) -> None:
    """The default move shortens where a joint's velocity limit would be exceeded (the kinova's
    0.63 rad/s joints over 5 s), and stays inside the position limits."""
    model = invdyn.load(name)
    trajectory = workspace_motion(model, duration=5.0)
    q, v, _ = trajectory(np.linspace(0.0, 5.0, 2001))
    limit = model.dof_velocity_limit
    bounded = np.isfinite(limit) & (limit > 0)
    assert np.all(np.abs(v[:, bounded]) <= 0.8 * limit[bounded] + 1e-9)
    assert np.all((q >= model.q_lower) & (q <= model.q_upper))


@requires_erd
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("panda", "panda_link7"),  # its fingers are prismatic
        ("tiago", "arm_7_link"),  # not a wheel, nor a finger of its hand
        ("pr2", "r_wrist_roll_link"),  # the last of two arms, above its gripper's fingers
        # its arms are not fingers; its gripper's one turning jaw ends the arm
        ("talos", "gripper_right_motor_double_link"),
        ("ur5", "wrist_3_link"),
    ],
)
def test_the_default_payload_goes_on_the_end_effector(load_robot, name, expected):
    from invdyn.sim import plant_model

    model = load_robot(name, floating_base=False)
    assert end_effector(model) == expected
    # the plant's default payload frame is the same body
    carried = plant_model(model, Plant(payload=1.0))
    body = model.body_name.index(expected)
    assert carried.body_mass[body] == pytest.approx(model.body_mass[body] + 1.0)
