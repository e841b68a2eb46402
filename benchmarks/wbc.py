"""Whole-body control step time: set-up and solve of the QP, per control step, in closed loop.

Each robot sways in MuJoCo (`invdyn.experiments.balance`, 2 cm at 0.5 Hz) under the
`WholeBodyController`; every step records the seconds it spent setting the QP up (dynamics,
kinematics, tasks, matrices) and solving it (ProxQP, warm-started). The table gives their
medians and 90th percentiles over the run, against the goals (1 ms for a quadruped, 3 ms for a
humanoid). The peer column is Pinocchio computing the dynamics the set-up needs at the same
states (``computeAllTerms``: mass matrix, bias forces, Jacobians, centre of mass and its
Jacobian; then each contact frame's Jacobian and classical acceleration): what a C++ library
takes for that part alone, not a whole controller.

Needs the ``sim``, ``control`` and ``oracle`` extras::

    python benchmarks/wbc.py             # go1, solo12, anymal (quadrupeds) and talos, 3 s each
    python benchmarks/wbc.py --quick     # 1 s each
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np

import invdyn
from invdyn.experiments.balance import Scenario, run_balance
from invdyn.io import robots
from tables import table

ROBOTS = {"go1": 1e-3, "solo12": 1e-3, "anymal": 1e-3, "talos": 3e-3}


def pinocchio_dynamics(name: str, run, model) -> float:
    """Median seconds Pinocchio takes for the set-up's dynamics at the run's states."""
    import pinocchio as pin

    pmodel = pin.buildModelFromUrdf(str(robots.robot_path(name)), pin.JointModelFreeFlyer())
    data = pmodel.createData()
    frames = [pmodel.getFrameId(frame, pin.BODY) for frame in run.feet]
    velocities = np.diff(run.q[:, :3], axis=0)  # any velocity will do: use the run's
    times = []
    for k in range(0, len(run.q) - 1, max(1, len(run.q) // 300)):
        q, v = run.q[k], np.r_[velocities[k] * 1000.0, np.zeros(model.nv - 3)]
        started = time.perf_counter()
        pin.computeAllTerms(pmodel, data, q, v)
        pin.jacobianCenterOfMass(pmodel, data, q, False)
        pin.updateFramePlacements(pmodel, data)
        pin.forwardKinematics(pmodel, data, q, v, np.zeros(model.nv))
        for frame in frames:
            pin.getFrameJacobian(pmodel, data, frame, pin.LOCAL_WORLD_ALIGNED)
            pin.getFrameClassicalAcceleration(pmodel, data, frame, pin.LOCAL_WORLD_ALIGNED)
        times.append(time.perf_counter() - started)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 s of simulation per robot")
    args = parser.parse_args()
    duration = 1.0 if args.quick else 3.0
    print(f"{platform.processor() or platform.machine()}, {duration:g} s of sway per robot\n")
    rows = []
    for name, goal in ROBOTS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", invdyn.ModelWarning)
            model = invdyn.load(name, floating_base=True)
        run = run_balance(model, Scenario(name="sway", duration=duration))
        steps = run.steps[10:]  # the first steps warm the caches and the solver up
        setup = np.array([s.setup_time for s in steps])
        solve = np.array([s.solve_time for s in steps])
        total = setup + solve
        peer = pinocchio_dynamics(name, run, model)
        rows.append(
            [
                name,
                str(model.nv),
                str(len(run.contacts)),
                f"{1e3 * np.median(setup):.3f}",
                f"{1e3 * np.median(solve):.3f}",
                f"{1e3 * np.median(total):.3f}",
                f"{1e3 * np.percentile(total, 90):.3f}",
                f"{1e3 * goal:.0f}",
                f"{1e3 * peer:.3f}",
                f"{np.median(setup) / peer:.1f}",
            ]
        )
    table(
        [
            "robot",
            "nv",
            "contacts",
            "setup ms",
            "solve ms",
            "step ms",
            "p90 ms",
            "goal ms",
            "pin dyn ms",
            "setup/pin",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
