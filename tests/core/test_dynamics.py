"""Dynamics: closed forms of the tiny robots, and identities between algorithms on real robots.

Analytic tier: the pendulum, double pendulum and planar 2R shipped with invdyn, against the closed
forms written here from the parameters documented in their URDF headers (not from invdyn).

Identity tier, on real robots of example-robot-data (fixed and floating base, continuous and
prismatic joints) and on an inline MJCF model with ball joints:

* ``rnea = M a + h``, ``aba(q, v, rnea(q, v, a)) = a`` (with and without external forces);
* ``M`` symmetric positive definite, the armature on its diagonal;
* ``gravity = rnea(q, 0, 0)``, ``bias = rnea(q, v, 0)``;
* ``C v = h - g - damping v - friction sign(v)`` and ``M_dot - 2 C`` skew, with ``M_dot`` by
  central finite differences along ``integrate(q, v t)``;
* ``rnea(q, v, a, f_ext) = rnea(q, v, a) - sum_i J_i^T f_i`` with ``J_i`` the LOCAL Jacobian of
  body i's own frame;
* batched calls equal per-sample calls exactly; an empty batch gives an empty result.

Every identity runs on the plain model and on a copy with armature, viscous and Coulomb friction.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import invdyn
from conftest import (
    CASES,
    ERD_INSTALLED,
    assert_close,
    off_unit,
    rotation_blocks,
    states,
    with_joint_terms,
)
from invdyn.configuration import integrate
from invdyn.kernels import cpu
from invdyn.model import JointType, Model

RTOL = 1e-9
NSTATES = 3

# ----------------------------------------------------------------------------------------------
# analytic tier: parameters from the URDF headers of src/invdyn/robots/*.urdf
# ----------------------------------------------------------------------------------------------

MASS, LENGTH, RADIUS, G = 1.0, 1.0, 0.01, 9.81
HALF = LENGTH / 2
# rod inertia about its centre, across the rod (solid cylinder)
I_C = MASS * (3 * RADIUS**2 + LENGTH**2) / 12


def pendulum_closed_form(q, v):
    """(M, coriolis-centrifugal b, gravity g) of the pendulum; arrays (..., 1[, 1])."""
    inertia = I_C + MASS * HALF**2
    mass = np.full((*q.shape[:-1], 1, 1), inertia)
    b = np.zeros_like(v)
    g = MASS * G * HALF * np.sin(q)
    return mass, b, g


def two_link_closed_form(q, v, *, gravity: bool):
    """(M, b, g) of the double pendulum (gravity=True) or the planar 2R (gravity=False)."""
    q1, q2 = q[..., 0], q[..., 1]
    qd1, qd2 = v[..., 0], v[..., 1]
    c2, s2 = np.cos(q2), np.sin(q2)
    m, L, h = MASS, LENGTH, HALF
    m11 = 2 * I_C + m * h**2 + m * (L**2 + h**2 + 2 * L * h * c2)
    m12 = I_C + m * (h**2 + L * h * c2)
    m22 = np.full_like(q1, I_C + m * h**2)
    mass = np.stack([np.stack([m11, m12], -1), np.stack([m12, m22], -1)], -2)
    b = np.stack([-m * L * h * s2 * (2 * qd1 * qd2 + qd2**2), m * L * h * s2 * qd1**2], -1)
    if gravity:
        g1 = (m * h + m * L) * G * np.sin(q1) + m * h * G * np.sin(q1 + q2)
        g2 = m * h * G * np.sin(q1 + q2)
        g = np.stack([g1, g2], -1)
    else:
        g = np.zeros_like(b)
    return mass, b, g


CLOSED_FORMS = {
    "pendulum": pendulum_closed_form,
    "double_pendulum": lambda q, v: two_link_closed_form(q, v, gravity=True),
    "planar_2r": lambda q, v: two_link_closed_form(q, v, gravity=False),
}


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_closed_form_dynamics(name, rng):
    model = invdyn.load(name)
    n = 8
    q = rng.uniform(-np.pi, np.pi, size=(n, model.nq))
    v = rng.normal(scale=2.0, size=(n, model.nv))
    a = rng.normal(scale=2.0, size=(n, model.nv))
    mass, b, g = CLOSED_FORMS[name](q, v)
    tau = np.einsum("...ij,...j->...i", mass, a) + b + g
    for k in range(n):
        where = f"{name} state {k}"
        assert_close(invdyn.mass_matrix(model, q[k]), mass[k], rtol=RTOL, what=f"M, {where}")
        assert_close(invdyn.gravity(model, q[k]), g[k], rtol=RTOL, what=f"gravity, {where}")
        assert_close(invdyn.bias(model, q[k], v[k]), b[k] + g[k], rtol=RTOL, what=f"bias, {where}")
        assert_close(invdyn.rnea(model, q[k], v[k], a[k]), tau[k], rtol=RTOL, what=f"rnea, {where}")
        assert_close(
            invdyn.coriolis(model, q[k], v[k]) @ v[k], b[k], rtol=RTOL, what=f"C v, {where}"
        )
        assert_close(invdyn.aba(model, q[k], v[k], tau[k]), a[k], rtol=1e-8, what=f"aba, {where}")
    # the same, batched
    assert_close(invdyn.rnea(model, q, v, a), tau, rtol=RTOL, what=f"batched rnea, {name}")
    assert_close(invdyn.mass_matrix(model, q), mass, rtol=RTOL, what=f"batched M, {name}")


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_closed_form_joint_terms(name, rng):
    """Armature adds to the diagonal of M; damping v and friction sign(v) add to the forces."""
    base = invdyn.load(name)
    armature, damping, friction = (rng.uniform(0.1, 1.0, base.nv) for _ in range(3))
    model = base.replace(dof_armature=armature, dof_damping=damping, dof_friction=friction)
    q = rng.uniform(-np.pi, np.pi, size=(5, model.nq))
    v = rng.normal(scale=2.0, size=(5, model.nv))
    a = rng.normal(scale=2.0, size=(5, model.nv))
    mass, b, g = CLOSED_FORMS[name](q, v)
    mass = mass + np.diag(armature)
    tau = np.einsum("...ij,...j->...i", mass, a) + b + g + damping * v + friction * np.sign(v)
    assert_close(invdyn.mass_matrix(model, q), mass, rtol=RTOL, what="M with armature")
    assert_close(invdyn.rnea(model, q, v, a), tau, rtol=RTOL, what="rnea with joint terms")
    assert_close(invdyn.aba(model, q, v, tau), a, rtol=1e-8, what="aba with joint terms")


def test_pendulum_energy_balance(rng):
    """Power: tau . v = dT/dt + dV/dt for the pendulum, with T and V from the header."""
    model = invdyn.load("pendulum")
    inertia = I_C + MASS * HALF**2
    q, v, a = rng.normal(size=3)
    tau = invdyn.rnea(model, np.array([q]), np.array([v]), np.array([a]))[0]
    power = inertia * v * a + MASS * G * HALF * np.sin(q) * v
    assert tau * v == pytest.approx(power, rel=1e-12, abs=1e-12)


# ----------------------------------------------------------------------------------------------
# identity tier
# ----------------------------------------------------------------------------------------------


def _assert_accelerations(ours, expected, mass, what):
    """Accelerations agree in the force domain (M a) and as closely as cond(M) allows."""
    assert_close(mass @ ours, mass @ expected, rtol=RTOL, what=f"M @ {what}")
    eigenvalues = np.linalg.eigvalsh(mass)
    cond = eigenvalues[-1] / eigenvalues[0]
    rtol = max(RTOL, 100 * np.finfo(np.float64).eps * cond)
    assert_close(ours, expected, rtol=rtol, what=f"{what}, cond(M) {cond:.1e}")


def body_frames(model: Model) -> list[int]:
    """For each body, the index of a frame fixed to it with the identity placement."""
    frames = []
    for i in range(model.nbody):
        found = [
            k
            for k in range(len(model.frame_name))
            if model.frame_body[k] == i
            and np.array_equal(model.frame_pos[k], np.zeros(3))
            and np.array_equal(model.frame_rot[k], np.eye(3))
        ]
        assert found, f"{model.name}: body {model.body_name[i]!r} has no frame of its own"
        frames.append(found[0])
    return frames


def test_rnea_is_mass_matrix_times_a_plus_bias(model):
    q, v, a = states(model, "rnea=Ma+h")
    for k in range(NSTATES):
        mass = invdyn.mass_matrix(model, q[k])
        h = invdyn.bias(model, q[k], v[k])
        tau = invdyn.rnea(model, q[k], v[k], a[k])
        assert_close(tau, mass @ a[k] + h, rtol=RTOL, what=f"{model.name} rnea vs M a + h")


def test_aba_inverts_rnea(model):
    q, v, a = states(model, "aba(rnea)")
    for k in range(NSTATES):
        tau = invdyn.rnea(model, q[k], v[k], a[k])
        mass = invdyn.mass_matrix(model, q[k])
        _assert_accelerations(invdyn.aba(model, q[k], v[k], tau), a[k], mass, model.name)


def test_mass_matrix_is_symmetric_positive_definite(model):
    q, _, _ = states(model, "spd")
    for k in range(NSTATES):
        mass = invdyn.mass_matrix(model, q[k])
        assert np.array_equal(mass, mass.T), f"{model.name}: M is not symmetric"
        eigenvalues = np.linalg.eigvalsh(mass)
        assert eigenvalues[0] > 0.0, f"{model.name}: smallest eigenvalue {eigenvalues[0]:.2e}"
        np.linalg.cholesky(mass)
    # the armature sits on the diagonal and nowhere else
    bare = invdyn.mass_matrix(model.replace(dof_armature=np.zeros(model.nv)), q[0])
    assert_close(
        invdyn.mass_matrix(model, q[0]) - bare, np.diag(model.dof_armature), what="armature"
    )


def _below(model, body: int) -> np.ndarray:
    """(nbody,) whether each body is below `body` (parents come before their children)."""
    below = np.zeros(model.nbody, dtype=bool)
    for child in range(body + 1, model.nbody):
        parent = model.body_parent[child]
        below[child] = parent == body or (parent > body and below[parent])
    return below


def test_articulated_pivots_are_the_mass_matrix_factorisation(model):
    """singular_joints' pivots, found body by body from the articulated inertias, are the
    blocks of the leaf-to-root factorisation of M: each joint's block of M less what its
    descendants' dofs take (the Schur complement over them)."""
    from invdyn.dynamics import _articulated_pivots, _world_inertias
    from invdyn.kinematics import world_columns

    q = states(model, "pivots", n=1)[0][0]
    rotations, origins = invdyn.forward_kinematics(model, q)
    columns = world_columns(model, rotations, origins)
    inertias = _world_inertias(model, rotations, origins)
    pivots = _articulated_pivots(model, inertias, columns, 1e-8)
    M = invdyn.mass_matrix(model, q)
    for i in range(model.nbody):
        own = np.flatnonzero(model.dof_body == i)
        below = np.flatnonzero(_below(model, i)[model.dof_body])
        block = M[np.ix_(own, own)]
        coupling = M[np.ix_(own, below)]
        schur = block - coupling @ np.linalg.solve(M[np.ix_(below, below)], coupling.T)
        pivot = columns[own] @ pivots.coupling[i] + np.diag(model.dof_armature[own])
        np.testing.assert_allclose(pivot, schur, rtol=1e-9, atol=1e-12 * np.abs(M).max())
    assert invdyn.dynamics.singular_joints(model, q) == ()


