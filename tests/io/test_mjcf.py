"""MJCF loading, checked against MuJoCo's own kinematics, masses and velocities."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import invdyn
import invdyn.io
from conftest import assert_close, mujoco_mass_matrix
from invdyn.configuration import integrate, random_configuration
from invdyn.io.mjcf import from_mujoco, load_mjcf
from invdyn.io.mujoco_state import from_mujoco_state, to_mujoco_state
from invdyn.model import JointType, Model
from invdyn.spatial import axis_angle_to_matrix, quaternion_to_matrix

mujoco = pytest.importorskip("mujoco")

ANCHORS = """
<mujoco model="anchors">
  <option gravity="0.5 0 -3"/>
  <worldbody>
    <body name="base" pos="0.1 -0.2 0.3" quat="0.9 0.1 -0.2 0.3">
      <joint name="j1" type="hinge" axis="0.3 0.4 1" pos="0.05 0.1 -0.2" ref="20"
             range="-90 120" armature="0.05"/>
      <inertial pos="0.1 0.02 -0.03" quat="0.8 0.3 0.1 -0.2" mass="2" diaginertia="0.02 0.03 0.04"/>
      <site name="tip" pos="0.3 0 0.1" euler="10 20 30"/>
      <body name="arm" pos="0.4 0 0" euler="30 -10 45">
        <joint name="j2" type="hinge" axis="0 1 0" pos="-0.1 0.05 0.02" armature="0.1"
               damping="0.5" frictionloss="0.2"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <body name="slider" pos="0.3 0 0">
          <joint name="j3" type="slide" axis="1 1 0" pos="0.2 0 0" ref="0.05" range="-0.1 0.2"/>
          <geom type="box" size="0.05 0.02 0.01" pos="0.01 0.02 0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="j1" gear="50" forcerange="-2 3"/>
    <motor joint="j2" gear="-10" ctrlrange="-1 1.5"/>
    <position joint="j2" kp="10"/>
  </actuator>
</mujoco>
"""

MULTI = """
<mujoco model="multi">
  <worldbody>
    <body name="torso" pos="0 0 1" euler="0 0 30">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="z" type="slide" axis="0 0 1" pos="0.1 0 0"/>
      <joint name="pitch" type="hinge" axis="0 1 0" pos="0 0.1 0.2"/>
      <geom type="box" size="0.2 0.1 0.05" pos="0.05 0 0"/>
      <body name="leg" pos="0.2 0 -0.1" euler="0 20 0">
        <joint name="hip_x" axis="1 0 0" pos="0 0 0.05"/>
        <joint name="hip_y" axis="0 1 0" pos="0.02 0 0.05" ref="-15"/>
        <joint axis="0 0 1" pos="0 0.03 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/>
        <body pos="0 0 -0.4">
          <joint name="ankle" type="ball" pos="0 0 0.05"/>
          <geom type="box" size="0.1 0.05 0.02" pos="0.05 0 -0.02"/>
        </body>
      </body>
      <body name="arm" pos="0 0.2 0">
        <joint name="shoulder_slide" type="slide" axis="0 1 0" pos="0 0 0.1"/>
        <joint name="shoulder_ball" type="ball" pos="0.05 0 0"/>
        <geom type="sphere" size="0.05" pos="0 0.1 0"/>
        <site name="arm" pos="0 0.2 0"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="hip_x" gear="2" ctrlrange="-5 5"/>
    <motor joint="hip_x" gear="1" forcerange="-1 1"/>
  </actuator>
</mujoco>
"""

FLOATING = """
<mujoco model="floating">
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="pelvis" pos="0 0 0.8" euler="5 10 15">
      <freejoint name="root"/>
      <geom type="box" size="0.1 0.15 0.05" mass="5"/>
      <site name="imu" pos="0.02 0 0.05" euler="0 90 0"/>
      <body name="battery" pos="-0.05 0 0.1" euler="0 0 45">
        <geom type="box" size="0.05 0.05 0.02" mass="1" pos="0.01 0 0"/>
        <body name="mount" pos="0.1 0.05 0" euler="90 0 0">
          <inertial pos="0.01 0.02 0.03" mass="0.3"
                    fullinertia="0.002 0.003 0.004 0.0001 -0.0002 0.0003"/>
          <site name="camera" pos="0 0 0.02" euler="0 -30 0"/>
        </body>
      </body>
      <body name="thigh" pos="0 0.1 -0.05">
        <joint name="hip" axis="0 1 0" pos="0 0 0.05" range="-60 60" actuatorfrcrange="-7 7"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
        <body name="cover" pos="0 0 -0.3" euler="10 0 0">
          <geom type="box" size="0.02 0.02 0.02" mass="0.5" pos="0.01 0.01 0"/>
          <body name="shin" pos="0 0 -0.05">
            <joint name="knee" axis="1 0 0" pos="0.01 0.02 0.03"/>
            <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.025"/>
          </body>
        </body>
      </body>
    </body>
    <body name="table" pos="2 0 0.5" euler="0 0 90">
      <geom type="box" size="0.5 0.5 0.02" mass="10"/>
      <body name="lid" pos="0.1 0 0.05">
        <joint name="lid_hinge" axis="1 0 0" pos="0 0.1 0"/>
        <geom type="box" size="0.2 0.1 0.01" pos="0 0.1 0"/>
      </body>
    </body>
    <body name="box" pos="1 0 0.2">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.1"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="hip" gear="100" forcerange="-1 1"/>
  </actuator>
