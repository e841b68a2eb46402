"""Whole-body control: a quadruped in MuJoCo, standing on its four feet and swaying."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

import invdyn
from conftest import requires_erd, unannounced
from invdyn.configuration import random_configuration

pytest.importorskip("mujoco")
pytest.importorskip("proxsuite")

from invdyn.control.wbc import (
    CenterOfMassTask,
    OrientationTask,
    PointContact,
    PostureTask,
    WholeBodyController,
)
from invdyn.experiments.balance import (
    STANCES,
    Scenario,
    foot_contacts,
    run_balance,
    standing,
    with_stance,
)
from invdyn.sim import Plant, rollout

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
FOOT_RADIUS = 0.0175  # Solo12's foot spheres
FRICTION = 0.8


@pytest.fixture(scope="module")
def solo(load_robot):
    return load_robot("solo12", floating_base=True)


def _standing(model):
    """Knees bent, base level, the lowest foot sphere on the ground."""
    q = np.zeros(model.nq)
    q[6] = 1.0
    q[7:] = [0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6]
    lowest = min(invdyn.frame_placement(model, q, foot)[1][2] for foot in FEET)
    q[2] = FOOT_RADIUS - lowest
    return q


@requires_erd
def test_quadruped_sways_on_four_feet(solo):
    """The centre of mass follows a 2 cm, 0.5 Hz side-to-side sway within 1 cm RMS; every
    step's contact forces are in their friction cones and its torques within the limit."""
    q0 = _standing(solo)
    start = invdyn.center_of_mass(solo, q0)
    omega, amplitude = 2.0 * np.pi * 0.5, 0.02

    def sway(t):
        s, c = np.sin(omega * t), np.cos(omega * t)
        lateral = np.array([0.0, 1.0, 0.0]) * amplitude
        return start + lateral * s, lateral * omega * c, -lateral * omega**2 * s

    contacts = [PointContact(foot, friction=FRICTION) for foot in FEET]
    tasks = [CenterOfMassTask(sway), OrientationTask(), PostureTask()]
    controller = WholeBodyController(solo, contacts, tasks, torque_limit=3.0)
    plant = Plant(feet=FEET, foot_radius=FOOT_RADIUS, ground_friction=FRICTION)
    run = rollout(solo, controller, q0=q0, duration=3.0, plant=plant)

    reference = np.array([sway(t)[0] for t in run.time])
    error = np.linalg.norm(invdyn.center_of_mass(solo, run.q) - reference, axis=1)
    assert np.sqrt(np.mean(error**2)) < 0.01, error.max()
    assert abs(run.q[-1, 2] - q0[2]) < 0.01  # it stands: the base keeps its height
    forces = np.array([step.forces for step in controller.steps])
    assert np.all(forces[..., 2] >= 0.0)
    assert np.all(np.hypot(forces[..., 0], forces[..., 1]) <= FRICTION * forces[..., 2] + 1e-9)
    torques = np.array([step.tau for step in controller.steps])
    assert np.all(np.abs(torques[:, 6:]) <= 3.0 + 1e-9) and np.all(torques[:, :6] == 0.0)


@requires_erd
def test_bad_controllers_are_refused(solo, load_robot):
    contacts = [PointContact(foot) for foot in FEET]
    with pytest.raises(invdyn.InputError, match="needs a floating base"):
        WholeBodyController(load_robot("solo12", floating_base=False), contacts)
    with pytest.raises(invdyn.InputError, match="no frame named 'paw'"):
        WholeBodyController(solo, [PointContact("paw")])
    with pytest.raises(invdyn.InputError, match="at least one contact"):
        WholeBodyController(solo, [])
    with pytest.raises(invdyn.InputError, match="min_force < max_force"):
        PointContact("FL_FOOT", min_force=5.0, max_force=1.0)
    with pytest.raises(invdyn.InputError, match="friction must be positive"):
        PointContact("FL_FOOT", friction=0.0)


@requires_erd
@pytest.mark.parametrize("name", ["squat", "push", "lift"])
def test_go1_scenarios(load_robot, name):
    """Go1 (13 kg) squats 2 cm at 0.5 Hz within 1 cm RMS of its reference, takes a 50 N push
    on the base for 0.1 s without falling, its centre of mass back within 1 cm, and lifts a
    foot by 5 cm on the other three; the controller's forces stay in the cones and its
    torques within the limits."""
    from invdyn.experiments.balance import Scenario, run_balance

    go1 = load_robot("go1", floating_base=True)
    run = run_balance(go1, Scenario(name=name, duration=3.5))
    assert run.feet == ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
    assert run.com_rms < 0.01 and not run.fell
    assert run.cone_margin >= -1e-9 and run.torque_margin >= -1e-9
    # a robot without torque limits has no margin, rather than all of its limit
    unlimited = dataclasses.replace(run, torque_limit=np.full_like(run.torque_limit, np.inf))
    assert np.isnan(unlimited.torque_margin)
    if name == "push":
        # pushed forwards, then back where it stood
        assert np.max(run.com[:, 0] - run.com[0, 0]) > 0.005
        assert np.linalg.norm(run.com[-1] - run.com_reference[-1]) < 0.01
    if name == "lift":
        height = invdyn.frame_placement(go1, run.q[-1], "FL_foot")[1][2]
        assert height > 0.02 + 0.045  # the foot sphere's centre started 2 cm up
        assert np.all(np.isnan(run.forces[run.time >= 1.5, 0]))  # no contact where it left
    assert run.lifted == ("FL_foot" if name == "lift" else None)
    assert run.summary()["lifted_foot"] == run.lifted


