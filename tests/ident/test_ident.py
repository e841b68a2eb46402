"""Identification of dynamic parameters (`invdyn.ident`).

* Base parameters reproduce rnea: ``Y theta = Y_b (B theta)`` for any parameters at new states,
  on fixed and floating robots with every joint type. Angles rounded in a URDF make no base
  parameters of their own.
* Noise-free simulated Panda (MuJoCo, the plant heavier than the model by 10 % and carrying a
  1.5 kg payload, tracking a Fourier excitation; accelerations from the recorded velocities):
  the identified base parameters equal the plant's to 1e-6 relative, and the identified model
  predicts torques of a later part of the motion with nMSE below 1e-6.
* Weighted least squares finds each joint's noise level; torque offsets are recovered.
* The physically consistent fit: every body of its result is physical (positive definite
  pseudo-inertia, so a model can be built of it), on noisy and scarce data too, and it predicts
  held-out torques about as well as weighted least squares, friction included.
* An optimised excitation: better conditioned than where it started, the condition number it
  reports is its regressor's, and it keeps within the position, velocity and acceleration
  limits.
* Zero-phase filtered accelerations of a noisy velocity: no lag, a tenth of the raw error.
* Torques held over frames of several physics steps (200 Hz on 1 ms, implicit damping): the
  plant's damping, with positions and velocities where in the frame the torque balances them.
* Bad input: the documented errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import invdyn
from conftest import states
from invdyn.configuration import difference, integrate, neutral
from invdyn.ident import base_parameters, identify
from invdyn.ident.consistent import pseudo_inertias
from invdyn.ident.excitation import ExcitationSettings, optimise_excitation
from invdyn.ident.identify import load_identification
from invdyn.ident.signals import Filter, frame_share, velocity_and_acceleration
from invdyn.metrics import normalised_mse


@pytest.fixture(scope="module")
def panda(load_robot):
    return load_robot("panda", floating_base=False)


def test_base_parameters_reproduce_rnea(robot):
    base = base_parameters(robot)
    size = 10 * robot.nbody + 3 * robot.nv
    assert 0 < len(base) < size
    assert base.projection.shape == (len(base), size) and len(base.names) == len(base)
    q, v, a = states(robot, "base-parameters", n=5)
    params = np.random.default_rng(0).normal(size=size)
    full = invdyn.joint_torque_regressor(robot, q, v, a)
    expected = full @ params
    ours = base.regressor(full) @ base.of(params)
    scale = max(1.0, float(np.abs(expected).max()))
    assert np.abs(ours - expected).max() <= 1e-9 * scale


def test_angles_rounded_in_a_urdf_make_no_base_parameter(load_robot, tmp_path):
    """xarm7's URDF rounds pi / 2 to 1.5708: the combinations that only this rounding sets
    apart (a part of a column 4e-7 of its norm) are not base parameters, which torques could
    not tell from noise; its base parameters are those of the exact angles."""
    import math
    from pathlib import Path

    rounded = load_robot("xarm7", floating_base=False)
    exact_file = tmp_path / "xarm7.urdf"
    exact_file.write_text(
        Path(rounded.source).read_text().replace("1.5708", repr(math.pi / 2)), encoding="utf-8"
    )
    exact = invdyn.load(exact_file, floating_base=False)
    base = base_parameters(rounded)
    assert len(base) == len(base_parameters(exact))
    q, v, a = states(rounded, "rounded-angles", n=5)
    params = invdyn.inertial_parameters(rounded)
    full = invdyn.joint_torque_regressor(rounded, q, v, a)
    expected = full @ params
    error = np.abs(base.regressor(full) @ base.of(params) - expected).max()
    assert error <= 1e-6 * np.abs(expected).max()


def _excited(panda, plant, control_rate: float = 1000.0):
    """The Panda tracking a 10 s Fourier excitation under computed torque in `plant`."""
    pytest.importorskip("mujoco")
    from invdyn.control import Gains, computed_torque, fourier
    from invdyn.sim import rollout

    rng = np.random.default_rng(0)
    span = np.minimum(panda.q_upper - panda.q_lower, 4.0)
    harmonics = np.arange(1, 6)[:, None]
    sines, cosines = (0.05 * span * rng.normal(size=(5, panda.nv)) / harmonics for _ in range(2))
    centre = 0.5 * (panda.q_upper + panda.q_lower)
    trajectory = fourier(panda, centre, sines, cosines, base_frequency=0.2, duration=10.0)
    controller = computed_torque(panda, trajectory, Gains.critically_damped(20.0))
    q0, v0, _ = trajectory(0.0)
    return rollout(
        panda, controller, q0=q0, v0=v0, duration=10.0, control_rate=control_rate, plant=plant
    )


def test_noise_free_simulated_panda_is_identified_exactly(panda):
    pytest.importorskip("mujoco")
    from invdyn.sim import Plant, plant_model

    # semi-implicit Euler: (v_k+1 - v_k) / dt is the acceleration of (q_k, v_k, tau_k) exactly
    plant = Plant(integrator="euler", joint_limits=False, payload=1.5, mass_scale=1.1)
    run = _excited(panda, plant)
    a = np.diff(run.v, axis=0) / np.diff(run.time)[:, None]
    q, v, tau = run.q[:-1], run.v[:-1], run.tau_applied[:-1]
    train, held_out = slice(0, 7000), slice(7000, None)

    result = identify(panda, q[train], v[train], a[train], tau[train])
    true = result.base.of(invdyn.inertial_parameters(plant_model(panda, plant)))
    error = np.abs(result.estimate - true)
    assert np.all(error <= 1e-6 * np.maximum(np.abs(true), 1e-6)), error.max()
    predicted = result.predict(panda, q[held_out], v[held_out], a[held_out])
    nmse = normalised_mse(predicted, tau[held_out])
    assert np.nanmax(nmse) < 1e-6, nmse


def _synthetic(model, n, seed):
    q, v, a = states(model, f"synthetic-{seed}", n=n)
    return q, v, a, invdyn.rnea(model, q, v, a)


def test_weighted_least_squares_finds_each_joints_noise(panda):
    q, v, a, tau = _synthetic(panda, 3000, 1)
    noise = np.linspace(0.01, 0.5, panda.nv)
    measured = tau + noise * np.random.default_rng(2).normal(size=tau.shape)
    ols = identify(panda, q, v, a, measured, method="ols")
    wls = identify(panda, q, v, a, measured, method="wls")
    assert np.allclose(wls.joint_std, noise, rtol=0.1), (wls.joint_std, noise)
    true = wls.base.of(invdyn.inertial_parameters(panda))
    # weighing the quiet joints more gives a better estimate than treating all alike
    assert np.linalg.norm(wls.estimate - true) < np.linalg.norm(ols.estimate - true)
    # and its standard deviations describe its errors
    assert np.mean(np.abs(wls.estimate - true) / wls.std) < 3.0


def test_torque_offsets_are_recovered(panda):
    q, v, a, tau = _synthetic(panda, 500, 3)
    offsets = np.random.default_rng(4).normal(size=panda.nv)
    result = identify(panda, q, v, a, tau + offsets, offset=True)
    assert np.allclose(result.offsets, offsets, atol=1e-8)
    without = identify(panda, q, v, a, tau + offsets)
    assert np.all(without.offsets == 0.0) and without.joint_std.max() > 0.1


@pytest.mark.slow
@pytest.mark.parametrize(("samples", "noise"), [(3000, 0.05), (150, 1.0)], ids=["rich", "scarce"])
def test_consistent_fit_gives_physical_bodies(panda, samples, noise):
    pytest.importorskip("torch")
    rng = np.random.default_rng(samples)
    plant = panda.replace(
        body_mass=panda.body_mass * rng.uniform(0.8, 1.2, panda.nbody),
        dof_damping=rng.uniform(0.0, 0.5, panda.nv),
        dof_friction=rng.uniform(0.05, 0.5, panda.nv),
    )
    q, v, a = states(panda, f"consistent-{samples}", n=samples)
    measured = invdyn.rnea(plant, q, v, a) + noise * rng.normal(size=(samples, panda.nv))
    consistent = identify(panda, q, v, a, measured, method="consistent")
    wls = identify(panda, q, v, a, measured, method="wls")
    bodies = consistent.params[: 10 * panda.nbody].reshape(panda.nbody, 10)
    eigenvalues = np.linalg.eigvalsh(pseudo_inertias(bodies))
    assert np.all(eigenvalues > 0.0), eigenvalues.min(axis=1)
    assert np.all(consistent.params[10 * panda.nbody :] >= 0.0)
    invdyn.with_parameters(panda, consistent.params)  # a valid model
    held_out = states(panda, f"consistent-held-out-{samples}", n=1000)
    expected = invdyn.rnea(plant, *held_out)
    errors = {
        name: np.nanmean(normalised_mse(result.predict(panda, *held_out), expected))
        for name, result in (("consistent", consistent), ("wls", wls))
    }
    assert errors["consistent"] <= 1.5 * errors["wls"] + 1e-6, errors
    if noise < 0.1:
        assert errors["consistent"] < 1e-4, errors


def test_bad_input_gets_the_documented_errors(panda, load_robot):
    q, v, a, tau = _synthetic(panda, 50, 5)
    with pytest.raises(invdyn.InputError, match="method must be one of ols, wls, consistent"):
        identify(panda, q, v, a, tau, method="lsq")
    with pytest.raises(invdyn.InputError, match="model must be an invdyn.Model .* got str"):
        identify("panda", q, v, a, tau)
    with pytest.raises(invdyn.InputError, match=r"tau must have shape \(\.\.\., 9\)"):
        identify(panda, q, v, a, tau[:, :4])
    bad = v.copy()
    bad[3, 1] = np.inf
    with pytest.raises(invdyn.InputError, match="v holds a non-finite value"):
        identify(panda, q, bad, a, tau)
    with pytest.raises(invdyn.InputError, match="equations for .* unknowns"):
        identify(panda, q[:3], v[:3], a[:3], tau[:3])
    with pytest.raises(invdyn.InputError, match=r"hold no samples \(batch shape \(0,\)\)"):
        identify(panda, q[:0], v[:0], a[:0], tau[:0])
    # the robot held still: gravity alone cannot separate the inertias
    still = np.zeros_like(v)
    with pytest.raises(invdyn.InputError, match="do not excite every base parameter"):
        identify(panda, q, still, still, invdyn.rnea(panda, q, still, still))
    with pytest.raises(invdyn.InputError, match="tau is zero in every sample"):
        identify(panda, q, v, a, np.zeros_like(tau), method="consistent")
    with pytest.warns(UserWarning, match="torque of panda_joint2 is zero in every sample"):
        identify(panda, q, v, a, np.where(np.arange(panda.nv) == 1, 0.0, tau))
    with pytest.raises(
        invdyn.InputError, match=r"base: of a robot with 78 parameters, not panda \(117\)"
    ):
        identify(panda, q, v, a, tau, base=base_parameters(load_robot("ur5")))
    with pytest.warns(UserWarning, match="450 equations for 76 unknowns, fewer than 10 each"):
        result = identify(panda, q, v, a, tau)
    with pytest.raises(invdyn.InputError, match=r"with 117 parameters and 9 joints, not ur5"):
        result.predict(load_robot("ur5"), *states(load_robot("ur5"), "other-robot", n=2))
    with pytest.raises(invdyn.InputError, match="samples: 2 states give 18 equations"):
        base_parameters(panda, samples=2)
    with pytest.raises(invdyn.InputError, match="has no moving joint"):
        base_parameters(panda.replace(**_no_joints(panda)))
    locked = panda.replace(q_upper=np.where(np.arange(panda.nq) == 2, panda.q_lower, panda.q_upper))
    with pytest.raises(invdyn.InputError, match="'panda_joint3' has no range to move in"):
        optimise_excitation(locked, ExcitationSettings(starts=1, iterations=1))


def test_identification_is_saved_and_read_back(panda, load_robot, tmp_path):
    q, v, a, tau = _synthetic(panda, 400, 3)
    for method in ("wls", "consistent"):
        result = identify(panda, q, v, a, tau, method=method, offset=True)
        path = result.save(tmp_path / f"{method}.npz")
        again = load_identification(path, panda)
        assert again.method == method and again.base.names == result.base.names
        assert np.array_equal(again.predict(panda, q, v, a), result.predict(panda, q, v, a))
        assert (again.params is None) == (result.params is None)
    with pytest.raises(invdyn.DataError, match="9 joints, not solo12"):
        load_identification(path, load_robot("solo12"))
    (tmp_path / "bad.npz").write_text("not an archive")
    with pytest.raises(invdyn.DataError, match="not an identification written by invdyn"):
        load_identification(tmp_path / "bad.npz", panda)
    with pytest.raises(invdyn.DataError, match="not an identification written by invdyn"):
        load_identification(tmp_path / "missing.npz", panda)


def test_filtered_accelerations_of_a_noisy_velocity():
    """A 0.5 Hz sine measured at 200 Hz with noise: the zero-phase filter has no lag, and its
    accelerations, those of the half sample to the next, are closer to the truth than raw
    differences by an order of magnitude."""
    fps = 200.0
    t = np.arange(0.0, 10.0, 1.0 / fps)
    omega = 2.0 * np.pi * 0.5
    clean = np.stack([np.sin(omega * t), np.cos(2.0 * omega * t)], axis=1)
    midpoint = t[:-1] + 0.5 / fps
    true_acceleration = np.stack(
        [omega * np.cos(omega * midpoint), -2.0 * omega * np.sin(2.0 * omega * midpoint)], axis=1
    )
    measured = clean + 0.01 * np.random.default_rng(0).normal(size=clean.shape)
    smooth, acceleration = velocity_and_acceleration(measured, fps, Filter(cutoff=5.0))
    assert smooth.shape == acceleration.shape == (len(t) - 1, 2)
    raw = np.diff(measured, axis=0) * fps
    inner = slice(100, -100)
    assert np.abs(smooth[inner] - clean[:-1][inner]).max() < 0.01
    filtered_error = np.abs(acceleration[inner] - true_acceleration[inner]).max()
    assert filtered_error < 0.1 * np.abs(raw[inner] - true_acceleration[inner]).max()
    # no filter: the samples but the last, and plain forward differences
    unfiltered = velocity_and_acceleration(measured, fps, Filter(cutoff=None))
    assert np.array_equal(unfiltered[0], measured[:-1])
    assert np.array_equal(unfiltered[1], raw)
    with pytest.raises(
        invdyn.InputError, match=r"100 Hz is not below 100 Hz, half the sampling rate of 200 Hz"
    ):
        velocity_and_acceleration(measured, fps, Filter(cutoff=100.0))
    with pytest.raises(invdyn.InputError, match=r"cutoff \(--cutoff\) must be positive"):
        Filter(cutoff=-1.0)


def test_damping_of_torques_held_over_several_physics_steps(panda):
    """Torques held over 5 ms frames of five 1 ms steps with implicit damping: positions and
    velocities 2 ms into each frame (`frame_share`) give the plant's damping on every joint;
    at the frames' starts, the gravity torque lags and the shoulder's damping is far off."""
    pytest.importorskip("mujoco")
    from invdyn.sim import Plant, plant_model

    plant = Plant(joint_limits=False, payload=1.5, damping=0.2)
    run = _excited(panda, plant, control_rate=200.0)
    true = plant_model(panda, plant).dof_damping
    assert frame_share(200.0, plant.timestep) == pytest.approx(0.4)
    assert frame_share(1000.0, plant.timestep) == 0.0 and frame_share(200.0, None) == 0.5

    def damping(share):
        v, a = velocity_and_acceleration(run.v, 200.0, Filter(cutoff=None), share)
        q = integrate(panda, run.q[:-1], difference(panda, run.q[:-1], run.q[1:]), share)
        result = identify(panda, q, v, a, run.tau_applied[:-1], method="ols")
        names = list(result.base.names)
        return result.estimate[[names.index(f"{joint}.damping") for joint in panda.dof_names]]

    assert np.allclose(damping(frame_share(200.0, plant.timestep)), true, atol=1e-3)
    assert np.abs(damping(0.0) - true).max() > 0.02


def test_optimised_excitation_is_better_conditioned_and_within_limits(load_robot):
    pytest.importorskip("torch")
    model = load_robot("ur5", floating_base=False)
    settings = ExcitationSettings(harmonics=3, samples=60, starts=1, iterations=25)
    excitation = optimise_excitation(model, settings, rng=1)
    assert excitation.condition < 0.8 * excitation.initial_condition
    # the trajectory's own regressor has the condition number reported
    times = np.arange(settings.samples) / (settings.samples * settings.base_frequency)
    q, v, a = excitation.trajectory(times)
    base = base_parameters(model, rng=np.random.default_rng(1))
    stacked = base.regressor(invdyn.joint_torque_regressor(model, q, v, a)).reshape(-1, len(base))
    assert np.isclose(np.linalg.cond(stacked), excitation.condition, rtol=1e-6)
    dense = np.linspace(0.0, 1.0 / settings.base_frequency, 2000)
    q, v, a = excitation.trajectory(dense)
    span = model.q_upper - model.q_lower
    assert np.all(q >= model.q_lower + 0.05 * span - 1e-9)
    assert np.all(q <= model.q_upper - 0.05 * span + 1e-9)
    assert np.all(np.abs(v) <= model.dof_velocity_limit) and np.abs(a).max() <= 10.0
    with pytest.raises(invdyn.InputError, match="limit_margin must be below 0.5"):
        ExcitationSettings(limit_margin=0.5)


def _no_joints(model):
    """Fields of a model with no moving body (its frames on the world)."""
    return {
        "body_name": (), "jnt_name": (), "body_parent": np.zeros(0, int),
        "body_mass": np.zeros(0), "body_com": np.zeros((0, 3)), "body_inertia": np.zeros((0, 3, 3)),
        "jnt_type": np.zeros(0, int), "jnt_axis": np.zeros((0, 3)), "jnt_pos": np.zeros((0, 3)),
        "jnt_rot": np.zeros((0, 3, 3)), "q_lower": np.zeros(0), "q_upper": np.zeros(0),
        "dof_velocity_limit": np.zeros(0), "dof_effort_limit": np.zeros(0),
        "dof_armature": np.zeros(0), "dof_damping": np.zeros(0), "dof_friction": np.zeros(0),
        "frame_body": np.full(len(model.frame_name), -1),
    }  # fmt: skip


def test_an_output_directory_without_its_report_is_refused(tmp_path):
    from invdyn.ident.run import read_report

    with pytest.raises(invdyn.DataError, match="not a report of invdyn ident"):
        read_report(tmp_path)
    (tmp_path / "report.json").write_text('{"robot": "panda"}')
    with pytest.raises(invdyn.DataError, match="no source or filter"):
        read_report(tmp_path)


def test_armature_that_identified_urdf_cannot_hold_is_named(panda):
    """URDF has no rotor inertia: identified armature that matters to a joint's torques is
    named in a warning, armature that does not is not."""
    from invdyn.ident.run import ARMATURE_SHARE, _warn_of_armature

    inertia = np.diag(invdyn.mass_matrix(panda, neutral(panda)))
    armature = np.zeros(panda.nv)
    armature[0] = 10 * ARMATURE_SHARE * inertia[0]
    armature[1] = 0.1 * ARMATURE_SHARE * inertia[1]
    armature[-1] = 10 * ARMATURE_SHARE * inertia[-1]  # a finger: prismatic, its armature a mass
    listed = r"panda_joint1 [\d.e-]+ kg m\^2, panda_finger_joint2 [\d.e-]+ kg \("
    with pytest.warns(UserWarning, match=rf"armature .*: {listed}"):
        _warn_of_armature(panda.replace(dof_armature=armature))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_of_armature(panda.replace(dof_armature=np.r_[0.0, armature[1:-1], 0.0]))


def test_end_to_end_hybrid_is_bounded_on_a_joint_that_never_moved(load_robot):
    """A joint held still in the samples: its velocity and acceleration inputs have no spread
    to normalise by, which once scaled a later motion of it by 1e8 (1.6e4 N m off rnea at
    1 rad/s). Building the hybrid leaves the caller's torch random stream alone."""
    torch = pytest.importorskip("torch")
    from invdyn.ident.hybrid import EndToEndSettings, train_end_to_end
    from invdyn.ident.run import Samples

    robot = load_robot("planar_2r")
    rng = np.random.default_rng(0)
    n = 256
    q = np.column_stack([rng.uniform(-2, 2, n), np.full(n, 0.3)])
    v = np.column_stack([rng.normal(size=n), np.zeros(n)])
    a = np.column_stack([rng.normal(size=n), np.zeros(n)])
    tau = invdyn.rnea(robot, q, v, a)
    samples = Samples(q, v, a, tau, np.array([0, n]))
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    settings = EndToEndSettings(hidden=(16,), epochs=3, batch_size=64)
    hybrid = train_end_to_end(robot, invdyn.inertial_parameters(robot), samples, settings)
    assert torch.equal(torch.rand(3), expected)
    moved = np.column_stack([v[:, 0], np.ones(n)]), np.column_stack([a[:, 0], np.ones(n)])
    error = hybrid.predict(q, *moved) - invdyn.rnea(robot, q, *moved)
    assert np.abs(error).max() < 0.5 * np.abs(tau).max(), np.abs(error).max()


