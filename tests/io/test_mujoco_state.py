"""MuJoCo's qpos and qvel layout: joints matched by name, states converted both ways, checked
against MuJoCo's own kinematics and integration."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import invdyn
from conftest import same_quaternions
from invdyn.configuration import difference, integrate, neutral, random_configuration
from invdyn.io.mjcf import from_mujoco
from invdyn.io.mujoco_state import from_mujoco_state, mujoco_index, to_mujoco_state
from invdyn.model import JointType, Model

mujoco = pytest.importorskip("mujoco")

J = JointType

ROBOT = """
<mujoco model="robot">
  <worldbody>
    <body name="base" pos="0 0 1" euler="10 20 30">
      <freejoint name="root"/>
      <geom type="box" size="0.2 0.1 0.05"/>
      <body name="shoulder" pos="0.2 0 0">
        <joint name="ball" type="ball" pos="0.05 0 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <body name="elbow" pos="0.3 0 0">
          <joint name="hinge" axis="0 1 0" pos="0 0.02 0" range="-90 90"/>
          <joint name="slide" type="slide" axis="1 0 0"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        </body>
      </body>
    </body>
    EXTRA
  </worldbody>
</mujoco>
"""
EXTRA = """
    <body name="ball_toy" pos="1 1 0.2"><freejoint name="toy"/><geom size="0.1"/></body>
    <body name="door" pos="2 0 0">
      <joint name="door" axis="0 0 1"/><geom size="0.1 0.5 1" type="box"/>
    </body>
