"""Plots of joint quantities along a trajectory, written as image files.

matplotlib is imported inside the functions, and figures are drawn on its Agg canvas without
pyplot, so importing this module is cheap and never changes the caller's matplotlib backend.
Files are written atomically: to a temporary file in the target directory, then renamed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from invdyn._files import atomic_open
from invdyn.errors import InputError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: the widest figure, in inches: a page's width, readable when shown whole
MAX_WIDTH = 16.0
#: the most lines a legend lists beside its axes; more go below the figure, in columns
LEGEND_BESIDE = 16
#: inches below the figure per row of such a legend, and of its columns' width per character
#: of its longest label (beside a handle of `LEGEND_HANDLE` inches)
LEGEND_ROW = 0.16
LEGEND_CHARACTER = 0.06
LEGEND_HANDLE = 0.6
#: joints that a balance plot names, the most loaded (the others are drawn in grey)
MOST_LOADED = 3


def plot_joint_series(
    times: ArrayLike,
    values: ArrayLike,
    *,
    labels: Sequence[str],
    units: Sequence[str],
    quantity: str = "joint effort",
    title: str = "",
) -> Figure:
    """A figure with one labelled line per joint against time, one axis per unit.

    Joints measured in different units (N·m for revolute joints, N for prismatic ones) are drawn
    on separate stacked axes so that neither scale hides the other.

    Args:
      times: (T,) sample times in seconds.
      values: (T, n) one column per joint.
      labels: (n,) joint names for the legend.
      units: (n,) unit of each column, such as ``"N·m"`` or ``"N"``.
      quantity: what the values are, for the axis labels ("joint effort" reads as torque
        in N·m and force in N).
      title: figure title.

    Returns:
      The matplotlib figure, not attached to pyplot.
    """
    from matplotlib.figure import Figure

    times = np.asarray(times, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    if times.ndim != 1 or values.shape[:1] != times.shape or values.ndim != 2:
        raise InputError(
            f"values has shape {values.shape} and times {times.shape}, expected (T, n) and (T,)"
        )
    if not len(labels) == len(units) == values.shape[1]:
        raise InputError(
            f"{values.shape[1]} columns, {len(labels)} labels and {len(units)} units; "
            "expected one of each per column"
        )
    # one axis per unit, in order of first appearance
    groups: dict[str, list[int]] = {}
    for column, unit in enumerate(units):
        groups.setdefault(unit, []).append(column)
    figure = Figure(figsize=(9.0, 3.0 + 2.5 * len(groups)), layout="constrained")
    axes = figure.subplots(len(groups), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (unit, columns) in zip(axes, groups.items(), strict=True):
        for column in columns:
            ax.plot(times, values[:, column], label=labels[column], linewidth=1.2)
        ax.set_ylabel(f"{quantity} [{unit}]")
        ax.grid(True, alpha=0.3)
    _legend(figure, list(axes))
    axes[-1].set_xlabel("time [s]")
    if title:
        figure.suptitle(title)
    return figure


def _legend(figure: Figure, axes: Sequence[Any]) -> None:
    """The legends of `axes`' labelled lines: each beside its axes, or, for more than
    `LEGEND_BESIDE` lines in all (a humanoid's joints), one below the figure in as many columns
    as its width holds, the figure made taller to hold it."""
    found = [ax.get_legend_handles_labels() for ax in axes]
    labels = [label for _, names in found for label in names]
    if len(labels) <= LEGEND_BESIDE:
        for ax in axes:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
        return
    width, height = figure.get_size_inches()
    column = LEGEND_HANDLE + LEGEND_CHARACTER * max(len(label) for label in labels)
    columns = max(1, int(width // column))
    figure.set_size_inches(width, height + LEGEND_ROW * math.ceil(len(labels) / columns))
    figure.legend(
        [handle for handles, _ in found for handle in handles],
        labels,
        loc="outside lower center",
        ncols=columns,
        fontsize="x-small",
        frameon=False,
    )


def save_figure(figure: Figure, path: str | os.PathLike[str], *, dpi: int = 120) -> Path:
    """Write `figure` to `path` atomically; the format follows the suffix (``.png``, ``.svg``...).

    The image goes to a temporary file in the same directory, which then replaces `path`, so a
    reader never sees a half-written file. Missing parent directories are created.

    Args:
      figure: a matplotlib figure.
      path: the file to write.
      dpi: resolution for raster formats.

    Returns:
      The absolute path written.
    """
    path = Path(path).absolute()
    fmt = path.suffix.lstrip(".").lower()
    if not fmt:
        raise InputError(f"{path}: give the image file a suffix such as .png")
    with atomic_open(path, "wb") as stream:
        figure.savefig(stream, format=fmt, dpi=dpi)
    return path


def plot_tracking(
    results: Mapping[str, Any],
    *,
    labels: Sequence[str],
    title: str = "",
    colour_order: Sequence[str] = (),
) -> Figure:
    """Closed-loop tracking runs side by side: one column per controller, and their errors on
    one log scale.

    Rows: reference (dashed) and actual joint positions; tracking error per joint, on one scale
    for every controller; applied torque per joint, on one scale; then a panel across all
    columns with each controller's error norm ``|e(t)|`` on a log scale.

    Args:
      results: controller name -> `invdyn.experiments.tracking.TrackingResult`, in column order.
      labels: (nv,) a name per degree of freedom, for the legend.
      title: figure title.
      colour_order: controllers that keep a colour of their own, the same in every figure
        whichever others it is drawn with (the built-in ones,
        `invdyn.control.computed_torque.CONTROLLERS`): the k-th draws in matplotlib's colour
        ``Ck``; another controller draws in the colour after them by its column.

    Returns:
      The matplotlib figure, not attached to pyplot.
    """
    from matplotlib.figure import Figure

    if not results:
        raise InputError("no tracking results to plot")
    count = len(results)
    figure = Figure(figsize=(3.6 * count + 1.8, 11.0), layout="constrained")
    grid = figure.add_gridspec(4, count, height_ratios=(1.0, 1.0, 1.0, 1.1))
    rows = [[figure.add_subplot(grid[r, c]) for c in range(count)] for r in range(3)]
    summary = figure.add_subplot(grid[3, :])
    for r in (1, 2):
        for ax in rows[r][1:]:
            ax.sharey(rows[r][0])
    for c, (name, result) in enumerate(results.items()):
        run = result.rollout
        position, error, torque = rows[0][c], rows[1][c], rows[2][c]
        for k, label in enumerate(labels):
            (line,) = position.plot(run.time, run.q[:, k], linewidth=1.1, label=label)
            position.plot(run.time, result.q_ref[:, k], "--", color=line.get_color(), linewidth=0.8)
            error.plot(run.time, result.error[:, k], color=line.get_color(), linewidth=1.0)
            torque.plot(run.time, run.tau_applied[:, k], color=line.get_color(), linewidth=1.0)
        position.set_title(f"{name}\nRMS error {result.rms_error:.2e}, max {result.max_error:.2e}")
        norm = np.linalg.norm(result.error, axis=1)
        colour = _controller_colour(name, c, colour_order)
        summary.semilogy(run.time, np.where(norm > 0.0, norm, np.nan), label=name, color=colour)
        for ax in (position, error, torque):
            ax.grid(True, alpha=0.3)
        torque.set_xlabel("time [s]")
    rows[0][0].set_ylabel("position [rad, m]\n(dashed: reference)")
    rows[1][0].set_ylabel("tracking error [rad, m]")
    rows[2][0].set_ylabel("applied effort [N·m, N]")
    _legend(figure, [rows[0][-1]])
    summary.set_xlabel("time [s]")
    summary.set_ylabel("|e(t)| over all joints")
    summary.grid(True, which="both", alpha=0.3)
    summary.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if title:
        figure.suptitle(title)
    return figure


def _controller_colour(name: str, column: int, colour_order: Sequence[str]) -> str:
    """The colour of controller `name`: its own when `colour_order` names it, else by its
    `column`, after those."""
    order = list(colour_order)
    return f"C{order.index(name) if name in order else len(order) + column}"


def plot_predictions(
    times_or_steps: ArrayLike,
    recorded: ArrayLike,
    predicted: ArrayLike,
    *,
    labels: Sequence[str],
    title: str = "",
    baselines: Mapping[str, ArrayLike] | None = None,
    max_axes: int = 12,
    x_label: str = "time [s]",
) -> Figure:
    """Predicted against recorded actions along one episode, one axis per action dimension.

    Each axis draws the recorded action (thick, pale), the model's prediction (solid) and any
    baseline's (dashed: ``linear``, dotted: ``oracle``). With more than `max_axes` dimensions,
    consecutive dimensions share an axis, so that there are at most `max_axes` axes.

    Args:
      times_or_steps: (T,) time in seconds (or step index) of each sample.
      recorded: (T, n) the recorded actions.
      predicted: (T, n) the model's predictions.
      labels: (n,) a name per action dimension.
      title: figure title.
      baselines: name -> (T, n) other predictions to draw, such as ``"linear"`` or ``"oracle"``.
      max_axes: most axes in the figure, >= 1.
      x_label: label of the horizontal axis ("step" for step indices).

    Returns:
      The matplotlib figure, not attached to pyplot.
    """
    from matplotlib.figure import Figure

    x = np.asarray(times_or_steps, dtype=np.float64)
    series = {"recorded": np.asarray(recorded, dtype=np.float64)}
    series["model"] = np.asarray(predicted, dtype=np.float64)
    for name, values in (baselines or {}).items():
        series[name] = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise InputError(f"times_or_steps has shape {x.shape}, expected (T,)")
    for name, values in series.items():
        if values.ndim != 2 or values.shape[0] != x.shape[0]:
            raise InputError(f"{name} has shape {values.shape}, expected ({x.shape[0]}, n)")
        if values.shape[1] != len(labels):
            raise InputError(f"{name} has {values.shape[1]} columns but {len(labels)} labels")
    if isinstance(max_axes, bool) or not isinstance(max_axes, int) or max_axes < 1:
        raise InputError(f"max_axes must be an integer >= 1, got {max_axes!r}")
    n = len(labels)
    per_axis = -(-n // max_axes)
    groups = [list(range(k, min(k + per_axis, n))) for k in range(0, n, per_axis)]
    columns = 1 if len(groups) <= 4 else 2
    rows = -(-len(groups) // columns)
    figure = Figure(figsize=(7.0 * columns + 1.5, 1.2 + 2.0 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, sharex=True, squeeze=False).ravel()
    # one dimension per axis: recorded in black, each predictor in its colour; several: a
    # colour per dimension, recorded thick and pale, the model solid, baselines dashed
    styles = {"model": "-", "linear": "--", "oracle": ":"}
    colours = {"model": "C0", "linear": "C1", "oracle": "C2"}
    for ax, group in zip(axes, groups, strict=False):
        for k, column in enumerate(group):
            single = len(group) == 1
            suffix = "" if single else f" {labels[column]}"
            for i, (name, values) in enumerate(series.items()):
                if name == "recorded":
                    colour, width, alpha, style = ("black" if single else f"C{k}"), 2.0, 0.4, "-"
                else:
                    colour = colours.get(name, f"C{3 + i}") if single else f"C{k}"
                    width, alpha, style = 1.0, 1.0, styles.get(name, "-.")
                ax.plot(
                    x,
                    values[:, column],
                    color=colour,
                    linestyle=style,
                    linewidth=width,
                    alpha=alpha,
                    label=f"{name}{suffix}",
                )
        ax.set_ylabel(", ".join(labels[c] for c in group), fontsize="small")
        ax.grid(True, alpha=0.3)
        if len(group) > 1:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="x-small")
    for ax in axes[len(groups) :]:
        ax.set_visible(False)
    if per_axis == 1:
        axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    for ax in axes[max(len(groups) - columns, 0) : len(groups)]:
        ax.set_xlabel(x_label)
        # above a hidden axes of the last row, a shared x axis has its tick labels off
        ax.xaxis.set_tick_params(labelbottom=True)
    if title:
        figure.suptitle(title)
    return figure


def plot_error_bars(
    labels: Sequence[str],
    errors: Mapping[str, ArrayLike],
    *,
    title: str = "",
    y_label: str = "normalised MSE",
) -> Figure:
    """Errors of several predictors side by side, a group of bars per label, on a log scale.

    Args:
      labels: (n,) a name per group (a joint, an action dimension).
      errors: predictor name -> (n,) its positive errors; NaN leaves a bar out.
      title: figure title.
      y_label: label of the vertical axis.

    Returns:
      The matplotlib figure, not attached to pyplot.
    """
    from matplotlib.figure import Figure

    values = {name: np.asarray(x, dtype=np.float64) for name, x in errors.items()}
    for name, x in values.items():
        if x.shape != (len(labels),):
            raise InputError(f"errors[{name!r}] has shape {x.shape}, expected ({len(labels)},)")
    # wider with more bars, up to a page's width: the bars narrow beyond it
    bars = len(labels) * len(values)
    figure = Figure(figsize=(min(MAX_WIDTH, max(6.0, 0.25 * bars + 2.0)), 4.5))
    ax = figure.subplots()
    width = 0.8 / max(len(values), 1)
    positions = np.arange(len(labels))
    shown = {name: np.where(np.isfinite(x) & (x > 0), x, np.nan) for name, x in values.items()}
    for k, (name, x) in enumerate(shown.items()):
        ax.bar(positions + (k - (len(values) - 1) / 2) * width, x, width, label=name)
    ax.set_xticks(positions, labels, rotation=45, ha="right")
    if any(np.isfinite(x).any() for x in shown.values()):
        ax.set_yscale("log")
    else:
        ax.text(0.5, 0.5, "no finite positive error", ha="center", transform=ax.transAxes)
    ax.set_ylabel(y_label)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(frameon=False)
    if title:
        ax.set_title(title)
    figure.set_layout_engine("constrained")
    return figure


def _most_loaded(axis: Any, time: Any, loads: Any, names: Sequence[str]) -> None:
    """Each column of `loads` (T, n), named by `names`, against `time` (T,): the `MOST_LOADED`
    of largest peak in colour and named in a legend beside the axes, the others thin and grey
    (a humanoid has thirty joints, which no legend or palette tells apart)."""
    peaks = loads.max(axis=0, initial=0.0)
    order = [int(j) for j in np.argsort(-peaks, kind="stable")]
    for j in order[MOST_LOADED:]:
        axis.plot(time, loads[:, j], color="0.75", linewidth=0.6)
    for j in order[:MOST_LOADED]:
        axis.plot(time, loads[:, j], linewidth=1.2, label=names[j])
    if order:
        title = "most loaded" if len(order) > MOST_LOADED else None
        axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", title=title)


def plot_balance(run: Any, title: str) -> Figure:
    """A balance run (`invdyn.experiments.balance.BalanceRun`): the centre of mass against its
    reference on each axis, the feet's normal forces, and each limited joint's torque as a
    share of its limit (each joint's torque for a robot without limits)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10.0, 9.0), layout="constrained")
    axes = figure.subplots(5, 1, sharex=True)
    for k, axis in enumerate("xyz"):
        axes[k].plot(run.time, 100.0 * run.com_reference[:, k], "k--", label="reference")
        axes[k].plot(run.time, 100.0 * run.com[:, k], label="centre of mass")
        axes[k].set_ylabel(f"{axis} (cm)")
        # a still axis spans a millimetre, not the rounding noise of its values
        low, high = axes[k].get_ylim()
        if high - low < 0.1:
            axes[k].set_ylim((low + high) / 2 - 0.05, (low + high) / 2 + 0.05)
    axes[0].legend(loc="upper right")
    forces = run.forces
    for j, label in enumerate(run.labels):
        axes[3].plot(run.time, forces[:, j, 2], label=label)
    axes[3].set_ylabel("normal force (N)")
    # beside the axes: a legend inside them hides the forces of feet with many corners
    axes[3].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    torques = np.abs(run.joint_torques)
    limited = np.isfinite(run.torque_limit)
    if limited.any():
        names = [name for name, bound in zip(run.joints, limited, strict=True) if bound]
        _most_loaded(axes[4], run.time, torques[:, limited] / run.torque_limit[limited], names)
        axes[4].set_ylabel("|torque| / limit")
    else:
        _most_loaded(axes[4], run.time, torques, list(run.joints))
        axes[4].set_ylabel("|torque| (N m), no limits")
    axes[4].set_xlabel("time (s)")
    figure.suptitle(title)
    return figure
