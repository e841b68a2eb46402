"""MuJoCo simulator bridge: invdyn models as MuJoCo models, and closed-loop rollouts.

``import invdyn`` does not import this package, and this package imports MuJoCo only when a
function needs it (``pip install 'invdyn[sim]'``).

```python
from invdyn.sim import Plant, rollout
model = invdyn.load("panda")
plant = Plant(payload=1.0, sensor_noise=1e-4, delay=2)
run = rollout(model, lambda t, q, v: invdyn.gravity(model, q), q0=q, duration=1.0, plant=plant)
```
"""

from invdyn.sim.collect import CollectedEpisode, Collection, collect_gym, collect_robot
from invdyn.sim.mujoco_model import (
    MIN_INERTIA,
    MIN_MASS,
    build_mujoco,
    dof_addresses,
    prepare_mujoco,
)
from invdyn.sim.plant import Plant, Push, plant_model, torque_limits
from invdyn.sim.rollout import Rollout, StopRollout, csv_columns, rollout, save_csv

__all__ = [
    "MIN_INERTIA",
    "MIN_MASS",
    "CollectedEpisode",
    "Collection",
    "Plant",
    "Push",
    "Rollout",
    "StopRollout",
    "build_mujoco",
    "collect_gym",
    "collect_robot",
    "csv_columns",
    "dof_addresses",
    "plant_model",
    "prepare_mujoco",
    "rollout",
    "save_csv",
    "torque_limits",
]
