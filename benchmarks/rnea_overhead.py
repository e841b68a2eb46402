"""Where the time of ``invdyn.rnea`` on CUDA tensors goes, beyond its fused kernel.

For the Panda in float32 and TALOS in float64, at batches of 4096 and 1,048,576 states, the
median time per call (ms, each call synchronised) of:

* ``public rnea``: ``invdyn.rnea`` as called (arguments checked, results checked finite);
* ``kernel``: the fused Triton kernel alone (`invdyn.kernels.triton.launch`);
* ``fused.rnea``: the kernel as `invdyn.kernels.triton.rnea` launches it;
* ``prepare`` (argument checks and flattening) and ``all_finite`` (the results' check), each
  alone;
* ``empty sync``: a synchronisation alone;

each timed as `benchmarks/gpu.py` times its cases (the median of 20 calls after one), on its
random states; then torch.profiler's table of ten calls of ``invdyn.rnea`` at the largest
batch. Needs CUDA and Triton::

    python benchmarks/rnea_overhead.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import torch

import invdyn
from gpu import load, random_states, throughput
from invdyn import _tensors
from invdyn.kernels import torch as kernels
from invdyn.kernels import triton as fused

CASES = (("panda", torch.float32), ("talos", torch.float64))
DEVICE = torch.device("cuda")
BATCHES = (4096, 1 << 20)
REPEATS = 20


def parts(model: invdyn.Model, batch: int, dtype: torch.dtype) -> dict[str, Callable[[], object]]:
    """The calls timed, on random states of `model`."""
    q, v, a = random_states(model, batch, dtype, DEVICE)
    named = {
        "q": (q, (model.nq,)),
        "v": (v, (model.nv,)),
        "a": (a, (model.nv,)),
        "f_ext": (None, (model.nbody, 6)),
    }
    tree = kernels.tree(model, dtype, q.device)
    out = fused.launch(model, q, v, a, None)
    return {
        "public rnea": lambda: invdyn.rnea(model, q, v, a),
        "kernel": lambda: fused.launch(model, q, v, a, None),
        "fused.rnea": lambda: fused.rnea(tree, model, q, v, a, tree.params[None], False),
        "prepare": lambda: _tensors.prepare(model, named),
        "all_finite": lambda: _tensors.all_finite(out),
        "empty sync": lambda: None,
    }


def median_ms(call: Callable[[], object], batch: int) -> str:
    """Median milliseconds per synchronised call (`gpu.throughput`), or why there is none."""
    rate = throughput(call, batch, DEVICE, REPEATS)
    return "out of memory" if rate is None else f"{batch / rate * 1e3:8.4f}"


def main() -> None:
    if not (torch.cuda.is_available() and fused.available()):
        sys.exit("benchmarks/rnea_overhead.py needs a CUDA device and Triton")
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    for name, dtype in CASES:
        model = load(name)
        for batch in BATCHES:
            calls = parts(model, batch, dtype)
            print(f"\n{name} {dtype} batch {batch}: median ms per call")
            for what, call in calls.items():
                print(f"  {what:36s} {median_ms(call, batch)}")
        with torch.profiler.profile(activities=activities) as profile, torch.no_grad():
            for _ in range(10):
                calls["public rnea"]()
                torch.cuda.synchronize()
        table = profile.key_averages().table(
            sort_by="self_cuda_time_total", row_limit=12, max_name_column_width=40
        )
        print(table)


if __name__ == "__main__":
    main()