def test_regressor_times_parameters_is_rnea(model):
    q, v, a = states(model, "regressor")
    params = invdyn.inertial_parameters(model)
    assert params.shape == (10 * model.nbody + 3 * model.nv,)
    for k in range(NSTATES):
        y = invdyn.joint_torque_regressor(model, q[k], v[k], a[k])
        tau = invdyn.rnea(model, q[k], v[k], a[k])
        assert_close(y @ params, tau, rtol=RTOL, what=f"{model.name} Y @ params")


def test_gravity_and_bias_are_rnea_parts(model):
    q, v, _ = states(model, "parts")
    zeros = np.zeros(model.nv)
    for k in range(NSTATES):
        _assert_same(invdyn.gravity(model, q[k]), invdyn.rnea(model, q[k], zeros, zeros))
        _assert_same(invdyn.bias(model, q[k], v[k]), invdyn.rnea(model, q[k], v[k], zeros))
    # friction and damping act on v only: gravity is that of the bare tree
    bare = model.replace(
        dof_damping=np.zeros(model.nv),
        dof_friction=np.zeros(model.nv),
        dof_armature=np.zeros(model.nv),
    )
    assert_close(invdyn.gravity(model, q[0]), invdyn.gravity(bare, q[0]), what="gravity")


def test_joint_terms_add_to_rnea(robot):
    """rnea with joint terms = rnea without + armature a + damping v + friction sign(v)."""
    zeros = np.zeros(robot.nv)
    bare = robot.replace(dof_armature=zeros, dof_damping=zeros, dof_friction=zeros)
    model = with_joint_terms(robot)
    q, v, a = states(model, "joint terms")
    extra = model.dof_armature * a + model.dof_damping * v + model.dof_friction * np.sign(v)
    expected = invdyn.rnea(bare, q, v, a) + extra
    assert_close(invdyn.rnea(model, q, v, a), expected, rtol=RTOL, what="joint terms")


