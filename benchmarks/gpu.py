"""invdyn's torch path on a CUDA device against Pinocchio on all CPU cores, in one run.

Throughput, in evaluations per second, of ``invdyn.rnea`` and ``invdyn.rnea_derivatives`` on
tensors for the Panda (fixed base) and TALOS (floating base) at batches of 4096, 65,536 and
1,048,576 states, in float32 and float64, against ``pin.rneaInParallel`` on every CPU core of
the same machine, float64, same batch. Ratios are invdyn / Pinocchio throughput: above 1 means
invdyn is faster. On CUDA, rnea runs as one fused Triton kernel per call
(`invdyn.kernels.triton`); the rows are

* ``rnea``: the public function (arguments checked, results checked finite);
* ``rnea kernel``: the fused kernel launched directly;
* ``rnea torch path``: the per-body torch operations that the fused kernel replaces
  (`invdyn.kernels.torch.rnea`, the path of every other function);
* ``rnea compiled`` (``--compile``): that torch path compiled by ``torch.compile``;
* ``rnea_derivatives``: the public function (forward-mode autodiff of the torch path).

with the fused kernels' arithmetic rate (operations of the straight-line program times
throughput) and their largest error against the numpy path (float64, on 4096 states).
``--launches ROBOT`` times the fused kernel of one robot at every launch shape (states per
program instance, warps) at the largest batch; `invdyn.kernels.triton.LAUNCH` holds the chosen
ones. Kernels are compiled once per model and dtype before timing, in parallel processes.

Without a CUDA device it runs the torch path on the CPU and says so (the torch path on a CPU is
for autograd, not speed: `benchmarks/cpu.py` measures the compiled CPU kernels). Batches that
do not fit in the device's memory are reported as such. Results of a run on an NVIDIA H200 are
recorded in benchmarks/RESULTS.md.

Needs the ``learn`` (torch) and ``oracle`` (Pinocchio) extras, and Triton on CUDA::

    python benchmarks/gpu.py                    # every batch; on a CPU, minutes
    python benchmarks/gpu.py --quick            # the smallest two batches, fewer repeats
    python benchmarks/gpu.py --launches panda   # and the launch shapes of panda's kernel
    python benchmarks/gpu.py --robots talos --dtypes float64 --batches 1048576
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import partial
from typing import Any

import numpy as np
import torch

import invdyn
from invdyn.configuration import random_configuration
from invdyn.io import robots
from invdyn.kernels import torch as kernels
from invdyn.kernels import triton as fused
from invdyn.kernels import unrolled

try:
    import pinocchio as pin
except ImportError as missing:  # the GPU figures do not need it: the ratios are left empty
    print(f"NOTE: Pinocchio cannot be imported ({missing}): no ratios")
    pin = None

ROBOTS = (("panda", False), ("talos", True))
BATCHES = (4096, 65536, 1_048_576)
QUICK_BATCHES = (4096, 65536)
# without a GPU: the torch path on a CPU is minutes per case at the larger batches
CPU_BATCHES = (4096,)
WIDTHS = (16, 18, 8, 8, 10, 10, 6, 9, 8)
DTYPE_NAMES = {"float32": torch.float32, "float64": torch.float64}
LAUNCHES = tuple(fused.Launch(per * warps, warps) for warps in (1, 2, 4, 8) for per in (32, 64))
# rnea_derivatives holds 3 nv^2 outputs and nv tangents per state: at most this many bytes
DERIVATIVE_BYTES = 8e9
CHECKED_STATES = 4096


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="two batches, fewer repeats")
    parser.add_argument("--compile", action="store_true", help="add torch.compile's torch path")
    parser.add_argument("--launches", metavar="ROBOT", help="time every launch shape of ROBOT")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats per case")
    parser.add_argument(
        "--batches", type=int, nargs="+", help="batch sizes (default: 4096 65536 1048576 on CUDA)"
    )
    parser.add_argument(
        "--robots", nargs="+", choices=[name for name, _ in ROBOTS], help="default: all"
    )
    parser.add_argument(
        "--dtypes", nargs="+", choices=list(DTYPE_NAMES), help="default: float32 float64"
    )
    args = parser.parse_args()
    dtypes = tuple(DTYPE_NAMES[name] for name in args.dtypes or DTYPE_NAMES)
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
    fusing = cuda and fused.available()
    if not cuda:
        print(
            "NOTE: no CUDA device: the torch path runs on the CPU here, at batches "
            f"{', '.join(map(str, batches))}; GPU figures need a GPU"
        )
    elif not fusing:
        print("NOTE: Triton is missing: rnea takes the torch path")
    models = {name: load(name) for name, _ in ROBOTS if name in (args.robots or [name])}
    if fusing:
        sweep = [(args.launches, dtype, launch) for dtype in dtypes for launch in LAUNCHES]
        defaults = [(name, dtype, fused.LAUNCH[dtype]) for name in models for dtype in dtypes]
        precompile(defaults + (sweep if args.launches else []))
    print(f"\nthroughput on {device} [evaluations/s], median of {repeats} repeats")
    print_row(
        ["robot", "function", "dtype", "batch", "invdyn", "pin CPU", "ratio", "GFLOP/s", "error"]
    )
    for name, model in models.items():
        pins = pinocchio_throughput(name, model, batches, repeats)
        for dtype in dtypes:
            error = fused_error(model, dtype, device) if fusing else ""
            for batch in batches:
                for line in batch_rows(
                    model, dtype, batch, device, repeats, args.compile, fusing, pins[batch], error
                ):
                    print_row(line)
                empty_cache(device)
    print(
        f"  pin CPU: pin.rneaInParallel on {os.cpu_count()} threads, float64; the ratio is for"
        " rnea (Pinocchio has no batched derivatives); GFLOP/s: the fused program's operations"
        " per second; error: the fused kernel's largest error against the numpy path, relative"
        " to the largest joint force"
    )
    if fusing and args.launches:
        model = load(args.launches)
        print_launches(model, max(batches), repeats, device, dtypes)


def batch_rows(
    model: invdyn.Model,
    dtype: torch.dtype,
    batch: int,
    device: torch.device,
    repeats: int,
    compile_rnea: bool,
    fusing: bool,
    pin: float,
    error: str,
) -> list[list[str]]:
    """Rows of every case at one dtype and batch."""
    states = random_states(model, batch, dtype, device)
    tree = kernels.tree(model, dtype, device)
    cases: dict[str, Callable[[], object]] = {"rnea": partial(invdyn.rnea, model, *states)}
    if fusing:
        cases["rnea kernel"] = partial(fused.launch, model, *states, None)
        cases["rnea torch path"] = partial(kernels.rnea, tree, *states, None, tree.params[None])
    if compile_rnea:
        cases["rnea compiled"] = compiled_rnea(model, dtype, device, states)
    cases["rnea_derivatives"] = partial(invdyn.rnea_derivatives, model, *states)
    operations = len(unrolled.rnea_program(model, True, repr).statements)
    rows = []
    for case, call in cases.items():
        rate = case_throughput(model, case, call, batch, device, repeats)
        is_fused = fusing and case in ("rnea", "rnea kernel")
        rows.append(row(model, case, dtype, batch, rate, pin, operations if is_fused else 0))
        if is_fused:
            rows[-1][-1] = error
    return rows


def case_throughput(
    model: invdyn.Model,
    case: str,
    call: Callable[[], object],
    batch: int,
    device: torch.device,
    repeats: int,
) -> float | str:
    """Evaluations per second of one case, or why there is no figure (a case that fails is
    reported, with its traceback, and the run goes on)."""
    if "derivatives" in case and derivative_bytes(model, batch) > DERIVATIVE_BYTES:
        return "too large"
    try:
        rate = throughput(call, batch, device, repeats)
    except Exception:
        traceback.print_exc()
        return "failed"
    return "out of memory" if rate is None else rate


def row(
    model: invdyn.Model,
    case: str,
    dtype: torch.dtype,
    batch: int,
    rate: float | str,
    pin: float,
    operations: int,
) -> list[str]:
    """A table row; Pinocchio's rate and the ratio to it for rnea only (it has no batched
    derivatives), the arithmetic rate for the fused kernel only (`operations` > 0)."""
    label = f"{model.name} (nv {model.nv})"
    figure = rate if isinstance(rate, str) else f"{rate:.3e}"
    measured = not isinstance(rate, str)
    compared = "derivatives" not in case
    ratio = f"{rate / pin:.2f}" if measured and compared else ""
    flops = f"{rate * operations / 1e9:.0f}" if measured and operations else ""
    peer = f"{pin:.3e}" if compared else ""
    cells = [label, case, str(dtype).removeprefix("torch."), str(batch), figure, peer]
    return [*cells, ratio, flops, ""]


def fused_error(model: invdyn.Model, dtype: torch.dtype, device: torch.device) -> str:
    """The fused kernel's largest error against the numpy path on random states, relative to
    the largest joint force."""
    try:
        return relative_error(model, dtype, device)
    except Exception:
        traceback.print_exc()
        return "failed"


def relative_error(model: invdyn.Model, dtype: torch.dtype, device: torch.device) -> str:
    q, v, a = (
        x.cpu().double().numpy()
        for x in random_states(model, CHECKED_STATES, torch.float64, device)
    )
    expected = invdyn.rnea(model, q, v, a)
    states = (torch.tensor(x, dtype=dtype, device=device) for x in (q, v, a))
    ours = fused.launch(model, *states, None).cpu().double().numpy()
    return f"{np.abs(ours - expected).max() / np.abs(expected).max():.1e}"


def load(name: str) -> invdyn.Model:
    """A robot of `ROBOTS` with its base as listed there (another with its default base)."""
    return invdyn.load(name, floating_base=dict(ROBOTS).get(name))


def random_states(
    model: invdyn.Model, batch: int, dtype: torch.dtype, device: torch.device
) -> tuple[torch.Tensor, ...]:
    rng = np.random.default_rng(0)
    q = random_configuration(model, rng=rng, shape=batch)
    v = rng.normal(size=(batch, model.nv))
    a = rng.normal(size=(batch, model.nv))
    return tuple(torch.tensor(x, dtype=dtype, device=device) for x in (q, v, a))


def precompile(kernels_wanted: list[tuple[Any, torch.dtype, fused.Launch]]) -> None:
    """Compile the fused kernels (robot name, dtype, launch shape) in parallel processes, which
    leave them in Triton's cache for this one; each is reported as it is done."""
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    workers = min(len(kernels_wanted), os.cpu_count() or 1)
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        jobs = {pool.submit(compile_one, w): " ".join(map(str, w)) for w in kernels_wanted}
        for job in as_completed(jobs):
            failure = job.result()
            took = time.perf_counter() - start
            print(failure or f"  compiled {jobs[job]} after {took:.0f} s", flush=True)


