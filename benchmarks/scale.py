"""Labelling throughput on several workers: frames per second of the whole labelling job.

The job is ``invdyn label``'s (`invdyn.learn.label.label_dataset`), timed in one process and
on Ray workers.

The job labels an action-free dataset of one camera's 64x64 frames (a square crossing a plain
background, 40 episodes of 200 frames, written as mp4) with a freshly initialised model of
frames (the default encoder, a window of five frames: throughput does not depend on the
weights). The rows:

* ``1 process``: the job in this process (on CUDA where there is one);
* ``N Ray workers, CPU``: the units shared among N Ray actors on the CPU, for N = 1, 2 and,
  on a machine with more cores, all of them;
* on a CUDA machine, ``1 process, CUDA`` is the single GPU's row.

Each figure is the whole job, reading the frames and writing the labelled copy (its mp4 files
copied as they are) included, median of the repeats, with Ray started once beforehand. The labelled
copies are checked to be identical to the one-process copy. Needs the ``learn`` and ``ray``
extras::

    python benchmarks/scale.py            # 40 episodes, 3 repeats
    python benchmarks/scale.py --quick    # 12 episodes, 1 repeat
"""

from __future__ import annotations

import argparse
import dataclasses
import filecmp
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import ray
import torch

from invdyn.learn.checkpoint import save_checkpoint
from invdyn.learn.config import preset
from invdyn.learn.datasets import Episode, write_dataset
from invdyn.learn.label import label_dataset
from invdyn.learn.models import InverseDynamicsModel, NormStats

CAMERA = "cam"
SIZE = 64
FRAMES = 200


def moving_square(count: int, seed: int) -> np.ndarray:
    """(count, SIZE, SIZE, 3) uint8 frames of a square crossing a grey background."""
    frames = np.full((count, SIZE, SIZE, 3), 200, dtype=np.uint8)
    side, rng = SIZE // 8, np.random.default_rng(seed)
    speed = rng.integers(1, 6, size=2)
    for k in range(count):
        row, col = (k * speed) % (SIZE - side)
        frames[k, row : row + side, col : col + side] = (30, 90, 180)
    return frames


def action_free_videos(root: Path, episodes: int) -> Path:
    """A dataset of `episodes` episodes of frames alone."""
    videos = [moving_square(FRAMES, seed) for seed in range(episodes)]
    timestamps = np.arange(FRAMES) / 30.0
    return write_dataset(
        root / "videos",
        [Episode(None, None, timestamps, task="watch") for _ in videos],
        fps=30.0,
        videos={CAMERA: videos},
    )


def frame_checkpoint(root: Path, device: str) -> Path:
    """A checkpoint of a freshly initialised model of frames, run on `device` with one CPU
    thread."""
    base = preset("default")
    config = dataclasses.replace(
        base,
        model=dataclasses.replace(base.model, cameras=CAMERA, state=False, context=2, future=2),
        # one torch thread per process: a worker's predictions, and their bits, do not depend
        # on how many share the machine
        train=dataclasses.replace(base.train, device=device, num_threads=1),
    )
    ones, zeros = np.ones(2), np.zeros(2)
    stats = NormStats(zeros, ones, zeros, ones, zeros, ones)
    model = InverseDynamicsModel(config.model, stats)
    return save_checkpoint(root / f"checkpoint-{device}", model=model, config=config, metrics={})


def job_rate(
    checkpoint: Path,
    data: Path,
    out: Path,
    frames: int,
    workers: int,
    address: str | None,
    repeats: int,
) -> float:
    """Median frames per second of the whole labelling job; `address` puts it on Ray even
    with one worker."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        label_dataset(
            checkpoint,
            data,
            out,
            workers=workers,
            address=address,
            overwrite=True,
            batch_size=1024,
        )
        times.append(time.perf_counter() - start)
    return frames / statistics.median(times)


def same_output(a: Path, b: Path) -> bool:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    return all(filecmp.cmp(a / f, b / f, shallow=False) for f in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="12 episodes, 1 repeat")
    args = parser.parse_args()
    episodes, repeats = (12, 1) if args.quick else (40, 3)
    cores = os.cpu_count() or 1
    cuda = torch.cuda.is_available()
    print(
        f"python {platform.python_version()}, torch {torch.__version__}, ray {ray.__version__}, "
        f"{cores} cores{', ' + torch.cuda.get_device_name() if cuda else ''}"
    )
    print(f"labelling {episodes} episodes of {FRAMES} frames, {SIZE}x{SIZE}, one camera")
    ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        data = action_free_videos(root, episodes)
        frames = episodes * FRAMES
        cpu = frame_checkpoint(root, "cpu")
        reference = root / "one"
        rows: list[tuple[str, Path, int, str | None]] = [("1 process, CPU", cpu, 1, None)]
        if cuda:
            rows.append(("1 process, CUDA", frame_checkpoint(root, "cuda"), 1, None))
        for n in sorted({1, 2, cores}):
            rows.append((f"{n} Ray worker{'s' if n > 1 else ''}, CPU", cpu, n, "auto"))
        base = 0.0
        for name, checkpoint, workers, address in rows:
            out = root / "out" if base else reference
            rate = job_rate(checkpoint, data, out, frames, workers, address, repeats)
            base = base or rate
            check = ""
            if out != reference and "CUDA" not in name:
                check = f"  same output as 1 process: {same_output(out, reference)}"
            print(f"  {name:22s} {rate:8.0f} frames/s  {rate / base:5.2f}x{check}", flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main()