"""


def _robot(extra: bool = False) -> tuple[Any, Model]:
    mj_model = mujoco.MjModel.from_xml_string(ROBOT.replace("EXTRA", EXTRA if extra else ""))
    return mj_model, from_mujoco(mujoco.MjModel.from_xml_string(ROBOT.replace("EXTRA", "")))


def test_mujoco_round_trip() -> None:
    mj_model, model = _robot()
    rng = np.random.default_rng(6)
    q = random_configuration(model, rng=rng, shape=7)
    v = rng.standard_normal((7, model.nv))
    qpos, qvel = to_mujoco_state(model, mj_model, q, v)
    assert qpos.shape == (7, mj_model.nq) and qvel.shape == (7, mj_model.nv)
    q_back, v_back = from_mujoco_state(model, mj_model, qpos, qvel)
    np.testing.assert_allclose(q_back, q, atol=1e-14)
    np.testing.assert_allclose(v_back, v, atol=1e-14)
    # the other way round, and quaternions are only reordered
    again = to_mujoco_state(model, mj_model, q_back, v_back)
    np.testing.assert_allclose(again[0], qpos, atol=1e-14)
    np.testing.assert_allclose(again[1], qvel, atol=1e-14)
    np.testing.assert_array_equal(qpos[:, 3:7], np.roll(q[:, 3:7], 1, axis=-1))


def test_mujoco_rest_and_neutral() -> None:
    mj_model, model = _robot()
    qpos, qvel = to_mujoco_state(model, mj_model, neutral(model))
    np.testing.assert_array_equal(qvel, 0.0)
    np.testing.assert_array_equal(qpos[3:7], [1.0, 0.0, 0.0, 0.0])
    q, v = from_mujoco_state(model, mj_model, mj_model.qpos0)
    np.testing.assert_array_equal(v, 0.0)
    assert q.shape == (model.nq,)


def test_free_flyer_velocity_matches_mujoco() -> None:
    # v = [linear, angular] of the base, both in the base frame
    mj_model, model = _robot()
    data = mujoco.MjData(mj_model)
    rng = np.random.default_rng(8)
    q = random_configuration(model, rng=rng)
    v = rng.standard_normal(model.nv)
    data.qpos[:], data.qvel[:] = to_mujoco_state(model, mj_model, q, v)
    mujoco.mj_forward(mj_model, data)
    velocity = np.zeros(6)
    mujoco.mj_objectVelocity(mj_model, data, mujoco.mjtObj.mjOBJ_XBODY, 1, velocity, 1)
    np.testing.assert_allclose(velocity[3:], v[:3], atol=1e-12)
    np.testing.assert_allclose(velocity[:3], v[3:6], atol=1e-12)


def test_velocities_agree_with_mujoco_integration() -> None:
    # a short step of mj_integratePos, read back, moves q by v dt to first order
    mj_model, model = _robot()
    rng = np.random.default_rng(9)
    q = random_configuration(model, rng=rng)
    v = rng.standard_normal(model.nv)
    qpos, qvel = to_mujoco_state(model, mj_model, q, v)
    dt = 1e-6
    mujoco.mj_integratePos(mj_model, qpos, qvel, dt)
    q_next, _ = from_mujoco_state(model, mj_model, qpos)
    np.testing.assert_allclose(difference(model, q, q_next) / dt, v, atol=1e-5)
    np.testing.assert_allclose(
        same_quaternions(model, q_next, integrate(model, q, v, dt)), q_next, atol=1e-11
    )


def test_mujoco_extra_joints() -> None:
    # joints that only mujoco has keep qpos0 and rest; matching is by name
    mj_model, model = _robot(extra=True)
    index = mujoco_index(model, mj_model)
    assert [mj_model.joint(j).name for j in index] == ["root", "ball", "hinge", "slide"]
    q = random_configuration(model, rng=10)
    qpos, qvel = to_mujoco_state(model, mj_model, q, np.ones(model.nv))
    np.testing.assert_array_equal(qpos[-8:], mj_model.qpos0[-8:])
    np.testing.assert_array_equal(qvel[-7:], 0.0)
    q_back, _ = from_mujoco_state(model, mj_model, qpos, qvel)
    np.testing.assert_allclose(q_back, q, atol=1e-14)


def test_continuous_joint_is_a_hinge() -> None:
    mj_model, model = _robot()
    # the hinge as a continuous joint: (cos, sin) in q, the angle in qpos
    types = model.jnt_type.copy()
    types[2] = J.CONTINUOUS
    start = model.jnt_qadr[2]
    lower, upper = model.q_lower.copy(), model.q_upper.copy()
    lower[start], upper[start] = -np.inf, np.inf
    continuous = model.replace(
        jnt_type=types,
        q_lower=np.insert(lower, start, -np.inf),
        q_upper=np.insert(upper, start, np.inf),
    )
    q = random_configuration(continuous, rng=11)
    qpos, _ = to_mujoco_state(continuous, mj_model, q)
    assert qpos[start] == pytest.approx(np.arctan2(q[start + 1], q[start]))
    q_back, _ = from_mujoco_state(continuous, mj_model, qpos)
    np.testing.assert_allclose(q_back, q, atol=1e-14)


def test_mujoco_mismatch_is_reported() -> None:
    mj_model, model = _robot()
    renamed = model.replace(jnt_name=("root", "ball", "elbow_hinge", "slide"))
    with pytest.raises(invdyn.InputError, match="no joint named 'elbow_hinge'"):
        to_mujoco_state(renamed, mj_model, neutral(model))
    types = model.jnt_type.copy()
    types[2] = J.PRISMATIC
    with pytest.raises(invdyn.InputError, match=r"'hinge' is PRISMATIC.*hinge joint"):
        from_mujoco_state(model.replace(jnt_type=types), mj_model, mj_model.qpos0)


def test_mujoco_rejects_bad_input() -> None:
    mj_model, model = _robot()
    with pytest.raises(
        invdyn.InputError, match=r"qpos must have shape \(\.\.\., \d+\), got \(3,\)"
    ):
        from_mujoco_state(model, mj_model, np.zeros(3))
    with pytest.raises(invdyn.InputError, match="qvel holds a non-finite"):
        from_mujoco_state(model, mj_model, mj_model.qpos0, np.full(mj_model.nv, np.nan))
    with pytest.raises(invdyn.InputError, match="v must have shape"):
        to_mujoco_state(model, mj_model, neutral(model), np.zeros(2))
    # an MjData in place of its MjModel
    with pytest.raises(invdyn.InputError, match="compiled mujoco.MjModel, got MjData"):
        to_mujoco_state(model, mujoco.MjData(mj_model), neutral(model))
