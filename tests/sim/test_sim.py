"""The MuJoCo bridge: built models against invdyn's dynamics, rollouts, plants and bad input.

Oracle: the ``MjModel`` that `build_mujoco` writes has invdyn's mass matrix (armature included)
and bias forces, to 1e-9 of the largest entry, on the tiny robots, on example-robot-data robots
(fixed and floating) and on a hand-made tree holding every joint type. MuJoCo's free joint has
its linear velocity in the world frame where invdyn has it in the base frame, so its forces and
mass matrix are converted (as in ``test_oracle_mujoco.py``).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import invdyn
from conftest import assert_close, mujoco_mass_matrix, requires_erd
from invdyn import configuration
from invdyn.io.mjcf import from_mujoco
from invdyn.io.mujoco_state import to_mujoco_state
from invdyn.kinematics import frame_jacobian
from invdyn.model import JointType, Model
from invdyn.spatial import quaternion_to_matrix

mujoco = pytest.importorskip("mujoco")

from invdyn.sim import (  # noqa: E402
    MIN_MASS,
    Plant,
    Rollout,
    StopRollout,
    build_mujoco,
    collect_robot,
    csv_columns,
    dof_addresses,
    plant_model,
    prepare_mujoco,
    rollout,
    save_csv,
    torque_limits,
)

RTOL = 1e-9
G = 9.81
TINY = ["pendulum", "double_pendulum", "planar_2r"]
ERD_ROBOTS = [("panda", False), ("ur5", False), ("talos", True), ("solo12", True)]


@pytest.fixture(autouse=True)
def _mujoco_log_elsewhere(tmp_path, monkeypatch):
    # mujoco writes MUJOCO_LOG.TXT into the working directory on a warning
    monkeypatch.chdir(tmp_path)


def _load(name: str, floating: bool = False) -> Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        return invdyn.load(name, floating_base=floating)


def _rotation(rng: np.random.Generator) -> np.ndarray:
    quat = rng.normal(size=4)
    return quaternion_to_matrix(quat / np.linalg.norm(quat))


def _every_joint_model(rng: np.random.Generator) -> Model:
    """A free-floating tree with a spherical, a continuous, a prismatic and a revolute joint,
    random inertias and rotated joint frames, armature and damping."""
    types = [
        JointType.FREE,
        JointType.SPHERICAL,
        JointType.CONTINUOUS,
        JointType.PRISMATIC,
        JointType.REVOLUTE,
    ]
    nbody = len(types)
    inertias = []
    for _ in range(nbody):
        a, b, c = rng.uniform(0.05, 0.4, size=3) ** 2
        r = _rotation(rng)
        inertias.append(r @ np.diag([b + c, a + c, a + b]) / 12.0 @ r.T)
    axes = rng.normal(size=(nbody, 3))
    jnt_rot = np.array([np.eye(3)] + [_rotation(rng) for _ in range(nbody - 1)])
    jnt_pos = np.vstack([np.zeros(3), rng.uniform(-0.3, 0.3, size=(nbody - 1, 3))])
    nq, nv = 7 + 4 + 2 + 1 + 1, 6 + 3 + 1 + 1 + 1
    q_lower, q_upper = np.full(nq, -np.inf), np.full(nq, np.inf)
    q_lower[13], q_upper[13] = -0.2, 0.3  # prismatic
    q_lower[14] = -1.0  # revolute, one-sided
    armature = rng.uniform(0.01, 0.1, size=nv)
    damping = rng.uniform(0.1, 1.0, size=nv)
    # a free joint's linear terms act along world axes in mujoco: equal dampings agree, and
    # armatures only when zero (mujoco's multiplies the world-frame acceleration)
    armature[:3], damping[:3] = 0.0, damping[0]
    return Model(
        name="every_joint",
        body_name=("base", "ball", "wheel", "slider", "arm"),
        jnt_name=("root_joint", "ball_joint", "wheel_joint", "slider_joint", "arm_joint"),
        body_parent=np.array([-1, 0, 1, 2, 0]),
        body_mass=rng.uniform(1.0, 3.0, size=nbody),
        body_com=rng.uniform(-0.1, 0.1, size=(nbody, 3)),
        body_inertia=np.array(inertias),
        jnt_type=np.array(types),
        jnt_axis=axes / np.linalg.norm(axes, axis=1, keepdims=True),
        jnt_pos=jnt_pos,
        jnt_rot=jnt_rot,
        q_lower=q_lower,
        q_upper=q_upper,
        dof_velocity_limit=np.full(nv, np.inf),
        dof_effort_limit=np.full(nv, np.inf),
        dof_armature=armature,
        dof_damping=damping,
        dof_friction=np.zeros(nv),
        frame_name=("world_marker", "tool"),
        frame_body=np.array([-1, 3]),
        frame_pos=np.array([[0.0, 0.0, 1.0], [0.0, 0.05, 0.1]]),
        frame_rot=np.array([np.eye(3), _rotation(rng)]),
    )


def _mujoco_dynamics(model: Model, mj_model, q: np.ndarray, v: np.ndarray):
    """MuJoCo's mass matrix and bias forces (damping included) in invdyn's coordinates."""
    dofs = dof_addresses(model, mj_model)
    data = mujoco.MjData(mj_model)
    data.qpos[:], data.qvel[:] = to_mujoco_state(model, mj_model, q, v)
    mujoco.mj_forward(mj_model, data)
    mass = mujoco_mass_matrix(mj_model, data)
    # T maps invdyn's v to mujoco's qvel; qacc at a = 0 holds the free joint's omega x v term
    t = np.eye(model.nv)
    qacc = np.zeros(mj_model.nv)
    if model.floating_base:
        rotation = quaternion_to_matrix(q[3:7])
        t[:3, :3] = rotation
        qacc[dofs[:3]] = rotation @ np.cross(v[3:6], v[:3])
    forces = data.qfrc_bias + mass @ qacc - data.qfrc_passive
    return t.T @ mass[np.ix_(dofs, dofs)] @ t, t.T @ forces[dofs]


def _check_oracle(model: Model, mj_model, rng: np.random.Generator, nstates: int = 3) -> None:
    for k in range(nstates):
        q = configuration.random_configuration(model, rng=rng)
        v = rng.normal(size=model.nv)
        mass, forces = _mujoco_dynamics(model, mj_model, q, v)
        assert_close(mass, invdyn.mass_matrix(model, q), rtol=RTOL, what=f"M, state {k}")
        assert_close(forces, invdyn.bias(model, q, v), rtol=RTOL, what=f"bias, state {k}")


def _hold(model: Model):
    """A controller that cancels gravity of `model`."""
    return lambda t, q, v: invdyn.gravity(model, q)


def _zero(model: Model):
    return lambda t, q, v: np.zeros(model.nv)


# import boundary


def test_invdyn_imports_neither_sim_nor_mujoco():
    code = (
        "import sys, invdyn; assert 'mujoco' not in sys.modules and 'invdyn.sim' not in "
        "sys.modules; import invdyn.sim; assert 'mujoco' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# oracle: the built model has invdyn's dynamics


@pytest.mark.parametrize("name", TINY)
def test_oracle_tiny(name, rng):
    model = _load(name)
    mj_model = build_mujoco(model)
    assert [mj_model.joint(j).name for j in range(mj_model.njnt)] == list(model.jnt_name)
    assert [mj_model.body(b).name for b in range(1, mj_model.nbody)] == list(model.body_name)
    _check_oracle(model, mj_model, rng)


@requires_erd
@pytest.mark.parametrize(("name", "floating"), ERD_ROBOTS, ids=[n for n, _ in ERD_ROBOTS])
def test_oracle_example_robots(name, floating, rng):
    model = _load(name, floating)
    mj_model = build_mujoco(model)
    assert mj_model.nv == model.nv and mj_model.nq == model.nq
    np.testing.assert_array_equal(dof_addresses(model, mj_model), np.arange(model.nv))
    _check_oracle(model, mj_model, rng)


def test_oracle_every_joint_type(rng):
    """Free, spherical, continuous, prismatic and revolute joints, rotated joint frames, per-dof
    armature and damping (MuJoCo's damping is a passive force, invdyn's part of the bias)."""
    model = _every_joint_model(rng)
    mj_model = build_mujoco(model)
    np.testing.assert_allclose(mj_model.dof_armature, model.dof_armature, rtol=0, atol=0)
    np.testing.assert_allclose(mj_model.dof_damping, model.dof_damping, rtol=0, atol=0)
    _check_oracle(model, mj_model, rng, nstates=5)


def test_build_options():
    model = _load("panda").replace(gravity=np.array([0.5, -0.2, -9.0]))
    mj_model = build_mujoco(model, plant=Plant(timestep=5e-4, integrator="rk4"))
    assert mj_model.opt.timestep == 5e-4
    assert mj_model.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
    np.testing.assert_array_equal(mj_model.opt.gravity, model.gravity)
    assert mj_model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT
    assert not mj_model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_LIMIT
    assert mj_model.ngeom == 0
    # finite limits of revolute and prismatic joints become limited ranges, in radians
    assert np.all(mj_model.jnt_limited)
    np.testing.assert_array_equal(mj_model.jnt_range[:, 0], model.q_lower)
    np.testing.assert_array_equal(mj_model.jnt_range[:, 1], model.q_upper)
    unlimited = build_mujoco(model, plant=Plant(joint_limits=False))
    assert unlimited.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_LIMIT


@requires_erd
@pytest.mark.parametrize("name", ["double_pendulum_simple", "quadruped"])
def test_empty_urdf_ranges_simulate_unlimited(name):
    """URDFs that give joints meant to turn freely the range [0, 0] (read as no limit) compile,
    their joints unlimited in MuJoCo, and move in collected episodes."""
    model = _load(name)
    free = ~np.isfinite(model.q_lower)
    assert free.any()
    mj_model = build_mujoco(model)
    assert not mj_model.jnt_limited[free].any()
    episodes = collect_robot(model, episodes=2, duration=0.5, seed=3).episodes
    assert len(episodes) == 2
    q = np.concatenate([episode.state[:, : model.nq] for episode in episodes])
    assert np.all(np.ptp(q[:, free], axis=0) > 1e-3)


def test_massless_body_compiles_with_floor(rng):
    """A massless body with a joint compiles; the floor moves the mass matrix by ~1e-12."""
    model = _load("double_pendulum")
    massless = model.replace(
        body_mass=np.array([0.0, model.body_mass[1]]),
        body_com=np.zeros((2, 3)),
        body_inertia=np.array([np.zeros((3, 3)), model.body_inertia[1]]),
    )
    mj_model = build_mujoco(massless)
    assert mj_model.body_mass[1] == MIN_MASS
    np.testing.assert_array_equal(mj_model.body_mass[2], model.body_mass[1])
    q = configuration.random_configuration(massless, rng=rng)
    mass, _ = _mujoco_dynamics(massless, mj_model, q, np.zeros(2))
    assert_close(mass, invdyn.mass_matrix(massless, q), rtol=1e-10, what="M")


def test_bad_inertia_warns_and_compiles():
    model = _load("pendulum")
    broken = model.replace(body_inertia=np.diag([0.01, 0.01, 0.05])[None])
    with pytest.warns(invdyn.ModelWarning, match="A \\+ B < C"):
        mj_model = build_mujoco(broken)
    moments = np.sort(mj_model.body_inertia[1])
    assert moments[0] + moments[1] >= moments[2]
    np.testing.assert_allclose(moments, [0.025, 0.025, 0.05])


def test_free_joint_below_a_body_is_refused(rng):
    model = _every_joint_model(rng)
    types = np.array(model.jnt_type)
    types[4] = JointType.FREE  # hangs from the base
    nq, nv = model.nq + 6, model.nv + 5
    bad = model.replace(
        jnt_type=types,
        q_lower=np.full(nq, -np.inf),
        q_upper=np.full(nq, np.inf),
        dof_velocity_limit=np.full(nv, np.inf),
        dof_effort_limit=np.full(nv, np.inf),
        dof_armature=np.zeros(nv),
        dof_damping=np.zeros(nv),
        dof_friction=np.zeros(nv),
    )
    with pytest.raises(invdyn.ModelError, match="free joint 'arm_joint'"):
        build_mujoco(bad)


# plants


def test_plant_model_payload_is_analytic():
    """Pendulum with a point mass m_p at its tip: g(q) = (m g L/2 + m_p g L) sin q."""
    model = _load("pendulum")
    plant = Plant(payload=0.7, payload_frame="tip")
    heavy = plant_model(model, plant)
    q = np.array([0.6])
    expected = (1.0 * G * 0.5 + 0.7 * G * 1.0) * np.sin(q)
    assert_close(invdyn.gravity(heavy, q), expected, rtol=1e-12, what="g with payload")
    assert plant_model(model, Plant()) is model


def test_plant_model_payload_on_panda_matches_jacobian(rng):
    """The extra holding torque of a payload is -J^T m_p gravity at its point."""
    model = _load("panda")
    frame = model.frame_name[-1]
    offset = np.array([0.02, -0.01, 0.1])
    plant = Plant(payload=1.5, payload_frame=frame, payload_offset=offset)
    q = configuration.random_configuration(model, rng=rng)
    rotation, _ = invdyn.frame_placement(model, q, frame)
    # jacobian of the payload point: the frame's, shifted by the offset
    jacobian = frame_jacobian(model, q, frame, reference="local_world_aligned")
    lever = rotation @ offset
    linear = jacobian[3:] - np.cross(lever, jacobian[:3].T).T
    extra = -linear.T @ (1.5 * model.gravity)
    assert_close(
        invdyn.gravity(plant_model(model, plant), q),
        invdyn.gravity(model, q) + extra,
        rtol=1e-12,
        what="g with payload",
    )


def test_plant_model_mass_scale_and_friction(rng):
    model = _load("panda")
    plant = Plant(mass_scale=1.3, damping=0.5, friction=np.arange(model.nv) * 0.1)
    scaled = plant_model(model, plant)
    q = configuration.random_configuration(model, rng=rng)
    assert_close(invdyn.gravity(scaled, q), 1.3 * invdyn.gravity(model, q), what="g scaled")
    np.testing.assert_array_equal(scaled.dof_damping, np.full(model.nv, 0.5))
    np.testing.assert_array_equal(scaled.dof_friction, np.arange(model.nv) * 0.1)
    mj_model = build_mujoco(model, plant=plant)
    np.testing.assert_array_equal(mj_model.dof_damping, scaled.dof_damping)
    np.testing.assert_array_equal(mj_model.dof_frictionloss, scaled.dof_friction)


def test_torque_limits_default_to_the_model():
    model = _load("panda")
    np.testing.assert_array_equal(torque_limits(model, Plant()), model.dof_effort_limit)
    np.testing.assert_array_equal(torque_limits(model, Plant(torque_limit=3.0)), 3.0)


def test_passive_coordinates_get_no_force():
    # a double pendulum whose elbow no actuator drives: the plant holds that force at zero
    model = _load("double_pendulum").replace(dof_actuated=[True, False])
    np.testing.assert_array_equal(torque_limits(model, Plant())[1], 0.0)
    np.testing.assert_array_equal(torque_limits(model, Plant(torque_limit=3.0)), [3.0, 0.0])
    push_both = rollout(model, lambda t, q, v: np.array([0.5, 2.0]), q0=[0.3, 0.1], duration=0.2)
    push_shoulder = rollout(
        model, lambda t, q, v: np.array([0.5, 0.0]), q0=[0.3, 0.1], duration=0.2
    )
    np.testing.assert_array_equal(push_both.tau_command[:, 1], 2.0)
    np.testing.assert_array_equal(push_both.tau_applied[:, 1], 0.0)
    np.testing.assert_array_equal(push_both.q, push_shoulder.q)


# rollouts


def test_zero_torque_pendulum_matches_aba():
    """RK4 in MuJoCo and RK4 on invdyn's aba agree on the free swing of the pendulum."""
    model = _load("pendulum")
    run = rollout(
        model,
        _zero(model),
        q0=[1.0],
        duration=0.5,
        plant=Plant(integrator="rk4"),
    )
    assert len(run) == 501 and run.time[-1] == pytest.approx(0.5)

    def f(x):
        return np.concatenate([x[1:], invdyn.aba(model, x[:1], x[1:], np.zeros(1))])

    x, h = np.array([1.0, 0.0]), 1e-3
    for _ in range(500):
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert_close(np.concatenate([run.q[-1], run.v[-1]]), x, rtol=1e-9, what="state at 0.5 s")
    np.testing.assert_array_equal(run.tau_command, 0.0)