def test_coriolis_times_v_is_velocity_product(model):
    q, v, _ = states(model, "C v")
    for k in range(NSTATES):
        c = invdyn.coriolis(model, q[k], v[k])
        assert c.shape == (model.nv, model.nv)
        expected = (
            invdyn.bias(model, q[k], v[k])
            - invdyn.gravity(model, q[k])
            - model.dof_damping * v[k]
            - model.dof_friction * np.sign(v[k])
        )
        assert_close(c @ v[k], expected, rtol=RTOL, what=f"{model.name} C v")


def test_mass_matrix_derivative_minus_twice_coriolis_is_skew(model):
    """M_dot = C + C^T (so M_dot - 2C is skew), M_dot by central differences along q ⊕ v t."""
    q, v, _ = states(model, "skew", n=2)
    eps = 1e-5
    for k in range(2):
        ahead = invdyn.mass_matrix(model, integrate(model, q[k], v[k], eps))
        behind = invdyn.mass_matrix(model, integrate(model, q[k], v[k], -eps))
        m_dot = (ahead - behind) / (2 * eps)
        c = invdyn.coriolis(model, q[k], v[k])
        skew = m_dot - 2 * c
        scale = max(1.0, float(np.abs(m_dot).max()), float(np.abs(c).max()))
        error = float(np.abs(skew + skew.T).max())
        assert error <= 1e-6 * scale, f"{model.name}: |S + S^T| {error:.2e}, scale {scale:.2e}"
        assert_close(m_dot, c + c.T, rtol=1e-6, what=f"{model.name} M_dot vs C + C^T")


