"""Learned inverse dynamics models: windows of episodes in, the actions between them out.

An inverse dynamics model (IDM) sees the observations ``o_{t-C}, ..., o_t`` and ``o_{t+H},
..., o_{t+H+F}`` of one episode (context ``C``, horizon ``H``, future ``F``: the ``W = C + 2 +
F`` observations of `ModelConfig.offsets`) and predicts the action ``a_t``, or with ``chunk``
the actions ``a_t, ..., a_{t+H-1}``, that took the system from ``o_t`` to ``o_{t+H}``. The
output head of `invdyn.learn.heads` that ``config.head`` names encodes the prediction in the
outputs of each member's last layer, and gives the training loss.

Episodes are consumed in memory: any sequence whose items have ``state`` (T, n_state) and
``action`` (T, n_action) attributes, are mappings with ``"observation.state"`` and ``"action"``
(or ``"state"`` and ``"action"``) keys, or are plain ``(state, action)`` pairs.

Windows never cross an episode boundary: an episode of length ``T`` gives the windows
``t = C, ..., T - H - F - 1``. States, state changes and actions are normalised by statistics of
the training split (`NormStats`), held by the model and saved with it; batches are in
physical units, so `InverseDynamicsModel.predict` takes raw observations and returns raw
actions.

A batch is a mapping with (LeRobot's keys):
  ``"observation.state"``: (B, W, n_state), the window's states (not needed by a model of
    frames alone).
  ``"observation.images.<camera>"``: (B, W, h, w, 3) uint8 frames of the same window, for
    each camera of ``config.cameras`` (VPT's and GR00T's IDMs see frames this way); or, with
    `WINDOW_FRAMES`, (N, h, w, 3) frames that windows share, each given once.
  `WINDOW_FRAMES`: (B, W) int, the rows of the frames of each window (optional).
  ``"action"``: (B, n_action), or (B, H, n_action) when chunked; targets, for `loss` only.

A model of frames encodes every frame on its own, per camera and ensemble member: a small
residual network trained from scratch (`ModelConfig.encoder`) whose last feature maps are
reduced to keypoints, the expected image position of each map's softmax (a spatial soft-argmax,
as in Levine et al. 2016 and robomimic), which locates a moving part to a fraction of a pixel.
A temporal convolution over the window's keypoints and their frame-to-frame motion (in pixels)
gives the camera's features, which join the normalised state window (unless ``config.state``
is False) at the input of the member's MLP. With ``config.state_weight``, an MLP also estimates
the state of each frame of the window after the first from that frame's keypoints and their
motion since the frame before, seen by every camera (one MLP shared by the frames), trained on
the recorded states by an auxiliary loss, and its estimates join the MLP's input too. Frames
shared by windows are encoded once: the training batches are runs of consecutive windows.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import NDArray
from torch import Tensor, nn

from invdyn._arrays import spread
from invdyn.errors import DataError, InputError
from invdyn.learn.config import ModelConfig
from invdyn.learn.keys import ACTION, OBS_IMAGE_PREFIX, OBS_STATE

Float = NDArray[np.float64]
Int = NDArray[np.int64]
Frames = NDArray[np.uint8]
WINDOW_FRAMES = "window_frames"
"""(B, W) batch key: the rows, in each camera's (N, h, w, 3) frames, of each window's frames."""

# width of a camera's features, and of the temporal convolution over a window's keypoints
IMAGE_FEATURES = 256
TEMPORAL_WIDTH = 128
_ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
    "tanh": nn.Tanh,
    "elu": nn.ELU,
}


def episode_arrays(episodes: Iterable[Any]) -> list[tuple[Float, Float]]:
    """The (state, action) arrays of each episode, checked once.

    Args:
      episodes: items with ``state``/``action`` attributes (`invdyn.learn.datasets.Episode`, or a
        `Dataset` of them), mappings with ``"observation.state"`` (or ``"state"``) and
        ``"action"``, or ``(state, action)`` pairs.

    Returns:
      one ``((T, n_state), (T, n_action))`` pair of float64 arrays per episode; an episode
      without state (frames and actions alone) has ``n_state = 0``, which only a model of
      frames alone takes.

    Raises:
      InputError: no episodes, no action, wrong shapes, sizes that differ between episodes,
        or non-finite values.
    """
    if isinstance(episodes, Mapping | str | bytes):
        raise InputError(f"episodes must be a sequence of episodes, got {type(episodes).__name__}")
    episodes = list(episodes)
    if not episodes:
        raise InputError("episodes must be a non-empty sequence of episodes")
    out: list[tuple[Float, Float]] = []
    for i, episode in enumerate(episodes):
        if isinstance(episode, Mapping):
            state = episode.get(OBS_STATE, episode.get("state"))
            action = episode.get(ACTION)
        elif isinstance(episode, tuple) and len(episode) == 2:
            state, action = episode
        else:
            state = getattr(episode, "state", None)
            action = getattr(episode, "action", None)
        if action is None:
            raise InputError(f"episode {i} has no {ACTION}; training and evaluation need it")
        if state is None:
            # frames and actions alone: a state of no entries, for models of frames alone
            state = np.zeros((len(action), 0))
        arrays = []
        for name, x in (("state", state), ("action", action)):
            if isinstance(x, Tensor):
                x = x.detach().cpu().numpy()
            try:
                a = np.asarray(x, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise InputError(f"episode {i} {name} must be an array of numbers: {exc}") from None
            if a.ndim != 2:
                raise InputError(f"episode {i} {name} must have shape (T, n), got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise InputError(f"episode {i} {name} has non-finite values")
            arrays.append(a)
        state, action = arrays
        if state.shape[0] != action.shape[0]:
            raise InputError(
                f"episode {i}: state has {state.shape[0]} steps but action has {action.shape[0]}"
            )
        if out and (state.shape[1], action.shape[1]) != (out[0][0].shape[1], out[0][1].shape[1]):
            raise InputError(
                f"episode {i} has n_state, n_action = {state.shape[1]}, {action.shape[1]}; "
                f"episode 0 has {out[0][0].shape[1]}, {out[0][1].shape[1]}"
            )
        out.append((state, action))
    return out


def window_starts(lengths: Sequence[int], *, context: int, ahead: int) -> tuple[Int, Int]:
    """Every time ``t`` whose window ``t - context .. t + ahead`` lies inside its episode.

    Args:
      lengths: (n_episodes,) the steps of each episode, laid end to end.
      context: past observations before ``o_t``.
      ahead: steps from ``o_t`` to the window's last observation (``horizon + future``).

    Returns:
      (N,) indices of ``t`` into the concatenated episodes, and (N,) the episode of each.
    """
    lengths_a = np.asarray(lengths, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths_a)[:-1]])
    # an episode of T steps has windows at t = context .. T - ahead - 1
    counts = np.maximum(lengths_a - ahead - context, 0)
    total = int(counts.sum())
    episode = np.repeat(np.arange(len(lengths_a), dtype=np.int64), counts)
    # position of each window within its episode's run of windows
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    within = np.arange(total, dtype=np.int64) - first[episode]
    return offsets[episode] + context + within, episode


@dataclasses.dataclass(frozen=True)
class Windows:
    """The windows of a set of episodes, as indices into their concatenated arrays.

    Attributes:
      states: (n_steps, n_state) every state of the episodes, end to end.
      actions: (n_steps, n_action) every action.
      obs_index: (N, W) rows of `states` of each window, at the steps `ModelConfig.offsets`.
      action_index: (N, n_out) rows of `actions` of each target: ``t .. t + n_out - 1``.
      episode: (N,) the episode of each window.
      now: column of `obs_index` that holds ``t`` (the context ``C``); ``t + H`` is the next.
      chunk: targets are (n_out, n_action) chunks rather than single actions.
      images: feature key -> (n_steps, H, W, 3) uint8 frames of every step, as `states`.
    """

    states: Float
    actions: Float
    obs_index: Int
    action_index: Int
    episode: Int
    now: int
    chunk: bool
    images: Mapping[str, Frames] = dataclasses.field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.obs_index.shape[0])

    def batch(self, rows: Any = slice(None)) -> dict[str, Any]:
        """The batch of windows `rows`, in physical units, each frame once (see the module
        docstring)."""
        action = self.actions[self.action_index[rows]]
        inputs = window_inputs(self.obs_index[rows], self.states, self.images)
        return inputs | {ACTION: action if self.chunk else action[:, 0]}


def window_inputs(index: Any, states: Any, images: Mapping[str, Any]) -> dict[str, Any]:
    """A model's inputs for the windows whose observations are the rows `index` (B, W) of the
    concatenated (n_steps, n_state) `states` (None: no state) and of each camera's
    (n_steps, h, w, 3) frames of `images` (feature key -> frames), each frame given once.
    Numpy arrays, or torch tensors on one device."""
    batch = {} if states is None else {OBS_STATE: states[index]}
    if not images:
        return batch
    if isinstance(index, Tensor):
        shared, window_frames = torch.unique(index, return_inverse=True)
    else:
        shared, window_frames = np.unique(index, return_inverse=True)
    frames = {key: frames[shared] for key, frames in images.items()}
    return batch | frames | {WINDOW_FRAMES: window_frames.reshape(index.shape)}


def select_windows(
    arrays: Sequence[tuple[Float, Float]],
    episodes: Any,
    indices: Sequence[int],
    config: ModelConfig,
) -> Windows:
    """The windows of `config` over the episodes `indices` of `episode_arrays` output
    `arrays`, with the frames of the cameras of `config` read from `episodes` (a dataset with
    videos, as `joined_frames`)."""
    chosen = [arrays[i] for i in indices]
    lengths = [state.shape[0] for state, _ in chosen]
    return make_windows(chosen, config, joined_frames(episodes, config, indices, lengths))


def make_windows(
    episodes: Sequence[tuple[Float, Float]],
    config: ModelConfig,
    images: Mapping[str, Frames] | None = None,
) -> Windows:
    """The windows of `config` over `episodes` (pairs from `episode_arrays`), with each
    camera's frames of `images` (feature key -> (n_steps, H, W, 3), the episodes' frames end
    to end, as `joined_frames` gives them)."""
    lengths = [s.shape[0] for s, _ in episodes]
    for key, frames in (images or {}).items():
        if len(frames) != sum(lengths):
            raise InputError(
                f"{key} has {len(frames)} frames, but the episodes have {sum(lengths)} steps"
            )
    t, episode = window_starts(lengths, context=config.context, ahead=config.offsets[-1])
    obs_offsets = np.array(config.offsets)
    action_offsets = np.arange(config.n_steps)
    return Windows(
        states=np.concatenate([s for s, _ in episodes]),
        actions=np.concatenate([a for _, a in episodes]),
        obs_index=t[:, None] + obs_offsets,
        action_index=t[:, None] + action_offsets,
        episode=episode,
        now=config.context,
        chunk=config.chunk,
        images=dict(images or {}),
    )


def joined_frames(
    episodes: Any, config: ModelConfig, indices: Iterable[int], lengths: Sequence[int]
) -> dict[str, Frames]:
    """The frames of each camera of `config` in the episodes `indices` of a dataset with
    videos, end to end, each array filled an episode at a time as the episodes are decoded, so
    that the frames are held once.

    Args:
      episodes: an `invdyn.learn.datasets.Dataset` (anything with ``frames(key, i)``).
      config: names the cameras.
      indices: the episodes, in order.
      lengths: the steps of each of those episodes.

    Returns:
      feature key (``observation.images.<camera>``) -> (sum of `lengths`, H, W, 3) uint8.

    Raises:
      InputError: the model sees cameras and `episodes` is not a dataset that has them.
      DataError: an episode has another number of frames than steps, or frames of another
        size than the first episode's.
    """
    keys = [OBS_IMAGE_PREFIX + name for name in config.camera_names]
    if not keys:
        return {}
    if not callable(getattr(episodes, "frames", None)):
        raise InputError(
            f"the model sees cameras {list(config.camera_names)}: give a dataset with videos "
            "(invdyn.learn.datasets.read_dataset), not bare episodes"
        )
    chosen = list(indices)
    if len(chosen) != len(lengths):
        raise InputError(f"{len(chosen)} episodes but {len(lengths)} lengths")
    return {key: _join(episodes, key, chosen, lengths) for key in keys}


def _join(episodes: Any, key: str, indices: list[int], lengths: Sequence[int]) -> Frames:
    """(sum of `lengths`, H, W, 3) frames of video `key` in the episodes `indices`, end to
    end."""
    joined = np.empty((0, 0, 0, 3), dtype=np.uint8)
    end = 0
    for k, (i, length) in enumerate(zip(indices, lengths)):
        frames = episodes.frames(key, i)
        if k == 0:
            joined = np.empty((sum(lengths), *frames.shape[1:]), dtype=np.uint8)
        if frames.shape != (length, *joined.shape[1:]):
            raise DataError(
                f"episode {i} of {key} has frames {frames.shape}, expected "
                f"{(length, *joined.shape[1:])} (a frame per step, the size of episode "
                f"{indices[0]}'s)"
            )
        joined[end : end + length] = frames
        end += length
    return joined


@dataclasses.dataclass(frozen=True)
class NormStats:
    """Means and standard deviations used to normalise a model's inputs and targets.

    Attributes:
      state_mean, state_std: (n_state,) of the states.
      delta_mean, delta_std: (n_state,) of the state changes ``o_{t+H} - o_t``.
      action_mean, action_std: (n_action,) of the actions.
    """

    state_mean: Float
    state_std: Float
    delta_mean: Float
    delta_std: Float
    action_mean: Float
    action_std: Float

    def to_dict(self) -> dict[str, list[float]]:
        """The statistics as JSON lists (floats round-trip exactly)."""
        return {f.name: getattr(self, f.name).tolist() for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NormStats:
        """Statistics from `to_dict`'s form.

        Raises:
          InputError: a missing or unknown key, wrong lengths, or non-positive deviations.
        """
        names = [f.name for f in dataclasses.fields(cls)]
        if not isinstance(data, Mapping) or set(data) != set(names):
            got = sorted(data) if isinstance(data, Mapping) else type(data).__name__
            raise InputError(f"norm stats need exactly the keys {names}, got {got}")
        try:
            arrays = {name: np.asarray(data[name], dtype=np.float64) for name in names}
        except (TypeError, ValueError) as exc:
            raise InputError(f"norm stats must be lists of numbers: {exc}") from None
        shapes = {name: a.shape for name, a in arrays.items()}
        for group in (
            ("state_mean", "state_std", "delta_mean", "delta_std"),
            ("action_mean", "action_std"),
        ):
            if len({shapes[name] for name in group}) > 1 or len(shapes[group[0]]) != 1:
                listed = ", ".join(f"{name} {shapes[name]}" for name in group)
                raise InputError(
                    f"norm stats {', '.join(group)} must be lists of one length: {listed}"
                )
        for name, a in arrays.items():
            if not np.all(np.isfinite(a)):
                raise InputError(f"norm stats {name} must be finite numbers")
            if name.endswith("std") and not np.all(a > 0):
                raise InputError(f"norm stats {name} must be positive")
        return cls(**arrays)


def compute_norm_stats(windows: Windows) -> NormStats:
    """Normalisation statistics of `windows` (pass the training split only)."""
    if len(windows) == 0:
        raise InputError("no windows to compute normalisation statistics from")
    now, future = windows.obs_index[:, windows.now], windows.obs_index[:, windows.now + 1]
    delta = windows.states[future] - windows.states[now]
    # every state and action of the episodes counts, window or not
    return NormStats(
        state_mean=windows.states.mean(axis=0),
        state_std=spread(windows.states),
        delta_mean=delta.mean(axis=0),
        delta_std=spread(delta),
        action_mean=windows.actions.mean(axis=0),
        action_std=spread(windows.actions),
    )


def _convolution(channels_in: int, width: int, stride: int = 1) -> list[nn.Module]:
    """A 3x3 convolution with GroupNorm."""
    return [
        nn.Conv2d(channels_in, width, 3, stride=stride, padding=1),
        nn.GroupNorm(min(8, width), width),
    ]


class _ResidualBlock(nn.Module):
    """Two 3x3 convolutions with GroupNorm and a skip connection (ResNet's basic block), a
    1x1 projection on the skip when the width changes."""

    def __init__(self, channels_in: int, width: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            *_convolution(channels_in, width), nn.GELU(), *_convolution(width, width)
        )
        self.skip = nn.Identity() if channels_in == width else nn.Conv2d(channels_in, width, 1)

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(self.skip(x) + self.body(x))


class SpatialSoftmax(nn.Module):
    """(N, K, h, w) feature maps -> (N, K, 2): the expected image position ``(x, y)``, each in
    [-1, 1] across the image, under each map's softmax over its pixels, at a learnt
    temperature (Levine et al. 2016)."""

    def __init__(self) -> None:
        super().__init__()
        self.log_temperature = nn.Parameter(torch.zeros(()))

    def forward(self, maps: Tensor) -> Tensor:
        height, width = maps.shape[-2:]
        weights = (maps.flatten(2) * torch.exp(-self.log_temperature)).softmax(-1)
        weights = weights.unflatten(-1, (height, width))
        ys = torch.linspace(-1, 1, height, device=maps.device, dtype=maps.dtype)
        xs = torch.linspace(-1, 1, width, device=maps.device, dtype=maps.dtype)
        return torch.stack([weights.sum(-2) @ xs, weights.sum(-1) @ ys], dim=-1)


class FrameEncoder(nn.Module):
    """One camera's encoder: keypoints of every frame, then features of every window.

    Args:
      encoder: widths (`ModelConfig.encoder`).
      keypoints: keypoints per frame, K.
      window: frames per window, W >= 2.
    """

    def __init__(self, encoder: tuple[int, ...], keypoints: int, window: int) -> None:
        super().__init__()
        layers: list[nn.Module] = [*_convolution(3, encoder[0], stride=2), nn.GELU()]
        for channels_in, width in itertools.pairwise(encoder):
            layers.append(_ResidualBlock(channels_in, width))
        layers += [nn.Conv2d(encoder[-1], keypoints, 1), SpatialSoftmax(), nn.Flatten()]
        self.keypoints = nn.Sequential(*layers)
        # W - 1 steps of (position, motion) of 2 K coordinates each
        steps = window - 1
        kernel = min(3, steps)
        self.temporal = nn.Sequential(
            nn.Conv1d(4 * keypoints, TEMPORAL_WIDTH, kernel),
            nn.GELU(),
            nn.Flatten(),
            nn.Linear(TEMPORAL_WIDTH * (steps - kernel + 1), IMAGE_FEATURES),
            nn.GELU(),
        )

    def forward(self, frames: Tensor, window_frames: Tensor) -> tuple[Tensor, Tensor]:
        """(B, IMAGE_FEATURES) features of the windows `window_frames` (B, W) of the frames
        (N, 3, h, w), and the (B, W - 1, 4 K) keypoint tracks the features are computed from:
        the keypoints of every frame after the first, and their motion in pixels since the
        frame before."""
        points = self.keypoints(frames)[window_frames]
        # keypoint motion between consecutive frames of the window, in pixels: (x, y) pairs
        height, width = frames.shape[-2:]
        pixels = torch.tensor([0.5 * width, 0.5 * height], device=frames.device).repeat(
            points.shape[-1] // 2
        )
        motion = (points[:, 1:] - points[:, :-1]) * pixels
        tracks = torch.cat([points[:, 1:], motion], dim=-1)
        return self.temporal(tracks.transpose(1, 2)), tracks


def _random_shift(x: Tensor, pad: int) -> Tensor:
    """(N, C, h, w) images all shifted by the same random offset of up to `pad` pixels each
    way, the border repeated (DrQ's augmentation, one offset for frames that windows share)."""
    height, width = x.shape[-2:]
    padded = F.pad(x, (pad, pad, pad, pad), mode="replicate")
    row, col = (int(k) for k in torch.randint(0, 2 * pad + 1, (2,)))
    return padded[..., row : row + height, col : col + width]


def _colour_jitter(x: Tensor, strength: float) -> Tensor:
    """(N, 3, h, w) images in [-0.5, 0.5], each colour channel scaled by a random factor in
    ``[1 - strength, 1 + strength]`` and shifted by up to ``strength / 2``, the same for all."""
    scale = 1.0 + strength * (2.0 * torch.rand(3, 1, 1, device=x.device) - 1.0)
    shift = 0.5 * strength * (2.0 * torch.rand(3, 1, 1, device=x.device) - 1.0)
    return x * scale + shift


def mlp(n_in: int, hidden: tuple[int, ...], n_out: int, activation: str) -> nn.Sequential:
    """A multilayer perceptron: linear layers of widths `hidden`, each followed by the
    `activation` (a name of `invdyn.learn.config.ACTIVATIONS`), then a linear layer to
    `n_out`."""
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(n_in, width), _ACTIVATIONS[activation]()]
        n_in = width
    layers.append(nn.Linear(n_in, n_out))
    return nn.Sequential(*layers)


class Inference(NamedTuple):
    """What `InverseDynamicsModel.infer` reads from a batch of B windows, in physical units.

    Attributes:
      actions: (B, n_action), or (B, H, n_action) when chunked: the members' mean prediction.
      uncertainty: the members' standard deviation, shaped as ``actions`` (zero for one model).
      states: (B, W - 1, n_state) the states of each window's observations after the first as
        estimated from its frames (`ModelConfig.state_weight`), the members' mean, in float64
        (the training states' mean added in it); None for a model that does not estimate
        states.
    """

    actions: Tensor
    uncertainty: Tensor
    states: Tensor | None


def _real_tensor(name: str, value: Any, device: torch.device) -> Tensor:
    """`value` (a tensor, an array or nested lists) as a tensor of real numbers on `device`, or
    `InputError` naming `name`."""
    if not isinstance(value, Tensor):
        try:
            value = np.asarray(value)
        except ValueError as exc:  # ragged lists
            raise InputError(f"{name} must be an array of numbers: {exc}") from None
        real = value.dtype.kind in "biuf"
    else:
        real = not value.is_complex()
    if not real:
        raise InputError(f"{name} must hold real numbers, got dtype {value.dtype}")
    return torch.as_tensor(value, device=device)


class InverseDynamicsModel(nn.Module):
    """An MLP inverse dynamics model, or a deep ensemble of them, with normalisation built in.

    Args:
      config: the architecture and head.
      stats: normalisation statistics of the training split; they fix ``n_state`` and
        ``n_action``.

    Every member maps the normalised window (and state change) to its head's outputs; members
    are initialised independently from torch's current random state and trained on the same
    batches (the mean of their losses), as in deep ensembles (Lakshminarayanan et al. 2017).
    """

    def __init__(self, config: ModelConfig, stats: NormStats) -> None:
        super().__init__()
        self.config = config
        self.stats = stats
        self.n_state = int(stats.state_mean.shape[0])
        self.n_action = int(stats.action_mean.shape[0])
        # D: the predicted numbers, n_out steps of n_action each
        self.n_out = config.n_steps
        dim = self.n_out * self.n_action
        n_in = (config.window + int(config.delta)) * self.n_state if config.state else 0
        n_in += len(config.camera_names) * IMAGE_FEATURES
        if config.state and self.n_state == 0:
            raise InputError(
                "model.state reads observation.state, but the training data has no state: "
                "a model of frames alone sets model.state=false and names its cameras "
                "(model.cameras=front)"
            )
        if config.state_weight > 0:
            if self.n_state == 0:
                raise InputError(
                    "model.state_weight estimates observation.state from frames, but the "
                    "training data has no state"
                )
            n_in += (config.window - 1) * self.n_state
        # the output head: the width of each member's last layer, the loss, the prediction
        self.head = config.output_head
        n_head = self.head.n_outputs(dim)
        self.members = nn.ModuleList(
            mlp(n_in, config.hidden, n_head, config.activation) for _ in range(config.ensemble)
        )
        # per member, an image encoder per camera (none without cameras)
        self.encoders = nn.ModuleList(
            nn.ModuleDict(
                {
                    name: FrameEncoder(config.encoder, config.keypoints, config.window)
                    for name in config.camera_names
                }
            )
            for _ in range(config.ensemble if config.camera_names else 0)
        )
        # per member, the MLP that estimates a frame's state from that frame's keypoint tracks
        # (every camera's), shared by the frames
        n_tracks = len(config.camera_names) * 4 * config.keypoints
        self.state_estimators = nn.ModuleList(
            mlp(n_tracks, config.hidden, self.n_state, config.activation)
            for _ in range(config.ensemble if config.state_weight > 0 else 0)
        )
        # normalisation lives in (non-persistent) buffers, so it follows .to(device); it is
        # saved as norm_stats.json, not in the weights. The states' mean stays in float64,
        # in which `_centred` subtracts it: states far from zero keep their small changes
        for f in dataclasses.fields(stats):
            dtype = torch.float64 if f.name == "state_mean" else torch.float32
            value = torch.as_tensor(getattr(stats, f.name), dtype=dtype)
            self.register_buffer(f.name, value, persistent=False)

    def _buffer(self, name: str) -> Tensor:
        value = getattr(self, name)
        assert isinstance(value, Tensor)
        return value

    def _observations(self, batch: Mapping[str, Any]) -> Tensor | None:
        """The (B, W, n_state) state windows of a batch; None for a model of frames alone."""
        return self._state_windows(batch) if self.config.state else None

    def _state_windows(self, batch: Mapping[str, Any]) -> Tensor:
        """The (B, W, n_state) state windows of a batch, checked (and finite, outside
        training, whose data `read_dataset` checked), in float64 when given so, else float32."""
        obs = batch.get(OBS_STATE)
        if obs is None:
            raise InputError(f"batch has no {OBS_STATE!r}")
        # a list of floats stays float64, as an array of them
        obs = _real_tensor(OBS_STATE, obs, self._buffer("state_mean").device)
        if obs.dtype != torch.float64:
            obs = obs.float()
        expected = (self.config.window, self.n_state)
        if obs.ndim != 3 or tuple(obs.shape[1:]) != expected:
            raise InputError(
                f"{OBS_STATE} must have shape (B, {expected[0]}, {expected[1]}), "
                f"got {tuple(obs.shape)}"
            )
        if not self.training and not bool(torch.isfinite(obs).all()):
            raise InputError(f"{OBS_STATE} holds non-finite values (NaN or inf)")
        return obs

    def _images(self, batch: Mapping[str, Any]) -> tuple[dict[str, Tensor], Tensor | None]:
        """Each camera's (N, 3, h, w) frames of a batch in [-0.5, 0.5] (shifted and jittered
        when training with `ModelConfig.augment` and `ModelConfig.jitter`), and the (B, W)
        rows of each window's frames; ``({}, None)`` without cameras."""
        if not self.config.camera_names:
            return {}, None
        device = self._buffer("state_mean").device
        window = self.config.window
        shared = batch.get(WINDOW_FRAMES)
        window_frames = None
        if shared is not None:
            window_frames = torch.as_tensor(shared, dtype=torch.long, device=device)
            if window_frames.ndim != 2 or window_frames.shape[1] != window:
                raise InputError(
                    f"{WINDOW_FRAMES} must have shape (B, {window}), "
                    f"got {tuple(window_frames.shape)}"
                )
        out = {}
        for name in self.config.camera_names:
            key = OBS_IMAGE_PREFIX + name
            frames = batch.get(key)
            if frames is None:
                raise InputError(f"batch has no {key!r}")
            frames = _real_tensor(key, frames, device)
            if frames.dtype != torch.uint8:
                raise InputError(f"{key} must hold uint8 pixels (0 to 255), got {frames.dtype}")
            if shared is None:
                # (B, W, h, w, 3): every window's own frames
                if frames.ndim != 5 or frames.shape[1] != window or frames.shape[-1] != 3:
                    raise InputError(
                        f"{key} must have shape (B, {window}, h, w, 3), got {tuple(frames.shape)}"
                    )
                count = frames.shape[0]
                window_frames = torch.arange(count * window, device=device).view(count, window)
                frames = frames.flatten(0, 1)
            if frames.ndim != 4 or frames.shape[-1] != 3:
                raise InputError(f"{key} must have shape (N, h, w, 3), got {tuple(frames.shape)}")
            x = frames.permute(0, 3, 1, 2).float() / 255.0 - 0.5
            if self.training and self.config.augment:
                x = _random_shift(x, self.config.augment)
            if self.training and self.config.jitter:
                x = _colour_jitter(x, self.config.jitter)
            out[name] = x
        assert window_frames is not None
        count = min(x.shape[0] for x in out.values())
        if (
            window_frames.numel()
            and not 0 <= int(window_frames.min()) <= int(window_frames.max()) < count
        ):
            raise InputError(f"{WINDOW_FRAMES} must index the batch's {count} frames")
        return out, window_frames

    def _head_outputs(self, batch: Mapping[str, Any]) -> tuple[Tensor, Tensor | None, int]:
        """(E, B, n_head) head outputs of a batch, the (E, B, W - 1, n_state) normalised states
        estimated from its frames (None without `ModelConfig.state_weight`), and its number
        of windows B."""
        if not isinstance(batch, Mapping):
            raise InputError(
                f"a batch maps {OBS_STATE!r} (and the cameras' frames) to arrays, as "
                f"make_windows(...).batch() gives it; got {type(batch).__name__}"
            )
        obs = self._observations(batch)
        images, window_frames = self._images(batch)
        counts = {int(x.shape[0]) for x in (obs, window_frames) if x is not None}
        if len(counts) != 1:
            raise InputError(
                f"{OBS_STATE} and the frames of the batch have different numbers of windows, "
                f"{sorted(counts)}"
            )
        return *self(obs, images, window_frames), counts.pop()

    def features(self, obs: Tensor) -> Tensor:
        """(B, n) float32 normalised state input of (B, W, n_state) observation windows."""
        centred = self._centred(obs)
        parts = [self._scaled(centred).flatten(1)]
        if self.config.delta:
            now = self.config.context
            delta = (centred[:, now + 1] - centred[:, now]).float()
            parts.append((delta - self._buffer("delta_mean")) / self._buffer("delta_std"))
        return torch.cat(parts, dim=1)

    def _centred(self, obs: Tensor) -> Tensor:
        """(..., n_state) states less the training states' mean, in float64: a state of 1e6
        that moves by 1e-3 keeps its motion, which float32 (7 digits) would round away."""
        return obs.double() - self._buffer("state_mean")

    def _scaled(self, centred: Tensor) -> Tensor:
        """(..., n_state) float32 normalised states of `_centred` states."""
        return centred.float() / self._buffer("state_std")

    def forward(
        self,
        obs: Tensor | None,
        images: Mapping[str, Tensor] | None = None,
        window_frames: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """(E, B, n_head) raw head outputs of each ensemble member for (B, W, n_state) state
        windows (None for a model of frames alone) and, with cameras, the (N, 3, h, w) frames
        and (B, W) rows of each window's frames of `_images`; and with
        `ModelConfig.state_weight`, each member's (E, B, W - 1, n_state) estimate of the
        normalised states of each window's frames after the first (else None)."""
        state = [self.features(obs)] if obs is not None else []
        outputs, estimates = [], []
        for k, member in enumerate(self.members):
            encoded: list[Tensor] = []
            tracks: list[Tensor] = []
            if images:
                encoders = self.encoders[k]
                assert isinstance(encoders, nn.ModuleDict) and window_frames is not None
                with self._autocast(window_frames.device):
                    for name, x in images.items():
                        features, camera_tracks = encoders[name](x, window_frames)
                        encoded.append(features.float())
                        tracks.append(camera_tracks.float())
            if self.state_estimators:
                # (B, W - 1, n_state): each frame's state from its own tracks
                estimate = self.state_estimators[k](torch.cat(tracks, dim=-1))
                encoded.append(estimate.flatten(1))
                estimates.append(estimate)
            outputs.append(member(torch.cat([*state, *encoded], dim=1)))
        return torch.stack(outputs), torch.stack(estimates) if estimates else None

    def _autocast(self, device: torch.device) -> torch.autocast:
        """bfloat16 autocast on CUDA with `ModelConfig.mixed_precision`, else disabled."""
        enabled = device.type == "cuda" and self.config.mixed_precision
        return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)

    def _denormalise(self, y: Tensor) -> Tensor:
        """(..., n_out, n_action) physical actions of (..., D) normalised ones."""
        y = y.unflatten(-1, (self.n_out, self.n_action))
        return y * self._buffer("action_std") + self._buffer("action_mean")

    def loss(self, batch: Mapping[str, Any]) -> tuple[Tensor, dict[str, float]]:
        """The training loss of a batch, and metrics to log.

        Returns:
          the scalar loss (mean over members and windows; per dimension for the mixture's
          negative log-likelihood, plus `ModelConfig.state_weight` times ``state_mse``), and
          ``{"loss", "mse"}`` where ``mse`` is the mean squared error of the point prediction
          in normalised units, with ``"state_mse"``, that of the states estimated from frames,
          when the model estimates them.
        """
        target = batch.get(ACTION)
        if target is None:
            raise InputError(f"batch has no {ACTION!r}")
        out, estimates, count = self._head_outputs(batch)
        target = torch.as_tensor(target, dtype=torch.float32, device=out.device)
        expected = (count, self.n_out, self.n_action)
        if tuple(target.shape) != (expected if self.config.chunk else (expected[0], expected[2])):
            raise InputError(f"{ACTION} must have shape {expected}, got {tuple(target.shape)}")
        # (B, D) normalised targets
        y = ((target - self._buffer("action_mean")) / self._buffer("action_std")).reshape(count, -1)
        loss = self.head.objective(out, y)
        metrics = {}
        if estimates is not None:
            obs = self._state_windows(batch)
            states = self._scaled(self._centred(obs[:, 1:]))
            state_mse = (estimates - states).square().mean()
            loss = loss + self.config.state_weight * state_mse
            metrics["state_mse"] = float(state_mse.detach())
        with torch.no_grad():
            mse = (self.head.point(out.detach()).mean(0) - y).square().mean()
        return loss, {"loss": float(loss.detach()), "mse": float(mse)} | metrics

    @torch.no_grad()
    def infer(self, batch: Mapping[str, Any]) -> Inference:
        """Everything the model reads from a batch of windows in one pass: its actions, their
        epistemic uncertainty and, with `ModelConfig.state_weight`, its estimate of the states
        of the window's frames (see `Inference`), in physical units."""
        out, estimates, _ = self._head_outputs(batch)
        actions = self._denormalise(self.head.point(out))
        mean = actions.mean(0)
        std = actions.std(0, unbiased=False)
        if not self.config.chunk:
            mean, std = mean[:, 0], std[:, 0]
        states = None
        if estimates is not None:
            states = estimates.mean(0) * self._buffer("state_std") + self._buffer("state_mean")
        return Inference(actions=mean, uncertainty=std, states=states)

    def predict_with_uncertainty(self, batch: Mapping[str, Any]) -> tuple[Tensor, Tensor]:
        """Actions and their epistemic uncertainty for a batch of windows.

        Returns:
          the mean of the members' predictions and their standard deviation (zero for a single
          model), each (B, n_action), or (B, H, n_action) when chunked, in physical units.
        """
        inference = self.infer(batch)
        return inference.actions, inference.uncertainty

    def estimate_states(self, batch: Mapping[str, Any]) -> Tensor:
        """(B, W - 1, n_state) the states of each window's observations after the first, as the
        model estimates them from its frames (`ModelConfig.state_weight`), the members' mean,
        in physical units.

        Raises:
          InputError: the model does not estimate states.
        """
        if not self.state_estimators:
            raise InputError("the model does not estimate states from frames (model.state_weight)")
        states = self.infer(batch).states
        assert states is not None
        return states

    def predict(self, batch: Mapping[str, Any]) -> Tensor:
        """Actions for a batch of windows: (B, n_action), or (B, H, n_action) when chunked."""
        return self.predict_with_uncertainty(batch)[0]
