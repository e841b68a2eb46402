"""A new user's first calls: invdyn against Pinocchio, each in fresh processes of this run.

Each library runs one script per robot in a fresh process whose cache folder
(``XDG_CACHE_HOME``) is empty, then the same script again in a second fresh process, with what
the first left there (neither library keeps a cache: the two differ by what the operating
system holds in memory). The script times, one after the other: the import;
loading the robot (the Panda with a fixed base, TALOS with a floating one); the first single
call of rnea, the mass matrix, aba, the analytic derivatives of rnea and a frame Jacobian; then
the first batched rnea of 4,096 states (``pin.rneaInParallel`` on all cores for Pinocchio).
It prints milliseconds per step and in all, and the ratio of the totals.

Needs the ``oracle`` extra (Pinocchio and example-robot-data)::

    python benchmarks/cold_start.py
    python benchmarks/cold_start.py --runs 3     # the median of three runs of each process
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from invdyn.io import robots
from tables import table

ROBOTS = (("panda", False, "panda_hand"), ("talos", True, "left_sole_link"))
BATCH = 4096
STEPS = ("import", "load", "rnea", "mass matrix", "aba", "rnea derivatives", "frame Jacobian")
STEPS += (f"rnea of {BATCH}",)

# each script prints the perf_counter time after each step, from its very start
INVDYN = """
import time
marks = [time.perf_counter()]
import numpy as np
import invdyn
from invdyn.configuration import random_configuration
marks.append(time.perf_counter())
model = invdyn.load({name!r}, floating_base={floating})
marks.append(time.perf_counter())
q = random_configuration(model, rng=0)
v, a = np.ones(model.nv), np.ones(model.nv)
invdyn.rnea(model, q, v, a)
marks.append(time.perf_counter())
invdyn.mass_matrix(model, q)
marks.append(time.perf_counter())
invdyn.aba(model, q, v, a)
marks.append(time.perf_counter())
invdyn.rnea_derivatives(model, q, v, a)
marks.append(time.perf_counter())
invdyn.frame_jacobian(model, q, {frame!r})
marks.append(time.perf_counter())
Q = random_configuration(model, rng=0, shape={batch})
V, A = np.ones(({batch}, model.nv)), np.ones(({batch}, model.nv))
invdyn.rnea(model, Q, V, A)
marks.append(time.perf_counter())
print(*(b - a for a, b in zip(marks, marks[1:])))
"""

PINOCCHIO = """
import time
marks = [time.perf_counter()]
import os
import numpy as np
import pinocchio as pin
marks.append(time.perf_counter())
path = {path!r}
model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if {floating} else (
    pin.buildModelFromUrdf(path))
data = model.createData()
marks.append(time.perf_counter())
q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
v, a = np.ones(model.nv), np.ones(model.nv)
pin.rnea(model, data, q, v, a)
marks.append(time.perf_counter())
pin.crba(model, data, q)
marks.append(time.perf_counter())
pin.aba(model, data, q, v, a)
marks.append(time.perf_counter())
pin.computeRNEADerivatives(model, data, q, v, a)
marks.append(time.perf_counter())
pin.computeFrameJacobian(model, data, q, model.getFrameId({frame!r}), pin.LOCAL_WORLD_ALIGNED)
marks.append(time.perf_counter())
threads = len(os.sched_getaffinity(0))
Q = np.asfortranarray(np.tile(q[:, None], {batch}))
V, A = np.ones((model.nv, {batch}), order="F"), np.ones((model.nv, {batch}), order="F")
pin.rneaInParallel(threads, pin.ModelPool(model, threads), Q, V, A,
                   np.empty((model.nv, {batch}), order="F"))
marks.append(time.perf_counter())
print(*(b - a for a, b in zip(marks, marks[1:])))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="runs of each process (median)")
    args = parser.parse_args()
    rows = []
    totals: dict[tuple[str, str], float] = {}
    for name, floating, frame in ROBOTS:
        for library, script in (("invdyn", INVDYN), ("pinocchio", PINOCCHIO)):
            path = str(robots.robot_path(name))
            code = script.format(name=name, path=path, floating=floating, frame=frame, batch=BATCH)
            runs = [fresh_and_second(code) for _ in range(args.runs)]
            for which, index in (("fresh", 0), ("second", 1)):
                steps = [
                    statistics.median(run[index][k] for run in runs) for k in range(len(STEPS))
                ]
                totals[name, f"{library} {which}"] = sum(steps)
                rows.append([name, library, which, *(_ms(s) for s in (sum(steps), *steps))])
    print(f"first calls in fresh processes [ms], median of {args.runs} run(s)")
    table(["robot", "library", "process", "all", *STEPS], rows)
    print("\ninvdyn / Pinocchio, all steps")
    ratios = []
    for name, _, _ in ROBOTS:
        for which in ("fresh", "second"):
            ours, theirs = totals[name, f"invdyn {which}"], totals[name, f"pinocchio {which}"]
            ratios.append([name, which, _ms(ours), _ms(theirs), f"{ours / theirs:.2f}"])
    table(["robot", "process", "invdyn [ms]", "pinocchio [ms]", "invdyn/pin"], ratios)


def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f}"


def fresh_and_second(code: str) -> tuple[list[float], list[float]]:
    """The step times of `code` in a process with empty caches, then in a second one."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        return run(code, env), run(code, env)


def run(code: str, env: dict[str, str]) -> list[float]:
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        sys.exit(f"a fresh process failed:\n{result.stderr}")
    return [float(x) for x in result.stdout.split()]


if __name__ == "__main__":
    main()