def test_zero_torque_conserves_energy():
    model = _load("double_pendulum")
    run = rollout(
        model,
        _zero(model),
        q0=[1.0, -0.5],
        duration=0.5,
        plant=Plant(timestep=1e-4, integrator="rk4", joint_limits=False),
    )
    kinetic = 0.5 * np.einsum("ti,tij,tj->t", run.v, invdyn.mass_matrix(model, run.q), run.v)
    # potential energy from gravity: V = -sum m_i g . c_i
    rotations, origins = invdyn.forward_kinematics(model, run.q)
    coms = origins + np.einsum("tbij,bj->tbi", rotations, model.body_com)
    potential = -np.einsum("b,tbi,i->t", model.body_mass, coms, model.gravity)
    energy = kinetic + potential
    assert np.ptp(energy) < 1e-8 * np.max(np.abs(energy))
    assert np.ptp(run.q[:, 0]) > 0.5  # it did swing


def test_gravity_compensation_holds_panda_still():
    model = _load("panda")
    q0 = configuration.neutral(model)
    q0[[1, 3, 5]] = [0.3, -1.5, 1.5]
    run = rollout(model, _hold(model), q0=q0, duration=1.0)
    assert np.max(np.abs(run.q - q0)) < 1e-9
    assert np.max(np.abs(run.v)) < 1e-9


