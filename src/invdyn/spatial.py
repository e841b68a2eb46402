"""Spatial (6-D) algebra conventions and the small rotation helpers that the loaders share.

Conventions, used by every module and kernel of invdyn:

* Spatial vectors are ordered **[angular; linear]** (Featherstone 2008). A spatial velocity is
  ``[omega; v_o]`` with ``v_o`` the velocity of the body-fixed point at the frame origin; a
  spatial force is ``[n_o; f]`` with ``n_o`` the moment about the frame origin.
* A placement of frame B in frame A is a pair ``(R, p)``: ``R`` (3, 3) rotates B coordinates into
  A coordinates and ``p`` (3,) is B's origin in A coordinates. A point ``x_B`` maps to
  ``R @ x_B + p``.
* Quaternions are stored ``[x, y, z, w]`` (Pinocchio's order); MuJoCo's ``[w, x, y, z]`` is
  converted where a MuJoCo array is read or written.
* The free-flyer velocity follows Pinocchio: ``v = [linear, angular]``, both in the base frame.
  Inside the kernels it is reordered to [angular; linear] like every other spatial vector.
* Inertial parameters of a body follow Pinocchio's order
  ``[m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]``, with the rotational inertia
  taken about the body frame origin.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Float = NDArray[np.float64]

# inertias differ from physical ones by round-off up to this, absolute plus relative to the
# largest principal moment (`inertia_doubts`)
INERTIA_ABSOLUTE_TOLERANCE = 1e-12
INERTIA_RELATIVE_TOLERANCE = 1e-9


def inertia_doubts(mass: float, inertia: Float, *, triangle: bool = True) -> list[str]:
    """What is physically doubtful about a rigid body of `mass` and (3, 3) rotational inertia
    about its centre of mass, one phrase per problem: a zero mass with inertia, an inertia that
    is not positive semi-definite, principal moments that break the triangle inequality (unless
    `triangle` is False: for a part of a body, which other parts may complete)."""
    moments = np.linalg.eigvalsh(inertia)
    tolerance = INERTIA_ABSOLUTE_TOLERANCE + INERTIA_RELATIVE_TOLERANCE * np.abs(moments).max()
    doubts = []
    if mass == 0 and np.abs(inertia).max() > tolerance:
        doubts.append("zero mass with a non-zero rotational inertia")
    if moments[0] < -tolerance:
        doubts.append(
            "rotational inertia is not positive semi-definite "
            f"(smallest principal moment {moments[0]:.6g})"
        )
    elif triangle and moments[0] + moments[1] < moments[2] - tolerance:
        doubts.append(
            "principal moments violate the triangle inequality "
            f"({moments[0]:.6g} + {moments[1]:.6g} < {moments[2]:.6g})"
        )
    return doubts


def skew(x: Float) -> Float:
    """(..., 3, 3) matrix ``[x]_x`` such that ``[x]_x @ y = x cross y``.

    Args:
      x: (..., 3) vector.
    """
    x = np.asarray(x, dtype=np.float64)
    zero = np.zeros_like(x[..., 0])
    rows = (
        (zero, -x[..., 2], x[..., 1]),
        (x[..., 2], zero, -x[..., 0]),
        (-x[..., 1], x[..., 0], zero),
    )
    return np.stack([np.stack(r, axis=-1) for r in rows], axis=-2)


def rpy_to_matrix(rpy: Float) -> Float:
    """(3, 3) rotation of URDF roll-pitch-yaw angles: ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``.

    Args:
      rpy: (3,) roll, pitch, yaw in radians.
    """
    roll, pitch, yaw = (float(x) for x in rpy)
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def quaternion_to_matrix(quat: Float) -> Float:
    """(..., 3, 3) rotation of unit quaternions.

    Args:
      quat: (..., 4) quaternions ``[x, y, z, w]``.
    """
    quat = np.asarray(quat, dtype=np.float64)
    # one quaternion (a control step's) in Python floats, a batch in arrays: the same sums
    x, y, z, w = quat.tolist() if quat.ndim == 1 else np.moveaxis(quat, -1, 0)
    rows = (
        (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    )
    if quat.ndim == 1:
        return np.array(rows)
    out = np.empty((*quat.shape[:-1], 3, 3))
    for i, row in enumerate(rows):
        for j, entry in enumerate(row):
            out[..., i, j] = entry
    return out


def axis_angle_to_matrix(axis: Float, angle: float) -> Float:
    """(3, 3) rotation by `angle` about the unit `axis` (Rodrigues' formula).

    Args:
      axis: (3,) unit vector.
      angle: radians.
    """
    k = skew(axis)
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def cross(a: Float, b: Float) -> Float:
    """(..., 3) cross products of (..., 3) arrays, broadcast: ``numpy.cross`` without its axis
    handling, several times faster on the small arrays of a control step."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape[-1:] != (3,) or b.shape[-1:] != (3,):
        raise ValueError(f"cross needs (..., 3) arrays, got {a.shape} and {b.shape}")
    a1, a2, a3 = a[..., 0], a[..., 1], a[..., 2]
    b1, b2, b3 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1], axis=-1)


def rotation_vector(rotation: Float) -> Float:
    """(3,) axis times angle (in [0, pi]) of a (3, 3) rotation matrix: the log map of SO(3).

    Near a half turn the axis comes from the symmetric part, elsewhere from the skew part;
    accurate to about 1e-7 everywhere (scipy agrees; tests/core/test_spatial.py).
    """
    rotation = np.asarray(rotation, dtype=np.float64)
    if rotation.shape != (3, 3):
        raise ValueError(f"rotation_vector needs a (3, 3) rotation matrix, got {rotation.shape}")
    cosine = min(max(0.5 * (np.trace(rotation) - 1.0), -1.0), 1.0)
    angle = float(np.arccos(cosine))
    skew_part = 0.5 * np.array(
        [
            rotation[2, 1] - rotation[1, 2],
            rotation[0, 2] - rotation[2, 0],
            rotation[1, 0] - rotation[0, 1],
        ]
    )
    if angle < 1e-6:
        return skew_part  # sin(angle) / angle = 1 to first order
    if angle < np.pi - 1e-3:
        return angle / np.sin(angle) * skew_part
    # near pi: the symmetric part is cos I + (1 - cos) n n^T; its largest column gives n
    symmetric = 0.5 * (rotation + rotation.T) - cosine * np.eye(3)
    column = symmetric[:, int(np.argmax(np.diag(symmetric)))]
    axis = column / np.linalg.norm(column)
    if axis @ skew_part < 0.0:
        axis = -axis
    return angle * axis
