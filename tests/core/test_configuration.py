"""Configurations: neutral, random, integrate and difference against Pinocchio, MuJoCo layouts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import invdyn
from conftest import assert_close
from invdyn.configuration import (
    difference,
    from_mujoco_state,
    integrate,
    mujoco_index,
    neutral,
    normalize,
    quat_exp,
    quat_log,
    random_configuration,
    to_mujoco_state,
)
from invdyn.io.mjcf import from_mujoco
from invdyn.model import JOINT_NQ, JOINT_NV, JointType, Model

try:
    import mujoco
except ImportError:  # the mujoco tests skip; the others run
    mujoco = None
requires_mujoco = pytest.mark.skipif(mujoco is None, reason="mujoco is not installed")

J = JointType
ALL_TYPES = (J.FREE, J.SPHERICAL, J.CONTINUOUS, J.REVOLUTE, J.PRISMATIC, J.SPHERICAL, J.REVOLUTE)


def chain(
    types: tuple[JointType, ...],
    lower: list[float] | None = None,
    upper: list[float] | None = None,
) -> Model:
    """A serial chain of unit bodies with the given joints, unbounded unless limits are given."""
    n = len(types)
    nq = sum(JOINT_NQ[t] for t in types)
    nv = sum(JOINT_NV[t] for t in types)
    return Model(
        name="chain",
        body_name=tuple(f"body{i}" for i in range(n)),
        jnt_name=tuple(f"joint{i}" for i in range(n)),
        body_parent=np.arange(n) - 1,
        body_mass=np.ones(n),
        body_com=np.zeros((n, 3)),
        body_inertia=np.tile(0.1 * np.eye(3), (n, 1, 1)),
        jnt_type=np.array([int(t) for t in types]),
        jnt_axis=np.tile([1.0, 0.0, 0.0], (n, 1)),
        jnt_pos=np.zeros((n, 3)),
        jnt_rot=np.tile(np.eye(3), (n, 1, 1)),
        q_lower=np.full(nq, -np.inf) if lower is None else np.array(lower),
        q_upper=np.full(nq, np.inf) if upper is None else np.array(upper),
        dof_velocity_limit=np.full(nv, np.inf),
        dof_effort_limit=np.full(nv, np.inf),
        dof_armature=np.zeros(nv),
        dof_damping=np.zeros(nv),
        dof_friction=np.zeros(nv),
        frame_name=(),
        frame_body=np.zeros(0, dtype=np.int64),
        frame_pos=np.zeros((0, 3)),
        frame_rot=np.zeros((0, 3, 3)),
    )


def pinocchio_chain(types: tuple[JointType, ...]) -> tuple[Any, Any]:
    """Pinocchio's module and the same chain built in Pinocchio (skips if it is missing)."""
    pin = pytest.importorskip("pinocchio")
    joints = {
        J.FREE: pin.JointModelFreeFlyer,
        J.SPHERICAL: pin.JointModelSpherical,
        J.CONTINUOUS: pin.JointModelRUBX,
        J.REVOLUTE: pin.JointModelRX,
        J.PRISMATIC: pin.JointModelPX,
    }
    model = pin.Model()
    parent = 0
    for i, t in enumerate(types):
        parent = model.addJoint(parent, joints[t](), pin.SE3.Identity(), f"joint{i}")
    return pin, model