@requires_erd
def test_gravity_compensation_holds_floating_talos_still():
    """The base's six forces are turned into the world frame: a floating robot hovers (its
    base marked actuated, as a URDF's floating base is passive)."""
    model = _load("talos", True).replace(dof_actuated=None)
    q0 = configuration.neutral(model)
    q0[3:7] = [0.1, -0.2, 0.3, 0.9] / np.linalg.norm([0.1, -0.2, 0.3, 0.9])
    run = rollout(model, _hold(model), q0=q0, duration=0.2, control_rate=250.0)
    assert np.max(np.abs(run.q - q0)) < 1e-9


def test_payload_needs_more_holding_torque():
    """An unmodelled payload makes the arm sag; the plant model's gravity holds it."""
    model = _load("pendulum")
    plant = Plant(payload=0.4, payload_frame="tip", payload_offset=[0.0, 0.0, 0.0])
    q0 = np.array([0.8])
    heavy = plant_model(model, plant)
    held = rollout(model, _hold(heavy), q0=q0, duration=0.5, plant=plant)
    assert np.max(np.abs(held.q - q0)) < 1e-9
    expected = (1.0 * G * 0.5 + 0.4 * G * 1.0) * np.sin(q0)
    assert_close(held.tau_applied[0], expected, rtol=1e-12, what="holding torque")
    sagging = rollout(model, _hold(model), q0=q0, duration=0.5, plant=plant)
    assert sagging.q[-1, 0] < q0[0] - 0.1


