"""The fused rnea kernel (`invdyn.kernels.triton`) and the straight-line programs it runs
(`invdyn.kernels.unrolled`).

* Everywhere: the program of every robot of the dynamics identities, evaluated by torch on the
  CPU, equals the numpy path to 1e-10, with the model's parameters written in and with
  parameters read per state or once for all, and on quaternions and (cos θ, sin θ) pairs of
  any norm, zero included; programs hold no products by 0 or 1 and read each
  input right before its first use; the kernel's text is valid Python; constants that float32
  does not hold exactly keep their float64 value.
* With Triton installed (the ``dev`` extra): the kernel run by Triton's interpreter on the CPU
  equals the numpy path for a fixed arm, continuous joints and floating bases, in float64 and
  float32, on rotations of any norm, with the model's parameters and per-state ones.
* On a CUDA device (marked ``gpu``): ``invdyn.rnea`` of CUDA tensors (the fused kernel) equals
  the numpy path on every joint type and base, in float64 and float32, for every launch shape,
  with parameters given or not; joint angles beyond the kernel's sine are recomputed by the
  torch path; gradients pass ``gradcheck``. Of the large floating robots only TALOS is run on
  the GPU: Triton takes a minute or more to compile each of G1's, PR2's and iCub's kernels
  (the kernel's text is the program checked on the CPU for all of them).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import invdyn
from conftest import assert_close, off_unit, rotation_blocks, states, with_joint_terms

torch = pytest.importorskip("torch")

from invdyn.kernels import triton as fused  # noqa: E402
from invdyn.kernels import unrolled  # noqa: E402
from invdyn.model import inertial_parameters  # noqa: E402

RTOL = 1e-10
needs_triton = pytest.mark.skipif(not fused.available(), reason="Triton missing")


def perturbed_parameters(model, n: int, seed: int = 0) -> np.ndarray:
    """(n, 10 nbody + 3 nv) the model's parameters, each state's scaled differently."""
    rng = np.random.default_rng(seed)
    return inertial_parameters(model) * rng.uniform(0.8, 1.2, size=(n, 1))


def rnea_per_state(model, q, v, a, params: np.ndarray) -> np.ndarray:
    """(n, nv) the numpy path's joint forces of each state k on the model rebuilt from
    `params[k]` (numpy calls take one parameter set, tensor calls a batch)."""
    return np.stack(
        [
            invdyn.rnea(invdyn.with_parameters(model, params[k]), q[k], v[k], a[k])
            for k in range(len(q))
        ]
    )


def test_program_equals_numpy(model):
    q, v, a = states(model, "unrolled", n=5)
    expected = invdyn.rnea(model, q, v, a)
    tensors = [torch.tensor(x) for x in (q, v, a)]
    own = torch.tensor(inertial_parameters(model))[None]
    for constant in (True, False):
        ours = unrolled.torch_rnea(model, constant)(*tensors, own)
        assert_close(ours.numpy(), expected, rtol=RTOL, what=f"{model.name} constant={constant}")
    params = perturbed_parameters(model, len(q))
    ours = unrolled.torch_rnea(model, False)(*tensors, torch.tensor(params))
    for k, expected_k in enumerate(rnea_per_state(model, q, v, a, params)):
        assert_close(ours[k].numpy(), expected_k, rtol=RTOL, what=f"{model.name} params {k}")


def test_program_reads_rotations_of_any_norm_as_numpy_does(model):
    """Quaternions and (cos θ, sin θ) pairs off unit norm, and one of each robot zero (no
    rotation): the kernel reads q as it is given, not scaled first."""
    q, v, a = states(model, "unrolled-norm", n=4)
    scaled = off_unit(model, q)
    for block in rotation_blocks(model):
        scaled[0, block] = 0.0
    expected = invdyn.rnea(model, scaled, v, a)
    own = torch.tensor(inertial_parameters(model))[None]
    ours = unrolled.torch_rnea(model, True)(*(torch.tensor(x) for x in (scaled, v, a)), own)
    assert_close(ours.numpy(), expected, rtol=RTOL, what=model.name)


def test_program_folds_constants_and_loads_late(load_robot):
    model = load_robot("panda")
    program = unrolled.rnea_program(model, True, repr)
    for _, expression, _ in program.statements:
        assert not re.search(r"\* \(?-?1\.0\)?(?!\d)|\* 0\.0(?!\d)|\+ 0\.0(?!\d)", expression), (
            expression
        )
    source = program.source(
        lambda x, k, names: [f"{names[0]} = {x}[{k}]"],
        lambda k, names: [f"out[{k}] = {names[0]}"],
        "",
    )
    lines = source.splitlines()
    first_use = {}
    for row, line in enumerate(lines):
        for name in re.findall(r"\b[qva]\d+\b", line.split("=", 1)[1]):
            first_use.setdefault(name, row)
    load_rows = [row for row, line in enumerate(lines) if re.match(r"[qva]\d+ = ", line)]
    loads = {lines[row].split(" = ")[0]: row for row in load_rows}
    assert len(loads) == len(load_rows) and set(loads) == set(first_use), "each input once"
    for name, row in loads.items():
        assert first_use[name] == row + 1, (
            f"{name} loaded at {row}, first used at {first_use[name]}"
        )
    stores = [row for row, line in enumerate(lines) if line.startswith("out[")]
    assert len(stores) == model.nv
    for row in stores:
        defined = lines[row].split(" = ")[1]
        assert lines[row - 1].startswith(f"{defined} = "), lines[row - 1 : row + 1]


# a fixed arm, continuous joints, floating bases
INTERPRETED_ROBOTS = [("panda", False), ("kinova", False), ("talos", True), ("solo12", True)]


@needs_triton
def test_kernel_run_by_tritons_interpreter_equals_numpy():
    """The kernel as Triton runs it, by its interpreter on the CPU, in a process of its own:
    the interpreter is chosen when Triton is imported."""
    calls = [f"t.interpreted_rnea_equals_numpy({n!r}, {f})" for n, f in INTERPRETED_ROBOTS]
    # this file, and the conftest it imports, one folder up
    here = Path(__file__).parent
    path = os.pathsep.join([str(here), str(here.parent), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": path}
    code = "; ".join(["import test_fused as t", *calls])
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]


def interpreted_rnea_equals_numpy(name: str, floating: bool) -> None:
    """The fused kernel (under ``TRITON_INTERPRET=1``) equals the numpy path: float64 and
    float32, q of any norm (zero rotations included), the model's parameters and per-state
    ones."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        model = with_joint_terms(invdyn.load(name, floating_base=floating))
    q, v, a = states(model, "interpreted", n=5)
    q = off_unit(model, q)
    for block in rotation_blocks(model):
        q[0, block] = 0.0
    expected = invdyn.rnea(model, q, v, a)
    for dtype, rtol in ((torch.float64, RTOL), (torch.float32, 1e-4)):
        ours = fused.launch(model, *(torch.tensor(x, dtype=dtype) for x in (q, v, a)), None)
        assert ours.dtype == dtype
        assert_close(ours.double().numpy(), expected, rtol=rtol, what=f"{name} {dtype}")
    params = perturbed_parameters(model, len(q))
    ours = fused.launch(model, *(torch.tensor(x) for x in (q, v, a, params)))
    for k, expected_k in enumerate(rnea_per_state(model, q, v, a, params)):
        assert_close(ours[k].numpy(), expected_k, rtol=RTOL, what=f"{name} params {k}")


