"""Optimised excitation trajectories for identification (Swevers, Ganseman et al. 1997).

An excitation is a finite Fourier series per joint, ``x(t) = sum_l a_l sin(l w t) + b_l cos(l w
t)`` about the middle of the joint's range, periodic, so that the data can be averaged over
periods. Its coefficients minimise the condition number of the base regressor stacked over one
period, so that noise on the torques reaches the identified base parameters as little as it
can. The limits hold by construction: each joint's series is scaled down until the bounds on
its position, velocity and acceleration (the sums over harmonics of ``|c_l| (l w)^k``, which
no sample can exceed) fit within the joint's range (less a margin), its velocity limit and an
acceleration limit. The condition number is minimised by Adam through the differentiable torch
regressor (`invdyn.joint_torque_regressor` on tensors) from several random starts.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from invdyn._arrays import check_count, check_positive, check_real
from invdyn.configuration import neutral
from invdyn.control.trajectories import JointTrajectory, fourier
from invdyn.errors import InputError
from invdyn.ident.parameters import base_parameters
from invdyn.model import Model
from invdyn.regressor import joint_torque_regressor

Float = NDArray[np.float64]


@dataclasses.dataclass(frozen=True)
class ExcitationSettings:
    """The excitation's shape and its search.

    Attributes:
      harmonics: harmonics per joint, H >= 1.
      base_frequency: frequency of the first harmonic in Hz; the period is its inverse.
      samples: regressor samples over one period.
      max_acceleration: bound on every joint's acceleration, rad/s^2 or m/s^2.
      limit_margin: share of each finite position range kept free at both ends, in [0, 0.5).
      starts: random starting points of the search.
      iterations: Adam steps from each start.
      learning_rate: Adam's step size, in units of the coefficients before scaling.
    """

    harmonics: int = 5
    base_frequency: float = 0.1
    samples: int = 200
    max_acceleration: float = 10.0
    limit_margin: float = 0.05
    starts: int = 4
    iterations: int = 150
    learning_rate: float = 0.05

    def __post_init__(self) -> None:
        for name in ("harmonics", "samples", "starts", "iterations"):
            check_count(name, getattr(self, name))
        for name in ("base_frequency", "max_acceleration", "learning_rate"):
            check_positive(name, getattr(self, name))
        margin = check_real("limit_margin", self.limit_margin, minimum=0.0)
        if margin >= 0.5:
            raise InputError(f"limit_margin must be below 0.5, got {margin}")


@dataclasses.dataclass(frozen=True)
class Excitation:
    """An optimised excitation.

    Attributes:
      trajectory: one period of the series, to track (`invdyn.control`).
      condition: condition number of the base regressor stacked over the period.
      initial_condition: the best condition number among the random starts, before the search.
    """

    trajectory: JointTrajectory
    condition: float
    initial_condition: float


def optimise_excitation(
    model: Model,
    settings: ExcitationSettings | None = None,
    *,
    rng: int | np.random.Generator = 0,
    progress: bool = False,
) -> Excitation:
    """A Fourier excitation of `model` whose stacked base regressor is well conditioned.

    Args:
      model: the robot (revolute, prismatic and continuous joints).
      settings: the series and its search; default `ExcitationSettings()`.
      rng: seed or generator of the random starts.
      progress: show a progress bar over the search.

    Returns:
      The trajectory and its condition number.

    Raises:
      InputError: joints other than revolute, prismatic and continuous.
    """
    import torch

    settings = settings or ExcitationSettings()
    if not all(spec.axial for spec in model.jnt_spec):
        raise InputError(
            f"{model.name}: excitations move revolute, prismatic and continuous joints only"
        )
    rng = np.random.default_rng(rng)
    base = base_parameters(model, rng=rng)
    centre, bound = _ranges(model, settings)
    times = np.arange(settings.samples) / (settings.samples * settings.base_frequency)
    omega = 2.0 * math.pi * settings.base_frequency * np.arange(1, settings.harmonics + 1)
    series = _Series(torch.tensor(times), torch.tensor(omega), torch.tensor(bound))
    columns = torch.tensor(base.independent)
    origin = torch.tensor(centre)

    def condition(coefficients: Any) -> Any:
        x, xd, xdd = series(coefficients)
        q = _configuration(model, origin, x, torch)
        regressor = joint_torque_regressor(model, q, xd, xdd)[..., columns]
        singular = torch.linalg.svdvals(regressor.reshape(-1, len(columns)))
        return torch.log(singular[0] / singular[-1])

    best, best_value, initial = None, math.inf, math.inf
    bar = tqdm(total=settings.starts * settings.iterations, disable=not progress, unit="step")
    for _ in range(settings.starts):
        start = rng.normal(size=(2, settings.harmonics, model.nv))
        coefficients = torch.tensor(start, requires_grad=True)
        with torch.no_grad():
            initial = min(initial, float(condition(coefficients)))
        optimiser = torch.optim.Adam([coefficients], lr=settings.learning_rate)
        for _ in range(settings.iterations):
            value = condition(coefficients)
            if not math.isfinite(value.item()):
                break
            if value.item() < best_value:
                best_value, best = value.item(), coefficients.detach().clone()
            optimiser.zero_grad()
            value.backward()
            optimiser.step()
            bar.update(1)
    bar.close()
    if best is None:
        raise InputError(
            f"{model.name}: no excitation excites every base parameter (the regressor stays "
            "rank deficient); check the joint limits"
        )
    sines, cosines = (c.numpy() for c in series.scaled(best))
    trajectory = fourier(
        model,
        _configuration(model, centre, np.zeros(model.nv), np),
        sines,
        cosines,
        base_frequency=settings.base_frequency,
        check_limits=True,
    )
    return Excitation(trajectory, math.exp(best_value), math.exp(initial))


class _Series:
    """Fourier series of raw coefficients (2, H, nv), each joint's scaled into its bounds."""

    def __init__(self, times: Any, omega: Any, bound: Any) -> None:
        self.times, self.omega, self.bound = times, omega, bound

    def scaled(self, coefficients: Any) -> tuple[Any, Any]:
        """Sine and cosine amplitudes (H, nv), each joint's peak position, velocity and
        acceleration bound (by the sums of |c_l| (l w)^k) within its limits."""
        import torch

        radius = torch.sqrt(coefficients[0] ** 2 + coefficients[1] ** 2 + 1e-30)
        peaks = torch.stack([(self.omega[:, None] ** k * radius).sum(0) for k in range(3)])
        scale = torch.min(self.bound / peaks, dim=0).values
        return coefficients[0] * scale, coefficients[1] * scale

    def __call__(self, coefficients: Any) -> tuple[Any, Any, Any]:
        """(T, nv) positions, velocities and accelerations of the series at the sample times."""
        import torch

        sines, cosines = self.scaled(coefficients)
        phase = self.times[:, None] * self.omega[None, :]
        sin, cos = torch.sin(phase), torch.cos(phase)
        x = sin @ sines + cos @ cosines
        xd = (cos * self.omega) @ sines - (sin * self.omega) @ cosines
        xdd = -(sin * self.omega**2) @ sines - (cos * self.omega**2) @ cosines
        return x, xd, xdd


