"""The recursive Newton-Euler algorithm as one fused Triton kernel per model, for CUDA tensors.

`invdyn.kernels.unrolled` writes the algorithm for one model as straight-line scalar code; this
module wraps that text in a Triton kernel that loads a block of states, runs the program on
registers and stores the joint forces: one launch per call, each state read once and each
result written once, where the torch path launches a few operations per body. The model's
dynamic parameters are constants of the kernel unless the call gives its own (then they are
read per state, or once for all). Kernels are built once per model, parameter kind and dtype.

The fused kernel is differentiable: its backward pass is the torch path's (`invdyn.kernels.torch
.rnea` recomputed under autograd), so gradients are those of the torch path.

Used by the public ``invdyn.rnea`` for CUDA tensors without external forces when Triton can be
imported (it comes with PyTorch's CUDA builds); everything else takes the torch path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import linecache
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor

from invdyn._waits import announced
from invdyn.kernels import torch as kernels
from invdyn.kernels.unrolled import rnea_program
from invdyn.model import Model


@dataclasses.dataclass(frozen=True)
class Launch:
    """A kernel's launch shape: states per program instance and warps per instance."""

    block: int
    warps: int


# Triton's coalescing pass costs compile time in proportion to the number of loads and stores
# times the size of the kernel: programs of more than GROUP_ABOVE statements read and write
# GROUP columns per load and store (TALOS in float64, compiled for an H100 on 2 cores: 120 s
# column by column, 22 s in groups of 8, with fewer registers spilled); smaller ones (an arm:
# 5 s) keep one column per load, which holds fewer registers
GROUP, GROUP_ABOVE = 8, 2500

# by dtype; chosen on an H200 by `benchmarks/gpu.py --launches`
LAUNCH = {torch.float32: Launch(128, 4), torch.float64: Launch(128, 4)}

_UNSPECIALISED = ["n", *(f"{x}_stride" for x in ("q", "v", "a", "params", "tau"))]

_TRITON_DTYPES = {torch.float32: "tl.float32", torch.float64: "tl.float64"}

# the kernels launched in this process, with their devices
_LAUNCHED: set[tuple[Any, torch.device]] = set()


@functools.cache
def available() -> bool:
    """Whether Triton can be imported (a CUDA build of PyTorch brings it)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def applies(model: Model, q: Tensor, f_ext: Tensor | None) -> bool:
    """Whether ``invdyn.rnea`` of these arguments runs as the fused kernel: CUDA tensors, no
    external forces, a model with degrees of freedom, Triton, and no torch.func transform."""
    return q.is_cuda and f_ext is None and model.nv > 0 and available() and not functorch_active()


def functorch_active() -> bool:
    """Whether a torch.func transform (vmap, grad, jacrev, ...) is running: those take the
    torch path, which they can trace."""
    return torch._C._functorch.peek_interpreter_stack() is not None


def _literal(dtype: torch.dtype) -> Callable[[float], str]:
    """Source text of a constant in `dtype`: a plain literal where float32 holds it exactly
    (Triton types float literals as float32), else a full-precision scalar of the dtype."""
    name = _TRITON_DTYPES[dtype]

    def literal(x: float) -> str:
        if float(np.float32(x)) == x or dtype == torch.float32:
            return repr(x)
        return f"tl.full([], {x!r}, {name})"

    return literal


def kernel_source(model: Model, constant_params: bool, dtype: torch.dtype) -> str:
    """Python source of the Triton kernel ``rnea_kernel`` of `model`."""
    program = rnea_program(model, constant_params, _literal(dtype))

    def load(array: str, first: int, names: list[str]) -> list[str]:
        if len(names) == 1:
            return [f"{names[0]} = {_read(array, str(first), 'rows', 'mask')}"]
        width = 1 << (len(names) - 1).bit_length()
        columns = f"({first} + tl.arange(0, {width}))[None, :]"
        valid = f"mask[:, None] & (tl.arange(0, {width}) < {len(names)})[None, :]"
        tile = f"tile_{names[0]}"
        padded = [*names, *([None] * (width - len(names)))]
        return [f"{tile} = {_read(array, columns, 'rows[:, None]', valid)}", *_split(tile, padded)]

    def store(first: int, names: list[str]) -> list[str]:
        if len(names) == 1:
            return [f"tl.store({_place('tau', str(first), 'rows')}, {names[0]}, mask=mask)"]
        width = 1 << (len(names) - 1).bit_length()
        columns = f"({first} + tl.arange(0, {width}))[None, :]"
        valid = f"mask[:, None] & (tl.arange(0, {width}) < {len(names)})[None, :]"
        tile, lines = _joined([*names, *(["zero"] * (width - len(names)))])
        return [
            *lines,
            f"tl.store({_place('tau', columns, 'rows[:, None]')}, {tile}, mask={valid})",
        ]

    arrays = ["q", "v", "a", "params", "tau"]
    arguments = ", ".join(
        [f"{x}_ptr" for x in arrays]
        + [f"{x}_{kind}" for x in arrays for kind in ("stride", "step")]
        + ["n", "BLOCK: tl.constexpr"]
    )
    return (
        _HELPERS
        # one compiled kernel for every batch size and row stride (Triton would otherwise
        # compile again for values of 1 and multiples of 16)
        + f"@triton.jit(do_not_specialize={_UNSPECIALISED!r})\n"
        + f"def rnea_kernel({arguments}):\n"
        + "    rows = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)\n"
        + "    mask = rows < n\n"
        + f"    zero = tl.zeros([BLOCK], {_TRITON_DTYPES[dtype]})\n"
        + program.source(
            load, store, "    ", group=GROUP if len(program.statements) > GROUP_ABOVE else 1
        )
    )


# sine and cosine of joint angles, in float64 whatever the kernel's dtype: x = n pi/2 + r by a
# four-part Cody-Waite reduction (pi/2 in pieces of 33 bits: exact products for |n| < 2^20),
# then fdlibm's polynomials on |r| <= pi/4; within 2 ulp of numpy for |x| < 1e6, NaN beyond
# (where the caller recomputes by the torch path). libdevice's sin and cos would call their
# large-argument reduction, a function call that makes every live value of a long kernel spill.
_HELPERS = """import triton
import triton.language as tl


