"""The torch path of the public dynamics and kinematics functions (`invdyn.kernels.torch`).

* Equal to the numpy path (the compiled CPU kernels, themselves checked against Pinocchio and
  MuJoCo) to 1e-10 in float64, on every robot of the dynamics identities, with joint terms and
  external forces: rnea and its parts, the mass and Coriolis matrices, the regressor,
  kinematics (frame placements, Jacobians, velocities and accelerations), the centre of mass
  and centroidal momentum, and rnea's derivatives (forward-mode autodiff against the analytic
  kernel); forward dynamics in the force domain (M a), as cond(M) allows.
* float32 agrees with float64 as float32 allows; tensors of several dtypes promote as torch's
  operators do; any leading batch shape; numpy arrays mixed with tensors take the tensors'
  dtype.
* Differentiable: ``gradcheck`` on rnea and aba of a fixed and a floating-base robot with
  respect to the state and the dynamic parameters; the gradient with respect to the parameters
  is the regressor's (rnea is linear in them); parameters fitted by gradient descent.
* Dynamic parameters replaced per call (``params``) equal a model rebuilt from them
  (`invdyn.with_parameters`), for numpy arrays and tensors alike.
* torch.func's vmap over the functions and over their Jacobians; torch.compile traces the
  dynamics and frame kinematics in one graph (``fullgraph=True``) once the model has been
  called on tensors of that dtype and device.
* Errors: shapes, non-finite values, complex tensors, singular mass matrices.
* On a CUDA device (marked ``gpu``): every function above, float64, on every robot of the
  dynamics identities, stays on the device and equals the numpy path; rnea's fused kernel is
  `tests/test_fused.py`'s.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import invdyn
from conftest import assert_close, off_unit, rotation_blocks, states
from invdyn.model import Model

torch = pytest.importorskip("torch")

RTOL = 1e-10


def tensors(*arrays, dtype=None):
    return tuple(torch.tensor(x, dtype=dtype or torch.float64) for x in arrays)


def external_forces(model: Model, n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, model.nbody, 6))


def test_rnea_and_its_parts_equal_numpy(model):
    q, v, a = states(model, "torch-rnea")
    forces = external_forces(model, len(q))
    tq, tv, ta, tf = tensors(q, v, a, forces)
    pairs = {
        "rnea": (
            invdyn.rnea(model, tq, tv, ta, f_ext=tf),
            invdyn.rnea(model, q, v, a, f_ext=forces),
        ),
        "gravity": (invdyn.gravity(model, tq), invdyn.gravity(model, q)),
        "bias": (invdyn.bias(model, tq, tv), invdyn.bias(model, q, v)),
        "mass_matrix": (invdyn.mass_matrix(model, tq), invdyn.mass_matrix(model, q)),
        "coriolis": (invdyn.coriolis(model, tq, tv), invdyn.coriolis(model, q, v)),
        "regressor": (
            invdyn.joint_torque_regressor(model, tq, tv, ta),
            invdyn.joint_torque_regressor(model, q, v, a),
        ),
    }
    for what, (ours, expected) in pairs.items():
        assert isinstance(ours, torch.Tensor) and ours.dtype == torch.float64, what
        assert_close(ours.numpy(), expected, rtol=RTOL, what=f"{model.name} {what}")


def test_rnea_derivatives_equal_numpy(model):
    q, v, a = states(model, "torch-derivatives")
    forces = external_forces(model, len(q))
    ours = invdyn.rnea_derivatives(model, *tensors(q, v, a), f_ext=torch.tensor(forces))
    expected = invdyn.rnea_derivatives(model, q, v, a, f_ext=forces)
    for what, x, y in zip(("dtau/dq", "dtau/dv", "dtau/da"), ours, expected):
        assert isinstance(x, torch.Tensor) and x.shape == y.shape, what
        assert_close(x.numpy(), y, rtol=RTOL, what=f"{model.name} {what}")


def test_aba_derivatives_equal_numpy_in_the_force_domain(robot):
    q, v, tau = states(robot, "torch-aba-derivatives")
    ours = invdyn.aba_derivatives(robot, *tensors(q, v, tau))
    expected = invdyn.aba_derivatives(robot, q, v, tau)
    mass = invdyn.mass_matrix(robot, q)
    # whole inverses agree as the conditioning of M allows (iCub's: 1e9)
    cond = max(np.linalg.cond(m) for m in mass)
    rtol = max(1e-8, 100 * np.finfo(np.float64).eps * cond)
    for what, x, y in zip(("da/dq", "da/dv", "da/dtau"), ours, expected):
        assert isinstance(x, torch.Tensor), what
        assert_close(mass @ x.numpy(), mass @ y, rtol=rtol, what=f"{robot.name} M {what}")


def test_derivatives_with_parameters_per_call(load_robot):
    model = load_robot("panda", floating_base=False)
    q, v, a = states(model, "derivative-params")
    params = invdyn.inertial_parameters(model) * 1.3
    rebuilt = invdyn.with_parameters(model, params)
    expected = invdyn.rnea_derivatives(rebuilt, q, v, a)
    numpy_path = invdyn.rnea_derivatives(model, q, v, a, params=params)
    tq, tv, ta, tp = tensors(q, v, a, params)
    torch_path = invdyn.rnea_derivatives(model, tq, tv, ta, params=tp)
    for x, y, z in zip(numpy_path, torch_path, expected):
        assert_close(x, z, rtol=RTOL, what="numpy params")
        assert_close(y.numpy(), z, rtol=RTOL, what="tensor params")


def test_aba_equals_numpy_in_the_force_domain(model):
    q, v, tau = states(model, "torch-aba")
    forces = external_forces(model, len(q))
    tq, tv, ttau, tf = tensors(q, v, tau, forces)
    ours = invdyn.aba(model, tq, tv, ttau, f_ext=tf).numpy()
    expected = invdyn.aba(model, q, v, tau, f_ext=forces)
    mass = invdyn.mass_matrix(model, q)
    assert_close(
        np.einsum("bij,bj->bi", mass, ours),
        np.einsum("bij,bj->bi", mass, expected),
        rtol=forward_dynamics_rtol(expected, mass),
        what=f"{model.name} M @ aba",
    )


def forward_dynamics_rtol(ddq: np.ndarray, mass: np.ndarray) -> float:
    """The tolerance at which the torch path's forward dynamics agrees with the numpy path's
    accelerations `ddq` (n, nv) in the force domain (M ddq, mass (n, nv, nv)), as
    `assert_close` measures it: `RTOL`, or the backward error of the Cholesky solve of
    M ddq = tau - h that the torch path takes, nv eps max(|M| |ddq|) relative to the largest
    entry of M ddq, where that is larger. It is larger where cond(M) makes |ddq| large: iCub's
    tiny links (cond(M) 1.6e10) give accelerations of 4.5e8 and a bound of 6e-10."""
    eps = np.finfo(np.float64).eps
    backward_error = ddq.shape[-1] * eps * np.einsum("bij,bj->bi", np.abs(mass), np.abs(ddq)).max()
    scale = max(1.0, np.abs(np.einsum("bij,bj->bi", mass, ddq)).max())
    return max(RTOL, backward_error / scale)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_every_function_on_cuda_equals_numpy(model):
    """rnea takes external forces here, so that it runs the torch path, not the fused kernel;
    forward dynamics is compared in the force domain, as on the CPU."""
    q, v, a = states(model, "torch-cuda")
    forces = external_forces(model, len(q))
    frame = len(model.frame_name) - 1
    mass = invdyn.mass_matrix(model, q)
    calls = {
        "rnea": lambda q, v, a, f: invdyn.rnea(model, q, v, a, f_ext=f),
        "gravity": lambda q, v, a, f: invdyn.gravity(model, q),
        "bias": lambda q, v, a, f: invdyn.bias(model, q, v),
        "mass_matrix": lambda q, v, a, f: invdyn.mass_matrix(model, q),
        "coriolis": lambda q, v, a, f: invdyn.coriolis(model, q, v),
        "regressor": lambda q, v, a, f: invdyn.joint_torque_regressor(model, q, v, a),
        "rnea_derivatives": lambda q, v, a, f: invdyn.rnea_derivatives(model, q, v, a, f_ext=f),
        "aba": lambda q, v, a, f: invdyn.aba(model, q, v, a, f_ext=f),
        "aba_derivatives": lambda q, v, a, f: invdyn.aba_derivatives(model, q, v, a),
        "forward_kinematics": lambda q, v, a, f: invdyn.forward_kinematics(model, q),
        "frame_placement": lambda q, v, a, f: invdyn.frame_placement(model, q, frame),
        "frame_jacobian": lambda q, v, a, f: invdyn.frame_jacobian(model, q, frame),
        "frame_acceleration": lambda q, v, a, f: invdyn.frame_acceleration(model, q, v, a, frame),
        "center_of_mass": lambda q, v, a, f: invdyn.center_of_mass(model, q),
        "centroidal_momentum_rate": lambda q, v, a, f: invdyn.centroidal_momentum_rate(
            model, q, v, a
        ),
    }
    # forward dynamics agree as the conditioning of M allows
    cond = max(np.linalg.cond(m) for m in mass)
    rtols = {
        "aba": forward_dynamics_rtol(invdyn.aba(model, q, v, a, f_ext=forces), mass),
        "aba_derivatives": max(1e-8, 100 * np.finfo(np.float64).eps * cond),
    }
    on_cuda = [torch.tensor(x, device="cuda") for x in (q, v, a, forces)]
    for what, call in calls.items():
        ours, expected = as_tuple(call(*on_cuda)), as_tuple(call(q, v, a, forces))
        assert all(x.device.type == "cuda" for x in ours), what
        in_force_domain = what.startswith("aba")
        for x, y in zip(ours, expected, strict=True):
            x = x.cpu().numpy()
            if in_force_domain:
                x, y = (np.einsum("bij,bj...->bi...", mass, z) for z in (x, y))
            assert_close(x, y, rtol=rtols.get(what, RTOL), what=f"{model.name} {what}")


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def test_quaternions_and_pairs_of_any_norm_read_as_numpy_reads_their_rotation(robot):
    """float32 rounding and gradient steps leave quaternions and (cos θ, sin θ) pairs off unit
    norm: the torch path reads each as its rotation, as numpy does, and the gradient of rnea
    along a block's own direction (its scale) is zero."""
    q, v, a = states(robot, "torch-off-unit-norm")
    scaled = off_unit(robot, q)
    tq, tv, ta = tensors(scaled, v, a)
    frame = len(robot.frame_name) - 1
    for what, function, args in [
        ("rnea", invdyn.rnea, (v, a)),
        ("mass_matrix", invdyn.mass_matrix, ()),
        # aba in the force domain: its accelerations carry M's conditioning
        (
            "M @ aba",
            lambda m, x, *va: np.einsum(
                "bij,bj->bi", invdyn.mass_matrix(m, q), np.asarray(invdyn.aba(m, x, *va))
            ),
            (v, a),
        ),
        ("coriolis", invdyn.coriolis, (v,)),
        ("centroidal", invdyn.centroidal_momentum_matrix, ()),
        ("frame_jacobian", lambda m, x: invdyn.frame_jacobian(m, x, frame), ()),
    ]:
        ours = np.asarray(function(robot, tq, *tensors(*args)))
        assert_close(ours, function(robot, q, *args), rtol=RTOL, what=f"{robot.name} {what}")
    tq.requires_grad_(True)
    (torch.ones(robot.nv, dtype=tq.dtype) @ invdyn.rnea(robot, tq, tv, ta).T).sum().backward()
    for block in rotation_blocks(robot):
        along = (tq.grad[:, block] * tq.detach()[:, block]).sum(-1)
        assert_close(along.numpy(), np.zeros(len(q)), rtol=RTOL, what=f"scale of q[{block}]")


