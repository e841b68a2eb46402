"""invdyn's torch path on a CUDA device against Pinocchio on all CPU cores, in one run.

Throughput, in evaluations per second, of ``invdyn.rnea`` and ``invdyn.rnea_derivatives`` on
tensors for the Panda (fixed base) and TALOS (floating base) at batches of 4096, 65,536 and
1,048,576 states, in float32 and float64, each as called (``eager``: the public functions,
arguments checked, one kernel launch per operation) and with the rnea kernel compiled by
``torch.compile`` (``compiled``: fused kernels, after a warm-up that compiles it); against
``pin.rneaInParallel`` on every CPU core of the same machine, float64, same batch. Ratios are
invdyn / Pinocchio throughput: above 1 means invdyn is faster.

Without a CUDA device it runs on the CPU and says so (the torch path on a CPU is for
autograd, not speed: `benchmarks/cpu.py` measures the compiled CPU kernels). Batches that do
not fit in the device's memory are reported as such. Results of a run on an NVIDIA H200 are
recorded in benchmarks/RESULTS.md.

Needs the ``learn`` (torch) and ``oracle`` (Pinocchio) extras::

    python benchmarks/gpu.py              # every batch; on a CPU, minutes
    python benchmarks/gpu.py --quick      # the smallest two batches, fewer repeats
    python benchmarks/gpu.py --no-compile # eager only (compiling takes a minute per case)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pinocchio as pin
import torch

import invdyn
from invdyn.configuration import random_configuration
from invdyn.io import robots
from invdyn.kernels import torch as kernels

ROBOTS = (("panda", False), ("talos", True))
BATCHES = (4096, 65536, 1_048_576)
QUICK_BATCHES = (4096, 65536)
# without a GPU: the torch path on a CPU is minutes per case at the larger batches
CPU_BATCHES = (4096,)
WIDTHS = (16, 24, 8, 8, 14, 12, 6)
DTYPES = (torch.float32, torch.float64)
# rnea_derivatives holds 3 nv^2 outputs and nv tangents per state: at most this many bytes
DERIVATIVE_BYTES = 8e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="two batches, fewer repeats")
    parser.add_argument("--no-compile", action="store_true", help="eager only")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats per case")
    parser.add_argument(
        "--batches", type=int, nargs="+", help="batch sizes (default: 4096 65536 1048576 on CUDA)"
    )
    args = parser.parse_args()
    if robots.example_robot_data_dir() is None:
        sys.exit("benchmarks/gpu.py needs example-robot-data: pip install -e '.[oracle]'")
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    batches = QUICK_BATCHES if args.quick else BATCHES
    if args.batches:
        batches = tuple(args.batches)
    elif not cuda:
        batches = CPU_BATCHES
    repeats = args.repeats or (3 if args.quick else 7)
    print_machine(device)
    if not cuda:
        print(
            "NOTE: no CUDA device: the torch path runs on the CPU here, at batches "
            f"{', '.join(map(str, batches))}; GPU figures need a GPU"
        )
    print(f"\nthroughput on {device} [evaluations/s], median of {repeats} repeats")
    print_row(["robot", "function", "dtype", "batch", "invdyn", "pin CPU f64", "ratio"])
    for name, floating in ROBOTS:
        model = invdyn.load(name, floating_base=floating)
        pins = pinocchio_throughput(name, floating, model, batches, repeats)
        for dtype in DTYPES:
            for batch in batches:
                compile_rnea = not args.no_compile
                for line in batch_rows(
                    model, dtype, batch, device, repeats, compile_rnea, pins[batch]
                ):
                    print_row(line)
                empty_cache(device)
    print(
        f"  pin CPU f64: pin.rneaInParallel on {os.cpu_count()} threads; the ratio is for rnea"
        " (Pinocchio has no batched derivatives)"
    )


def batch_rows(
    model: invdyn.Model,
    dtype: torch.dtype,
    batch: int,
    device: torch.device,
    repeats: int,
    compile_rnea: bool,
    pin: float,
) -> list[list[str]]:
    """Rows of every case at one dtype and batch."""
    states = random_states(model, batch, dtype, device)
    cases = {
        "rnea eager": partial(invdyn.rnea, model, *states),
        "rnea_derivatives eager": partial(invdyn.rnea_derivatives, model, *states),
    }
    if compile_rnea:
        cases["rnea compiled"] = compiled_rnea(model, dtype, device, states)
    rows = []
    for case, call in cases.items():
        rate = case_throughput(model, case, call, batch, device, repeats)
        rows.append(row(model, case, dtype, batch, rate, pin))
    return rows


def case_throughput(
    model: invdyn.Model,
    case: str,
    call: Callable[[], object],
    batch: int,
    device: torch.device,
    repeats: int,
) -> float | str:
    """Evaluations per second of one case, or why there is no figure."""
    if "derivatives" in case and derivative_bytes(model, batch) > DERIVATIVE_BYTES:
        return "too large"
    rate = throughput(call, batch, device, repeats)
    return "out of memory" if rate is None else rate


def row(
    model: invdyn.Model, case: str, dtype: torch.dtype, batch: int, rate: float | str, pin: float
) -> list[str]:
    """A table row; the ratio to Pinocchio for rnea only (it has no batched derivatives)."""
    label = f"{model.name} (nv {model.nv})"
    figure = rate if isinstance(rate, str) else f"{rate:.3e}"
    ratio = "" if isinstance(rate, str) or "derivatives" in case else f"{rate / pin:.2f}"
    return [label, case, str(dtype).removeprefix("torch."), str(batch), figure, f"{pin:.3e}", ratio]


def random_states(
    model: invdyn.Model, batch: int, dtype: torch.dtype, device: torch.device
) -> tuple[torch.Tensor, ...]:
    rng = np.random.default_rng(0)
    q = random_configuration(model, rng=rng, shape=batch)
    v = rng.normal(size=(batch, model.nv))
    a = rng.normal(size=(batch, model.nv))
    return tuple(torch.tensor(x, dtype=dtype, device=device) for x in (q, v, a))


def compiled_rnea(
    model: invdyn.Model, dtype: torch.dtype, device: torch.device, states: tuple[Any, ...]
) -> Callable[[], object]:
    """rnea's kernel compiled by torch.compile on these states (compiled once, here)."""
    tree = kernels.tree(model, dtype, device)
    params = tree.params[None]
    function = torch.compile(lambda q, v, a: kernels.rnea(tree, q, v, a, None, params))
    start = time.perf_counter()
    try:
        with torch.no_grad():
            function(*states)
    except torch.OutOfMemoryError:
        empty_cache(device)
        print(f"  compiling rnea for {model.name} {dtype} ran out of memory")
        return lambda: function(*states)
    synchronize(device)
    print(f"  compiled rnea for {model.name} {dtype} in {time.perf_counter() - start:.0f} s")
    return lambda: function(*states)