def test_kernel_text_is_python_with_exact_float64_constants(load_robot):
    model = load_robot("panda")
    literal = fused._literal(torch.float64)
    assert literal(0.5) == "0.5"
    assert literal(0.1) == "tl.full([], 0.1, tl.float64)"
    assert fused._literal(torch.float32)(0.1) == "0.1"
    for dtype in (torch.float32, torch.float64):
        for constant in (True, False):
            compile(fused.kernel_source(model, constant, dtype), "<kernel>", "exec")


def test_column_groups_split_and_join_in_column_order(load_robot):
    # Triton's reshape, split and join, on numpy: the statements that read a group of columns
    # define each name as its column, and those that write one rebuild the block
    class tl:
        reshape = staticmethod(np.reshape)
        split = staticmethod(lambda x: (x[..., 0], x[..., 1]))
        join = staticmethod(lambda a, b: np.stack([a, b], axis=-1))

    block, width = 3, 8
    names = [f"c{k}" for k in range(6)] + [None, None]
    space = {"tl": tl, "BLOCK": block, "tile": np.arange(block * width).reshape(block, width)}
    exec("\n".join(fused._split("tile", names)), space)
    for k in range(6):
        assert np.array_equal(space[f"c{k}"], space["tile"][:, k]), k
    tile, lines = fused._joined([f"c{k}" for k in range(6)] + ["c0", "c0"])
    exec("\n".join([*lines, f"out = {tile}"]), space)
    assert np.array_equal(space["out"][:, :6], space["tile"][:, :6])
    # a large model's kernel reads and writes in groups; its text is valid Python
    talos = load_robot("talos", floating_base=True)
    source = fused.kernel_source(talos, True, torch.float64)
    assert "tl.split" in source and "tl.join" in source
    compile(source, "<kernel>", "exec")