def test_episodes_too_short_for_the_filter_are_named_and_left_out(load_robot, tmp_path):
    """Of five episodes of a double pendulum swinging (torques by rnea), the second is too
    short for the filter's edges: a warning names it, and the report's parts leave it out."""
    from invdyn.ident.run import identify_dataset
    from invdyn.learn.datasets import Episode, read_dataset, write_dataset

    model = load_robot("double_pendulum")
    fps = 100.0

    def swing(frames: int, phase: float) -> Episode:
        t = np.arange(frames) / fps
        w = np.array([2.0, 3.0])
        q = np.sin(w * t[:, None] + phase)
        v = w * np.cos(w * t[:, None] + phase)
        a = -(w**2) * q
        return Episode(state=np.hstack([q, v]), action=invdyn.rnea(model, q, v, a), timestamp=t)

    joints = model.joint_names
    path = write_dataset(
        tmp_path / "swings",
        [swing(frames, phase) for frames, phase in zip([300, 20, 300, 300, 300], range(5))],
        fps=fps,
        state_names=[f"{k}.{j}" for k in "qv" for j in joints],
        action_names=[f"tau.{j}" for j in joints],
    )
    with pytest.warns(UserWarning, match=r"episode 1 too short for a filter of 10.0 Hz at 100 fps"):
        found = identify_dataset(read_dataset(path), model, method="ols")
    assert (found.train_part, found.held_out_part) == ("episodes 0, 2-3", "episode 4")
    assert len(found.train.starts) == 4  # three episodes' samples


