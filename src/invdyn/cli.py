"""The ``invdyn`` command: ``demo``, ``info`` and ``robots``.

Each subcommand parses its arguments, calls the library and prints; user errors (an unknown
robot, a malformed description, a missing file) print ``invdyn: error: <message>`` and exit with
status 2, as argparse does for bad arguments.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

import invdyn
from invdyn.configuration import integrate, neutral
from invdyn.errors import InputError, InvdynError
from invdyn.io import robots
from invdyn.model import JointType, Model

Array = NDArray[np.float64]

DEMO_ROBOT = "panda"
DEMO_FALLBACK = "double_pendulum"
DEMO_RATE = 1000.0
"""Samples per second of the demo trajectory."""

_TYPE_NAMES = {t: t.name.lower() for t in JointType}
# labels of the velocity coordinates of multi-dof joints, in v order
_DOF_SUFFIXES = {
    JointType.SPHERICAL: ("wx", "wy", "wz"),
    JointType.FREE: ("vx", "vy", "vz", "wx", "wy", "wz"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``invdyn`` command line and return its exit status."""
    args = _parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except BrokenPipeError:
        # the reader went away (invdyn robots | head): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (InvdynError, OSError) as error:
        print(f"invdyn: error: {_describe(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("invdyn: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="invdyn", description="Inverse dynamics for robots, analytic and learned."
    )
    parser.add_argument("--version", action="version", version=f"invdyn {invdyn.__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    demo = commands.add_parser(
        "demo",
        help="joint torques along a smooth trajectory: table and plot",
        description="Compute joint torques with rnea along a built-in smooth trajectory, print "
        "a summary table and write a plot. Uses the Panda when example-robot-data is installed "
        f"and the {DEMO_FALLBACK} otherwise; nothing is downloaded.",
    )
    demo.add_argument("--robot", metavar="NAME", help="built-in name or .urdf/.xml path")
    demo.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=Path("invdyn-demo"),
        help="directory for torques.png (default: ./invdyn-demo)",
    )
    demo.add_argument(
        "--duration",
        metavar="S",
        type=float,
        default=4.0,
        help="trajectory duration in seconds, one period of motion (default: 4)",
    )
    demo.set_defaults(command=_demo)

    info = commands.add_parser(
        "info",
        help="kinematic tree, joints, limits and masses of a robot",
        description="Print the kinematic tree, the joints with their limits and the masses of "
        "a robot.",
    )
    info.add_argument("robot", metavar="ROBOT", help="built-in name or .urdf/.xml path")
    base = info.add_mutually_exclusive_group()
    base.add_argument(
        "--floating-base",
        dest="floating_base",
        action="store_const",
        const=True,
        default=None,
        help="attach the root link by a free-flyer joint",
    )
    base.add_argument(
        "--fixed-base",
        dest="floating_base",
        action="store_const",
        const=False,
        help="fix the root link to the world",
    )
    info.set_defaults(command=_info)

    listing = commands.add_parser(
        "robots",
        help="list the built-in robot names",
        description="List the built-in robot names and whether each is installed.",
    )
    listing.set_defaults(command=_robots)
    return parser


# demo


