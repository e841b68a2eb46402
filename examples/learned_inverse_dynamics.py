"""A learned inverse dynamics model from Python: record, train, label action-free states.

A double pendulum in MuJoCo tracks random excitations under a noisy torque controller; an MLP
learns the torque applied between two observed states, then labels held-out episodes from
their states alone, which are scored against the recorded torques and against the analytic
inverse dynamics of the same states.

    python examples/learned_inverse_dynamics.py
"""

import tempfile

import numpy as np

import invdyn
from invdyn.learn.config import preset
from invdyn.learn.label import label_states
from invdyn.learn.train import train
from invdyn.metrics import normalised_mse
from invdyn.sim.collect import Collection, collect_robot

model = invdyn.load("double_pendulum")


def collect(episodes: int, seed: int) -> Collection:
    return collect_robot(model, episodes=episodes, duration=5.0, control_rate=100.0, seed=seed)


recorded = collect(episodes=40, seed=0)
config = preset("default").with_overrides(["train.epochs=30"])
with tempfile.TemporaryDirectory() as run:
    result = train(recorded.episodes, config, run, progress=False)
validation = result.metrics["r2_mean"]
print(f"trained on {len(result.train_episodes)} episodes: validation R^2 {validation:.3f}")

# label held-out episodes from their states alone; score the frames that have a full window
held_out = collect(episodes=8, seed=1)
labels = label_states(result.model, [episode.state for episode in held_out.episodes])
predicted = np.concatenate([lab.action[lab.is_labelled] for lab in labels])
truth = np.concatenate([e.action[lab.is_labelled] for e, lab in zip(held_out.episodes, labels)])
learned = 1.0 - normalised_mse(predicted, truth)  # R^2 of each action

# the analytic model on the same states: a torque held over a step gives that step's mean
# acceleration, the forward difference of the velocities (the last frame has none, and no label)
analytic = []
for episode, lab in zip(held_out.episodes, labels):
    q, v = episode.state[:, : model.nq], episode.state[:, model.nq :]
    a = np.diff(v, axis=0, append=v[-1:]) * held_out.fps
    analytic.append(invdyn.rnea(model, q, v, a)[lab.is_labelled])
physics = 1.0 - normalised_mse(np.concatenate(analytic), truth)

for j, name in enumerate(held_out.action_names):
    print(f"{name:>8}: learned R^2 {learned[j]:.3f}   analytic R^2 {physics[j]:.3f}")
assert learned.mean() > 0.9, f"learned R^2 {learned.mean():.3f} below 0.9"
assert physics.mean() > 0.99, f"analytic R^2 {physics.mean():.3f} below 0.99"
