"""Velocities and accelerations from measured signals, by zero-phase filtering.

Identification needs accelerations, which sensors rarely give: they come from differentiating
measured positions or velocities, which amplifies noise. The measured signal is low-pass
filtered forwards and backwards (a Butterworth filter run twice, no phase lag, as Gautier and
Khalil recommend), then differentiated by forward differences: the acceleration of sample t is
the change of velocity to sample t + 1, the one that sample t's action (held until the next
sample) produces; with semi-implicit Euler integration and no noise it is exact. The torques
go through the same filter, so that both sides of the linear model lose the same frequencies.
The choice is a `Filter`, recorded with every result.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import check_count, check_positive
from invdyn.errors import InputError

Float = NDArray[np.float64]


@dataclasses.dataclass(frozen=True)
class Filter:
    """A zero-phase Butterworth low-pass filter.

    Attributes:
      cutoff: cut-off frequency in Hz, below half the sampling rate; None for no filtering.
      order: order of the filter (run twice, so the magnitude response is squared).
    """

    cutoff: float | None = 10.0
    order: int = 4

    def __post_init__(self) -> None:
        if self.cutoff is not None:
            object.__setattr__(self, "cutoff", check_positive("cutoff", self.cutoff))
        object.__setattr__(self, "order", check_count("order", self.order))

    def apply(self, x: Float, fps: float) -> Float:
        """(T, n) signal `x` sampled at `fps` Hz, filtered forwards and backwards."""
        if self.cutoff is None:
            return np.asarray(x, dtype=np.float64)
        if self.cutoff >= 0.5 * fps:
            raise InputError(
                f"cutoff: {self.cutoff:g} Hz is not below half the sampling rate {fps:g} Hz"
            )
        from scipy.signal import butter, sosfiltfilt

        sos = butter(self.order, self.cutoff, fs=fps, output="sos")
        # sosfiltfilt pads by reflection; a signal shorter than its padding is filtered unpadded
        padding = min(3 * (2 * len(sos) + 1), len(x) - 1)
        return np.asarray(sosfiltfilt(sos, x, axis=0, padlen=padding), dtype=np.float64)


def velocity_and_acceleration(v: Float, fps: float, filtering: Filter) -> tuple[Float, Float]:
    """Filtered velocities and accelerations of the samples but the last, from measured
    velocities.

    Args:
      v: (T, nv) measured joint velocities, one row per sample at `fps` Hz, T >= 3.
      fps: sampling rate in Hz.
      filtering: the zero-phase filter applied to v.

    Returns:
      The (T - 1, nv) filtered velocities of samples 0 .. T - 2 and their (T - 1, nv)
      accelerations, ``(v[t + 1] - v[t]) * fps`` of the filtered v.
    """
    fps = check_positive("fps", fps)
    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 2 or len(v) < 3:
        raise InputError(f"v must have shape (T, nv) with T >= 3, got {v.shape}")
    smooth = filtering.apply(v, fps)
    return smooth[:-1], np.diff(smooth, axis=0) * fps
