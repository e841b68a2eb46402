"""Error measures shared by identification and the learned models."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Float = NDArray[np.float64]

# a target counts as constant, its normalised error undefined (NaN), where its variance is at
# most this fraction of its mean square: what rounding leaves of a constant (float32's is
# 1e-14), whatever its units
CONSTANT_RELATIVE_VARIANCE = 1e-12


def varies(target: Float) -> NDArray[np.bool_]:
    """(n,) whether each column of the (N, n) `target` varies beyond rounding (see
    `CONSTANT_RELATIVE_VARIANCE`)."""
    target = np.asarray(target, dtype=np.float64)
    variance = target.var(axis=0)
    return (variance > 0.0) & (variance > CONSTANT_RELATIVE_VARIANCE * np.mean(target**2, axis=0))


def normalised_mse(prediction: Float, target: Float) -> Float:
    """(n,) mean squared error of each column over the target's variance: 0 is exact, 1 is
    no better than the target's mean. NaN for columns whose target is constant (`varies`).

    Args:
      prediction: (N, n) predicted values.
      target: (N, n) true values.
    """
    mse = np.mean((prediction - target) ** 2, axis=0)
    variance = target.var(axis=0)
    moving = varies(target)
    return np.where(moving, mse / np.where(moving, variance, 1.0), np.nan)
