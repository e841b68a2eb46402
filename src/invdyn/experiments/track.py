"""Tracking runs written to a folder, as ``invdyn track`` makes them: a robot follows a trajectory
in MuJoCo under joint-space controllers (`invdyn.experiments.tracking`); everything is checked
before anything is simulated, and a plot, a CSV log per controller and the metrics are written
as one set.

`run_track` takes a `TrackConfig` and returns a `TrackRun`. The set-up and checks it shares
with the demo (`invdyn.experiments.demo`): `tracked_robot`, `check_trackable`,
`check_run_length`, `announce_the_file_as_plant`, `simulate`, `write_tracking` and
`tracking_metrics`.

Needs the ``sim`` extra (MuJoCo).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from invdyn._arrays import check_positive_option
from invdyn._files import check_output_directory, output_set, remove_stale, write_json
from invdyn._waits import Say, announced
from invdyn.configuration import neutral
from invdyn.control.computed_torque import CONTROLLERS, check_actuated
from invdyn.control.trajectories import LIMIT_CHECK_HINT, Trajectory, from_csv
from invdyn.dynamics import require_regular
from invdyn.errors import InputError, warn
from invdyn.experiments.tracking import DEFAULT_BANDWIDTH, TrackingResult, workspace_motion
from invdyn.io import is_mjcf, load_simulated
from invdyn.model import JointType, Model
from invdyn.sim.plant import Plant, PlantOptions

TRACK_DURATION = 5.0
"""s, the minimum_jerk trajectory's duration unless the configuration sets one (a CSV
trajectory sets its own)."""
MINIMUM_JERK = "minimum_jerk"
"""`TrackConfig.trajectory` for a move across the workspace (`workspace_motion`)."""


@dataclasses.dataclass(frozen=True)
class TrackConfig:
    """A tracking run of ``invdyn track``.

    Attributes:
      robot: built-in name or .urdf/.xml path.
      out: folder for tracking.png, <controller>.csv and metrics.json.
      trajectory: `MINIMUM_JERK` (a rest-to-rest move across the workspace,
        `workspace_motion`) or a CSV file with columns time,<joint names>
        (`invdyn.control.trajectories.from_csv`).
      controllers: keys of `invdyn.control.computed_torque.CONTROLLERS`, run in turn.
      duration: the minimum_jerk move's duration, s; None for `TRACK_DURATION`. A CSV file
        sets its own, and a duration beside one is refused.
      rate: control rate, Hz.
      bandwidth: closed-loop natural frequency of every controller's gains, rad/s.
      plant: how the simulated plant differs from the model.
      fixed_base: fix a floating-base robot's root link to the world.
      limit_check: refuse a CSV trajectory that leaves the joints' position or velocity
        limits.
      progress: show progress bars.
    """

    robot: str
    out: Path = Path("invdyn-track")
    trajectory: str = MINIMUM_JERK
    controllers: tuple[str, ...] = ("computed_torque",)
    duration: float | None = None
    rate: float = 1000.0
    bandwidth: float = DEFAULT_BANDWIDTH
    plant: PlantOptions = dataclasses.field(default_factory=PlantOptions)
    fixed_base: bool = False
    limit_check: bool = True
    progress: bool = True


@dataclasses.dataclass(frozen=True, eq=False)
class TrackRun:
    """What a tracking run did and wrote.

    Attributes:
      model: the controllers' model of the robot.
      results: each controller's run, by name, in the order run.
      metrics: the metrics written to metrics.json (`tracking_metrics`).
      out: the folder written.
      written: the names of the files written in `out`.
    """

    model: Model
    results: dict[str, TrackingResult]
    metrics: dict[str, Any]
    out: Path
    written: tuple[str, ...]


def run_track(config: TrackConfig, *, say: Say | None = None) -> TrackRun:
    """Check, simulate and write a tracking run (see the module docstring).

    The logs of controllers that an earlier run in the same folder wrote and this one leaves
    out are removed (they would pass for this run's); files that no run wrote stay.

    Args:
      config: the run.
      say: called with each line to show a person before the simulation starts (that an
        MJCF file is simulated as it is written); None says nothing.

    Returns:
      The run.

    Raises:
      InputError: anything that would make the run fail or mislead, before any simulation.
    """
    check_controllers(config.controllers)
    check_output_directory(config.out)
    model, scene = tracked_robot(config.robot, floating_base=False if config.fixed_base else None)
    check_trackable(model, "pass --fixed-base to weld what free joints move to the world")
    announce_the_file_as_plant(scene, config.robot, say)
    check_positive_option("--rate", config.rate)
    check_positive_option("--bandwidth", config.bandwidth)
    trajectory = _trajectory(config, model)
    plant = config.plant.plant(model)
    results = simulate(
        model,
        trajectory,
        config.controllers,
        plant=plant,
        bandwidth=config.bandwidth,
        control_rate=config.rate,
        mj_model=scene,
        progress=config.progress,
    )
    setup = run_setup(config.trajectory, trajectory, plant, config.rate, config.bandwidth)
    metrics = tracking_metrics(model, results, setup)
    earlier = _earlier_controllers(config.out)
    with output_set(config.out) as staged:
        written = write_tracking(model, results, staged)
        write_json(staged / "metrics.json", metrics)
    remove_stale(config.out, [f"{name}.csv" for name in sorted(earlier - set(results))])
    return TrackRun(model, results, metrics, config.out, (*written, "metrics.json"))


def _trajectory(config: TrackConfig, model: Model) -> Trajectory:
    """The reference of `config`: the minimum_jerk move, or its CSV file read and checked."""
    if config.trajectory == MINIMUM_JERK:
        if not config.limit_check:
            raise InputError("--no-limit-check applies to a --trajectory CSV file")
        duration = TRACK_DURATION if config.duration is None else config.duration
        check_positive_option("--duration", duration)
        check_run_length(model, duration, config.rate, len(config.controllers))
        return workspace_motion(model, duration=duration)
    path = config.trajectory
    if config.duration is not None:
        raise InputError(f"--duration applies to the minimum_jerk trajectory; {path} sets its own")
    if not (Path(path).suffix or Path(path).exists()):
        raise InputError(f"--trajectory {path}: neither 'minimum_jerk' nor a CSV file")
    try:
        return from_csv(model, path, check_limits=config.limit_check)
    except InputError as error:
        skip = "; pass --no-limit-check to skip this check"
        message = str(error).replace(LIMIT_CHECK_HINT, skip)
        raise InputError(message if message.startswith(path) else f"{path}: {message}") from None


def check_controllers(names: Sequence[str]) -> None:
    """`InputError` naming the controllers of `names` that `CONTROLLERS` does not have."""
    unknown = [name for name in names if name not in CONTROLLERS]
    if unknown:
        raise InputError(
            f"unknown controller {', '.join(map(repr, unknown))}; expected "
            f"{', '.join(CONTROLLERS)}, a comma-separated list of them, or 'all'"
        )


def tracked_robot(robot: str, *, floating_base: bool | None = None) -> tuple[Model, Any]:
    """The model of `robot` and the MuJoCo model to simulate it in: for an MJCF file, the file
    as it is written (tendons, equality constraints, contacts and springs included), compiled
    once for both, the model with the file's joint damping and friction; None for a plant
    built from the model."""
    from invdyn.io.mjcf import compile_mjcf, from_mujoco

    if not is_mjcf(robot):
        return load_simulated(robot, floating_base=floating_base), None
    scene = compile_mjcf(robot, floating_base=floating_base)
    return from_mujoco(scene, source=robot, friction=True), scene


def check_trackable(model: Model, fixed_base: str) -> None:
    """`InputError` unless joint-space tracking can drive `model`: a fixed base (else the
    error gives the `fixed_base` advice), moving joints and an actuator on each; `ModelError`
    where they move no mass (a singular mass matrix)."""
    free = [
        n for n, t in zip(model.joint_names, model.jnt_type, strict=True) if t == JointType.FREE
    ]
    if model.nv == 6 * len(free):
        moves = f" besides {'its free joint' if len(free) == 1 else 'free joints'}" if free else ""
        raise InputError(f"{model.name} has no moving joints{moves}: there is nothing to track")
    if free:
        what = "a floating base," if model.floating_base else f"a free joint, {free[0]!r},"
        # welding the root leaves a URDF's floating joint below it free; an MJCF file's free
        # joints are all welded
        welds = model.floating_base or is_mjcf(model.source)
        advice = fixed_base if welds else "make it a fixed joint in the description"
        raise InputError(
            f"{model.name} has {what} which joint-space tracking cannot drive; {advice}"
        )
    check_actuated(model)
    require_regular(model, neutral(model), "tracking")


def check_run_length(model: Model, duration: float, rate: float, runs: int) -> None:
    """`InputError`, before anything is planned or simulated, when `runs` closed-loop runs of
    `duration` seconds at `rate` Hz would log more than this machine's memory holds (each
    step's state, reference and torques, in float64)."""
    steps = duration * rate
    needed = runs * steps * 8 * (2 * model.nq + 5 * model.nv + 1)
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if needed > memory:
        raise InputError(
            f"--duration {duration:g} s at {rate:g} Hz is {steps:.3g} control steps, whose logs "
            f"({needed / 2**30:.3g} GiB) exceed this machine's memory ({memory / 2**30:.3g} GiB)"
        )


def announce_the_file_as_plant(scene: Any, robot: str, say: Say | None) -> None:
    """Say so when MuJoCo simulates the robot's own file (`scene`, an MJCF ``MjModel``; None
    for a plant built from the model), and warn when it drives joints with servos, which
    tracking replaces by torques."""
    from invdyn.io.mjcf import servo_joints

    if scene is None:
        return
    if say is not None:
        say(f"the plant is {robot} itself, as MuJoCo compiles it")
    servos = servo_joints(scene)
    if servos:
        warn(
            f"{robot} drives {', '.join(servos)} with actuators whose force depends on the "
            "joints' state (position or velocity servos, dampers, muscles); the controllers' "
            "torques act on the joints directly instead, as ideal motors bounded by the "
            "actuators' forcerange where it is set"
        )


def simulate(
    model: Model,
    trajectory: Trajectory,
    controllers: Sequence[str],
    **options: Any,
) -> dict[str, TrackingResult]:
    """`invdyn.experiments.tracking.compare`, saying what it simulates when it takes a while
    without progress bars."""
    from invdyn.experiments.tracking import compare

    simulating = f"simulating {model.name} under {', '.join(controllers)}"
    with announced(simulating, when=not options.get("progress")):
        return compare(model, trajectory, controllers, **options)


def write_tracking(
    model: Model, results: dict[str, TrackingResult], out: Path, suffix: str = ""
) -> list[str]:
    """The figure and a CSV log per controller, into `out`: the names of the files written."""
    from invdyn.sim import save_csv
    from invdyn.viz.plots import plot_tracking, save_figure

    figure = plot_tracking(
        results,
        labels=list(model.dof_names),
        title=f"{model.name}: tracking in MuJoCo{' with model error' if suffix else ''}",
        colour_order=list(CONTROLLERS),
    )
    save_figure(figure, out / f"tracking{suffix}.png")
    for name, result in results.items():
        save_csv(result.rollout, model, out / f"{name}{suffix}.csv")
    return [f"tracking{suffix}.png", *(f"{name}{suffix}.csv" for name in results)]


def tracking_metrics(
    model: Model, results: dict[str, TrackingResult], setup: dict[str, Any]
) -> dict[str, Any]:
    """JSON metrics: the robot, the run's setup, and each controller's under "controllers",
    however many there are."""
    entries = {name: result.metrics() for name, result in results.items()}
    return {"robot": model.name, "setup": setup, "controllers": entries}


def run_setup(
    name: str, trajectory: Trajectory, plant: Plant, rate: float, bandwidth: float
) -> dict[str, Any]:
    """The run's settings, saved with its metrics: the trajectory's `name` (`MINIMUM_JERK` or
    its file) and duration, the control rate, the bandwidth and the plant's options."""
    return {
        "trajectory": str(name),
        "duration": float(trajectory.duration),
        "control_rate": rate,
        "bandwidth": bandwidth,
        "payload": plant.payload,
        "payload_frame": plant.payload_frame,
        "mass_scale": plant.mass_scale,
        "damping": plant.damping,
        "friction": plant.friction,
        "sensor_noise": plant.sensor_noise,
        "physics_timestep": plant.timestep,
    }


def _earlier_controllers(out: Path) -> set[str]:
    """The controllers whose logs an earlier tracking run wrote in `out`, as its metrics.json
    lists them; none where there is no such file (files of the same names that no run wrote
    are the user's)."""
    try:
        earlier = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    controllers = earlier.get("controllers") if isinstance(earlier, dict) else None
    return set(controllers) & set(CONTROLLERS) if isinstance(controllers, dict) else set()