def throughput(
    call: Callable[[], object], batch: int, device: torch.device, repeats: int
) -> float | None:
    """Median evaluations per second over `repeats` timed calls, after a warm-up; None when
    the batch does not fit in memory."""
    try:
        with torch.no_grad():
            call()
            synchronize(device)
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                call()
                synchronize(device)
                times.append(time.perf_counter() - start)
    except torch.OutOfMemoryError:
        empty_cache(device)
        return None
    return batch / statistics.median(times)


def pinocchio_throughput(
    name: str, floating: bool, model: invdyn.Model, batches: tuple[int, ...], repeats: int
) -> dict[int, float]:
    """pin.rneaInParallel evaluations per second on all cores, per batch, float64."""
    path = str(robots.robot_path(name))
    root = pin.JointModelFreeFlyer()
    pmodel = pin.buildModelFromUrdf(path, root) if floating else pin.buildModelFromUrdf(path)
    threads = os.cpu_count() or 1
    pool = pin.ModelPool(pmodel, threads)
    rates = {}
    for batch in batches:
        rng = np.random.default_rng(0)
        q = random_configuration(model, rng=rng, shape=batch)
        v, a = rng.normal(size=(2, batch, model.nv))
        out = np.empty((model.nv, batch), order="F")

        def call(q=q.T, v=v.T, a=a.T, out=out, batch=batch):
            pin.rneaInParallel(threads, pool, q, v, a, out)

        rates[batch] = throughput(call, batch, torch.device("cpu"), repeats) or float("nan")
    return rates


def derivative_bytes(model: invdyn.Model, batch: int) -> float:
    """About the memory rnea_derivatives needs: outputs and one state per tangent, float64."""
    return 8.0 * batch * model.nv * (3 * model.nv + 4 * model.nq)


def print_row(cells: list[str]) -> None:
    """One row of the results, as soon as it is measured."""
    print("  " + "  ".join(x.ljust(w) for x, w in zip(cells, WIDTHS)).rstrip(), flush=True)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def empty_cache(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.empty_cache()


def print_machine(device: torch.device) -> None:
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor()
    print(f"device: {device} ({name}); os.cpu_count() {os.cpu_count()}")
    print(
        f"python {platform.python_version()}, torch {torch.__version__}"
        f" (cuda {torch.version.cuda}), numpy {np.__version__}, invdyn {invdyn.__version__},"
        f" pinocchio {pin.__version__}"
    )


if __name__ == "__main__":
    main()
