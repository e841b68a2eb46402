"""``invdyn follow``: drive the simulation along a recorded episode with a trained model
(`invdyn.learn.goals.follow_episode`)."""

from __future__ import annotations

import argparse

from invdyn.cli.options import Commands, add_json, command, needs
from invdyn.cli.output import print_table, write_json_option

STATE_ERROR = (
    "the norm of the difference from the recorded state, over every entry of the state "
    "alike (positions and velocities in their own units)"
)
"""What a run's state error is."""


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "follow",
        run,
        extras=needs("learn", "sim"),
        uses_torch=lambda args: True,
        help="drive the simulation along a recorded episode's states with a trained model",
        description="At every step ask the model for the action from the simulated state to "
        "a desired state it can reach: the episode's reference velocity plus --position-gain "
        "times the position error, and the position a constant acceleration to that velocity "
        "leads to (the recorded next state itself does not follow from the simulated state "
        "once the system is off the reference, and a model asked for it answers with large, "
        "wrong actions). Compare the states reached with replaying the recorded actions "
        "open-loop (where the dataset has actions: a dataset of states alone is followed "
        "too) and with the physics oracle asked for the same desired state. --payload "
        "(robots), --mass-error and --damping make the simulated plant differ from the "
        "recording, which open-loop replay cannot correct. A model of "
        "one camera's frames follows goal frames instead (Gymnasium datasets with video): "
        "frames of the states a world model that knows the episode would predict from the "
        "simulated state, or with --recorded-goals the episode's own frames.",
    )
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="run or checkpoint directory")
    parser.add_argument("dataset", metavar="DATASET", help="LeRobot v3 dataset directory")
    parser.add_argument("--episode", type=int, default=0, help="the episode to follow (0)")
    parser.add_argument("--seconds", type=float, help="follow this long (default: all of it)")
    parser.add_argument(
        "--payload",
        metavar="KG",
        type=float,
        help="robots: an unmodelled end-effector load (default: none)",
    )
    parser.add_argument(
        "--mass-error",
        metavar="E",
        type=float,
        default=0.0,
        help="the simulated masses and inertias are (1 + E) times the recorded ones (default: 0)",
    )
    parser.add_argument(
        "--damping",
        metavar="D",
        type=float,
        default=0.0,
        help="viscous friction the recording did not have, added at every dof (default: 0)",
    )
    parser.add_argument(
        "--position-gain",
        metavar="RATE",
        type=float,
        help="rate (1/s) at which the desired states ask a position error back (default: "
        "invdyn.learn.follow.POSITION_GAIN, 10)",
    )
    parser.add_argument(
        "--recorded-goals",
        action="store_true",
        help="models of frames: the goal frames are the episode's own, not replanned",
    )
    add_json(parser, "write the results here (-: to stdout, the rest to stderr)")


def run(args: argparse.Namespace) -> int:
    from invdyn.learn.follow import FollowConfig
    from invdyn.learn.goals import GoalResult, follow_episode

    gain = {} if args.position_gain is None else {"position_gain": args.position_gain}
    config = FollowConfig(
        checkpoint=args.checkpoint,
        dataset=args.dataset,
        episode=args.episode,
        seconds=args.seconds,
        payload=args.payload,
        mass_error=args.mass_error,
        damping=args.damping,
        recorded_goals=args.recorded_goals,
        **gain,
    )
    result = follow_episode(config)
    final = result.final_errors
    if isinstance(result, GoalResult):
        goals = "recorded" if args.recorded_goals else "replanned"
        print(
            f"{result.source}, episode {result.episode}: {result.steps} steps, {goals} goal frames"
        )
        print_table(
            ["run", "final body error (m)", "largest body error (m)"],
            [[name, f"{final[name]:.4g}", f"{result.errors[name].max():.4g}"] for name in final],
        )
    else:
        print(f"{result.source}, episode {result.episode}: {result.steps} steps")
        mean = result.mean_errors
        print_table(
            ["run", "final state error", "mean state error"],
            [[name, f"{final[name]:.4g}", f"{mean[name]:.4g}"] for name in final],
        )
        print(f"state error: {STATE_ERROR}")
        print(f"oracle: {result.oracle_note}")
    for path in write_json_option(args, result.to_dict()):
        print(f"wrote {path}")
    return 0
