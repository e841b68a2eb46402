"""Offscreen rendering of MuJoCo states, the frames of video datasets for inverse dynamics.

`render_frames` renders rows of MuJoCo's full state ``(qpos, qvel)`` from one camera;
`render_collection` renders every episode of a `invdyn.sim.Collection` from its
``full_state``, in the MuJoCo model that `invdyn.sim.scene.scene_for` finds for its source: the
Gymnasium environment's own model with cameras added, or for an invdyn robot a stick figure of
it (`invdyn.sim.scene.robot_scene`).

Rendering needs an OpenGL context without a window. MuJoCo chooses its backend when it is
first imported, from the environment variable ``MUJOCO_GL``, which is always honoured. When it
is unset and there is no display, ``import invdyn`` sets it (`invdyn._headless`): EGL, headless
and hardware accelerated where a GPU driver provides it, else OSMesa, software rendering. If
MuJoCo was imported before invdyn without ``MUJOCO_GL`` (by Gymnasium or a user's script, say),
it uses GLFW, which needs a display: set ``MUJOCO_GL=egl`` (or ``osmesa``) in the environment
then.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib.metadata
import json
import os
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from tqdm.auto import tqdm

from invdyn._arrays import check_count, hash_arrays
from invdyn._files import atomic_open
from invdyn._headless import prepare_gl_context
from invdyn._parallel import iter_in_shards
from invdyn.errors import InputError, InvdynError, warn
from invdyn.sim.collect import Collection
from invdyn.sim.mujoco_model import (
    import_mujoco,
)
from invdyn.sim.scene import scene_for

if TYPE_CHECKING:
    import mujoco

Float = NDArray[np.float64]
Frames = NDArray[np.uint8]

DEFAULT_CAMERA = "default"
"""Camera name of MuJoCo's free camera (id -1), placed by ``mjv_defaultFreeCamera``."""


RENDER_SHARD = 16
"""Episodes that a process renders with one OpenGL context before handing them over."""

# the names of the files of `render_collection`'s cache begin so; bump the format when they
# change, so that older ones are drawn again
SHARD_PREFIX = "shard-"
SHARD_FORMAT = 1


def render_frames(
    mj_model: mujoco.MjModel,
    full_states: ArrayLike,
    *,
    camera: str | int,
    width: int = 64,
    height: int = 64,
) -> Frames:
    """Images of MuJoCo states from one camera: ``mj_forward`` at each state, then render.

    Args:
      mj_model: the MuJoCo model; a copy with a larger offscreen buffer is rendered when
        `width` or `height` exceed its own (``vis.global_.offwidth``, ``offheight``).
      full_states: (T, nq + nv) ``qpos`` and ``qvel`` of `mj_model` at each frame.
      camera: a camera name or id of `mj_model`, or `DEFAULT_CAMERA` (``"default"``) or -1
        for MuJoCo's free camera.
      width: image width in pixels, >= 1.
      height: image height in pixels, >= 1.

    Returns:
      (T, height, width, 3) RGB images, uint8.

    Raises:
      InputError: a bad argument; an unknown camera's message lists the model's cameras.
      InvdynError: MuJoCo cannot create an OpenGL context (see the module docstring).
    """
    mujoco = import_mujoco()
    camera_id = _camera_id(mj_model, camera)
    states = _full_states(mj_model, full_states, "full_states")
    with _renderer(
        mujoco, mj_model, check_count("width", width), check_count("height", height)
    ) as r:
        return _render(mujoco, r, states, camera_id)


class CameraView:
    """Renders one MuJoCo state at a time from one camera, keeping one OpenGL context: for
    closed loops that render as they simulate. A context manager::

        with CameraView(scene, "top", 64, 64) as view:
            frame = view(full_state)  # (height, width, 3) uint8

    Args: as `render_frames`.
    """

    def __init__(
        self, mj_model: mujoco.MjModel, camera: str | int, width: int = 64, height: int = 64
    ) -> None:
        self._mujoco = import_mujoco()
        self._model = mj_model
        self._camera = _camera_id(mj_model, camera)
        self._size = check_count("width", width), check_count("height", height)
        self._renderer: Any = None

    def __enter__(self) -> CameraView:
        self._renderer = _renderer(self._mujoco, self._model, *self._size)
        return self

    def __exit__(self, *exc: object) -> None:
        self._renderer.close()

    def __call__(self, full_state: ArrayLike) -> Frames:
        """(height, width, 3) the image of one (nq + nv) state."""
        state = _full_states(self._model, np.asarray(full_state)[None], "full_state")
        return _render(self._mujoco, self._renderer, state, self._camera)[0]


