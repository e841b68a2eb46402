"""Plots: what they draw, read back from the figures, and their errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import invdyn
from conftest import load_quietly, requires_erd
from invdyn import InputError
from invdyn.configuration import random_configuration
from invdyn.viz import plot_joint_series, save_figure

pytest.importorskip("matplotlib")


@requires_erd
def test_joint_efforts_are_drawn_on_one_axis_per_unit(tmp_path: Path) -> None:
    """TIAGo's gravity torques along a path: its prismatic torso's force on an axis of its own,
    in N, below the first joint's unit; every line holds its joint's values."""
    model = load_quietly("tiago_no_hand")
    start, end = random_configuration(model, rng=1, shape=2)
    times = np.linspace(0.0, 2.0, 50)
    q = start + (end - start) * (times / times[-1])[:, None]
    efforts = invdyn.gravity(model, q)
    units = model.dof_force_units
    assert set(units) == {"N", "N·m"}
    figure = plot_joint_series(times, efforts, labels=model.dof_names, units=units, title="gravity")
    axes = figure.get_axes()
    order = list(dict.fromkeys(units))
    assert [ax.get_ylabel() for ax in axes] == [f"joint effort [{u}]" for u in order]
    for ax, unit in zip(axes, order, strict=True):
        columns = [k for k, u in enumerate(units) if u == unit]
        lines = ax.get_lines()
        assert [line.get_label() for line in lines] == [model.dof_names[k] for k in columns]
        for line, k in zip(lines, columns, strict=True):
            np.testing.assert_array_equal(line.get_xdata(), times)
            np.testing.assert_array_equal(line.get_ydata(), efforts[:, k])
    assert axes[-1].get_xlabel() == "time [s]"
    assert all(ax.get_legend() is not None for ax in axes) and not figure.legends
    path = save_figure(figure, tmp_path / "plots" / "gravity.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@requires_erd
def test_the_legend_of_a_humanoids_joints_goes_below_the_plots() -> None:
    """TALOS's 44 joints: one legend in columns below the axes, inside the figure, naming every
    joint, rather than a column taller than the figure beside them."""
    model = load_quietly("talos_full")
    q = random_configuration(model, rng=2, shape=30)
    times = np.linspace(0.0, 1.0, 30)
    efforts = invdyn.gravity(model, q)
    figure = plot_joint_series(times, efforts, labels=model.dof_names, units=model.dof_force_units)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()  # lays the figure out
    (legend,) = figure.legends
    assert [text.get_text() for text in legend.get_texts()] == list(model.dof_names)
    assert all(ax.get_legend() is None for ax in figure.get_axes())
    renderer = canvas.get_renderer()
    columns = {round(text.get_window_extent(renderer).x0) for text in legend.get_texts()}
    assert len(columns) > 1
    box = legend.get_window_extent(renderer)
    lowest_axes = min(ax.get_tightbbox(renderer).y0 for ax in figure.get_axes())
    assert 0.0 <= box.y0 and box.y1 <= lowest_axes


def test_bad_series_and_paths_raise_input_error(tmp_path: Path) -> None:
    times, values = np.arange(4.0), np.zeros((4, 2))
    for kwargs, message in [
        ({"values": values[:3]}, r"values has shape \(3, 2\) and times \(4,\)"),
        ({"labels": ["a"]}, "2 columns, 1 labels and 2 units"),
        ({"units": ["N"]}, "2 columns, 2 labels and 1 units"),
    ]:
        arguments = {"values": values, "labels": ["a", "b"], "units": ["N", "N·m"]} | kwargs
        with pytest.raises(InputError, match=message):
            plot_joint_series(times, **arguments)
    figure = plot_joint_series(times, values, labels=["a", "b"], units=["N", "N"])
    assert len(figure.get_axes()) == 1
    with pytest.raises(InputError, match="give the image file a suffix"):
        save_figure(figure, tmp_path / "figure")


def test_a_controller_keeps_its_colour_whichever_others_it_is_drawn_with() -> None:
    """The demo draws every controller, then three of them with model error: each keeps its
    colour in both figures, so that the two read side by side."""
    pytest.importorskip("mujoco")
    from invdyn.control.computed_torque import CONTROLLERS
    from invdyn.control.trajectories import minimum_jerk
    from invdyn.experiments.tracking import track
    from invdyn.viz.plots import plot_tracking

    model = invdyn.load("pendulum")
    trajectory = minimum_jerk(model, [0.0], [0.2], 0.05)
    runs = {name: track(model, trajectory, name) for name in ("pd", "pd_gravity", "feedforward")}

    def colours(names: tuple[str, ...]) -> dict[str, str]:
        figure = plot_tracking(
            {name: runs[name] for name in names},
            labels=model.dof_names,
            colour_order=list(CONTROLLERS),
        )
        summary = figure.get_axes()[-1]
        return {line.get_label(): line.get_color() for line in summary.get_lines()}

    every, some = (
        colours(("pd", "pd_gravity", "feedforward")),
        colours(("pd_gravity", "feedforward")),
    )
    assert len(set(every.values())) == 3
    assert some == {name: every[name] for name in some}