def test_kinematics_equal_numpy(robot):
    q, v, a = states(robot, "torch-kinematics")
    (tq,) = tensors(q)
    for ours, expected in zip(
        invdyn.forward_kinematics(robot, tq), invdyn.forward_kinematics(robot, q)
    ):
        assert_close(ours.numpy(), expected, rtol=RTOL, what=f"{robot.name} forward kinematics")
    # a frame on the last body, one on the world where the model has one
    frames = [len(robot.frame_name) - 1, *np.flatnonzero(robot.frame_body < 0)[:1]]
    for frame in frames:
        for ours, expected in zip(
            invdyn.frame_placement(robot, tq, int(frame)),
            invdyn.frame_placement(robot, q, int(frame)),
        ):
            assert_close(ours.numpy(), expected, rtol=RTOL, what=f"frame {frame} placement")
        for reference in ("local", "world", "local_world_aligned"):
            ours = invdyn.frame_jacobian(robot, tq, int(frame), reference=reference)
            expected = invdyn.frame_jacobian(robot, q, int(frame), reference=reference)
            assert_close(ours.numpy(), expected, rtol=RTOL, what=f"frame {frame} {reference}")
            for function, args in (
                (invdyn.frame_velocity, (v,)),
                (invdyn.frame_acceleration, (v, a)),
            ):
                ours = function(robot, tq, *tensors(*args), int(frame), reference=reference)
                expected = function(robot, q, *args, int(frame), reference=reference)
                what = f"{function.__name__} of frame {frame} {reference}"
                assert_close(ours.numpy(), expected, rtol=RTOL, what=what)