def test_external_forces_enter_through_body_jacobians(model):
    q, v, a = states(model, "f_ext", n=2)
    frames = body_frames(model)
    rng = np.random.default_rng(1)
    for k in range(2):
        f_ext = rng.normal(scale=5.0, size=(model.nbody, 6))
        generalised = np.zeros(model.nv)
        for i, frame in enumerate(frames):
            jac = invdyn.frame_jacobian(model, q[k], frame, reference="local")
            generalised += jac.T @ f_ext[i]
        expected = invdyn.rnea(model, q[k], v[k], a[k]) - generalised
        ours = invdyn.rnea(model, q[k], v[k], a[k], f_ext=f_ext)
        assert_close(ours, expected, rtol=RTOL, what=f"{model.name} rnea with f_ext")
        # aba with the same forces gives back a
        mass = invdyn.mass_matrix(model, q[k])
        back = invdyn.aba(model, q[k], v[k], ours, f_ext=f_ext)
        _assert_accelerations(back, a[k], mass, f"{model.name} aba with f_ext")


def test_zero_external_forces_change_nothing(robot):
    q, v, a = states(robot, "zero f_ext", n=1)
    zero = np.zeros((robot.nbody, 6))
    # the f_ext path is a different compiled kernel: equal up to floating-point contraction
    assert_close(
        invdyn.rnea(robot, q[0], v[0], a[0], f_ext=zero),
        invdyn.rnea(robot, q[0], v[0], a[0]),
        rtol=1e-13,
        what="rnea with zero f_ext",
    )


# robots with quaternions (free and ball joints) and (cos θ, sin θ) pairs (continuous joints)
ROTATING = [
    case
    for case in CASES
    if case.values[0] in {("talos", True), ("kinova", False), ("pr2", True), ("mjcf_balls", True)}
]