def render_collection(
    collection: Collection,
    *,
    cameras: Sequence[str | int] = ("front",),
    width: int = 64,
    height: int = 64,
    scene: mujoco.MjModel | None = None,
    workers: int = 1,
    progress: bool = False,
    cache: str | os.PathLike[str] | None = None,
) -> Iterator[dict[str, Frames]]:
    """Videos of every episode of `collection`, from its ``full_state``, one per camera, each
    episode's rendered as it is read: `RENDER_SHARD` episodes at a time, by `workers`
    processes at most two shards each ahead of the one read, so that few are held
    (`invdyn.learn.datasets.stream_videos` writes them to a dataset as they come; ``list()``
    holds them all).

    With a `cache` directory, each shard's frames are also saved there (compressed, written
    atomically) in a file named by a hash of what they are drawn from (`_drawing_key`: the
    scene, the cameras, the size, the OpenGL backend and the versions of MuJoCo and invdyn;
    and the states of its episodes). A shard whose file is there is read rather than
    rendered, so a killed job that is run again renders only the shards it had not finished;
    a damaged file is rendered again. The caller removes the directory (`remove_cache`) when
    it no longer needs it.

    Args:
      collection: the episodes, each with a ``full_state``.
      cameras: camera names or ids of the scene; `DEFAULT_CAMERA` (``"default"``) or -1 is
        MuJoCo's free camera, which every scene has. The scenes of `scene_for` and
        `invdyn.sim.scene.robot_scene` have `invdyn.sim.scene.ROBOT_CAMERAS`.
      width: image width in pixels, >= 1.
      height: image height in pixels, >= 1.
      scene: the MuJoCo model to render in; None for ``scene_for(collection.source)``.
      workers: processes that render episodes in parallel, each with its own OpenGL context
        (`invdyn._parallel.iter_in_shards`); the frames do not depend on it.
      progress: show a progress bar over episodes.
      cache: the directory of saved shards (created if missing), or None to save none.

    Returns:
      An iterator over the episodes, in order: for each, a dict from camera name
      (``"default"`` for -1) to its (T, height, width, 3) uint8 frames.

    Raises:
      InputError: a bad argument, an episode without ``full_state`` or with one that does not
        fit the scene, or an unknown camera (the message lists the scene's cameras); raised
        at the call, before any episode is rendered.
      InvdynError: MuJoCo cannot create an OpenGL context (see the module docstring).
    """
    if not isinstance(collection, Collection):
        raise InputError(
            f"collection must be an invdyn.sim.Collection, got {type(collection).__name__}"
        )
    mj_model = scene_for(collection.source) if scene is None else scene
    ids = camera_ids(mj_model, cameras)
    videos = []
    for k, episode in enumerate(collection.episodes):
        if episode.full_state is None:
            raise InputError(
                f"collection.episodes[{k}] has no full_state (MuJoCo's qpos and qvel) to render"
            )
        name = f"collection.episodes[{k}].full_state"
        videos.append(_full_states(mj_model, episode.full_state, name))
    size = check_count("width", width), check_count("height", height)
    workers = check_count("workers", workers)
    draw = functools.partial(_render_episodes, mj_model, ids, size)
    if cache is not None:
        Path(cache).mkdir(parents=True, exist_ok=True)
        key = _drawing_key(mj_model, ids, size)
        shape = (list(ids), size[1], size[0])
        draw = functools.partial(_saved_shard, draw, Path(cache), key, shape)

    def rendered() -> Iterator[dict[str, Frames]]:
        with tqdm(total=len(videos), disable=not progress, desc="render", unit="ep") as bar:
            yield from iter_in_shards(
                draw, videos, workers, shard=RENDER_SHARD, ahead=2 * workers, bar=bar
            )

    return rendered()


