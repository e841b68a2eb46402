"""Plots and reports (matplotlib, loaded only when a plot is drawn)."""

from invdyn.viz.plots import plot_joint_series, save_figure

__all__ = ["plot_joint_series", "save_figure"]
