"""PD tracking: a minimum-jerk move under tau = Kp e + Kd e_dot, simulated in MuJoCo.

The gains are critically damped at 20 rad/s and in torque units, scaled by the inertia each joint
sees (`joint_inertia`, the diagonal of M(q)). Without gravity compensation the robot lags the
move and, once the reference holds still, sags until the spring Kp e carries the weight:
e = g(q) / Kp, which the script checks at the end of the run. Errors are in rad (m for the
Panda's fingers).

    python examples/control_pd.py
"""

import numpy as np

import invdyn
from invdyn.configuration import difference
from invdyn.control import Gains, joint_inertia, minimum_jerk, pd
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

# a 2 s move, then the reference holds still; gains in N m/rad and N m s/rad
trajectory = minimum_jerk(model, q0, q1, duration=2.0)
gains = Gains.critically_damped(20.0, joint_inertia(model, q0))
controller = pd(model, trajectory, gains)

# 3 s at 1 kHz in MuJoCo, starting at rest on the reference
run = rollout(model, controller, q0=q0, duration=3.0, control_rate=1000.0)
q_ref, _, _ = trajectory(run.time)
error = difference(model, run.q, q_ref)
print(f"{name}, pd at 20 rad/s: kp = {np.round(gains.kp, 1)}")
print(f"rms error {np.sqrt(np.mean(error**2)):.2e} rad, max {np.abs(error).max():.2e} rad")

# at rest the spring carries the weight: Kp e = g(q)
sag = invdyn.gravity(model, run.q[-1]) / gains.kp
print(f"final error {np.round(error[-1], 4)}\ng(q) / kp    {np.round(sag, 4)}")
assert np.allclose(error[-1], sag, atol=1e-3), (error[-1], sag)
