"""Training speed of a model of frames: epochs with the frame encoders plain and compiled.

Trains the model of frames that the README's Panda run uses (two cameras, ``context=8``,
``future=8``, 32 keypoints, the state estimate) on a dataset of random frames written to a
temporary folder, as it is and with ``train.compile=true``, in two rounds of opposite order
(plain, compiled, compiled, plain: a load that changes during the run weighs on both alike),
and prints the median epoch time of each (first epochs apart: they hold the compiling) and
their ratio. Speed does not depend on what the frames show. Needs the ``learn`` extra::

    python benchmarks/training.py            # 64x64 frames, 40 episodes, 4 epochs a run
    python benchmarks/training.py --quick    # 20 episodes, 2 epochs a run
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from invdyn.learn.config import Config, ModelConfig, TrainConfig
from invdyn.learn.datasets import Dataset, Episode, read_dataset, write_dataset
from invdyn.learn.train import train

CAMERAS = ("front", "hand")
SIZE = 64
STEPS = 101
FPS = 50.0


def random_dataset(path: Path, episodes: int, rng: np.random.Generator) -> Dataset:
    """`episodes` episodes of `STEPS` random states, actions and frames of two cameras."""
    data = [Episode(rng.normal(size=(STEPS, 18)), rng.normal(size=(STEPS, 9)),
                    np.arange(STEPS) / FPS) for _ in range(episodes)]  # fmt: skip
    videos = {
        camera: [rng.integers(0, 256, (STEPS, SIZE, SIZE, 3), dtype=np.uint8) for _ in data]
        for camera in CAMERAS
    }
    names = {
        "state_names": [f"x{k}" for k in range(18)],
        "action_names": [f"a{k}" for k in range(9)],
    }
    return read_dataset(write_dataset(path, data, fps=FPS, videos=videos, **names))


def epoch_times(dataset: Dataset, config: Config, out: Path) -> list[float]:
    """Seconds of each epoch of training `config` on `dataset`."""
    stamps = [time.perf_counter()]

    def stamp(epoch: int, entry: Mapping[str, float]) -> None:
        stamps.append(time.perf_counter())

    train(dataset, config, out, progress=False, callback=stamp)
    return list(np.diff(stamps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer episodes and epochs")
    args = parser.parse_args()
    episodes, epochs = (20, 2) if args.quick else (40, 4)
    model = ModelConfig(cameras=",".join(CAMERAS), state=False, context=8, future=8,
                        keypoints=32, state_weight=1.0)  # fmt: skip
    plain = Config(model=model, train=TrainConfig(epochs=epochs, val_fraction=0.1))
    compiled = dataclasses.replace(plain, train=dataclasses.replace(plain.train, compile=True))
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} CPU threads, "
          f"{'CUDA' if torch.cuda.is_available() else 'CPU'} training")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        dataset = random_dataset(Path(folder) / "data", episodes, np.random.default_rng(0))
        print(f"{episodes} episodes of {STEPS} steps, windows of {model.window} frames of two "
              f"{SIZE}x{SIZE} cameras")  # fmt: skip
        times: dict[str, list[float]] = {"plain": [], "compiled": []}
        order = ["plain", "compiled", "compiled", "plain"]
        for run, name in enumerate(order):
            config = compiled if name == "compiled" else plain
            epochs_run = epoch_times(dataset, config, Path(folder) / f"{run}-{name}")
            times[name] += epochs_run[1:]
            print(f"  {name:8s}: first epoch {epochs_run[0]:6.1f} s, then "
                  f"{statistics.median(epochs_run[1:]):6.1f} s")  # fmt: skip
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"compiled / plain epoch time: {medians['compiled'] / medians['plain']:.2f} "
          f"(medians of {len(times['plain'])} epochs each)")  # fmt: skip


if __name__ == "__main__":
    main()
