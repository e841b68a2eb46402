"""Small spatial helpers against numpy and scipy."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from invdyn.spatial import cross, rotation_vector


def test_cross_broadcasts_as_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 4, 3)), rng.normal(size=(4, 3))
    assert np.allclose(cross(a, b), np.cross(a, b), rtol=0, atol=1e-14)
    assert cross(a[0, 0], b[0]).shape == (3,)


def test_rotation_vector_is_scipys():
    """Random rotations, tiny ones and ones within 1e-9 of a half turn."""
    rng = np.random.default_rng(1)
    directions = rng.normal(size=(3000, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    angles = np.concatenate(
        [
            rng.uniform(0.0, np.pi, 1000),
            10.0 ** rng.uniform(-12, -3, 1000),
            np.pi - 10.0 ** rng.uniform(-9, -1, 1000),
        ]
    )
    for vector in directions * angles[:, None]:
        ours = rotation_vector(Rotation.from_rotvec(vector).as_matrix())
        assert np.abs(ours - vector).max() < 1e-7, vector
    assert np.array_equal(rotation_vector(np.eye(3)), np.zeros(3))


def test_bad_shapes_are_named():
    import pytest

    with pytest.raises(ValueError, match=r"cross needs \(\.\.\., 3\) arrays"):
        cross(np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match=r"needs a \(3, 3\) rotation matrix"):
        rotation_vector(np.eye(4))
