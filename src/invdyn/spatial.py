"""Spatial (6-D) algebra conventions, and the rotation helpers that the loaders and the joint
types share: rotation matrices, and quaternions with their exponential and logarithm on SO(3).

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
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import as_finite_array
from invdyn.errors import InputError

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
    one = quat.size == 4
    x, y, z, w = quat.ravel().tolist() if one else np.moveaxis(quat, -1, 0)
    rows = (
        (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    )
    if one:
        return np.array(rows).reshape((*quat.shape[:-1], 3, 3))
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


# quaternions [x, y, z, w] with any leading dimensions


def xyzw_to_wxyz(quat: ArrayLike) -> Float:
    """(..., 4) ``[w, x, y, z]`` quaternions (MuJoCo's order) of ``[x, y, z, w]`` ones."""
    return np.roll(np.asarray(quat, dtype=np.float64), 1, axis=-1)


def wxyz_to_xyzw(quat: ArrayLike) -> Float:
    """(..., 4) ``[x, y, z, w]`` quaternions of ``[w, x, y, z]`` ones (MuJoCo's order)."""
    return np.roll(np.asarray(quat, dtype=np.float64), -1, axis=-1)


def quat_multiply(a: ArrayLike, b: ArrayLike) -> Float:
    """(..., 4) Hamilton product ``a b`` of ``[x, y, z, w]`` quaternions.

    Args:
      a: (..., 4) left factors.
      b: (..., 4) right factors.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    va, wa, vb, wb = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    vector = wa * vb + wb * va + np.cross(va, vb)
    scalar = wa * wb - np.sum(va * vb, axis=-1, keepdims=True)
    return np.concatenate([vector, scalar], axis=-1)


def quat_conjugate(quat: ArrayLike) -> Float:
    """(..., 4) conjugates (inverses of unit quaternions) of ``[x, y, z, w]`` quaternions."""
    quat = np.asarray(quat, dtype=np.float64)
    return np.concatenate([-quat[..., :3], quat[..., 3:]], axis=-1)


def quat_exp(omega: ArrayLike) -> Float:
    """(..., 4) unit quaternion ``[x, y, z, w]`` of the rotation vector `omega` (exp on SO(3)).

    Args:
      omega: (..., 3) rotation vectors, angle times unit axis.
    """
    omega = np.asarray(omega, dtype=np.float64)
    theta = np.linalg.norm(omega, axis=-1, keepdims=True)
    # sin(θ/2) / θ, smooth at zero
    half_sinc = 0.5 * np.sinc(theta / (2.0 * np.pi))
    return np.concatenate([half_sinc * omega, np.cos(theta / 2.0)], axis=-1)


def quat_log(quat: ArrayLike) -> Float:
    """(..., 3) rotation vector of quaternions (log on SO(3)), angle in [0, pi].

    Args:
      quat: (..., 4) quaternions ``[x, y, z, w]``, of any norm above zero (each read as the
        unit quaternion along it); ``q`` and ``-q`` give the same result.

    Raises:
      InputError: quaternions of another shape, not finite or of zero norm (which have no
        rotation).
    """
    given = as_finite_array("quat", quat, 4)
    length = np.linalg.norm(given, axis=-1, keepdims=True)
    if np.any(length == 0.0):
        raise InputError("quat holds a quaternion of zero norm, which has no rotation")
    # the unit quaternion of the shortest rotation: the representative with w >= 0
    unit = given / np.where(given[..., 3:] < 0.0, -length, length)
    vector, w = unit[..., :3], unit[..., 3:]
    norm = np.linalg.norm(vector, axis=-1, keepdims=True)
    theta = 2.0 * np.arctan2(norm, w)
    # θ / sin(θ/2), smooth at zero: 2 atan(n / w) / n ~ (2 / w) (1 - (n / w)^2 / 3)
    small = norm < 1e-6
    exact = theta / np.where(small, 1.0, norm)
    ratio = norm / np.where(small, w, 1.0)
    series = 2.0 / np.where(small, w, 1.0) * (1.0 - ratio**2 / 3.0)
    return np.where(small, series, exact) * vector


def so3_left_jacobian(omega: Float) -> Float:
    """(..., 3, 3) ``V(ω) = I + (1 - cos θ)/θ² [ω] + (θ - sin θ)/θ³ [ω]²``, the translation part
    of the exponential on SE(3), of (..., 3) rotation vectors."""
    theta = np.linalg.norm(omega, axis=-1)[..., None, None]
    k = skew(omega)
    a = 0.5 * np.sinc(theta / (2.0 * np.pi)) ** 2
    small = theta < 1e-2
    safe = np.where(small, 1.0, theta)
    b = np.where(
        small, 1.0 / 6.0 - theta**2 / 120.0 + theta**4 / 5040.0, (safe - np.sin(safe)) / safe**3
    )
    return np.eye(3) + a * k + b * (k @ k)


def so3_left_jacobian_inverse(omega: Float) -> Float:
    """(..., 3, 3) ``V(ω)^-1 = I - [ω]/2 + (1 - θ sin θ / (2 (1 - cos θ)))/θ² [ω]²`` of (..., 3)
    rotation vectors of angle θ < 2π."""
    theta = np.linalg.norm(omega, axis=-1)[..., None, None]
    k = skew(omega)
    small = theta < 1e-2
    safe = np.where(small, 1.0, theta)
    exact = (1.0 - safe * np.sin(safe) / (2.0 * (1.0 - np.cos(safe)))) / safe**2
    c = np.where(small, 1.0 / 12.0 + theta**2 / 720.0 + theta**4 / 30240.0, exact)
    return np.eye(3) - 0.5 * k + c * (k @ k)