def test_mass_scale_scales_holding_torque():
    model = _load("panda")
    q0 = configuration.neutral(model)
    q0[[1, 3]] = [0.4, -1.2]
    plant = Plant(mass_scale=1.25)
    scaled = lambda t, q, v: 1.25 * invdyn.gravity(model, q)  # noqa: E731
    run = rollout(model, scaled, q0=q0, duration=0.5, plant=plant)
    assert np.max(np.abs(run.q - q0)) < 1e-9
    unscaled = rollout(model, _hold(model), q0=q0, duration=0.5, plant=plant)
    assert np.max(np.abs(unscaled.q - q0)) > 1e-3


def test_torque_limit_clips_applied_forces():
    model = _load("double_pendulum")
    push = lambda t, q, v: np.array([500.0, -500.0])  # noqa: E731
    run = rollout(model, push, q0=[0.0, 0.0], duration=0.01, plant=Plant(torque_limit=[3.0, 2.0]))
    np.testing.assert_array_equal(run.tau_command, np.tile([500.0, -500.0], (11, 1)))
    np.testing.assert_array_equal(run.tau_applied, np.tile([3.0, -2.0], (11, 1)))
    # by default the model's effort limits
    default = rollout(model, push, q0=[0.0, 0.0], duration=0.01)
    np.testing.assert_array_equal(default.tau_applied[0], [100.0, -50.0])