def _render_episodes(
    mj_model: Any,
    ids: dict[str, int],
    size: tuple[int, int],
    episodes: Sequence[Float],
    done: Callable[[], Any] | None = None,
) -> list[dict[str, Frames]]:
    """`render_collection`'s frames of the (T, nq + nv) states of each of `episodes`, calling
    ``done()`` after each when given."""
    mujoco = import_mujoco()
    rendered = []
    with _renderer(mujoco, mj_model, *size) as renderer:
        for states in episodes:
            rendered.append({name: _render(mujoco, renderer, states, i) for name, i in ids.items()})
            if done is not None:
                done()
    return rendered


def cached_shards(cache: str | os.PathLike[str]) -> int:
    """How many shards `render_collection` saved in the directory `cache` (0 if missing)."""
    return len(list(Path(cache).glob(f"{SHARD_PREFIX}*.npz")))


def remove_cache(cache: str | os.PathLike[str]) -> None:
    """Delete the files of `render_collection`'s `cache` directory, and the directory once
    nothing else is left in it; files that cannot be deleted are left."""
    # the shards, and the temporary files of shards killed while being written
    for pattern in (f"{SHARD_PREFIX}*.npz", f".{SHARD_PREFIX}*.tmp"):
        for file in Path(cache).glob(pattern):
            with contextlib.suppress(OSError):
                file.unlink()
    with contextlib.suppress(OSError):  # missing, or holding other files
        Path(cache).rmdir()


def _drawing_key(mj_model: Any, ids: dict[str, int], size: tuple[int, int]) -> str:
    """What frames depend on besides the states, as text to hash: the compiled scene, the
    cameras, the size, the OpenGL backend and the versions of MuJoCo and invdyn."""
    mujoco = import_mujoco()
    scene = np.empty(mujoco.mj_sizeModel(mj_model), dtype=np.uint8)
    mujoco.mj_saveModel(mj_model, None, scene)
    digest = hashlib.sha256(scene.tobytes()).hexdigest()
    invdyn_version = importlib.metadata.version("invdyn")
    versions = [SHARD_FORMAT, mujoco.__version__, invdyn_version, os.environ.get("MUJOCO_GL")]
    return json.dumps([*versions, digest, ids, size])


def _saved_shard(
    draw: Callable[..., list[dict[str, Frames]]],
    cache: Path,
    key: str,
    shape: tuple[list[str], int, int],
    episodes: Sequence[Float],
    done: Callable[[], Any] | None = None,
) -> list[dict[str, Frames]]:
    """``draw(episodes, done)``, read from its file in `cache` when there is one, else drawn
    and saved there (a save that fails warns, and the frames go on); the file is named by a
    hash of `key` and the episodes' states, and holds frames of `shape`: (cameras, height,
    width)."""
    digest = hashlib.sha256(key.encode())
    hash_arrays(digest, episodes)
    file = cache / f"{SHARD_PREFIX}{digest.hexdigest()[:40]}.npz"
    frames = _load_shard(file, episodes, shape)
    if frames is not None:
        if done is not None:
            for _ in frames:
                done()
        return frames
    frames = draw(episodes, done=done)
    try:
        with atomic_open(file, "wb") as out:
            arrays = [video for episode in frames for video in episode.values()]
            np.savez_compressed(out, *arrays, cameras=np.array(list(frames[0])))
    except OSError as error:
        warn(f"rendered episodes not saved in {cache}: {error}")
    return frames


def _load_shard(
    file: Path, episodes: Sequence[Float], shape: tuple[list[str], int, int]
) -> list[dict[str, Frames]] | None:
    """The frames of `episodes` saved in `file` by `_saved_shard`, or None unless it holds
    them: a frame per state, of the (cameras, height, width) of `shape`."""
    cameras, height, width = shape
    shapes = [(len(states), height, width, 3) for states in episodes for _ in cameras]
    try:
        with np.load(file, allow_pickle=False) as archive:
            names = [str(name) for name in archive["cameras"]]
            videos = [archive[f"arr_{i}"] for i in range(len(shapes))]
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile):  # drawn again
        return None
    if names != cameras or any(
        v.shape != want or v.dtype != np.uint8 for v, want in zip(videos, shapes)
    ):
        return None
    n = len(cameras)
    return [dict(zip(cameras, videos[k * n : (k + 1) * n])) for k in range(len(episodes))]


# Gymnasium scenes


# rendering