def test_centroidal_quantities_equal_numpy(robot):
    q, v, a = states(robot, "torch-centroidal")
    tq, tv, ta = tensors(q, v, a)
    for function, args, tensor_args in (
        (invdyn.center_of_mass, (q,), (tq,)),
        (invdyn.center_of_mass_jacobian, (q,), (tq,)),
        (invdyn.centroidal_momentum_matrix, (q,), (tq,)),
        (invdyn.centroidal_momentum_rate, (q, v, a), (tq, tv, ta)),
    ):
        ours = function(robot, *tensor_args)
        assert_close(ours.numpy(), function(robot, *args), rtol=RTOL, what=function.__name__)


def test_float32_agrees_with_float64(robot):
    q, v, a = states(robot, "torch-float32")
    single = invdyn.rnea(robot, *tensors(q, v, a, dtype=torch.float32))
    assert single.dtype == torch.float32
    assert_close(single.double().numpy(), invdyn.rnea(robot, q, v, a), rtol=1e-4, what="rnea")
    mass = invdyn.mass_matrix(robot, *tensors(q, dtype=torch.float32))
    assert mass.dtype == torch.float32
    assert_close(mass.double().numpy(), invdyn.mass_matrix(robot, q), rtol=1e-5, what="M")
    # float32 and float64 tensors promote to float64, as torch's operators do
    q32, v64, a64 = tensors(q, dtype=torch.float32)[0], *tensors(v, a)
    mixed = invdyn.rnea(robot, q32, v64, a64)
    assert mixed.dtype == torch.float64
    expected = invdyn.rnea(robot, q32.double().numpy(), v, a)
    assert_close(mixed.numpy(), expected, rtol=RTOL, what="rnea mixed")


