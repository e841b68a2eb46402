"""Joint trajectories: reference positions, velocities and accelerations at any time.

A trajectory is called as ``q, v, a = trajectory(t)`` with ``t`` a float or an array of times,
and has a ``duration``. Before its start it holds its first point and after ``duration`` its last,
both with zero velocity and acceleration.

A `JointTrajectory` is a smooth curve ``x(t)`` of joint coordinates (angles and displacements,
one per degree of freedom) measured from an origin configuration:
``q(t) = integrate(model, origin, x(t))``, ``v = x'(t)``, ``a = x''(t)``. For revolute and
prismatic joints this is ``q = origin + x``; for a continuous joint ``x`` is the angle turned
from the origin, so the ``(cos, sin)`` pair of ``q`` stays on the circle and a trajectory may
wind more than a turn. Spherical and free joints are refused: their velocity is not the
derivative of a coordinate.

The constructors check the trajectory against the model's finite position limits (less an
optional ``limit_margin``) and its finite, positive velocity limits, sampled at 1 kHz and at
every via point, and raise `InputError` naming the joint, the time and the limit.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
from collections.abc import Iterator
from functools import cached_property
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import check_positive, check_real, not_a_model, repeated
from invdyn.configuration import difference, integrate, neutral
from invdyn.errors import DataError, InputError
from invdyn.model import JointType, Model

Float = NDArray[np.float64]

# limit checks: samples per second, fewest samples, samples evaluated at once
_CHECK_RATE = 1000.0
_CHECK_MIN_SAMPLES = 1001
_CHECK_CHUNK = 50_000


class Trajectory(Protocol):
    """Anything that gives reference ``(q, v, a)`` at a time, such as `JointTrajectory`."""

    @property
    def duration(self) -> float:
        """End time in seconds; the trajectory holds its last point after it."""
        ...

    def __call__(self, t: float | ArrayLike) -> tuple[Float, Float, Float]:
        """(..., nq) positions, (..., nv) velocities and (..., nv) accelerations at times t."""
        ...


class Curve(Protocol):
    """A twice differentiable curve ``x(t)`` in joint coordinates, defined on [start, end]."""

    @property
    def start(self) -> float:
        """First time of the curve."""
        ...

    @property
    def end(self) -> float:
        """Last time of the curve."""
        ...

    def __call__(self, t: Float) -> tuple[Float, Float, Float]:
        """(..., n) x, x' and x'' at (...) times t within [start, end]."""
        ...


@dataclasses.dataclass(frozen=True, eq=False)
class QuinticBlend:
    """Rest-to-rest blend ``x(t) = s(t / duration) delta`` with ``s(τ) = 10τ³ - 15τ⁴ + 6τ⁵``.

    The quintic with zero velocity and acceleration at both ends, which is also the
    minimum-jerk profile (Flash and Hogan 1985).

    Attributes:
      delta: (n,) total displacement.
      duration: time to cover it, in seconds.
    """

    delta: Float
    duration: float

    @property
    def start(self) -> float:
        """The blend starts at t = 0."""
        return 0.0

    @property
    def end(self) -> float:
        """The blend ends at t = duration."""
        return self.duration

    def __call__(self, t: Float) -> tuple[Float, Float, Float]:
        """(..., n) x, x' and x'' at (...) times t within [0, duration]."""
        tau = np.asarray(t) / self.duration
        rest = 1.0 - tau
        # s, ds/dt and d²s/dt² of the quintic 10τ³ - 15τ⁴ + 6τ⁵
        s = tau**3 * (10.0 - 15.0 * tau + 6.0 * tau**2)
        ds = 30.0 * tau**2 * rest**2 / self.duration
        dds = 60.0 * tau * rest * (1.0 - 2.0 * tau) / self.duration**2
        outer = np.multiply.outer
        return outer(s, self.delta), outer(ds, self.delta), outer(dds, self.delta)