def _renderer(mujoco: ModuleType, mj_model: Any, width: int, height: int) -> Any:
    """A ``mujoco.Renderer`` of `width` x `height`, the buffer enlarged on a copy if needed."""
    buffer = mj_model.vis.global_
    if width > buffer.offwidth or height > buffer.offheight:
        mj_model = copy.deepcopy(mj_model)
        mj_model.vis.global_.offwidth = max(width, buffer.offwidth)
        mj_model.vis.global_.offheight = max(height, buffer.offheight)
    prepare_gl_context()
    try:
        return mujoco.Renderer(mj_model, height=height, width=width)
    except Exception as error:  # GLFW without a display, no EGL device, ...
        raise InvdynError(
            f"MuJoCo cannot render offscreen ({' '.join(str(error).split())}); without a "
            "display set MUJOCO_GL=egl or MUJOCO_GL=osmesa before mujoco is imported"
        ) from error


def _render(mujoco: ModuleType, renderer: Any, states: Float, camera_id: int) -> Frames:
    """(T, H, W, 3) images of the (T, nq + nv) states from camera `camera_id`."""
    mj_model = renderer.model
    data = mujoco.MjData(mj_model)
    frames = np.empty((len(states), renderer.height, renderer.width, 3), dtype=np.uint8)
    for t, state in enumerate(states):
        data.qpos[:] = state[: mj_model.nq]
        data.qvel[:] = state[mj_model.nq :]
        mujoco.mj_forward(mj_model, data)
        renderer.update_scene(data, camera=camera_id)
        renderer.render(out=frames[t])
    return frames


# argument checks


def camera_ids(mj_model: Any, cameras: Sequence[str | int]) -> dict[str, int]:
    """The cameras of `mj_model` that `render_collection` takes: name -> id (-1: free).

    Raises:
      InputError: not a non-empty sequence, an unknown camera (the message lists the model's),
        or one camera twice.
    """
    if not isinstance(cameras, Sequence) or isinstance(cameras, str) or not cameras:
        raise InputError(
            f"cameras must be a non-empty sequence of camera names or ids, got {cameras!r}"
        )
    ids: dict[str, int] = {}
    for camera in cameras:
        camera_id = _camera_id(mj_model, camera)
        ids[_camera_name(mj_model, camera, camera_id)] = camera_id
    if len(ids) < len(cameras):
        raise InputError(f"cameras names a camera twice: {list(cameras)!r}")
    return ids


def _camera_id(mj_model: Any, camera: object) -> int:
    """The id of `camera` (a name or an id of `mj_model`, -1 or "default"), or `InputError`."""
    names = [mj_model.camera(i).name for i in range(mj_model.ncam)]
    if isinstance(camera, str):
        if camera in names:
            return names.index(camera)
        if camera == DEFAULT_CAMERA:
            return -1
    elif isinstance(camera, (int, np.integer)) and not isinstance(camera, bool):
        if -1 <= camera < mj_model.ncam:
            return int(camera)
    available = ", ".join([*(repr(n) for n in names), f"{DEFAULT_CAMERA!r} (the free camera)"])
    if not isinstance(camera, str):
        ids = f"ids 0 to {len(names) - 1}, or " if names else ""
        available += f"; or {ids}-1 for the free camera"
    raise InputError(f"unknown camera {camera!r}; the model has {available}")


def _camera_name(mj_model: Any, camera: str | int, camera_id: int) -> str:
    """The name under which `render_collection` returns the frames of `camera` (id `camera_id`)."""
    if isinstance(camera, str):
        return camera
    return DEFAULT_CAMERA if camera_id < 0 else mj_model.camera(camera_id).name or str(camera_id)


def _full_states(mj_model: Any, values: Any, name: str) -> Float:
    """`values` as (T, nq + nv) finite float64 states of `mj_model`, or `InputError`."""
    size = mj_model.nq + mj_model.nv
    try:
        states = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(
            f"{name} must be an array of numbers, got {type(values).__name__}"
        ) from None
    if states.ndim != 2 or states.shape[1] != size:
        raise InputError(
            f"{name} must have shape (T, {size}) (qpos and qvel: nq = {mj_model.nq}, "
            f"nv = {mj_model.nv}), got {states.shape}"
        )
    if not np.all(np.isfinite(states)):
        raise InputError(f"{name} holds a non-finite value (NaN or inf)")
    return states


# the stick figure