def test_leading_shapes_broadcast_and_arrays_mix_with_tensors(robot):
    q, v, a = states(robot, "torch-shapes", n=6)
    q, v, a = q.reshape(2, 3, -1), v.reshape(2, 3, -1), a.reshape(2, 3, -1)
    expected = invdyn.rnea(robot, q, v, a)
    # numpy v and a take the dtype of the tensor q
    ours = invdyn.rnea(robot, torch.tensor(q), v, a)
    assert ours.shape == (2, 3, robot.nv)
    assert_close(ours.numpy(), expected, rtol=RTOL, what="rnea (2, 3)")
    # one state against a batch of accelerations
    one = invdyn.rnea(robot, torch.tensor(q[0, 0]), torch.tensor(v[0, 0]), torch.tensor(a))
    assert one.shape == (2, 3, robot.nv)
    assert_close(one.numpy(), invdyn.rnea(robot, q[0, 0], v[0, 0], a), rtol=RTOL, what="broadcast")
    empty = invdyn.rnea(robot, *tensors(q[:0, 0], v[:0, 0], a[:0, 0]))
    assert empty.shape == (0, robot.nv)
    # the derivatives broadcast alike (forward mode cannot write into a broadcast view)
    v_one, a_one = torch.tensor(v[0, 0]), torch.tensor(a[0, 0])
    for function in (invdyn.rnea_derivatives, invdyn.aba_derivatives):
        ours = function(robot, torch.tensor(q), v_one, a_one)
        spelled_out = function(robot, torch.tensor(q), v_one.repeat(2, 3, 1), a_one.repeat(2, 3, 1))
        for name, x, y in zip("dq dv M".split(), ours, spelled_out, strict=True):
            assert x.shape == (2, 3, robot.nv, robot.nv)
            torch.testing.assert_close(x, y, msg=f"{function.__name__} {name} broadcast")