def _same_quaternions(model: Model, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """`q1` with each quaternion's sign flipped to agree with `q0`'s (q and -q are one rotation)."""
    q1 = np.array(q1)
    for t, start in zip(model.jnt_type, model.jnt_qadr, strict=True):
        if t in (J.SPHERICAL, J.FREE):
            s = start + (3 if t == J.FREE else 0)
            sign = np.sign(np.sum(q0[..., s : s + 4] * q1[..., s : s + 4], axis=-1, keepdims=True))
            q1[..., s : s + 4] *= sign
    return q1


# against pinocchio


def test_neutral_matches_pinocchio() -> None:
    pin, pin_model = pinocchio_chain(ALL_TYPES)
    np.testing.assert_array_equal(neutral(chain(ALL_TYPES)), pin.neutral(pin_model))


def test_neutral_ignores_limits() -> None:
    model = chain((J.REVOLUTE, J.PRISMATIC), lower=[0.5, 0.1], upper=[1.0, 0.2])
    np.testing.assert_array_equal(neutral(model), [0.0, 0.0])


@pytest.mark.parametrize("scale", [1e-9, 1e-3, 1.0, 2.5])
def test_integrate_matches_pinocchio(scale: float) -> None:
    model = chain(ALL_TYPES)
    pin, pin_model = pinocchio_chain(ALL_TYPES)
    rng = np.random.default_rng(0)
    for _ in range(10):
        q = random_configuration(model, rng=rng)
        v = scale * rng.uniform(-1.0, 1.0, model.nv)
        expected = pin.integrate(pin_model, q, v)
        np.testing.assert_allclose(integrate(model, q, v), expected, atol=1e-12)
        np.testing.assert_allclose(integrate(model, q, v / 4.0, dt=4.0), expected, atol=1e-12)


def test_normalize_matches_pinocchio() -> None:
    model = chain(ALL_TYPES)
    pin, pin_model = pinocchio_chain(ALL_TYPES)
    rng = np.random.default_rng(1)
    q = random_configuration(model, rng=rng, shape=5) * rng.uniform(0.2, 3.0, (5, model.nq))
    ours = normalize(model, q)
    for row, expected in zip(ours, q, strict=True):
        np.testing.assert_allclose(row, pin.normalize(pin_model, expected), atol=1e-14)
    np.testing.assert_allclose(normalize(model, ours), ours, atol=1e-15)
    zero = neutral(model)
    zero[model.jnt_qadr[0] + 3 : model.jnt_qadr[0] + 7] = 0.0
    assert JointType(model.jnt_type[0]) == J.FREE
    message = r"the quaternion of joint 'joint0' \(q\[\.\.\., 3:7\]\) has zero norm"
    with pytest.raises(invdyn.InputError, match=message):
        normalize(model, zero)


@pytest.mark.parametrize("scale", [1e-3, 1.0])
def test_difference_matches_pinocchio(scale: float) -> None:
    model = chain(ALL_TYPES)
    pin, pin_model = pinocchio_chain(ALL_TYPES)
    rng = np.random.default_rng(1)
    for _ in range(10):
        q0 = random_configuration(model, rng=rng)
        # far apart for scale 1, nearby for the small scale
        far = random_configuration(model, rng=rng)
        q1 = far if scale == 1.0 else integrate(model, q0, scale * rng.standard_normal(model.nv))
        np.testing.assert_allclose(
            difference(model, q0, q1), pin.difference(pin_model, q0, q1), atol=1e-10
        )


@pytest.mark.parametrize("scale", [1e-12, 1e-8, 1e-5, 1e-2])
def test_small_steps_are_exact(scale: float) -> None:
    # the series branches near zero rotation
    model = chain(ALL_TYPES)
    rng = np.random.default_rng(12)
    q0 = random_configuration(model, rng=rng, shape=20)
    v = scale * rng.standard_normal((20, model.nv))
    np.testing.assert_allclose(
        difference(model, q0, integrate(model, q0, v)), v, rtol=1e-6, atol=1e-14
    )


def test_integrate_and_difference_are_inverse() -> None:
    model = chain(ALL_TYPES)
    rng = np.random.default_rng(2)
    q0 = random_configuration(model, rng=rng, shape=50)
    q1 = random_configuration(model, rng=rng, shape=50)
    reached = integrate(model, q0, difference(model, q0, q1))
    np.testing.assert_allclose(_same_quaternions(model, q1, reached), q1, atol=1e-10)
    # rotation angles below pi come back exactly
    v = rng.uniform(-1.0, 1.0, (50, model.nv))
    np.testing.assert_allclose(difference(model, q0, integrate(model, q0, v)), v, atol=1e-10)
    np.testing.assert_allclose(difference(model, q0, q0), 0.0, atol=1e-12)


def test_batches_broadcast() -> None:
    model = chain(ALL_TYPES)
    rng = np.random.default_rng(3)
    q = random_configuration(model, rng=rng, shape=(4, 3))
    v = rng.standard_normal(model.nv)
    out = integrate(model, q, v)
    assert out.shape == (4, 3, model.nq)
    for index in np.ndindex(4, 3):
        np.testing.assert_allclose(out[index], integrate(model, q[index], v), atol=1e-14)
    delta = difference(model, q[0], q)
    assert delta.shape == (4, 3, model.nv)
    np.testing.assert_allclose(delta[2, 1], difference(model, q[0, 1], q[2, 1]), atol=1e-14)


# random configurations


def test_random_configuration_shapes_and_seeds() -> None:
    model = chain(ALL_TYPES)
    assert random_configuration(model).shape == (model.nq,)
    assert random_configuration(model, shape=5).shape == (5, model.nq)
    assert random_configuration(model, shape=(2, 3)).shape == (2, 3, model.nq)
    np.testing.assert_array_equal(
        random_configuration(model, rng=7, shape=3), random_configuration(model, rng=7, shape=3)
    )
    assert random_configuration(model, shape=0).shape == (0, model.nq)
    for shape in (-1, (2, -3), 2.5, "3", True, None):
        with pytest.raises(
            invdyn.InputError, match="shape must be an integer >= 0 or a tuple of them"
        ):
            random_configuration(model, shape=shape)
    with pytest.raises(
        invdyn.InputError, match="rng must be a numpy Generator, a seed or None, got 'x'"
    ):
        random_configuration(model, rng="x")


def test_random_configuration_is_valid() -> None:
    model = chain(ALL_TYPES)
    q = random_configuration(model, rng=4, shape=2000)
    for t, start in zip(model.jnt_type, model.jnt_qadr, strict=True):
        if t == J.CONTINUOUS:
            np.testing.assert_allclose(np.hypot(q[:, start], q[:, start + 1]), 1.0)
        elif t in (J.SPHERICAL, J.FREE):
            s = start + (3 if t == J.FREE else 0)
            np.testing.assert_allclose(np.linalg.norm(q[:, s : s + 4], axis=-1), 1.0)
            # uniform rotations: each component averages zero
            assert np.all(np.abs(q[:, s : s + 4].mean(axis=0)) < 0.05)
        if t == J.FREE:
            assert np.all(np.abs(q[:, start : start + 3]) <= 1.0)
        if t == J.REVOLUTE:
            assert np.all(np.abs(q[:, start]) <= np.pi)
            assert q[:, start].min() < -3.0 and q[:, start].max() > 3.0
        if t == J.PRISMATIC:
            assert np.all(np.abs(q[:, start]) <= 1.0)


def test_random_configuration_respects_limits() -> None:
    inf = np.inf
    types = (J.REVOLUTE, J.REVOLUTE, J.REVOLUTE, J.PRISMATIC)
    model = chain(types, lower=[0.2, -inf, 4.0, -0.01], upper=[0.3, -5.0, inf, 0.02])
    q = random_configuration(model, rng=5, shape=1000)
    assert np.all((q[:, 0] >= 0.2) & (q[:, 0] <= 0.3))
    # a half-bounded coordinate reaches pi beyond its finite limit
    assert np.all((q[:, 1] >= -5.0 - np.pi) & (q[:, 1] <= -5.0))
    assert np.all((q[:, 2] >= 4.0) & (q[:, 2] <= 4.0 + np.pi))
    assert np.all((q[:, 3] >= -0.01) & (q[:, 3] <= 0.02))


# bad input


@pytest.mark.parametrize(
    ("q", "v", "message"),
    [
        (np.zeros(5), None, r"q must have shape \(\.\.\., 20\), got \(5,\)"),
        (0.0, None, r"q must have shape \(\.\.\., 20\), got \(\)"),
        (None, np.zeros((2, 4)), r"v must have shape \(\.\.\., 16\), got \(2, 4\)"),
        (np.full(20, np.nan), None, "q holds a non-finite value"),
        (None, np.full(16, np.inf), "v holds a non-finite value"),
        ("abc", None, "q must be an array of numbers"),
        (np.zeros(20, dtype=complex), None, "q must be an array of numbers"),
        (None, np.zeros(16, dtype="datetime64[s]"), "v must be an array of numbers"),
    ],
)
def test_integrate_rejects_bad_input(q: Any, v: Any, message: str) -> None:
    model = chain(ALL_TYPES)
    q = neutral(model) if q is None else q
    v = np.zeros(model.nv) if v is None else v
    with pytest.raises(invdyn.InputError, match=message):
        integrate(model, q, v)


@pytest.mark.parametrize(
    "joint", [i for i, t in enumerate(ALL_TYPES) if t in (J.FREE, J.SPHERICAL, J.CONTINUOUS)]
)
def test_a_direction_of_zero_norm_is_refused_by_name(joint: int) -> None:
    """A quaternion or (cos, sin) pair of zeros has no direction: integrate and difference
    refuse it, naming the joint, rather than return NaN."""
    model = chain(ALL_TYPES)
    jtype = JointType(model.jnt_type[joint])
    start = model.jnt_qadr[joint] + (3 if jtype == J.FREE else 0)
    stop = model.jnt_qadr[joint] + model.jnt_nq[joint]
    zero = np.tile(neutral(model), (2, 1))
    zero[1, start:stop] = 0.0
    message = rf"joint '{model.jnt_name[joint]}' \(q0?\[\.\.\., {start}:{stop}\]\) has zero norm"
    with pytest.raises(invdyn.InputError, match=message):
        integrate(model, zero, np.zeros(model.nv))
    with pytest.raises(invdyn.InputError, match=message.replace("q0?", "q0")):
        difference(model, zero, neutral(model))
    with pytest.raises(invdyn.InputError, match=message):
        normalize(model, zero)


def test_difference_rejects_bad_input() -> None:
    model = chain(ALL_TYPES)
    with pytest.raises(invdyn.InputError, match="q1 must have shape"):
        difference(model, neutral(model), np.zeros(3))
    with pytest.raises(invdyn.InputError, match="q0 holds a non-finite"):
        difference(model, np.full(model.nq, np.nan), neutral(model))
    with pytest.raises(invdyn.InputError, match=r"do not broadcast: q0 \(2,\), q1 \(3,\)"):
        difference(model, np.tile(neutral(model), (2, 1)), np.tile(neutral(model), (3, 1)))
    with pytest.raises(invdyn.InputError, match="dt must be finite"):
        integrate(model, neutral(model), np.zeros(model.nv), dt=np.nan)


# mujoco layouts

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


@requires_mujoco
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


@requires_mujoco
def test_mujoco_rest_and_neutral() -> None:
    mj_model, model = _robot()
    qpos, qvel = to_mujoco_state(model, mj_model, neutral(model))
    np.testing.assert_array_equal(qvel, 0.0)
    np.testing.assert_array_equal(qpos[3:7], [1.0, 0.0, 0.0, 0.0])
    q, v = from_mujoco_state(model, mj_model, mj_model.qpos0)
    np.testing.assert_array_equal(v, 0.0)
    assert q.shape == (model.nq,)


@requires_mujoco
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


@requires_mujoco
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
        _same_quaternions(model, q_next, integrate(model, q, v, dt)), q_next, atol=1e-11
    )


