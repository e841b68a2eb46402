"""Balance runs written to a folder, as ``invdyn wbc`` makes them: a legged robot chosen and
checked, a scenario of `invdyn.experiments.balance` run under whole-body control in MuJoCo, and
its plot and report written.

Needs the ``sim`` and ``control`` extras (MuJoCo, a QP solver).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from invdyn._arrays import check_positive_option
from invdyn._files import check_output_directory, write_json
from invdyn._waits import Say, announced
from invdyn.errors import InputError
from invdyn.experiments.balance import BalanceRun, Scenario, run_balance
from invdyn.io import is_mjcf, load_simulated, names_a_file
from invdyn.model import Model

SCENARIO_OPTIONS = {"amplitude": ("sway", "squat"), "push": ("push",)}
"""The options that only some scenarios take, and those scenarios."""


@dataclasses.dataclass(frozen=True)
class WbcConfig:
    """A balance run of ``invdyn wbc``.

    Attributes:
      robot: built-in name or .urdf/.xml path of a legged robot.
      scenario: one of `invdyn.experiments.balance.SCENARIOS`.
      duration: simulated seconds.
      amplitude: sway: how far either way; squat: half how deep, m; None for the scenario's.
      push: push: its force, N; None for the scenario's.
      feet: frames of point feet; None for those the robot names (`Scenario.feet`).
      soles: frames of flat feet; None for those the robot names (`Scenario.soles`).
      sole: a flat foot's corners in its frame, ``(x0, x1, y0, y1, z)`` m; None for the
        default.
      pose: the configuration to stand in: its name or its (nq,) values; None for the
        robot's standing one (`Scenario.pose`).
      out: folder for wbc.png and report.json.
      progress: show a progress bar.
    """

    robot: str
    scenario: str = "stand"
    duration: float = 10.0
    amplitude: float | None = None
    push: float | None = None
    feet: tuple[str, ...] | None = None
    soles: tuple[str, ...] | None = None
    sole: tuple[float, ...] | None = None
    pose: str | tuple[float, ...] | None = None
    out: Path = Path("invdyn-wbc")
    progress: bool = True


@dataclasses.dataclass(frozen=True, eq=False)
class Wbc:
    """What a balance run did and wrote.

    Attributes:
      model: the robot, on its floating base.
      run: the run and its measures.
      summary: the report written to report.json (`BalanceRun.summary`).
      written: the paths of the plot and the report.
    """

    model: Model
    run: BalanceRun
    summary: dict[str, Any]
    written: tuple[Path, ...]


def run_wbc(config: WbcConfig, *, say: Say | None = None) -> Wbc:
    """Check, simulate and write a balance run.

    Args:
      config: the run.
      say: called with each line to show a person before the simulation (that MuJoCo
        simulates the model of an MJCF file, not the file); None says nothing.

    Returns:
      The run; whether the robot fell, or its QP had no solution, is the run's to say.

    Raises:
      InputError: an option that the scenario does not take or out of range, or a robot that
        does not stand on a floating base, before any simulation.
    """
    from invdyn.viz.plots import plot_balance, save_figure

    check_output_directory(config.out)
    given: dict[str, Any] = {
        name: getattr(config, name)
        for name in SCENARIO_OPTIONS
        if getattr(config, name) is not None
    }
    for name in given:
        if config.scenario not in SCENARIO_OPTIONS[name]:
            raise InputError(
                f"--{name} sets {' and '.join(SCENARIO_OPTIONS[name])}, not {config.scenario}: "
                f"pass --scenario {SCENARIO_OPTIONS[name][0]}"
            )
    if config.sole is not None:
        given["sole"] = config.sole
    check_positive_option("--duration", config.duration)
    if config.amplitude is not None:
        check_positive_option("--amplitude", config.amplitude)
    if config.push is not None and not math.isfinite(config.push):
        raise InputError(f"--push must be a finite force, got {config.push}")
    model = legged_robot(config.robot)
    if Path(config.robot).suffix.lower() == ".xml" and say:
        say(
            f"the plant is MuJoCo built from the model of {config.robot}, with spheres for feet "
            "on a ground: what the model leaves out of the file is not simulated"
        )
    scenario = Scenario(
        name=config.scenario,
        duration=config.duration,
        feet=config.feet,
        soles=config.soles,
        pose=config.pose,
        **given,
    )
    simulating = f"simulating {model.name}: {scenario.name} for {scenario.duration:g} s"
    with announced(simulating, when=not config.progress):
        run = run_balance(model, scenario, progress=config.progress)
    summary = run.summary()
    figure = plot_balance(run, f"{model.name}: {config.scenario}")
    written = (
        save_figure(figure, config.out / "wbc.png"),
        write_json(config.out / "report.json", summary),
    )
    return Wbc(model, run, summary, written)


def legged_robot(robot: str) -> Model:
    """The robot that whole-body control balances: as described where it floats (a built-in
    legged robot, a file with a free joint of its own), else a file's root link on a free
    flyer; `InputError` for a built-in robot that stands fixed (an arm, a hand), or an MJCF
    file without a free joint at its root."""
    model = load_simulated(robot)
    if model.floating_base:
        return model
    if not names_a_file(robot):
        raise InputError(
            f"{robot} is a fixed-base robot; whole-body control balances a legged robot on a "
            f"floating base (run 'invdyn robots' for them; 'invdyn track {robot}' controls it)"
        )
    if is_mjcf(robot):
        # an MJCF file declares its free joints itself; none is added
        raise InputError(
            f"{robot}: no free joint at its root, and whole-body control balances a robot on a "
            "floating base (add <freejoint/> to its root body)"
        )
    return load_simulated(robot, floating_base=True)