def every_function(model: Model, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> dict:
    """The result of every algorithm that reads q, by name."""
    frame = len(model.frame_name) - 1
    return {
        "rnea": invdyn.rnea(model, q, v, a),
        "mass_matrix": invdyn.mass_matrix(model, q),
        "aba": invdyn.aba(model, q, v, a),
        "coriolis": invdyn.coriolis(model, q, v),
        "regressor": invdyn.joint_torque_regressor(model, q, v, a),
        **dict(zip(("dq", "dv", "da"), invdyn.rnea_derivatives(model, q, v, a), strict=True)),
        **dict(zip(("aba dq", "aba dv"), invdyn.aba_derivatives(model, q, v, a)[:2], strict=True)),
        "placements": np.concatenate(
            [x.reshape(len(q), -1) for x in invdyn.forward_kinematics(model, q)], axis=1
        ),
        "frame_jacobian": invdyn.frame_jacobian(model, q, frame, reference="world"),
        "frame_acceleration": invdyn.frame_acceleration(model, q, v, a, frame),
        "center_of_mass": invdyn.center_of_mass(model, q),
        "centroidal_momentum_matrix": invdyn.centroidal_momentum_matrix(model, q),
        "centroidal_momentum_rate": invdyn.centroidal_momentum_rate(model, q, v, a),
    }


@pytest.mark.parametrize("robot", ROTATING, indirect=True)
def test_quaternions_and_pairs_of_any_norm_read_as_their_rotation(robot):
    """Quaternions and (cos θ, sin θ) pairs scaled by 0.2 to 5 give what the unit ones give, in
    every algorithm and its derivatives (whose identities then hold too); a zero one reads as
    no rotation."""
    q, v, a = states(robot, "off-unit")
    scaled = off_unit(robot, q)
    assert not np.allclose(scaled, q)
    expected = every_function(robot, q, v, a)
    for name, value in every_function(robot, scaled, v, a).items():
        assert_close(value, expected[name], rtol=RTOL, what=f"{robot.name} {name}")
    still = q.copy()
    for block in rotation_blocks(robot):
        still[:, block] = 0.0
        still[:, block.stop - 1 if block.stop - block.start == 4 else block.start] = 1.0
    zero = q.copy()
    for block in rotation_blocks(robot):
        zero[:, block] = 0.0
    expected = every_function(robot, still, v, a)
    for name, value in every_function(robot, zero, v, a).items():
        assert_close(value, expected[name], rtol=RTOL, what=f"{robot.name} {name} at zero")


def test_batches_equal_single_calls(model):
    """Leading dimensions (2, 3) give exactly the per-sample results."""
    q, v, a = states(model, "batch", n=6)
    f_ext = np.random.default_rng(2).normal(size=(6, model.nbody, 6))
    lead = (2, 3)

    def shaped(x):
        return x.reshape(*lead, *x.shape[1:])

    tau = invdyn.rnea(model, shaped(q), shaped(v), shaped(a))
    tau_f = invdyn.rnea(model, shaped(q), shaped(v), shaped(a), f_ext=shaped(f_ext))
    mass = invdyn.mass_matrix(model, shaped(q))
    acc = invdyn.aba(model, shaped(q), shaped(v), tau_f, f_ext=shaped(f_ext))
    grav = invdyn.gravity(model, shaped(q))
    h = invdyn.bias(model, shaped(q), shaped(v))
    c = invdyn.coriolis(model, shaped(q), shaped(v))
    y = invdyn.joint_torque_regressor(model, shaped(q), shaped(v), shaped(a))
    nv = model.nv
    assert tau.shape == tau_f.shape == acc.shape == grav.shape == h.shape == (*lead, nv)
    assert mass.shape == c.shape == (*lead, nv, nv)
    assert y.shape == (*lead, nv, 10 * model.nbody + 3 * nv)
    for k in range(6):
        i, j = np.unravel_index(k, lead)
        eq = _assert_same
        eq(tau[i, j], invdyn.rnea(model, q[k], v[k], a[k]), err_msg="rnea")
        eq(tau_f[i, j], invdyn.rnea(model, q[k], v[k], a[k], f_ext=f_ext[k]), err_msg="rnea f_ext")
        eq(mass[i, j], invdyn.mass_matrix(model, q[k]), err_msg="mass_matrix")
        eq(acc[i, j], invdyn.aba(model, q[k], v[k], tau_f[i, j], f_ext=f_ext[k]), err_msg="aba")
        eq(grav[i, j], invdyn.gravity(model, q[k]), err_msg="gravity")
        eq(h[i, j], invdyn.bias(model, q[k], v[k]), err_msg="bias")
        eq(c[i, j], invdyn.coriolis(model, q[k], v[k]), err_msg="coriolis")
        eq(y[i, j], invdyn.joint_torque_regressor(model, q[k], v[k], a[k]), err_msg="regressor")


@pytest.mark.parametrize("batch", [1, 15, 16, 17, 33, 100])
def test_rnea_batches_of_any_size_equal_single_calls(model, batch):
    """Batched rnea runs blocks of LANES states, padding the last, split among threads from
    `cpu.PARALLEL_FROM` states on: every size and every joint type gives the single-call
    results."""
    q, v, a = states(model, f"lanes{batch}", n=batch)
    f_ext = np.random.default_rng(batch).normal(size=(batch, model.nbody, 6))
    tau = invdyn.rnea(model, q, v, a)
    tau_f = invdyn.rnea(model, q, v, a, f_ext=f_ext)
    for k in range(batch):
        _assert_same(tau[k], invdyn.rnea(model, q[k], v[k], a[k]), err_msg=f"state {k}")
        single = invdyn.rnea(model, q[k], v[k], a[k], f_ext=f_ext[k])
        _assert_same(tau_f[k], single, err_msg=f"state {k} with f_ext")


@pytest.mark.parametrize(
    ("name", "floating"), [("double_pendulum", False), ("panda", False), ("talos", True)]
)
def test_rnea_batch_of_large_angles_equals_single_calls(load_robot, name, floating):
    """Angles far beyond a few turns (where the batch kernel's own sine and cosine hand over to
    the library's) give the single-call results."""
    robot = load_robot(name, floating_base=floating)
    q, v, a = states(robot, "large", n=40)
    revolute = [
        robot.jnt_qadr[i] for i in range(robot.nbody) if robot.jnt_type[i] == JointType.REVOLUTE
    ]
    assert revolute
    q[:, revolute] += np.linspace(-1e7, 1e7, 40)[:, None]
    tau = invdyn.rnea(robot, q, v, a)
    for k in range(40):
        _assert_same(tau[k], invdyn.rnea(robot, q[k], v[k], a[k]), err_msg=f"state {k}")


def test_kernel_sine_and_cosine_match_the_library():
    """The batch kernel's branch-free sine and cosine are within 2.3e-16 of numpy's up to the
    range where it takes over, quadrant boundaries included; non-finite angles give NaN."""
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            rng.uniform(-scale, scale, 100_000)
            for scale in (1e-9, 1.0, np.pi, 100.0, cpu.SIN_COS_RANGE)
        ]
        + [np.arange(-4000, 4000) * np.pi / 4, [0.0, -0.0, 5e-324]]
    )
    sine, cosine = _lane_sin_cos(x)
    np.testing.assert_allclose(sine, np.sin(x), rtol=0, atol=2.3e-16)
    np.testing.assert_allclose(cosine, np.cos(x), rtol=0, atol=2.3e-16)
    sine, cosine = _lane_sin_cos(np.array([np.nan, np.inf, -np.inf]))
    assert np.isnan(sine).all() and np.isnan(cosine).all()


