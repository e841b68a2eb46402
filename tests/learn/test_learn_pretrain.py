"""The inverse dynamics loss as an auxiliary objective makes an encoder see what is controlled.

The scene: two dim blobs, each moved by its action every frame (x_{t+1} = x_t + 1.5 a_t,
reflected at the borders), and a large bright blob that wanders at random, uncontrolled. An
autoencoder of four keypoints spends them on the bright blob; with the IDM loss beside the
reconstruction, the same encoder locates the controlled blobs, and a linear probe reads their
positions from its features.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("av")

from invdyn import InputError
from invdyn.learn.pretrain import (
    PretrainConfig,
    encoder_features,
    pretrain_encoder,
    probe,
)

SIZE = 24


def scene(count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per episode (frames (T, SIZE, SIZE, 3), actions (T, 2), controlled positions (T, 2))."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:SIZE, 0:SIZE]
    episodes = []
    for _ in range(count):
        controlled, wanderer = rng.uniform(6, SIZE - 6, 2), rng.uniform(6, SIZE - 6, 2)
        actions = rng.uniform(-1, 1, (40, 2))
        images, positions = [], []
        for action in actions:
            image = np.zeros((SIZE, SIZE, 3))
            for k, row in enumerate((0.3, 0.7)):
                distance = (x - controlled[k]) ** 2 + (y - row * SIZE) ** 2
                image[..., k] += 120 * np.exp(-distance / 3)
            distance = (x - wanderer[0]) ** 2 + (y - wanderer[1]) ** 2
            image += 255 * np.exp(-distance / 12)[..., None]
            images.append(np.clip(image, 0, 255).astype(np.uint8))
            positions.append(controlled.copy())
            controlled = controlled + 1.5 * action
            controlled = np.where(
                controlled < 4, 8 - controlled,
                np.where(controlled > SIZE - 4, 2 * (SIZE - 4) - controlled, controlled),
            )  # fmt: skip
            wanderer = np.clip(wanderer + rng.normal(0, 2.0, 2), 3, SIZE - 3)
        episodes.append((np.array(images), actions, np.array(positions)))
    return episodes


def test_the_idm_loss_makes_features_of_the_controlled_state():
    train, held = scene(20, 0), scene(8, 1)
    pairs = [(frames, actions) for frames, actions, _ in train]
    scores = {}
    for weight in (0.0, 1.0):
        config = PretrainConfig(keypoints=4, idm_weight=weight, steps=300)
        encoder = pretrain_encoder(pairs, config)
        features = [np.concatenate([encoder_features(encoder, f) for f, *_ in part])
                    for part in (train, held)]  # fmt: skip
        targets = [np.concatenate([p for *_, p in part]) for part in (train, held)]
        scores[weight] = probe(features[0], targets[0], features[1], targets[1]).mean()
    # measured: reconstruction alone -0.6 (worse than the mean), with the IDM loss 0.9995
    assert scores[1.0] > 0.9
    assert scores[1.0] > scores[0.0] + 0.5


def test_pretraining_bad_input():
    frames, actions, _ = scene(1, 0)[0]
    with pytest.raises(InputError, match="non-empty"):
        pretrain_encoder([])
    with pytest.raises(InputError, match=r"actions must be finite, of shape \(40, 2\)"):
        pretrain_encoder([(frames, actions[:-1])])
    with pytest.raises(InputError, match="an action needs two"):
        pretrain_encoder([(frames[:1], actions[:1])])
    with pytest.raises(InputError, match="uint8"):
        pretrain_encoder([(frames.astype(float), actions)])
    with pytest.raises(InputError, match="idm_weight"):
        PretrainConfig(idm_weight=-1.0)
