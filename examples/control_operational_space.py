"""Operational-space control: the Panda's hand traces a circle in MuJoCo, its joints held near
their start in the task's null space.

The hand's linear acceleration is x'' = J a + J_dot v. Asking for x''* = p'' + Kp e + Kd e_dot
takes the task force F = Lambda (x''* - J_dot v), with Lambda = (J M^-1 J^T)^-1, and the torque
tau = J^T F + N^T tau_posture + h, where N^T = 1 - J^T (M^-1 J^T Lambda)^T keeps the posture's
torque out of the hand's motion (Khatib 1987). J comes from `invdyn.frame_jacobian`, J_dot v
from `invdyn.frame_acceleration` at zero joint acceleration, M and h from `invdyn.mass_matrix`
and `invdyn.bias`, each a compiled call of a few microseconds.

    python examples/control_operational_space.py
"""

import math
import time

import numpy as np

import invdyn
from invdyn.io.robots import is_installed
from invdyn.sim import rollout

if not is_installed("panda"):
    print("this example needs the Panda of example-robot-data: pip install example-robot-data")
    raise SystemExit(0)
model = invdyn.load("panda")
hand, radius, period = "panda_hand", 0.05, 4.0
q0 = np.array([0.0, -0.6, 0.0, -2.2, 0.0, 1.6, 0.8, 0.02, 0.02])
center = invdyn.frame_placement(model, q0, hand)[1] - [0.0, radius, 0.0]


def circle(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, velocity and acceleration on a vertical circle, once round, starting at rest."""
    s = min(t / period, 1.0)
    angle = 2 * math.pi * (10 * s**3 - 15 * s**4 + 6 * s**5)  # minimum jerk in the angle
    rate = 2 * math.pi * (30 * s**2 - 60 * s**3 + 30 * s**4) / period if s < 1 else 0.0
    spin = 2 * math.pi * (60 * s - 180 * s**2 + 120 * s**3) / period**2 if s < 1 else 0.0
    c, n = math.cos(angle), math.sin(angle)
    position = center + radius * np.array([0.0, c, n])
    velocity = radius * rate * np.array([0.0, -n, c])
    acceleration = radius * (spin * np.array([0.0, -n, c]) - rate**2 * np.array([0.0, c, n]))
    return position, velocity, acceleration


def controller(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    jacobian = invdyn.frame_jacobian(model, q, hand)[3:]
    drift = invdyn.frame_acceleration(model, q, v, np.zeros(model.nv), hand)[3:]
    mass = invdyn.mass_matrix(model, q)
    position, velocity, acceleration = circle(t)
    error = position - invdyn.frame_placement(model, q, hand)[1]
    wanted = acceleration + 400.0 * error + 40.0 * (velocity - jacobian @ v)
    inverse_jacobian_t = np.linalg.solve(mass, jacobian.T)  # M^-1 J^T
    task_inertia = np.linalg.inv(jacobian @ inverse_jacobian_t)  # Lambda
    force = task_inertia @ (wanted - drift)
    posture = mass @ (100.0 * (q0 - q) - 20.0 * v)
    null = np.eye(model.nv) - jacobian.T @ (inverse_jacobian_t @ task_inertia).T
    return jacobian.T @ force + null @ posture + invdyn.bias(model, q, v)


run = rollout(model, controller, q0=q0, duration=period + 0.5, control_rate=1000.0)
hand_path = invdyn.frame_placement(model, run.q, hand)[1]
errors = np.linalg.norm(hand_path - np.array([circle(t)[0] for t in run.time]), axis=1)
rms = math.sqrt(np.mean(errors**2))
# the controller's time per step, on states of the run
step_times = []
for q, v in zip(run.q[:200], run.v[:200]):
    start = time.perf_counter()
    controller(1.0, q, v)
    step_times.append(time.perf_counter() - start)
print(
    f"panda hand on a {100 * radius:g} cm circle in {period:g} s: tracking error "
    f"{1000 * rms:.3f} mm RMS, {1000 * errors.max():.3f} mm max; control step "
    f"{1e6 * np.median(step_times):.0f} us (median)"
)
assert rms < 1e-3, rms
