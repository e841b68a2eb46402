"""Kinematics: frame placements and Jacobians against closed forms, Pinocchio, finite differences.

invdyn's Jacobian rows are [angular; linear]; Pinocchio's are [linear; angular]. The three
references follow Pinocchio's ReferenceFrame: "local" (LOCAL), "world" (WORLD) and
"local_world_aligned" (LOCAL_WORLD_ALIGNED).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import invdyn
from conftest import SAMPLE_ROBOTS, assert_close, invdyn_and_pinocchio, requires_erd, robot_params
from invdyn.configuration import integrate, random_configuration
from invdyn.model import Model

RTOL = 1e-9
REFERENCES = ("local", "world", "local_world_aligned")
LENGTH = 1.0  # link length of the tiny robots (URDF headers)


def _rng(seed: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(seed.encode()))


def _log3(rot: np.ndarray) -> np.ndarray:
    """Rotation vector of a rotation matrix (angle below pi)."""
    cos = np.clip((np.trace(rot) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos)
    vee = np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]])
    if angle < 1e-8:
        return vee / 2.0
    return angle / (2.0 * np.sin(angle)) * vee


# ----------------------------------------------------------------------------------------------
# closed forms of the tiny robots (URDF headers)
# ----------------------------------------------------------------------------------------------


def test_pendulum_tip(rng):
    model = invdyn.load("pendulum")
    for q in rng.uniform(-np.pi, np.pi, size=5):
        s, c = np.sin(q), np.cos(q)
        rot, pos = invdyn.frame_placement(model, np.array([q]), "tip")
        assert_close(pos, [-LENGTH * s, 0.0, -LENGTH * c], what="tip position")
        # rotation about +y by q
        assert_close(rot, [[c, 0, s], [0, 1, 0], [-s, 0, c]], what="tip rotation")
        jac = invdyn.frame_jacobian(model, np.array([q]), "tip")
        assert_close(jac[:, 0], [0, 1, 0, -LENGTH * c, 0, LENGTH * s], what="tip jacobian")
        # in the rod's own axes the tip moves along +x at speed L
        local = invdyn.frame_jacobian(model, np.array([q]), "tip", reference="local")
        assert_close(local[:, 0], [0, 1, 0, -LENGTH, 0, 0], what="local tip jacobian")
        world = invdyn.frame_jacobian(model, np.array([q]), "tip", reference="world")
        assert_close(world[:, 0], [0, 1, 0, 0, 0, 0], what="world jacobian of a pivot at 0")


@pytest.mark.parametrize("name", ["double_pendulum", "planar_2r"])
def test_two_link_tip(name, rng):
    model = invdyn.load(name)
    L = LENGTH
    for q1, q2 in rng.uniform(-np.pi, np.pi, size=(5, 2)):
        q = np.array([q1, q2])
        s1, c1, s12, c12 = np.sin(q1), np.cos(q1), np.sin(q1 + q2), np.cos(q1 + q2)
        if name == "double_pendulum":
            tip = [-L * s1 - L * s12, 0.0, -L * c1 - L * c12]
            linear = [[-L * c1 - L * c12, -L * c12], [0, 0], [L * s1 + L * s12, L * s12]]
            angular = [[0, 0], [1, 1], [0, 0]]
        else:
            tip = [L * c1 + L * c12, L * s1 + L * s12, 0.0]
            linear = [[-L * s1 - L * s12, -L * s12], [L * c1 + L * c12, L * c12], [0, 0]]
            angular = [[0, 0], [0, 0], [1, 1]]
        _, pos = invdyn.frame_placement(model, q, "tip")
        assert_close(pos, tip, what=f"{name} tip")
        jac = invdyn.frame_jacobian(model, q, "tip")
        assert_close(jac, np.vstack([angular, linear]), what=f"{name} tip jacobian")


def test_world_frame_is_fixed(rng):
    """A frame on the world ("base") does not move and has a zero Jacobian."""
    model = invdyn.load("double_pendulum")
    index = model.frame_id("base")
    assert model.frame_body[index] == -1
    q = rng.normal(size=(4, 2))
    rot, pos = invdyn.frame_placement(model, q, "base")
    assert rot.shape == (4, 3, 3) and pos.shape == (4, 3)
    assert_close(rot, np.broadcast_to(np.eye(3), (4, 3, 3)), what="world frame rotation")
    assert_close(pos, np.zeros((4, 3)), what="world frame origin")
    for reference in REFERENCES:
        jac = invdyn.frame_jacobian(model, q, "base", reference=reference)
        assert jac.shape == (4, 6, 2)
        assert not jac.any()
        assert invdyn.frame_jacobian(model, q[0], "base", reference=reference).shape == (6, 2)
    v = rng.normal(size=(4, 2))
    for q_, v_ in ((q, v), (q[0], v[0])):
        assert not invdyn.frame_velocity(model, q_, v_, "base").any()
        assert not invdyn.frame_acceleration(model, q_, v_, v_, "base").any()
    rot, pos = invdyn.frame_placement(model, q[0], "base")
    assert_close(rot, np.eye(3), what="world frame rotation, one state")
    assert_close(pos, np.zeros(3), what="world frame origin, one state")


def test_frame_by_name_and_index_agree(rng):
    model = invdyn.load("double_pendulum")
    q = rng.normal(size=2)
    index = model.frame_id("tip")
    negative = index - len(model.frame_name)
    expected = invdyn.frame_placement(model, q, "tip")
    for frame in (index, np.int64(index), negative):
        for ours, ref in zip(invdyn.frame_placement(model, q, frame), expected):
            np.testing.assert_array_equal(ours, ref)
        np.testing.assert_array_equal(
            invdyn.frame_jacobian(model, q, frame), invdyn.frame_jacobian(model, q, "tip")
        )


# ----------------------------------------------------------------------------------------------
# real robots, against Pinocchio and finite differences
# ----------------------------------------------------------------------------------------------

CASES = robot_params(SAMPLE_ROBOTS)


def _frames_to_check(model: Model, limit: int = 25) -> list[int]:
    """Frames spread over the tree: every one on small robots, `limit` of them on large ones."""
    n = len(model.frame_name)
    return list(range(n)) if n <= limit else sorted(set(np.linspace(0, n - 1, limit).astype(int)))


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES)
def test_against_pinocchio(name, floating):
    pin = pytest.importorskip("pinocchio")
    model, pmodel = invdyn_and_pinocchio(name, floating)
    pdata = pmodel.createData()
    q = random_configuration(model, rng=_rng(name), shape=2)
    pin_refs = {
        "local": pin.ReferenceFrame.LOCAL,
        "world": pin.ReferenceFrame.WORLD,
        "local_world_aligned": pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
    }
    frames = _frames_to_check(model)
    for k in range(2):
        pin.framesForwardKinematics(pmodel, pdata, q[k])
        for index in frames:
            frame_name = model.frame_name[index]
            fid = pmodel.getFrameId(frame_name)
            assert fid < len(pmodel.frames), f"Pinocchio has no frame {frame_name!r}"
            where = f"{name} frame {frame_name!r} state {k}"
            rot, pos = invdyn.frame_placement(model, q[k], frame_name)
            assert_close(rot, pdata.oMf[fid].rotation, rtol=RTOL, what=f"rotation, {where}")
            assert_close(pos, pdata.oMf[fid].translation, rtol=RTOL, what=f"origin, {where}")
            for reference, pin_ref in pin_refs.items():
                expected = pin.computeFrameJacobian(pmodel, pdata, q[k], fid, pin_ref)
                expected = np.vstack([expected[3:], expected[:3]])
                ours = invdyn.frame_jacobian(model, q[k], frame_name, reference=reference)
                assert_close(ours, expected, rtol=RTOL, what=f"{reference} jacobian, {where}")
                # one state takes its own compiled path: the batch path agrees with it
                batch = invdyn.frame_jacobian(model, q, index, reference=reference)[k]
                assert_close(batch, ours, rtol=1e-14, what=f"batched {reference}, {where}")
            batch_rot, batch_pos = invdyn.frame_placement(model, q, index)
            assert_close(batch_rot[k], rot, rtol=1e-14, what=f"batched rotation, {where}")
            assert_close(batch_pos[k], pos, rtol=1e-14, what=f"batched origin, {where}")


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES)
def test_body_placements_against_pinocchio(name, floating):
    pin = pytest.importorskip("pinocchio")
    model, pmodel = invdyn_and_pinocchio(name, floating)
    pdata = pmodel.createData()
    q = random_configuration(model, rng=_rng(name + "/fk"), shape=3)
    rotations, origins = invdyn.forward_kinematics(model, q)
    assert rotations.shape == (3, model.nbody, 3, 3) and origins.shape == (3, model.nbody, 3)
    for k in range(3):
        pin.forwardKinematics(pmodel, pdata, q[k])
        expected_rot = np.stack([pdata.oMi[i + 1].rotation for i in range(model.nbody)])
        expected_pos = np.stack([pdata.oMi[i + 1].translation for i in range(model.nbody)])
        assert_close(rotations[k], expected_rot, rtol=RTOL, what=f"{name} body rotations")
        assert_close(origins[k], expected_pos, rtol=RTOL, what=f"{name} body origins")
        one_rot, one_pos = invdyn.forward_kinematics(model, q[k])
        assert_close(one_rot, rotations[k], rtol=1e-14, what=f"{name} one state's rotations")
        assert_close(one_pos, origins[k], rtol=1e-14, what=f"{name} one state's origins")


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES)
def test_jacobian_against_finite_differences(name, floating):
    """Column j of the Jacobian is the frame's velocity along q ⊕ e_j t, by central differences."""
    model, _ = invdyn_and_pinocchio(name, floating)
    q = random_configuration(model, rng=_rng(name + "/fd"))
    eps = 1e-6
    steps = np.eye(model.nv) * eps
    ahead, behind = integrate(model, q, steps), integrate(model, q, -steps)
    for index in _frames_to_check(model, limit=6):
        rot_a, pos_a = invdyn.frame_placement(model, ahead, index)
        rot_b, pos_b = invdyn.frame_placement(model, behind, index)
        rot, _ = invdyn.frame_placement(model, q, index)
        linear = (pos_a - pos_b).T / (2 * eps)
        angular = np.stack([_log3(ra @ rb.T) for ra, rb in zip(rot_a, rot_b)]).T / (2 * eps)
        expected = np.vstack([angular, linear])
        where = f"{name} frame {model.frame_name[index]!r}"
        aligned = invdyn.frame_jacobian(model, q, index)
        assert_close(aligned, expected, rtol=1e-6, what=f"world-aligned jacobian, {where}")
        # local: the same velocity in the frame's own axes
        local = invdyn.frame_jacobian(model, q, index, reference="local")
        assert_close(local, np.vstack([rot.T @ angular, rot.T @ linear]), rtol=1e-6, what=where)


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES[:4])
def test_references_are_related(name, floating):
    """WORLD = LOCAL_WORLD_ALIGNED with the linear part moved to the origin: v_o = v_p - w x p."""
    model, _ = invdyn_and_pinocchio(name, floating)
    q = random_configuration(model, rng=_rng(name + "/refs"))
    index = len(model.frame_name) - 1
    rot, pos = invdyn.frame_placement(model, q, index)
    aligned = invdyn.frame_jacobian(model, q, index, reference="local_world_aligned")
    world = invdyn.frame_jacobian(model, q, index, reference="world")
    local = invdyn.frame_jacobian(model, q, index, reference="local")
    assert_close(world[:3], aligned[:3], what="angular rows")
    assert_close(world[3:], aligned[3:] - np.cross(aligned[:3].T, pos).T, what="world linear")
    assert_close(local[:3], rot.T @ aligned[:3], what="local angular")
    assert_close(local[3:], rot.T @ aligned[3:], what="local linear")