def test_meta_tensors_give_the_shapes_of_the_results(robot):
    """Tensors on the meta device hold no values: each function gives its results' shapes."""
    q = torch.empty(4, robot.nq, device="meta", dtype=torch.float64)
    v = torch.empty(4, robot.nv, device="meta", dtype=torch.float64)
    nv = robot.nv
    assert invdyn.rnea(robot, q, v, v).shape == (4, nv)
    assert invdyn.mass_matrix(robot, q).shape == (4, nv, nv)
    assert invdyn.coriolis(robot, q, v).shape == (4, nv, nv)
    assert invdyn.aba(robot, q, v, v).shape == (4, nv)
    assert [x.shape for x in invdyn.rnea_derivatives(robot, q, v, v)] == [(4, nv, nv)] * 3
    assert invdyn.frame_jacobian(robot, q, 0).shape == (4, 6, nv)
    assert invdyn.frame_acceleration(robot, q, v, v, 0).shape == (4, 6)
    assert invdyn.centroidal_momentum_matrix(robot, q).shape == (4, 6, nv)
    assert invdyn.centroidal_momentum_rate(robot, q, v, v).shape == (4, 6)


def test_torch_func_transforms_vmap_the_functions(robot):
    """vmap over rnea, the mass matrix and per-state Jacobians of rnea equals the batched
    call and a loop of jacrev."""
    q, v, a = tensors(*states(robot, "torch-vmap", n=3))
    vmapped = torch.func.vmap(lambda q, v, a: invdyn.rnea(robot, q, v, a))(q, v, a)
    assert_close(vmapped.numpy(), invdyn.rnea(robot, q, v, a).numpy(), rtol=RTOL, what="vmap")
    masses = torch.func.vmap(lambda q: invdyn.mass_matrix(robot, q))(q)
    assert_close(masses.numpy(), invdyn.mass_matrix(robot, q).numpy(), rtol=RTOL, what="M")
    jacobian = torch.func.jacrev(lambda v, q, a: invdyn.rnea(robot, q, v, a))
    per_state = torch.func.vmap(jacobian)(v, q, a)
    looped = torch.stack([jacobian(v[k], q[k], a[k]) for k in range(len(q))])
    assert_close(per_state.numpy(), looped.numpy(), rtol=RTOL, what="vmap(jacrev)")


def test_forward_and_reverse_mode_agree_and_q_may_stay_unmapped(robot):
    """jacfwd equals jacrev on aba_derivatives (whose inverse mass matrix was once taken by
    cholesky_inverse, of a wrong forward-mode derivative), and vmap maps the regressor over
    velocities and accelerations with one configuration."""
    q, v, a = tensors(*states(robot, "torch-modes", n=2))

    def derivatives(q):
        return torch.stack(invdyn.aba_derivatives(robot, q, v[0], a[0]))

    forward = torch.func.jacfwd(derivatives)(q[0])
    reverse = torch.func.jacrev(derivatives)(q[0])
    assert_close(forward.numpy(), reverse.numpy(), rtol=1e-8, what="aba_derivatives")
    mapped = torch.func.vmap(lambda v, a: invdyn.joint_torque_regressor(robot, q[0], v, a))(v, a)
    looped = torch.stack([invdyn.joint_torque_regressor(robot, q[0], v[k], a[k]) for k in (0, 1)])
    assert_close(mapped.numpy(), looped.numpy(), rtol=RTOL, what="vmap of the regressor")


@pytest.mark.parametrize("first", ["inference_mode", "hessian"])
def test_the_first_call_leaves_the_model_usable_for_autograd(first):
    """The model's tensors, built by its first torch call, are plain ones whatever that call
    ran under: gradients and transforms work after a first call in inference mode or inside
    nested torch.func transforms."""
    fresh = invdyn.load("double_pendulum")
    q, v, a = tensors(*states(fresh, "torch-first-call", n=1))
    if first == "inference_mode":
        with torch.inference_mode():
            invdyn.rnea(fresh, q[0], v[0], a[0])
    else:
        torch.func.hessian(lambda q: invdyn.rnea(fresh, q, v[0], a[0]).sum())(q[0])
    x = q[0].clone().requires_grad_()
    invdyn.rnea(fresh, x, v[0], a[0]).sum().backward()
    jacobian = torch.func.jacrev(lambda q: invdyn.mass_matrix(fresh, q))(q[0])
    assert x.grad is not None and torch.isfinite(x.grad).all() and jacobian.shape == (2, 2, 2)