@requires_mujoco
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


@requires_mujoco
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


@requires_mujoco
def test_mujoco_mismatch_is_reported() -> None:
    mj_model, model = _robot()
    renamed = model.replace(jnt_name=("root", "ball", "elbow_hinge", "slide"))
    with pytest.raises(invdyn.InputError, match="no joint named 'elbow_hinge'"):
        to_mujoco_state(renamed, mj_model, neutral(model))
    types = model.jnt_type.copy()
    types[2] = J.PRISMATIC
    with pytest.raises(invdyn.InputError, match=r"'hinge' is PRISMATIC.*hinge joint"):
        from_mujoco_state(model.replace(jnt_type=types), mj_model, mj_model.qpos0)


@requires_mujoco
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


def test_quaternion_log_and_exp_match_scipy_and_invert_each_other():
    """log of quaternions of any norm, either sign, is SciPy's rotation vector of the rotation
    they point to, and exp takes it back to the unit quaternion of w >= 0; a zero or NaN
    quaternion is refused."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(7)
    unit = rng.normal(size=(50, 4))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    unit[:3] = [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, -1.0], [1.0, 0.0, 0.0, 0.0]]
    scaled = unit * rng.uniform(0.1, 10.0, size=(50, 1)) * rng.choice([-1.0, 1.0], size=(50, 1))
    expected = Rotation.from_quat(unit).as_rotvec()
    # at pi, +axis and -axis are the same rotation
    logged = quat_log(scaled)
    at_pi = np.isclose(np.linalg.norm(expected, axis=1), np.pi)
    assert_close(np.abs(logged[at_pi]), np.abs(expected[at_pi]), rtol=1e-12)
    assert_close(logged[~at_pi], expected[~at_pi], rtol=1e-12)
    positive = np.where(unit[:, 3:] < 0.0, -unit, unit)
    assert_close(quat_exp(logged[~at_pi]), positive[~at_pi], rtol=1e-12)
    for bad in (np.zeros(4), np.array([np.nan, 0.0, 0.0, 1.0])):
        with pytest.raises(invdyn.InputError, match="quat"):
            quat_log(bad)
