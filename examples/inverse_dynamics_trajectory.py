"""Inverse dynamics along a trajectory: the joint torques of a minimum-jerk move.

The robot (the Panda when example-robot-data is installed, else invdyn's double pendulum) moves
from one random configuration to another in two seconds, sampled at 1 kHz. `invdyn.rnea` gives
the torques of every sample in one batched call; they are checked against M(q) a + h(q, v) and
compared with the effort limits.

    python examples/inverse_dynamics_trajectory.py
"""

import numpy as np

import invdyn
from invdyn.configuration import difference, integrate, random_configuration
from invdyn.io.robots import is_installed

model = invdyn.load("panda" if is_installed("panda") else "double_pendulum")

# minimum-jerk time scaling s(t) from 0 to 1 and its derivatives
duration = 2.0
t = np.linspace(0.0, duration, 2001)
x = t / duration
s = 10 * x**3 - 15 * x**4 + 6 * x**5
s_dot = (30 * x**2 - 60 * x**3 + 30 * x**4) / duration
s_ddot = (60 * x - 180 * x**2 + 120 * x**3) / duration**2

# straight line on the configuration manifold: q = q0 ⊕ s d, v = s' d, a = s'' d
q0, q1 = random_configuration(model, rng=0, shape=2)
d = difference(model, q0, q1)
q = integrate(model, q0, s[:, None] * d)
v, a = s_dot[:, None] * d, s_ddot[:, None] * d

# all samples in one call: (2001, nq), (2001, nv), (2001, nv) -> (2001, nv)
tau = invdyn.rnea(model, q, v, a)

# the same torques from the mass matrix and the bias forces
M = invdyn.mass_matrix(model, q)
h = invdyn.bias(model, q, v)
error = np.max(np.abs(np.einsum("tij,tj->ti", M, a) + h - tau))
assert error < 1e-9 * max(1.0, np.max(np.abs(tau))), error

print(f"{model.name}: {len(t)} samples, rnea = M a + h to {error:.1e}")
print(f"{'joint':<22}{'peak |tau|':>12}{'limit':>10}")
for name, peak, limit in zip(
    model.joint_names, np.max(np.abs(tau), axis=0), model.dof_effort_limit, strict=True
):
    print(f"{name:<22}{peak:>12.3f}{limit:>10g}{'  over the limit' if peak > limit else ''}")