@triton.jit
def sign(x):
    return tl.where(x > 0, 1.0, 0.0) - tl.where(x < 0, 1.0, 0.0)


@triton.jit
def inverse_norm(square):
    # 1 / sqrt(square), and 0 for 0 (without dividing by it)
    turned = square != 0
    return tl.where(turned, 1.0 / tl.sqrt(tl.where(turned, square, 1.0)), 0.0).to(square.dtype)


@triton.jit
def is_zero(square):
    return tl.where(square == 0, 1.0, 0.0).to(square.dtype)


@triton.jit
def _reduced(x):
    y = x.to(tl.float64)
    n = tl.floor(y * tl.full([], 6.36619772367581382433e-01, tl.float64) + 0.5)
    r = y - n * tl.full([], 1.57079632673412561417e00, tl.float64)
    r = r - n * tl.full([], 6.07710050630396597660e-11, tl.float64)
    r = r - n * tl.full([], 2.02226624871116645580e-21, tl.float64)
    r = r - n * tl.full([], 8.47842766036889956997e-32, tl.float64)
    r = tl.where(tl.abs(y) < 1.0e6, r, float("nan"))
    return r, n.to(tl.int32) & 3


@triton.jit
def _sin_near_zero(r):
    z = r * r
    p = tl.full([], 1.58969099521155010221e-10, tl.float64)
    p = tl.full([], -2.50507602534068634195e-08, tl.float64) + z * p
    p = tl.full([], 2.75573137070700676789e-06, tl.float64) + z * p
    p = tl.full([], -1.98412698298579493134e-04, tl.float64) + z * p
    p = tl.full([], 8.33333333332248946124e-03, tl.float64) + z * p
    p = tl.full([], -1.66666666666666324348e-01, tl.float64) + z * p
    return r + r * z * p


@triton.jit
def _cos_near_zero(r):
    z = r * r
    p = tl.full([], -1.13596475577881948265e-11, tl.float64)
    p = tl.full([], 2.08757232129817482790e-09, tl.float64) + z * p
    p = tl.full([], -2.75573143513906633035e-07, tl.float64) + z * p
    p = tl.full([], 2.48015872894767294178e-05, tl.float64) + z * p
    p = tl.full([], -1.38888888888741095749e-03, tl.float64) + z * p
    p = tl.full([], 4.16666666666666019037e-02, tl.float64) + z * p
    return 1.0 - 0.5 * z + z * z * p


@triton.jit
def sin(x):
    r, quadrant = _reduced(x)
    s = _sin_near_zero(r)
    c = _cos_near_zero(r)
    out = tl.where(quadrant == 0, s, tl.where(quadrant == 1, c, tl.where(quadrant == 2, -s, -c)))
    return out.to(x.dtype)


@triton.jit
def cos(x):
    r, quadrant = _reduced(x)
    s = _sin_near_zero(r)
    c = _cos_near_zero(r)
    out = tl.where(quadrant == 0, c, tl.where(quadrant == 1, -s, tl.where(quadrant == 2, -c, s)))
    return out.to(x.dtype)


"""


def _place(array: str, column: str, rows: str) -> str:
    """The addresses of `column` (an index, or a block of them) of `array`'s `rows`."""
    return f"{array}_ptr + {rows} * {array}_stride + {column} * {array}_step"


def _read(array: str, column: str, rows: str, mask: str) -> str:
    """The expression that reads `column` (an index, or a block of them) of `array`'s `rows`."""
    return f"tl.load({_place(array, column, rows)}, mask={mask})"