def compile_one(wanted: tuple[str, torch.dtype, fused.Launch]) -> str:
    """Compile one fused kernel; what went wrong, or nothing."""
    name, dtype, launch = wanted
    try:
        model = load(name)
        states = random_states(model, 8, dtype, torch.device("cuda"))
        fused.launch(model, *states, None, launch)
        torch.cuda.synchronize()
    except Exception:
        return f"compiling {name} {dtype} {launch} failed:\n{traceback.format_exc()}"
    return ""


def print_launches(
    model: invdyn.Model,
    batch: int,
    repeats: int,
    device: torch.device,
    dtypes: tuple[torch.dtype, ...],
) -> None:
    """Throughput of the fused kernel of `model` at every launch shape."""
    print(f"\nfused rnea of {model.name} at batch {batch}, by launch shape [evaluations/s]")
    print_row(["dtype", "states/block", "warps", "throughput"])
    for dtype in dtypes:
        states = random_states(model, batch, dtype, device)
        for launch in LAUNCHES:
            call = partial(fused.launch, model, *states, None, launch)
            rate = throughput(call, batch, device, repeats)
            figure = "out of memory" if rate is None else f"{rate:.3e}"
            print_row(
                [str(dtype).removeprefix("torch."), str(launch.block), str(launch.warps), figure]
            )


def compiled_rnea(
    model: invdyn.Model, dtype: torch.dtype, device: torch.device, states: tuple[Any, ...]
) -> Callable[[], object]:
    """The torch path's rnea compiled by torch.compile on these states (compiled once, here)."""
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
    name: str, model: invdyn.Model, batches: tuple[int, ...], repeats: int
) -> dict[int, float]:
    """pin.rneaInParallel evaluations per second on all cores, per batch, float64 (NaN
    without Pinocchio)."""
    if pin is None:
        return dict.fromkeys(batches, float("nan"))
    path = str(robots.robot_path(name))
    floating = dict(ROBOTS)[name]
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
        f" pinocchio {pin.__version__ if pin else 'missing'}"
    )


if __name__ == "__main__":
    main()
