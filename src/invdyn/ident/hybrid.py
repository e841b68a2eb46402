"""Hybrid inverse dynamics: the identified model plus a learned residual, against each alone.

The analytic model with identified parameters misses what rigid-body dynamics cannot say
(unmodelled friction, actuators, flexibility); a network trained on recorded transitions
alone needs far more data to learn gravity and inertia. The hybrid keeps both: an inverse
dynamics network of `invdyn.learn` (the same training loop, configuration and checkpoints)
trained on the residual torque ``tau - rnea_identified(q, v, a)`` of the identification
episodes, added back to the identified model's torque. `compare` trains it and the network
alone on the same episodes, and scores nominal, identified, learned and hybrid on the same
held-out frames.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from invdyn.dynamics import rnea
from invdyn.ident.identify import Identification
from invdyn.metrics import normalised_mse
from invdyn.model import Model

Float = NDArray[np.float64]

PREDICTORS = ("nominal", "identified", "learned", "hybrid")


def compare(
    model: Model,
    identification: Identification,
    train: Any,
    held_out: Any,
    config: Any,
    out: str | os.PathLike[str],
    *,
    progress: bool = False,
) -> dict[str, Float]:
    """Held-out torque nMSE per joint of the nominal, identified, learned and hybrid models.

    Args:
      model: the robot as described.
      identification: its identified parameters.
      train: `invdyn.ident.run.Samples` of the identification episodes.
      held_out: `invdyn.ident.run.Samples` of the held-out episodes.
      config: the `invdyn.learn.config.Config` of both networks.
      out: directory for the two runs, ``learned/`` and ``hybrid/`` (each resumable).
      progress: show training progress.

    Returns:
      Predictor name (`PREDICTORS`) -> (nv,) nMSE on the held-out frames that every predictor
      has (those with a full window of the networks).
    """
    from invdyn.learn.train import train as train_network

    out = Path(out)
    runs = {}
    for name, residual in (("learned", False), ("hybrid", True)):
        episodes = _episodes(model, identification, train, residual=residual)
        result = train_network(episodes, config, out / name, progress=progress)
        runs[name] = result.model
    frames, predictions = _held_out_predictions(model, identification, held_out, runs)
    target = held_out.tau[frames]
    return {name: normalised_mse(predictions[name], target) for name in PREDICTORS}


def _episodes(
    model: Model, identification: Identification, samples: Any, *, residual: bool
) -> list[tuple[Float, Float]]:
    """(state [q, v], action) pairs per episode; the action is the torque, or what the
    identified model leaves of it."""
    episodes = []
    for start, stop in zip(samples.starts[:-1], samples.starts[1:], strict=True):
        q, v, a, tau = (x[start:stop] for x in (samples.q, samples.v, samples.a, samples.tau))
        action = tau - identification.predict(model, q, v, a) if residual else tau
        episodes.append((np.concatenate([q, v], axis=1), action))
    return episodes


def _held_out_predictions(
    model: Model, identification: Identification, samples: Any, runs: dict[str, Any]
) -> tuple[Any, dict[str, Float]]:
    """The held-out frames with a full window, and every predictor's torques there."""
    import torch

    from invdyn.learn.models import make_windows
    from invdyn.learn.train import eval_batch

    network = runs["learned"]
    episodes = _episodes(model, identification, samples, residual=False)
    windows = make_windows(episodes, network.config)
    # the frame each window predicts: t, its row of the concatenated episodes
    frames = windows.obs_index[:, windows.now]
    q, v, a = samples.q[frames], samples.v[frames], samples.a[frames]
    identified = identification.predict(model, q, v, a)
    predictions = {"nominal": rnea(model, q, v, a), "identified": identified}
    with torch.no_grad():
        for name, net in runs.items():
            net.eval()
            size = eval_batch(net)
            torques = np.concatenate(
                [
                    net.predict(windows.batch(slice(k, k + size))).double().cpu().numpy()
                    for k in range(0, len(windows), size)
                ]
            )
            predictions[name] = torques + (identified if name == "hybrid" else 0.0)
    return frames, predictions