def test_delay_shifts_applied_forces():
    model = _load("pendulum")
    ramp = lambda t, q, v: np.array([t])  # noqa: E731
    run = rollout(model, ramp, q0=[0.1], duration=0.02, plant=Plant(delay=3))
    np.testing.assert_array_equal(run.tau_applied[:3], 0.0)
    np.testing.assert_array_equal(run.tau_applied[3:], run.tau_command[:-3])
    np.testing.assert_allclose(run.tau_command[:, 0], run.time)


def test_control_rate_holds_forces_over_physics_steps():
    model = _load("pendulum")
    calls = []

    def controller(t, q, v):
        calls.append(t)
        return np.array([0.5])

    run = rollout(model, controller, q0=[0.0], duration=0.1, control_rate=100.0)
    assert len(run) == 11 and len(calls) == 11
    np.testing.assert_allclose(run.time, np.arange(11) / 100.0)


def _noisy_run(model: Model, q0: np.ndarray, plant: Plant):
    """A zero-torque rollout and the (q, v) its controller measured."""
    seen = []

    def controller(t, q, v):
        seen.append((q, v))
        return np.zeros(model.nv)

    run = rollout(model, controller, q0=q0, duration=0.2, plant=plant)
    return run, np.array([q for q, _ in seen]), np.array([v for _, v in seen])


