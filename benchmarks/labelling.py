"""Labelling throughput of a model of frames: frames labelled per second, on the CPU and CUDA.

Labelling a video runs the frame model of `invdyn.learn.label` over every window of an
episode; each window labels one frame. This measures `invdyn.learn.units.predict`, the loop
`invdyn label` runs (frames that windows share encoded once, `IMAGE_EVAL_BATCH` windows per
forward pass), on one long episode of random frames, for a model of frames alone with the
default encoder and a window of five frames (``context=2``, ``future=2``); throughput does not
depend on the weights, so the model is freshly initialised. On CUDA the frames are encoded in
bfloat16 (``model.mixed_precision``). Decoding the mp4 file is measured apart, on the CPU,
because PyAV decodes there whatever the model runs on, on a square crossing a plain background
(a scene that compresses as rendered ones do).

Figures are medians over repeats; the CUDA rows print their ratio to the 5,000 frames per
second at 128x128 that one H200 should reach. Without CUDA only the CPU rows are printed, with
a note. Needs the ``learn`` extra::

    python benchmarks/labelling.py            # 64x64 and 128x128
    python benchmarks/labelling.py --quick    # fewer frames and repeats
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from invdyn.learn.config import ModelConfig
from invdyn.learn.datasets import decode_video, encode_video
from invdyn.learn.keys import OBS_IMAGE_PREFIX
from invdyn.learn.models import InverseDynamicsModel, NormStats
from invdyn.learn.units import Inputs, predict

SIZES = (64, 128)
TARGET_FPS = 5000.0
CAMERA = "cam"


def frame_model(device: torch.device) -> InverseDynamicsModel:
    """A freshly initialised model of one camera's frames alone, two actions."""
    config = ModelConfig(cameras=CAMERA, state=False, context=2, future=2)
    ones, zeros = np.ones(2), np.zeros(2)
    stats = NormStats(zeros, ones, zeros, ones, zeros, ones)
    return InverseDynamicsModel(config, stats).to(device).eval()


def labelling_rate(model: InverseDynamicsModel, frames: np.ndarray, repeats: int) -> float:
    """Median frames labelled per second over `repeats` runs of `predict` on `frames`."""
    inputs = Inputs([len(frames)], None, {OBS_IMAGE_PREFIX + CAMERA: frames})
    device = next(model.parameters()).device
    predict(model, inputs, 4096)  # warm-up: kernels, allocator
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        predict(model, inputs, 4096)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return len(frames) / statistics.median(times)


def moving_square(count: int, size: int) -> np.ndarray:
    """(count, size, size, 3) uint8 frames of a square crossing a grey background, a scene
    that compresses as rendered ones do (random frames would not)."""
    frames = np.full((count, size, size, 3), 200, dtype=np.uint8)
    side = size // 8
    for k in range(count):
        row, col = (k * 3) % (size - side), (k * 5) % (size - side)
        frames[k, row : row + side, col : col + side] = (30, 90, 180)
    return frames


def decoding_rate(frames: np.ndarray, repeats: int) -> float:
    """Median frames decoded per second from an mp4 file of `frames` (PyAV, CPU)."""
    with tempfile.TemporaryDirectory() as folder:
        path = encode_video(Path(folder) / "clip.mp4", frames, 30.0)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            decode_video(path)
            times.append(time.perf_counter() - start)
    return len(frames) / statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer frames and repeats")
    args = parser.parse_args()
    repeats = 3 if args.quick else 5
    rng = np.random.default_rng(0)
    devices = [torch.device("cpu")]
    if torch.cuda.is_available():
        devices.append(torch.device("cuda"))
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} CPU threads")  # fmt: skip
    for device in devices:
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
        print(f"\n{name}")
        model = frame_model(device)
        for size in SIZES:
            count = (1000 if args.quick else 2000) if device.type == "cpu" else 65536
            frames = rng.integers(0, 256, (count, size, size, 3), dtype=np.uint8)
            rate = labelling_rate(model, frames, repeats)
            line = f"  {size}x{size}: {rate:10.0f} frames/s labelled"
            if device.type == "cuda":
                line += f"  ({rate / TARGET_FPS:.2f} of the {TARGET_FPS:.0f} target)"
            print(line)
    if len(devices) == 1:
        print("\nno CUDA device here: the GPU rows (bfloat16 frames, target 5,000 frames/s at "
              "128x128 on one H200) need one")  # fmt: skip
    print("\nmp4 decoding (PyAV, CPU, one thread per file)")
    for size in SIZES:
        frames = moving_square(300 if args.quick else 1000, size)
        print(f"  {size}x{size}: {decoding_rate(frames, repeats):10.0f} frames/s decoded")


if __name__ == "__main__":
    main()
