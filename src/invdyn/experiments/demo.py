"""The demo, ``invdyn demo``: computed torque against PD in MuJoCo, on the exact model and on a
plant with an unmodelled payload and heavier links.

A minimum-jerk move across the workspace (`invdyn.experiments.tracking.workspace_motion`) at
`DEMO_RATE`, every controller at the default bandwidth: first every controller of
`invdyn.control.computed_torque.CONTROLLERS` with the plant the controller's model, then the
three that use the model with a plant that carries `DEMO_PAYLOAD` at the end effector and
links `DEMO_MASS_ERROR` heavier. `run_demo` checks everything first, then writes a plot and a
CSV log per controller and run, and the metrics of both runs, as one set. It uses the Panda
where example-robot-data is installed and `DEMO_FALLBACK` otherwise; nothing is downloaded.

Needs the ``sim`` extra (MuJoCo).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from invdyn._arrays import check_positive_option
from invdyn._files import check_output_directory, output_set, write_json
from invdyn._waits import Say
from invdyn.control.computed_torque import CONTROLLERS
from invdyn.experiments.track import (
    MINIMUM_JERK,
    announce_the_file_as_plant,
    check_run_length,
    check_trackable,
    run_setup,
    simulate,
    tracked_robot,
    tracking_metrics,
    write_tracking,
)
from invdyn.experiments.tracking import DEFAULT_BANDWIDTH, TrackingResult, workspace_motion
from invdyn.io import robots
from invdyn.kinematics import end_effector
from invdyn.model import Model
from invdyn.sim.plant import Plant, warn_of_a_payload_that_cannot_move

DEMO_ROBOT = "panda"
DEMO_FALLBACK = "double_pendulum"
DEMO_PAYLOAD = 2.0
"""kg carried by the demo's perturbed plant at the end effector."""
DEMO_MASS_ERROR = 0.2
"""The demo's perturbed plant has links this much heavier than the model's."""
DEMO_RATE = 1000.0
"""The demo's control rate, Hz."""
MODEL_ERROR_CONTROLLERS = ("pd_gravity", "computed_torque", "feedforward")
"""The controllers run on the perturbed plant: those that use the model."""


@dataclasses.dataclass(frozen=True)
class DemoConfig:
    """The demo's options.

    Attributes:
      robot: built-in name or .urdf/.xml path; None for `DEMO_ROBOT` where example-robot-data
        is installed, else `DEMO_FALLBACK`.
      out: folder for the plots, CSV logs and metrics.json.
      duration: of the move, s.
      progress: show progress bars.
    """

    robot: str | None = None
    out: Path = Path("invdyn-demo")
    duration: float = 5.0
    progress: bool = True


@dataclasses.dataclass(frozen=True, eq=False)
class DemoRun:
    """One of the demo's runs: a plant and the controllers run on it.

    Attributes:
      name: ``"exact"`` (the plant is the controller's model) or ``"payload"``.
      plant: the simulated plant.
      results: each controller's run, by name.
    """

    name: str
    plant: Plant
    results: dict[str, TrackingResult]


@dataclasses.dataclass(frozen=True, eq=False)
class Demo:
    """What the demo did and wrote.

    Attributes:
      model: the controllers' model of the robot.
      runs: the exact run, then the payload run.
      metrics: the metrics written to metrics.json, by run name.
      out: the folder written.
      written: the names of the files written in `out`.
    """

    model: Model
    runs: tuple[DemoRun, ...]
    metrics: dict[str, Any]
    out: Path
    written: tuple[str, ...]


def run_demo(config: DemoConfig, *, say: Say | None = None) -> Demo:
    """Check, simulate and write the demo (see the module docstring).

    Args:
      config: the demo's options.
      say: called with each line to show a person before the simulations start (the robot
        chosen, the move); None says nothing.

    Returns:
      The demo's runs and files.

    Raises:
      InputError: anything that would make the demo fail, before any simulation.
    """
    check_positive_option("--duration", config.duration)
    check_output_directory(config.out)
    name = _robot(config, say)
    model, scene = tracked_robot(name)
    check_trackable(
        model, f"invdyn track {name} --fixed-base welds what free joints move to the world"
    )
    payload = Plant(
        payload=DEMO_PAYLOAD, payload_frame=end_effector(model), mass_scale=1.0 + DEMO_MASS_ERROR
    )
    plans = {"exact": (Plant(), tuple(CONTROLLERS)), "payload": (payload, MODEL_ERROR_CONTROLLERS)}
    check_run_length(model, config.duration, DEMO_RATE, sum(len(c) for _, c in plans.values()))
    announce_the_file_as_plant(scene, name, say)
    warn_of_a_payload_that_cannot_move(model, payload, f"invdyn track {name} --payload-frame")
    trajectory = workspace_motion(model, duration=config.duration)
    if say is not None:
        say(
            f"{model.name}: a {config.duration:g} s minimum-jerk move across the workspace, "
            f"{DEMO_RATE / 1000:g} kHz control, every controller at {DEFAULT_BANDWIDTH:g} rad/s "
            "bandwidth"
        )
    runs, metrics, written = [], {}, []
    with output_set(config.out) as staged:
        for key, (plant, controllers) in plans.items():
            results = simulate(
                model,
                trajectory,
                controllers,
                plant=plant,
                control_rate=DEMO_RATE,
                mj_model=scene,
                progress=config.progress,
            )
            runs.append(DemoRun(key, plant, results))
            written += write_tracking(
                model, results, staged, suffix="" if key == "exact" else "-payload"
            )
            setup = run_setup(MINIMUM_JERK, trajectory, plant, DEMO_RATE, DEFAULT_BANDWIDTH)
            metrics[key] = tracking_metrics(model, results, setup)
        write_json(staged / "metrics.json", metrics)
    return Demo(model, tuple(runs), metrics, config.out, (*written, "metrics.json"))


def _robot(config: DemoConfig, say: Say | None) -> str:
    """The robot the demo runs: the configuration's, else the Panda where it is installed,
    else `DEMO_FALLBACK`, saying why."""
    if config.robot is not None:
        return config.robot
    if robots.is_installed(DEMO_ROBOT):
        return DEMO_ROBOT
    if say is not None:
        say(
            f"example-robot-data is not installed, so the demo uses the {DEMO_FALLBACK} "
            f"(pip install example-robot-data for the {DEMO_ROBOT})"
        )
    return DEMO_FALLBACK
