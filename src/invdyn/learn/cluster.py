"""Labelling on a Ray cluster: the units of `invdyn.learn.label` shared among Ray actors.

`label_units` starts one actor per worker, each of which loads the checkpoint and opens the
dataset once, then labels the units it is handed and saves each one, atomically, into the
labelling's work directory, as `invdyn.learn.label` does in one process. Units go to whichever
actor is free; the driver's progress bar counts the episodes of finished units, from every
worker. The predictions of a unit do not depend on which process computed it (each actor runs
with the driver's torch thread count and deterministic algorithms), so the merged dataset is the
one a single process writes, bit for bit, and a killed job resumes with the units it lacks.

Ray starts a local instance unless one is running or an ``address`` is given (``"auto"`` or
``"ray://host:10001"`` joins an existing cluster; the checkpoint, the dataset and the output
must then be on a filesystem that every node sees). Actors ask for one CPU each, and for a share
of the GPUs (at most one each) when the model runs on CUDA and the cluster has GPUs.

Ray is an optional extra: ``pip install 'invdyn[ray]'``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from invdyn.errors import InputError


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
        from invdyn.learn.data import read_dataset
        from invdyn.learn.label import _device

        self.model = load_checkpoint(checkpoint_dir, device=_device(checkpoint_dir)).model
        self.dataset = read_dataset(dataset_path)
        self.batch_size = batch_size
        self.num_threads = num_threads

    def label(self, first: int, stop: int, file: str) -> int:
        """Label episodes ``first .. stop - 1`` into `file`; returns their number."""
        from invdyn.learn.label import _inputs, _predict, _save_unit
        from invdyn.learn.train import _deterministic

        with _deterministic(self.num_threads):
            inputs = _inputs(self.dataset, self.model.config, first, stop)
            unit = _predict(self.model, inputs, self.batch_size)
        _save_unit(Path(file), unit)
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
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address is None:
            # a local instance with room for every worker
            options["num_cpus"] = max(workers, os.cpu_count() or 1)
        ray.init(address=address, **options)
    actors: list[Any] = []
    try:
        gpus = float(ray.cluster_resources().get("GPU", 0.0)) if cuda else 0.0
        remote = ray.remote(num_cpus=1, num_gpus=min(1.0, gpus / workers))(_Labeller)
        arguments = (str(checkpoint_dir), str(dataset_path), batch_size, num_threads)
        actors = [remote.remote(*arguments) for _ in range(min(workers, len(units)))]
        pool = ray.util.ActorPool(actors)
        work = [(first, stop, str(file)) for first, stop, file in units]
        for episodes in pool.map_unordered(lambda actor, unit: actor.label.remote(*unit), work):
            on_done(episodes)
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()
