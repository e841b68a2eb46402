"""Forward simulation with aba: a double pendulum swinging freely, and its energy.

Semi-implicit (symplectic) Euler: v += dt aba(q, v, 0), then q = q ⊕ v dt. Without friction or
input the total energy, kinetic 1/2 v^T M(q) v plus potential -sum_i m_i g . c_i(q), must stay
nearly constant; the script checks the drift over three seconds.

    python examples/forward_simulation.py
"""

import numpy as np

import invdyn
from invdyn.configuration import integrate

model = invdyn.load("double_pendulum")


def energy(q: np.ndarray, v: np.ndarray) -> float:
    """Kinetic plus potential energy, in joules."""
    kinetic = 0.5 * v @ invdyn.mass_matrix(model, q) @ v
    rotations, origins = invdyn.forward_kinematics(model, q)
    com = origins + np.einsum("bij,bj->bi", rotations, model.body_com)
    potential = -np.sum(model.body_mass * (com @ model.gravity))
    return float(kinetic + potential)


dt, steps = 1e-3, 3000
q, v = np.array([2.0, -1.0]), np.zeros(model.nv)
zero = np.zeros(model.nv)
start = energy(q, v)
drift = 0.0
for step in range(1, steps + 1):
    v = v + dt * invdyn.aba(model, q, v, zero)
    q = integrate(model, q, v, dt)
    if step % 300 == 0:
        drift = max(drift, abs(energy(q, v) - start))

# aba agrees with solving M a = tau - h at the final state
a = invdyn.aba(model, q, v, zero)
solved = np.linalg.solve(invdyn.mass_matrix(model, q), -invdyn.bias(model, q, v))
assert np.allclose(a, solved, atol=1e-9), (a, solved)

# the energy scale: lifting both rods from hanging to upright
scale = 2 * np.abs(model.gravity[2]) * model.total_mass * 1.0
print(f"after {steps * dt:g} s: q = {np.round(q, 3)}, v = {np.round(v, 3)}")
print(f"energy {start:.4f} J, largest drift {drift:.2e} J ({100 * drift / scale:.3f}% of m g L)")
assert drift < 0.01 * scale, drift
