"""Oracle: invdyn against Pinocchio on every example-robot-data robot that Pinocchio loads.

Each robot is loaded twice from the same URDF, by `invdyn.load` and by
``pinocchio.buildModelFromUrdf``, with a fixed base and with a free flyer, and the two must
agree on the joint order and on ``rnea`` (with and without external forces), the mass matrix,
``aba`` and the analytic derivatives of rnea and aba at random states, one at a time and
batched.

Agreement means ``max |invdyn - pinocchio| <= 1e-9 * max(1, max |pinocchio|)`` over the whole
result (see `conftest.assert_close`): a relative error in the infinity norm, with an absolute
floor of 1e-9 for results near zero. Accelerations from ``aba`` are a linear solve with the mass
matrix, whose condition number reaches 1e9 on robots with light fingers (iCub), so no two
implementations agree on them to 1e-9; they must agree to 1e-9 in the force domain
(``M @ a``, the backward error) and to ``max(1e-9, 100 eps cond(M))`` directly.
"""

from __future__ import annotations

import functools
import warnings
import zlib

import numpy as np
import pytest

import invdyn
from conftest import assert_close, requires_erd
from invdyn.io import robots

pin = pytest.importorskip("pinocchio")

pytestmark = requires_erd

RTOL = 1e-9
NSTATES = 3
NBATCH = 4

ERD = [n for n, r in robots.available_robots().items() if r.package == "example-robot-data"]
# a flying base (hector, iris) has no moving joint once fixed: nothing to compare there
WITHOUT_JOINTS = {"hector", "iris"}
CASES = [
    pytest.param(name, floating, id=f"{name}-{'floating' if floating else 'fixed'}")
    for name in ERD
    for floating in (False, True)
    if floating or name not in WITHOUT_JOINTS
]


@functools.cache
def _models(name: str, floating: bool):
    """The invdyn and Pinocchio models of one robot."""
    path = robots.robot_path(name)
    try:
        root = pin.JointModelFreeFlyer() if floating else None
        pmodel = (
            pin.buildModelFromUrdf(str(path), root) if root else pin.buildModelFromUrdf(str(path))
        )
    except Exception as exc:
        pytest.fail(f"Pinocchio cannot load {name}: {exc}")
    assert pmodel.nv > 0, f"{name} has no moving joint"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        model = invdyn.load(name, floating_base=floating)
    return model, pmodel


def _load(name: str, floating: bool):
    return _models(name, floating)


def _states(model, pmodel, seed_name: str, n: int):
    """`n` random states ``(q, v, a)``; q from Pinocchio within finite bounds."""
    seed = zlib.crc32(seed_name.encode())
    pin.seed(seed)
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(pmodel.lowerPositionLimit), pmodel.lowerPositionLimit, -np.pi)
    upper = np.where(np.isfinite(pmodel.upperPositionLimit), pmodel.upperPositionLimit, np.pi)
    if model.floating_base:
        lower[:3], upper[:3] = -1.0, 1.0
    q = np.stack([pin.randomConfiguration(pmodel, lower, upper) for _ in range(n)])
    v = rng.normal(size=(n, model.nv))
    a = rng.normal(size=(n, model.nv))
    return q, v, a


def _pin_forces(f_ext: np.ndarray):
    """Pinocchio's per-joint forces (universe first) from invdyn's ``(nbody, 6)`` array.

    Both are spatial forces about the joint (body) frame origin in its own coordinates;
    invdyn orders them [torque; force], `pin.Force` takes (linear, angular).
    """
    forces = [pin.Force.Zero()]
    forces += [pin.Force(np.array(f[3:]), np.array(f[:3])) for f in f_ext]
    return forces


def _pin_mass_matrix(pmodel, pdata, q):
    upper = pin.crba(pmodel, pdata, q).copy()
    return np.triu(upper) + np.triu(upper, 1).T


