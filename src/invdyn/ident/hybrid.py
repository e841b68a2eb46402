"""Hybrid inverse dynamics: the identified model plus a learned residual, against each alone.

The analytic model with identified parameters misses what rigid-body dynamics cannot say
(friction beyond Coulomb and viscous, actuators, transmissions); a network trained on recorded
transitions alone needs far more data to learn gravity and inertia. The hybrid keeps both:
what the identified model leaves of each joint's torque, ``tau - rnea_identified(q, v, a)``,
is learned per joint from that joint's own motion (its positions and velocity), as actuator
networks are (Hwangbo et al. 2019): the effects rigid-body identification misses sit in a
joint, and a network of one joint's signals cannot latch onto the whole trajectory, which a
network of the full state does on a few episodes. Each joint's residual network is an inverse
dynamics network of `invdyn.learn` (the same training loop, configuration and checkpoints).
`compare` trains them and a network of the full state alone on the same episodes, and scores
nominal, identified, learned and hybrid on the same held-out frames.

`train_end_to_end` fits the other hybrid: rnea with trainable, physically consistent
parameters plus per-joint residual networks of each joint's (q, v, a), all by gradient
descent through the differentiable torch path of `invdyn.rnea`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from invdyn._arrays import check_count, check_positive, spread
from invdyn.dynamics import rnea
from invdyn.errors import DataError, warn
from invdyn.ident.identify import Identification
from invdyn.metrics import normalised_mse, worse_than
from invdyn.model import Model, inertial_parameters

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
    resume: bool = True,
) -> dict[str, Float]:
    """Held-out torque nMSE per joint of the nominal, identified, learned, hybrid and end-to-end
    models.

    Args:
      model: the robot as described.
      identification: its identified parameters.
      train: `invdyn.ident.run.Samples` of the identification episodes.
      held_out: `invdyn.ident.run.Samples` of the held-out episodes.
      config: the `invdyn.learn.config.Config` of the networks (the one of the full state and
        each joint's residual network); the end-to-end hybrid takes its hidden widths,
        epochs, batch size, learning rate and seed.
      out: directory for the runs (each resumable): ``learned/`` and ``hybrid/<dof>/`` for
        every dof, named ``<index>-<name>``.
      progress: show training progress.
      resume: continue the runs in `out` of the same configuration and data (refusing
        others'); False to train them afresh.

    Returns:
      Predictor name (`PREDICTORS`) -> (nv,) nMSE on the held-out frames that every predictor
      has (those with a full window of the networks).
    """
    from invdyn.learn.train import train as train_network

    out = Path(out)
    learned = train_network(
        _episodes(train), config, out / "learned", progress=progress, resume=resume
    ).model
    residuals = [
        train_network(
            episodes, config, out / "hybrid" / directory, progress=progress, resume=resume
        ).model
        for directory, episodes in zip(
            _dof_directories(model), _residual_episodes(model, identification, train), strict=True
        )
    ]
    frames, predictions = predict(model, identification, held_out, learned, residuals)
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
    errors = {name: normalised_mse(predictions[name], target) for name in PREDICTORS}
    _warn_of_overfitting(model, errors)
    return errors


def _warn_of_overfitting(model: Model, errors: dict[str, Float]) -> None:
    """Warn of the joints whose held-out torque error the residual networks make worse than
    the identified model's alone (by `compare`'s `errors`)."""
    worse = worse_than(model.dof_names, errors["hybrid"], errors["identified"])
    if worse:
        warn(
            f"on {', '.join(worse)} the hybrid's held-out torque error is above the identified "
            "model's alone: the residual networks learnt what does not carry over to the "
            "held-out episodes; record more episodes, or train fewer epochs (train.epochs), "
            "smaller networks (model.hidden) or with more weight decay (train.weight_decay)"
        )


def joint_coordinates(model: Model) -> NDArray[np.int64]:
    """(nv, k) for each dof, the columns of q of its joint, padded with ``nq``.

    ``k`` is the largest number of position coordinates of a joint (1 for revolute and
    prismatic joints); index ``nq`` is meant for a column of zeros appended to q.
    """
    body = model.dof_body
    width = int(model.jnt_nq.max(initial=1))
    offsets = np.arange(width)
    columns = model.jnt_qadr[body][:, None] + offsets
    return np.where(offsets < model.jnt_nq[body][:, None], columns, model.nq)


def dof_states(model: Model, q: Float, v: Float) -> Float:
    """(N, nv, k + 1) each dof's own state: its joint's positions (`joint_coordinates`, zero
    where padded) and its velocity, of (N, nq) q and (N, nv) v."""
    padded = np.concatenate([q, np.zeros((len(q), 1))], axis=1)
    return np.concatenate([padded[:, joint_coordinates(model)], v[:, :, None]], axis=2)


def _episodes(samples: Any) -> list[tuple[Float, Float]]:
    """(state [q, v], torque) per episode of `samples`."""
    return [
        (np.concatenate([samples.q[part], samples.v[part]], axis=1), samples.tau[part])
        for part in _parts(samples)
    ]


def _residual_episodes(
    model: Model, identification: Identification, samples: Any
) -> list[list[tuple[Float, Float]]]:
    """For each dof, (its own state, what the identified model leaves of its torque) per
    episode of `samples`."""
    per_dof: list[list[tuple[Float, Float]]] = [[] for _ in range(model.nv)]
    for part in _parts(samples):
        q, v, a, tau = (x[part] for x in (samples.q, samples.v, samples.a, samples.tau))
        residual = tau - identification.predict(model, q, v, a)
        states = dof_states(model, q, v)
        for j, episodes in enumerate(per_dof):
            episodes.append((states[:, j], residual[:, j : j + 1]))
    return per_dof


def _parts(samples: Any) -> list[slice]:
    """The rows of each episode of `samples`."""
    return [slice(a, b) for a, b in zip(samples.starts[:-1], samples.starts[1:], strict=True)]


def _dof_directories(model: Model) -> list[str]:
    """A run directory name per dof: its index and its name, made safe for a path."""
    return [
        f"{j}-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}" for j, name in enumerate(model.dof_names)
    ]


def load_networks(directory: str | os.PathLike[str], model: Model) -> tuple[Any, list[Any]]:
    """The network of the full state and the per-dof residual networks that `compare` trained
    into `directory`.

    Raises:
      DataError: a checkpoint is missing or unreadable.
    """
    from invdyn.learn.checkpoint import load_model

    directory = Path(directory)
    runs = [directory / "learned", *(directory / "hybrid" / d for d in _dof_directories(model))]
    missing = [str(run) for run in runs if not (run / "checkpoint").is_dir()]
    if missing:
        raise DataError(f"no trained network in {', '.join(missing[:3])}")
    learned, *residuals = (load_model(run / "checkpoint") for run in runs)
    return learned, residuals


def predict(
    model: Model,
    identification: Identification,
    samples: Any,
    learned: Any,
    residuals: list[Any],
) -> tuple[NDArray[np.int64], dict[str, Float]]:
    """The rows of `samples` (`invdyn.ident.run.Samples`) with a full window of the networks,
    and the torques there of the nominal, identified, learned and hybrid models (name ->
    (n, nv))."""
    from invdyn.learn.models import make_windows

    windows = make_windows(_episodes(samples), learned.config)
    # the frame each window predicts: t, its row of the concatenated episodes
    frames = windows.obs_index[:, windows.now]
    q, v, a = samples.q[frames], samples.v[frames], samples.a[frames]
    identified = identification.predict(model, q, v, a)
    residual = np.concatenate(
        [
            _predict(network, make_windows(episodes, network.config))
            for network, episodes in zip(
                residuals, _residual_episodes(model, identification, samples), strict=True
            )
        ],
        axis=1,
    )
    predictions = {
        "nominal": rnea(model, q, v, a),
        "identified": identified,
        "learned": _predict(learned, windows),
        "hybrid": identified + residual,
    }
    return frames, predictions


def _predict(network: Any, windows: Any) -> Float:
    """(len(windows), action) `network`'s predictions, as float64 numpy."""
    import torch

    from invdyn.learn.train import eval_batches

    network.eval()
    with torch.no_grad():
        return np.concatenate(
            [
                network.predict(batch).double().cpu().numpy()
                for batch in eval_batches(network, windows)
            ]
        )


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
    """rnea with trainable physically consistent parameters plus a residual network per dof of
    its own (q, v, a) (`dof_states` and the acceleration), trained together through the
    differentiable torch path.

    The parameters are the log-Cholesky coordinates of `invdyn.ident.consistent`, so every
    body stays physical; they start from the prior's (identified or nominal) parameters, and
    the networks' last layers from zero, so training starts from the prior model exactly. The
    dofs' networks have the same widths and run as one batched matrix product per layer.
    """

    def __init__(
        self, model: Model, prior: Float, samples: Any, settings: EndToEndSettings
    ) -> None:
        import torch

        from invdyn.ident.consistent import log_cholesky, pseudo_inertias

        self.model = model
        bodies = prior[: 10 * model.nbody].reshape(model.nbody, 10)
        self.phi = torch.tensor(
            np.concatenate(
                [
                    log_cholesky(pseudo_inertias(bodies)).ravel(),
                    np.sqrt(np.maximum(prior[10 * model.nbody :], 0.0)),
                ]
            ),
            requires_grad=True,
        )
        self.coordinates = torch.as_tensor(joint_coordinates(model))
        inputs = self.features(*(torch.tensor(x) for x in (samples.q, samples.v, samples.a)))
        self.mean = inputs.mean(0)
        self.std = torch.as_tensor(spread(inputs.numpy()))
        self.scale = torch.as_tensor(spread(samples.tau))
        widths = [inputs.shape[2], *settings.hidden, 1]
        self.network = torch.nn.ParameterList()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(settings.seed)
            for k, (fan_in, fan_out) in enumerate(itertools.pairwise(widths)):
                bound = 0.0 if k == len(widths) - 2 else 1.0 / math.sqrt(fan_in)
                weight = torch.empty(model.nv, fan_in, fan_out, dtype=torch.float64)
                self.network.append(torch.nn.Parameter(weight.uniform_(-bound, bound)))
                zeros = torch.zeros(model.nv, 1, fan_out, dtype=torch.float64)
                self.network.append(torch.nn.Parameter(zeros))

    def features(self, q: Any, v: Any, a: Any) -> Any:
        """(N, nv, k + 2) each dof's joint positions, velocity and acceleration, of (N, nq),
        (N, nv), (N, nv) tensors."""
        import torch

        padded = torch.cat([q, q.new_zeros(len(q), 1)], dim=1)
        return torch.cat([padded[:, self.coordinates], v[:, :, None], a[:, :, None]], dim=2)

    def residual(self, q: Any, v: Any, a: Any) -> Any:
        """(N, nv) the networks' torques, in units of each joint's torque deviation."""
        import torch

        x = ((self.features(q, v, a) - self.mean) / self.std).transpose(0, 1)
        layers = list(self.network)
        for k in range(0, len(layers), 2):
            x = torch.baddbmm(layers[k + 1], x, layers[k])
            if k + 2 < len(layers):
                x = torch.nn.functional.gelu(x)
        return x[..., 0].T

    def params(self) -> Any:
        """(10 nbody + 3 nv,) the current dynamic parameters, a tensor."""
        import torch

        from invdyn.ident.consistent import parameters_of_coordinates

        nbody = self.model.nbody
        body = parameters_of_coordinates(self.phi[: 10 * nbody].reshape(nbody, 10), torch)
        return torch.cat([body.reshape(-1), self.phi[10 * nbody :].square()])

    def torques(self, q: Any, v: Any, a: Any) -> Any:
        """(N, nv) torques of (N, nq), (N, nv), (N, nv) tensors."""
        physics = rnea(self.model, q, v, a, params=self.params())
        return physics + self.scale * self.residual(q, v, a)

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
