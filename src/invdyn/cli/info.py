"""``invdyn info``: the kinematic tree, joints, limits and masses of a robot
(`invdyn.io.load_simulated`)."""

from __future__ import annotations

import argparse

import numpy as np
from numpy.typing import NDArray

from invdyn.cli.options import Commands, command
from invdyn.cli.output import print_table
from invdyn.model import JOINTS, JointType

_TYPE_NAMES = {t: t.name.lower() for t in JointType}


def add(commands: Commands) -> None:
    parser = command(
        commands,
        "info",
        run,
        help="kinematic tree, joints, limits and masses of a robot",
        description="Print the kinematic tree, the joints with their limits and the masses of "
        "a robot.",
    )
    parser.add_argument("robot", metavar="ROBOT", help="built-in name or .urdf/.xml path")
    base = parser.add_mutually_exclusive_group()
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


def run(args: argparse.Namespace) -> int:
    from invdyn.io import load_simulated

    model = load_simulated(args.robot, floating_base=args.floating_base)
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
        spec = JOINTS[jtype]
        qs, vs, nv = model.jnt_qadr[i], model.jnt_vadr[i], model.jnt_nv[i]
        if spec.bounded:
            position = f"[{model.q_lower[qs]:g}, {model.q_upper[qs]:g}] {spec.dof_units[0]}"
        elif spec.axial:
            position = "unbounded"
        else:
            position = "-"
        rows.append(
            [
                model.jnt_name[i],
                _TYPE_NAMES[jtype],
                position,
                _limits(model.dof_velocity_limit[vs : vs + nv]),
                _limits(model.dof_effort_limit[vs : vs + nv])
                if model.dof_actuated[vs : vs + nv].any()
                else "passive",
            ]
        )
    print_table(["joint", "type", "position", "velocity [rad/s or m/s]", "effort [N m or N]"], rows)

    print("\nmasses")
    rows = [[n, f"{m:.4f}"] for n, m in zip(model.body_name, model.body_mass, strict=True)]
    rows.append(["total", f"{model.total_mass:.4f}"])
    print_table(["body", "mass [kg]"], rows)
    return 0


def _limits(values: NDArray[np.float64]) -> str:
    """One limit, or one per coordinate, '-' where unknown: infinite, or zero or below as a
    URDF leaves an unset limit (and as the controllers read it)."""
    shown = ["-" if not (np.isfinite(x) and x > 0) else f"{x:g}" for x in values]
    return shown[0] if len(set(shown)) == 1 else ", ".join(shown)


def _vector(values: NDArray[np.float64]) -> str:
    return "(" + ", ".join(f"{x:g}" for x in values) + ")"