@pytest.mark.slow
def test_torch_compile_traces_the_functions_in_one_graph(load_robot):
    """After one eager call (of rnea) has built the model's tensors, rnea, the mass matrix,
    aba, a frame's placement, Jacobian and acceleration and the centroidal momentum's rate
    compile without a graph break (``fullgraph=True``
    raises at one) and equal the eager results."""
    robot = load_robot("solo12")
    frame = robot.frame_name[-1]

    def functions(q, v, a):
        rotation, origin = invdyn.frame_placement(robot, q, frame)
        return (
            invdyn.rnea(robot, q, v, a),
            invdyn.mass_matrix(robot, q),
            invdyn.aba(robot, q, v, a),
            rotation,
            origin,
            invdyn.frame_jacobian(robot, q, frame),
            invdyn.frame_acceleration(robot, q, v, a, frame),
            invdyn.centroidal_momentum_rate(robot, q, v, a),
        )

    q, v, a = tensors(*states(robot, "torch-compile", n=4))
    invdyn.rnea(robot, q, v, a)
    compiled = torch.compile(functions, fullgraph=True)(q, v, a)
    eager = functions(q, v, a)
    names = ("rnea", "M", "aba", "rotation", "origin", "J", "frame acceleration", "h_G rate")
    for got, want, what in zip(compiled, eager, names, strict=True):
        assert_close(got.numpy(), want.numpy(), rtol=1e-9, what=what)


def test_torch_compile_of_a_fresh_model():
    """Straight after loading: compiled with graph breaks, a call equals the eager one; in one
    graph, the error says that a first, eager call builds the model's tensors."""
    fresh = invdyn.load("double_pendulum")
    q, v, a = tensors(*states(fresh, "torch-compile-fresh", n=3))
    compiled = torch.compile(lambda q, v, a: invdyn.rnea(fresh, q, v, a))(q, v, a)
    assert_close(compiled.numpy(), invdyn.rnea(fresh, q, v, a).numpy(), rtol=RTOL, what="rnea")
    other = invdyn.load("double_pendulum")
    with pytest.raises(Exception, match="built by a first call outside the compiled function"):
        torch.compile(lambda q: invdyn.mass_matrix(other, q), fullgraph=True)(q)


def test_import_invdyn_does_not_import_torch():
    code = "import sys, invdyn; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------------------------
# derivatives
# ----------------------------------------------------------------------------------------------

GRADCHECK_ROBOTS = [("panda", False), ("solo12", True)]


@pytest.mark.parametrize(("name", "floating"), GRADCHECK_ROBOTS, ids=["panda", "solo12-floating"])
def test_gradcheck_rnea_and_aba(load_robot, name, floating):
    model = _with_joint_terms_without_friction(load_robot(name, floating_base=floating))
    q, v, a = states(model, f"gradcheck-{name}", n=2)
    params = invdyn.inertial_parameters(model)
    tq, tv, ta, tp = (x.requires_grad_() for x in tensors(q, v, a, params))
    assert torch.autograd.gradcheck(
        lambda q, v, a, p: invdyn.rnea(model, q, v, a, params=p), (tq, tv, ta, tp)
    )
    assert torch.autograd.gradcheck(
        lambda q, v, tau, p: invdyn.aba(model, q, v, tau, params=p), (tq, tv, ta, tp)
    )


def _with_joint_terms_without_friction(model: Model) -> Model:
    """Armature and damping on every dof, no Coulomb friction (sign(v) has no derivative)."""
    rng = np.random.default_rng(1)
    return model.replace(
        dof_armature=rng.uniform(0.01, 0.1, model.nv), dof_damping=rng.uniform(0.1, 1.0, model.nv)
    )


def test_gradient_with_respect_to_parameters_is_the_regressor(model):
    q, v, a = states(model, "torch-linear")
    tq, tv, ta = tensors(q, v, a)
    params = torch.tensor(invdyn.inertial_parameters(model), requires_grad=True)
    weights = torch.tensor(np.random.default_rng(2).normal(size=(len(q), model.nv)))
    (invdyn.rnea(model, tq, tv, ta, params=params) * weights).sum().backward()
    regressor = invdyn.joint_torque_regressor(model, q, v, a)
    expected = np.einsum("bi,bij->j", weights.numpy(), regressor)
    assert_close(params.grad.numpy(), expected, rtol=RTOL, what="d(w . rnea)/d params")