def _joined(names: list[str]) -> tuple[str, list[str]]:
    """The name of a (BLOCK, len(names)) block whose columns are `names` (a power of two of
    them), and the statements that build it: the inverse of `_split`."""
    if len(names) == 1:
        return f"tl.reshape({names[0]}, [BLOCK, 1])", []
    even, first = _joined(names[0::2])
    odd, second = _joined(names[1::2])
    tile = f"joined_{names[0]}_{len(names)}"
    joined = f"tl.reshape(tl.join({even}, {odd}), [BLOCK, {len(names)}])"
    return tile, [*first, *second, f"{tile} = {joined}"]


def _split(tile: str, names: list[str | None]) -> list[str]:
    """Statements that define `names` as the columns of the (BLOCK, len(names)) block `tile`
    (a power of two wide; None for a padding column), by halving it into its even and odd
    columns until one is left."""
    if len(names) == 1:
        return [] if names[0] is None else [f"{names[0]} = tl.reshape({tile}, [BLOCK])"]
    even, odd = f"{tile}_0", f"{tile}_1"
    half = len(names) // 2
    lines = [f"{even}, {odd} = tl.split(tl.reshape({tile}, [BLOCK, {half}, 2]))"]
    return lines + _split(even, names[0::2]) + _split(odd, names[1::2])


def _build(model: Model, constant_params: bool, dtype: torch.dtype) -> Any:
    """The jitted ``rnea_kernel`` of `model`. Its source is registered with `linecache`, where
    Triton reads a kernel's text, under a name derived from the text itself."""
    source = kernel_source(model, constant_params, dtype)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    filename = f"<invdyn rnea kernel {model.name} {digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": f"invdyn_rnea_{digest}"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["rnea_kernel"]


def launch(
    model: Model,
    q: Tensor,
    v: Tensor,
    a: Tensor,
    params: Tensor | None,
    shape: Launch | None = None,
) -> Tensor:
    """(B, nv) joint forces of q (B, nq), v and a (B, nv) on a CUDA device, by the fused kernel;
    `params` (B or 1, 10 nbody + 3 nv) in place of the model's, or None for the model's own."""
    import triton

    batch = q.shape[0]
    tau = torch.empty((batch, model.nv), dtype=q.dtype, device=q.device)
    shape = shape or LAUNCH[q.dtype]
    kernel = model.derived(_build, params is None, q.dtype)
    arrays = [q, v, a, q if params is None else params, tau]
    strides = []
    for x in arrays:
        strides += [x.stride(0) if x.shape[0] > 1 else 0, x.stride(1)]
    grid = (triton.cdiv(batch, shape.block),)
    # Triton launches on the current device; the interpreter (TRITON_INTERPRET=1) on the CPU;
    # a kernel's first launch on a device compiles it, or loads it from Triton's cache
    first = (kernel, q.device) not in _LAUNCHED
    with (
        torch.cuda.device(q.device) if q.is_cuda else contextlib.nullcontext(),
        _compiling(model, q) if first else contextlib.nullcontext(),
    ):
        kernel[grid](*arrays, *strides, batch, BLOCK=shape.block, num_warps=shape.warps)
    _LAUNCHED.add((kernel, q.device))
    return tau


def _compiling(model: Model, q: Tensor) -> contextlib.AbstractContextManager[None]:
    """A first launch, which compiles the kernel (or loads it from Triton's cache), saying so
    when it lasts."""
    return announced(f"compiling the fused rnea kernel of {model.name} ({q.dtype}, {q.device})")


class _FusedRnea(torch.autograd.Function):
    """rnea by the fused kernel forward, by the torch path's autograd backward."""

    @staticmethod
    def forward(
        ctx: Any,
        t: kernels.Tree,
        model: Model,
        q: Tensor,
        v: Tensor,
        a: Tensor,
        params: Tensor,
        given_params: bool,
    ) -> Tensor:
        ctx.save_for_backward(q, v, a, params)
        ctx.tree = t
        return launch(model, q, v, a, params if given_params else None)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        # recomputed on the saved inputs themselves, so that a differentiated backward pass
        # (second derivatives) reaches them
        inputs = ctx.saved_tensors
        needed = ctx.needs_input_grad[2:6]
        wanted = [x for x, need in zip(inputs, needed) if need]
        create_graph = torch.is_grad_enabled()
        with torch.enable_grad():
            q, v, a, params = inputs
            tau = kernels.rnea(ctx.tree, q, v, a, None, params)
            grads = iter(torch.autograd.grad(tau, wanted, grad, create_graph=create_graph))
        return (None, None, *(next(grads) if need else None for need in needed), None)


def rnea(
    t: kernels.Tree,
    model: Model,
    q: Tensor,
    v: Tensor,
    a: Tensor,
    params: Tensor,
    given_params: bool,
) -> Tensor:
    """(B, nv) joint forces by the fused kernel, differentiable like the torch path's rnea
    (through an autograd function where a gradient may be asked for; without one, which costs
    tens of microseconds a call, where none can)."""
    if torch.is_grad_enabled() and any(x.requires_grad for x in (q, v, a, params)):
        return _FusedRnea.apply(t, model, q, v, a, params, given_params)
    return launch(model, q, v, a, params if given_params else None)
