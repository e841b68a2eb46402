"""Inverse-dynamics feedforward: tau = rnea(q_ref, v_ref, a_ref) + Kp e + Kd e_dot, in MuJoCo.

The feedforward depends on the reference only, so it is computed for the whole trajectory in
one batched `invdyn.rnea` call (as a controller on a real robot would precompute it); the PD
gains, critically damped at 20 rad/s in torque units, only correct what it misses. On the exact
model it tracks as well as computed torque, and the feedback's share of the torque is small.
Errors in rad (m for the Panda's fingers).

    python examples/control_feedforward.py
"""

import numpy as np

import invdyn
from invdyn.configuration import difference
from invdyn.control import Gains, feedforward, joint_inertia, minimum_jerk
from invdyn.io.robots import is_installed
from invdyn.sim import rollout

# the Panda when example-robot-data is installed, else invdyn's double pendulum
if is_installed("panda"):
    name = "panda"
    q0 = [0.0, -0.6, 0.0, -2.2, 0.0, 1.6, 0.8, 0.02, 0.02]
    q1 = [0.9, -0.1, -0.6, -1.4, 0.5, 2.2, 0.0, 0.02, 0.02]
else:
    name, q0, q1 = "double_pendulum", [0.5, 0.0], [1.5, -0.8]
model = invdyn.load(name)

# a 2 s move; gains in N m/rad and N m s/rad
trajectory = minimum_jerk(model, q0, q1, duration=2.0)
gains = Gains.critically_damped(20.0, joint_inertia(model, q0))
controller = feedforward(model, trajectory, gains)

# 3 s at 1 kHz in MuJoCo, starting at rest on the reference
run = rollout(model, controller, q0=q0, duration=3.0, control_rate=1000.0)
q_ref, v_ref, a_ref = trajectory(run.time)
error = difference(model, run.q, q_ref)
print(f"{name}, feedforward at 20 rad/s")
print(f"rms error {np.sqrt(np.mean(error**2)):.2e} rad, max {np.abs(error).max():.2e} rad")

# the feedforward, all samples at once, against the torque the controller applied
tau_ff = invdyn.rnea(model, q_ref, v_ref, a_ref)
share = np.linalg.norm(run.tau_applied - tau_ff) / np.linalg.norm(run.tau_applied)
print(f"feedback share of the torque: {share:.1e} (norm of the difference over the torque's)")
assert np.sqrt(np.mean(error**2)) < 1e-3
assert share < 0.05, share
