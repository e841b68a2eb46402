"""Computed torque: tau = rnea(q, v, a_ref + Kd e_dot + Kp e), on an exact and a wrong model.

Inverting the dynamics at the measured state makes every joint a double integrator, so the
gains are in acceleration units and the same for any robot: critically damped at 20 rad/s,
kp = 400 /s², kd = 40 /s. On the exact model only the 1 ms zero-order hold is left to cause
error. The second run simulates a plant that differs from the controller's model, a payload
at the end effector and links 20 % heavier (`invdyn.sim.Plant`): the inverse dynamics no longer
cancels gravity, and the error grows to what the feedback gains leave. Errors in rad (m for
the Panda's fingers).

    python examples/control_computed_torque.py
"""

import numpy as np

import invdyn
from invdyn.configuration import difference
from invdyn.control import Gains, computed_torque, minimum_jerk
from invdyn.io.robots import is_installed
from invdyn.kinematics import end_effector
from invdyn.sim import Plant, rollout

# the Panda when example-robot-data is installed, else invdyn's double pendulum
if is_installed("panda"):
    name, payload = "panda", 2.0
    q0 = [0.0, -0.6, 0.0, -2.2, 0.0, 1.6, 0.8, 0.02, 0.02]
    q1 = [0.9, -0.1, -0.6, -1.4, 0.5, 2.2, 0.0, 0.02, 0.02]
else:
    name, payload, q0, q1 = "double_pendulum", 0.5, [0.5, 0.0], [1.5, -0.8]
model = invdyn.load(name)

# a 2 s move; gains in 1/s² and 1/s, one pair for every joint
trajectory = minimum_jerk(model, q0, q1, duration=2.0)
controller = computed_torque(model, trajectory, Gains.critically_damped(20.0))

# the exact plant, then one with an unmodelled payload and heavier links
wrong = Plant(payload=payload, payload_frame=end_effector(model), mass_scale=1.2)
rms = {}
for label, plant in [("exact model", Plant()), (f"{payload:g} kg payload, mass x1.2", wrong)]:
    run = rollout(model, controller, q0=q0, duration=3.0, control_rate=1000.0, plant=plant)
    error = difference(model, run.q, trajectory(run.time)[0])
    rms[label] = np.sqrt(np.mean(error**2))
    print(f"{name}, {label}: rms error {rms[label]:.2e} rad, max {np.abs(error).max():.2e} rad")

exact, perturbed = rms.values()
assert exact < 1e-3, exact
assert perturbed > 10 * exact, rms
