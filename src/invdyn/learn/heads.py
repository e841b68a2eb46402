"""Output heads of the learned models, in one registry.

A head says how each ensemble member's last layer encodes its prediction of the ``D``
normalised numbers of a window (``n_steps * n_action``): how many outputs the layer has, the
training loss against the normalised targets, and the point prediction read from them. A head
is a frozen dataclass whose fields are the `invdyn.learn.config.ModelConfig` fields it reads
(checked when it is made, with the config's messages) and whose class variable `Head.name` is
the value of ``model.head`` that selects it. `register_head` adds a head to `HEADS`:

    @register_head
    @dataclasses.dataclass(frozen=True)
    class Huber(Head):
        name: ClassVar[str] = "huber"

        def n_outputs(self, dim: int) -> int:
            return dim

        def objective(self, out: Tensor, y: Tensor) -> Tensor:
            return torch.nn.functional.huber_loss(out, y.expand_as(out))

        def point(self, out: Tensor) -> Tensor:
            return out

A head with options of its own reads them from fields of the same names that it adds to
`ModelConfig` (they are saved in ``config.json`` with the rest of the model's).

This module imports no torch (the config checks heads without it); the heads that need
functions of torch import it when they compute.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from typing import TYPE_CHECKING, ClassVar, TypeVar

from invdyn.errors import check_choice, check_field

if TYPE_CHECKING:
    from torch import Tensor

# log standard deviations of the mixture head are clamped to this range (normalised units)
LOG_STD_MIN, LOG_STD_MAX = -7.0, 3.0


@dataclasses.dataclass(frozen=True)
class Head(abc.ABC):
    """An output head: the encoding of a member's prediction in its last layer's outputs.

    Shapes: ``E`` members, ``B`` windows, ``D`` normalised numbers predicted per window,
    ``n_head = n_outputs(D)`` outputs per member.
    """

    name: ClassVar[str]
    """The value of ``model.head`` that selects the head."""

    @abc.abstractmethod
    def n_outputs(self, dim: int) -> int:
        """Outputs of a member's last layer for `dim` (D) predicted numbers."""

    @abc.abstractmethod
    def objective(self, out: Tensor, y: Tensor) -> Tensor:
        """The scalar training loss of (E, B, n_head) outputs for (B, D) normalised targets,
        the mean over members and windows."""

    @abc.abstractmethod
    def point(self, out: Tensor) -> Tensor:
        """(E, B, D) normalised point predictions of (E, B, n_head) outputs."""


HEADS: dict[str, type[Head]] = {}
"""Every head, by `Head.name`, in the order registered."""

H = TypeVar("H", bound=type[Head])


def register_head(head: H) -> H:
    """Add `head` to `HEADS` under its `Head.name` (a class decorator).

    Raises:
      ValueError: another head has that name.
    """
    if head.name in HEADS:
        raise ValueError(f"a head named {head.name!r} is registered already: {HEADS[head.name]}")
    HEADS[head.name] = head
    return head


@register_head
@dataclasses.dataclass(frozen=True)
class Regression(Head):
    """A point estimate of each number, fitted in mean squared or absolute error.

    Attributes:
      loss: ``"mse"`` or ``"l1"``.
    """

    name: ClassVar[str] = "regression"
    LOSSES: ClassVar[tuple[str, ...]] = ("mse", "l1")

    loss: str

    def __post_init__(self) -> None:
        check_choice("model.loss", self.loss, self.LOSSES)

    def n_outputs(self, dim: int) -> int:
        return dim

    def objective(self, out: Tensor, y: Tensor) -> Tensor:
        error = out - y
        return error.square().mean() if self.loss == "mse" else error.abs().mean()

    def point(self, out: Tensor) -> Tensor:
        return out


@dataclasses.dataclass(frozen=True)
class Distribution(Head):
    """A head that predicts a distribution of each window's numbers, of which `decode` reads
    the point prediction.

    Attributes:
      decode: ``"mean"`` (the expected value) or ``"argmax"`` (the most probable value).
    """

    DECODES: ClassVar[tuple[str, ...]] = ("mean", "argmax")

    decode: str

    def __post_init__(self) -> None:
        check_choice("model.decode", self.decode, self.DECODES)


