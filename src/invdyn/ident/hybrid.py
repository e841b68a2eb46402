"""Hybrid inverse dynamics: the identified model plus a learned residual, against each alone.

The analytic model with identified parameters misses what rigid-body dynamics cannot say
(unmodelled friction, actuators, flexibility); a network trained on recorded transitions
alone needs far more data to learn gravity and inertia. The hybrid keeps both: an inverse
dynamics network of `invdyn.learn` (the same training loop, configuration and checkpoints)
trained on the residual torque ``tau - rnea_identified(q, v, a)`` of the identification
episodes, added back to the identified model's torque. `compare` trains it and the network
alone on the same episodes, and scores nominal, identified, learned and hybrid on the same
held-out frames.

`train_end_to_end` fits the other hybrid: rnea with trainable, physically consistent
parameters plus a residual network of (q, v, a), both by gradient descent through the
differentiable torch path of `invdyn.rnea`.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from invdyn._arrays import check_count, check_positive
from invdyn.dynamics import rnea
from invdyn.ident.identify import Identification
from invdyn.metrics import normalised_mse
from invdyn.model import Model
from invdyn.regressor import inertial_parameters

Float = NDArray[np.float64]

PREDICTORS = ("nominal", "identified", "learned", "hybrid", "end_to_end")


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
    """Held-out torque nMSE per joint of the nominal, identified, learned, hybrid and end-to-end
    models.

    Args:
      model: the robot as described.
      identification: its identified parameters.
      train: `invdyn.ident.run.Samples` of the identification episodes.
      held_out: `invdyn.ident.run.Samples` of the held-out episodes.
      config: the `invdyn.learn.config.Config` of both networks; the end-to-end hybrid takes
        its hidden widths, epochs, batch size, learning rate and seed.
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
    prior = identification.params
    end_to_end = train_end_to_end(
        model,
        inertial_parameters(model) if prior is None else prior,
        train,
        EndToEndSettings(
            hidden=tuple(config.model.hidden),
            epochs=config.train.epochs,
            batch_size=config.train.batch_size,
            lr=config.train.lr,
            seed=config.train.seed,
        ),
        progress=progress,
    )
    predictions["end_to_end"] = end_to_end.predict(
        held_out.q[frames], held_out.v[frames], held_out.a[frames]
    )
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


@dataclasses.dataclass(frozen=True)
class EndToEndSettings:
    """Training of the end-to-end hybrid (`train_end_to_end`).

    Attributes:
      hidden: widths of the residual network's hidden layers.
      epochs: passes over the samples.
      batch_size: samples per step.
      lr: Adam's learning rate, for the network and the parameters' coordinates alike.
      seed: seed of the network's initialisation and of the shuffles.
    """

    hidden: tuple[int, ...] = (128, 128)
    epochs: int = 100
    batch_size: int = 512
    lr: float = 1e-3
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "seed"):
            check_count(name, getattr(self, name), minimum=0 if name == "seed" else 1)
        check_positive("lr", self.lr)
        object.__setattr__(self, "hidden", tuple(check_count("hidden", w) for w in self.hidden))


class EndToEnd:
    """rnea with trainable physically consistent parameters plus a residual network of
    (q, v, a), trained together through the differentiable torch path.

    The parameters are the log-Cholesky coordinates of `invdyn.ident.consistent`, so every
    body stays physical; they start from the prior's (identified or nominal) parameters, and
    the network's last layer from zero, so training starts from the prior model exactly.
    """

    def __init__(
        self, model: Model, prior: Float, samples: Any, settings: EndToEndSettings
    ) -> None:
        import torch

        from invdyn.ident.consistent import log_cholesky, pseudo_inertias

        self.model = model
        bodies = prior[: 10 * model.nbody].reshape(model.nbody, 10)
        torch.manual_seed(settings.seed)
        self.phi = torch.tensor(
            np.concatenate(
                [
                    log_cholesky(pseudo_inertias(bodies)).ravel(),
                    np.sqrt(np.maximum(prior[10 * model.nbody :], 0.0)),
                ]
            ),
            requires_grad=True,
        )
        inputs = np.concatenate([samples.q, samples.v, samples.a], axis=1)
        self.mean = torch.tensor(inputs.mean(0))
        self.std = torch.tensor(inputs.std(0) + 1e-8)
        self.scale = torch.tensor(samples.tau.std(0) + 1e-8)
        layers: list[Any] = []
        width = inputs.shape[1]
        for hidden in settings.hidden:
            layers += [torch.nn.Linear(width, hidden, dtype=torch.float64), torch.nn.GELU()]
            width = hidden
        last = torch.nn.Linear(width, model.nv, dtype=torch.float64)
        torch.nn.init.zeros_(last.weight)
        torch.nn.init.zeros_(last.bias)
        self.network = torch.nn.Sequential(*layers, last)

    def params(self) -> Any:
        """(10 nbody + 3 nv,) the current dynamic parameters, a tensor."""
        import torch

        from invdyn.ident.consistent import parameters_of_coordinates

        nbody = self.model.nbody
        body = parameters_of_coordinates(self.phi[: 10 * nbody].reshape(nbody, 10), torch)
        return torch.cat([body.reshape(-1), self.phi[10 * nbody :].square()])

    def torques(self, q: Any, v: Any, a: Any) -> Any:
        """(N, nv) torques of (N, nq), (N, nv), (N, nv) tensors."""
        import torch

        physics = rnea(self.model, q, v, a, params=self.params())
        features = (torch.cat([q, v, a], dim=1) - self.mean) / self.std
        return physics + self.scale * self.network(features)

    def predict(self, q: Float, v: Float, a: Float) -> Float:
        """(N, nv) torques of numpy states, as numpy."""
        import torch

        with torch.no_grad():
            tensors = (torch.tensor(np.asarray(x, dtype=np.float64)) for x in (q, v, a))
            return self.torques(*tensors).numpy()


def train_end_to_end(
    model: Model,
    prior: Float,
    samples: Any,
    settings: EndToEndSettings | None = None,
    *,
    progress: bool = False,
) -> EndToEnd:
    """Fit the end-to-end hybrid to `samples` (`invdyn.ident.run.Samples`), starting from the
    dynamic parameters `prior` (P,): Adam on the mean squared torque error, each joint's
    scaled by its standard deviation."""
    import torch

    settings = settings or EndToEndSettings()
    hybrid = EndToEnd(model, np.asarray(prior, dtype=np.float64), samples, settings)
    q, v, a, tau = (torch.tensor(x) for x in (samples.q, samples.v, samples.a, samples.tau))
    optimiser = torch.optim.Adam([hybrid.phi, *hybrid.network.parameters()], lr=settings.lr)
    generator = torch.Generator().manual_seed(settings.seed)
    steps = math.ceil(len(q) / settings.batch_size)
    bar = tqdm(total=settings.epochs * steps, disable=not progress, unit="step")
    for _ in range(settings.epochs):
        order = torch.randperm(len(q), generator=generator)
        for k in range(steps):
            rows = order[k * settings.batch_size : (k + 1) * settings.batch_size]
            error = (hybrid.torques(q[rows], v[rows], a[rows]) - tau[rows]) / hybrid.scale
            loss = error.square().mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            bar.update(1)
    bar.close()
    return hybrid