def _demo(args: argparse.Namespace) -> int:
    from invdyn.viz.plots import plot_joint_series, save_figure

    if not (math.isfinite(args.duration) and args.duration > 0):
        raise InputError(f"--duration must be a positive number of seconds, got {args.duration}")
    name = args.robot
    if name is None:
        name = DEMO_ROBOT
        if not robots.is_installed(DEMO_ROBOT):
            name = DEMO_FALLBACK
            print(
                f"example-robot-data is not installed, so the demo uses the {DEMO_FALLBACK} "
                f"(pip install example-robot-data for the {DEMO_ROBOT})"
            )
    model = _load(name)

    # one period of motion sampled at DEMO_RATE, torques in one batched call
    times = np.linspace(0.0, args.duration, max(2, round(args.duration * DEMO_RATE) + 1))
    q, v, a = demo_trajectory(model, times, period=args.duration)
    start = time.perf_counter()
    tau = invdyn.rnea(model, q, v, a)
    first = time.perf_counter() - start
    batch = _median_time(lambda: invdyn.rnea(model, q, v, a), repeats=11)
    q0, v0, a0 = (np.ascontiguousarray(x[0]) for x in (q, v, a))
    single = _median_time(lambda: invdyn.rnea(model, q0, v0, a0), repeats=201)
    gravity = invdyn.gravity(model, q)

    labels, units = dof_labels(model), dof_units(model)
    print(
        f"{model.name}: nq {model.nq}, nv {model.nv}; {len(times)} samples over "
        f"{args.duration:g} s, each joint moving through one period of 1 - cos(2 pi t / T)"
    )
    print()
    rows = []
    for k in range(model.nv):
        g_mean = float(np.mean(np.abs(gravity[:, k])))
        rest_mean = float(np.mean(np.abs(tau[:, k] - gravity[:, k])))
        share = g_mean / (g_mean + rest_mean) if g_mean + rest_mean > 0 else 0.0
        limit = model.dof_effort_limit[k]
        rows.append(
            [
                labels[k],
                units[k],
                f"{np.max(np.abs(tau[:, k])):.3f}",
                f"{np.sqrt(np.mean(tau[:, k] ** 2)):.3f}",
                f"{100 * share:.0f}%",
                f"{limit:g}" if np.isfinite(limit) else "-",
            ]
        )
    _print_table(["joint", "unit", "max |tau|", "RMS tau", "gravity", "limit"], rows)
    print("gravity: share of mean |tau| due to g(q), mean |g| / (mean |g| + mean |tau - g|)")
    print()
    print(
        f"rnea: {len(times)} samples in one call {1e3 * batch:.3f} ms "
        f"({1e6 * batch / len(times):.3f} us per sample); single call {1e6 * single:.2f} us; "
        f"first call {first:.3f} s (includes numba compilation or cache load)"
    )

    figure = plot_joint_series(
        times,
        tau,
        labels=labels,
        units=units,
        title=f"{model.name}: joint torques along the demo trajectory (invdyn.rnea)",
    )
    path = save_figure(figure, Path(args.out) / "torques.png")
    print(f"wrote {path}")
    return 0


def demo_trajectory(model: Model, times: Array, *, period: float) -> tuple[Array, Array, Array]:
    """A smooth periodic motion of every joint, with exact velocities and accelerations.

    q(t) = q0 ⊕ s(t) d with s(t) = 1 - cos(2 pi t / T): each revolute or prismatic joint swings
    between two points inside its limits, and other joints move from neutral along a fixed
    direction d of their tangent space (a one-parameter subgroup, so v = s'(t) d and
    a = s''(t) d exactly, also on SO(3) and SE(3)). Amplitudes keep peak speeds within 80% of
    the velocity limits.

    Args:
      model: the robot.
      times: (T,) sample times in seconds.
      period: T, the period of the motion in seconds.

    Returns:
      (T, nq) positions, (T, nv) velocities and (T, nv) accelerations.
    """
    omega = 2.0 * np.pi / period
    q0, d = neutral(model), np.zeros(model.nv)
    for i, jtype in enumerate(model.jnt_type):
        qs, vs, nv = model.jnt_qadr[i], model.jnt_vadr[i], model.jnt_nv[i]
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            # a quarter of the range, centred in it; 0.6 rad or 5 cm at most
            lower, upper = model.q_lower[qs], model.q_upper[qs]
            cap = 0.6 if jtype == JointType.REVOLUTE else 0.05
            finite = np.isfinite(lower) and np.isfinite(upper)
            centre = 0.5 * (lower + upper) if finite else 0.0
            d[vs] = min(0.25 * (upper - lower), cap) if finite else cap
            q0[qs] = centre - d[vs]
        else:
            # alternate directions, 0.3 rad and 5 cm per axis
            linear = jtype == JointType.FREE
            d[vs : vs + nv] = [(0.05 if linear and k < 3 else 0.3) * (-1) ** k for k in range(nv)]
    # peak speed is d omega
    speed = np.abs(d) * omega
    d *= np.minimum(1.0, 0.8 * model.dof_velocity_limit / np.maximum(speed, 1e-300))
    s = 1.0 - np.cos(omega * times)
    s_dot = omega * np.sin(omega * times)
    s_ddot = omega**2 * np.cos(omega * times)
    q = np.ascontiguousarray(integrate(model, q0, s[:, None] * d))
    return q, s_dot[:, None] * d, s_ddot[:, None] * d


def dof_labels(model: Model) -> list[str]:
    """(nv,) a name per velocity coordinate: the joint name, with an axis for multi-dof joints."""
    labels = []
    for name, jtype in zip(model.jnt_name, model.jnt_type, strict=True):
        suffixes = _DOF_SUFFIXES.get(JointType(jtype))
        labels += [f"{name}.{s}" for s in suffixes] if suffixes else [name]
    return labels


def dof_units(model: Model) -> list[str]:
    """(nv,) the unit of the generalised force of each velocity coordinate: N·m or N."""
    units = []
    for jtype in model.jnt_type:
        if jtype == JointType.PRISMATIC:
            units.append("N")
        elif jtype == JointType.FREE:
            units += ["N"] * 3 + ["N·m"] * 3
        else:
            units += ["N·m"] * (3 if jtype == JointType.SPHERICAL else 1)
    return units