def test_fused_function_differentiates_twice_through_the_torch_path(load_robot, monkeypatch):
    # the kernel's autograd Function, its launch replaced by the same program run by torch:
    # first and second derivatives equal the torch path's
    from invdyn.kernels import torch as kernels

    model = with_joint_terms(load_robot("solo12", floating_base=True), seed=4)
    own = torch.tensor(inertial_parameters(model))[None]

    def program(model_, q, v, a, params):
        return unrolled.torch_rnea(model_, params is None)(
            q, v, a, own if params is None else params
        )

    monkeypatch.setattr(fused, "launch", program)
    tree = kernels.tree(model, torch.float64, torch.device("cpu"))
    inputs = [torch.tensor(x).requires_grad_() for x in states(model, "fused-twice", n=2)]
    inputs.append(own.clone().requires_grad_())
    weights = torch.randn(2, model.nv, dtype=torch.float64)

    def derivatives(rnea):
        tau = rnea(*inputs)
        first = torch.autograd.grad((tau * weights).sum(), inputs, create_graph=True)
        second = torch.autograd.grad(first[1].square().sum(), inputs[1])[0]
        return [*first, second]

    ours = derivatives(lambda q, v, a, p: fused.rnea(tree, model, q, v, a, p, True))
    expected = derivatives(lambda q, v, a, p: kernels.rnea(tree, q, v, a, None, p))
    for x, y in zip(ours, expected):
        assert_close(x.detach().numpy(), y.detach().numpy(), rtol=RTOL)


# ----------------------------------------------------------------------------------------------
# on a CUDA device
# ----------------------------------------------------------------------------------------------

# (name, floating base, with joint terms): every joint type and base of the sample but the
# spherical joints of the MJCF robot (MuJoCo is not needed on a GPU machine); of the large
# floating robots TALOS alone, with its own parameters (the kernel that benchmarks/gpu.py
# compiles: Triton takes a minute or more for each kernel of G1, PR2, iCub or TALOS)
GPU_ROBOTS = [
    ("panda", False, True),
    ("panda", True, True),
    ("ur5", False, True),
    ("talos", True, False),
    ("solo12", True, True),
    ("anymal", True, True),
    ("kinova", False, True),
    ("tiago_no_hand", False, True),
    ("double_pendulum_continuous", False, True),
]
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def cuda_tensors(*arrays, dtype=torch.float64):
    return tuple(torch.tensor(x, dtype=dtype, device="cuda") for x in arrays)