@dataclasses.dataclass(frozen=True, eq=False)
class CubicSpline:
    """Piecewise cubic in time: ``x = c0 + c1 u + c2 u² + c3 u³`` on each knot interval.

    On ``[times[k], times[k + 1]]`` the offset is ``u = t - times[k]``.

    Attributes:
      times: (K,) strictly increasing knot times, K >= 2.
      coefficients: (K - 1, 4, n) coefficients c0 to c3 of each interval.
    """

    times: Float
    coefficients: Float

    @classmethod
    def clamped(cls, times: Float, points: Float) -> CubicSpline:
        """The C2 cubic spline through `points` with zero velocity at both ends
        (`scipy.interpolate.CubicSpline` with clamped ends).

        Args:
          times: (K,) strictly increasing knot times, K >= 2.
          points: (K, n) positions at the knots.

        Returns:
          The spline.
        """
        # imported here, not with the module: scipy.interpolate takes longer to import than invdyn
        from scipy.interpolate import CubicSpline as Interpolant

        spline = Interpolant(times, points, axis=0, bc_type="clamped")
        # scipy's (4, K - 1, n) coefficients run from the cubic term down
        coefficients = np.moveaxis(spline.c[::-1], 0, 1)
        return cls(times=times, coefficients=coefficients)

    @property
    def start(self) -> float:
        """Time of the first knot."""
        return float(self.times[0])

    @property
    def end(self) -> float:
        """Time of the last knot."""
        return float(self.times[-1])

    def __call__(self, t: Float) -> tuple[Float, Float, Float]:
        """(..., n) x, x' and x'' at (...) times t within [times[0], times[-1]]."""
        t = np.asarray(t)
        # interval of each time, the last one closed on the right
        last = len(self.times) - 2
        k = np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, last)
        u = (t - self.times[k])[..., None]
        c = self.coefficients[k]
        c0, c1, c2, c3 = c[..., 0, :], c[..., 1, :], c[..., 2, :], c[..., 3, :]
        x = c0 + u * (c1 + u * (c2 + u * c3))
        xd = c1 + u * (2.0 * c2 + 3.0 * u * c3)
        xdd = 2.0 * c2 + 6.0 * u * c3
        return x, xd, xdd


@dataclasses.dataclass(frozen=True, eq=False)
class FourierSeries:
    """Finite Fourier series ``x(t) = sum_l a_l sin(l ω t) + b_l cos(l ω t)``, ``ω = 2π f``.

    Attributes:
      sin_amplitudes: (H, n) amplitudes a_l of the sines of harmonics l = 1..H.
      cos_amplitudes: (H, n) amplitudes b_l of the cosines.
      base_frequency: f, the frequency of the first harmonic in Hz.
      duration: end time in seconds.
    """

    sin_amplitudes: Float
    cos_amplitudes: Float
    base_frequency: float
    duration: float

    @property
    def start(self) -> float:
        """The series starts at t = 0."""
        return 0.0

    @property
    def end(self) -> float:
        """The series ends at t = duration."""
        return self.duration

    def __call__(self, t: Float) -> tuple[Float, Float, Float]:
        """(..., n) x, x' and x'' at (...) times t."""
        harmonics = len(self.sin_amplitudes)
        omega = 2.0 * np.pi * self.base_frequency * np.arange(1, harmonics + 1)
        phase = np.multiply.outer(np.asarray(t), omega)
        sin, cos = np.sin(phase), np.cos(phase)
        a, b = self.sin_amplitudes, self.cos_amplitudes
        # each harmonic differentiates to l ω times its quadrature
        x = sin @ a + cos @ b
        xd = (cos * omega) @ a - (sin * omega) @ b
        xdd = -((sin * omega**2) @ a + (cos * omega**2) @ b)
        return x, xd, xdd