def test_sensor_noise_is_seeded(rng):
    model = _every_joint_model(rng)
    q0 = configuration.random_configuration(model, rng=rng)
    q0[13:15] = 0.0
    plant = Plant(sensor_noise=(1e-2, 0.1), seed=7)
    run, q_seen, v_seen = _noisy_run(model, q0, plant)
    # true states are clean; measured ones are off by about the noise, quaternions still unit
    assert 0.5e-2 < np.std(configuration.difference(model, run.q, q_seen)) < 2e-2
    assert 0.05 < np.std(v_seen - run.v) < 0.2
    np.testing.assert_allclose(np.linalg.norm(q_seen[:, 3:7], axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(q_seen[:, 7:11], axis=1), 1.0)
    # the same seed gives the same measurements, another seed others
    again, q_again, _ = _noisy_run(model, q0, plant)
    np.testing.assert_array_equal(q_again, q_seen)
    np.testing.assert_array_equal(again.q, run.q)
    _, q_other, _ = _noisy_run(model, q0, Plant(sensor_noise=(1e-2, 0.1), seed=8))
    assert not np.array_equal(q_other, q_seen)


def test_joint_limits_are_enforced():
    """A one-sided limit (the other side infinite) stops the swing; without limits it does not."""
    model = _load("pendulum")
    limited = model.replace(q_lower=np.array([-np.inf]), q_upper=np.array([0.5]))
    kwargs = {"q0": [0.0], "v0": [4.0], "duration": 0.3}
    stopped = rollout(limited, _zero(limited), **kwargs)
    assert np.max(stopped.q) < 0.55
    free = rollout(limited, _zero(limited), plant=Plant(joint_limits=False), **kwargs)
    assert np.max(free.q) > 0.8


def test_a_joint_pinned_by_equal_limits_is_refused_by_name():
    """lower = upper: MuJoCo's compiler would refuse the range in its own words."""
    model = _load("pendulum")
    pinned = model.replace(q_lower=np.array([0.3]), q_upper=np.array([0.3]))
    with pytest.raises(invdyn.InputError, match=r"joint '\w+' has position limits lower = upper"):
        rollout(pinned, _zero(pinned), q0=[0.3], duration=0.01)


def test_mjcf_model_as_plant():
    """An MJCF robot (anchored joints, an actuator that would pull) simulated as given: its
    actuators are off, and payload and mass scale are applied to a copy of the compiled model."""
    xml = """
    <mujoco model="arm">
      <worldbody>
        <body name="upper" pos="0.1 0 0.5" euler="10 0 20">
          <joint name="shoulder" axis="0 1 0" pos="0.02 0 0.05" range="-170 170"/>
          <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
          <body name="fore" pos="0.4 0 0" euler="0 0 30">
            <joint name="elbow" axis="0 1 0.2" pos="0.01 0.02 0"/>
            <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.025"/>
            <site name="hand" pos="0.3 0 0.01"/>
          </body>
        </body>
      </worldbody>
      <actuator>
        <position joint="shoulder" kp="500"/>
        <position joint="elbow" kp="500"/>
      </actuator>
    </mujoco>
    """
    mj_model = mujoco.MjModel.from_xml_string(xml)
    model = from_mujoco(mj_model)
    masses, flags = np.array(mj_model.body_mass), int(mj_model.opt.disableflags)
    q0 = np.array([0.7, -0.4])
    held = rollout(model, _hold(model), q0=q0, duration=0.3, mj_model=mj_model)
    assert np.max(np.abs(held.q - q0)) < 1e-9
    plant = Plant(payload=0.3, payload_frame="hand", payload_offset=[0.05, 0, 0], mass_scale=1.2)
    heavy = plant_model(model, plant)
    held = rollout(model, _hold(heavy), q0=q0, duration=0.3, mj_model=mj_model, plant=plant)
    assert np.max(np.abs(held.q - q0)) < 1e-9
    # the caller's model is untouched
    np.testing.assert_array_equal(mj_model.body_mass, masses)
    assert int(mj_model.opt.disableflags) == flags
    prepared = prepare_mujoco(model, mj_model, plant=plant)
    assert prepared.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_ACTUATION
    assert prepared.body_mass[1] == pytest.approx(1.2 * masses[1])


@pytest.mark.parametrize(
    ("flag", "option"),
    [("damper", "damping"), ("frictionloss", "friction"), ("constraint", "friction")],
)
def test_damping_or_friction_that_the_file_turns_off_is_refused(flag: str, option: str) -> None:
    """A plant cannot add what the MJCF file's flags keep MuJoCo from applying."""
    xml = f"""
    <mujoco><option><flag {flag}="disable"/></option>
      <worldbody><body name="arm"><joint name="j" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/></body></worldbody>
    </mujoco>"""
    mj_model = mujoco.MjModel.from_xml_string(xml)
    model = from_mujoco(mj_model)
    with pytest.raises(
        invdyn.InputError, match=rf"Plant.{option} \(--{option}\): the MJCF file turns"
    ):
        prepare_mujoco(model, mj_model, plant=Plant(**{option: 0.5}))
    prepare_mujoco(
        model, mj_model, plant=Plant(**{"damping" if option == "friction" else "friction": 0.5})
    )


def test_progress_bar(capsys):
    model = _load("pendulum")
    rollout(model, _zero(model), q0=[0.0], duration=0.01, progress=True)
    assert "rollout pendulum" in capsys.readouterr().err


def test_save_csv_round_trips(tmp_path, rng):
    model = _every_joint_model(rng)
    q0 = configuration.random_configuration(model, rng=rng)
    q0[13:15] = 0.0
    run = rollout(
        model, lambda t, q, v: rng.normal(size=model.nv), q0=q0, duration=0.01, plant=Plant()
    )
    path = save_csv(run, model, tmp_path / "out" / "run.csv")
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    np.testing.assert_array_equal(
        table, np.column_stack([run.time, run.q, run.v, run.tau_command, run.tau_applied])
    )
    header = path.read_text().splitlines()[0].split(",")
    assert header == csv_columns(model)
    assert header[:4] == ["time", "q.root_joint.x", "q.root_joint.y", "q.root_joint.z"]
    assert "q.wheel_joint.cos" in header and "tau_applied.arm_joint" in header
    assert len(header) == 1 + model.nq + 3 * model.nv
    assert sorted(p.name for p in path.parent.iterdir()) == ["run.csv"]


# bad input


BAD_PLANTS = [
    ("timestep", 0.0),
    ("timestep", -1e-3),
    ("timestep", float("nan")),
    ("timestep", "1e-3"),
    ("payload", -1.0),
    ("payload", float("inf")),
    ("payload_frame", 3),
    ("payload_offset", [0.0, 1.0]),
    ("payload_offset", [0.0, float("nan"), 0.0]),
    ("mass_scale", 0.0),
    ("mass_scale", -2.0),
    ("damping", -0.1),
    ("damping", [[0.1, 0.2]]),
    ("damping", float("nan")),
    ("friction", [0.1, -0.2]),
    ("friction", "low"),
    ("torque_limit", 0.0),
    ("torque_limit", float("nan")),
    ("torque_limit", [1.0, -1.0]),
    ("sensor_noise", -0.1),
    ("sensor_noise", [0.1, 0.2, 0.3]),
    ("sensor_noise", float("inf")),
    ("delay", -1),
    ("delay", 1.5),
    ("delay", True),
    ("seed", -3),
    ("seed", 0.5),
    ("joint_limits", "yes"),
    ("integrator", "verlet"),
]


@pytest.mark.parametrize(("field", "value"), BAD_PLANTS, ids=[f"{f}={v!r}" for f, v in BAD_PLANTS])
def test_bad_plant_field(field, value):
    with pytest.raises(invdyn.InputError, match=f"Plant.{field}"):
        Plant(**{field: value})


@pytest.mark.parametrize("field", ["damping", "friction", "torque_limit"])
def test_per_dof_option_of_the_wrong_length(field):
    model = _load("double_pendulum")
    plant = Plant(**{field: [1.0, 2.0, 3.0]})
    with pytest.raises(invdyn.InputError, match=rf"Plant.{field} has shape \(3,\).*\(2,\)"):
        rollout(model, _zero(model), q0=[0.0, 0.0], duration=0.01, plant=plant)


@pytest.mark.parametrize(
    ("frame", "message"),
    [("hand", "neither a frame nor a body"), ("base", "fixed to the world")],
)
def test_bad_payload_frame(frame, message):
    model = _load("pendulum")
    with pytest.raises(invdyn.InputError, match=message):
        build_mujoco(model, plant=Plant(payload=1.0, payload_frame=frame))


def test_payload_by_body_name():
    model = _load("pendulum")
    plant = Plant(payload=1.0, payload_frame="rod", payload_offset=[0.0, 0.0, -1.0])
    q = np.array([0.3])
    tip = plant_model(model, Plant(payload=1.0, payload_frame="tip"))
    assert_close(invdyn.gravity(plant_model(model, plant), q), invdyn.gravity(tip, q))


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (np.zeros(3), r"shape \(3,\) at control step 0"),
        (np.zeros((1, 2)), r"shape \(1, 2\) at control step 0"),
        (None, "control step 0"),
        ("torque", "control step 0"),
    ],
)
def test_controller_wrong_output(output, message):
    model = _load("double_pendulum")
    with pytest.raises(invdyn.InputError, match=message):
        rollout(model, lambda t, q, v: output, q0=[0.0, 0.0], duration=0.01)