@pytest.mark.parametrize("robot", ["panda", "ur5", "planar_2r"])
def test_armature_of_a_joint_on_the_world_moves_into_its_link(load_robot, robot, tmp_path):
    """URDF has no armature, but a revolute joint on the world turns its link alone: the link
    holds that armature as a rotor, and the written URDF has the identified dynamics; other
    joints keep theirs."""
    from invdyn.ident.run import urdf_expressible
    from invdyn.io.urdf import write_urdf

    model = load_robot(robot)
    armature = np.full(model.nv, 0.05)
    identified = model.replace(dof_armature=armature)
    expressed = urdf_expressible(identified)
    assert expressed.dof_armature[0] == 0.0 and np.all(expressed.dof_armature[1:] == 0.05)
    q, v, a = states(model, "rotor", n=6)
    expected = invdyn.rnea(identified, q, v, a)
    np.testing.assert_allclose(invdyn.rnea(expressed, q, v, a), expected, atol=1e-12)
    write_urdf(expressed, tmp_path / "identified.urdf")
    loaded = invdyn.load(tmp_path / "identified.urdf", friction=True)
    first_only = identified.replace(dof_armature=np.where(np.arange(model.nv) == 0, 0.05, 0.0))
    np.testing.assert_allclose(
        invdyn.rnea(loaded, q, v, a), invdyn.rnea(first_only, q, v, a), atol=1e-10
    )