@register_head
@dataclasses.dataclass(frozen=True)
class Bins(Distribution):
    """Per-number classification over `n_bins` bins of the normalised range, fitted in
    cross-entropy (as in VPT); ``argmax`` decodes to the most probable bin's centre.

    Attributes:
      n_bins: bins per number.
      bin_range: the bins cover ``[-bin_range, bin_range]`` standard deviations; targets
        outside fall in the end bins.
    """

    name: ClassVar[str] = "bins"

    n_bins: int
    bin_range: float

    def __post_init__(self) -> None:
        super().__post_init__()
        check_field(self.n_bins >= 2, "model.n_bins", "must be >= 2", self.n_bins)
        check_field(self.bin_range > 0, "model.bin_range", "must be > 0", self.bin_range)

    def n_outputs(self, dim: int) -> int:
        return dim * self.n_bins

    def objective(self, out: Tensor, y: Tensor) -> Tensor:
        import torch.nn.functional as F

        logits = self._logits(out)
        # bin of each normalised target, the end bins catching everything outside the range
        scaled = (y + self.bin_range) / (2 * self.bin_range) * self.n_bins
        labels = scaled.floor().long().clamp(0, self.n_bins - 1)
        labels = labels.expand(out.shape[0], *labels.shape)
        return F.cross_entropy(logits.reshape(-1, self.n_bins), labels.reshape(-1))

    def point(self, out: Tensor) -> Tensor:
        logits = self._logits(out)
        centres = self._centres().to(out)
        if self.decode == "argmax":
            return centres[logits.argmax(-1)]
        return logits.softmax(-1) @ centres

    def _logits(self, out: Tensor) -> Tensor:
        """(E, B, D, n_bins) logits of (E, B, n_head) outputs."""
        return out.unflatten(-1, (-1, self.n_bins))

    def _centres(self) -> Tensor:
        """(n_bins,) float32 centre of each bin, in normalised units."""
        import torch

        half = self.bin_range
        width = 2 * half / self.n_bins
        return torch.linspace(-half + width / 2, half - width / 2, self.n_bins)


@register_head
@dataclasses.dataclass(frozen=True)
class Mixture(Distribution):
    """A mixture of `n_components` diagonal Gaussians, fitted in negative log-likelihood (per
    number); ``argmax`` decodes to the most probable component's mean.

    Attributes:
      n_components: Gaussians of the mixture.
    """

    name: ClassVar[str] = "mixture"

    n_components: int

    def __post_init__(self) -> None:
        super().__post_init__()
        check_field(self.n_components >= 1, "model.n_components", "must be >= 1", self.n_components)

    def n_outputs(self, dim: int) -> int:
        return self.n_components * (1 + 2 * dim)

    def objective(self, out: Tensor, y: Tensor) -> Tensor:
        logit, mean, log_std = self._components(out)
        z = (y[:, None, :] - mean) * (-log_std).exp()
        # log N(y; mean_k, diag std_k^2) summed over dimensions, per component
        dim = y.shape[-1]
        log_prob = (-0.5 * z.square() - log_std).sum(-1) - 0.5 * dim * math.log(2 * math.pi)
        nll = -(logit.log_softmax(-1) + log_prob).logsumexp(-1)
        return nll.mean() / dim

    def point(self, out: Tensor) -> Tensor:
        logit, mean, _ = self._components(out)
        if self.decode == "argmax":
            best = logit.argmax(-1, keepdim=True)
            return mean.gather(-2, best[..., None].expand(*best.shape, mean.shape[-1]))[..., 0, :]
        return (logit.softmax(-1)[..., None] * mean).sum(-2)

    def _components(self, out: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Logits (..., K), means (..., K, D) and log deviations (..., K, D) of (..., n_head)
        outputs."""
        k = self.n_components
        # n_head = K (1 + 2 D)
        dim = (out.shape[-1] // k - 1) // 2
        logit, mean, log_std = out.split([k, k * dim, k * dim], dim=-1)
        mean = mean.unflatten(-1, (k, dim))
        log_std = log_std.unflatten(-1, (k, dim)).clamp(LOG_STD_MIN, LOG_STD_MAX)
        return logit, mean, log_std
