"""Tensor arguments of the public array functions: checked, converted and flattened for
`invdyn.kernels.torch`, and results checked and shaped back.

Imported only when a public function is given a ``torch.Tensor`` (`invdyn._arrays.any_tensor`),
so that ``import invdyn`` does not import torch. The tensor arguments set the dtype, promoted
as torch promotes them (float32 and float64 give float64; the default floating dtype when they
all hold integers), and the first one the device; every argument, tensor or array, is converted
to them.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from torch import Tensor

from invdyn._arrays import REAL_KINDS, overflow_error
from invdyn.errors import InputError
from invdyn.kernels import torch as kernels
from invdyn.kernels import triton as fused
from invdyn.model import Model

# arguments that hold one value per model rather than per state: kept with a batch axis of one
# when they have no leading dimensions, rather than copied across the batch
_PER_MODEL = ("params", "f_ext")
# kernels that compute in each tree's root frame, so that a non-finite root position does not
# reach their results: their arguments are checked before the call
_ROOT_FRAME = ("mass_matrix", "coriolis")


@dataclasses.dataclass(frozen=True)
class Prepared:
    """Flattened tensor arguments of one call.

    Attributes:
      tree: the model's tensors in the call's dtype and device.
      args: name -> (B or 1, *core) tensor, None where the argument was None.
      params: (B or 1, 10 nbody + 3 nv) dynamic parameters (the model's when none were given).
      lead: the broadcast leading (batch) shape, of size B.
      given_params: whether the call passed its own parameters.
    """

    tree: kernels.Tree
    args: dict[str, Tensor | None]
    params: Tensor
    lead: tuple[int, ...]
    given_params: bool = False

    def tensor(self, name: str) -> Tensor:
        """The flattened argument `name`, which was given."""
        x = self.args[name]
        assert x is not None, name
        return x


def prepare(
    model: Model, named: Mapping[str, tuple[Any, tuple[int, ...]]], params: Any = None
) -> Prepared:
    """Check and flatten the arguments `named` (name -> (value or None, core shape)) and
    `params` (..., 10 nbody + 3 nv) of a call on `model`."""
    if params is not None:
        named = {**named, "params": (params, (10 * model.nbody + 3 * model.nv,))}
    _check_real(named)
    dtype, device = _dtype_and_device(named)
    tensors = {
        name: None if x is None else _as_tensor(name, x, core, dtype, device)
        for name, (x, core) in named.items()
    }
    leads = {
        name: x.shape[: x.ndim - len(named[name][1])]
        for name, x in tensors.items()
        if x is not None
    }
    lead = _broadcast(leads)
    flat = {
        name: None if x is None else _flatten(name, x, lead, named[name][1])
        for name, x in tensors.items()
    }
    t = kernels.tree(model, dtype, device)
    given = flat.pop("params", None)
    params_used = t.params[None] if given is None else given
    return Prepared(t, flat, params_used, lead, given_params=given is not None)


def _broadcast(leads: Mapping[str, tuple[int, ...]]) -> tuple[int, ...]:
    """The leading shape that the arguments' leading shapes `leads` broadcast to; equal shapes,
    the common case, without torch.broadcast_shapes (a third of a call's Python overhead)."""
    shapes = list(leads.values())
    if all(shape == shapes[0] for shape in shapes):
        return tuple(shapes[0])
    try:
        return tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        listed = ", ".join(f"{name} {tuple(shape)}" for name, shape in leads.items())
        raise InputError(f"leading (batch) dimensions do not broadcast: {listed}") from None


def prepare_states(model: Model, **named: Any) -> tuple[Prepared, list[Tensor]]:
    """`prepare` of the joint positions ``q`` (..., nq) and velocity-like arguments (..., nv)
    `named`, and their flattened tensors in that order."""
    sizes = {name: (x, (model.nq if name == "q" else model.nv,)) for name, x in named.items()}
    prepared = prepare(model, sizes)
    return prepared, [prepared.tensor(name) for name in named]


def finish(
    out: Tensor,
    prepared: Prepared,
    core: tuple[int, ...],
    failure: Exception | None = None,
    recompute: Callable[[], Tensor] | None = None,
) -> Tensor:
    """`out` (B, *core) reshaped to (*lead, *core). When it holds a non-finite value: the
    result of `recompute` instead, if given (a slower path that handles every input); and when
    that holds one too, an `InputError` naming the first non-finite argument, else `failure`
    (by default an `InputError` saying that the arguments are too large). Unchecked where
    there are no values to check (`_unchecked`)."""
    if _unchecked(out):
        return out.reshape(*prepared.lead, *core)
    finite = all_finite(out)
    if not finite and recompute is not None:
        out = recompute()
        finite = all_finite(out)
    if not finite:
        check_finite(prepared)
        given = [name for name, x in prepared.args.items() if x is not None]
        raise failure or overflow_error([*given, *(["params"] if prepared.given_params else [])])
    return out.reshape(*prepared.lead, *core)


def all_finite(x: Tensor) -> bool:
    """Whether every entry of `x` is finite. A sum is finite where every term is (NaN or
    infinite otherwise, or past the dtype's range), so one reduction answers, and the entries are
    looked at one by one only when the sum is not finite: torch.isfinite alone is four passes
    over `x` and two temporaries its size."""
    x = x.detach()
    return bool(torch.isfinite(x.sum())) or bool(torch.isfinite(x).all())


def _unchecked(out: Tensor) -> bool:
    """Whether `out` holds no values to check: torch.func transforms (vmap, grad ...) or
    torch.compile trace the call (their tracing cannot branch on values), or it lies on the
    meta device (shapes alone)."""
    return fused.functorch_active() or torch.compiler.is_compiling() or out.is_meta


def constant_like(reference: Tensor, x: Any) -> Tensor:
    """The model's numpy array `x` as a tensor of `reference`'s dtype and device: a copy (the
    model's arrays are read-only, which a tensor sharing their memory would not be), but under
    torch.compile, where numpy arrays are traced as tensors, without copying one."""
    if torch.compiler.is_compiling():
        return torch.as_tensor(x, dtype=reference.dtype, device=reference.device)
    return torch.tensor(x, dtype=reference.dtype, device=reference.device)


def check_finite(prepared: Prepared) -> None:
    """`InputError` naming the first argument that holds a non-finite value, if one does
    (arguments without values to check aside, `_unchecked`)."""
    for name, x in [*prepared.args.items(), ("params", prepared.params)]:
        if x is not None and not _unchecked(x) and not all_finite(x):
            raise InputError(f"{name} holds a non-finite value (NaN or inf)")


def _check_real(named: Mapping[str, tuple[Any, tuple[int, ...]]]) -> None:
    """`InputError` naming the first tensor or numpy array of `named` that holds no real
    numbers: complex numbers, or booleans (a mask passed by mistake, not zeros and ones)."""
    for name, (x, _) in named.items():
        if (isinstance(x, Tensor) and (x.is_complex() or x.dtype == torch.bool)) or (
            isinstance(x, np.ndarray) and x.dtype.kind not in REAL_KINDS
        ):
            raise InputError(f"{name} must hold real numbers, got dtype {x.dtype}")


def _dtype_and_device(named: Mapping[str, tuple[Any, tuple[int, ...]]]) -> tuple[Any, Any]:
    """The call's dtype, the floating dtypes of its tensors promoted as torch promotes them (the
    default floating dtype when they all hold integers), and the first tensor's device."""
    tensors = [x for x, _ in named.values() if isinstance(x, Tensor)]
    floating = [t.dtype for t in tensors if t.is_floating_point()]
    dtype = functools.reduce(torch.promote_types, floating) if floating else None
    dtype = dtype or torch.get_default_dtype()
    if dtype not in (torch.float32, torch.float64):
        raise InputError(f"tensors must be float32 or float64, got {dtype}")
    return dtype, tensors[0].device


def _as_tensor(name: str, x: Any, core: tuple[int, ...], dtype: Any, device: Any) -> Tensor:
    if isinstance(x, Tensor) and x.device != device:
        raise InputError(f"{name} is on {x.device}, the other tensors on {device}")
    try:
        tensor = torch.as_tensor(x, dtype=dtype, device=device)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise InputError(f"{name} must be an array of numbers: {exc}") from None
    if tensor.ndim < len(core) or tuple(tensor.shape[tensor.ndim - len(core) :]) != core:
        expected = ", ".join(["..."] + [str(n) for n in core])
        raise InputError(f"{name} must have shape ({expected}), got {tuple(tensor.shape)}")
    return tensor


def _flatten(name: str, x: Tensor, lead: tuple[int, ...], core: tuple[int, ...]) -> Tensor:
    """x as (B, *core), or (1, *core) for a per-model argument without leading dimensions."""
    if name in _PER_MODEL and x.ndim == len(core):
        return x.reshape(1, *core)
    return x.expand(*lead, *core).reshape(math.prod(lead), *core)


def call(
    kernel: str,
    model: Model,
    named: Mapping[str, tuple[Any, tuple[int, ...]]],
    params: Any,
    core: tuple[int, ...],
    failure: Exception | None = None,
) -> Tensor:
    """The result (*lead, *core) of ``invdyn.kernels.torch.<kernel>(tree, *args, params)`` on the
    arguments `named` (in the kernel's order) and `params`, checked by `finish`."""
    prepared = prepare(model, named, params)
    if kernel in _ROOT_FRAME:
        check_finite(prepared)

    def torch_path() -> Tensor:
        out: Tensor = getattr(kernels, kernel)(
            prepared.tree, *prepared.args.values(), prepared.params
        )
        return out

    if kernel == "rnea" and fused.applies(model, prepared.tensor("q"), prepared.args["f_ext"]):
        # the fused kernel gives NaN for joint angles beyond its sine's range: those calls are
        # recomputed by the torch path
        q, v, a = (prepared.tensor(name) for name in ("q", "v", "a"))
        out = fused.rnea(prepared.tree, model, q, v, a, prepared.params, prepared.given_params)
        return finish(out, prepared, core, failure, recompute=torch_path)
    return finish(torch_path(), prepared, core, failure)