def _ranges(model: Model, settings: ExcitationSettings) -> tuple[Float, Float]:
    """(nv,) centre of each joint's motion and (3, nv) bounds on its position amplitude,
    velocity and acceleration."""
    centre = np.zeros(model.nv)
    bound = np.empty((3, model.nv))
    for i, spec in enumerate(model.jnt_spec):
        k, d = int(model.jnt_qadr[i]), int(model.jnt_vadr[i])
        low, high = float(model.q_lower[k]), float(model.q_upper[k])
        if spec.bounded and math.isfinite(low) and math.isfinite(high):
            if not high > low:
                raise InputError(
                    f"{model.name}: joint {model.jnt_name[i]!r} has no range to move in "
                    f"([{low:g}, {high:g}]); an excitation cannot move it"
                )
            centre[d] = 0.5 * (low + high)
            bound[0, d] = (0.5 - settings.limit_margin) * (high - low)
        else:
            bound[0, d] = math.pi
        speed = float(model.dof_velocity_limit[d])
        bound[1, d] = speed if math.isfinite(speed) and speed > 0 else math.inf
        bound[2, d] = settings.max_acceleration
    return centre, bound


def _configuration(model: Model, centre: Any, x: Any, xp: Any) -> Any:
    """(..., nq) configurations of joint coordinates ``centre + x`` (..., nv), numpy or torch:
    a continuous joint's angle as (cos, sin)."""
    angles = centre + x
    parts = []
    for i, spec in enumerate(model.jnt_spec):
        d = int(model.jnt_vadr[i])
        if spec.direction is not None:
            parts += [xp.cos(angles[..., d]), xp.sin(angles[..., d])]
        else:
            parts.append(angles[..., d])
    if not parts:
        return neutral(model)
    return xp.stack(parts, -1)