def test_parameters_fit_by_gradient_descent(load_robot):
    """Link masses of panda, scaled by unknown factors, fitted by L-BFGS through rnea until the
    torques of held-out states are the true ones (unidentifiable masses may stay wrong)."""
    model = load_robot("panda", floating_base=False)
    train, held_out = (tensors(*states(model, f"torch-fit-{k}", n=64)) for k in ("a", "b"))
    true = torch.tensor(invdyn.inertial_parameters(model))
    mass_index = torch.arange(model.nbody) * 10
    start = torch.tensor(np.random.default_rng(3).uniform(0.5, 1.5, model.nbody))
    scale = torch.ones(model.nbody, dtype=torch.float64, requires_grad=True)

    def parameters():
        return true.index_put((mass_index,), true[mass_index] * start * scale)

    def error(states):
        expected = invdyn.rnea(model, *states)
        return (
            invdyn.rnea(model, *states, params=parameters()) - expected
        ).norm() / expected.norm()

    before = error(held_out).item()
    optimiser = torch.optim.LBFGS(
        [scale],
        max_iter=200,
        tolerance_grad=1e-14,
        tolerance_change=0.0,
        line_search_fn="strong_wolfe",
    )

    def closure():
        optimiser.zero_grad()
        loss = error(train) ** 2
        loss.backward()
        return loss

    optimiser.step(closure)
    after = error(held_out).item()
    assert before > 0.05 and after < 1e-8, (before, after)


# ----------------------------------------------------------------------------------------------
# parameters per call
# ----------------------------------------------------------------------------------------------


def test_parameters_per_call_equal_a_rebuilt_model(model):
    q, v, a = states(model, "torch-params")
    rng = np.random.default_rng(4)
    params = invdyn.inertial_parameters(model) * rng.uniform(
        0.8, 1.2, 10 * model.nbody + 3 * model.nv
    )
    rebuilt = invdyn.with_parameters(model, params)
    assert_close(invdyn.inertial_parameters(rebuilt), params, rtol=1e-12, what="round trip")
    expected = invdyn.rnea(rebuilt, q, v, a)
    assert_close(invdyn.rnea(model, q, v, a, params=params), expected, rtol=RTOL, what="numpy")
    tq, tv, ta, tparams = tensors(q, v, a, params)
    ours = invdyn.rnea(model, tq, tv, ta, params=tparams)
    assert_close(ours.numpy(), expected, rtol=RTOL, what="torch")
    assert_close(
        invdyn.mass_matrix(model, q, params=params),
        invdyn.mass_matrix(rebuilt, q),
        rtol=RTOL,
        what="mass matrix",
    )


def test_a_batch_of_parameter_sets(robot):
    q, v, a = states(robot, "torch-param-batch", n=1)
    base = invdyn.inertial_parameters(robot)
    sets = np.stack([base, 1.5 * base])
    tq, tv, ta, tsets = tensors(q[0], v[0], a[0], sets)
    ours = invdyn.rnea(robot, tq, tv, ta, params=tsets)
    assert ours.shape == (2, robot.nv)
    assert_close(ours[1].numpy(), 1.5 * ours[0].numpy(), rtol=RTOL, what="linear in params")


def test_with_parameters_names_bad_parameters(load_robot):
    model = load_robot("panda", floating_base=False)
    params = invdyn.inertial_parameters(model)
    size = 10 * model.nbody + 3 * model.nv
    with pytest.raises(
        invdyn.InputError, match=rf"params must have shape \({size},\), got \({size - 1},\)$"
    ):
        invdyn.with_parameters(model, params[:-1])
    batch_note = r"got \(2, \d+\) \(one for the whole batch.*tensors"
    with pytest.raises(invdyn.InputError, match=batch_note):
        invdyn.rnea(model, np.zeros(9), np.zeros(9), np.zeros(9), params=np.stack([params] * 2))
    negative = params.copy()
    negative[30] = -1.0
    with pytest.raises(invdyn.InputError, match=f"body {model.body_name[3]!r} has a negative mass"):
        invdyn.with_parameters(model, negative)
    massless = params.copy()
    massless[30] = 0.0
    with pytest.raises(invdyn.InputError, match="first mass moment but no mass"):
        invdyn.with_parameters(model, massless)
    for row, what in enumerate(("armature", "viscous friction", "Coulomb friction")):
        negative = params.copy()
        negative[10 * model.nbody + row * model.nv + 2] = -0.5
        with pytest.raises(invdyn.InputError, match=f"params: {what} of 'panda_joint3' is -0.5"):
            invdyn.with_parameters(model, negative)


# ----------------------------------------------------------------------------------------------
# errors
# ----------------------------------------------------------------------------------------------


