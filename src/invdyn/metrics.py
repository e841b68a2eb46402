"""Error measures shared by identification and the learned models."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Float = NDArray[np.float64]

# below this variance a target counts as constant: its normalised error is undefined (NaN)
MIN_VARIANCE = 1e-12


def normalised_mse(prediction: Float, target: Float) -> Float:
    """(n,) mean squared error of each column over the target's variance: 0 is exact, 1 is
    no better than the target's mean. NaN for columns whose target is constant.

    Args:
      prediction: (N, n) predicted values.
      target: (N, n) true values.
    """
    mse = np.mean((prediction - target) ** 2, axis=0)
    variance = target.var(axis=0)
    varies = variance > MIN_VARIANCE
    return np.where(varies, mse / np.where(varies, variance, 1.0), np.nan)