@dataclasses.dataclass(frozen=True, eq=False)
class JointTrajectory:
    """A curve of joint coordinates from an origin: ``q = integrate(model, origin, x(t))``.

    Call it as ``q, v, a = trajectory(t)``. Before the curve's start it holds the first point,
    after ``duration`` the last, both with zero velocity and acceleration.

    Attributes:
      model: the robot; its joints must be revolute, prismatic or continuous.
      origin: (nq,) configuration at which the coordinates are zero.
      curve: the curve ``x(t)`` of the nv joint coordinates; ``curve.end`` is the duration.
    """

    model: Model = dataclasses.field(repr=False)
    origin: Float
    curve: Curve

    def __post_init__(self) -> None:
        _check_joints(self.model)
        origin = finite_array("origin", self.origin, (self.model.nq,), ("nq",))
        origin.setflags(write=False)
        object.__setattr__(self, "origin", origin)
        x = self.curve(np.asarray(self.curve.start))[0]
        if x.shape != (self.model.nv,):
            raise InputError(
                f"curve gives x of shape {x.shape}, expected (nv,) = ({self.model.nv},)"
            )

    @property
    def duration(self) -> float:
        """End time in seconds; the last point holds after it."""
        return self.curve.end

    @cached_property
    def _additive(self) -> bool:
        """Whether ``q = origin + x`` (no continuous joint)."""
        return all(spec.bounded for spec in self.model.jnt_spec)

    def __call__(self, t: float | ArrayLike) -> tuple[Float, Float, Float]:
        """Reference positions, velocities and accelerations at times `t`.

        Args:
          t: (...) times in seconds, a float or an array.

        Returns:
          (..., nq) positions, (..., nv) velocities and (..., nv) accelerations.
        """
        t = _times(t)
        start, end = self.curve.start, self.curve.end
        x, xd, xdd = self.curve(np.clip(t, start, end))
        # outside [start, end] the end points hold still
        outside = (t < start) | (t > end)
        if outside.any():
            xd = np.where(outside[..., None], 0.0, xd)
            xdd = np.where(outside[..., None], 0.0, xdd)
        q = self.origin + x if self._additive else integrate(self.model, self.origin, x)
        return q, xd, xdd


def quintic(
    model: Model,
    q0: ArrayLike,
    q1: ArrayLike,
    duration: float,
    *,
    check_limits: bool = True,
    limit_margin: float = 0.0,
) -> JointTrajectory:
    """Rest-to-rest move from `q0` to `q1`: ``q = q0 ⊕ s(t / T) (q1 ⊖ q0)``, s = 10s³-15s⁴+6s⁵.

    The quintic with zero velocity and acceleration at both ends. Every joint moves
    monotonically, so the position limits are met when `q0` and `q1` meet them; the peak speed
    is ``1.875 |q1 ⊖ q0| / T`` at ``T / 2``. Continuous joints turn the short way.

    Args:
      model: the robot (revolute, prismatic and continuous joints).
      q0: (nq,) start configuration.
      q1: (nq,) end configuration.
      duration: T, the time of the move in seconds, positive.
      check_limits: raise `InputError` if the move leaves the position or velocity limits.
      limit_margin: distance (rad or m) to keep from finite position limits.

    Returns:
      The trajectory, of duration T.
    """
    _check_joints(model)
    q0 = finite_array("q0", q0, (model.nq,), ("nq",))
    q1 = finite_array("q1", q1, (model.nq,), ("nq",))
    duration = check_positive("duration", duration)
    curve = QuinticBlend(delta=difference(model, q0, q1), duration=duration)
    return _checked(JointTrajectory(model, q0, curve), check_limits, limit_margin)


def minimum_jerk(
    model: Model,
    q0: ArrayLike,
    q1: ArrayLike,
    duration: float,
    *,
    check_limits: bool = True,
    limit_margin: float = 0.0,
) -> JointTrajectory:
    """Minimum-jerk move from `q0` to `q1` (Flash and Hogan 1985): the same as `quintic`.

    Among all moves between rest states in time T, the one minimising the integral of the
    squared jerk is the quintic ``10s³ - 15s⁴ + 6s⁵`` of `quintic`.

    Args:
      model: the robot (revolute, prismatic and continuous joints).
      q0: (nq,) start configuration.
      q1: (nq,) end configuration.
      duration: T, the time of the move in seconds, positive.
      check_limits: raise `InputError` if the move leaves the position or velocity limits.
      limit_margin: distance (rad or m) to keep from finite position limits.

    Returns:
      The trajectory, of duration T.
    """
    return quintic(model, q0, q1, duration, check_limits=check_limits, limit_margin=limit_margin)


