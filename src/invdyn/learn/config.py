"""Typed, frozen configuration of learned inverse dynamics models and their training.

A `Config` holds a `ModelConfig` (what the network sees and predicts) and a `TrainConfig` (how it
is fitted), plus the dataset it is trained on. It is saved as ``config.json`` next to every
checkpoint and read back with `Config.from_json`; unknown keys, wrong types and out-of-range
values raise `invdyn.InputError` naming the field. `Config.with_overrides` applies
``"section.field=value"`` strings (the CLI's ``--set`` flags), parsed by the field's annotation
(`invdyn._settings`).

Presets (`PRESETS`, `preset`): ``"small"`` (tiny networks, a few epochs: tests and smoke runs)
and ``"default"`` (a 3x256 MLP regression head).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from typing import Any

from invdyn._settings import check_fields, with_overrides
from invdyn.errors import InputError, check_choice, check_field
from invdyn.learn.heads import HEADS, Head
from invdyn.learn.keys import OBS_IMAGE_PREFIX

ACTIVATIONS = ("relu", "gelu", "silu", "tanh", "elu")
SCHEDULES = ("cosine", "constant")


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """What an inverse dynamics model sees and predicts, and the form of its output head.

    The model sees the window ``o_{t-context}, ..., o_t, o_{t+H}, ..., o_{t+H+future}`` of one
    episode (and the state change ``o_{t+H} - o_t``; ``H`` is `horizon`) and predicts the
    actions that led from ``o_t`` to ``o_{t+H}``.

    Attributes:
      context: number of past observations before ``o_t`` (0: ``o_t`` alone).
      horizon: steps ``H >= 1`` between the current and the future observation.
      future: observations after ``o_{t+H}`` (a non-causal window, as VPT's IDM sees: with
        smooth actions, the motion after ``t + H`` still tells ``a_t``); 0 for none.
      chunk: predict the ``H`` actions ``a_t .. a_{t+H-1}``; otherwise ``a_t`` only.
      hidden: widths of the hidden layers of each MLP (empty: a linear model).
      activation: one of `ACTIVATIONS`.
      delta: also feed the normalised state change ``o_{t+H} - o_t``.
      head: the output head, a name of `invdyn.learn.heads.HEADS` (`output_head`):
        ``"regression"`` (point estimate, loss `loss`), ``"bins"`` (per-dimension
        classification over `n_bins` bins of the normalised range, cross-entropy, as in VPT) or
        ``"mixture"`` (mixture of `n_components` diagonal Gaussians, negative log-likelihood).
      loss: ``"mse"`` or ``"l1"``, for the regression head.
      n_bins: bins per action dimension of the ``"bins"`` head.
      bin_range: the bins cover ``[-bin_range, bin_range]`` standard deviations; targets
        outside fall in the end bins.
      n_components: Gaussians of the ``"mixture"`` head.
      decode: point prediction of the ``"bins"`` and ``"mixture"`` heads: ``"mean"`` (the
        expected value) or ``"argmax"`` (the most probable bin / component's mean).
      ensemble: independently initialised members (deep ensembles); the prediction is their
        mean and the uncertainty their standard deviation.
      cameras: comma-separated cameras (video features ``observation.images.<camera>``) the
        model sees, each frame encoded by a convolutional network per camera and member, the
        window's encodings combined by a temporal convolution; empty for none.
      state: the model sees ``observation.state`` too; False for frames alone.
      encoder: widths of the image encoder: a 3x3 convolution of stride 2 to the first, then
        a residual block (two 3x3 convolutions) to each further width, all at half the frame's
        resolution.
      keypoints: feature maps of the encoder's last layer, each reduced to the expected image
        position of its softmax (a spatial soft-argmax).
      augment: during training, shift the frames of a batch by up to this many pixels, at
        random (pad and crop; 0: never).
      jitter: during training, scale each colour channel of a batch's frames by a factor in
        ``[1 - jitter, 1 + jitter]`` and shift it by up to ``jitter / 2``, at random (0: never).
      mixed_precision: on a CUDA device, encode frames in bfloat16 (autocast; the MLP and
        the loss stay in float32). The CPU always computes in float32.
      state_weight: with cameras, each member also estimates the state (``observation.state``,
        normalised) of every frame of the window after the first, from that frame's keypoints
        and their motion since the frame before in every camera (the tracks the temporal
        convolution sees), with one MLP of widths `hidden` shared by the frames; it feeds the
        estimates to its head and adds this weight times their mean squared error to the loss:
        the recorded states teach the encoder where the robot is, and the model still needs
        frames alone to predict. 0: no estimate.
    """

    context: int = 0
    horizon: int = 1
    future: int = 0
    chunk: bool = False
    hidden: tuple[int, ...] = (256, 256, 256)
    activation: str = "gelu"
    delta: bool = True
    head: str = "regression"
    loss: str = "mse"
    n_bins: int = 64
    bin_range: float = 4.0
    n_components: int = 5
    decode: str = "mean"
    ensemble: int = 1
    cameras: str = ""
    state: bool = True
    encoder: tuple[int, ...] = (16, 16)
    keypoints: int = 16
    augment: int = 4
    jitter: float = 0.1
    mixed_precision: bool = True
    state_weight: float = 0.0

    def __post_init__(self) -> None:
        check_fields(self, "model")
        check_field(self.context >= 0, "model.context", "must be >= 0", self.context)
        check_field(self.horizon >= 1, "model.horizon", "must be >= 1", self.horizon)
        check_field(self.future >= 0, "model.future", "must be >= 0", self.future)
        check_field(
            all(h >= 1 for h in self.hidden), "model.hidden", "widths must be >= 1", self.hidden
        )
        check_choice("model.activation", self.activation, ACTIVATIONS)
        check_choice("model.head", self.head, tuple(HEADS))
        # every head's fields hold values it takes, whichever head the model has
        for head in HEADS.values():
            _head_of(self, head)
        check_field(self.ensemble >= 1, "model.ensemble", "must be >= 1", self.ensemble)
        names = self.camera_names
        check_field(
            all(names) and len(set(names)) == len(names),
            "model.cameras",
            "must name distinct cameras, separated by commas",
            self.cameras,
        )
        prefixed = [name for name in names if name.startswith(OBS_IMAGE_PREFIX)]
        check_field(
            not prefixed,
            "model.cameras",
            f"names cameras, not their features: {prefixed[0].removeprefix(OBS_IMAGE_PREFIX)!r} "
            f"for {prefixed[0]!r}"
            if prefixed
            else "",
            self.cameras,
        )
        if not (self.state or names):
            raise InputError(
                "model.state is False and model.cameras is empty: the model would see nothing; "
                "name cameras (model.cameras=front,side) or set model.state=true"
            )
        check_field(
            bool(self.encoder) and all(c >= 1 for c in self.encoder),
            "model.encoder",
            "needs at least one layer, of >= 1 channels",
            self.encoder,
        )
        check_field(self.keypoints >= 1, "model.keypoints", "must be >= 1", self.keypoints)
        check_field(self.augment >= 0, "model.augment", "must be >= 0", self.augment)
        check_field(0 <= self.jitter < 1, "model.jitter", "must be in [0, 1)", self.jitter)
        check_field(self.state_weight >= 0, "model.state_weight", "must be >= 0", self.state_weight)
        check_field(
            bool(names) or self.state_weight == 0,
            "model.state_weight",
            "estimates the state from frames, so name cameras",
            self.state_weight,
        )

    @property
    def output_head(self) -> Head:
        """The output head that `head` names, of this configuration's fields."""
        return _head_of(self, HEADS[self.head])

    @property
    def camera_names(self) -> tuple[str, ...]:
        """The cameras of `cameras`, in order."""
        return tuple(name.strip() for name in self.cameras.split(",")) if self.cameras else ()

    @property
    def offsets(self) -> tuple[int, ...]:
        """Steps from ``t`` of each observation of the window: ``-context .. 0``, then
        ``horizon .. horizon + future``."""
        return (*range(-self.context, 1), *range(self.horizon, self.horizon + self.future + 1))

    @property
    def window(self) -> int:
        """Observations per window: ``context + 2 + future``."""
        return self.context + 2 + self.future

    @property
    def n_steps(self) -> int:
        """Actions predicted per window: `horizon` when chunked, else 1."""
        return self.horizon if self.chunk else 1


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """How a model is fitted.

    Attributes:
      epochs: passes over the training windows.
      batch_size: windows per optimiser step.
      lr: peak learning rate of AdamW.
      weight_decay: AdamW's decoupled weight decay.
      schedule: ``"cosine"`` (decay to 0 over the run) or ``"constant"``.
      grad_clip: largest global gradient norm (0: no clipping).
      seed: seeds the split, the initialisation and every epoch's shuffle.
      val_fraction: share of the episodes held out for validation (whole episodes).
      device: ``"auto"`` (CUDA when present, else CPU), ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.
      checkpoint_every: epochs between checkpoints (one is always written at the end).
      num_threads: CPU threads for torch (0: torch's default).
      compile: compile the convolutions of the frame encoders with ``torch.compile``
        (inductor: a C++ compiler on CPUs, Triton on GPUs), for any number of frames, after
        up to a minute of compiling: an epoch of the two-camera Panda model then takes 0.73
        to 0.85 of the time on 2 CPU cores (`benchmarks/training.py`). No effect on models
        of the state.
      init: a checkpoint, or a run directory of `invdyn.learn.train.train` holding one, whose
        weights and normalisation start the run (fine-tuning, for example on more episodes or
        on data of another instance of the robot); its model configuration must be this
        one's and its data spec fit the training data's. ``""``: a fresh initialisation from
        `seed`. The optimiser and the learning-rate schedule start afresh.
    """

    epochs: int = 100
    batch_size: int = 256
    lr: float = 1e-3
    weight_decay: float = 1e-4
    schedule: str = "cosine"
    grad_clip: float = 1.0
    seed: int = 0
    val_fraction: float = 0.1
    device: str = "auto"
    checkpoint_every: int = 10
    num_threads: int = 0
    compile: bool = False
    init: str = ""

    def __post_init__(self) -> None:
        check_fields(self, "train")
        check_field(self.epochs >= 1, "train.epochs", "must be >= 1", self.epochs)
        check_field(self.batch_size >= 1, "train.batch_size", "must be >= 1", self.batch_size)
        check_field(self.lr > 0, "train.lr", "must be > 0", self.lr)
        check_field(self.weight_decay >= 0, "train.weight_decay", "must be >= 0", self.weight_decay)
        check_choice("train.schedule", self.schedule, SCHEDULES)
        check_field(self.grad_clip >= 0, "train.grad_clip", "must be >= 0", self.grad_clip)
        check_field(self.seed >= 0, "train.seed", "must be >= 0", self.seed)
        check_field(
            0 <= self.val_fraction < 1, "train.val_fraction", "must be in [0, 1)", self.val_fraction
        )
        device_ok = self.device in ("auto", "cpu", "cuda") or (
            self.device.startswith("cuda:") and self.device[5:].isdigit()
        )
        check_field(device_ok, "train.device", "must be auto, cpu, cuda or cuda:N", self.device)
        every = self.checkpoint_every
        check_field(every >= 1, "train.checkpoint_every", "must be >= 1", every)
        check_field(self.num_threads >= 0, "train.num_threads", "must be >= 0", self.num_threads)


@dataclasses.dataclass(frozen=True)
class Config:
    """A model, its training, and the dataset it is trained on.

    Attributes:
      model: the network.
      train: the fitting.
      dataset: path or name of the dataset (informative; `train` takes episodes in memory).
    """

    model: ModelConfig = dataclasses.field(default_factory=ModelConfig)
    train: TrainConfig = dataclasses.field(default_factory=TrainConfig)
    dataset: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.model, ModelConfig):
            raise InputError(f"model must be a ModelConfig, got {type(self.model).__name__}")
        if not isinstance(self.train, TrainConfig):
            raise InputError(f"train must be a TrainConfig, got {type(self.train).__name__}")
        if not isinstance(self.dataset, str):
            raise InputError(f"dataset must be a str, got {self.dataset!r}")

    def to_dict(self) -> dict[str, Any]:
        """The configuration as plain JSON types (tuples become lists)."""
        return {
            "model": _section_dict(self.model),
            "train": _section_dict(self.train),
            "dataset": self.dataset,
        }

    def to_json(self) -> str:
        """The configuration as indented JSON text (`from_json` reads it back exactly)."""
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Config:
        """A configuration from `to_dict`'s form; missing fields take their defaults.

        Raises:
          InputError: an unknown key, or a value of the wrong type or out of range.
        """
        if not isinstance(data, Mapping):
            raise InputError(f"a config must be a JSON object, got {type(data).__name__}")
        _check_keys("config", data, ("model", "train", "dataset"))
        model = _section_from_dict(ModelConfig, "model", data.get("model", {}))
        train = _section_from_dict(TrainConfig, "train", data.get("train", {}))
        dataset = data.get("dataset", "")
        if not isinstance(dataset, str):
            raise InputError(f"dataset must be a string, got {dataset!r}")
        return cls(model=model, train=train, dataset=dataset)

    @classmethod
    def from_json(cls, text: str) -> Config:
        """A configuration from `to_json`'s text.

        Raises:
          InputError: the text is not JSON, or as in `from_dict`.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"config is not valid JSON: {exc}") from None
        return cls.from_dict(data)

    def with_overrides(self, overrides: Iterable[str]) -> Config:
        """This configuration with ``"key=value"`` overrides applied in order.

        A key is ``section.field`` (``model.horizon=4``, ``train.lr=3e-4``), ``dataset``, or a
        bare field name that only one section has (``horizon=4``). Values are parsed by the
        field's type: ints, floats, ``true``/``false``, strings, and comma-separated ints for
        tuples (``model.hidden=128,128``; empty for none).

        Raises:
          InputError: a malformed override, an unknown or ambiguous key, or a bad value.
        """
        return with_overrides(self, overrides)


def _head_of(config: ModelConfig, head: type[Head]) -> Head:
    """The output head `head` of the fields of `config` it reads (`InputError` for a value it
    does not take)."""
    return head(**{field.name: getattr(config, field.name) for field in dataclasses.fields(head)})


def _check_keys(where: str, data: Mapping[str, Any], known: Iterable[str]) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise InputError(f"unknown key(s) in {where}: {unknown}; known: {sorted(known)}")


def _section_dict(obj: Any) -> dict[str, Any]:
    out = {}
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        out[field.name] = list(value) if isinstance(value, tuple) else value
    return out


def _section_from_dict(cls: type[Any], section: str, data: Any) -> Any:
    if not isinstance(data, Mapping):
        raise InputError(f"{section} must be a JSON object, got {type(data).__name__}")
    _check_keys(section, data, [field.name for field in dataclasses.fields(cls)])
    return cls(**data)


# named starting points; `Config.with_overrides` adjusts them
PRESETS: dict[str, Config] = {
    "small": Config(
        model=ModelConfig(hidden=(64, 64)),
        train=TrainConfig(epochs=20, batch_size=64, lr=3e-3, checkpoint_every=5),
    ),
    "default": Config(),
}


def preset(name: str) -> Config:
    """The preset configuration called `name` (a key of `PRESETS`).

    Raises:
      InputError: no preset has that name.
    """
    if name not in PRESETS:
        raise InputError(f"unknown preset {name!r}; choose from {sorted(PRESETS)}")
    return PRESETS[name]