</mujoco>
"""

MODELS = {"anchors": ANCHORS, "multi": MULTI, "floating": FLOATING}


def _testdata_model() -> Path | None:
    path = Path(mujoco.__file__).parent / "testdata" / "model.xml"
    return path if path.is_file() else None


def _compile(xml: str) -> tuple[Any, Model]:
    mj_model = mujoco.MjModel.from_xml_string(xml)
    return mj_model, from_mujoco(mj_model)


def _cases() -> list[str]:
    return [*MODELS, *(["mujoco-testdata"] if _testdata_model() else [])]


def _load_case(case: str) -> tuple[Any, Model]:
    if case == "mujoco-testdata":
        path = _testdata_model()
        assert path is not None
        return mujoco.MjModel.from_xml_path(str(path)), load_mjcf(path)
    return _compile(MODELS[case])


# reference forward kinematics, written from the conventions stated in invdyn.model


def _joint_motion(jtype: int, axis: np.ndarray, qj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if jtype == JointType.REVOLUTE:
        return axis_angle_to_matrix(axis, qj[0]), np.zeros(3)
    if jtype == JointType.CONTINUOUS:
        return axis_angle_to_matrix(axis, np.arctan2(qj[1], qj[0])), np.zeros(3)
    if jtype == JointType.PRISMATIC:
        return np.eye(3), axis * qj[0]
    if jtype == JointType.SPHERICAL:
        return quaternion_to_matrix(qj / np.linalg.norm(qj)), np.zeros(3)
    return quaternion_to_matrix(qj[3:] / np.linalg.norm(qj[3:])), qj[:3]


def body_placements(model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(nbody, 3, 3) rotations and (nbody, 3) positions of the bodies in the world."""
    rot, pos = np.zeros((model.nbody, 3, 3)), np.zeros((model.nbody, 3))
    for i in range(model.nbody):
        start, nq = model.jnt_qadr[i], model.jnt_nq[i]
        r_j, p_j = _joint_motion(model.jnt_type[i], model.jnt_axis[i], q[start : start + nq])
        r_local = model.jnt_rot[i] @ r_j
        p_local = model.jnt_pos[i] + model.jnt_rot[i] @ p_j
        parent = model.body_parent[i]
        if parent < 0:
            rot[i], pos[i] = r_local, p_local
        else:
            rot[i] = rot[parent] @ r_local
            pos[i] = pos[parent] + rot[parent] @ p_local
    return rot, pos