@requires_erd
@pytest.mark.parametrize(("name", "floating"), [CASES[0], CASES[2], CASES[-2]])
def test_batches_equal_single_calls(name, floating):
    model, _ = invdyn_and_pinocchio(name, floating)
    q = random_configuration(model, rng=_rng(name + "/batch"), shape=(2, 3))
    frame = model.frame_name[-1]
    rotations, origins = invdyn.forward_kinematics(model, q)
    rot, pos = invdyn.frame_placement(model, q, frame)
    jacs = {r: invdyn.frame_jacobian(model, q, frame, reference=r) for r in REFERENCES}
    assert rot.shape == (2, 3, 3, 3) and pos.shape == (2, 3, 3)
    for i in range(2):
        for j in range(3):
            eq = np.testing.assert_array_equal
            single_rot, single_pos = invdyn.forward_kinematics(model, q[i, j])
            eq(rotations[i, j], single_rot)
            eq(origins[i, j], single_pos)
            single_rot, single_pos = invdyn.frame_placement(model, q[i, j], frame)
            eq(rot[i, j], single_rot)
            eq(pos[i, j], single_pos)
            for reference, jac in jacs.items():
                assert jac.shape == (2, 3, 6, model.nv)
                eq(jac[i, j], invdyn.frame_jacobian(model, q[i, j], frame, reference=reference))
    # an empty batch
    empty = np.zeros((0, model.nq))
    assert invdyn.forward_kinematics(model, empty)[0].shape == (0, model.nbody, 3, 3)
    assert invdyn.frame_placement(model, empty, frame)[1].shape == (0, 3)
    assert invdyn.frame_jacobian(model, empty, frame).shape == (0, 6, model.nv)


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES)
def test_velocity_and_acceleration_against_pinocchio(name, floating):
    """Frame velocities and classical accelerations, in every reference."""
    pin = pytest.importorskip("pinocchio")
    model, pmodel = invdyn_and_pinocchio(name, floating)
    pdata = pmodel.createData()
    rng = _rng(name + "/motion")
    q = random_configuration(model, rng=rng)
    v, a = rng.normal(size=(2, model.nv))
    pin.forwardKinematics(pmodel, pdata, q, v, a)
    pin.updateFramePlacements(pmodel, pdata)
    pin_refs = {
        "local": pin.ReferenceFrame.LOCAL,
        "world": pin.ReferenceFrame.WORLD,
        "local_world_aligned": pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
    }
    for index in _frames_to_check(model, limit=8):
        fid = pmodel.getFrameId(model.frame_name[index], pin.BODY)
        for reference, pin_ref in pin_refs.items():
            where = f"{reference}, {name} frame {model.frame_name[index]!r}"
            motion = pin.getFrameVelocity(pmodel, pdata, fid, pin_ref)
            ours = invdyn.frame_velocity(model, q, v, index, reference=reference)
            assert_close(ours, np.r_[motion.angular, motion.linear], what=f"velocity {where}")
            motion = pin.getFrameClassicalAcceleration(pmodel, pdata, fid, pin_ref)
            ours = invdyn.frame_acceleration(model, q, v, a, index, reference=reference)
            assert_close(ours, np.r_[motion.angular, motion.linear], what=f"acceleration {where}")


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES)
def test_acceleration_is_the_derivative_of_the_velocity(name, floating):
    """In world-aligned axes the classical acceleration is d/dt of (omega, p_dot) along
    q(t) = q + v t + a t^2 / 2, v(t) = v + a t; with a = 0 it is the drift J_dot v."""
    model, _ = invdyn_and_pinocchio(name, floating)
    rng = _rng(name + "/derivative")
    q = random_configuration(model, rng=rng)
    v, a = rng.normal(size=(2, model.nv))
    eps = 1e-5
    for index in _frames_to_check(model, limit=4):
        velocities = [
            invdyn.frame_velocity(
                model, integrate(model, q, s * eps * v + eps**2 * a / 2), v + s * eps * a, index
            )
            for s in (1, -1)
        ]
        expected = (velocities[0] - velocities[1]) / (2 * eps)
        ours = invdyn.frame_acceleration(model, q, v, a, index)
        assert_close(ours, expected, rtol=1e-6, what=f"{name} frame {index}")
        drift = invdyn.frame_acceleration(model, q, v, np.zeros(model.nv), index)
        assert_close(ours, drift + invdyn.frame_jacobian(model, q, index) @ a, what="J a + drift")


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES)
def test_a_point_of_a_body_moves_with_it(name, floating):
    """`point_jacobian` and `point_motion` of a frame's origin are the frame's world-aligned
    Jacobian, velocity and drift; of any point of a body, its linear rows are the derivative
    of the point's position, and its drift the derivative of its velocity along the motion."""
    from invdyn.kinematics import _frame_target, frame_point, point_jacobian, point_motion

    model, _ = invdyn_and_pinocchio(name, floating)
    rng = _rng(name + "/points")
    q = random_configuration(model, rng=rng)
    v = rng.normal(size=model.nv)
    eps = 1e-6
    moving = [i for i in _frames_to_check(model, limit=6) if _frame_target(model, i)[1] >= 0]
    for index in moving[:3]:
        frame = model.frame_name[index]
        body, origin = frame_point(model, frame)
        jacobian, motion = (
            point_jacobian(model, q, body, origin),
            point_motion(model, q, v, body, origin),
        )
        assert_close(jacobian, invdyn.frame_jacobian(model, q, frame), what=f"{name} {frame}")
        assert_close(motion[:6], invdyn.frame_velocity(model, q, v, frame), what=frame)
        assert_close(motion[6:], invdyn.frame_acceleration(model, q, v, 0 * v, frame), what=frame)
        point = origin + rng.normal(scale=0.3, size=3)

        def position(x, body=body, point=point):
            rotations, origins = invdyn.forward_kinematics(model, x)
            return origins[body] + rotations[body] @ point

        ahead, behind = integrate(model, q, eps * v), integrate(model, q, -eps * v)
        velocity = (position(ahead) - position(behind)) / (2 * eps)
        assert_close(point_jacobian(model, q, body, point)[3:] @ v, velocity, rtol=1e-6, what=frame)
        rate = (
            point_motion(model, ahead, v, body, point) - point_motion(model, behind, v, body, point)
        ) / (2 * eps)
        assert_close(point_motion(model, q, v, body, point)[6:], rate[:6], rtol=1e-6, what=frame)
    with pytest.raises(invdyn.InputError, match=r"one state is q a \(\d+,\) float64 array"):
        point_jacobian(model, q[None], 0, np.zeros(3))