def _lane_sin_cos(x):
    sine, cosine = np.array([cpu.lane_sin_cos(value) for value in x]).T
    return sine, cosine


def test_single_state_broadcasts_against_a_batch(robot):
    q, v, a = states(robot, "broadcast", n=4)
    f_single = np.random.default_rng(3).normal(size=(robot.nbody, 6))
    tau = invdyn.rnea(robot, q[0], v, a)
    tau_f = invdyn.rnea(robot, q[0], v, a[0], f_ext=f_single)
    h = invdyn.bias(robot, q[0], v)
    c = invdyn.coriolis(robot, q, v[0])
    acc = invdyn.aba(robot, q[0], v, tau)
    assert tau.shape == tau_f.shape == h.shape == acc.shape == (4, robot.nv)
    assert c.shape == (4, robot.nv, robot.nv)
    # accelerations compared as the forces they take: a mass matrix as ill-conditioned as
    # iCub's (its neck moves almost no inertia) magnifies the kernels' last bits in them
    mass = invdyn.mass_matrix(robot, q[0])
    for k in range(4):
        eq = _assert_same
        eq(tau[k], invdyn.rnea(robot, q[0], v[k], a[k]))
        eq(tau_f[k], invdyn.rnea(robot, q[0], v[k], a[0], f_ext=f_single))
        eq(h[k], invdyn.bias(robot, q[0], v[k]))
        eq(c[k], invdyn.coriolis(robot, q[k], v[0]))
        eq(mass @ acc[k], mass @ invdyn.aba(robot, q[0], v[k], tau[k]))
    # a batch of forces against a single state
    f_batch = np.random.default_rng(4).normal(size=(4, robot.nbody, 6))
    tau_fb = invdyn.rnea(robot, q[0], v[0], a[0], f_ext=f_batch)
    assert tau_fb.shape == (4, robot.nv)
    for k in range(4):
        _assert_same(tau_fb[k], invdyn.rnea(robot, q[0], v[0], a[0], f_ext=f_batch[k]))