def via_points(
    model: Model,
    times: ArrayLike,
    points: ArrayLike,
    *,
    check_limits: bool = True,
    limit_margin: float = 0.0,
) -> JointTrajectory:
    """Clamped cubic spline through via points: C2, zero velocity at the first and last point.

    Each joint coordinate is a cubic between consecutive points with continuous velocity and
    acceleration at the points (a natural choice for tracking: the acceleration reference has
    no jumps inside the motion). The acceleration at both ends is generally not zero and drops
    to zero when the trajectory holds still. Continuous joints turn the short way between
    consecutive points; a cubic may overshoot between points, which the limit check catches.

    Args:
      model: the robot (revolute, prismatic and continuous joints).
      times: (K,) strictly increasing times in seconds, K >= 2, times[0] >= 0; the first point
        holds before times[0].
      points: (K, nq) configurations at those times.
      check_limits: raise `InputError` if the spline leaves the position or velocity limits.
      limit_margin: distance (rad or m) to keep from finite position limits.

    Returns:
      The trajectory, of duration times[-1].
    """
    _check_joints(model)
    times = _knot_times(times)
    points = finite_array("points", points, (len(times), model.nq), ("K", "nq"))
    # coordinates from the first point, stepping the short way from point to point
    steps = difference(model, points[:-1], points[1:])
    x = np.concatenate([np.zeros((1, model.nv)), np.cumsum(steps, axis=0)])
    trajectory = JointTrajectory(model, points[0], CubicSpline.clamped(times, x))
    return _checked(trajectory, check_limits, limit_margin)


def fourier(
    model: Model,
    q_mean: ArrayLike,
    sin_amplitudes: ArrayLike,
    cos_amplitudes: ArrayLike | None = None,
    *,
    base_frequency: float,
    duration: float | None = None,
    check_limits: bool = True,
    limit_margin: float = 0.0,
) -> JointTrajectory:
    """Finite Fourier series excitation, as used for identification (Swevers et al. 1997).

    ``q(t) = q_mean ⊕ sum_{l=1..H} (a_l sin(l ω t) + b_l cos(l ω t))`` with ``ω = 2π f``;
    velocity and acceleration are the analytic derivatives. The amplitudes are of positions:
    Swevers' velocity coefficients are ``l ω a_l`` (cosine) and ``-l ω b_l`` (sine). The series
    is periodic with period 1 / f; it holds its end point after `duration`, so its velocity jumps
    there unless the series is at rest at that time.

    Args:
      model: the robot (revolute, prismatic and continuous joints).
      q_mean: (nq,) configuration about which the joints oscillate.
      sin_amplitudes: (H, nv) sine amplitudes a_l (rad or m) of harmonics l = 1..H; (H, nq)
        when the model has no continuous joint.
      cos_amplitudes: (H, nv) cosine amplitudes b_l; None for zeros.
      base_frequency: f, the frequency of the first harmonic in Hz, positive.
      duration: end time in seconds; None for one period, 1 / f.
      check_limits: raise `InputError` if the series leaves the position or velocity limits.
      limit_margin: distance (rad or m) to keep from finite position limits.

    Returns:
      The trajectory.
    """
    _check_joints(model)
    q_mean = finite_array("q_mean", q_mean, (model.nq,), ("nq",))
    sin_amplitudes = finite_array("sin_amplitudes", sin_amplitudes, (None, model.nv), ("H", "nv"))
    if len(sin_amplitudes) == 0:
        raise InputError("sin_amplitudes must hold at least one harmonic, got shape (0, nv)")
    shape = sin_amplitudes.shape
    if cos_amplitudes is None:
        cos_amplitudes = np.zeros(shape)
    cos_amplitudes = finite_array("cos_amplitudes", cos_amplitudes, shape, ("H", "nv"))
    base_frequency = check_positive("base_frequency", base_frequency)
    duration = 1.0 / base_frequency if duration is None else check_positive("duration", duration)
    curve = FourierSeries(sin_amplitudes, cos_amplitudes, base_frequency, duration)
    return _checked(JointTrajectory(model, q_mean, curve), check_limits, limit_margin)


