"""Argument checks shared by the public array functions: shapes, dtypes and finiteness."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from invdyn.errors import InputError
from invdyn.kernels.cpu import OVERFLOW

F64 = np.dtype(np.float64)
# empty: no external forces, for every state of a batch
NO_FORCES = np.zeros((0, 6))
NO_FORCES.setflags(write=False)
# a standard deviation at or below this is taken as no variation at all (`spread`)
SPREAD_FLOOR = 1e-8


def any_tensor(*xs: object) -> bool:
    """Whether any of `xs` is a torch tensor (told apart without importing torch)."""
    return any(type(x).__module__.startswith("torch") for x in xs)


#: numpy dtype kinds that hold real numbers (integers, unsigned, floats): not booleans, which a
#: numeric argument given one holds by mistake (a mask), nor complex numbers or objects
REAL_KINDS = "iuf"


def as_float_array(
    name: str, x: Any, size: int | tuple[int, ...], *, batch: bool = True
) -> np.ndarray:
    """`x`, integers or floats (booleans refused, as a mistake), as a C-contiguous, aligned
    float64 array in the machine's byte order, of shape (..., *size), or of shape `size` alone
    without `batch`; or `InputError` naming it."""
    trailing = (size,) if isinstance(size, int) else size
    if any_tensor(x):
        raise InputError(f"{name}: torch tensors are not accepted here; pass a numpy array")
    try:
        array = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be an array of numbers: {exc}") from None
    if array.dtype.kind not in REAL_KINDS:
        raise InputError(
            f"{name} must be an array of numbers, got {type(x).__name__} of dtype {array.dtype}"
        )
    if array.shape[max(0, array.ndim - len(trailing)) :] != trailing or (
        not batch and array.ndim != len(trailing)
    ):
        expected = ", ".join(["..."] * batch + [str(n) for n in trailing])
        comma = "," if len(trailing) == 1 and not batch else ""
        batched = not batch and array.ndim > len(trailing) and array.shape[-1] == trailing[-1]
        note = " (one for the whole batch with numpy arrays; a batch of them needs tensors)"
        raise InputError(
            f"{name} must have shape ({expected}{comma}), got {array.shape}{note * batched}"
        )
    return np.require(array, dtype=np.float64, requirements=["C", "A"])


def as_finite_array(
    name: str, x: Any, size: int | tuple[int, ...], *, batch: bool = True
) -> np.ndarray:
    """`as_float_array` of `x`, or `InputError` naming it when it holds NaN or inf."""
    array = as_float_array(name, x, size, batch=batch)
    if not np.isfinite(array).all():
        raise InputError(f"{name} holds a non-finite value (NaN or inf)")
    return array


def spread(x: np.ndarray) -> np.ndarray:
    """(...) the standard deviation of (N, ...) samples `x` over N, to normalise them by: 1
    where it is at most `SPREAD_FLOOR`, so that an entry that never varied in `x` is not blown
    up when it varies later."""
    std = np.asarray(x, dtype=np.float64).std(axis=0)
    return np.where(std > SPREAD_FLOOR, std, 1.0)


def hash_arrays(digest: Any, arrays: Iterable[np.ndarray]) -> None:
    """Feed each array's shape and bytes to the `hashlib` object `digest`: arrays of other
    shapes, or split otherwise, never hash alike."""
    for array in arrays:
        digest.update(str(array.shape).encode())
        digest.update(np.ascontiguousarray(array).tobytes())


def batch_shape(named: dict[str, tuple[np.ndarray, int]]) -> tuple[int, ...]:
    """Broadcast leading shape of arrays given as name -> (array, number of trailing axes)."""
    leads = {name: a.shape[: a.ndim - core] for name, (a, core) in named.items()}
    shapes = set(leads.values())
    if len(shapes) == 1:
        return shapes.pop()
    try:
        return tuple(np.broadcast_shapes(*leads.values()))
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in leads.items())
        raise InputError(f"leading (batch) dimensions do not broadcast: {listed}") from None


def flatten(array: np.ndarray, lead: tuple[int, ...], core: int) -> np.ndarray:
    """`array` broadcast to (*lead, *core shape) and reshaped to (B, *core shape).

    The result is C-contiguous and aligned, as the kernels read it, a view of `array` when no
    broadcast or copy is needed.
    """
    core_shape = array.shape[array.ndim - core :]
    flags = array.flags
    if array.shape[: array.ndim - core] == lead and flags.c_contiguous and flags.aligned:
        return array.reshape((math.prod(lead), *core_shape))
    full = np.array(np.broadcast_to(array, (*lead, *core_shape)), order="C")
    return full.reshape((math.prod(lead), *core_shape))


def raise_for_status(status: int, names: tuple[str, ...]) -> None:
    """Turn a kernel status into the `InputError` that names the non-finite argument."""
    if status == 0:
        return
    if status <= len(names):
        raise InputError(f"{names[status - 1]} holds a non-finite value (NaN or inf)")
    if status == OVERFLOW:
        raise overflow_error(names)
    raise InputError(f"kernel failed with status {status}")


def overflow_error(names: Sequence[str]) -> InputError:
    """The error of a result that is not finite although the arguments `names` are."""
    return InputError(
        f"the result overflowed to a non-finite value: {', '.join(names)}, or the model's "
        "masses and inertias, are too large"
    )


def packed(model: Any) -> tuple[np.ndarray, np.ndarray]:
    """The kernel arrays of `model`, or `InputError` when it is not an `invdyn.Model`."""
    try:
        return model.kernel_data
    except AttributeError:
        raise not_a_model(model) from None


def not_a_model(model: Any) -> InputError:
    """The error for a first argument that is not an `invdyn.Model`."""
    return InputError(
        f"model must be an invdyn.Model (see invdyn.load), got {type(model).__name__}"
    )


def check_real(name: str, x: object, *, minimum: float | None = None) -> float:
    """`x` as a finite float (at least `minimum` when given), or `InputError` naming `name`."""
    if isinstance(x, (bool, np.bool_, str, bytes)):
        raise InputError(f"{name} must be a real number, got {x!r}")
    try:
        value = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a real number, got {x!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{name} must be finite, got {value}")
    if minimum is not None and value < minimum:
        raise InputError(f"{name} must be >= {minimum:g}, got {value}")
    return value


def repeated(names: Sequence[Any]) -> list[Any]:
    """The entries that `names` holds more than once, each once, in the order they first
    appear."""
    return [name for name, count in Counter(names).items() if count > 1]


def check_count(name: str, x: object, *, minimum: int = 1) -> int:
    """`x` as an integer >= `minimum` (not a bool), or `InputError` naming `name`."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise InputError(f"{name} must be an integer >= {minimum}, got {x!r}")
    if x < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {x}")
    return int(x)


def plain_number(value: float) -> int | float:
    """`value` as an int when it is a whole number (as LeRobot writes fps and sizes in JSON)."""
    return int(value) if float(value).is_integer() else float(value)


def check_positive(name: str, x: object) -> float:
    """`x` as a finite float > 0, or `InputError` naming `name`."""
    value = check_real(name, x)
    if value <= 0.0:
        raise InputError(f"{name} must be positive, got {value}")
    return value


def check_positive_option(option: str, value: float) -> None:
    """`InputError` naming the command-line `option` unless `value` is a finite number above
    zero."""
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{option} must be a positive number, got {value}")