@requires_erd
def test_motion_batches_broadcast(load_robot):
    """One configuration against a batch of velocities: the batch shape of both, and each entry
    the single call's."""
    model = load_robot("solo12", floating_base=True)
    q = random_configuration(model, rng=0)
    v, a = _rng("broadcast").normal(size=(2, 2, 3, model.nv))
    velocity = invdyn.frame_velocity(model, q, v, "FL_FOOT")
    acceleration = invdyn.frame_acceleration(model, q[None], v, a, "FL_FOOT", reference="local")
    assert velocity.shape == acceleration.shape == (2, 3, 6)
    for i, j in np.ndindex(2, 3):
        assert_close(velocity[i, j], invdyn.frame_velocity(model, q, v[i, j], "FL_FOOT"))
        single = invdyn.frame_acceleration(model, q, v[i, j], a[i, j], "FL_FOOT", reference="local")
        assert_close(acceleration[i, j], single)


def test_frames_of_a_robot_without_joints_take_batches(tmp_path):
    """A scene with no joint (nq = nv = 0): a batch of its empty states gives each frame's one
    placement, zero Jacobians, velocities and accelerations, as a single state does."""
    scene = tmp_path / "scene.xml"
    scene.write_text(
        '<mujoco><worldbody><site name="s" pos="1 2 3" euler="0 0 90"/>'
        '<body name="b" pos="0 0 1"><geom size="0.1"/></body></worldbody></mujoco>'
    )
    model = invdyn.load(scene)
    assert model.nq == model.nv == 0
    empty = np.zeros((2, 3, 0))
    rot, pos = invdyn.frame_placement(model, empty, "s")
    one_rot, one_pos = invdyn.frame_placement(model, np.zeros(0), "s")
    np.testing.assert_array_equal(rot, np.broadcast_to(one_rot, (2, 3, 3, 3)))
    np.testing.assert_array_equal(one_pos, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(pos, np.broadcast_to(one_pos, (2, 3, 3)))
    assert invdyn.frame_jacobian(model, empty, "s").shape == (2, 3, 6, 0)
    for motion in (
        invdyn.frame_velocity(model, empty, empty, "s"),
        invdyn.frame_acceleration(model, empty, empty, empty, "s"),
    ):
        np.testing.assert_array_equal(motion, np.zeros((2, 3, 6)))
