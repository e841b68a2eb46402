"""PD with gravity compensation: tau = Kp e + Kd e_dot + g(q), simulated in MuJoCo.

The same minimum-jerk move and gains as examples/control_pd.py (critically damped at 20 rad/s,
in torque units). Compensating gravity removes PD's sag: the robot still lags the moving
reference, since nothing anticipates the acceleration, but once the reference holds still the
error decays to zero (Takegaki and Arimoto 1981), which the script checks. Errors are in rad
(m for the Panda's fingers).

    python examples/control_pd_gravity.py
"""

import numpy as np

import invdyn
from invdyn.configuration import difference
from invdyn.control import Gains, joint_inertia, minimum_jerk, pd_gravity
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
controller = pd_gravity(model, trajectory, gains)

# 3 s at 1 kHz in MuJoCo, starting at rest on the reference
run = rollout(model, controller, q0=q0, duration=3.0, control_rate=1000.0)
q_ref, _, _ = trajectory(run.time)
error = difference(model, run.q, q_ref)
moving = error[run.time <= trajectory.duration]
print(f"{name}, pd_gravity at 20 rad/s")
rms, largest = np.sqrt(np.mean(moving**2)), np.abs(moving).max()
print(f"during the move: rms error {rms:.2e} rad, max {largest:.2e} rad")
print(f"at the end, 1 s after the move: max error {np.abs(error[-1]).max():.2e} rad")

# no sag: the regulation error has died out
assert np.abs(error[-1]).max() < 1e-3, error[-1]
