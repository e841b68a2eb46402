"""The joint-torque regressor: rnea is linear in the inertial parameters.

rnea(q, v, a) = Y(q, v, a) @ p for the parameter vector p of `invdyn.inertial_parameters`.
Stacking Y over many states and solving least squares against (noisy) measured torques
identifies the parameters up to the combinations that never affect the torques (the base
parameters): the estimate differs from p, yet predicts torques on new states.

    python examples/regressor_identification.py
"""

import numpy as np

import invdyn
from invdyn.configuration import random_configuration
from invdyn.io.robots import is_installed

model = invdyn.load("panda" if is_installed("panda") else "double_pendulum")
rng = np.random.default_rng(0)


def states(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = random_configuration(model, rng=rng, shape=n)
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


# the identity, on a batch of random states
p = invdyn.inertial_parameters(model)
q, v, a = states(500)
Y = invdyn.joint_torque_regressor(model, q, v, a)  # (500, nv, 10 nbody + 3 nv)
tau = invdyn.rnea(model, q, v, a)
error = np.max(np.abs(Y @ p - tau))
assert error < 1e-9 * max(1.0, np.max(np.abs(tau))), error

# identification from torques with 0.01 N·m of noise
stacked = Y.reshape(-1, p.size)
rank = np.linalg.matrix_rank(stacked)
measured = tau + 0.01 * rng.normal(size=tau.shape)
estimate, *_ = np.linalg.lstsq(stacked, measured.ravel(), rcond=None)

# the estimate predicts torques on states it has not seen
q, v, a = states(200)
predicted = invdyn.joint_torque_regressor(model, q, v, a) @ estimate
prediction_error = np.sqrt(np.mean((predicted - invdyn.rnea(model, q, v, a)) ** 2))
print(f"{model.name}: {p.size} parameters, {rank} identifiable combinations (base parameters)")
print(f"Y @ p = rnea to {error:.1e}; |estimate - p| = {np.linalg.norm(estimate - p):.2f}")
print(f"RMS torque error of the estimate on new states: {prediction_error:.4f} N·m")
assert prediction_error < 0.01