@pytest.mark.gpu
@cuda
@needs_triton
@pytest.mark.parametrize("name, floating, joint_terms", GPU_ROBOTS, ids=lambda x: str(x))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
def test_fused_rnea_equals_numpy(load_robot, name, floating, joint_terms, dtype):
    model = load_robot(name, floating_base=floating)
    model = with_joint_terms(model) if joint_terms else model
    q, v, a = states(model, "fused", n=1000)
    ours = invdyn.rnea(model, *cuda_tensors(q, v, a, dtype=dtype))
    assert ours.device.type == "cuda" and ours.dtype == dtype
    rtol = RTOL if dtype == torch.float64 else 1e-4
    expected = invdyn.rnea(model, q, v, a)
    assert_close(ours.cpu().double().numpy(), expected, rtol=rtol, what=f"{name} {dtype}")
    mass = invdyn.mass_matrix(model, cuda_tensors(q, dtype=dtype)[0])
    assert_close(mass.cpu().double().numpy(), invdyn.mass_matrix(model, q), rtol=rtol * 10)


@pytest.mark.gpu
@cuda
@needs_triton
def test_fused_rnea_every_launch_shape_and_parameter_kind(load_robot):
    model = with_joint_terms(load_robot("ur5"))
    q, v, a = states(model, "fused-launch", n=1001)
    expected = invdyn.rnea(model, q, v, a)
    tq, tv, ta = cuda_tensors(q, v, a)
    for warps in (1, 2, 4, 8):
        for block in (32 * warps, 64 * warps):
            ours = fused.launch(model, tq, tv, ta, None, fused.Launch(block, warps))
            assert_close(ours.cpu().numpy(), expected, rtol=RTOL, what=f"{block}/{warps}")
    params = perturbed_parameters(model, len(q))
    ours = invdyn.rnea(model, tq, tv, ta, params=cuda_tensors(params)[0])
    expected = rnea_per_state(model, q, v, a, params)
    assert_close(ours.cpu().numpy(), expected, rtol=RTOL, what="per-state params")
    shared = inertial_parameters(model) * 1.1
    ours = invdyn.rnea(model, tq[::2], tv[::2], ta[::2], params=cuda_tensors(shared)[0])
    expected = invdyn.rnea(model, q[::2], v[::2], a[::2], params=shared)
    assert_close(ours.cpu().numpy(), expected, rtol=RTOL, what="shared params, strided states")


@pytest.mark.gpu
@cuda
@needs_triton
def test_fused_rnea_recomputes_angles_beyond_its_sine(load_robot):
    model = load_robot("panda")
    q, v, a = states(model, "fused-large", n=64)
    q[5, 3] = 3.0e7
    ours = invdyn.rnea(model, *cuda_tensors(q, v, a))
    assert_close(ours.cpu().numpy(), invdyn.rnea(model, q, v, a), rtol=RTOL, what="large angle")


@pytest.mark.gpu
@cuda
@needs_triton
@pytest.mark.parametrize("name, floating", [("panda", False), ("solo12", True)])
def test_fused_rnea_gradcheck(load_robot, name, floating):
    model = with_joint_terms(load_robot(name, floating_base=floating), seed=3)
    q, v, a = states(model, "fused-grad", n=2)
    tq, tv, ta = (x.requires_grad_() for x in cuda_tensors(q, v, a))
    params = cuda_tensors(inertial_parameters(model))[0].requires_grad_()

    def rnea(q_, v_, a_, p_):
        return invdyn.rnea(model, q_, v_, a_, params=p_)

    assert torch.autograd.gradcheck(rnea, (tq, tv, ta, params))
    assert torch.autograd.gradcheck(lambda v_: invdyn.rnea(model, tq, v_, ta), (tv,))
