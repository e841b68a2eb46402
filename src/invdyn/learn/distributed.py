"""Training on several processes with PyTorch's DistributedDataParallel, as torchrun runs them.

`invdyn train --nproc N` starts N processes on this machine through ``torch.distributed.run``
(`launch`); ``torchrun --nnodes M --nproc-per-node N -m invdyn train ...`` runs the same
command on several machines. Each process joins the process group from torchrun's environment
(`join`: gloo on CPUs, nccl on GPUs, one GPU per process) and `invdyn.learn.train.train`
splits every batch among the processes (`share`): the global batch and learning rate stay
those of the configuration, each process computes the gradient of its share, weighted so that
DistributedDataParallel's average is the whole batch's gradient, and the training metrics are
summed over the processes (`total`). The first process alone evaluates and writes checkpoints;
every process resumes from them.

Without a process group every function here is the single-process identity.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from collections.abc import Sequence

import torch
import torch.distributed as dist

from invdyn.errors import InputError


def active() -> bool:
    """Whether this process is one of a process group."""
    return dist.is_available() and dist.is_initialized()


def world_size() -> int:
    return dist.get_world_size() if active() else 1


def rank() -> int:
    return dist.get_rank() if active() else 0


def share(rows: torch.Tensor) -> tuple[torch.Tensor, float]:
    """This process's consecutive share of the batch `rows` (runs of windows that share
    frames are cut only at the shares' ends), and the weight of its loss: its share of the
    batch times the number of processes. A process left without rows (a last batch smaller
    than the group) takes the first row at weight 0."""
    world = world_size()
    if world == 1:
        return rows, 1.0
    local = torch.tensor_split(rows, world)[rank()]
    if len(local) == 0:
        return rows[:1], 0.0
    return local, len(local) * world / len(rows)


def total(sums: dict[str, float], device: torch.device) -> dict[str, float]:
    """`sums` added over the processes."""
    if not active():
        return sums
    values = torch.tensor(list(sums.values()), dtype=torch.float64, device=device)
    dist.all_reduce(values)
    return dict(zip(sums, values.tolist()))


def barrier() -> None:
    if active():
        dist.barrier()


def join(device: torch.device) -> bool:
    """Join the process group that torchrun's environment describes (``WORLD_SIZE`` > 1) for
    training on `device`: nccl, with this process's GPU (``LOCAL_RANK``), for a CUDA device,
    else gloo. Returns whether this process is one of several."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or active():
        return active()
    _end_with_launcher()
    if device.type == "cuda":
        torch.cuda.set_device(local_device(device))
        dist.init_process_group("nccl")
    else:
        dist.init_process_group("gloo")
    return True


def _end_with_launcher() -> None:
    """On Linux, have this worker sent SIGTERM when the torchrun agent that started it dies.
    torchrun starts every worker in a session of its own, so a SIGKILL of the launcher (``kill
    -9``, the out-of-memory killer) would otherwise leave the workers training on, writing the
    checkpoints that a resumed run reads."""
    if not sys.platform.startswith("linux") or "TORCHELASTIC_RUN_ID" not in os.environ:
        return
    set_parent_death_signal = 1  # PR_SET_PDEATHSIG of <linux/prctl.h>
    ctypes.CDLL(None).prctl(set_parent_death_signal, int(signal.SIGTERM))


def local_device(device: torch.device) -> torch.device:
    """This process's device for training on `device`: its own GPU (``LOCAL_RANK``) when it is
    one of several on CUDA."""
    if device.type == "cuda" and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return device


def check_gpus(nproc: int, device: torch.device) -> None:
    """`InputError` when `nproc` processes would train on CUDA with fewer GPUs than that."""
    if device.type == "cuda" and nproc > torch.cuda.device_count():
        raise InputError(
            f"{nproc} processes on CUDA need {nproc} GPUs, this machine has "
            f"{torch.cuda.device_count()}; pass --set train.device=cpu or fewer --nproc"
        )


def leave() -> None:
    if active():
        dist.destroy_process_group()


def launch(nproc: int, argv: Sequence[str]) -> int:
    """Run ``python -m invdyn <argv>`` in `nproc` processes on this machine, as
    ``torchrun --standalone --nproc-per-node <nproc>`` does; returns 0, or the exit status of
    the first process that failed (each says why), or raises KeyboardInterrupt on a Ctrl-C."""
    if isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1:
        raise InputError(f"nproc must be an integer >= 1, got {nproc!r}")
    from torch.distributed import run
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    # torchrun's own choice for its workers, made here so that it does not print a banner
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # nor its log of stopping the workers when one fails or on a Ctrl-C: they say why
    for name in list(logging.Logger.manager.loggerDict):
        if name.startswith("torch.distributed"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        run.main(["--standalone", f"--nproc-per-node={nproc}", "--module", "invdyn", *argv])
    except ChildFailedError as failed:
        # each process has said why it stopped (invdyn: error: ...): end with the status of
        # the first, without torchrun's report of the exit
        codes = [failure.exitcode for _, failure in sorted(failed.failures.items())]
        return next((code for code in codes if code > 0), 1)
    except SignalException as stopped:
        # a Ctrl-C or SIGTERM of the launcher, which stopped the workers: ended as the
        # command ends on one (a SIGTERM as Ray's handler exits)
        if stopped.sigval == signal.SIGINT:
            raise KeyboardInterrupt from None
        raise SystemExit(int(stopped.sigval)) from None
    return 0