@requires_erd
def test_wbc_command(tmp_path, capsys):
    from invdyn import cli

    out = tmp_path / "wbc"
    status = cli.main(
        [
            "wbc",
            "solo12",
            "--scenario",
            "sway",
            "--duration",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    printed = capsys.readouterr().out
    assert status == 0 and "sway for 1 s on FL_FOOT, FR_FOOT, HL_FOOT, HR_FOOT" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["com_rms_m"] < 0.01 and report["fell"] is False
    assert (out / "wbc.png").stat().st_size > 0
    # a robot without feet, or without a standing configuration, is told so
    assert cli.main(["wbc", "panda", "--out", str(out)]) == 2
    assert "panda is a fixed-base robot; whole-body control" in capsys.readouterr().err
    # an MJCF file floats where it declares a free joint, and nowhere else
    slider = tmp_path / "slider.xml"
    slider.write_text(
        '<mujoco><worldbody><body name="cart"><joint name="x" type="slide"/>'
        '<geom type="box" size="0.1 0.1 0.1" mass="1"/></body></worldbody></mujoco>'
    )
    assert cli.main(["wbc", str(slider), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{slider}: no free joint at its root, and whole-body control balances" in err, err
    # a built-in robot whose URDF names no foot stands as its stance says: the small
    # quadruped on its *_contact frames, legs straight
    feet = "FL_contact,FR_contact,BL_contact,BR_contact"
    options = ["--duration", "0.2", "--out", str(out), "--no-progress"]
    assert cli.main(["wbc", "quadruped", *options]) == 0
    assert f"on {feet.replace(',', ', ')}: " in capsys.readouterr().out
    assert json.loads((out / "report.json").read_text())["fell"] is False
    for arguments, message in (
        (["--sole", "0.1,0.1"], "--sole '0.1,0.1': expected 5 comma-separated numbers"),
        (["--feet", ","], "--feet ',': expected comma-separated names"),
        (["--pose", "sitting"], r"no standing configuration \(sitting\)"),
        (["--pose", "0,x"], "--pose '0,x': expected a name or comma-separated numbers"),
        (["--pose", "0,0"], r"Scenario.pose \(--pose\) must have shape \(\.\.\., 19\), got \(2,\)"),
        (["--sole=-0.1,0.1,-0.1,0.1,0"], "describes flat feet, and solo12 stands on none"),
    ):
        assert cli.main(["wbc", "solo12", *arguments, *options]) == 2
        assert re.search(message, capsys.readouterr().err)
    for arguments, message in (
        (["--duration", "0"], "--duration must be a positive number"),
        (["--scenario", "sway", "--amplitude", "-1"], "--amplitude must be a positive number"),
        (["--scenario", "push", "--push", "inf"], "--push must be a finite force"),
    ):
        assert cli.main(["wbc", "solo12", *options, *arguments]) == 2
        assert message in capsys.readouterr().err
    # a margin within the QP's round-off of zero prints as zero
    margin = cli.wbc._margin
    assert (margin(-1.6e-10), margin(2e-5), margin(25.1)) == ("0", "2e-05", "25.1")
    # an option of another scenario is refused
    assert cli.main(["wbc", "solo12", "--push", "10", "--out", str(out)]) == 2
    assert "--push sets push, not stand: pass --scenario push" in capsys.readouterr().err


@requires_erd
def test_humanoid_sways_on_flat_feet(load_robot):
    """Talos (90 kg) on the four corners of each sole, held still as whole feet: it sways 2 cm
    within 1 cm RMS, its forces in the cones and its torques within the limits."""
    from invdyn.experiments.balance import Scenario, run_balance

    talos = load_robot("talos", floating_base=True)
    run = run_balance(talos, Scenario(name="sway", duration=2.0))
    assert run.feet == ("left_sole_link", "right_sole_link") and len(run.contacts) == 8
    assert run.com_rms < 0.01 and not run.fell
    assert run.cone_margin >= -1e-9 and run.torque_margin >= -1e-9


@requires_erd
def test_a_urdf_rooted_at_a_world_link_floats_stands_and_is_pushed(solo, tmp_path, capsys):
    """ROS descriptions often root a robot at a massless link ``world`` fixed to its base.
    Floated, that link is body 0, whose name MuJoCo keeps for its own world body: the
    simulation names it apart, and a push finds it by its joint."""
    from invdyn import cli
    from invdyn.experiments.balance import Scenario, foot_contacts, run_balance, standing

    root = solo.body_name[0]
    bolted = (
        Path(solo.source)
        .read_text()
        .replace(
            f'<link name="{root}"',
            f'<link name="world"/><joint name="bolt" type="fixed"><parent link="world"/>'
            f'<child link="{root}"/></joint><link name="{root}"',
            1,
        )
    )
    path = tmp_path / "solo12_world.urdf"
    path.write_text(bolted)
    model = invdyn.load(path, floating_base=True)
    assert model.body_name[0] == "world" and model.nv == solo.nv
    pose = standing(solo, foot_contacts(solo, Scenario()), Scenario().foot_radius)
    options = ["--pose", ",".join(f"{x:.17g}" for x in pose), "--no-progress"]
    out = ["--duration", "0.2", "--out", str(tmp_path / "wbc")]
    assert cli.main(["wbc", str(path), *options, *out]) == 0
    assert "stood" in capsys.readouterr().out
    push = Scenario(name="push", push=5.0, push_start=0.05, duration=0.3, pose=pose)
    pushed, still = run_balance(model, push), run_balance(model, Scenario(duration=0.3, pose=pose))
    assert not pushed.fell and pushed.com_rms > 3 * still.com_rms


@requires_erd
def test_contact_inverse_dynamics(solo):
    """Standing still, the feet carry the weight; moving, the torques and forces satisfy every
    row of the equations of motion, the forces are in their pyramids, and the base rows need
    no torque."""
    from invdyn.control.wbc import contact_inverse_dynamics

    q = _standing(solo)
    contacts = [PointContact(foot, friction=FRICTION) for foot in FEET]
    zero = np.zeros(solo.nv)
    tau, forces = contact_inverse_dynamics(solo, q, zero, zero, contacts)
    weight = solo.total_mass * 9.81
    assert np.allclose(forces.sum(axis=0), [0.0, 0.0, weight], atol=1e-6)
    rng = np.random.default_rng(0)
    v, a = 0.1 * rng.normal(size=solo.nv), 0.1 * rng.normal(size=solo.nv)
    tau, forces = contact_inverse_dynamics(solo, q, v, a, contacts)
    jacobians = [invdyn.frame_jacobian(solo, q, foot)[3:] for foot in FEET]
    generalised = sum(j.T @ f for j, f in zip(jacobians, forces, strict=True))
    assert np.allclose(invdyn.rnea(solo, q, v, a), tau + generalised, atol=1e-6)
    assert np.all(tau[:6] == 0.0)
    assert np.all(np.hypot(forces[:, 0], forces[:, 1]) <= FRICTION * forces[:, 2] + 1e-9)
    # falling faster than gravity would need feet that pull: refused
    lift = np.zeros(solo.nv)
    lift[2] = -30.0  # base z acceleration, downwards faster than falling: feet would pull
    with pytest.raises(invdyn.InvdynError, match="no contact forces"):
        contact_inverse_dynamics(solo, q, zero, lift, contacts)


@requires_erd
def test_tasks_and_contacts_that_change(solo, load_robot):
    """A task that replaces another holds its own reference; contacts on one body (iCub's foot
    and sole frames) are held as one body; bad tasks and limits name themselves."""
    from invdyn.control.wbc import FramePositionTask
    from invdyn.experiments.balance import Scenario, foot_contacts

    q = _standing(solo)
    rng = np.random.default_rng(1)
    v = 0.05 * rng.normal(size=solo.nv)
    controller = WholeBodyController(solo, [PointContact(f) for f in FEET], [OrientationTask()])
    controller(0.0, q, v)
    controller.tasks = (PostureTask(),)
    controller.tasks = (FramePositionTask("HR_FOOT"), CenterOfMassTask())
    controller(0.001, q, v)  # the new tasks hold their own references
    controller.reset()
    assert controller.steps == []

    icub = load_robot("icub", floating_base=True)
    contacts = foot_contacts(icub, Scenario())
    assert {c.frame for c in contacts} == {"l_sole", "r_sole"} and len(contacts) == 8
    state = random_configuration(icub, rng=2)
    WholeBodyController(icub, contacts)(0.0, state, 0.05 * rng.normal(size=icub.nv))

    with pytest.raises(invdyn.InputError, match="CenterOfMassTask.weight must be positive"):
        CenterOfMassTask(weight=0.0)
    with pytest.raises(invdyn.InputError, match="PostureTask.stiffness must be >= 0"):
        PostureTask(stiffness=-1.0)
    with pytest.raises(invdyn.InputError, match="torque_limit must be > 0"):
        WholeBodyController(solo, [PointContact("FL_FOOT")], torque_limit=np.nan)
    with pytest.raises(invdyn.InputError, match="PostureTask.reference must be 19 finite"):
        WholeBodyController(solo, [PointContact("FL_FOOT")], [PostureTask(np.zeros(3))])(0.0, q, v)
    with pytest.raises(invdyn.InputError, match="a task must be one of CenterOfMassTask, .*'com'"):
        WholeBodyController(solo, [PointContact("FL_FOOT")], ["com"])(0.0, q, v)
    # numpy scalars are numbers; a state is one (nq,) q and (nv,) v, lists too, not a batch
    assert CenterOfMassTask(stiffness=np.int64(100)).stiffness == 100
    assert OrientationTask(stiffness=np.float32(10.0)).stiffness == 10.0
    controller = WholeBodyController(solo, [PointContact(f) for f in FEET])
    assert controller(0.0, list(q), list(v)).shape == (solo.nv,)
    with pytest.raises(invdyn.InputError, match=r"q must have shape \(19,\), one state, got \(2"):
        controller(0.0, np.stack([q, q]), np.stack([v, v]))


@requires_erd
def test_a_humanoid_stands_on_the_soles_it_is_told_of(load_robot):
    """G1's URDF names no foot: told its ankle links are flat feet, the corners of its soles
    (its collision spheres) and its neutral pose, it stands on all eight corners, level on
    the ground, its weight shared between them."""
    from invdyn.experiments.balance import Scenario, foot_contacts, run_balance, standing

    g1 = load_robot("g1", floating_base=True)
    feet = ("left_ankle_roll_link", "right_ankle_roll_link")
    scenario = Scenario(duration=0.3, soles=feet, sole=(-0.05, 0.12, -0.03, 0.03, -0.03),
                        pose="neutral")  # fmt: skip
    contacts = foot_contacts(g1, scenario)
    assert len(contacts) == 8 and {c.position for c in contacts} == {
        (x, y, -0.03) for x in (-0.05, 0.12) for y in (-0.03, 0.03)
    }
    q0 = standing(g1, contacts, scenario.foot_radius, scenario.pose)
    np.testing.assert_array_equal(q0[7:], 0.0)
    placements = [invdyn.frame_placement(g1, q0, c.frame) for c in contacts]
    corners = np.array([p + r @ c.position for (r, p), c in zip(placements, contacts)])
    np.testing.assert_allclose(corners[:, 2], scenario.foot_radius, atol=1e-9)
    run = run_balance(g1, scenario)
    assert run.feet == feet and not run.fell and run.com_rms < 1e-3
    weight = g1.total_mass * 9.81
    np.testing.assert_allclose(np.nansum(run.forces[-1, :, 2]), weight, rtol=0.02)
    assert np.all(run.forces[-1, :, 2] > 0.02 * weight / 8)


@requires_erd
@pytest.mark.parametrize("name", sorted(STANCES))
def test_built_in_robots_without_feet_or_standing_states_have_stances(load_robot, name):
    """Each stance names feet of the robot, and a pose in its limits in which every foot
    reaches the ground under the centre of mass; what a scenario names itself wins."""
    robot = load_robot(name, floating_base=True)
    with pytest.raises(invdyn.InputError):
        bare = Scenario()
        standing(robot, foot_contacts(robot, bare), bare.foot_radius, bare.pose)
    scenario = with_stance(robot, Scenario())
    assert (scenario.feet, scenario.soles, scenario.pose) != (None, None, None)
    contacts = foot_contacts(robot, scenario)
    q0 = standing(robot, contacts, scenario.foot_radius, scenario.pose)
    assert np.all((q0 >= robot.q_lower) & (q0 <= robot.q_upper))
    own = Scenario(feet=(contacts[0].frame,), pose="neutral")
    assert with_stance(robot, own) == own
    # the same file loaded under another name, or another file of the same name, is not the
    # built-in robot
    assert with_stance(robot.replace(name="mine"), Scenario()) == Scenario()
    assert with_stance(robot.replace(source="robot.xml"), Scenario()) == Scenario()


@requires_erd
def test_legs_without_side_joints_lift_a_foot(load_robot):
    """Solo8's legs have no side joints: its contact constraints, near-dependent as its centre
    of mass moves, left ProxQP reporting the QP infeasible (at 8 ms from a warm start, and at
    1 s from a cold one) until rows that take a millionth of the largest's gain were dropped.
    It lifts a foot on the diagonal of the other three."""
    solo8 = load_robot("solo8", floating_base=True)
    run = run_balance(solo8, Scenario(name="lift", duration=2.0))
    assert not run.fell and run.time[-1] > 1.99
    lifted = [k for k, c in enumerate(run.contacts) if c.frame == run.contacts[0].frame]
    assert len(run.steps[-1].contacts) == len(run.contacts) - len(lifted)


@requires_erd
def test_dependent_contact_constraints_keep_the_qp_solvable(load_robot):
    """The small quadruped's legs have two joints each under point feet of three constraints:
    their rows are dependent, and feet that slip (any velocity) ask for contact accelerations
    outside their range. The QP holds what can be held, and the feet's accelerations there
    are those of the drift's least-squares solution."""
    from invdyn.experiments.balance import Scenario, foot_contacts, standing

    robot = load_robot("quadruped", floating_base=True)
    scenario = Scenario(feet=("FL_contact", "FR_contact", "BL_contact", "BR_contact"))
    contacts = foot_contacts(robot, scenario)
    q = standing(robot, contacts, 0.02, "neutral")
    v = 0.1 * np.random.default_rng(0).normal(size=robot.nv)
    controller = WholeBodyController(robot, contacts, [CenterOfMassTask(), PostureTask()])
    assert np.all(np.isfinite(controller(0.0, q, v)))
    jacobian = np.vstack([invdyn.frame_jacobian(robot, q, c.frame)[3:] for c in contacts])
    assert np.linalg.matrix_rank(jacobian) < len(jacobian)
    drift = np.concatenate([invdyn.frame_acceleration(robot, q, v, np.zeros(robot.nv), c.frame)[3:]
                            for c in contacts])  # fmt: skip
    wanted = -jacobian @ np.linalg.lstsq(jacobian, drift, rcond=None)[0]
    a = controller.steps[-1].a
    np.testing.assert_allclose(jacobian @ a, wanted, atol=1e-6)


def test_named_feet_soles_and_poses_are_checked(load_robot):
    from invdyn.experiments.balance import Scenario, foot_contacts, standing

    with pytest.raises(
        invdyn.InputError, match=r"Scenario.sole \(--sole\) must be five finite numbers"
    ):
        Scenario(sole=(0.1, 0.065))
    with pytest.raises(invdyn.InputError, match="each minimum must be below its maximum"):
        Scenario(sole=(0.1, -0.1, -0.05, 0.05, 0.0))
    with pytest.raises(invdyn.InputError, match="feet named twice: a"):
        Scenario(feet=("a", "b"), soles=("a",))
    solo = load_robot("solo12", floating_base=True)
    with pytest.raises(invdyn.InputError, match="no frame named 'FL_FOO'.*FL_FOOT"):
        foot_contacts(solo, Scenario(feet=("FL_FOO",)))
    # naming the feet names all of them: no other frame is one
    contacts = foot_contacts(solo, Scenario(feet=("FL_FOOT", "HR_FOOT")))
    assert [c.frame for c in contacts] == ["FL_FOOT", "HR_FOOT"]
    assert foot_contacts(solo, Scenario(soles=("FL_FOOT",)))[0].position == (0.1, 0.065, 0.0)
    with pytest.raises(
        invdyn.InputError, match=r"feet and Scenario.soles \(--feet, --soles\) name no foot"
    ):
        foot_contacts(solo, Scenario(feet=()))
    with pytest.raises(invdyn.InputError, match="Scenario.feet must be a sequence of frame names"):
        Scenario(feet="FL_FOOT")
    with pytest.raises(
        invdyn.InputError, match=r"Scenario.pose \(--pose\) must be a configuration's name"
    ):
        Scenario(pose=3)
    # lists are kept as tuples: a scenario stays hashable
    listed = Scenario(feet=["FL_FOOT"], sole=[-0.1, 0.1, -0.05, 0.05, 0.0], pose=[0.0] * 19)
    assert listed.feet == ("FL_FOOT",) and isinstance(listed.pose, tuple) and hash(listed)
    with pytest.raises(invdyn.InputError, match="Scenario.sole describes flat feet, and solo12 "
                       "stands on none"):  # fmt: skip
        foot_contacts(solo, Scenario(sole=(-0.1, 0.1, -0.05, 0.05, 0.0)))
    with pytest.raises(invdyn.InputError, match=r"no standing configuration \(crouch\).*it has "
                       r"neutral, standing, straight_standing"):  # fmt: skip
        standing(solo, contacts, 0.02, "crouch")
    # a configuration given by its values stands as a named one does; each foot must reach the
    # ground, and the centre of mass be above them
    contacts = foot_contacts(solo, Scenario())
    named = standing(solo, contacts, 0.02, "standing")
    np.testing.assert_allclose(standing(solo, contacts, 0.02, tuple(named)), named, atol=1e-12)
    with pytest.raises(
        invdyn.InputError, match=r"Scenario.pose \(--pose\) must have shape \(\.\.\., 19\)"
    ):
        standing(solo, contacts, 0.02, (0.0,) * 7)
    turned_nowhere = named.copy()
    turned_nowhere[3:7] = 0.0
    with pytest.raises(
        invdyn.InputError, match=r"Scenario.pose \(--pose\): the quaternion of joint 'root_joint'"
    ):
        standing(solo, contacts, 0.02, tuple(turned_nowhere))
    raised = named.copy()
    raised[solo.jnt_qadr[solo.jnt_name.index("HR_KFE")]] += 0.4
    with pytest.raises(invdyn.InputError, match=r"not every foot reaches the ground: HR_FOOT \d+"):
        standing(solo, contacts, 0.02, tuple(raised))
    with pytest.raises(invdyn.InputError, match="centre of mass is not above its feet"):
        standing(solo, foot_contacts(solo, Scenario(feet=("base_link",))), 0.02, "standing")
    # on its front feet alone, the centre of mass lies behind their support
    front = foot_contacts(solo, Scenario(feet=("FL_FOOT", "FR_FOOT")))
    message = r"its centre of mass, at \(.*\) m, is not above the support of its feet FL_FOOT, "
    with pytest.raises(invdyn.InputError, match=message + "FR_FOOT: it would fall"):
        standing(solo, front, 0.02, "standing")


def test_a_push_acts_in_whole_periods():
    from invdyn.sim import Push

    push = Push((10.0, 0.0, 0.0), start=0.1, duration=0.2)
    assert sum(push.acts_at(k * 0.01) for k in range(100)) == 20
    with pytest.raises(invdyn.InputError, match="Push.duration"):
        Push((1.0, 0.0, 0.0), start=0.0, duration=0.0)


@requires_erd
def test_missing_solver_says_how_to_install_it(solo, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "proxsuite", None)  # import proxsuite fails
    controller = WholeBodyController(solo, [PointContact(foot) for foot in FEET])
    with pytest.raises(ImportError, match=r"pip install 'invdyn\[control\]'"):
        controller(0.0, _standing(solo), np.zeros(solo.nv))


def test_bad_feet_and_scenarios_name_themselves():
    from invdyn.experiments.balance import Scenario
    from invdyn.sim import Plant

    with pytest.raises(invdyn.InputError, match="Plant.feet must be a sequence of feet"):
        Plant(feet="FL_FOOT")
    with pytest.raises(invdyn.InputError, match="a foot is a frame name or"):
        Plant(feet=[3])
    with pytest.raises(invdyn.InputError, match="'FL_FOOT' point"):
        Plant(feet=[("FL_FOOT", (0.0, 1.0))])
    with pytest.raises(invdyn.InputError, match="scenario must be one of"):
        Scenario(name="dance")
    with pytest.raises(invdyn.InputError, match="Scenario.amplitude must be positive"):
        Scenario(amplitude=-0.01)
    # a run that ends before its event would report a push that never came
    early = r"run of {} s \(--duration\) ends before the {} at {} s"
    with pytest.raises(invdyn.InputError, match=early.format(0.5, "push", 1)):
        Scenario(name="push", duration=0.5)
    with pytest.raises(invdyn.InputError, match=early.format(1.4, "lift", 1.5)):
        Scenario(name="lift", duration=1.4)
    Scenario(name="stand", duration=0.5)  # no event


@requires_erd
def test_feet_on_a_frame_fixed_to_the_world_are_refused(load_robot):
    from invdyn.sim import Plant
    from invdyn.sim.mujoco_model import build_mujoco

    panda = load_robot("panda")
    with pytest.raises(invdyn.InputError, match="no frame named 'paw'"):
        build_mujoco(panda, plant=Plant(feet=("paw",)))
    with pytest.raises(invdyn.InputError, match="is fixed to the world"):
        build_mujoco(panda, plant=Plant(feet=(panda.frame_name[0],)))


@requires_erd
def test_effort_zero_bounds_no_joint(load_robot):
    """Romeo's URDF gives its hands effort="0", a limit nobody gave: the controller leaves
    them unbounded, as the plant does; a bad limit of the caller's names its joints."""
    from invdyn.experiments.balance import Scenario, foot_contacts
    from invdyn.sim import torque_limits

    romeo = load_robot("romeo", floating_base=True)
    contacts = foot_contacts(romeo, Scenario())
    controller = WholeBodyController(romeo, contacts)
    assert np.any(romeo.dof_effort_limit[6:] == 0.0)
    np.testing.assert_array_equal(controller.torque_limit, torque_limits(romeo, Plant())[6:])
    limit = np.full(romeo.nv - 6, 10.0)
    limit[[0, 3]] = 0.0, np.nan
    names = romeo.dof_names[6:]
    with pytest.raises(invdyn.InputError, match=f"got {names[0]} = 0, {names[3]} = nan$"):
        WholeBodyController(romeo, contacts, torque_limit=limit)


@requires_erd
def test_anymal_kinova_stands_as_its_own_srdf_says(load_robot, monkeypatch):
    """Its own anymal-kinova.srdf, not ANYmal's (whose arm at 0 is outside the Kinova's
    limits): it stands; a start outside the limits is refused, naming the joints."""
    from invdyn.experiments import balance
    from invdyn.io.srdf import reference_configurations, robot_configurations

    robot = load_robot("anymal_kinova", floating_base=True)
    assert list(robot_configurations(robot)) == ["standing_with_arm_up"]
    run = balance.run_balance(robot, balance.Scenario(duration=0.1))
    assert not run.fell and run.com_rms < 0.001

    srdf = Path(robot.source).parent.parent / "srdf" / "anymal.srdf"
    monkeypatch.setattr(
        balance, "robot_configurations", lambda m: reference_configurations(m, srdf)
    )
    message = r"'standing' puts joints outside .*: j2s6s200_joint_2 = 0 not in \[0.82"
    with pytest.raises(invdyn.InputError, match=message):
        balance.run_balance(robot, balance.Scenario(duration=0.1))


@pytest.mark.parametrize("name", ["stand", "sway", "squat", "push", "lift"])
def test_centre_of_mass_references_start_at_rest_and_are_differentiated(name):
    """Each reference starts at rest where the robot stands; the sway keeps to its amplitude
    either way, the squat goes down to twice it and back; rates and accelerations are the
    references' time derivatives."""
    from invdyn.experiments.balance import Scenario

    start = np.array([0.1, -0.2, 0.5])
    reference = Scenario(name=name, duration=4.0, amplitude=0.03, frequency=0.5).reference(start)
    c0, rate0, _ = reference(0.0)
    np.testing.assert_array_equal(c0, start)
    np.testing.assert_array_equal(rate0, 0.0)
    times = np.linspace(0.0, 4.0, 4001)
    path = np.array([reference(t)[0] for t in times]) - start
    low, high = path.min(axis=0), path.max(axis=0)
    extent = {"sway": ([0, -0.03, 0], [0, 0.03, 0]), "squat": ([0, 0, -0.06], [0, 0, 0])}
    np.testing.assert_allclose((low, high), extent.get(name, (np.zeros(3), np.zeros(3))), atol=1e-5)
    h = 1e-6
    for t in (0.0, 0.3, 1.0, 1.7, 2.0, 3.1):
        before, now, after = reference(t - h), reference(t), reference(t + h)
        np.testing.assert_allclose(now[1], (after[0] - before[0]) / (2 * h), atol=1e-7)
        np.testing.assert_allclose(now[2], (after[1] - before[1]) / (2 * h), atol=1e-6)


@requires_erd
def test_a_push_that_throws_the_robot_ends_the_run(solo, tmp_path):
    """50 N throws Solo12 (2.5 kg): once its capture point leaves its feet the run stops
    there, fallen, with what it has to report and plot."""
    from invdyn.experiments.balance import Scenario, run_balance
    from invdyn.viz.plots import plot_balance

    run = run_balance(solo, Scenario(name="push", push=50.0, push_start=0.1, duration=0.5))
    assert run.fell and 0.1 < run.fell_at < 0.5
    assert len(run.time) == len(run.steps) and run.time[-1] < run.fell_at
    assert run.summary()["fell_at_s"] == run.fell_at
    # the torque panel names the three joints nearest their limits, of solo12's twelve
    panel = plot_balance(run, "pushed").axes[4]
    named = [text.get_text() for text in panel.get_legend().get_texts()]
    peaks = dict(zip(run.joints, (np.abs(run.joint_torques) / run.torque_limit).max(axis=0)))
    assert len(run.joints) == 12 and len(panel.lines) == 12 and len(named) == 3
    assert min(peaks[name] for name in named) >= max(
        peak for name, peak in peaks.items() if name not in named
    )
    # the command says so in its exit status too, for a script to see
    from invdyn import cli

    argv = ["wbc", "solo12", "--scenario", "push", "--push", "50", "--duration", "1.5"]
    assert cli.main([*argv, "--out", str(tmp_path), "--no-progress"]) == 1
    assert json.loads((tmp_path / "report.json").read_text())["fell"] is True


@requires_erd
def test_a_robot_that_falls_while_its_qp_is_solved_has_fallen(load_robot):
    """Bolt, a biped on two point feet, cannot hold its pitch on them: the QP is solved at
    every step while it tips over, and its capture point leaving the line of its feet ends
    the run."""
    from invdyn.experiments.balance import Scenario, run_balance

    run = run_balance(load_robot("bolt", floating_base=True), Scenario(duration=0.3))
    assert run.fell and run.fell_at is not None and run.fell_at < 0.3
    assert len(run.time) == len(run.steps) and run.time[-1] < run.fell_at


@requires_erd
def test_flat_feet_start_level_and_a_singular_mass_matrix_is_refused(load_robot):
    """iCub's SRDF stands it with both soles pitched 3.6 degrees: its base is turned to level
    them. Its neck moves links of no inertia, which no simulation can follow: refused by
    joint name, and with armature it stands."""
    from invdyn.experiments.balance import (
        LEVEL_TOLERANCE,
        Scenario,
        foot_contacts,
        run_balance,
        standing,
    )

    icub = load_robot("icub", floating_base=True)
    scenario = Scenario(duration=0.2)
    contacts = foot_contacts(icub, scenario)
    q0 = standing(icub, contacts, scenario.foot_radius)
    for sole in ("l_sole", "r_sole"):
        normal = invdyn.frame_placement(icub, q0, sole)[0][:, 2]
        assert np.arccos(normal[2]) < 0.1 * LEVEL_TOLERANCE
    with pytest.raises(invdyn.InputError, match=r"singular .* joints 'neck_roll', 'neck_yaw'"):
        run_balance(icub, scenario)
    armature = np.r_[np.zeros(6), np.full(icub.nv - 6, 1e-3)]
    run = run_balance(icub.replace(dof_armature=armature), scenario)
    assert not run.fell and run.com_rms < 1e-3
    # Romeo's fingers move nothing either, but carry no mass: they throw nothing about
    romeo = load_robot("romeo", floating_base=True)
    assert romeo.subtree_mass[0] == pytest.approx(romeo.total_mass)
    assert "LFinger21" in invdyn.dynamics.singular_joints(
        romeo, standing(romeo, foot_contacts(romeo, scenario), scenario.foot_radius)
    )
    assert not run_balance(romeo, scenario).fell


@requires_erd
def test_a_qp_failure_of_a_robot_that_stands_ends_the_run_with_its_report(
    solo, monkeypatch, tmp_path, capsys
):
    """A QP without a solution while the robot stands stops the run there: the run so far
    is reported, plotted and marked unsolved, and the command fails; at the first step there
    is nothing to report, and the error is raised."""
    from invdyn import cli
    from invdyn.control.wbc import QPError
    from invdyn.experiments.balance import Scenario, run_balance

    def fails_at(step):
        def failing(self, *args):
            if len(self.steps) == step:
                raise QPError(f"not solved at step {step}")
            return solve(self, *args)

        return failing

    solve = WholeBodyController._solve
    monkeypatch.setattr(WholeBodyController, "_solve", fails_at(20))
    run = run_balance(solo, Scenario(duration=0.1))
    assert run.unsolved == "not solved at step 20" and not run.fell
    assert len(run.time) == len(run.steps) == 20
    assert run.summary()["unsolved"] == run.unsolved
    out = tmp_path / "wbc"
    options = ["--duration", "0.1", "--no-progress", "--out", str(out)]
    assert cli.main(["wbc", "solo12", *options]) == 2
    printed = capsys.readouterr()
    assert "(stopped early: its QP had no solution)" in printed.out and "; stopped\n" in printed.out
    assert (
        unannounced(printed.err) == "invdyn: error: not solved at step 20; the run stopped there\n"
    )
    assert json.loads((out / "report.json").read_text())["unsolved"] == run.unsolved
    assert (out / "wbc.png").stat().st_size > 0
    monkeypatch.setattr(WholeBodyController, "_solve", fails_at(0))
    with pytest.raises(QPError, match="not solved at step 0"):
        run_balance(solo, Scenario(duration=0.1))


def _mjcf_quadruped(keyframe: str) -> str:
    """A torso on four legs of hip, thigh and calf hinges, each ending in a *_foot body."""
    legs = []
    for leg, x, y in (("FL", 0.2, 0.1), ("FR", 0.2, -0.1), ("RL", -0.2, 0.1), ("RR", -0.2, -0.1)):
        legs.append(
            f'<body name="{leg}_hip" pos="{x} {y} 0"><joint name="{leg}_hip_joint" axis="1 0 0" '
            'range="-0.8 0.8"/><inertial pos="0 0 0" mass="0.5" diaginertia="1e-3 1e-3 1e-3"/>'
            f'<body name="{leg}_thigh"><joint name="{leg}_thigh_joint" axis="0 1 0" '
            'range="-1.5 1.5"/><inertial pos="0 0 -0.1" mass="0.8" diaginertia="4e-3 4e-3 5e-4"/>'
            f'<body name="{leg}_calf" pos="0 0 -0.2"><joint name="{leg}_calf_joint" axis="0 1 0" '
            'range="-2.6 -0.3"/><inertial pos="0 0 -0.1" mass="0.3" diaginertia="2e-3 2e-3 2e-4"/>'
            f'<body name="{leg}_foot" pos="0 0 -0.2"><geom size="0.02" mass="0.05"/></body>'
            "</body></body></body>"
        )
    return (
        '<mujoco model="quad"><compiler angle="radian"/><worldbody>'
        '<body name="torso" pos="0 0 0.35"><freejoint name="root"/>'
        '<inertial pos="0 0 0" mass="6" diaginertia="0.03 0.08 0.1"/>'
        + "".join(legs)
        + f"</body></worldbody>{keyframe}</mujoco>"
    )


def test_an_mjcf_robot_stands_in_its_keyframe(tmp_path: Path) -> None:
    """A menagerie-style MJCF quadruped without SRDF files: its 'home' keyframe is the standing
    pose; without one, the error names where it looked."""
    from invdyn.experiments.balance import Scenario, foot_contacts, standing

    legs = " ".join(["0 0.8 -1.6"] * 4)
    path = tmp_path / "quad.xml"
    path.write_text(_mjcf_quadruped(f'<keyframe><key name="home" qpos="0 0 0.35 1 0 0 0 {legs}"/>'
                                    "</keyframe>"))  # fmt: skip
    model = invdyn.load(path, floating_base=True)
    contacts = foot_contacts(model, Scenario())
    q = standing(model, contacts, radius=0.02)
    np.testing.assert_allclose(q[7:], np.tile([0.0, 0.8, -1.6], 4))
    assert np.array_equal(standing(model, contacts, radius=0.02, pose="home"), q)
    with pytest.raises(invdyn.InputError, match="'neutral' puts .* FL_calf_joint = 0 not in"):
        standing(model, contacts, radius=0.02, pose="neutral")
    bare = tmp_path / "bare.xml"
    bare.write_text(_mjcf_quadruped(""))
    model = invdyn.load(bare, floating_base=True)
    with pytest.raises(invdyn.InputError, match=r"or among the keyframes of .*bare\.xml"):
        standing(model, foot_contacts(model, Scenario()), radius=0.02)