def test_empty_batch(robot):
    nq, nv, nbody = robot.nq, robot.nv, robot.nbody
    q = np.zeros((0, nq))
    v = np.zeros((0, nv))
    assert invdyn.rnea(robot, q, v, v).shape == (0, nv)
    assert invdyn.rnea(robot, q, v, v, f_ext=np.zeros((0, nbody, 6))).shape == (0, nv)
    assert invdyn.aba(robot, q, v, v).shape == (0, nv)
    assert invdyn.gravity(robot, q).shape == (0, nv)
    assert invdyn.bias(robot, q, v).shape == (0, nv)
    assert invdyn.mass_matrix(robot, q).shape == (0, nv, nv)
    assert invdyn.coriolis(robot, q, v).shape == (0, nv, nv)
    assert invdyn.joint_torque_regressor(robot, q, v, v).shape == (0, nv, 10 * nbody + 3 * nv)
    # an empty batch broadcasts against single vectors
    assert invdyn.rnea(robot, q, np.zeros(nv), np.zeros(nv)).shape == (0, nv)
    assert invdyn.rnea(robot, np.zeros((2, 0, nq)), v, v).shape == (2, 0, nv)


def test_inputs_are_not_modified(robot):
    q, v, a = states(robot, "untouched", n=2)
    f_ext = np.ones((2, robot.nbody, 6))
    copies = [x.copy() for x in (q, v, a, f_ext)]
    tau = invdyn.rnea(robot, q, v, a, f_ext=f_ext)
    invdyn.aba(robot, q, v, tau, f_ext=f_ext)
    invdyn.rnea(robot, q[0], v[0], a[0])
    invdyn.aba(robot, q[0], v[0], tau[0])
    for x, copy in zip((q, v, a, f_ext), copies):
        _assert_same(x, copy)


def test_lists_and_integer_arrays_are_accepted(robot):
    q, v, a = states(robot, "lists", n=1)
    expected = invdyn.rnea(robot, q[0], v[0], a[0])
    _assert_same(invdyn.rnea(robot, list(q[0]), list(v[0]), list(a[0])), expected)
    zeros_int = np.zeros(robot.nv, dtype=np.int64)
    _assert_same(invdyn.rnea(robot, q[0], zeros_int, zeros_int), invdyn.gravity(robot, q[0]))
    # a non-contiguous view gives the values of its contiguous copy
    strided = np.repeat(q[0], 2)[::2]
    _assert_same(invdyn.mass_matrix(robot, strided), invdyn.mass_matrix(robot, q[0]))


def _assert_same(actual, expected, *args, **kwargs):
    """Equal up to rounding: single calls, batches and the f_ext path are separately compiled
    kernels (batches take sines and cosines from their own vectorised polynomials), so the last
    bits may differ, relative to the largest entry."""
    atol = 1e-12 * max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, *args, rtol=1e-12, atol=atol, **kwargs)


def test_a_robot_without_moving_joints_gives_empty_results():
    """A flying base bolted to the world (hector, fixed) has nq = nv = 0: empty, well-shaped."""
    if not ERD_INSTALLED:
        pytest.skip("example-robot-data missing")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        model = invdyn.load("hector", floating_base=False)
    assert (model.nbody, model.nq, model.nv) == (0, 0, 0)
    assert not model.floating_base and model.jnt_qadr.shape == (0,)
    empty = np.zeros((3, 0))
    assert invdyn.rnea(model, empty, empty, empty).shape == (3, 0)
    assert invdyn.mass_matrix(model, empty).shape == (3, 0, 0)
    assert invdyn.aba(model, empty, empty, empty).shape == (3, 0)
    assert invdyn.coriolis(model, empty, empty).shape == (3, 0, 0)
    assert invdyn.joint_torque_regressor(model, empty, empty, empty).shape == (3, 0, 0)
    assert invdyn.forward_kinematics(model, empty)[0].shape == (3, 0, 3, 3)