def frame_placements(model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(nframe, 3, 3) rotations and (nframe, 3) positions of the frames in the world."""
    rot, pos = body_placements(model, q)
    rot = np.concatenate([rot, np.eye(3)[None]])  # index -1: the world
    pos = np.concatenate([pos, np.zeros((1, 3))])
    b = model.frame_body
    frame_rot = rot[b] @ model.frame_rot
    frame_pos = pos[b] + np.einsum("fij,fj->fi", rot[b], model.frame_pos)
    return frame_rot, frame_pos


def _random_qpos(mj_model: Any, rng: np.random.Generator) -> np.ndarray:
    qpos = mj_model.qpos0 + rng.uniform(-1.0, 1.0, mj_model.nq)
    for j in range(mj_model.njnt):
        start = mj_model.jnt_qposadr[j]
        if mj_model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            start += 3
        if mj_model.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            quat = rng.standard_normal(4)
            qpos[start : start + 4] = quat / np.linalg.norm(quat)
    return qpos


def _moving(mj_model: Any) -> np.ndarray:
    """Indices of the MuJoCo bodies that are not welded to the world."""
    return np.array([b for b in range(1, mj_model.nbody) if mj_model.body_weldid[b] != 0])


# kinematics against mujoco


@pytest.mark.parametrize("case", _cases())
def test_frames_match_mujoco_kinematics(case: str) -> None:
    mj_model, model = _load_case(case)
    data = mujoco.MjData(mj_model)
    rng = np.random.default_rng(0)
    bodies = [mj_model.body(b).name or f"body{b}" for b in range(mj_model.nbody)]
    for _ in range(5):
        qpos = _random_qpos(mj_model, rng)
        data.qpos[:] = qpos
        mujoco.mj_kinematics(mj_model, data)
        q, _ = from_mujoco_state(model, mj_model, qpos)
        frame_rot, frame_pos = frame_placements(model, q)
        # every mujoco body is a frame in the same place
        for b, name in enumerate(bodies):
            f = model.frame_id(name)
            np.testing.assert_allclose(frame_pos[f], data.xpos[b], atol=1e-10, err_msg=name)
            np.testing.assert_allclose(
                frame_rot[f], data.xmat[b].reshape(3, 3), atol=1e-10, err_msg=name
            )
        # and so is every site, after the bodies
        for k in range(mj_model.nsite):
            f = len(bodies) + k
            np.testing.assert_allclose(frame_pos[f], data.site_xpos[k], atol=1e-10)
            np.testing.assert_allclose(frame_rot[f], data.site_xmat[k].reshape(3, 3), atol=1e-10)


@pytest.mark.parametrize("case", _cases())
def test_mass_com_and_inertia_match_mujoco(case: str) -> None:
    mj_model, model = _load_case(case)
    data = mujoco.MjData(mj_model)
    rng = np.random.default_rng(1)
    moving = _moving(mj_model)
    assert model.total_mass == pytest.approx(mj_model.body_mass[moving].sum(), rel=1e-12)
    for _ in range(3):
        qpos = _random_qpos(mj_model, rng)
        data.qpos[:] = qpos
        mujoco.mj_kinematics(mj_model, data)
        q, _ = from_mujoco_state(model, mj_model, qpos)
        rot, pos = body_placements(model, q)
        com = pos + np.einsum("bij,bj->bi", rot, model.body_com)
        # centre of mass of everything that moves
        mass = mj_model.body_mass[moving]
        expected = mass @ data.xipos[moving] / mass.sum()
        np.testing.assert_allclose(model.body_mass @ com / model.total_mass, expected, atol=1e-10)
        # rotational inertia of everything that moves, about the world origin
        ours = sum(
            rot[i] @ model.body_inertia[i] @ rot[i].T
            + model.body_mass[i] * (com[i] @ com[i] * np.eye(3) - np.outer(com[i], com[i]))
            for i in range(model.nbody)
        )
        theirs = sum(
            data.ximat[b].reshape(3, 3)
            @ np.diag(mj_model.body_inertia[b])
            @ data.ximat[b].reshape(3, 3).T
            + mj_model.body_mass[b]
            * (data.xipos[b] @ data.xipos[b] * np.eye(3) - np.outer(data.xipos[b], data.xipos[b]))
            for b in moving
        )
        np.testing.assert_allclose(ours, theirs, atol=1e-10)


@pytest.mark.parametrize("case", _cases())
def test_body_velocities_match_mujoco(case: str) -> None:
    # finite differences of our kinematics along integrate(q, v) against mj_objectVelocity
    mj_model, model = _load_case(case)
    data = mujoco.MjData(mj_model)
    rng = np.random.default_rng(2)
    q = random_configuration(model, rng=rng)
    v = rng.uniform(-1.0, 1.0, model.nv)
    data.qpos[:], data.qvel[:] = to_mujoco_state(model, mj_model, q, v)
    mujoco.mj_forward(mj_model, data)
    h = 1e-6
    rot0, _ = frame_placements(model, q)
    rot_plus, pos_plus = frame_placements(model, integrate(model, q, v, h))
    rot_minus, pos_minus = frame_placements(model, integrate(model, q, v, -h))
    for b in range(1, mj_model.nbody):
        f = model.frame_id(mj_model.body(b).name or f"body{b}")
        expected = np.zeros(6)
        mujoco.mj_objectVelocity(mj_model, data, mujoco.mjtObj.mjOBJ_XBODY, b, expected, 1)
        spin = rot0[f].T @ (rot_plus[f] - rot_minus[f]) / (2 * h)
        angular = np.array([spin[2, 1], spin[0, 2], spin[1, 0]])
        linear = rot0[f].T @ (pos_plus[f] - pos_minus[f]) / (2 * h)
        np.testing.assert_allclose(angular, expected[:3], atol=1e-6)
        np.testing.assert_allclose(linear, expected[3:], atol=1e-6)


# structure, names and parameters


@pytest.mark.parametrize("case", _cases())
def test_force_units_follow_the_motion_mujoco_gives_each_coordinate(case: str) -> None:
    """A unit velocity of each coordinate, in MuJoCo's qvel, moves a slide joint or a free
    joint's translation (a force, N), or turns a joint (a torque, N·m)."""
    mj_model, model = _load_case(case)
    q = random_configuration(model, rng=0)
    translations = {
        int(d)
        for d in range(mj_model.nv)
        if mj_model.jnt_type[mj_model.dof_jntid[d]] == mujoco.mjtJoint.mjJNT_SLIDE
        or (
            mj_model.jnt_type[mj_model.dof_jntid[d]] == mujoco.mjtJoint.mjJNT_FREE
            and d - mj_model.jnt_dofadr[mj_model.dof_jntid[d]] < 3
        )
    }
    for k, unit in enumerate(model.dof_force_units):
        _, qvel = to_mujoco_state(model, mj_model, q, np.eye(model.nv)[k])
        moved = set(np.flatnonzero(np.abs(qvel) > 1e-12).tolist())
        assert moved and (moved <= translations) == (unit == "N"), (model.dof_names[k], unit)
        assert unit == "N" or not moved & translations, (model.dof_names[k], unit)


def test_structure_and_names() -> None:
    _, model = _compile(MULTI)
    assert model.name == "multi"
    assert model.jnt_name == (
        "x",
        "z",
        "pitch",
        "hip_x",
        "hip_y",
        "joint5",
        "ankle",
        "shoulder_slide",
        "shoulder_ball",
    )
    assert model.body_name == (
        "torso__x",
        "torso__z",
        "torso",
        "leg__hip_x",
        "leg__hip_y",
        "leg",
        "body3",
        "arm__shoulder_slide",
        "arm",
    )
    assert model.body_parent.tolist() == [-1, 0, 1, 2, 3, 4, 5, 2, 7]
    assert model.jnt_type.tolist() == [
        JointType.PRISMATIC,
        JointType.PRISMATIC,
        JointType.REVOLUTE,
        JointType.REVOLUTE,
        JointType.REVOLUTE,
        JointType.REVOLUTE,
        JointType.SPHERICAL,
        JointType.PRISMATIC,
        JointType.SPHERICAL,
    ]
    # intermediate bodies carry no mass; a site named like a body is renamed
    assert model.body_mass[[0, 1, 3, 4, 7]].tolist() == [0.0] * 5
    assert model.frame_name == ("world", "torso", "leg", "body3", "arm", "arm_site")
    assert model.nq == 3 + 3 + 4 + 1 + 4 and model.nv == 3 + 3 + 3 + 1 + 3


def test_floating_structure() -> None:
    mj_model, model = _compile(FLOATING)
    assert model.jnt_name == ("root", "hip", "knee", "lid_hinge", "joint4")
    assert model.body_name == ("pelvis", "thigh", "shin", "lid", "box")
    assert model.body_parent.tolist() == [-1, 0, 1, -1, -1]
    assert model.floating_base
    # welded bodies are frames on their carrier; the table is welded to the world
    frames = dict(zip(model.frame_name, model.frame_body, strict=True))
    assert frames["battery"] == frames["mount"] == frames["camera"] == 0
    assert frames["cover"] == 1
    assert frames["table"] == frames["world"] == -1
    # the table's mass is on the world, so it is dropped
    assert model.total_mass == pytest.approx(mj_model.body_subtreemass[0] - 10.0)


def test_fixed_base_welds_the_free_bodies_where_the_file_places_them(tmp_path: Path) -> None:
    path = tmp_path / "floating.xml"
    path.write_text(FLOATING)
    floating = load_mjcf(path)
    welded = invdyn.io.load(path, floating_base=False)
    assert not welded.floating_base
    assert welded.jnt_name == ("hip", "knee", "lid_hinge")
    # at MuJoCo's qpos0, every frame is where the floating model puts it
    mj_model = mujoco.MjModel.from_xml_path(str(path))
    q, _ = from_mujoco_state(floating, mj_model, mj_model.qpos0)
    for name in ("imu", "camera", "shin", "lid", "box"):
        expected = invdyn.frame_placement(floating, q, name)
        actual = invdyn.frame_placement(welded, np.zeros(welded.nq), name)
        for x, y in zip(actual, expected, strict=True):
            np.testing.assert_allclose(x, y, atol=1e-12)
    assert invdyn.io.load(path, floating_base=True).nq == floating.nq
    # a keyframe's qpos counts the free joints, so the welded model drops the keyframes
    keyed = tmp_path / "keyed.xml"
    qpos = " ".join(map(str, mj_model.qpos0))
    keyed.write_text(
        FLOATING.replace("</mujoco>", f'<keyframe><key qpos="{qpos}"/></keyframe></mujoco>')
    )
    assert invdyn.io.load(keyed, floating_base=False).jnt_name == welded.jnt_name
    anchors = tmp_path / "anchors.xml"
    anchors.write_text(ANCHORS)
    with pytest.raises(invdyn.ModelError, match=r"anchors\.xml: no free joint"):
        invdyn.io.load(anchors, floating_base=True)


def test_unnamed_joints_keep_their_names_when_the_base_is_welded(tmp_path: Path) -> None:
    """Generated names count every joint of the file, so welding its free joint (or naming
    one joint as another's generated name) changes no other joint's name."""
    xml = """<mujoco><worldbody><body name="base" pos="0 0 1"><freejoint/>
      <geom size="0.1" mass="2"/>
      <body name="a"><joint axis="0 1 0"/><geom size="0.05" mass="1"/>
        <body name="b" pos="0.3 0 0"><joint name="joint1" axis="0 1 0"/><geom size="0.05" mass="1"/>
          <body name="c" pos="0.3 0 0"><joint axis="0 1 0"/><geom size="0.05" mass="1"/></body>
        </body></body></body></worldbody></mujoco>"""
    path = tmp_path / "unnamed.xml"
    path.write_text(xml)
    floating = invdyn.io.load(path)
    fixed = invdyn.io.load(path, floating_base=False)
    assert floating.jnt_name == ("root_joint", "joint1_1", "joint1", "joint3")
    assert fixed.jnt_name == floating.jnt_name[1:]


def test_armature_on_a_free_joint_warns() -> None:
    xml = FLOATING.replace(
        '<freejoint name="root"/>', '<joint name="root" type="free" armature="0.1"/>'
    )
    with pytest.warns(invdyn.ModelWarning, match=r"free joint 'root' has armature .* world frame"):
        from_mujoco(mujoco.MjModel.from_xml_string(xml))


def test_a_reversed_range_warns_that_the_joint_is_unlimited() -> None:
    xml = """<mujoco><worldbody><body name="arm"><joint name="elbow" range="30 -30"/>
             <geom size="0.1" mass="1"/></body></worldbody></mujoco>"""
    with pytest.warns(invdyn.ModelWarning, match=r"'elbow' has a range whose lower bound is ab"):
        model = from_mujoco(mujoco.MjModel.from_xml_string(xml))
    assert np.isinf(model.q_lower).all() and np.isinf(model.q_upper).all()


LEFT_OUT = """
<mujoco model="left_out">
  <worldbody>
    <body name="a" pos="0 0 1" gravcomp="1"><joint name="h1" axis="0 1 0" stiffness="{k}"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
      <body name="b" pos="0.4 0 0"><joint name="h2" axis="0 1 0" damping="{damping}"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="sum" armature="0.3"><joint joint="h1" coef="1"/><joint joint="h2" coef="1"/>
  </fixed></tendon>
  <equality><joint joint1="h2" joint2="h1"/></equality>
</mujoco>
"""


def test_what_mujoco_adds_and_the_model_leaves_out_is_named_in_one_warning() -> None:
    """Springs, gravity compensation, tendon armature and equality constraints, and with
    friction the damping of higher order: where M and rnea differ from MuJoCo's (the mass
    matrices by the tendon's armature 0.3 J^T J)."""
    # damping of higher order came with MuJoCo 4
    polynomial = hasattr(mujoco.MjModel, "dof_dampingpoly")
    xml = LEFT_OUT.format(k=2, damping="0.1 0.5" if polynomial else "0.1")
    mj_model = mujoco.MjModel.from_xml_string(xml)
    with pytest.warns(invdyn.ModelWarning) as caught:
        model = from_mujoco(mj_model, friction=True)
    (message,) = [str(w.message) for w in caught]
    for name in ("equality constraints", "joint springs", "gravcomp", "tendon armature"):
        assert name in message, message
    assert ("dampingpoly" in message) == polynomial, message
    data = mujoco.MjData(mj_model)
    mujoco.mj_forward(mj_model, data)
    tendon = 0.3 * np.ones((2, 2))
    assert_close(
        invdyn.mass_matrix(model, data.qpos) + tendon,
        mujoco_mass_matrix(mj_model, data),
        what="M + the tendon's armature",
    )


def test_joint_damping_left_out_without_friction_is_named() -> None:
    xml = LEFT_OUT.format(k=0, damping="0.4").replace('gravcomp="1"', "")
    xml = xml.replace("<equality>", "<!--").replace("</equality>", "-->")
    xml = xml.replace('armature="0.3"', "")
    mj_model = mujoco.MjModel.from_xml_string(xml)
    with pytest.warns(invdyn.ModelWarning, match=r"applies joint damping and friction \(read"):
        from_mujoco(mj_model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = from_mujoco(mj_model, friction=True)
    assert model.dof_damping.tolist() == [0.0, 0.4]


FLAGGED = """
<mujoco>
  <option density="{density}"><flag {flags}/></option>
  <worldbody>
    <body name="a" gravcomp="{gravcomp}">
      <joint name="h" axis="0 1 0" stiffness="{stiffness}" damping="0.5" frictionloss="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""


def _flagged(flags: str, *, density: float = 0, gravcomp: float = 0, stiffness: str = "0") -> Any:
    xml = FLAGGED.format(flags=flags, density=density, gravcomp=gravcomp, stiffness=stiffness)
    return mujoco.MjModel.from_xml_string(xml)


@pytest.mark.parametrize(
    ("flags", "damping", "friction"),
    [
        ('gravity="enable"', 0.5, 0.2),
        ('damper="disable"', 0.0, 0.2),
        ('frictionloss="disable"', 0.5, 0.0),
        ('constraint="disable"', 0.5, 0.0),
    ],
)
def test_damping_and_friction_follow_mujocos_flags(
    flags: str, damping: float, friction: float
) -> None:
    """What a disable flag turns off in MuJoCo is zero in the model, without a warning; with
    the damping read, rnea is MuJoCo's inverse dynamics."""
    mj_model = _flagged(flags)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = from_mujoco(mj_model, friction=True)
    assert (model.dof_damping.tolist(), model.dof_friction.tolist()) == ([damping], [friction])
    data = mujoco.MjData(mj_model)
    data.qpos[:], data.qvel[:], data.qacc[:] = 0.7, 2.0, -1.5
    mj_model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    mujoco.mj_inverse(mj_model, data)
    # MuJoCo's frictionloss is a constraint force (off here), the model's a Coulomb term
    coulomb = friction * np.sign(data.qvel)
    assert_close(invdyn.rnea(model, data.qpos, data.qvel, data.qacc), data.qfrc_inverse + coulomb)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"density": 1000.0}, "fluid forces"),
        ({"stiffness": "2"}, "joint springs"),
        ({"gravcomp": 1.0}, "gravity compensation"),
        # polynomial springs came with MuJoCo 4; before, the second value is not read
        (
            {"stiffness": "0 3"},
            "joint springs" if hasattr(mujoco.MjModel, "jnt_stiffnesspoly") else None,
        ),
    ],
)
def test_passive_forces_are_named_unless_their_flags_turn_them_off(
    changes: dict[str, Any], named: str | None
) -> None:
    """Springs go with the spring flag; gravity compensation and fluid forces with both the
    spring and the damper flags, as MuJoCo's passive forces do."""
    caught = _left_out_warnings(_flagged('gravity="enable"', **changes))
    assert (named is None and not caught) or (named is not None and named in caught[0]), caught
    assert not _left_out_warnings(_flagged('spring="disable" damper="disable"', **changes))