# info


def _info(args: argparse.Namespace) -> int:
    model = _load(args.robot, floating_base=args.floating_base)
    base = "floating base" if model.floating_base else "fixed base"
    print(f"{model.name} ({model.source or args.robot})")
    print(
        f"nq {model.nq}, nv {model.nv}, nbody {model.nbody}, frames {len(model.frame_name)}, "
        f"{base}, gravity {_vector(model.gravity)} m/s^2"
    )

    print("\nkinematic tree (body [joint, type])")
    print("  world")
    depth = np.zeros(model.nbody, dtype=np.int64)
    for i in range(model.nbody):
        parent = int(model.body_parent[i])
        depth[i] = 0 if parent < 0 else depth[parent] + 1
        joint = f"{model.jnt_name[i]}, {_TYPE_NAMES[JointType(model.jnt_type[i])]}"
        print(f"  {'  ' * (depth[i] + 1)}{model.body_name[i]} [{joint}]")

    print("\njoints")
    rows = []
    for i in range(model.nbody):
        jtype = JointType(model.jnt_type[i])
        qs, vs, nv = model.jnt_qadr[i], model.jnt_vadr[i], model.jnt_nv[i]
        unit = "m" if jtype == JointType.PRISMATIC else "rad"
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            position = f"[{model.q_lower[qs]:g}, {model.q_upper[qs]:g}] {unit}"
        elif jtype == JointType.CONTINUOUS:
            position = "unbounded"
        else:
            position = "-"
        rows.append(
            [
                model.jnt_name[i],
                _TYPE_NAMES[jtype],
                position,
                _limits(model.dof_velocity_limit[vs : vs + nv]),
                _limits(model.dof_effort_limit[vs : vs + nv]),
            ]
        )
    _print_table(["joint", "type", "position", "velocity", "effort"], rows)

    print("\nmasses")
    rows = [[n, f"{m:.4f}"] for n, m in zip(model.body_name, model.body_mass, strict=True)]
    rows.append(["total", f"{model.total_mass:.4f}"])
    _print_table(["body", "mass [kg]"], rows)
    return 0


def _limits(values: Array) -> str:
    """One limit, or one per coordinate, '-' where unknown."""
    shown = ["-" if not np.isfinite(x) else f"{x:g}" for x in values]
    return shown[0] if len(set(shown)) == 1 else ", ".join(shown)


def _vector(values: Array) -> str:
    return "(" + ", ".join(f"{x:g}" for x in values) + ")"


# robots


def _robots(args: argparse.Namespace) -> int:
    del args
    registry = robots.available_robots()
    rows, installed = [], 0
    for name, info in registry.items():
        present = robots.is_installed(name)
        installed += present
        base = "floating" if info.floating_base else "fixed"
        rows.append([name, "yes" if present else "no", base, info.description])
    _print_table(["name", "available", "base", "description"], rows)
    data = robots.example_robot_data_dir()
    where = f"installed at {data}" if data else "not installed (pip install example-robot-data)"
    print(f"\n{installed} of {len(registry)} available; example-robot-data {where}")
    aliases = ", ".join(f"{alias} -> {name}" for alias, name in sorted(robots.ALIASES.items()))
    print(f"aliases: {aliases}")
    return 0


# helpers


def _load(name: str, *, floating_base: bool | None = None) -> Model:
    """`invdyn.load`, pointing at ``invdyn robots`` when a name is unknown."""
    try:
        return invdyn.load(name, floating_base=floating_base)
    except InvdynError as error:
        if Path(name).suffix or not str(error).startswith("unknown robot"):
            raise
        raise type(error)(f"{error}; run 'invdyn robots' for the list") from None


def _median_time(call: Callable[[], object], *, repeats: int) -> float:
    """Median wall time of `call` over `repeats` runs, in seconds."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print left-aligned text columns, numbers right-aligned."""
    widths = [max(len(str(r[c])) for r in [header, *rows]) for c in range(len(header))]
    numeric = [all(_is_number(r[c]) for r in rows) for c in range(len(header))]
    for row in [header, *rows]:
        cells = [
            str(x).rjust(w) if num else str(x).ljust(w)
            for x, w, num in zip(row, widths, numeric, strict=True)
        ]
        print("  " + "  ".join(cells).rstrip())


def _is_number(text: str) -> bool:
    try:
        float(text.rstrip("%"))
    except ValueError:
        return text == "-"
    return True


def _describe(error: BaseException) -> str:
    """The message of a user error, without the errno noise of OSError."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error)


if __name__ == "__main__":
    raise SystemExit(main())