def test_kernels_take_their_arrays_and_refuse_others():
    """The compiled kernels take C-contiguous float64 arrays, read-only inputs among them (a
    rollout's, say); other types raise TypeError, which sends the public functions down their
    general path; a single state of the wrong sizes gives -1, a batch ValueError, and so does a
    body index outside the model."""
    model = invdyn.load("double_pendulum")
    ints, reals = model.kernel_data
    whole = np.array([1, 2])
    with pytest.raises(TypeError):
        cpu.rnea_vector(ints, reals, whole, whole, whole, np.empty(2))
    with pytest.raises(TypeError):
        cpu.rnea_vector(ints, reals, [1.0, 2.0], whole, whole, np.empty(2))
    with pytest.raises(TypeError):
        cpu.rnea_vector(ints, reals, np.empty((2, 2))[:, 0], whole, whole, np.empty(2))
    with pytest.raises(TypeError):
        cpu.rnea_vector(ints, reals, np.empty(2))
    as_floats = whole.astype(float)
    frozen = as_floats.copy()
    frozen.setflags(write=False)
    assert cpu.rnea_vector(ints, reals, frozen, frozen, frozen, np.empty(2)) == 0
    with pytest.raises(TypeError):
        cpu.rnea_vector(ints, reals, frozen, frozen, frozen, frozen)
    assert cpu.rnea_vector(ints, reals, as_floats, as_floats, np.ones(3), np.empty(2)) == -1
    frame = np.eye(4)[:3].T.ravel().copy()
    out = np.empty(12)
    assert cpu.frame_placement_vector(ints, reals, as_floats, model.nbody, frame, out) == -1
    assert cpu.frame_placement_vector(ints, reals, as_floats, -1, frame, out) == 0
    batch = np.ones((3, 2))
    with pytest.raises(ValueError, match="argument 5"):
        cpu.rnea_batch(ints, reals, batch, batch, batch, np.zeros((2, 0, 6)), np.empty((3, 2)))
    with pytest.raises(ValueError, match="argument 3"):
        cpu.frame_placement_batch(ints, reals, batch, 5, frame, np.empty((3, 12)))
    expected = invdyn.rnea(model, as_floats, as_floats, as_floats)
    np.testing.assert_allclose(invdyn.rnea(model, whole, whole, whole), expected, rtol=1e-12)
    # arrays the kernels cannot read as they are: another byte order, unaligned
    with pytest.raises(TypeError):
        cpu.rnea_vector(ints, reals, as_floats.astype(">f8"), as_floats, as_floats, np.empty(2))
    with pytest.raises(TypeError):
        cpu.rnea_vector(ints, reals, _unaligned(as_floats), as_floats, as_floats, np.empty(2))
    # a regressor's width, and packed arrays that do not hold a model
    states = np.zeros((3, 2))
    with pytest.raises(ValueError, match="argument 5"):
        cpu.regressor_batch(ints, reals, states, states, states, np.empty((3, 2, 1)))
    assert not ints.flags.writeable and not reals.flags.writeable
    for row, column, value in ((1, 0, 1), (1, 1, 9), (1, 3, 5), (0, 4, 3)):
        bad = ints.copy()
        bad[row, column] = value
        with pytest.raises(ValueError, match="not a packed model"):
            cpu.crba_batch(bad, reals, states, np.empty((3, 2, 2)))
    bad_nq = reals.copy()
    bad_nq[-1, 3] = np.nan
    with pytest.raises(ValueError, match="not a packed model"):
        cpu.rnea_vector(ints, bad_nq, as_floats, as_floats, as_floats, np.empty(2))


def _unaligned(x: np.ndarray) -> np.ndarray:
    """A copy of the float64 array x at an address that is not a multiple of 8."""
    raw = np.zeros(x.nbytes + 1, dtype=np.uint8)[1:]
    copy = raw.view(np.float64).reshape(x.shape)
    copy[...] = x
    assert not copy.flags.aligned
    return copy


@pytest.mark.parametrize("odd", ["byte order", "unaligned", "read-only"])
def test_arrays_of_any_byte_order_alignment_or_writability_give_the_same_results(robot, odd):
    q, v, a = states(robot, "odd", n=40)
    kinds = {
        "byte order": lambda x: x.astype(x.dtype.newbyteorder()),
        "unaligned": _unaligned,
        "read-only": lambda x: np.frombuffer(x.tobytes()).reshape(x.shape),
    }
    made = kinds[odd]
    for lead in (0, slice(None)):
        plain = [np.ascontiguousarray(x[lead]) for x in (q, v, a)]
        given = [made(x) for x in plain]
        for function in (invdyn.rnea, invdyn.aba):
            _assert_same(function(robot, *given), function(robot, *plain))
        _assert_same(invdyn.mass_matrix(robot, given[0]), invdyn.mass_matrix(robot, plain[0]))