def _assert_accelerations(ours, expected, mass, what):
    """Accelerations agree: the same forces ``M @ a``, and as close as cond(M) allows."""
    assert_close(mass @ ours, mass @ expected, rtol=RTOL, what=f"M @ {what}")
    eigenvalues = np.linalg.eigvalsh(mass)
    cond = eigenvalues[-1] / eigenvalues[0]
    rtol = max(RTOL, 100 * np.finfo(np.float64).eps * cond)
    assert_close(ours, expected, rtol=rtol, what=f"{what}, cond(M) {cond:.1e}")


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_joint_order(name, floating):
    model, pmodel = _load(name, floating)
    assert model.nq == pmodel.nq and model.nv == pmodel.nv and model.nbody == pmodel.njoints - 1
    assert tuple(model.joint_names) == tuple(pmodel.names[1:])
    assert model.floating_base == floating
    if floating:
        assert model.joint_names[0] == "root_joint"
    # same layout of q and v, joint by joint
    assert list(model.jnt_qadr) == [j.idx_q for j in pmodel.joints[1:]]
    assert list(model.jnt_vadr) == [j.idx_v for j in pmodel.joints[1:]]
    assert_close(model.body_mass, [inertia.mass for inertia in pmodel.inertias[1:]], what="mass")
    assert_close(model.gravity, pmodel.gravity.linear, what="gravity")


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_rnea(name, floating):
    model, pmodel = _load(name, floating)
    pdata = pmodel.createData()
    q, v, a = _states(model, pmodel, name + "/rnea", NSTATES)
    f_ext = np.random.default_rng(0).normal(scale=10.0, size=(NSTATES, model.nbody, 6))
    for k in range(NSTATES):
        where = f"{name} state {k}"
        tau = pin.rnea(pmodel, pdata, q[k], v[k], a[k]).copy()
        assert_close(invdyn.rnea(model, q[k], v[k], a[k]), tau, rtol=RTOL, what=f"rnea {where}")
        tau = pin.rnea(pmodel, pdata, q[k], v[k], a[k], _pin_forces(f_ext[k])).copy()
        ours = invdyn.rnea(model, q[k], v[k], a[k], f_ext=f_ext[k])
        assert_close(ours, tau, rtol=RTOL, what=f"rnea with f_ext, {where}")


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_mass_matrix(name, floating):
    model, pmodel = _load(name, floating)
    pdata = pmodel.createData()
    q, _, _ = _states(model, pmodel, name + "/crba", NSTATES)
    for k in range(NSTATES):
        mass = _pin_mass_matrix(pmodel, pdata, q[k])
        ours = invdyn.mass_matrix(model, q[k])
        assert_close(ours, mass, rtol=RTOL, what=f"M {name} state {k}")


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_coriolis_matrix(name, floating):
    """The same factorisation, the Christoffel symbols of M, not merely one with the same C v."""
    model, pmodel = _load(name, floating)
    pdata = pmodel.createData()
    q, v, _ = _states(model, pmodel, name + "/coriolis", NSTATES)
    for k in range(NSTATES):
        expected = pin.computeCoriolisMatrix(pmodel, pdata, q[k], v[k]).copy()
        ours = invdyn.coriolis(model, q[k], v[k])
        assert_close(ours, expected, rtol=RTOL, what=f"C {name} state {k}")


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_rnea_derivatives(name, floating):
    model, pmodel = _load(name, floating)
    pdata = pmodel.createData()
    q, v, a = _states(model, pmodel, name + "/rnea-derivatives", NSTATES)
    f_ext = np.random.default_rng(1).normal(scale=10.0, size=(NSTATES, model.nbody, 6))
    for k in range(NSTATES):
        where = f"{name} state {k}"
        forces = _pin_forces(f_ext[k])
        expected = [
            x.copy() for x in pin.computeRNEADerivatives(pmodel, pdata, q[k], v[k], a[k], forces)
        ]
        expected[2] = np.triu(expected[2]) + np.triu(expected[2], 1).T
        ours = invdyn.rnea_derivatives(model, q[k], v[k], a[k], f_ext=f_ext[k])
        for what, x, y in zip(("dtau/dq", "dtau/dv", "dtau/da"), ours, expected):
            assert_close(x, y, rtol=RTOL, what=f"{what} {where}")


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_aba_derivatives(name, floating):
    model, pmodel = _load(name, floating)
    pdata = pmodel.createData()
    q, v, a = _states(model, pmodel, name + "/aba-derivatives", NSTATES)
    for k in range(NSTATES):
        tau = pin.rnea(pmodel, pdata, q[k], v[k], a[k]).copy()
        expected = [x.copy() for x in pin.computeABADerivatives(pmodel, pdata, q[k], v[k], tau)]
        if not all(np.all(np.isfinite(x)) for x in expected):
            # massless moving bodies (romeo), as in test_aba
            with pytest.raises(invdyn.ModelError, match="mass matrix is singular"):
                invdyn.aba_derivatives(model, q[k], v[k], tau)
            return
        ours = invdyn.aba_derivatives(model, q[k], v[k], tau)
        mass = _pin_mass_matrix(pmodel, pdata, q[k])
        eigenvalues = np.linalg.eigvalsh(mass)
        cond = eigenvalues[-1] / eigenvalues[0]
        # solutions of M X = B agree in the force domain; a whole inverse only as cond(M) allows
        rtol = max(RTOL, 100 * np.finfo(np.float64).eps * cond)
        for what, x, y in zip(("da/dq", "da/dv", "da/dtau"), ours, expected):
            assert_close(mass @ x, mass @ y, rtol=rtol, what=f"M {what} {name} state {k}")


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_aba(name, floating):
    model, pmodel = _load(name, floating)
    pdata = pmodel.createData()
    q, v, a = _states(model, pmodel, name + "/aba", NSTATES)
    f_ext = np.random.default_rng(0).normal(scale=10.0, size=(NSTATES, model.nbody, 6))
    for k in range(NSTATES):
        where = f"{name} state {k}"
        # forces that produce a moderate acceleration
        tau = pin.rnea(pmodel, pdata, q[k], v[k], a[k]).copy()
        acc = pin.aba(pmodel, pdata, q[k], v[k], tau).copy()
        if not np.all(np.isfinite(acc)):
            # massless moving bodies (romeo): the mass matrix is singular, and where Pinocchio
            # returns non-finite accelerations invdyn must refuse with its documented error
            with pytest.raises(invdyn.ModelError, match="mass matrix is singular"):
                invdyn.aba(model, q[k], v[k], tau)
            return
        mass = _pin_mass_matrix(pmodel, pdata, q[k])
        _assert_accelerations(invdyn.aba(model, q[k], v[k], tau), acc, mass, f"aba {where}")
        forces = _pin_forces(f_ext[k])
        acc = pin.aba(pmodel, pdata, q[k], v[k], tau, forces).copy()
        ours = invdyn.aba(model, q[k], v[k], tau, f_ext=f_ext[k])
        _assert_accelerations(ours, acc, mass, f"aba with f_ext, {where}")


