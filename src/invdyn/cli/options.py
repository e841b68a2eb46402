"""Options that several commands share, declared once: the output folder (``--out``), progress
bars (``--no-progress``), a JSON copy of the results (``--json``) and the simulated plant's
options; and the parsing of option values that are lists or sizes (argument syntax)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from invdyn._arrays import repeated
from invdyn.errors import InputError
from invdyn.sim.plant import Plant, PlantOptions

STANDARD_OUTPUT = Path("/dev/stdout")
"""--json's path for ``-``: standard output then carries the JSON alone."""

Commands = Any
"""The commands of the ``invdyn`` parser (``argparse``'s sub-parsers action)."""
Extras = Callable[[argparse.Namespace], tuple[str, ...]]
"""The optional extras a command needs, as a function of its arguments."""


def command(
    commands: Commands,
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    extras: Extras | None = None,
    uses_torch: Callable[[argparse.Namespace], bool] | None = None,
    **described: str,
) -> argparse.ArgumentParser:
    """Add the command `name`, which `run` runs, to `commands`.

    Args:
      commands: the parser's commands.
      name: the command's name.
      run: parses nothing more: calls the library, prints, returns the exit status.
      extras: the extras it needs (`needs`); None for none.
      uses_torch: whether it runs networks (and so imports PyTorch, announced); None for
        never.
      described: ``help`` and ``description`` of the command.
    """
    parser: argparse.ArgumentParser = commands.add_parser(name, **described)
    parser.set_defaults(
        command=run,
        command_parser=parser,
        extras=extras or needs(),
        uses_torch=uses_torch or (lambda args: False),
    )
    return parser


def needs(*extras: str) -> Extras:
    """The extras a command needs whatever its arguments, as a function of them."""
    return lambda args: extras


def add_out(parser: argparse.ArgumentParser, help: str, *, default: Path | None = None) -> None:
    """``--out DIR``, the command's output folder or dataset; required without a default."""
    parser.add_argument(
        "--out", metavar="DIR", type=path, default=default, required=default is None, help=help
    )


def add_optional_out(parser: argparse.ArgumentParser, help: str) -> None:
    """``--out DIR``, an output folder that the command chooses when it is left out."""
    parser.add_argument("--out", metavar="DIR", type=path, help=help)


def add_no_progress(parser: argparse.ArgumentParser, help: str = "no progress bars") -> None:
    """``--no-progress``: no progress bars (nor where standard error is not a terminal)."""
    parser.add_argument("--no-progress", action="store_true", help=help)


def add_json(
    parser: argparse.ArgumentParser,
    help: str = "also write the metrics here (-: to stdout, the rest to stderr)",
) -> None:
    """``--json PATH``: the results as JSON, also; ``-`` for standard output."""
    parser.add_argument("--json", metavar="PATH", type=json_path, help=help)


def add_plant(parser: argparse.ArgumentParser, *, prefix: str = "") -> None:
    """The simulated plant's options that the robot's model does not know (`plant_options`),
    their help starting with `prefix` ("robot episodes: ")."""
    parser.add_argument(
        "--payload",
        metavar="KG",
        type=float,
        default=0.0,
        help=f"{prefix}unmodelled point mass at the origin of the --payload-frame (default: 0)",
    )
    parser.add_argument(
        "--payload-frame",
        metavar="NAME",
        help=f"{prefix}frame or body at whose origin the payload sits (default: the body at "
        "the end of the longest chain of turning joints, above any fingers; a frame such as "
        "a tool tip puts it further out)",
    )
    parser.add_argument(
        "--mass-error",
        metavar="E",
        type=float,
        default=0.0,
        help=f"{prefix}the plant's link masses and inertias are (1 + E) times the model's "
        "(default: 0)",
    )
    parser.add_argument(
        "--damping",
        metavar="NMS",
        type=float,
        default=0.0,
        help=f"{prefix}unmodelled viscous friction on every joint, N m s/rad, added to an "
        "MJCF file's own (default: 0)",
    )
    parser.add_argument(
        "--friction",
        metavar="NM",
        type=float,
        default=0.0,
        help=f"{prefix}unmodelled Coulomb friction on every joint, N m, added to an MJCF "
        "file's own (default: 0)",
    )
    parser.add_argument(
        "--sensor-noise",
        metavar="STD",
        type=float,
        default=0.0,
        help=f"{prefix}standard deviation of the noise on measured positions (rad) and "
        "velocities (rad/s) (default: 0)",
    )
    parser.add_argument(
        "--timestep",
        metavar="S",
        type=float,
        default=None,
        help=f"{prefix}MuJoCo's physics time step, of which the control period must be a "
        f"whole number (default: {Plant.timestep:g} s, an MJCF file's own <option> "
        "included)",
    )


def plant_options(args: argparse.Namespace) -> PlantOptions:
    """The `PlantOptions` of `add_plant`'s options."""
    return PlantOptions(
        payload=args.payload,
        payload_frame=args.payload_frame,
        mass_error=args.mass_error,
        damping=args.damping,
        friction=args.friction,
        sensor_noise=args.sensor_noise,
        timestep=args.timestep,
    )


def path(text: str) -> Path:
    """A path option's value; an empty one (which would be the working directory) refused."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    return Path(text)


def json_path(text: str) -> Path:
    """A --json value: a path, or ``-`` for standard output (`STANDARD_OUTPUT`)."""
    return STANDARD_OUTPUT if text == "-" else path(text)


def names(option: str, spec: str) -> tuple[str, ...]:
    """A comma-separated list of distinct names, or `InputError` naming `option` when it has
    none or repeats one."""
    found = tuple(name.strip() for name in spec.split(",") if name.strip())
    if not found:
        raise InputError(f"{option} {spec!r}: expected comma-separated names")
    twice = sorted(repeated(found))
    if twice:
        raise InputError(f"{option} {spec!r}: names {', '.join(twice)} more than once")
    return found


def numbers(option: str, spec: str, count: int) -> tuple[float, ...]:
    """`count` comma-separated numbers, or `InputError` naming `option`."""
    try:
        found = tuple(float(part) for part in spec.split(","))
    except ValueError:
        found = ()
    if len(found) != count:
        raise InputError(f"{option} {spec!r}: expected {count} comma-separated numbers")
    return found


def frame_size(text: str) -> tuple[int, int]:
    """``--size WxH`` as (width, height), even and positive."""
    from invdyn.learn.datasets import check_size

    width, _, height = text.lower().partition("x")
    if not (width.isdigit() and height.isdigit()):
        raise InputError(f"--size must be WIDTHxHEIGHT in pixels, such as 64x64, got {text!r}")
    return check_size((int(width), int(height)))


def add_settings(parser: argparse.ArgumentParser, help: str) -> None:
    """``--set KEY=VALUE``, repeatable: a setting of the networks' configuration
    (`invdyn.learn.config.Config.with_overrides`)."""
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[], help=help)
