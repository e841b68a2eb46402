"""Joint-space controllers: laws at and off the reference, saturation, gains and bad input."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import invdyn
from conftest import assert_close, requires_erd
from invdyn.configuration import random_configuration
from invdyn.control import (
    CONTROLLERS,
    Gains,
    JointController,
    JointTrajectory,
    computed_torque,
    feedforward,
    fourier,
    joint_inertia,
    pd,
    pd_gravity,
    quintic,
)
from invdyn.model import Model

ROBOTS = [
    "pendulum",
    "double_pendulum",
    "planar_2r",
    pytest.param("panda", marks=requires_erd),
    pytest.param("ur5", marks=requires_erd),
]
TIMES = [0.0, 0.7, 1.3, 2.0, 2.5]


def excitation(model: Model, rng: np.random.Generator) -> JointTrajectory:
    """A two-harmonic Fourier trajectory about a random configuration, limits unchecked."""
    q_mean = random_configuration(model, rng=rng)
    sin, cos = rng.uniform(-0.1, 0.1, (2, 2, model.nv))
    return fourier(model, q_mean, sin, cos, base_frequency=0.5, check_limits=False)


def gains(model: Model, rng: np.random.Generator) -> Gains:
    return Gains(kp=rng.uniform(10, 100, model.nv), kd=rng.uniform(1, 10, model.nv))


@pytest.fixture
def planar() -> Model:
    return invdyn.load("planar_2r")


@pytest.mark.parametrize("name", ROBOTS)
def test_laws_at_the_reference_state(name: str, rng: np.random.Generator) -> None:
    model = invdyn.load(name)
    trajectory, k = excitation(model, rng), gains(model, rng)
    controllers = {law: build(model, trajectory, k) for law, build in CONTROLLERS.items()}
    for t in TIMES:
        q_ref, v_ref, a_ref = trajectory(t)
        inverse = invdyn.rnea(model, q_ref, v_ref, a_ref)
        assert_close(controllers["computed_torque"](t, q_ref, v_ref), inverse, what="ct")
        assert_close(controllers["feedforward"](t, q_ref, v_ref), inverse, what="ff")
        assert_close(controllers["pd"](t, q_ref, v_ref), np.zeros(model.nv), what="pd")
        gravity = invdyn.gravity(model, q_ref)
        assert_close(controllers["pd_gravity"](t, q_ref, v_ref), gravity, what="pd_gravity")


@pytest.mark.parametrize("name", ROBOTS)
def test_computed_torque_gives_the_closed_loop_acceleration(
    name: str, rng: np.random.Generator
) -> None:
    model = invdyn.load(name)
    # rotor inertia and joint friction are part of the inverted model too
    model = model.replace(
        dof_armature=rng.uniform(0, 0.1, model.nv), dof_damping=rng.uniform(0, 0.5, model.nv)
    )
    trajectory, k = excitation(model, rng), gains(model, rng)
    controller = computed_torque(model, trajectory, k)
    for t in TIMES:
        q_ref, v_ref, a_ref = trajectory(t)
        q = q_ref + rng.uniform(-0.1, 0.1, model.nq)
        v = v_ref + rng.uniform(-0.5, 0.5, model.nv)
        expected = a_ref + k.kd * (v_ref - v) + k.kp * (q_ref - q)
        tau = controller(t, q, v)
        assert_close(invdyn.aba(model, q, v, tau), expected, rtol=1e-8, what="acceleration")


@pytest.mark.parametrize("name", ROBOTS)
def test_torque_unit_laws_off_the_reference(name: str, rng: np.random.Generator) -> None:
    model = invdyn.load(name)
    trajectory, k = excitation(model, rng), gains(model, rng)
    t = 1.1
    q_ref, v_ref, a_ref = trajectory(t)
    q = q_ref + rng.uniform(-0.1, 0.1, model.nq)
    v = v_ref + rng.uniform(-0.5, 0.5, model.nv)
    feedback = k.kp * (q_ref - q) + k.kd * (v_ref - v)
    assert_close(pd(model, trajectory, k)(t, q, v), feedback, what="pd")
    expected = feedback + invdyn.gravity(model, q)
    assert_close(pd_gravity(model, trajectory, k)(t, q, v), expected, what="pd_gravity")
    expected = feedback + invdyn.rnea(model, q_ref, v_ref, a_ref)
    assert_close(feedforward(model, trajectory, k)(t, q, v), expected, what="feedforward")


@requires_erd
def test_errors_wrap_on_continuous_joints() -> None:
    model = invdyn.load("double_pendulum_continuous")
    cs = lambda angles: np.stack([np.cos(angles), np.sin(angles)], -1).ravel()  # noqa: E731
    reference = cs(np.array([-3.1, 0.0]))
    trajectory = quintic(model, reference, reference, 1.0)
    controller = pd(model, trajectory, Gains(kp=10.0, kd=0.0))
    # from 3.1 rad the reference -3.1 rad is 2 pi - 6.2 = 0.083 rad ahead, not 6.2 rad behind
    tau = controller(0.5, cs(np.array([3.1, 0.0])), np.zeros(2))
    assert_close(tau, [10.0 * (2 * np.pi - 6.2), 0.0], rtol=1e-12, what="tau")
    assert_close(
        computed_torque(model, trajectory, Gains(kp=1.0, kd=1.0))(0.5, reference, np.zeros(2)),
        invdyn.gravity(model, reference),
        what="computed torque at rest",
    )


def test_saturation_clips(planar: Model, rng: np.random.Generator) -> None:
    trajectory = excitation(planar, rng)
    k = Gains(kp=1e4, kd=1e3)
    q_ref, v_ref, _ = trajectory(0.5)
    q, v = q_ref + 0.2, v_ref - 1.0
    for law, build in CONTROLLERS.items():
        free = build(planar, trajectory, k)(0.5, q, v)
        limit = np.array([3.0, 0.5])
        clipped = build(planar, trajectory, k, torque_limit=limit)(0.5, q, v)
        assert np.all(np.abs(free) > limit), law
        assert_close(clipped, np.clip(free, -limit, limit), what=law)
        scalar = build(planar, trajectory, k, torque_limit=2.0)(0.5, q, v)
        assert_close(scalar, np.clip(free, -2.0, 2.0), what=law)
        # an infinite bound leaves that joint free
        loose = build(planar, trajectory, k, torque_limit=[np.inf, 1.0])(0.5, q, v)
        assert loose[0] == free[0] and abs(loose[1]) == 1.0


def test_controllers_by_name(planar: Model, rng: np.random.Generator) -> None:
    assert set(CONTROLLERS) == {"pd", "pd_gravity", "computed_torque", "feedforward"}
    trajectory = excitation(planar, rng)
    for law, build in CONTROLLERS.items():
        controller = build(planar, trajectory, Gains(kp=1.0, kd=1.0))
        assert isinstance(controller, JointController), law
        tau = controller(0.0, np.zeros(2), np.zeros(2))
        assert tau.shape == (2,) and tau.dtype == np.float64
    with pytest.raises(TypeError):
        CONTROLLERS["mine"] = pd  # type: ignore[index]


# gains


def test_critically_damped_gains(rng: np.random.Generator) -> None:
    inertia = rng.uniform(0.1, 2.0, 4)
    k = Gains.critically_damped(12.0, inertia)
    assert_close(k.kd**2, 4 * k.kp * inertia, rtol=1e-12, what="kd^2 = 4 kp I")
    assert_close(k.kp, inertia * 144.0, rtol=1e-14, what="kp")
    unit = Gains.critically_damped(5.0)
    assert unit.kp.shape == () and float(unit.kp) == 25.0 and float(unit.kd) == 10.0
    with pytest.raises(invdyn.InputError, match="bandwidth must be positive"):
        Gains.critically_damped(0.0)
    with pytest.raises(invdyn.InputError, match="inertia must be non-negative"):
        Gains.critically_damped(1.0, [1.0, -1.0])
    # gains beyond floating point: named, not an OverflowError (or inf gains)
    with pytest.raises(invdyn.InputError, match=r"bandwidth 1e\+200 rad/s gives gains .* overflow"):
        Gains.critically_damped(1e200)
    with pytest.raises(invdyn.InputError, match="overflow"):
        Gains.critically_damped(1e150, [1.0, 1e10])


def test_joint_inertia_is_the_mass_matrix_diagonal(rng: np.random.Generator) -> None:
    model = invdyn.load("double_pendulum")
    q = rng.uniform(-1, 1, (3, model.nq))
    inertia = joint_inertia(model, q)
    assert inertia.shape == (3, model.nv)
    assert_close(inertia, np.diagonal(invdyn.mass_matrix(model, q), axis1=1, axis2=2), what="I")
    armature = np.array([0.5, 0.25])
    geared = joint_inertia(model.replace(dof_armature=armature), q)
    assert_close(geared, inertia + armature, rtol=1e-12, what="armature")
    with pytest.raises(invdyn.InputError, match="q"):
        joint_inertia(model, [0.0])


@pytest.mark.parametrize(
    ("kp", "kd", "message"),
    [
        ([1.0, np.nan], [1.0, 1.0], "kp holds a non-finite value"),
        ([1.0, 1.0], np.inf, "kd holds a non-finite value"),
        ([1.0, -1.0], [1.0, 1.0], "kp must be non-negative, got -1.0 at index 1"),
        (1.0, -0.5, "kd must be non-negative"),
        (np.ones((2, 2)), 1.0, r"kp must be a scalar or have shape \(nv,\), got \(2, 2\)"),
        ([1.0, 1.0], [1.0, 1.0, 1.0], "kp and kd must have the same shape"),
        (["a", "b"], 1.0, "kp must be an array of numbers"),
    ],
)
def test_bad_gains(kp: object, kd: object, message: str) -> None:
    with pytest.raises(invdyn.InputError, match=message):
        Gains(kp=kp, kd=kd)  # type: ignore[arg-type]


# bad input


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda m, t: pd(m, t, Gains(kp=[1.0] * 3, kd=1.0)), r"gains.kp must .* \(nv,\) = \(2,\)"),
        (lambda m, t: pd(m, t, (1.0, 1.0)), "gains must be invdyn.control.Gains"),
        (lambda m, t: pd("planar_2r", t, Gains(1.0, 1.0)), "model must be an invdyn.Model"),
        (lambda m, t: pd(m, t, Gains(1.0, 1.0), torque_limit=-1.0), "torque_limit must be pos"),
        (lambda m, t: pd(m, t, Gains(1.0, 1.0), torque_limit=[1.0, np.nan]), "torque_limit"),
        (lambda m, t: pd(m, t, Gains(1.0, 1.0), torque_limit=[1.0] * 3), r"\(nv,\) = \(2,\)"),
        (
            lambda m, t: pd(invdyn.load("pendulum"), t, Gains(1.0, 1.0)),
            r"the trajectory is for the joints \('joint1', 'joint2'\) of 'planar_2r'",
        ),
        (
            lambda m, t: pd(invdyn.load("pendulum"), lambda s: t(s), Gains(1.0, 1.0)),
            r"trajectory\(0.0\) gives q of shape \(2,\), expected \(1,\)",
        ),
        (
            lambda m, t: pd(m, lambda s: 0.0, Gains(1.0, 1.0)),
            r"trajectory\(0.0\) must give \(q, v, a\), got float",
        ),
        (
            lambda m, t: pd(m, lambda s: t(s)[:2], Gains(1.0, 1.0)),
            r"trajectory\(0.0\) must give \(q, v, a\), got 2 values",
        ),
    ],
)
def test_bad_controller_arguments(
    build: Callable[[Model, JointTrajectory], object], message: str, planar: Model
) -> None:
    trajectory = quintic(planar, [0.0, 0.0], [1.0, 1.0], 1.0)
    with pytest.raises(invdyn.InputError, match=message):
        build(planar, trajectory)


@pytest.mark.parametrize("law", sorted(CONTROLLERS))
def test_bad_state_raises_input_error(law: str, planar: Model) -> None:
    trajectory = quintic(planar, [0.0, 0.0], [1.0, 1.0], 1.0)
    controller = CONTROLLERS[law](planar, trajectory, Gains(kp=1.0, kd=1.0))
    zero = np.zeros(2)
    with pytest.raises(invdyn.InputError, match=r"q must have shape \(nq,\) = \(2,\), got \(3,\)"):
        controller(0.0, np.zeros(3), zero)
    with pytest.raises(invdyn.InputError, match=r"v must have shape \(nv,\)"):
        controller(0.0, zero, np.zeros((1, 2)))
    with pytest.raises(invdyn.InputError, match="q holds a non-finite value"):
        controller(0.0, np.array([np.nan, 0.0]), zero)
    with pytest.raises(invdyn.InputError, match="v holds a non-finite value"):
        controller(0.0, zero, np.array([0.0, np.inf]))
    with pytest.raises(invdyn.InputError, match="t must be finite, got nan"):
        controller(np.nan, zero, zero)
    for t in (np.array([0.1, 0.2]), "0.5", None):
        with pytest.raises(invdyn.InputError, match="t must be a real number"):
            controller(t, zero, zero)
    # lists are fine
    assert controller(0.5, [0.0, 0.0], [0.0, 0.0]).shape == (2,)


@pytest.mark.parametrize("law", sorted(CONTROLLERS))
def test_underactuated_models_are_refused(law: str, planar: Model) -> None:
    trajectory = quintic(planar, [0.0, 0.0], [1.0, 1.0], 1.0)
    passive_elbow = planar.replace(dof_actuated=[True, False])
    with pytest.raises(invdyn.InputError, match="'planar_2r' is underactuated: .* drives joint2,"):
        CONTROLLERS[law](passive_elbow, trajectory, Gains(kp=1.0, kd=1.0))
    # marked actuated again, it is the nominal robot
    idealised = passive_elbow.replace(dof_actuated=None)
    tau = CONTROLLERS[law](idealised, trajectory, Gains(kp=1.0, kd=1.0))(0.5, [0.1, 0.2], [0, 0])
    assert tau.shape == (2,) and np.all(np.isfinite(tau))


def test_a_trajectory_that_goes_wrong_later_is_named(planar: Model) -> None:
    trajectory = quintic(planar, [0.0, 0.0], [1.0, 1.0], 1.0)
    controller = pd(planar, lambda t: trajectory(t) if t == 0.0 else 0.5, Gains(1.0, 1.0))
    with pytest.raises(invdyn.InputError, match=r"trajectory\(0.5\) must give \(q, v, a\)"):
        controller(0.5, np.zeros(2), np.zeros(2))