def test_a_controller_can_stop_the_rollout():
    model = _load("pendulum")

    def controller(t, q, v):
        if t > 0.0045:
            raise StopRollout
        return np.zeros(1)

    run = rollout(model, controller, q0=[0.3], duration=0.01)
    assert len(run) == 5 and run.q.shape == (5, 1) and run.tau_applied.shape == (5, 1)
    assert_close(run.time, np.arange(5) * 1e-3, what="time")


def test_controller_nan_names_the_step():
    model = _load("double_pendulum")

    def controller(t, q, v):
        return np.array([0.0, np.nan]) if t > 0.0045 else np.zeros(2)

    with pytest.raises(invdyn.InputError, match=r"non-finite force at control step 5.*tau\[1\]"):
        rollout(model, controller, q0=[0.0, 0.0], duration=0.01)


@pytest.mark.parametrize(
    ("control_rate", "timestep"), [(300.0, 1e-3), (2000.0, 1e-3), (1000.0, 3e-4)]
)
def test_control_period_not_a_multiple_of_the_timestep(control_rate, timestep):
    model = _load("pendulum")
    off_step = r"multiple of the physics step Plant.timestep \(--timestep\)"
    with pytest.raises(invdyn.InputError, match=off_step):
        rollout(
            model,
            _zero(model),
            q0=[0.0],
            duration=0.01,
            control_rate=control_rate,
            plant=Plant(timestep=timestep),
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"duration": 0.0}, "duration"),
        ({"duration": float("nan")}, "duration"),
        ({"control_rate": -1.0}, "control_rate"),
        # one period of 1e5 s would be a single physics call of 1e8 steps, not interruptible
        (
            {"control_rate": 1e-5},
            r"duration \(--duration\) 0.01 s is shorter than one control period, "
            r"1 / control_rate \(--rate\) = 100000 s",
        ),
        ({"q0": [0.0, 0.0]}, r"q0 must have shape \(\.\.\., 1\), got \(2,\)"),
        ({"q0": [[0.0]]}, r"q0 has shape \(1, 1\)"),
        ({"q0": [float("nan")]}, "q0 holds a non-finite"),
        ({"v0": [0.0, 1.0]}, "v0"),
        ({"plant": {"timestep": 1e-3}}, "plant must be an invdyn.sim.Plant"),
    ],
)
def test_bad_rollout_arguments(kwargs, message):
    model = _load("pendulum")
    arguments = {"q0": [0.0], "duration": 0.01, **kwargs}
    with pytest.raises(invdyn.InputError, match=message):
        rollout(model, _zero(model), **arguments)