def from_csv(
    model: Model,
    path: str | os.PathLike[str],
    *,
    check_limits: bool = True,
    limit_margin: float = 0.0,
) -> JointTrajectory:
    """Joint positions over time read from a CSV file, through the spline of `via_points`.

    The file has a header ``time,<joint names>`` and one row per sample: the time in seconds
    (strictly increasing, the first >= 0) and the position of every joint of `model` (rad or m;
    the angle for a continuous joint, followed as written: from 3 to -3 it turns 6 rad, where
    `via_points` turns the short way between configurations; ``numpy.unwrap`` makes wrapped
    encoder angles turn the short way). Joint columns are matched by name and may come in any
    order; a column that names no joint, or a joint without a column, is an error. Velocities
    and accelerations come from the clamped cubic spline of `via_points` through the rows.

    Args:
      model: the robot (revolute, prismatic and continuous joints).
      path: the CSV file.
      check_limits: raise `InputError` if the spline leaves the position or velocity limits.
      limit_margin: distance (rad or m) to keep from finite position limits.

    Returns:
      The trajectory, of duration the last time.

    Raises:
      DataError: the file is missing, empty or malformed; the message names the line and
        column at fault.
      InputError: the trajectory leaves the limits (with `check_limits`).
    """
    _check_joints(model)
    times, positions = _read_csv(model, os.fsdecode(path))
    # joint coordinates are positions from the neutral configuration (the angle of a continuous
    # joint from (cos, sin) = (1, 0))
    trajectory = JointTrajectory(model, neutral(model), CubicSpline.clamped(times, positions))
    return _checked(trajectory, check_limits, limit_margin)


