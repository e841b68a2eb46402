"""Self-supervised visual encoders, with the inverse dynamics loss as an auxiliary objective.

`pretrain_encoder` fits the keypoint encoder of a model of frames (the per-frame part of
`invdyn.learn.models.FrameEncoder`) as a deep spatial autoencoder (Finn et al. 2016): a linear
decoder reconstructs every frame, grey and downsampled to `RECONSTRUCTION` x `RECONSTRUCTION`
pixels, from its keypoints. With ``idm_weight > 0`` the inverse dynamics loss joins it: from
the keypoints of frames ``t`` and ``t + 1`` (the encoder's temporal convolution and a linear
head) the normalised action ``a_t``, in mean squared error. Reconstruction spends the keypoints
on whatever covers the most pixels, a distractor as readily as the robot; the inverse dynamics
loss pulls them to what the actions move, so that the features then tell the controllable
state (`probe` measures it: ridge regression from features to, say, joint positions).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import NDArray
from torch import nn

from invdyn._arrays import check_count, spread
from invdyn.errors import InputError
from invdyn.learn.datasets import check_frames
from invdyn.learn.models import IMAGE_FEATURES, FrameEncoder

Float = NDArray[np.float64]
Frames = NDArray[np.uint8]

RECONSTRUCTION = 12
"""Side in pixels of the grey image the autoencoder reconstructs."""


@dataclasses.dataclass(frozen=True)
class PretrainConfig:
    """How `pretrain_encoder` fits an encoder.

    Attributes:
      encoder: widths (`invdyn.learn.config.ModelConfig.encoder`).
      keypoints: keypoints per frame.
      idm_weight: weight of the inverse dynamics loss beside the reconstruction's (0: none).
      steps: optimiser steps (Adam).
      batch_size: frame pairs per step.
      lr: learning rate.
      seed: seeds the initialisation and the batches.
    """

    encoder: tuple[int, ...] = (16, 16)
    keypoints: int = 8
    idm_weight: float = 1.0
    steps: int = 600
    batch_size: int = 64
    lr: float = 3e-3
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.encoder:
            raise InputError(f"encoder needs at least one width, got {self.encoder!r}")
        for width in self.encoder:
            check_count("encoder width", width)
        for name in ("keypoints", "steps", "batch_size"):
            check_count(name, getattr(self, name))
        check_count("seed", self.seed, minimum=0)
        if not (np.isfinite(self.idm_weight) and self.idm_weight >= 0):
            raise InputError(f"idm_weight must be a number >= 0, got {self.idm_weight!r}")
        if not (np.isfinite(self.lr) and self.lr > 0):
            raise InputError(f"lr must be a number > 0, got {self.lr!r}")


class _Pretext(nn.Module):
    """The encoder and the heads of its two objectives."""

    def __init__(self, config: PretrainConfig, n_action: int) -> None:
        super().__init__()
        self.encoder = FrameEncoder(config.encoder, config.keypoints, window=2)
        self.decoder = nn.Linear(2 * config.keypoints, RECONSTRUCTION**2)
        self.action = nn.Linear(IMAGE_FEATURES, n_action)


def pretrain_encoder(
    episodes: Sequence[tuple[Frames, Float]], config: PretrainConfig | None = None
) -> FrameEncoder:
    """An encoder fitted to the frames (and, with ``config.idm_weight``, the actions) of
    episodes; see the module docstring.

    Args:
      episodes: per episode ``(frames (T, h, w, 3) uint8, actions (T, n_action))``, T >= 2,
        one frame size for all.
      config: the fit (None: `PretrainConfig()`).

    Returns:
      The encoder, in eval mode; `encoder_features` gives its features.

    Raises:
      InputError: no episodes, frames or actions of the wrong shape or not finite, or
        episodes of other frame sizes.
    """
    config = config or PretrainConfig()
    frames, actions = _checked(episodes)
    # the pairs (t, t + 1) inside an episode
    lengths = np.array([len(f) for f in frames])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pairs = np.concatenate([s + np.arange(n - 1) for s, n in zip(starts, lengths)])
    images = _images(np.concatenate(frames))
    grey = F.adaptive_avg_pool2d(images.mean(1, keepdim=True), RECONSTRUCTION).flatten(1)
    targets = np.concatenate(actions)
    scale = spread(targets)
    target = torch.as_tensor((targets - targets.mean(0)) / scale, dtype=torch.float32)

    rng = np.random.default_rng(config.seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = _Pretext(config, targets.shape[1])
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    for _ in range(config.steps):
        t = torch.as_tensor(rng.choice(pairs, config.batch_size))
        shared, window_frames = torch.unique(torch.stack([t, t + 1], 1), return_inverse=True)
        loss = F.mse_loss(model.decoder(model.encoder.keypoints(images[shared])), grey[shared])
        if config.idm_weight:
            features, _ = model.encoder(images[shared], window_frames)
            loss = loss + config.idm_weight * F.mse_loss(model.action(features), target[t])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model.encoder.eval()


@torch.no_grad()
def encoder_features(encoder: FrameEncoder, frames: Frames) -> Float:
    """(T, 2 K) the keypoints of each of the (T, h, w, 3) uint8 `frames`."""
    images = _images(check_frames("frames", frames))
    return encoder.keypoints(images).double().numpy()


def probe(
    train_features: Float,
    train_targets: Float,
    test_features: Float,
    test_targets: Float,
    *,
    ridge: float = 1e-3,
) -> Float:
    """(n_target,) held-out R^2 of ridge regression from features (N, n_feature) to targets
    (N, n_target), fitted on the training rows and scored on the test rows."""

    def design(features: Float) -> Float:
        return np.column_stack([features, np.ones(len(features))])

    a = design(np.asarray(train_features, dtype=np.float64))
    weights = np.linalg.solve(a.T @ a + ridge * np.eye(a.shape[1]), a.T @ train_targets)
    error = design(np.asarray(test_features, dtype=np.float64)) @ weights - test_targets
    return 1.0 - np.mean(error**2, axis=0) / np.var(test_targets, axis=0)


def _images(frames: Frames) -> torch.Tensor:
    """(N, 3, h, w) float images in [-0.5, 0.5] of (N, h, w, 3) uint8 frames."""
    return torch.as_tensor(frames).permute(0, 3, 1, 2).float() / 255.0 - 0.5


def _checked(episodes: Sequence[tuple[Frames, Float]]) -> tuple[list[Frames], list[Float]]:
    """The frames and actions of `episodes`, checked."""
    if not isinstance(episodes, Sequence) or not episodes:
        raise InputError("episodes must be a non-empty sequence of (frames, actions) pairs")
    frames: list[Frames] = []
    actions: list[Float] = []
    for i, (f, a) in enumerate(episodes):
        f = check_frames(f"episodes[{i}] frames", f)
        a = np.asarray(a, dtype=np.float64)
        if f.shape[1:] != (frames or [f])[0].shape[1:]:
            raise InputError(
                f"episodes[{i}] frames are {f.shape[1:]}, episode 0's {frames[0].shape[1:]}"
            )
        if len(f) < 2:
            raise InputError(f"episodes[{i}] has {len(f)} frame; an action needs two")
        width = actions[0].shape[1] if actions else a.shape[-1]
        if a.ndim != 2 or a.shape != (len(f), width) or not np.all(np.isfinite(a)):
            raise InputError(
                f"episodes[{i}] actions must be finite, of shape ({len(f)}, {width}), got {a.shape}"
            )
        frames.append(f)
        actions.append(a)
    return frames, actions