def test_controller_not_callable():
    model = _load("pendulum")
    with pytest.raises(invdyn.InputError, match="controller must be callable"):
        rollout(model, np.zeros(1), q0=[0.0], duration=0.01)


def test_divergence_is_an_invdyn_error():
    model = _load("pendulum")
    huge = lambda t, q, v: np.array([1e14])  # noqa: E731
    with pytest.raises(invdyn.InvdynError, match="diverged during control step 0"):
        rollout(model, huge, q0=[0.0], duration=0.01, plant=Plant(torque_limit=np.inf))


def test_mjcf_model_lacking_a_joint():
    model = _load("pendulum")
    other = build_mujoco(_load("planar_2r"))
    with pytest.raises(invdyn.InputError, match="no joint named 'joint'"):
        rollout(model, _zero(model), q0=[0.0], duration=0.01, mj_model=other)


def test_save_csv_of_another_model(tmp_path):
    model = _load("pendulum")
    run = rollout(model, _zero(model), q0=[0.0], duration=0.01)
    with pytest.raises(invdyn.InputError, match="nq 1 and nv 1"):
        save_csv(run, _load("planar_2r"), tmp_path / "run.csv")


def test_rollout_shapes_are_checked():
    with pytest.raises(invdyn.InputError, match=r"Rollout.q has shape \(3, 1\), expected \(2, n\)"):
        Rollout(
            time=np.zeros(2),
            q=np.zeros((3, 1)),
            v=np.zeros((2, 1)),
            tau_command=np.zeros((2, 1)),
            tau_applied=np.zeros((2, 1)),
        )
