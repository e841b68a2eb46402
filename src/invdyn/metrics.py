"""Error measures shared by identification and the learned models."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

Float = NDArray[np.float64]

# a target counts as constant, its normalised error undefined (NaN), where its variance is at
# most this fraction of its mean square: what rounding leaves of a constant (float32's is
# 1e-14), whatever its units
CONSTANT_RELATIVE_VARIANCE = 1e-12
# why scores of a single sample are NaN, for the warnings that say so
ONE_SAMPLE = (
    "R^2 and nMSE, which compare errors with the spread of the actions, are undefined (NaN)"
)


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


#: a normalised error at or below which a prediction counts as exact (R^2 of 0.999999): below
#: it, ratios between errors measure rounding and filtering, not the models
NEGLIGIBLE_NMSE = 1e-6


def worse_than(
    names: Sequence[str], errors: Float, baseline: Float, factor: float = 1.0
) -> list[str]:
    """The `names` whose entry of the normalised `errors` is above `factor` times that of
    `baseline` (each (n,)) and above `NEGLIGIBLE_NMSE` (a NaN, an undefined error, is never
    above)."""
    return [
        name
        for name, error, base in zip(names, errors, baseline, strict=True)
        if error > max(factor * base, NEGLIGIBLE_NMSE)
    ]


@dataclasses.dataclass(frozen=True, eq=False)
class Metrics:
    """Accuracy of one predictor on the evaluated windows.

    Attributes:
      r2: (n_action,) coefficient of determination per action dimension (NaN where the
        target is constant).
      nmse: (n_action,) mean squared error over the target's variance (NaN likewise).
      mae: (n_action,) mean absolute error, in the action's units.
      r2_mean: mean of `r2` over the dimensions whose target varies.
      nmse_mean: mean of `nmse` likewise.
      mae_mean: mean of `mae` over all dimensions.
    """

    r2: Float
    nmse: Float
    mae: Float
    r2_mean: float
    nmse_mean: float
    mae_mean: float

    @classmethod
    def of(cls, prediction: Float, target: Float) -> Metrics:
        """The metrics of (N, n) predictions of (N, n) targets."""
        mae = np.mean(np.abs(prediction - target), axis=0)
        nmse = normalised_mse(prediction, target)
        moving = varies(target)
        r2 = 1.0 - nmse
        return cls(
            r2=r2,
            nmse=nmse,
            mae=mae,
            r2_mean=float(r2[moving].mean()) if moving.any() else math.nan,
            nmse_mean=float(nmse[moving].mean()) if moving.any() else math.nan,
            mae_mean=float(mae.mean()),
        )

    def to_dict(self, names: Sequence[str]) -> dict[str, Any]:
        """The means and, under ``per_dimension``, each dimension's values by action name."""
        return {
            "r2_mean": self.r2_mean,
            "nmse_mean": self.nmse_mean,
            "mae_mean": self.mae_mean,
            "per_dimension": {
                name: {"r2": float(r2), "nmse": float(nmse), "mae": float(mae)}
                for name, r2, nmse, mae in zip(names, self.r2, self.nmse, self.mae, strict=True)
            },
        }
