"""Centre of mass and centroidal momentum: against Pinocchio, and by finite differences."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import invdyn
from conftest import SAMPLE_ROBOTS, assert_close, invdyn_and_pinocchio, requires_erd, robot_params
from invdyn.configuration import integrate, random_configuration

pytestmark = requires_erd

CASES = robot_params(SAMPLE_ROBOTS)
NSTATES = 3


def _states(model, seed: str, n: int = NSTATES):
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    q = random_configuration(model, rng=rng, shape=n)
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_against_pinocchio(name, floating):
    """Batched, against Pinocchio's, which orders momenta [linear; angular]."""
    pin = pytest.importorskip("pinocchio")
    model, pmodel = invdyn_and_pinocchio(name, floating)
    pdata = pmodel.createData()
    q, v, a = _states(model, name + "/pin")
    com, jacobian, matrix, rate = [], [], [], []
    for k in range(NSTATES):
        com.append(pin.centerOfMass(pmodel, pdata, q[k]).copy())
        jacobian.append(pin.jacobianCenterOfMass(pmodel, pdata, q[k]).copy())
        centroidal = pin.computeCentroidalMap(pmodel, pdata, q[k])
        matrix.append(np.vstack([centroidal[3:], centroidal[:3]]))
        pin.computeCentroidalMomentumTimeVariation(pmodel, pdata, q[k], v[k], a[k])
        rate.append(np.r_[pdata.dhg.angular, pdata.dhg.linear])
    assert_close(invdyn.center_of_mass(model, q), np.array(com), what=f"com {name}")
    ours = invdyn.center_of_mass_jacobian(model, q)
    assert_close(ours, np.array(jacobian), what=f"com Jacobian {name}")
    ours = invdyn.centroidal_momentum_matrix(model, q)
    assert_close(ours, np.array(matrix), what=f"centroidal matrix {name}")
    ours = invdyn.centroidal_momentum_rate(model, q, v, a)
    assert_close(ours, np.array(rate), what=f"momentum rate {name}")


@pytest.mark.parametrize(("name", "floating"), robot_params([("panda", False), ("talos", True)]))
def test_a_large_batch_and_one_state_against_pinocchio(name, floating):
    """A (4, 10) batch, large enough to run in parallel, with v and a of (10, nv) broadcast
    against it, and its first state alone (the single-state path), against Pinocchio."""
    pin = pytest.importorskip("pinocchio")
    model, pmodel = invdyn_and_pinocchio(name, floating)
    pdata = pmodel.createData()
    q, v, a = _states(model, name + "/batch", 40)
    q, v, a = q.reshape(4, 10, model.nq), v[:10], a[:10]
    results = {
        "com": invdyn.center_of_mass(model, q),
        "com Jacobian": invdyn.center_of_mass_jacobian(model, q),
        "centroidal matrix": invdyn.centroidal_momentum_matrix(model, q),
        "momentum rate": invdyn.centroidal_momentum_rate(model, q, v, a),
    }
    singles = {
        "com": invdyn.center_of_mass(model, q[0, 0]),
        "com Jacobian": invdyn.center_of_mass_jacobian(model, q[0, 0]),
        "centroidal matrix": invdyn.centroidal_momentum_matrix(model, q[0, 0]),
        "momentum rate": invdyn.centroidal_momentum_rate(model, q[0, 0], v[0], a[0]),
    }
    for i, j in np.ndindex(4, 10):
        centroidal = pin.computeCentroidalMap(pmodel, pdata, q[i, j])
        pin.computeCentroidalMomentumTimeVariation(pmodel, pdata, q[i, j], v[j], a[j])
        expected = {
            "com": pin.centerOfMass(pmodel, pdata, q[i, j]),
            "com Jacobian": pin.jacobianCenterOfMass(pmodel, pdata, q[i, j]),
            "centroidal matrix": np.vstack([centroidal[3:], centroidal[:3]]),
            "momentum rate": np.r_[pdata.dhg.angular, pdata.dhg.linear],
        }
        for what, ours in results.items():
            assert_close(ours[i, j], expected[what], what=f"{what} {name} state {i, j}")
            if (i, j) == (0, 0):
                assert_close(singles[what], expected[what], what=f"one state's {what} {name}")


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_finite_differences(name, floating):
    """The Jacobian moves the centre of mass, and the rate is the momentum's derivative along
    q(t) = q + v t + a t^2 / 2 (on the configuration manifold), v(t) = v + a t."""
    model, _ = invdyn_and_pinocchio(name, floating)
    (q,), (v,), (a,) = _states(model, name + "/fd", 1)
    eps = 1e-5
    ahead, behind = (integrate(model, q, s * eps * v + 0.5 * eps**2 * a) for s in (1, -1))
    moved = invdyn.center_of_mass(model, ahead) - invdyn.center_of_mass(model, behind)
    jacobian = invdyn.center_of_mass_jacobian(model, q)
    assert_close(jacobian @ v, moved / (2 * eps), rtol=1e-6, what=f"com velocity {name}")
    momentum = [
        invdyn.centroidal_momentum_matrix(model, x) @ (v + s * eps * a)
        for x, s in ((ahead, 1), (behind, -1))
    ]
    rate = invdyn.centroidal_momentum_rate(model, q, v, a)
    assert_close(rate, (momentum[0] - momentum[1]) / (2 * eps), rtol=1e-6, what=f"rate {name}")
    # the linear momentum is the mass times the centre of mass velocity
    matrix = invdyn.centroidal_momentum_matrix(model, q)
    assert_close(matrix[3:], model.total_mass * jacobian, what=f"linear momentum {name}")


def test_a_free_body_keeps_its_momentum(load_robot):
    """Without gravity or contacts a floating robot's centroidal momentum is constant: the
    rate at the accelerations of the equations of motion is zero."""
    model = load_robot("solo12", floating_base=True).replace(gravity=np.zeros(3))
    q, v, _ = _states(model, "free")
    a = invdyn.aba(model, q, v, np.zeros((NSTATES, model.nv)))
    rate = invdyn.centroidal_momentum_rate(model, q, v, a)
    assert_close(rate, np.zeros_like(rate), rtol=1e-9, what="momentum rate of a free body")


def test_a_robot_without_mass_has_no_centre_of_mass(tmp_path):
    urdf = tmp_path / "massless.urdf"
    urdf.write_text(
        '<robot name="massless"><link name="base"/><link name="arm"/>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>'
    )
    with pytest.warns(invdyn.ModelWarning):
        model = invdyn.load(urdf)
    torch = pytest.importorskip("torch")
    states = (np.zeros((2, model.nq)), np.zeros(model.nq), torch.zeros(2, model.nq))
    for q in states:  # a batch, one state, and tensors
        for function in (
            invdyn.center_of_mass, invdyn.center_of_mass_jacobian, invdyn.centroidal_momentum_matrix
        ):  # fmt: skip
            with pytest.raises(invdyn.ModelError, match="massless: the moving bodies have no mass"):
                function(model, q)
        v = np.zeros((*q.shape[:-1], model.nv))
        with pytest.raises(invdyn.ModelError, match="no mass"):
            invdyn.centroidal_momentum_rate(model, q, v, v)
