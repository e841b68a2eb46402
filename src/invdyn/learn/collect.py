"""Datasets recorded in simulation, as ``invdyn collect`` makes them: episodes of an invdyn robot
or a Gymnasium MuJoCo environment (`invdyn.sim.collect`), optionally rendered by cameras
(`invdyn.sim.render`), written as a LeRobot v3 dataset (`invdyn.learn.datasets`).

`collect_dataset` checks everything a collection could fail on before simulating: the output
path, options that do not apply to the source, the cameras and the frame size. Rendered
episodes are kept in ``<out>.rendered`` until the dataset is written, so that a collection
that fails, started again, renders only what it lacked.

Needs the ``sim`` and ``learn`` extras.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from invdyn._arrays import check_count, check_positive_option
from invdyn._waits import Say
from invdyn._waits import say as note
from invdyn.errors import InputError, warn
from invdyn.io import load_simulated
from invdyn.sim.collect import Collection
from invdyn.sim.plant import PlantOptions

ROBOT_DURATION = 5.0
"""s, a robot episode's duration unless the configuration sets one."""
ROBOT_RATE = 100.0
"""Hz, a robot's records and control steps per second unless the configuration sets them."""
GYM_POLICY = "random"
"""An environment's policy unless the configuration sets one (`invdyn.sim.collect.POLICIES`)."""
FRAME_SIZE = (64, 64)
"""(width, height) of rendered frames unless the configuration sets them."""
ROBOT_OPTIONS = ("duration", "rate", "meshes")
"""The options of `CollectConfig` that apply to robots alone, besides the plant's."""
GYM_OPTIONS = ("steps", "policy")
"""The options of `CollectConfig` that apply to Gymnasium environments alone."""


@dataclasses.dataclass(frozen=True)
class CollectConfig:
    """A collection of ``invdyn collect``. An option given for a source it does not apply to
    (robots, environments, cameras) is refused rather than ignored.

    Attributes:
      source: an invdyn robot (built-in name or .urdf/.xml path) or a Gymnasium environment
        id (``HalfCheetah-v5``).
      out: the dataset's folder.
      episodes: how many.
      seed: seeds every episode.
      duration: robot episodes: seconds; None for `ROBOT_DURATION`.
      rate: robot episodes: records and control steps per second; None for `ROBOT_RATE`.
      steps: environment episodes: steps; None for the environment's limit.
      policy: environment episodes: a policy of `invdyn.sim.collect.POLICIES`; None for
        `GYM_POLICY`.
      cameras: render these cameras into the dataset's videos (`invdyn.sim.render`).
      meshes: robot episodes: render the URDF's collision meshes rather than a stick figure.
      size: (width, height) of rendered frames, even; None for `FRAME_SIZE`.
      plant: robot episodes: how the simulated plant differs from the model.
      workers: processes that simulate and render episodes in parallel.
      overwrite: replace an existing dataset.
      progress: show progress bars.
    """

    source: str
    out: Path
    episodes: int = 10
    seed: int = 0
    duration: float | None = None
    rate: float | None = None
    steps: int | None = None
    policy: str | None = None
    cameras: tuple[str, ...] = ()
    meshes: bool = False
    size: tuple[int, int] | None = None
    plant: PlantOptions = dataclasses.field(default_factory=PlantOptions)
    workers: int = 1
    overwrite: bool = False
    progress: bool = True


@dataclasses.dataclass(frozen=True, eq=False)
class Collected:
    """A collection written.

    Attributes:
      collection: the episodes and their names, rate and source.
      path: the dataset written.
      step_limit: environment episodes: the environment's step limit; None for robots.
      ended_early: environment episodes that the environment terminated before
        `step_limit`.
    """

    collection: Collection
    path: Path
    step_limit: int | None
    ended_early: int


