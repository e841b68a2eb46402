"""Configurations: neutral, random, integrate and difference against Pinocchio."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import invdyn
from conftest import assert_close, same_quaternions
from invdyn.configuration import difference, integrate, neutral, normalize, random_configuration
from invdyn.io.mjcf import MJ_JOINT_TYPES, MJ_SIZES
from invdyn.kernels import cpu
from invdyn.model import JOINTS, JointType, Model

J = JointType
ALL_TYPES = (J.FREE, J.SPHERICAL, J.CONTINUOUS, J.REVOLUTE, J.PRISMATIC, J.SPHERICAL, J.REVOLUTE)


def chain(
    types: tuple[JointType, ...],
    lower: list[float] | None = None,
    upper: list[float] | None = None,
) -> Model:
    """A serial chain of unit bodies with the given joints, unbounded unless limits are given."""
    n = len(types)
    nq = sum(JOINTS[t].nq for t in types)
    nv = sum(JOINTS[t].nv for t in types)
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
    np.testing.assert_allclose(same_quaternions(model, q1, reached), q1, atol=1e-10)
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


# the joint table


@pytest.mark.parametrize("jtype", list(JointType))
def test_each_joint_type_is_described_consistently(jtype: JointType) -> None:
    """A joint type's entry: sizes that agree with one another and with its functions, names
    for its coordinates where it has several, unit directions, conversions to MuJoCo's layout
    and back, and the code the compiled kernels know it by."""
    spec = JOINTS[jtype]
    assert getattr(cpu, jtype.name) == int(jtype)
    assert len(spec.neutral) == len(spec.sampling_width) == spec.nq
    assert len(spec.dof_units) == spec.nv
    for names, size in ((spec.q_names, spec.nq), (spec.v_names, spec.nv)):
        assert len(names) == (size if size > 1 else 0)
    assert len(spec.force_names) == len(spec.v_names)
    rng = np.random.default_rng(int(jtype))
    q = np.tile(spec.neutral, (3, 1))
    if spec.direction is not None:
        part = slice(spec.direction.start, spec.direction.stop)
        q[:, part] = spec.direction.draw(rng, (3,))
        assert_close(np.linalg.norm(q[:, part], axis=-1), np.ones(3), rtol=1e-14)
    v = 0.3 * rng.normal(size=(3, spec.nv))
    moved = spec.integrate(q, v)
    assert moved.shape == q.shape
    assert_close(spec.difference(q, moved), v, rtol=1e-12)
    assert spec.motion(np.array([0.0, 0.0, 1.0])).shape == (spec.nv, 6)
    qpos, qvel = spec.to_mujoco(q, v)
    assert (qpos.shape[-1], qvel.shape[-1]) == MJ_SIZES[MJ_JOINT_TYPES[spec.mujoco]]
    back = spec.from_mujoco(qpos, qvel)
    assert_close(back[0], q, rtol=1e-15)
    assert_close(back[1], v, rtol=1e-15)
