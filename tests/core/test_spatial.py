"""Small spatial helpers against numpy and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import invdyn
from conftest import assert_close
from invdyn.spatial import cross, quat_exp, quat_log, rotation_vector


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


def test_quaternion_log_and_exp_match_scipy_and_invert_each_other():
    """log of quaternions of any norm, either sign, is SciPy's rotation vector of the rotation
    they point to, and exp takes it back to the unit quaternion of w >= 0; a zero or NaN
    quaternion is refused."""
    rng = np.random.default_rng(7)
    unit = rng.normal(size=(50, 4))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    unit[:3] = [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, -1.0], [1.0, 0.0, 0.0, 0.0]]
    scaled = unit * rng.uniform(0.1, 10.0, size=(50, 1)) * rng.choice([-1.0, 1.0], size=(50, 1))
    expected = Rotation.from_quat(unit).as_rotvec()
    # at pi, +axis and -axis are the same rotation
    logged = quat_log(scaled)
    at_pi = np.isclose(np.linalg.norm(expected, axis=1), np.pi)
    assert_close(np.abs(logged[at_pi]), np.abs(expected[at_pi]), rtol=1e-12)
    assert_close(logged[~at_pi], expected[~at_pi], rtol=1e-12)
    positive = np.where(unit[:, 3:] < 0.0, -unit, unit)
    assert_close(quat_exp(logged[~at_pi]), positive[~at_pi], rtol=1e-12)
    for bad in (np.zeros(4), np.array([np.nan, 0.0, 0.0, 1.0])):
        with pytest.raises(invdyn.InputError, match="quat"):
            quat_log(bad)
    with pytest.raises(invdyn.InputError, match=r"quat must have shape \(\.\.\., 4\), got \(3,\)"):
        quat_log(np.zeros(3))
