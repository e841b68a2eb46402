"""Trajectories: boundary conditions, derivatives, splines, CSV files, limits and bad input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import invdyn
from conftest import assert_close, requires_erd
from invdyn.configuration import difference, random_configuration
from invdyn.control import (
    CubicSpline,
    JointTrajectory,
    fourier,
    from_csv,
    minimum_jerk,
    quintic,
    via_points,
)
from invdyn.model import Model

BUILT_IN = ["pendulum", "double_pendulum", "planar_2r"]


def finite_differences(trajectory: JointTrajectory, t: np.ndarray, h: float = 1e-5) -> tuple:
    """(v, a) by central differences of q (on the joint manifolds) and of v."""
    q_minus, v_minus, _ = trajectory(t - h)
    q_plus, v_plus, _ = trajectory(t + h)
    v = difference(trajectory.model, q_minus, q_plus) / (2.0 * h)
    return v, (v_plus - v_minus) / (2.0 * h)


def assert_derivatives(trajectory: JointTrajectory, t: np.ndarray) -> None:
    """v and a of `trajectory` equal finite differences of q and v at times `t`."""
    _, v, a = trajectory(t)
    v_fd, a_fd = finite_differences(trajectory, t)
    assert_close(v, v_fd, rtol=1e-7, what="v")
    assert_close(a, a_fd, rtol=1e-6, what="a")


def write_csv(path: Path, names: list[str], rows: np.ndarray | list[list[str]]) -> Path:
    """A CSV file with header ``names`` and the given rows (numbers or raw cells)."""
    if isinstance(rows, np.ndarray):
        np.savetxt(path, rows, delimiter=",", header=",".join(names), comments="")
    else:
        path.write_text("\n".join([",".join(names), *(",".join(row) for row in rows)]) + "\n")
    return path


@pytest.fixture
def planar() -> Model:
    return invdyn.load("planar_2r")


def bounded(model: Model, upper: float) -> Model:
    """`model` with every upper position limit set to `upper` and no velocity limit."""
    return model.replace(
        q_upper=np.full(model.nq, upper), dof_velocity_limit=np.full(model.nv, np.inf)
    )


# quintic and minimum jerk


@pytest.mark.parametrize("name", BUILT_IN)
def test_quintic_boundary_conditions_and_holds(name: str, rng: np.random.Generator) -> None:
    model = invdyn.load(name)
    q0, q1 = rng.uniform(-1, 1, (2, model.nq))
    trajectory = quintic(model, q0, q1, 2.5)
    assert trajectory.duration == 2.5
    for t, q_expected in [(0.0, q0), (2.5, q1), (-1.0, q0), (4.0, q1)]:
        q, v, a = trajectory(t)
        assert q.shape == (model.nq,) and v.shape == a.shape == (model.nv,)
        assert_close(q, q_expected, rtol=1e-14, what=f"q({t})")
        assert_close(v, np.zeros(model.nv), rtol=1e-14, what=f"v({t})")
        assert_close(a, np.zeros(model.nv), rtol=1e-14, what=f"a({t})")
    q, v, a = trajectory(np.array([-1.0, 0.0, 1.25, 2.5, 3.0]))
    assert q.shape == (5, model.nq) and v.shape == a.shape == (5, model.nv)
    assert_close(q[2], (q0 + q1) / 2, rtol=1e-14, what="midpoint")
    assert_close(v[2], 1.875 * (q1 - q0) / 2.5, rtol=1e-13, what="peak speed")


@pytest.mark.parametrize("name", BUILT_IN)
def test_quintic_derivatives_match_finite_differences(name: str, rng: np.random.Generator) -> None:
    model = invdyn.load(name)
    trajectory = quintic(model, *rng.uniform(-1, 1, (2, model.nq)), 1.5)
    assert_derivatives(trajectory, np.linspace(0.01, 1.49, 37))


def test_minimum_jerk_is_the_closed_form_and_the_quintic(
    planar: Model, rng: np.random.Generator
) -> None:
    q0, q1 = rng.uniform(-1, 1, (2, 2))
    t = np.linspace(0.0, 3.0, 31)
    s = t / 3.0
    expected = q0 + np.outer(10 * s**3 - 15 * s**4 + 6 * s**5, q1 - q0)
    q, v, a = minimum_jerk(planar, q0, q1, 3.0)(t)
    assert_close(q, expected, rtol=1e-14, what="q")
    for mine, theirs in zip((q, v, a), quintic(planar, q0, q1, 3.0)(t)):
        np.testing.assert_array_equal(mine, theirs)


@requires_erd
def test_quintic_turns_continuous_joints_the_short_way() -> None:
    model = invdyn.load("double_pendulum_continuous")
    angles0, angles1 = np.array([3.0, 0.5]), np.array([-3.0, 1.5])
    cs = lambda angles: np.stack([np.cos(angles), np.sin(angles)], -1).ravel()  # noqa: E731
    trajectory = quintic(model, cs(angles0), cs(angles1), 1.0)
    q, v, _ = trajectory(np.array([0.0, 0.5, 1.0]))
    assert_close(q[0], cs(angles0), rtol=1e-14, what="start")
    assert_close(q[2], cs(angles1), rtol=1e-14, what="end")
    # joint1 crosses pi: 2 pi - 6 = 0.283 rad, not -6 rad
    assert_close(v[1], 1.875 * np.array([2 * np.pi - 6.0, 1.0]), rtol=1e-12, what="peak speed")
    assert_close(np.linalg.norm(q.reshape(3, 2, 2), axis=-1), np.ones((3, 2)), what="unit")
    assert_derivatives(trajectory, np.linspace(0.02, 0.98, 13))


@requires_erd
def test_quintic_on_panda_within_limits(rng: np.random.Generator) -> None:
    model = invdyn.load("panda")
    q0, q1 = random_configuration(model, rng=rng, shape=2)
    trajectory = quintic(model, q0, q1, 5.0)
    assert_derivatives(trajectory, np.linspace(0.1, 4.9, 9))


# via points


def test_via_points_pass_through_points_and_are_c2(planar: Model, rng: np.random.Generator) -> None:
    times = np.array([0.5, 1.0, 1.7, 2.0, 3.1, 4.0])
    points = rng.uniform(-1, 1, (6, 2))
    trajectory = via_points(planar, times, points)
    assert trajectory.duration == 4.0
    q, v, a = trajectory(times)
    assert_close(q, points, rtol=1e-13, what="q at the points")
    assert_close(v[[0, -1]], np.zeros((2, 2)), rtol=1e-13, what="end velocities")
    # position, velocity and acceleration continuous across the knots
    inner = times[1:-1]
    for left, right, what in zip(trajectory(inner - 1e-9), trajectory(inner + 1e-9), "qva"):
        assert_close(left, right, rtol=1e-6, what=f"{what} across the knots")
    # the first point holds before the first time
    q, v, a = trajectory(np.array([-1.0, 0.0, 0.25]))
    assert_close(q, np.tile(points[0], (3, 1)), rtol=1e-14, what="hold")
    assert not v.any() and not a.any()
    # away from the knots, where the jerk jumps
    t = np.linspace(0.55, 3.95, 41)
    assert_derivatives(trajectory, t[np.abs(t[:, None] - times).min(1) > 1e-3])


def test_clamped_spline_reproduces_a_clamped_cubic() -> None:
    # 3 s^2 - 2 s^3 has zero end slopes, so the clamped spline through any samples is itself
    times = np.array([0.0, 0.3, 1.1, 1.4, 2.0])
    cubic = lambda t: 3 * (t / 2) ** 2 - 2 * (t / 2) ** 3  # noqa: E731
    spline = CubicSpline.clamped(times, cubic(times)[:, None])
    t = np.linspace(0.0, 2.0, 101)
    x, xd, xdd = spline(t)
    assert_close(x[:, 0], cubic(t), rtol=1e-13, what="x")
    assert_close(xd[:, 0], 3 * t / 2 - 3 * t**2 / 4, rtol=1e-12, what="x'")
    assert_close(xdd[:, 0], 1.5 - 1.5 * t, rtol=1e-12, what="x''")


def test_via_points_two_points_is_a_cubic_blend(planar: Model) -> None:
    q, v, _ = via_points(planar, [0.0, 2.0], [[0.0, 1.0], [1.0, -1.0]])(1.0)
    assert_close(q, [0.5, 0.0], rtol=1e-14, what="midpoint")
    assert_close(v, [0.75, -1.5], rtol=1e-14, what="peak speed")


@requires_erd
def test_via_points_with_continuous_joints() -> None:
    model = invdyn.load("double_pendulum_continuous")
    angles = np.array([[0.0, 0.0], [3.0, -1.0], [-3.0, 2.0], [-2.0, 0.0]])
    points = np.stack([np.cos(angles), np.sin(angles)], -1).reshape(4, 4)
    trajectory = via_points(model, [0.0, 1.0, 2.0, 3.0], points)
    assert_close(trajectory(np.array([0.0, 1.0, 2.0, 3.0]))[0], points, what="points")
    assert_derivatives(trajectory, np.linspace(0.05, 2.95, 30))


# Fourier series


@pytest.mark.parametrize("name", BUILT_IN)
def test_fourier_derivatives_and_period(name: str, rng: np.random.Generator) -> None:
    model = invdyn.load(name)
    q_mean = rng.uniform(-0.5, 0.5, model.nq)
    sin, cos = rng.uniform(-0.2, 0.2, (2, 3, model.nv))
    trajectory = fourier(model, q_mean, sin, cos, base_frequency=0.2)
    assert trajectory.duration == pytest.approx(5.0)
    q0 = trajectory(0.0)[0]
    assert_close(q0, q_mean + cos.sum(0), rtol=1e-14, what="q(0)")
    # the one-period end matches the start, position and velocity
    for start, end in zip(trajectory(0.0), trajectory(5.0)):
        assert_close(end, start, rtol=1e-12, what="period")
    assert_derivatives(trajectory, np.linspace(0.01, 4.99, 53))


def test_fourier_closed_form(planar: Model) -> None:
    trajectory = fourier(
        planar, [0.1, 0.2], [[0.3, 0.0]], base_frequency=0.5, duration=10.0, check_limits=False
    )
    t = np.linspace(0.0, 10.0, 21)
    q, v, a = trajectory(t)
    w = np.pi
    assert_close(q[:, 0], 0.1 + 0.3 * np.sin(w * t), rtol=1e-14, what="q")
    assert_close(v[:, 0], 0.3 * w * np.cos(w * t), rtol=1e-14, what="v")
    assert_close(a[:, 0], -0.3 * w**2 * np.sin(w * t), rtol=1e-14, what="a")
    assert_close(q[:, 1], np.full(21, 0.2), rtol=1e-14, what="still joint")


# CSV files


def test_csv_round_trip(planar: Model, tmp_path: Path, rng: np.random.Generator) -> None:
    times = np.array([0.0, 0.4, 1.0, 1.5, 2.5])
    points = rng.uniform(-1, 1, (5, 2))
    # columns in another order than the model's, spaces after the commas, and the byte-order
    # mark that spreadsheet programs write
    path = tmp_path / "traj.csv"
    write_csv(path, ["time", " joint2", "joint1"], np.c_[times, points[:, ::-1]])
    path.write_text("\ufeff" + path.read_text(), encoding="utf-8")
    trajectory = from_csv(planar, path)
    expected = via_points(planar, times, points)
    t = np.linspace(-0.5, 3.0, 71)
    for mine, theirs, what in zip(trajectory(t), expected(t), "qva"):
        assert_close(mine, theirs, rtol=1e-13, what=what)
    assert trajectory.duration == 2.5


@requires_erd
def test_csv_with_continuous_joints_reads_angles(tmp_path: Path) -> None:
    model = invdyn.load("double_pendulum_continuous")
    angles = np.array([[0.0, 0.0], [2.0, 4.0], [7.0, 1.0]])
    path = write_csv(tmp_path / "traj.csv", ["time", "joint1", "joint2"], np.c_[[0, 1, 2], angles])
    q = from_csv(model, str(path))(np.array([0.0, 1.0, 2.0]))[0]
    expected = np.stack([np.cos(angles), np.sin(angles)], -1).reshape(3, 4)
    assert_close(q, expected, rtol=1e-13, what="q")


CSV_HEADER = ["time", "joint1", "joint2"]
BAD_CSV: dict[str, tuple[Callable[[Path], object], str]] = {
    "missing": (lambda path: path, "cannot read the file"),
    "empty": (lambda path: path.write_text(""), "the file is empty"),
    "blank": (lambda path: path.write_text("\n \n"), "the file is empty"),
    "header only": (lambda path: write_csv(path, CSV_HEADER, []), "at least two rows"),
    "one row": (lambda path: write_csv(path, CSV_HEADER, [["0", "0", "0"]]), "at least two rows"),
    "no time": (
        lambda path: write_csv(path, ["t", "joint1", "joint2"], np.zeros((2, 3))),
        "first column must be 'time', got 't'",
    ),
    "unknown column": (
        lambda path: write_csv(path, [*CSV_HEADER, "elbow"], np.zeros((2, 4))),
        "columns 'elbow' name no joint",
    ),
    "missing joint": (
        lambda path: write_csv(path, ["time", "joint1"], np.zeros((2, 2))),
        "no column for joints 'joint2'",
    ),
    "repeated column": (
        lambda path: write_csv(path, [*CSV_HEADER, "joint1"], np.zeros((2, 4))),
        "repeated columns 'joint1'",
    ),
    "non-numeric": (
        lambda path: write_csv(path, CSV_HEADER, [["0", "0", "0"], ["1", "0", "abc"]]),
        "line 3, column 'joint2': 'abc' is not a number",
    ),
    "nan": (
        lambda path: write_csv(path, CSV_HEADER, [["0", "nan", "0"], ["1", "0", "0"]]),
        "line 2, column 'joint1': non-finite value nan",
    ),
    "short row": (
        lambda path: write_csv(path, CSV_HEADER, [["0", "0", "0"], ["1", "0"]]),
        "line 3: 2 cells, expected 3",
    ),
    "non-increasing time": (
        lambda path: write_csv(path, CSV_HEADER, np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0.0]])),
        "line 4: time 1.0 does not increase",
    ),
    "negative time": (
        lambda path: write_csv(path, CSV_HEADER, np.array([[-1, 0, 0], [1, 0, 0.0]])),
        "first time -1.0 is negative",
    ),
    "binary": (lambda path: path.write_bytes(b"\xff\xfe\x00"), "not a text"),
}


@pytest.mark.parametrize("case", BAD_CSV)
def test_bad_csv_raises_data_error(case: str, planar: Model, tmp_path: Path) -> None:
    write, message = BAD_CSV[case]
    path = tmp_path / "traj.csv"
    write(path)
    with pytest.raises(invdyn.DataError, match=message.replace("(", r"\(")) as error:
        from_csv(planar, path)
    assert isinstance(error.value, ValueError)
    assert "traj.csv" in str(error.value)


# limits


def test_position_limit_violation_names_joint_time_and_limit(planar: Model) -> None:
    with pytest.raises(
        invdyn.InputError,
        match=r"joint 'joint2' reaches .* at t = .* s, above "
        r"its upper limit 6\.28319",
    ):
        quintic(planar, [0.0, 0.0], [0.0, 7.0], 10.0)
    with pytest.raises(invdyn.InputError, match=r"joint 'joint1' .* below its lower limit"):
        minimum_jerk(planar, [0.0, 0.0], [-7.0, 0.0], 10.0)


def test_limit_margin_and_opting_out(planar: Model) -> None:
    quintic(planar, [0.0, 0.0], [0.0, 6.2], 10.0)
    with pytest.raises(invdyn.InputError, match="joint 'joint2'.*limit_margin 0.1"):
        quintic(planar, [0.0, 0.0], [0.0, 6.2], 10.0, limit_margin=0.1)
    quintic(planar, [0.0, 0.0], [0.0, 7.0], 10.0, check_limits=False)
    with pytest.raises(invdyn.InputError, match="limit_margin must be >= 0"):
        quintic(planar, [0.0, 0.0], [0.0, 1.0], 10.0, limit_margin=-0.1)


def test_velocity_limit_violation(planar: Model) -> None:
    # peak speed 1.875 * 6 / 0.1 = 112 rad/s against a limit of 20
    speeding = r"joint .joint2. moves at .* rad/s at .* velocity limit 20 rad/s"
    with pytest.raises(invdyn.InputError, match=speeding):
        quintic(planar, [0.0, 0.0], [0.0, 6.0], 0.1)
    quintic(planar, [0.0, 0.0], [0.0, 6.0], 0.1, check_limits=False)


def test_spline_overshoot_between_points_is_caught(planar: Model) -> None:
    model = bounded(planar, 1.0)
    times, points = [0.0, 1.0, 2.0], [[0.0, 0.0], [1.0, 0.0], [1.0, 0.0]]
    # every point is within the limit, the cubic between the last two is not
    trajectory = via_points(model, times, points, check_limits=False)
    assert trajectory(np.linspace(1.0, 2.0, 101))[0][:, 0].max() > 1.01
    with pytest.raises(invdyn.InputError, match=r"joint 'joint1' reaches .* at t = 1\.\d+ s"):
        via_points(model, times, points)


def test_fourier_and_csv_check_limits(planar: Model, tmp_path: Path) -> None:
    model = bounded(planar, 0.5)
    with pytest.raises(invdyn.InputError, match="joint 'joint2'.*upper limit 0.5"):
        fourier(model, [0.0, 0.0], [[0.1, 0.6]], base_frequency=1.0)
    path = write_csv(tmp_path / "traj.csv", CSV_HEADER, np.array([[0, 0, 0], [1, 0.6, 0.0]]))
    with pytest.raises(invdyn.InputError, match="joint 'joint1'.*upper limit 0.5"):
        from_csv(model, path)
    from_csv(model, path, check_limits=False)


@requires_erd
def test_panda_limits_name_the_joint() -> None:
    model = invdyn.load("panda")
    q0 = np.array([0.0, 0.0, 0.0, -1.5, 0.0, 1.5, 0.0, 0.02, 0.02])
    q1 = q0.copy()
    q1[3] = 0.5  # joint 4 stays below -0.0698
    with pytest.raises(invdyn.InputError, match="joint 'panda_joint4'.*upper limit -0.0698"):
        quintic(model, q0, q1, 5.0)


# bad input


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda m: quintic(m, [0.0, np.nan], [0.0, 0.0], 1.0), "q0 holds a non-finite value"),
        (lambda m: quintic(m, [0.0, 0.0], [0.0], 1.0), r"q1 must have shape \(nq,\) = \(2,\)"),
        (lambda m: quintic(m, [0.0, 0.0], ["a", "b"], 1.0), "q1 must be an array of numbers"),
        (lambda m: quintic(m, [0.0, 0.0], [1.0, 0.0], 0.0), "duration must be positive"),
        (lambda m: quintic(m, [0.0, 0.0], [1.0, 0.0], np.inf), "duration must be finite"),
        (lambda m: quintic(m, [0.0, 0.0], [1.0, 0.0], "1"), "duration must be a real number"),
        (lambda m: quintic("planar_2r", [0.0], [1.0], 1.0), "model must be an invdyn.Model"),
        (lambda m: via_points(m, [0.0], [[0.0, 0.0]]), "at least two times"),
        (lambda m: via_points(m, [0.0, 1.0, 1.0], np.zeros((3, 2))), "increase strictly"),
        (lambda m: via_points(m, [-1.0, 1.0], np.zeros((2, 2))), "start at 0 or later"),
        (lambda m: via_points(m, [0.0, 1.0], np.zeros((3, 2))), r"\(K, nq\) = \(2, 2\)"),
        (lambda m: via_points(m, [[0.0, 1.0]], np.zeros((2, 2))), r"times must have shape \(K,\)"),
        (lambda m: via_points(m, [0.0, np.inf], np.zeros((2, 2))), "times holds a non-finite"),
        (lambda m: fourier(m, [0.0, 0.0], np.zeros((2, 3)), base_frequency=1.0), r"\(H, nv\)"),
        (lambda m: fourier(m, [0.0, 0.0], np.zeros((0, 2)), base_frequency=1.0), "one harmonic"),
        (
            lambda m: fourier(m, [0.0, 0.0], np.zeros((1, 2)), np.zeros((2, 2)), base_frequency=1),
            r"cos_amplitudes must have shape \(H, nv\) = \(1, 2\)",
        ),
        (
            lambda m: fourier(m, [0.0, 0.0], np.zeros((1, 2)), base_frequency=-1.0),
            "base_frequency must be positive",
        ),
        (lambda m: quintic(m, [0, 0], [0, 1], 1.0)(np.nan), "t holds a non-finite value"),
        (lambda m: quintic(m, [0, 0], [0, 1], 1.0)("now"), "t must be a time"),
    ],
)
def test_bad_arguments_raise_input_error(
    build: Callable[[Model], object], message: str, planar: Model
) -> None:
    with pytest.raises(invdyn.InputError, match=message):
        build(planar)


def test_free_and_spherical_joints_are_refused() -> None:
    model = invdyn.load("planar_2r", floating_base=True)
    q = np.zeros(model.nq)
    with pytest.raises(invdyn.InputError, match="joint 'root_joint' of 'planar_2r' is free"):
        quintic(model, q, q, 1.0)
    with pytest.raises(invdyn.InputError, match="root_joint"):
        fourier(model, q, np.zeros((1, model.nv)), base_frequency=1.0)


def test_import_invdyn_does_not_import_control() -> None:
    import subprocess
    import sys

    code = "import sys, invdyn; sys.exit('invdyn.control' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
