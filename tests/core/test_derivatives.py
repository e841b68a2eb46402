"""Analytic derivatives of rnea and aba (`invdyn.rnea_derivatives`, `invdyn.aba_derivatives`).

Identity tier, on every robot of the dynamics identities (fixed and floating bases, continuous,
prismatic and ball joints), plain and with armature, viscous and Coulomb friction, with
external forces:

* d tau / dq and d tau / dv equal central finite differences of rnea, q moved along the
  tangent space by `integrate`; d tau / da is the mass matrix;
* d a / dq and d a / dv equal finite differences of aba, d a / d tau is the inverse mass matrix;
* batches equal single calls, leading shapes are kept;
* bodies numbered breadth first (a subtree's dofs not contiguous) give the same derivatives.

Pinocchio's ``computeRNEADerivatives`` and ``computeABADerivatives`` are the oracle in
test_oracle_pinocchio.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import invdyn
from conftest import assert_close, states, with_joint_terms
from invdyn.configuration import integrate

STEP = 1e-6
# central differences of smooth functions at STEP: truncation about STEP^2, rounding about
# eps / STEP of the function's scale
FD_RTOL = 1e-7


def _tangent_differences(function, model, q, step=STEP):
    """(out..., nv) central differences of function(q) along each tangent direction of q."""
    columns = []
    for k in range(model.nv):
        dq = np.zeros(model.nv)
        dq[k] = step
        columns.append(
            (function(integrate(model, q, dq)) - function(integrate(model, q, -dq))) / (2 * step)
        )
    return np.stack(columns, axis=-1)


def _differences(function, x, step=STEP):
    columns = []
    for k in range(len(x)):
        dx = np.zeros(len(x))
        dx[k] = step
        columns.append((function(x + dx) - function(x - dx)) / (2 * step))
    return np.stack(columns, axis=-1)


def test_rnea_derivatives_equal_finite_differences(model):
    q, v, a = (x[0] for x in states(model, "rnea-derivatives"))
    forces = np.random.default_rng(0).normal(size=(model.nbody, 6))
    dq, dv, da = invdyn.rnea_derivatives(model, q, v, a, f_ext=forces)
    expected_dq = _tangent_differences(
        lambda x: invdyn.rnea(model, x, v, a, f_ext=forces), model, q
    )
    expected_dv = _differences(lambda x: invdyn.rnea(model, q, x, a, f_ext=forces), v)
    assert_close(dq, expected_dq, rtol=FD_RTOL, what=f"{model.name} dtau/dq")
    assert_close(dv, expected_dv, rtol=FD_RTOL, what=f"{model.name} dtau/dv")
    assert_close(da, invdyn.mass_matrix(model, q), rtol=1e-12, what=f"{model.name} dtau/da")
    # without external forces: the single-state path of the compiled kernel
    plain = invdyn.rnea_derivatives(model, q, v, a)
    expected_dq = _tangent_differences(lambda x: invdyn.rnea(model, x, v, a), model, q)
    assert_close(plain[0], expected_dq, rtol=FD_RTOL, what=f"{model.name} dtau/dq, no f_ext")


def test_aba_derivatives_equal_finite_differences(model):
    q, v, _ = (x[0] for x in states(model, "aba-derivatives"))
    mass = invdyn.mass_matrix(model, q)
    # torques that give moderate accelerations
    tau = invdyn.rnea(model, q, v, np.random.default_rng(1).normal(size=model.nv))
    dq, dv, dtau = invdyn.aba_derivatives(model, q, v, tau)
    expected_dq = _tangent_differences(lambda x: invdyn.aba(model, x, v, tau), model, q)
    expected_dv = _differences(lambda x: invdyn.aba(model, q, x, tau), v)
    # compared in the force domain (M times), which the conditioning of M does not spoil
    assert_close(mass @ dq, mass @ expected_dq, rtol=FD_RTOL, what=f"{model.name} M da/dq")
    assert_close(mass @ dv, mass @ expected_dv, rtol=FD_RTOL, what=f"{model.name} M da/dv")
    assert_close(mass @ dtau, np.eye(model.nv), rtol=1e-8, what=f"{model.name} M da/dtau")


def test_batches_equal_single_calls(robot):
    q, v, a = states(robot, "derivative-batches", n=4)
    forces = np.random.default_rng(2).normal(size=(4, robot.nbody, 6))
    shaped = [x.reshape(2, 2, *x.shape[1:]) for x in (q, v, a, forces)]
    batch = invdyn.rnea_derivatives(robot, *shaped[:3], f_ext=shaped[3])
    aba_batch = invdyn.aba_derivatives(robot, *shaped[:3])
    for k in range(4):
        single = invdyn.rnea_derivatives(robot, q[k], v[k], a[k], f_ext=forces[k])
        aba_single = invdyn.aba_derivatives(robot, q[k], v[k], a[k])
        for ours, expected in zip((*batch, *aba_batch), (*single, *aba_single)):
            assert ours.shape == (2, 2, robot.nv, robot.nv)
            np.testing.assert_array_equal(ours[k // 2, k % 2], expected)


def test_bad_input_gets_the_documented_errors(load_robot):
    model = load_robot("panda", floating_base=False)
    q, v, a = (x[0] for x in states(model, "derivative-errors"))
    bad = v.copy()
    bad[3] = np.nan
    with pytest.raises(invdyn.InputError, match="v holds a non-finite value"):
        invdyn.rnea_derivatives(model, q, bad, a)
    with pytest.raises(invdyn.InputError, match=r"a must have shape \(\.\.\., 9\)"):
        invdyn.rnea_derivatives(model, q, v, a[:5])
    with pytest.raises(invdyn.InputError, match="tau holds a non-finite value"):
        invdyn.aba_derivatives(model, q, v, np.full(model.nv, np.inf))
    massless = model.replace(
        body_mass=np.zeros(model.nbody), body_inertia=np.zeros((model.nbody, 3, 3))
    )
    with pytest.raises(invdyn.ModelError, match="mass matrix is singular"):
        invdyn.aba_derivatives(massless, q, v, a)


def _breadth_first(model):
    """`model` with its bodies renumbered breadth first (parents still before children, but a
    subtree's dofs no longer contiguous), and the permutation (new -> old)."""
    order, frontier = [], [i for i in range(model.nbody) if model.body_parent[i] < 0]
    while frontier:
        order += frontier
        frontier = [i for i in range(model.nbody) if model.body_parent[i] in frontier]
    new = np.argsort(order)
    fields = (
        "body_mass", "body_com", "body_inertia", "jnt_type", "jnt_axis", "jnt_pos", "jnt_rot",
    )  # fmt: skip
    changes = {f: np.asarray(getattr(model, f))[order] for f in fields}
    dof_order = np.concatenate(
        [np.arange(model.jnt_vadr[i], model.jnt_vadr[i] + model.jnt_nv[i]) for i in order]
    )
    q_order = np.concatenate(
        [np.arange(model.jnt_qadr[i], model.jnt_qadr[i] + model.jnt_nq[i]) for i in order]
    )
    for f in ("dof_velocity_limit", "dof_effort_limit", "dof_armature", "dof_damping",
              "dof_friction"):  # fmt: skip
        changes[f] = np.asarray(getattr(model, f))[dof_order]
    changes["q_lower"], changes["q_upper"] = model.q_lower[q_order], model.q_upper[q_order]
    changes["body_name"] = tuple(model.body_name[i] for i in order)
    changes["jnt_name"] = tuple(model.jnt_name[i] for i in order)
    parents = [model.body_parent[i] for i in order]
    changes["body_parent"] = np.array([p if p < 0 else new[p] for p in parents])
    changes["frame_body"] = np.array([b if b < 0 else new[b] for b in model.frame_body])
    return model.replace(**changes), q_order, dof_order


def test_bodies_in_breadth_first_order(load_robot):
    """Solo12's four legs renumbered breadth first: the same derivatives, permuted."""
    model = with_joint_terms(load_robot("solo12", floating_base=False))
    shuffled, q_order, dof_order = _breadth_first(model)
    # depth first, body 1 hangs from body 0; breadth first it starts another leg
    assert model.body_parent[1] == 0 and shuffled.body_parent[1] != 0
    q, v, a = (x[0] for x in states(model, "breadth-first"))
    expected = invdyn.rnea_derivatives(model, q, v, a)
    ours = invdyn.rnea_derivatives(shuffled, q[q_order], v[dof_order], a[dof_order])
    for x, y in zip(ours, expected):
        assert_close(x, y[np.ix_(dof_order, dof_order)], rtol=1e-12, what="permuted")