def collect_dataset(config: CollectConfig, *, say: Say | None = None) -> Collected:
    """Simulate `config.source` and write its episodes as a LeRobot v3 dataset.

    Args:
      config: the collection.
      say: called with each line to show a person as the work goes (rendered episodes reused
        from an earlier run); None says nothing.

    Returns:
      The collection and where it was written.

    Raises:
      InputError: an option that does not apply to the source or out of range, an unknown
        camera, before anything is simulated.
      FileExistsError: `config.out` holds something other than a dataset to overwrite.
    """
    from invdyn.learn.datasets import check_size, check_target
    from invdyn.sim.collect import MIN_STEPS, collect_gym, collect_robot

    # an occupied out is refused before the simulation, not after it
    check_target(Path(config.out), overwrite=config.overwrite)
    gym = is_gym_id(config.source)
    if gym:
        _refuse(config, [*ROBOT_OPTIONS, *config.plant.given()], "a Gymnasium environment")
    else:
        _refuse(config, GYM_OPTIONS, "an invdyn robot")
    for option, given in (("--size", config.size is not None), ("--meshes", config.meshes)):
        if given and not config.cameras:
            raise InputError(f"{option} applies to rendered frames: pass --camera too")
    check_count("--episodes", config.episodes)
    duration = ROBOT_DURATION if config.duration is None else config.duration
    rate = ROBOT_RATE if config.rate is None else config.rate
    check_positive_option("--duration", duration)
    check_positive_option("--rate", rate)
    size = check_size(FRAME_SIZE if config.size is None else config.size)
    robot = None if gym else load_simulated(config.source, floating_base=False)
    if robot is not None and load_simulated(config.source).floating_base:
        warn(f"{robot.name}: its floating base is fixed to the world (collect drives fixed-base "
             "robots); the state is the joints' alone")  # fmt: skip
    out = Path(config.out).absolute()
    cache = out.with_name(out.name + ".rendered")
    scene = _scene(config, robot, cache) if config.cameras else None
    if robot is None:
        if config.steps is not None and config.steps < MIN_STEPS:
            raise InputError(f"--steps must be an integer >= {MIN_STEPS}, got {config.steps}")
        collection = collect_gym(
            config.source,
            episodes=config.episodes,
            steps_per_episode=config.steps,
            policy=config.policy or GYM_POLICY,  # type: ignore[arg-type]
            seed=config.seed,
            workers=config.workers,
            progress=config.progress,
        )
    else:
        collection = collect_robot(
            robot,
            episodes=config.episodes,
            duration=duration,
            control_rate=rate,
            seed=config.seed,
            plant=config.plant.plant(robot),
            workers=config.workers,
            progress=config.progress,
        )
    if scene is None:
        from invdyn.learn.datasets import write_collection

        path = write_collection(collection, config.out, overwrite=config.overwrite)
    else:
        path = _write_rendered(config, collection, (scene, size), cache, say)
    limit = collection.metadata.get("max_episode_steps") if robot is None else None
    lengths = [len(episode) for episode in collection.episodes]
    ended = sum(length - 1 < limit for length in lengths) if limit else 0
    return Collected(collection, path, limit, ended)


def is_gym_id(source: str) -> bool:
    """Whether `source` names a Gymnasium environment (``Name-vN``) rather than a robot."""
    stem, _, version = source.rpartition("-v")
    return bool(stem) and version.isdigit() and not Path(source).suffix


def _refuse(config: CollectConfig, names: list[str] | tuple[str, ...], source: str) -> None:
    """`InputError` naming the options of `names` that `config` gives (not None, False or 0,
    its plant's included) for a source they do not apply to, `source` saying what it is ("an
    invdyn robot")."""
    fields = {**dataclasses.asdict(config.plant), **dataclasses.asdict(config)}
    given = ["--" + name.replace("_", "-") for name in names if fields[name]]
    if given:
        what = "not an option" if len(given) == 1 else "not options"
        raise InputError(f"{', '.join(given)}: {what} of {source} ({config.source})")


def _scene(config: CollectConfig, robot: Any, cache: Path) -> Any:
    """The MuJoCo scene that renders the cameras, the cameras and the cache of rendered
    episodes checked before the collection, not after it."""
    from invdyn.learn.datasets import check_camera
    from invdyn.sim.render import camera_ids
    from invdyn.sim.scene import robot_scene, scene_for

    if robot is None:
        scene = scene_for(f"gym:{config.source}")
    else:
        scene = robot_scene(robot, meshes=config.meshes)
    camera_ids(scene, config.cameras)
    for camera in config.cameras:
        check_camera(camera)
    if cache.exists() and not cache.is_dir():
        raise InputError(f"{cache} is a file; collect keeps the rendered episodes there")
    return scene


def _write_rendered(
    config: CollectConfig,
    collection: Collection,
    view: tuple[Any, tuple[int, int]],
    cache: Path,
    say: Say | None,
) -> Path:
    """Write `collection` with its episodes rendered as they are written, in the scene and
    at the (width, height) of `view`, each shard kept in `cache` until the dataset is
    written."""
    from invdyn.learn.datasets import stream_videos, write_collection
    from invdyn.sim.render import cached_shards, remove_cache, render_collection

    earlier = cached_shards(cache)
    if earlier and say is not None:
        say(
            f"{cache} holds {earlier} shards rendered by an earlier run: those of the same "
            "episodes, cameras and size are reused"
        )
    scene, (width, height) = view
    rendered = render_collection(
        collection,
        cameras=list(config.cameras),
        width=width,
        height=height,
        scene=scene,
        workers=config.workers,
        progress=config.progress,
        cache=cache,
    )
    videos = stream_videos(rendered, len(collection.episodes))
    try:
        path = write_collection(collection, config.out, overwrite=config.overwrite, videos=videos)
    except BaseException:
        if cached_shards(cache):
            note(
                f"the episodes rendered so far stay in {cache}; the same command, run again, "
                "reuses them"
            )
        raise
    remove_cache(cache)
    return path
