"""Labelling on a Ray cluster: the units (`invdyn.learn.units`) of a labelling of
`invdyn.learn.label` shared among Ray actors.

`label_units` starts one actor per worker, each of which loads the checkpoint and opens the
dataset once, then labels the units it is handed and saves each one, atomically, into the
labelling's work directory, as `invdyn.learn.label` does in one process. Units go to whichever
actor is free; the driver's progress bar counts the episodes of finished units, from every
worker. The predictions of a unit do not depend on which process computed it (each actor runs
with the driver's torch thread count and deterministic algorithms), so the merged dataset is the
one a single process writes, bit for bit, and a killed job resumes with the units it lacks.

Ray starts a local instance unless one is running or an ``address`` is given (``"auto"`` or
``"ray://host:10001"`` joins an existing cluster; the checkpoint, the dataset and the output
must then be on a filesystem that every node sees). Actors ask for one CPU each (so there are
at most as many as the cluster has CPUs), and for an equal share of the GPUs (at most one each)
when the model runs on CUDA and the cluster has GPUs; on a cluster without GPUs a CUDA model's
actors run on the CPU, whose bits may differ from the GPU's. Actors that the cluster cannot
place within `START_TIMEOUT` seconds are dropped with a warning. Each actor runs torch on the
driver's thread count: set the checkpoint's ``train.num_threads`` to one CPU's share.

Ray is an optional extra: ``pip install 'invdyn[ray]'``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from invdyn.errors import InputError, warn

# seconds that the actors get to be placed on the cluster and load the model
START_TIMEOUT = 300.0


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError(
            "labelling on several workers runs on Ray: pip install 'invdyn[ray]'"
        ) from None
    return ray


class _Labeller:
    """One worker: a checkpoint and a dataset, loaded once, and the units it labels."""

    def __init__(
        self, checkpoint_dir: str, dataset_path: str, batch_size: int, num_threads: int
    ) -> None:
        from invdyn.learn.checkpoint import load_checkpoint
        from invdyn.learn.datasets import read_dataset
        from invdyn.learn.units import checkpoint_device

        self.model = load_checkpoint(checkpoint_dir, device=checkpoint_device(checkpoint_dir)).model
        self.dataset = read_dataset(dataset_path)
        self.batch_size = batch_size
        self.num_threads = num_threads

    def label(self, first: int, stop: int, file: str) -> int:
        """Label episodes ``first .. stop - 1`` into `file`; returns their number."""
        from invdyn.learn.train import deterministic
        from invdyn.learn.units import label_unit

        with deterministic(self.num_threads):
            label_unit(self.model, self.dataset, first, stop, Path(file), self.batch_size)
        return stop - first


def label_units(
    checkpoint_dir: str | os.PathLike[str],
    dataset_path: str | os.PathLike[str],
    units: Sequence[tuple[int, int, Path]],
    *,
    batch_size: int,
    num_threads: int,
    workers: int,
    address: str | None,
    on_done: Callable[[int], None],
    cuda: bool,
) -> None:
    """Label `units` (first episode, stop, unit file) on `workers` Ray actors.

    Args:
      checkpoint_dir, dataset_path: as `invdyn.learn.label.label_dataset`.
      units: the units to label, each saved to its file.
      batch_size: windows per forward pass.
      num_threads: torch CPU threads of every actor (the driver's, for identical bits).
      workers: number of actors, >= 1.
      address: a Ray cluster to join, or None for a running or a new local instance.
      on_done: called with the number of episodes of each finished unit.
      cuda: the model runs on CUDA: actors ask for GPUs where the cluster has them.
    """
    if not units:
        return
    ray = _ray()
    started = not ray.is_initialized()
    if started:
        # joins the cluster at `address`, or one that is running (RAY_ADDRESS, `ray start`),
        # or starts a local instance of all the cores
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except ValueError as error:  # an address of a form this Ray cannot join
            raise InputError(f"Ray cannot join {address!r}: {error}") from None
    actors: list[Any] = []
    try:
        resources = ray.cluster_resources()
        count = min(workers, len(units), max(1, int(resources.get("CPU", 1))))
        if count < min(workers, len(units)):
            warn(
                f"{workers} workers asked for, but the Ray cluster has {count} CPUs: "
                f"labelling on {count}"
            )
        share = _gpu_share(float(resources.get("GPU", 0.0)) if cuda else 0.0, count)
        remote = ray.remote(num_cpus=1, num_gpus=share)(_Labeller)
        arguments = (
            str(Path(checkpoint_dir).resolve()),
            str(Path(dataset_path).resolve()),
            batch_size,
            num_threads,
        )
        actors = _started(ray, [remote.remote(*arguments) for _ in range(count)])
        pool = ray.util.ActorPool(actors)
        work = [(first, stop, str(Path(file).resolve())) for first, stop, file in units]
        for episodes in pool.map_unordered(lambda actor, unit: actor.label.remote(*unit), work):
            on_done(episodes)
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()


def _gpu_share(gpus: float, workers: int) -> float:
    """The GPUs each of `workers` actors asks for: an equal share of whole GPUs that packs
    (1 / ceil(workers / GPUs): two GPUs and three workers give halves, not two thirds), at most
    one each; a share of a fractional GPU."""
    if gpus <= 0:
        return 0.0
    if gpus < 1:
        return gpus / workers
    return 1.0 / math.ceil(workers / math.floor(gpus))


def _started(ray: Any, actors: list[Any]) -> list[Any]:
    """The actors that the cluster has placed within `START_TIMEOUT` seconds, the others
    killed; `InputError` when none could start."""
    readiness = {actor.__ray_ready__.remote(): actor for actor in actors}
    ready, pending = ray.wait(list(readiness), num_returns=len(actors), timeout=START_TIMEOUT)
    started = [readiness[ref] for ref in ready]
    for ref in pending:
        ray.kill(readiness[ref])
    if not started:
        raise InputError(
            f"no Ray worker could start within {START_TIMEOUT:g} s: the cluster has no free "
            "CPU (or GPU share) for one"
        )
    if pending:
        warn(
            f"{len(pending)} of {len(actors)} Ray workers could not start within "
            f"{START_TIMEOUT:g} s; labelling on {len(started)}"
        )
    return started