def _read_csv(model: Model, source: str) -> tuple[Float, Float]:
    """(K,) times and (K, nv) joint positions in ``v`` order of the CSV file `source`."""
    try:
        with open(source, newline="", encoding="utf-8-sig") as file:
            text = file.read()
    except OSError as error:
        raise DataError(f"{source}: cannot read the file ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise DataError(f"{source}: not a text (UTF-8) CSV file") from None
    # rows with their line numbers, blank lines skipped
    reader = csv.reader(io.StringIO(text))
    rows = [(reader.line_num, row) for row in reader if any(cell.strip() for cell in row)]
    if not rows:
        raise DataError(f"{source}: the file is empty, expected a header 'time,<joint names>'")
    header = [cell.strip() for cell in rows[0][1]]
    columns = _csv_columns(model, source, header)
    if len(rows) < 3:
        raise DataError(f"{source}: needs at least two rows of data, got {len(rows) - 1}")
    values = np.array([_csv_row(source, line, row, header) for line, row in rows[1:]])
    times = values[:, 0]
    _csv_times(source, times, [line for line, _ in rows[1:]])
    return times, values[:, columns]


def _csv_columns(model: Model, source: str, header: list[str]) -> list[int]:
    """Column of each joint of `model` in the CSV `header`, whose first column is 'time'."""
    if header[0] != "time":
        raise DataError(f"{source}: the first column must be 'time', got {header[0]!r}")
    names = header[1:]
    twice = sorted(repeated(names))
    if twice:
        raise DataError(f"{source}: repeated columns {', '.join(map(repr, twice))}")
    unknown = [name for name in names if name not in model.joint_names]
    if unknown:
        raise DataError(
            f"{source}: columns {', '.join(map(repr, unknown))} name no joint of "
            f"{model.name!r} (its joints: {', '.join(model.joint_names)})"
        )
    missing = [name for name in model.joint_names if name not in names]
    if missing:
        raise DataError(f"{source}: no column for joints {', '.join(map(repr, missing))}")
    return [header.index(name) for name in model.joint_names]


def _csv_row(source: str, line: int, row: list[str], header: list[str]) -> list[float]:
    """The finite numbers of one CSV data row, or `DataError` naming the line and column."""
    if len(row) != len(header):
        raise DataError(f"{source}, line {line}: {len(row)} cells, expected {len(header)}")
    values = []
    for name, cell in zip(header, row):
        try:
            value = float(cell)
        except ValueError:
            raise DataError(
                f"{source}, line {line}, column {name!r}: {cell.strip()!r} is not a number"
            ) from None
        if not math.isfinite(value):
            raise DataError(f"{source}, line {line}, column {name!r}: non-finite value {value}")
        values.append(value)
    return values


def _csv_times(source: str, times: Float, lines: list[int]) -> None:
    """`DataError` unless the CSV `times` start at >= 0 and increase strictly."""
    if times[0] < 0.0:
        raise DataError(f"{source}, line {lines[0]}: the first time {times[0]} is negative")
    steps = np.diff(times)
    if np.any(steps <= 0.0):
        k = int(np.argmax(steps <= 0.0)) + 1
        raise DataError(
            f"{source}, line {lines[k]}: time {times[k]} does not increase from the previous "
            f"row's {times[k - 1]}; times must increase strictly"
        )


def _checked(trajectory: JointTrajectory, check: bool, margin: float) -> JointTrajectory:
    """`trajectory`, after checking it against the model's limits when `check` is set."""
    margin = check_real("limit_margin", margin, minimum=0.0)
    if check:
        _enforce_limits(trajectory, margin)
    return trajectory


def _enforce_limits(trajectory: JointTrajectory, margin: float) -> None:
    """`InputError` naming the first joint, time and limit that `trajectory` violates.

    Position limits are the model's finite ones, narrowed by `margin`; velocity limits are the
    finite positive ones (zero reads as unknown, as some URDFs write it).
    """
    model = trajectory.model
    lower, upper = model.q_lower + margin, model.q_upper - margin
    speed = np.where(model.dof_velocity_limit > 0.0, model.dof_velocity_limit, np.inf)
    if not (np.isfinite(lower).any() or np.isfinite(upper).any() or np.isfinite(speed).any()):
        return
    for t in _check_times(trajectory.curve):
        q, v, _ = trajectory(t)
        checks = [(q < lower, q, lower, "below"), (q > upper, q, upper, "above")]
        checks.append((np.abs(v) > speed, v, speed, "speed"))
        # the earliest sample at fault, over all checks
        faults = []
        for bad, values, bounds, side in checks:
            hits = np.argwhere(bad)
            if len(hits):
                i, k = hits[0]
                faults.append((int(i), int(k), float(values[i, k]), float(bounds[k]), side))
        if faults:
            i, k, value, bound, side = min(faults)
            raise InputError(_limit_message(model, float(t[i]), value, k, bound, side, margin))


# how a limit violation's message says to skip the check
LIMIT_CHECK_HINT = "; pass check_limits=False to skip this check"


def _limit_message(
    model: Model, t: float, value: float, k: int, bound: float, side: str, margin: float
) -> str:
    """The message of a limit violation by coordinate `k` of q, or of v when side is 'speed'."""
    hint = LIMIT_CHECK_HINT
    if side == "speed":
        body = int(model.dof_body[k])
        unit = _unit(model, body)
        return (
            f"joint {model.jnt_name[body]!r} moves at {value:.6g} {unit}/s at t = {t:.6g} s, "
            f"beyond its velocity limit {bound:.6g} {unit}/s; slow the trajectory down{hint}"
        )
    body = int(np.repeat(np.arange(model.nbody), model.jnt_nq)[k])
    unit = _unit(model, body)
    limit = bound - margin if side == "below" else bound + margin
    which = "lower" if side == "below" else "upper"
    kept = f" with limit_margin {margin:g}" if margin else ""
    return (
        f"joint {model.jnt_name[body]!r} reaches {value:.6g} {unit} at t = {t:.6g} s, {side} "
        f"its {which} limit {limit:.6g} {unit}{kept}{hint}"
    )


def _unit(model: Model, body: int) -> str:
    """The unit of the position of the joint of `body`: m for a prismatic one, else rad."""
    return model.dof_units[model.jnt_vadr[body]]


def _check_times(curve: Curve) -> Iterator[Float]:
    """The sorted times at which limits are checked, 1 kHz over the curve and its knots, in
    chunks of about `_CHECK_CHUNK` (a long curve's are never all held)."""
    start, end = curve.start, curve.end
    count = max(_CHECK_MIN_SAMPLES, math.ceil((end - start) * _CHECK_RATE) + 1)
    knots = curve.times if isinstance(curve, CubicSpline) else np.empty(0)
    for first in range(0, count, _CHECK_CHUNK):
        last = min(first + _CHECK_CHUNK, count)
        times = start + (end - start) * np.arange(first, last) / (count - 1)
        # the knots up to the next chunk's first time
        upper = np.inf if last == count else start + (end - start) * last / (count - 1)
        inside = knots[slice(*np.searchsorted(knots, [times[0], upper]))]
        yield np.union1d(times, inside)


def _check_joints(model: Model) -> None:
    """`InputError` unless `model` is a `Model` whose joints trajectories support."""
    if not isinstance(model, Model):
        raise not_a_model(model)
    for name, jtype, spec in zip(model.jnt_name, model.jnt_type, model.jnt_spec, strict=True):
        if not spec.axial:
            raise InputError(
                f"joint {name!r} of {model.name!r} is {JointType(jtype).name.lower()}: joint "
                "trajectories support revolute, prismatic and continuous joints only"
            )


def _times(t: float | ArrayLike) -> Float:
    """`t` as a finite float64 array, or `InputError`."""
    try:
        array = np.asarray(t, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"t must be a time or an array of times, got {t!r}") from None
    if not np.isfinite(array).all():
        raise InputError("t holds a non-finite value (NaN or inf)")
    return array


def _knot_times(times: ArrayLike) -> Float:
    """(K,) strictly increasing times, K >= 2, from 0 on, or `InputError`."""
    times = finite_array("times", times, (None,), ("K",))
    if len(times) < 2:
        raise InputError(f"times must hold at least two times, got {len(times)}")
    if times[0] < 0.0:
        raise InputError(f"times must start at 0 or later, got times[0] = {times[0]}")
    steps = np.diff(times)
    if np.any(steps <= 0.0):
        k = int(np.argmax(steps <= 0.0)) + 1
        raise InputError(
            f"times must increase strictly, got times[{k}] = {times[k]} after {times[k - 1]}"
        )
    return times


def finite_array(
    name: str, x: ArrayLike, shape: tuple[int | None, ...], labels: tuple[str, ...]
) -> Float:
    """`x` as a finite float64 array of `shape` (None for any size), or `InputError`.

    Args:
      name: the argument's name, for the message.
      x: the argument.
      shape: the expected shape; None where any size goes.
      labels: a symbol for each axis, such as ("K", "nq"), for the message.

    Returns:
      A new float64 array.
    """
    expected = f"({', '.join(labels)}{',' if len(labels) == 1 else ''})"
    sizes = [label if n is None else str(n) for n, label in zip(shape, labels)]
    concrete = f"({', '.join(sizes)}{',' if len(sizes) == 1 else ''})"
    if concrete != expected:
        expected = f"{expected} = {concrete}"
    try:
        array = np.asarray(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be an array of numbers of shape {expected}") from None
    if array.dtype.kind not in "biuf":
        raise InputError(f"{name} must be an array of numbers of shape {expected}")
    array = np.array(array, dtype=np.float64)
    matches = (n is None or n == m for n, m in zip(shape, array.shape))
    if array.ndim != len(shape) or not all(matches):
        raise InputError(f"{name} must have shape {expected}, got {array.shape}")
    if not np.isfinite(array).all():
        raise InputError(f"{name} holds a non-finite value (NaN or inf)")
    return array
