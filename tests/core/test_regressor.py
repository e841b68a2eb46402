"""Joint-torque regressor and inertial parameters, against Pinocchio and by linearity.

``rnea(model, q, v, a) = joint_torque_regressor(model, q, v, a) @ inertial_parameters(model)``,
with 10 body columns per body in Pinocchio's order (``computeJointTorqueRegressor``), then the
armature, viscous and Coulomb friction columns of every degree of freedom.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import invdyn
from conftest import SAMPLE_ROBOTS, assert_close, invdyn_and_pinocchio, requires_erd, robot_params
from invdyn.configuration import random_configuration
from invdyn.model import Model
from invdyn.spatial import quaternion_to_matrix

RTOL = 1e-9

CASES = robot_params(SAMPLE_ROBOTS)


def _rng(seed: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(seed.encode()))


def _states(model: Model, seed: str, n: int):
    rng = _rng(seed)
    q = random_configuration(model, rng=rng, shape=n)
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES)
def test_regressor_matches_pinocchio(name, floating):
    pin = pytest.importorskip("pinocchio")
    model, pmodel = invdyn_and_pinocchio(name, floating)
    pdata = pmodel.createData()
    q, v, a = _states(model, name, 2)
    nbody = model.nbody
    for k in range(2):
        expected = pin.computeJointTorqueRegressor(pmodel, pdata, q[k], v[k], a[k]).copy()
        ours = invdyn.joint_torque_regressor(model, q[k], v[k], a[k])
        assert ours.shape == (model.nv, 10 * nbody + 3 * model.nv)
        assert expected.shape == (model.nv, 10 * nbody)
        assert_close(ours[:, : 10 * nbody], expected, rtol=RTOL, what=f"{name} regressor")


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES)
def test_parameters_match_pinocchio(name, floating):
    model, pmodel = invdyn_and_pinocchio(name, floating)
    params = invdyn.inertial_parameters(model)
    expected = np.concatenate([inertia.toDynamicParameters() for inertia in pmodel.inertias[1:]])
    assert_close(params[: 10 * model.nbody], expected, rtol=RTOL, what=f"{name} parameters")
    # the joint parameters follow: armature, damping, friction
    assert_close(params[10 * model.nbody :], np.zeros(3 * model.nv), what="joint parameters")


def test_parameter_layout(rng):
    """Pinocchio's order [m, m c, Ixx, Ixy, Iyy, Ixz, Iyz, Izz], the inertia about the origin."""
    model = invdyn.load("double_pendulum")
    armature, damping, friction = (rng.uniform(0.1, 1.0, 2) for _ in range(3))
    model = model.replace(dof_armature=armature, dof_damping=damping, dof_friction=friction)
    params = invdyn.inertial_parameters(model)
    assert params.shape == (10 * 2 + 3 * 2,)
    # each rod: m = 1, c = (0, 0, -0.5), about the origin Ixx = Iyy = Ic + m h^2, Izz = m r^2 / 2
    ic = (3 * 0.01**2 + 1.0) / 12
    rod = [1.0, 0.0, 0.0, -0.5, ic + 0.25, 0.0, ic + 0.25, 0.0, 0.0, 0.01**2 / 2]
    assert_close(params[:20], rod + rod, what="rod parameters")
    assert_close(params[20:], np.concatenate([armature, damping, friction]), what="joint params")


def test_joint_columns(rng):
    """The last 3 nv columns are diag(a), diag(v) and diag(sign v)."""
    model = invdyn.load("planar_2r")
    q, v, a = rng.normal(size=(3, 2))
    v[1] = 0.0  # sign(0) = 0: no Coulomb friction at rest
    y = invdyn.joint_torque_regressor(model, q, v, a)
    assert y.shape == (2, 26)
    np.testing.assert_array_equal(y[:, 20:22], np.diag(a))
    np.testing.assert_array_equal(y[:, 22:24], np.diag(v))
    np.testing.assert_array_equal(y[:, 24:26], np.diag(np.sign(v)))


def _random_inertias(model: Model, rng: np.random.Generator) -> Model:
    """A copy of `model` with random physical masses, centres of mass and inertias."""
    nbody = model.nbody
    mass = rng.uniform(0.1, 5.0, nbody)
    com = rng.normal(scale=0.1, size=(nbody, 3))
    # principal moments that satisfy the triangle inequality, in a random orientation
    moments = rng.uniform(0.01, 0.1, size=(nbody, 3))
    moments[:, 2] = rng.uniform(
        np.abs(moments[:, 0] - moments[:, 1]), moments[:, 0] + moments[:, 1]
    )
    quat = rng.normal(size=(nbody, 4))
    rot = quaternion_to_matrix(quat / np.linalg.norm(quat, axis=-1, keepdims=True))
    inertia = np.einsum("bij,bj,bkj->bik", rot, moments, rot)
    return model.replace(
        body_mass=mass,
        body_com=com,
        body_inertia=inertia,
        dof_armature=rng.uniform(0.0, 0.1, model.nv),
        dof_damping=rng.uniform(0.0, 1.0, model.nv),
        dof_friction=rng.uniform(0.0, 1.0, model.nv),
    )


@requires_erd
@pytest.mark.parametrize(("name", "floating"), CASES)
def test_regressor_is_independent_of_the_parameters(name, floating):
    """rnea of any parameters is the regressor of the original model times those parameters."""
    model, _ = invdyn_and_pinocchio(name, floating)
    other = _random_inertias(model, _rng(name + "/params"))
    q, v, a = _states(model, name + "/linear", 2)
    y = invdyn.joint_torque_regressor(model, q, v, a)
    np.testing.assert_array_equal(y, invdyn.joint_torque_regressor(other, q, v, a))
    tau = invdyn.rnea(other, q, v, a)
    assert_close(y @ invdyn.inertial_parameters(other), tau, rtol=RTOL, what=f"{name} Y @ p")


def test_batched_regressor_broadcasts(rng):
    model = invdyn.load("double_pendulum")
    q = rng.normal(size=(2, 3, 2))
    v = rng.normal(size=2)
    a = rng.normal(size=(3, 2))
    y = invdyn.joint_torque_regressor(model, q, v, a)
    assert y.shape == (2, 3, 2, 26)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(
                y[i, j], invdyn.joint_torque_regressor(model, q[i, j], v, a[j])
            )
    assert invdyn.joint_torque_regressor(model, np.zeros((0, 2)), v, v).shape == (0, 2, 26)
