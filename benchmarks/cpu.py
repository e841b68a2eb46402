"""invdyn against Pinocchio on the CPU, both measured in this one run on the same states.

Single-call latency (numpy in, numpy out, called from Python) of rnea, the mass matrix
(`invdyn.mass_matrix` against ``pin.crba``), aba, the analytic derivatives of rnea
(`invdyn.rnea_derivatives` against ``pin.computeRNEADerivatives``), the centre of mass and its
Jacobian (against ``pin.centerOfMass`` and ``pin.jacobianCenterOfMass``), the centroidal
momentum matrix (against ``pin.computeCentroidalMap``) and its rate (against
``pin.computeCentroidalMomentumTimeVariation``), a frame's placement (against
``pin.forwardKinematics`` then ``pin.updateFramePlacement``), its Jacobian (against
``pin.computeFrameJacobian``), its velocity and its classical acceleration (against
``pin.forwardKinematics`` then ``pin.getFrameVelocity`` or
``pin.getFrameClassicalAcceleration``), on the Panda (fixed base, its hand) and TALOS
(floating base, its left sole); batched rnea throughput at several batch sizes against
``pin.rneaInParallel`` on all cores. (`benchmarks/cold_start.py` times the first calls of a
fresh process.)

Latencies are the median over repeats of the mean time per call within a repeat. Ratios are
invdyn / Pinocchio: below 1 means invdyn is faster for latency, above 1 means invdyn has more
throughput for batches. Notes: ``pin.crba`` fills only the upper triangle of the mass matrix
while invdyn returns the full symmetric matrix, in its derivatives too;
``pin.computeRNEADerivatives`` returns views of its data while `invdyn.rnea_derivatives`
allocates its three matrices; ``pin.rneaInParallel`` writes into a
preallocated output while ``invdyn.rnea`` allocates its result, as its API does.

Needs the ``oracle`` extra (Pinocchio and example-robot-data)::

    python benchmarks/cpu.py            # full run, a few minutes
    python benchmarks/cpu.py --quick    # fewer repeats, a smaller largest batch
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import sys
import timeit
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pinocchio as pin

import invdyn
from invdyn.configuration import random_configuration
from invdyn.io import robots
from invdyn.kernels import cpu as cpu_kernels
from tables import table

ROBOTS = (("panda", False), ("talos", True))
# the frame of each robot whose placement and Jacobian are timed
FRAMES = {"panda": "panda_hand", "talos": "left_sole_link"}
BATCHES = (64, 4096, 65536)
QUICK_BATCHES = (64, 4096)


@dataclasses.dataclass(frozen=True)
class Settings:
    """Repeats and target time per repeat."""

    repeats: int
    seconds_per_repeat: float


FULL = Settings(repeats=31, seconds_per_repeat=0.2)
QUICK = Settings(repeats=7, seconds_per_repeat=0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller batches")
    args = parser.parse_args()
    settings = QUICK if args.quick else FULL
    batches = QUICK_BATCHES if args.quick else BATCHES
    threads = os.cpu_count() or 1
    if robots.example_robot_data_dir() is None:
        sys.exit("benchmarks/cpu.py needs example-robot-data: pip install -e '.[oracle]'")

    print_machine(threads)
    latency_rows, batch_rows = [], []
    for name, floating in ROBOTS:
        model = invdyn.load(name, floating_base=floating)
        path = str(robots.robot_path(name))
        root = pin.JointModelFreeFlyer()
        pmodel = pin.buildModelFromUrdf(path, root) if floating else pin.buildModelFromUrdf(path)
        pdata = pmodel.createData()
        assert (pmodel.nq, pmodel.nv) == (model.nq, model.nv), f"{name}: layouts differ"
        label = f"{name} ({'floating' if floating else 'fixed'}, nv {model.nv})"

        # the same random states for both libraries
        rng = np.random.default_rng(0)
        largest = max(batches)
        q = random_configuration(model, rng=rng, shape=largest)
        v = rng.normal(size=(largest, model.nv))
        a = rng.normal(size=(largest, model.nv))
        tau = invdyn.rnea(model, q[:64], v[:64], a[:64])
        q0, v0, a0, tau0 = (np.ascontiguousarray(x[0]) for x in (q, v, a, tau))
        check(name, model, pmodel, pdata, q0, v0, a0)

        latency_rows += latency(label, model, pmodel, pdata, (q0, v0, a0, tau0), settings)
        batch_rows += throughput(label, model, pmodel, (q, v, a), batches, threads, settings)

    print(f"\nsingle-call latency, median of {settings.repeats} repeats [us]")
    table(["robot", "function", "invdyn", "pinocchio", "invdyn/pin"], latency_rows)
    print(f"\nbatched rnea throughput on {threads} threads [million samples/s]")
    table(["robot", "batch", "invdyn", "pinocchio", "invdyn/pin"], batch_rows)


def latency(
    label: str,
    model: invdyn.Model,
    pmodel: Any,
    pdata: Any,
    state: tuple[np.ndarray, ...],
    settings: Settings,
) -> list[list[str]]:
    """Rows of single-call latencies: rnea, mass matrix, aba, rnea derivatives and centroidal
    quantities of both libraries."""
    q, v, a, tau = state
    frame = FRAMES[model.name]
    fid = pmodel.getFrameId(frame)
    aligned = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def pin_frame_placement() -> object:
        pin.forwardKinematics(pmodel, pdata, q)
        return pin.updateFramePlacement(pmodel, pdata, fid)

    def pin_frame_velocity() -> object:
        pin.forwardKinematics(pmodel, pdata, q, v)
        return pin.getFrameVelocity(pmodel, pdata, fid, aligned)

    def pin_frame_acceleration() -> object:
        pin.forwardKinematics(pmodel, pdata, q, v, a)
        return pin.getFrameClassicalAcceleration(pmodel, pdata, fid, aligned)

    cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        ("rnea", lambda: invdyn.rnea(model, q, v, a), lambda: pin.rnea(pmodel, pdata, q, v, a)),
        (
            "mass_matrix / crba",
            lambda: invdyn.mass_matrix(model, q),
            lambda: pin.crba(pmodel, pdata, q),
        ),
        ("aba", lambda: invdyn.aba(model, q, v, tau), lambda: pin.aba(pmodel, pdata, q, v, tau)),
        (
            "rnea_derivatives",
            lambda: invdyn.rnea_derivatives(model, q, v, a),
            lambda: pin.computeRNEADerivatives(pmodel, pdata, q, v, a),
        ),
        (
            "center_of_mass",
            lambda: invdyn.center_of_mass(model, q),
            lambda: pin.centerOfMass(pmodel, pdata, q),
        ),
        (
            "center_of_mass_jacobian",
            lambda: invdyn.center_of_mass_jacobian(model, q),
            lambda: pin.jacobianCenterOfMass(pmodel, pdata, q),
        ),
        (
            "centroidal_momentum_matrix",
            lambda: invdyn.centroidal_momentum_matrix(model, q),
            lambda: pin.computeCentroidalMap(pmodel, pdata, q),
        ),
        (
            "centroidal_momentum_rate",
            lambda: invdyn.centroidal_momentum_rate(model, q, v, a),
            lambda: pin.computeCentroidalMomentumTimeVariation(pmodel, pdata, q, v, a),
        ),
        ("frame_placement", lambda: invdyn.frame_placement(model, q, frame), pin_frame_placement),
        (
            "frame_jacobian",
            lambda: invdyn.frame_jacobian(model, q, frame),
            lambda: pin.computeFrameJacobian(pmodel, pdata, q, fid, aligned),
        ),
        ("frame_velocity", lambda: invdyn.frame_velocity(model, q, v, frame), pin_frame_velocity),
        (
            "frame_acceleration",
            lambda: invdyn.frame_acceleration(model, q, v, a, frame),
            pin_frame_acceleration,
        ),
    ]
    rows = []
    for function, ours, theirs in cases:
        mine, pins = measure(ours, settings), measure(theirs, settings)
        rows.append(
            [label, function, f"{1e6 * mine:.2f}", f"{1e6 * pins:.2f}", f"{mine / pins:.2f}"]
        )
    return rows


def throughput(
    label: str,
    model: invdyn.Model,
    pmodel: Any,
    states: tuple[np.ndarray, ...],
    batches: tuple[int, ...],
    threads: int,
    settings: Settings,
) -> list[list[str]]:
    """Rows of batched rnea throughputs; invdyn takes (B, nq) rows, Pinocchio (nq, B) columns."""
    pool = pin.ModelPool(pmodel, threads)
    rows = []
    for batch in batches:
        q, v, a = (np.ascontiguousarray(x[:batch]) for x in states)
        # transposes of C-ordered (B, n) arrays are the Fortran-ordered (n, B) Eigen expects
        qt, vt, at = q.T, v.T, a.T
        out = np.empty((model.nv, batch), order="F")
        mine = measure(partial(invdyn.rnea, model, q, v, a), settings)
        pins = measure(partial(pin.rneaInParallel, threads, pool, qt, vt, at, out), settings)
        rows.append(
            [
                label,
                str(batch),
                f"{batch / mine / 1e6:.3f}",
                f"{batch / pins / 1e6:.3f}",
                f"{pins / mine:.2f}",
            ]
        )
    return rows


def check(
    name: str,
    model: invdyn.Model,
    pmodel: Any,
    pdata: Any,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
) -> None:
    """Stop unless both libraries agree on rnea, its derivatives and the centroidal quantities
    at the benchmarked state (Pinocchio orders momenta [linear; angular])."""
    # copies at once: Pinocchio returns views of its data, which the next call overwrites
    centroidal = pin.computeCentroidalMap(pmodel, pdata, q)
    matrix = np.vstack([centroidal[3:], centroidal[:3]])
    dhg = pin.computeCentroidalMomentumTimeVariation(pmodel, pdata, q, v, a)
    rate = np.r_[dhg.angular, dhg.linear]
    center = pin.centerOfMass(pmodel, pdata, q).copy()
    frame = FRAMES[model.name]
    fid = pmodel.getFrameId(frame)
    aligned = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    jacobian = pin.computeFrameJacobian(pmodel, pdata, q, fid, aligned)
    pin.forwardKinematics(pmodel, pdata, q, v, a)
    pin.updateFramePlacements(pmodel, pdata)
    placement = pdata.oMf[fid]
    velocity = pin.getFrameVelocity(pmodel, pdata, fid, aligned)
    acceleration = pin.getFrameClassicalAcceleration(pmodel, pdata, fid, aligned)
    pairs = {
        "frame_velocity": (
            [invdyn.frame_velocity(model, q, v, frame)],
            [np.r_[velocity.angular, velocity.linear]],
        ),
        "frame_acceleration": (
            [invdyn.frame_acceleration(model, q, v, a, frame)],
            [np.r_[acceleration.angular, acceleration.linear]],
        ),
        "frame_placement": (
            list(invdyn.frame_placement(model, q, frame)),
            [placement.rotation, placement.translation],
        ),
        "frame_jacobian": (
            [invdyn.frame_jacobian(model, q, frame)],
            [np.vstack([jacobian[3:], jacobian[:3]])],
        ),
        "center_of_mass": (
            [invdyn.center_of_mass(model, q), invdyn.center_of_mass_jacobian(model, q)],
            [center, pin.jacobianCenterOfMass(pmodel, pdata, q)],
        ),
        "centroidal_momentum_matrix": ([invdyn.centroidal_momentum_matrix(model, q)], [matrix]),
        "centroidal_momentum_rate": ([invdyn.centroidal_momentum_rate(model, q, v, a)], [rate]),
        "rnea": ([invdyn.rnea(model, q, v, a)], [pin.rnea(pmodel, pdata, q, v, a)]),
        "rnea_derivatives": (
            invdyn.rnea_derivatives(model, q, v, a)[:2],
            pin.computeRNEADerivatives(pmodel, pdata, q, v, a)[:2],
        ),
    }
    for function, (ours, theirs) in pairs.items():
        for x, y in zip(ours, theirs):
            error = np.max(np.abs(x - y))
            if error > 1e-8 * max(1.0, float(np.max(np.abs(y)))):
                sys.exit(f"{name}: invdyn and Pinocchio disagree on {function} by {error:.3e}")


def measure(call: Callable[[], object], settings: Settings) -> float:
    """Median over repeats of the mean seconds per call, after a warm-up."""
    # a first call, then grow the calls per repeat to the target time
    call()
    timer = timeit.Timer(call)
    number, elapsed = 1, timer.timeit(1)
    while elapsed < settings.seconds_per_repeat / 10 and number < 10**7:
        number *= 10
        elapsed = timer.timeit(number)
    number = max(1, round(number * settings.seconds_per_repeat / max(elapsed, 1e-9)))
    return statistics.median(timer.repeat(repeat=settings.repeats, number=number)) / number


def print_machine(threads: int) -> None:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    print(f"cpu: {cpu}; os.cpu_count() {threads}; invdyn's threads {cpu_kernels.num_threads()}")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"invdyn {invdyn.__version__}, pinocchio {pin.__version__}"
    )


if __name__ == "__main__":
    main()
