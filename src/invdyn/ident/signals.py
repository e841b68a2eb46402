"""Velocities and accelerations from measured signals, by zero-phase filtering.

Identification needs accelerations, which sensors rarely give: they come from differentiating
measured positions or velocities, which amplifies noise. The measured signal is low-pass
filtered forwards and backwards (a Butterworth filter run twice, no phase lag, as Gautier and
Khalil recommend), then differentiated by forward differences: the acceleration of sample t is
the change of velocity to sample t + 1, the one that sample t's action (held until the next
sample) produces. That action balances the dynamics over the whole frame, not at its start:
positions and velocities are taken where in the frame the held torque's mean is balanced
(`frame_share`), the middle for a continuous plant, the start when each frame is one step of
semi-implicit Euler integration (which, with no noise, is then exact). The torques go through
the same filter, so that both sides of the linear model lose the same frequencies. The choice
is a `Filter`, recorded with every result.
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
            object.__setattr__(self, "cutoff", check_positive("cutoff (--cutoff)", self.cutoff))
        object.__setattr__(self, "order", check_count("order", self.order))

    def apply(self, x: Float, fps: float) -> Float:
        """(T, n) signal `x` sampled at `fps` Hz, filtered forwards and backwards."""
        if self.cutoff is None:
            return np.asarray(x, dtype=np.float64)
        if self.cutoff >= 0.5 * fps:
            raise InputError(
                f"cutoff: {self.cutoff:g} Hz is not below {fps / 2:g} Hz, half the sampling rate "
                f"of {fps:g} Hz"
            )
        from scipy.signal import butter, sosfiltfilt

        sos = butter(self.order, self.cutoff, fs=fps, output="sos")
        # sosfiltfilt pads by reflection; a signal shorter than its padding is filtered unpadded
        padding = min(3 * (2 * len(sos) + 1), len(x) - 1)
        return np.asarray(sosfiltfilt(sos, x, axis=0, padlen=padding), dtype=np.float64)


def frame_share(fps: float, timestep: float | None) -> float:
    """Where in each frame, as a share of its period ``1 / fps``, the dynamics that the frame's
    held torque balances are to be evaluated.

    A torque held over a frame of a plant integrated by semi-implicit Euler in steps of
    `timestep` (MuJoCo's Euler and implicit integrators, whose joint damping acts on each
    step's end velocity) balances the mean over the frame's steps of the forces at each step's
    start, positions and velocities at ``t, t + h, ..., t + T - h`` (mean ``t + (T - h) / 2``;
    the damping's ``t + h, ..., t + T`` differ by ``h`` times the acceleration, as armature
    ``h`` times the damping would). Evaluated at the frame's start instead, the gravity torque
    lags by ``(T - h) / 2``: a force proportional to the velocity that a fit takes for viscous
    and Coulomb friction.

    Args:
      fps: sampling rate in Hz.
      timestep: the plant's integration step in seconds, of which ``1 / fps`` is a whole
        number; None for a continuous plant (a real one).

    Returns:
      ``(1 - timestep * fps) / 2``: 0 when every frame is one step, 1/2 for a continuous plant.
    """
    fps = check_positive("fps", fps)
    if timestep is None:
        return 0.5
    steps = round(1.0 / (check_positive("timestep", timestep) * fps))
    if steps < 1:
        raise InputError(f"timestep: {timestep:g} s is longer than the frame period {1 / fps:g} s")
    return 0.5 * (1.0 - 1.0 / steps)


def velocity_and_acceleration(
    v: Float, fps: float, filtering: Filter, share: float = 0.0
) -> tuple[Float, Float]:
    """Filtered velocities and accelerations of the samples but the last, from measured
    velocities.

    Args:
      v: (T, nv) measured joint velocities, one row per sample at `fps` Hz, T >= 3.
      fps: sampling rate in Hz.
      filtering: the zero-phase filter applied to v.
      share: where in each frame the velocities are taken, as a share of its period in
        [0, 1) (`frame_share`): 0 for the sample's own.

    Returns:
      The (T - 1, nv) filtered velocities ``v[t] + share * (v[t + 1] - v[t])`` of samples
      0 .. T - 2 and their (T - 1, nv) accelerations, ``(v[t + 1] - v[t]) * fps`` of the
      filtered v.
    """
    fps = check_positive("fps", fps)
    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 2 or len(v) < 3:
        raise InputError(f"v must have shape (T, nv) with T >= 3, got {v.shape}")
    if not 0.0 <= share < 1.0:
        raise InputError(f"share must be in [0, 1), got {share}")
    smooth = filtering.apply(v, fps)
    change = np.diff(smooth, axis=0)
    return smooth[:-1] + share * change, change * fps