@pytest.mark.parametrize(("name", "floating"), CASES)
def test_batch(name, floating):
    """Leading batch dimensions, here (2, NBATCH // 2), give the results state by state."""
    model, pmodel = _load(name, floating)
    pdata = pmodel.createData()
    q, v, a = _states(model, pmodel, name + "/batch", NBATCH)
    f_ext = np.random.default_rng(0).normal(size=(NBATCH, model.nbody, 6))
    forces = [_pin_forces(f) for f in f_ext]
    tau = np.stack([pin.rnea(pmodel, pdata, q[k], v[k], a[k], forces[k]) for k in range(NBATCH)])
    mass = np.stack([_pin_mass_matrix(pmodel, pdata, q[k]) for k in range(NBATCH)])
    acc = np.stack([pin.aba(pmodel, pdata, q[k], v[k], tau[k], forces[k]) for k in range(NBATCH)])

    def batch(x):
        return x.reshape(2, NBATCH // 2, *x.shape[1:])

    ours = invdyn.rnea(model, batch(q), batch(v), batch(a), f_ext=batch(f_ext))
    assert_close(ours, batch(tau), rtol=RTOL, what=f"batched rnea {name}")
    ours = invdyn.mass_matrix(model, batch(q))
    assert_close(ours, batch(mass), rtol=RTOL, what=f"batched M {name}")
    if np.all(np.isfinite(acc)):  # test_aba reports robots with a singular mass matrix
        ours = invdyn.aba(model, batch(q), batch(v), batch(tau), f_ext=batch(f_ext))
        assert ours.shape == batch(acc).shape
        for k, a_k in enumerate(ours.reshape(acc.shape)):
            _assert_accelerations(a_k, acc[k], mass[k], f"batched aba {name} state {k}")


@pytest.mark.parametrize(
    ("name", "floating"),
    [
        pytest.param(n, f, id=f"{n}-{'floating' if f else 'fixed'}")
        for n, f in [("panda", False), ("ur5", False), ("talos", True), ("solo12", True)]
    ],
)
def test_armature(name, floating):
    """Rotor inertias on every degree of freedom, the free flyer's included."""
    model, pmodel = _load(name, floating)
    pmodel = pin.Model(pmodel)
    armature = np.random.default_rng(1).uniform(0.01, 0.5, size=model.nv)
    pmodel.armature = armature
    model = model.replace(dof_armature=armature)
    pdata = pmodel.createData()
    q, v, a = _states(model, pmodel, name + "/armature", NSTATES)
    for k in range(NSTATES):
        where = f"{name} with armature, state {k}"
        tau = pin.rnea(pmodel, pdata, q[k], v[k], a[k]).copy()
        assert_close(invdyn.rnea(model, q[k], v[k], a[k]), tau, rtol=RTOL, what=f"rnea {where}")
        mass = _pin_mass_matrix(pmodel, pdata, q[k])
        assert_close(invdyn.mass_matrix(model, q[k]), mass, rtol=RTOL, what=f"M {where}")
        acc = pin.aba(pmodel, pdata, q[k], v[k], tau).copy()
        _assert_accelerations(invdyn.aba(model, q[k], v[k], tau), acc, mass, f"aba {where}")


def test_enough_robots():
    """The oracle covers at least 20 robots, among them the ones users ask for first."""
    loaded = {case.values[0] for case in CASES}
    assert len(loaded) >= 20
    assert {"talos", "g1", "anymal", "solo12", "panda", "ur5"} <= loaded
