"""``invdyn collect``: record transitions in MuJoCo into a LeRobot v3 dataset
(`invdyn.learn.collect`)."""

from __future__ import annotations

import argparse

from invdyn.cli.options import (
    Commands,
    add_no_progress,
    add_out,
    add_plant,
    command,
    frame_size,
    needs,
    plant_options,
)
from invdyn.learn.collect import FRAME_SIZE, GYM_POLICY, ROBOT_DURATION, ROBOT_RATE
from invdyn.sim.collect import MIN_STEPS, POLICIES


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "collect",
        run,
        extras=needs("sim", "learn"),
        help="record transitions in MuJoCo into a LeRobot v3 dataset",
        description="Simulate SOURCE and write its episodes (observation.state, action, "
        "timestamp) as a LeRobot v3 dataset. SOURCE is an invdyn robot (torque control "
        "tracking random excitations with a noisy controller) or a Gymnasium MuJoCo "
        "environment id such as HalfCheetah-v5 (random, noisy, bounded or scripted policy). "
        "Rendered episodes are kept in DIR.rendered until the dataset is written, so that "
        "a killed run, started again, renders only what it lacked.",
    )
    parser.add_argument("source", metavar="SOURCE", help="robot name or path, or a gym env id")
    add_out(parser, "dataset path")
    parser.add_argument(
        "--episodes", metavar="N", type=int, default=10, help="episodes (default: 10)"
    )
    parser.add_argument("--seed", metavar="S", type=int, default=0, help="seed (default: 0)")
    parser.add_argument(
        "--duration",
        metavar="S",
        type=float,
        help=f"robot episodes: seconds ({ROBOT_DURATION:g})",
    )
    parser.add_argument(
        "--rate",
        metavar="HZ",
        type=float,
        help=f"robot episodes: records and control steps per second ({ROBOT_RATE:g})",
    )
    parser.add_argument(
        "--steps", metavar="N", type=int, help="gym episodes: steps (default: the env's limit)"
    )
    parser.add_argument(
        "--policy",
        choices=POLICIES,
        help=f"gym episodes: the policy (default: {GYM_POLICY}; noisy: smooth "
        "random actions; bounded: noisy, kept off joint limits)",
    )
    parser.add_argument(
        "--camera",
        metavar="NAME",
        action="append",
        help="also render this camera into the dataset's videos, repeatable: front, side or "
        "top (added to every scene), for robots hand (follows the hand), for environments "
        "a camera of their own or default (the free camera)",
    )
    parser.add_argument(
        "--meshes",
        action="store_true",
        help="robot episodes: render the URDF's collision meshes (STL, OBJ) rather than a "
        "stick figure",
    )
    parser.add_argument(
        "--size",
        metavar="WxH",
        help="with --camera: rendered frame size in pixels, even numbers (default: "
        f"{FRAME_SIZE[0]}x{FRAME_SIZE[1]})",
    )
    add_plant(parser, prefix="robot episodes: ")
    parser.add_argument(
        "--workers",
        metavar="N",
        type=int,
        default=1,
        help="processes that simulate and render episodes in parallel; the episodes and their "
        "frames do not depend on N (default: 1)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    add_no_progress(parser)


def run(args: argparse.Namespace) -> int:
    from invdyn.learn.collect import CollectConfig, collect_dataset
    from invdyn.learn.datasets import read_info

    config = CollectConfig(
        source=args.source,
        out=args.out,
        episodes=args.episodes,
        seed=args.seed,
        duration=args.duration,
        rate=args.rate,
        steps=args.steps,
        policy=args.policy,
        cameras=tuple(args.camera or ()),
        meshes=args.meshes,
        size=None if args.size is None else frame_size(args.size),
        plant=plant_options(args),
        workers=args.workers,
        overwrite=args.overwrite,
        progress=not args.no_progress,
    )
    collected = collect_dataset(config, say=print)
    collection = collected.collection
    print(f"{collection.source}: {read_info(args.out).summary}")
    if collected.ended_early:
        redrawn = collection.metadata["discarded"]
        again = f"; {redrawn} shorter than {MIN_STEPS} steps were drawn again" if redrawn else ""
        print(
            f"{collected.ended_early} of {len(collection.episodes)} episodes ended before "
            f"{collected.step_limit} steps: the environment terminated them{again}"
        )
    print(f"wrote {collected.path}")
    return 0