def test_an_identification_worse_than_the_nominal_model_is_named(tmp_path):
    """Torques of the exact double pendulum with 5 % noise: ten samples fit their noise, and
    the joints where the identified model then predicts held-out torques worse than the
    nominal one are named; two thousand samples match the nominal model, quietly."""
    from invdyn.ident.run import identify_table
    from invdyn.sim.rollout import csv_columns

    model = invdyn.load("double_pendulum")
    names = [name for name in csv_columns(model) if name.startswith(("q.", "v."))]
    dofs = [name.removeprefix("v.") for name in names if name.startswith("v.")]
    header = [*names, *(f"a.{d}" for d in dofs), *(f"tau.{d}" for d in dofs)]
    # exact torques: both errors are rounding, whatever their ratio
    for rows, noise, named in ((12, 0.05, "joint1, joint2"), (2000, 0.05, None), (12, 0.0, None)):
        rng = np.random.default_rng(0)
        q, v, a = states(model, f"worse-{rows}", n=rows)
        tau = invdyn.rnea(model, q, v, a)
        tau += noise * tau.std(axis=0) * rng.normal(size=tau.shape)
        path = tmp_path / f"{rows}-{noise}.csv"
        np.savetxt(
            path, np.hstack([q, v, a, tau]), delimiter=",", header=",".join(header), comments=""
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            found = identify_table(path, model, method="ols")
        messages = [str(w.message) for w in caught if "nominal model's" in str(w.message)]
        worse = found.identified_nmse > np.maximum(2.0 * found.nominal_nmse, 1e-6)
        if named is None:
            assert not messages and not worse.any(), messages
        else:
            assert worse.all() and len(messages) == 1, messages
            assert messages[0].startswith(f"on {named} the identified model's"), messages
    for share in (0.0, 1.0, float("nan")):
        with pytest.raises(invdyn.InputError, match=r"held_out \(--held-out\)"):
            identify_table(path, model, held_out=share)