def _left_out_warnings(mj_model: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from_mujoco(mj_model, friction=True)
    return [str(w.message) for w in caught if issubclass(w.category, invdyn.ModelWarning)]


def test_load_warnings_point_at_the_callers_line(tmp_path: Path) -> None:
    """A warning at load names the line that called invdyn.load, not the library's."""
    path = tmp_path / "left_out.xml"
    path.write_text(LEFT_OUT.format(k=0, damping="0").replace('gravcomp="1"', ""))
    with pytest.warns(invdyn.ModelWarning) as caught:
        invdyn.load(path)
    assert [Path(w.filename).name for w in caught] == [Path(__file__).name]


def test_disabled_gravity_is_no_gravity() -> None:
    xml = ANCHORS.replace(
        '<option gravity="0.5 0 -3"/>', '<option><flag gravity="disable"/></option>'
    )
    mj_model, model = _compile(xml)
    np.testing.assert_array_equal(model.gravity, 0.0)
    data = mujoco.MjData(mj_model)
    mujoco.mj_forward(mj_model, data)
    q, _ = from_mujoco_state(model, mj_model, mj_model.qpos0)
    np.testing.assert_allclose(invdyn.gravity(model, q), data.qfrc_bias, atol=1e-12)


def test_unnamed_free_root_is_root_joint() -> None:
    xml = """<mujoco><worldbody><body><freejoint/><geom size="0.1"/>
      <body pos="0 0 0.2"><joint/><geom size="0.1"/></body></body></worldbody></mujoco>"""
    _, model = _compile(xml)
    assert model.jnt_name == ("root_joint", "joint1")
    assert model.body_name == ("body1", "body2")
    assert model.name == "mujoco"


def test_limits_and_joint_parameters() -> None:
    _, model = _compile(ANCHORS)
    # j2 is unlimited: a plain REVOLUTE with infinite bounds
    np.testing.assert_allclose(model.q_lower, [np.deg2rad(-90), -np.inf, -0.1])
    np.testing.assert_allclose(model.q_upper, [np.deg2rad(120), np.inf, 0.2])
    assert model.jnt_type.tolist() == [JointType.REVOLUTE, JointType.REVOLUTE, JointType.PRISMATIC]
    np.testing.assert_allclose(model.dof_armature, [0.05, 0.1, 0.0])
    np.testing.assert_allclose(model.dof_damping, 0.0)
    np.testing.assert_allclose(model.dof_friction, 0.0)
    np.testing.assert_allclose(model.dof_velocity_limit, np.inf)
    np.testing.assert_allclose(model.gravity, [0.5, 0.0, -3.0])
    # forcerange times gear; a motor's ctrlrange times its gear; a servo adds no bound
    np.testing.assert_allclose(model.dof_effort_limit, [150.0, np.inf, np.inf])
    with_friction = from_mujoco(mujoco.MjModel.from_xml_string(ANCHORS), friction=True)
    np.testing.assert_allclose(with_friction.dof_damping, [0.0, 0.5, 0.0])
    np.testing.assert_allclose(with_friction.dof_friction, [0.0, 0.2, 0.0])


def test_effort_limits() -> None:
    _, model = _compile(MULTI)
    # two motors on hip_x: 2 * 5 + 1 * 1; nothing drives the others
    expected = np.full(model.nv, np.inf)
    expected[3] = 11.0
    np.testing.assert_allclose(model.dof_effort_limit, expected)
    _, model = _compile(FLOATING)
    # 100 * 1 capped by the joint's actuatorfrcrange
    assert model.dof_effort_limit[6] == 7.0
    assert np.all(np.isinf(np.delete(model.dof_effort_limit, 6)))


def test_actuated_coordinates() -> None:
    # MULTI drives hip_x alone, FLOATING its hip alone; without actuators every one counts
    for xml, driven in ((MULTI, [3]), (FLOATING, [6])):
        _, model = _compile(xml)
        expected = np.zeros(model.nv, dtype=bool)
        expected[driven] = True
        np.testing.assert_array_equal(model.dof_actuated, expected)
    plain = ANCHORS.replace("<actuator>", "<actuator><!--").replace("</actuator>", "--></actuator>")
    assert _compile(plain)[1].dof_actuated.all()


CHAIN = """
<mujoco model="chain">
  <option {option}/>
  <worldbody>
    <body name="a"><joint name="a" axis="0 1 0"/><geom size="0.1"/>
      <body name="b" pos="0.3 0 0"><joint name="b" axis="0 1 0"/><geom size="0.1"/>
        <body name="c" pos="0.3 0 0"><joint name="c" axis="0 1 0"/><geom size="0.1"/>
          <site name="tip" pos="0.3 0 0"/>
        </body>
      </body>
    </body>
    <body name="other" pos="0 2 0"><joint name="d" axis="1 0 0"/><geom size="0.1"/>
      <body name="more" pos="0 0 0.3"><joint name="e" axis="1 0 0"/><geom size="0.1"/></body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="coupled"><joint joint="d" coef="1"/><joint joint="e" coef="-1"/></fixed>
  </tendon>
  <actuator>{actuator}</actuator>
</mujoco>
"""


@pytest.mark.parametrize(
    ("actuator", "option", "driven"),
    [
        ('<motor joint="b"/>', "", ["b"]),
        # along the tip's link: no moment about c, nor about a and b while the arm is straight
        ('<motor site="tip" gear="1 0 0 0 0 0"/>', "", ["a", "b"]),
        ('<motor site="tip" gear="0 0 1 0 0 0"/>', "", ["a", "b", "c"]),
        ('<motor tendon="coupled"/>', "", ["d", "e"]),
        ('<position joint="c" kp="5"/><motor tendon="coupled"/>', "", ["c", "d", "e"]),
        ('<motor joint="b" group="3"/><motor joint="c"/>', 'actuatorgroupdisable="3"', ["c"]),
        ('<motor joint="b" gear="0"/><motor joint="c"/>', "", ["c"]),
        # adhesion acts through contacts, on no coordinate: as if there were no actuator
        ('<adhesion body="c" ctrlrange="0 1"/>', "", ["a", "b", "c", "d", "e"]),
    ],
)
def test_every_transmission_reaches_its_coordinates(
    actuator: str, option: str, driven: list[str]
) -> None:
    _, model = _compile(CHAIN.format(actuator=actuator, option=option))
    assert list(model.dof_names[i] for i in np.flatnonzero(model.dof_actuated)) == driven
    assert model.passive_dofs == tuple(n for n in model.dof_names if n not in driven)


def test_a_spatial_tendon_from_a_floating_body_leaves_the_root_passive() -> None:
    xml = """
    <mujoco>
      <worldbody>
        <body name="torso"><freejoint name="root"/><geom size="0.1"/><site name="s0"/>
          <body name="leg" pos="0.3 0 0"><joint name="hip" axis="0 1 0"/><geom size="0.1"/>
            <site name="s1" pos="0.2 0 0.1"/>
          </body>
        </body>
      </worldbody>
      <tendon><spatial name="muscle"><site site="s0"/><site site="s1"/></spatial></tendon>
      <actuator><motor tendon="muscle"/></actuator>
    </mujoco>
    """
    _, model = _compile(xml)
    assert model.passive_dofs == tuple(
        f"root.{axis}" for axis in ("vx", "vy", "vz", "wx", "wy", "wz")
    )


def _gymnasium_assets() -> list[Path]:
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or spec.origin is None:
        return []
    return sorted((Path(spec.origin).parent / "envs" / "mujoco" / "assets").glob("*.xml"))


@pytest.mark.parametrize("path", _gymnasium_assets(), ids=lambda path: path.stem)
def test_actuated_coordinates_are_those_mujocos_actuators_push(
    path: Path, rng: np.random.Generator
) -> None:
    # MuJoCo's actuator forces at random states and controls reach exactly the actuated dofs
    mj_model = mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        model = from_mujoco(mj_model)
    data = mujoco.MjData(mj_model)
    pushed = np.zeros(mj_model.nv, dtype=bool)
    for _ in range(3):
        data.qpos[:] = _random_qpos(mj_model, rng)
        data.ctrl[:] = rng.uniform(0.5, 1.0, mj_model.nu) * rng.choice([-1, 1], mj_model.nu)
        data.act[:] = rng.uniform(0.5, 1.0, mj_model.na)
        mujoco.mj_forward(mj_model, data)
        pushed |= data.qfrc_actuator != 0.0
    np.testing.assert_array_equal(model.dof_actuated, pushed)
    assert not model.dof_actuated.all()


def test_actuator_armature_and_damping_reach_the_joints() -> None:
    # what an actuator adds to mujoco's mass matrix and damping, the model adds to the dof
    plain = ANCHORS.replace("<actuator>", "<actuator><!--").replace("</actuator>", "--></actuator>")
    geared = ANCHORS.replace(
        "<actuator>",
        '<actuator><motor joint="j2" gear="3" armature="0.2" damping="0.5"/>'
        '<motor joint="j2" gear="-2" armature="1"/><motor joint="j3" armature="0.7"/>',
    )
    if not hasattr(mujoco.MjModel.from_xml_string(plain), "actuator_armature"):
        pytest.skip("this mujoco has no actuator armature")
    masses, dampings, models = [], [], []
    for xml in (plain, geared):
        mj_model = mujoco.MjModel.from_xml_string(xml)
        data = mujoco.MjData(mj_model)
        data.qvel[:] = 1.0
        mujoco.mj_forward(mj_model, data)
        mass = np.zeros((mj_model.nv, mj_model.nv))
        mujoco.mj_fullM(mj_model, data, mass)
        masses.append(np.diag(mass))
        dampings.append(-data.qfrc_passive)
        models.append(from_mujoco(mj_model, friction=True))
    added = models[1].dof_armature - models[0].dof_armature
    np.testing.assert_allclose(added, [0.0, 0.2 * 9 + 1.0 * 4, 0.7])
    np.testing.assert_allclose(added, masses[1] - masses[0], atol=1e-12)
    added = models[1].dof_damping - models[0].dof_damping
    np.testing.assert_allclose(added, [0.0, 0.5 * 9, 0.0])
    np.testing.assert_allclose(added, dampings[1] - dampings[0], atol=1e-12)


def test_ref_is_folded_into_the_joint_frame() -> None:
    # at qpos0 (the refs) every body is where the description puts it
    mj_model, model = _compile(ANCHORS)
    q, _ = from_mujoco_state(model, mj_model, mj_model.qpos0)
    np.testing.assert_allclose(q, [np.deg2rad(20), 0.0, 0.05])
    data = mujoco.MjData(mj_model)
    mujoco.mj_kinematics(mj_model, data)
    _, pos = frame_placements(model, q)
    np.testing.assert_allclose(pos[model.frame_id("slider")], data.xpos[3], atol=1e-12)


def test_load_mjcf_from_file(tmp_path: Path) -> None:
    path = tmp_path / "robot.xml"
    path.write_text(FLOATING.replace('model="floating"', ""))
    model = load_mjcf(path)
    assert model.name == "robot"
    assert model.source == str(path)
    assert model.nq == 7 + 3 + 7


def test_load_dispatches_xml(tmp_path: Path) -> None:
    pytest.importorskip("invdyn.io.urdf")
    pytest.importorskip("invdyn.io.robots")
    path = tmp_path / "anchors.xml"
    path.write_text(ANCHORS)
    model = invdyn.io.load(path)
    assert model.jnt_name == ("j1", "j2", "j3")
    # a URDF saved as .xml is read as URDF, by its root element
    urdf = tmp_path / "arm.xml"
    urdf.write_text(Path(invdyn.io.robots.robot_path("double_pendulum")).read_text())
    as_xml = invdyn.io.load(urdf)
    assert (
        as_xml.jnt_name == invdyn.io.load(invdyn.io.robots.robot_path("double_pendulum")).jnt_name
    )
    assert as_xml.source == str(urdf)


def test_load_simulated_reads_damping_from_mjcf_only(tmp_path: Path) -> None:
    """The simulation commands' robot: MuJoCo simulates an MJCF file's damping and friction,
    so its model has them; a URDF's plant is built from the ideal rigid-body tree."""
    mjcf = tmp_path / "anchors.xml"
    mjcf.write_text(ANCHORS)
    np.testing.assert_allclose(invdyn.io.load_simulated(mjcf).dof_damping, [0.0, 0.5, 0.0])
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        Path(invdyn.io.robots.robot_path("double_pendulum"))
        .read_text()
        .replace("</joint>", '<dynamics damping="0.3" friction="0.1"/></joint>')
    )
    assert invdyn.io.load(urdf, friction=True).dof_damping.max() == 0.3
    np.testing.assert_allclose(invdyn.io.load_simulated(urdf).dof_damping, 0.0)