def test_the_finiteness_check_sees_past_its_sum_overflowing():
    from invdyn._tensors import all_finite

    big = torch.full((4, 3), 3e38, dtype=torch.float32)  # finite entries, an infinite sum
    assert all_finite(big) and not torch.isfinite(big.sum())
    for bad in (float("nan"), float("inf"), -float("inf")):
        x = big.clone()
        x[2, 1] = bad
        assert not all_finite(x), bad
    assert not all_finite(torch.tensor([float("inf"), -float("inf")]))  # a NaN sum
    assert all_finite(torch.zeros(0, 3)) and all_finite(torch.ones(3, requires_grad=True))


def test_bad_tensors_get_errors_that_name_them(load_robot):
    model = load_robot("panda", floating_base=False)
    q, v, a = tensors(*states(model, "torch-errors"))
    with pytest.raises(invdyn.InputError, match=r"v must have shape \(\.\.\., 9\), got \(3, 8\)"):
        invdyn.rnea(model, q, v[:, :8], a)
    with pytest.raises(invdyn.InputError, match="leading .* do not broadcast"):
        invdyn.rnea(model, q, v[:2], a)
    bad = a.clone()
    bad[1, 2] = float("nan")
    with pytest.raises(invdyn.InputError, match="a holds a non-finite value"):
        invdyn.rnea(model, q, v, bad)
    with pytest.raises(invdyn.InputError, match="q holds a non-finite value"):
        invdyn.frame_jacobian(model, torch.full_like(q, float("inf")), 0)
    with pytest.raises(invdyn.InputError, match="^q must hold real numbers, got dtype torch.compl"):
        invdyn.mass_matrix(model, q.to(torch.complex128))
    with pytest.raises(invdyn.InputError, match="^a must hold real numbers, got dtype torch.bool"):
        invdyn.rnea(model, q, v, a > 0)
    with pytest.raises(invdyn.InputError, match="a must hold real numbers, got dtype bool"):
        invdyn.rnea(model, q, v, a.numpy() > 0)
    with pytest.raises(invdyn.InputError, match="float32 or float64, got torch.float16"):
        invdyn.aba(model, q.half(), v.half(), a.half())
    with pytest.raises(invdyn.InputError, match=r"overflowed.*: q, v, a, or the model's masses"):
        invdyn.rnea(model, q, v * 1e200, a)
    with pytest.raises(invdyn.InputError, match="invdyn.Model"):
        invdyn.rnea("panda", q, v, a)


def test_a_non_finite_root_position_is_refused_where_the_result_does_not_read_it(load_robot):
    """The mass matrix and the Coriolis matrix are computed in the root's frame, so its
    position does not reach them: it is checked as the numpy path checks it."""
    model = load_robot("solo12", floating_base=True)
    q, v, _ = tensors(*states(model, "torch-root"))
    q[1, 0] = float("nan")
    with pytest.raises(invdyn.InputError, match="q holds a non-finite value"):
        invdyn.mass_matrix(model, q)
    with pytest.raises(invdyn.InputError, match="q holds a non-finite value"):
        invdyn.coriolis(model, q, v)


def test_singular_mass_matrix_is_a_model_error(load_robot):
    model = load_robot("panda", floating_base=False)
    massless = model.replace(
        body_mass=np.zeros(model.nbody), body_inertia=np.zeros((model.nbody, 3, 3))
    )
    q, v, tau = tensors(*states(model, "torch-singular"))
    with pytest.raises(invdyn.ModelError, match="mass matrix is singular"):
        invdyn.aba(massless, q, v, tau)
    with pytest.raises(invdyn.ModelError, match="mass matrix is singular") as raised:
        invdyn.aba(massless, q.float(), v.float(), tau.float())
    assert "in float32, the mass matrix is too ill-conditioned: try float64" in str(raised.value)
    # one massless finger: a zero pivot, which torch's cholesky_inverse would raise on
    last = model.replace(
        body_mass=np.r_[model.body_mass[:-1], 0.0],
        body_com=np.r_[model.body_com[:-1], np.zeros((1, 3))],
        body_inertia=np.r_[model.body_inertia[:-1], np.zeros((1, 3, 3))],
        dof_armature=np.zeros(model.nv),
    )
    for function in (invdyn.aba, invdyn.aba_derivatives):
        with pytest.raises(invdyn.ModelError, match="mass matrix is singular"):
            function(last, q, v, tau)