# bad input


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(invdyn.ModelError, match=r"nope\.xml"):
        load_mjcf(tmp_path / "nope.xml")


def test_malformed_xml(tmp_path: Path) -> None:
    path = tmp_path / "broken.xml"
    path.write_text("<mujoco><worldbody><body></worldbody>")
    with pytest.raises(invdyn.ModelError, match=r"broken\.xml.*mujoco"):
        load_mjcf(path)


def test_mujoco_compile_error_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_text(
        '<mujoco><worldbody><body><joint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 5"/>'
        "</body></worldbody></mujoco>"
    )
    with pytest.raises(invdyn.ModelError, match=r"bad\.xml.*A \+ B >= C"):
        load_mjcf(path)


def _with_inertia(mass: float, moments: list[float]) -> Any:
    mj_model = mujoco.MjModel.from_xml_string(ANCHORS)
    mj_model.body_mass[2] = mass
    mj_model.body_inertia[2] = moments
    return mj_model


@pytest.mark.parametrize(
    ("mass", "moments", "message"),
    [
        (1.0, [0.1, 0.1, 0.5], "triangle inequality"),
        (1.0, [0.1, -0.1, 0.1], "not positive semi-definite"),
        (0.0, [0.1, 0.1, 0.1], "zero mass"),
    ],
)
def test_doubtful_inertia_warns_or_raises(mass: float, moments: list[float], message: str) -> None:
    with pytest.warns(invdyn.ModelWarning, match=f"'arm'.*{message}"):
        from_mujoco(_with_inertia(mass, moments))
    with pytest.raises(invdyn.ModelError, match=f"'arm'.*{message}"):
        from_mujoco(_with_inertia(mass, moments), strict=True)


def test_plausible_inertias_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for xml in MODELS.values():
            # with their damping read, nothing that the models hold is left out
            from_mujoco(mujoco.MjModel.from_xml_string(xml), friction=True)
