"""Video files of datasets: mp4 encoding and decoding with PyAV, in LeRobot v3's layout.

Frames are (T, H, W, 3) uint8 RGB arrays. A camera's frames of many episodes go into one mp4
stream, episode after episode (LeRobot v3 concatenates episodes the same way); an episode's
frames are those between its ``from_timestamp`` and ``to_timestamp`` in seconds on that
stream's timeline, which the dataset's episode metadata records (`invdyn.learn.data`).

Encoding is H.264 (``libx264``, one of LeRobot's codecs) in ``yuv420p`` with a keyframe every
`DEFAULT_GOP` frames and constant quality `DEFAULT_CRF`: near-lossless on rendered scenes
(about 38 dB PSNR at 64x64) and decoded at thousands of frames per second on one core.
``yuv420p`` needs an even width and height.

Plain files become episodes' frames here too (`invdyn.learn.data.import_videos` writes them
as a dataset): `find_sources` lists video files (mp4 and the other containers FFmpeg reads)
and folders of images, at any depth, `scan_sources` counts their frames without decoding them,
and `iter_sources` reads them, one at a time, at one size (Lanczos, each frame as it is
decoded) and one frame rate, never resampled in time.

Needs the ``learn`` extra's ``av`` (PyAV), imported when first used, and its Pillow for images
(which matplotlib brings too).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from invdyn._arrays import check_count, check_real, plain_number
from invdyn._files import enclosing_dataset
from invdyn.errors import DataError, InputError, warn

Frames = NDArray[np.uint8]
Int = NDArray[np.int64]
_T = TypeVar("_T")

DEFAULT_CODEC = "libx264"
DEFAULT_CRF = 18
DEFAULT_GOP = 2
PIX_FMT = "yuv420p"
# relative change of aspect ratio that resizing makes without a warning (even sizes round)
ASPECT_TOLERANCE = 0.02
#: the frame rates, Hz, that a dataset or video may have: from a frame every eleven days to a
#: microsecond apart (timestamps are float32 seconds; PyAV's rates, fractions of denominator
#: at most 1e6)
FPS_RANGE = (1e-6, 1e6)


def _av() -> ModuleType:
    try:
        import av
    except ImportError as exc:  # pragma: no cover - the learn extra installs it
        raise ImportError(
            f"video needs PyAV (the learn extra): pip install 'invdyn[learn]' ({exc})"
        ) from exc
    return av


def check_frames(name: str, frames: Any) -> Frames:
    """`frames` as a (T, H, W, 3) uint8 array with T >= 1 and an even H and W.

    Raises:
      InputError: another shape or dtype, or an odd size; the message names `name`.
    """
    array = np.asarray(frames)
    if array.dtype != np.uint8:
        raise InputError(f"{name} must be uint8 RGB frames, got dtype {array.dtype}")
    if array.ndim != 4 or array.shape[-1] != 3 or 0 in array.shape:
        raise InputError(f"{name} has shape {array.shape}, expected (T, H, W, 3) with T, H, W > 0")
    height, width = array.shape[1:3]
    if height % 2 or width % 2:
        raise InputError(
            f"{name} is {width}x{height}: video frames need an even width and height ({PIX_FMT})"
        )
    return array


def encode_video(
    path: str | os.PathLike[str],
    frames: Frames,
    fps: float,
    *,
    codec: str = DEFAULT_CODEC,
    crf: int = DEFAULT_CRF,
    gop: int = DEFAULT_GOP,
) -> Path:
    """Write (T, H, W, 3) uint8 `frames` as an mp4 file at `fps` frames per second.

    Frame k is shown at ``k / fps`` seconds (presentation time stamp k in the stream's time
    base of 1 / fps).

    Raises:
      InputError: bad frames (`check_frames`), fps or codec, or a path that cannot be written.
    """
    frames = check_frames("frames", frames)
    with _VideoWriter(Path(path), frames.shape[1:3], fps, codec=codec, crf=crf, gop=gop) as out:
        out.write(frames)
    return Path(path)


class _VideoWriter:
    """An mp4 file open for writing frames of one size, batch after batch, as one stream."""

    def __init__(
        self,
        path: Path,
        size: tuple[int, int],
        fps: float,
        *,
        codec: str = DEFAULT_CODEC,
        crf: int = DEFAULT_CRF,
        gop: int = DEFAULT_GOP,
    ) -> None:
        av = _av()
        rate = _frame_rate(fps)
        self.path = path
        self.frames_written = 0
        try:
            self._container = av.open(str(path), "w")
        except OSError as exc:
            raise InputError(f"cannot write video {path}: {exc}") from None
        try:
            options = {"crf": str(crf), "g": str(gop)}
            self._stream = self._container.add_stream(codec, rate=rate, options=options)
        except (av.error.FFmpegError, ValueError) as exc:
            self._container.close()
            raise InputError(f"video codec {codec!r} is not available: {exc}") from None
        self._stream.height, self._stream.width = size
        self._stream.pix_fmt = PIX_FMT
        self._av = av

    def write(self, frames: Frames) -> None:
        """Append (T, H, W, 3) uint8 frames of the writer's size."""
        for image in frames:
            frame = self._av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="rgb24")
            frame.pts = self.frames_written
            self._container.mux(self._stream.encode(frame))
            self.frames_written += 1

    def __enter__(self) -> _VideoWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self._container.mux(self._stream.encode())
        finally:
            self._container.close()


def decode_video(
    path: str | os.PathLike[str], *, size: tuple[int, int] | None = None
) -> tuple[Frames, NDArray[np.float64]]:
    """All frames of a video file's video stream (`video_stream`) and their times.

    Args:
      path: the video file.
      size: (width, height) to resize each frame to (Lanczos) as it is decoded, so that only
        frames of that size are held; None to keep them.

    Returns:
      (T, H, W, 3) uint8 RGB frames and (T,) presentation times in seconds.

    Raises:
      DataError: the file is missing, not a video, cannot be decoded, holds no frames, changes
        frame size, has no presentation times, or decodes to another number of frames than it
        has packets (one each); the message names it.
    """

    size = None if size is None else _image_size(size)
    # one array, made at the first frame and filled as they are decoded: as many frames as
    # the file has packets
    count = len(_packet_times(Path(path)))

    def decode(container: Any, stream: Any) -> tuple[Frames, NDArray[np.float64]]:
        images = np.empty((0, 0, 0, 3), dtype=np.uint8)
        stamps = np.empty(count)
        k = 0
        for k, frame in enumerate(container.decode(stream), start=1):
            if k > count:
                break
            if size is None or (frame.width, frame.height) == size:
                image = frame.to_ndarray(format="rgb24")
            else:
                image = np.asarray(_resized(frame.to_image(), size), dtype=np.uint8)
            if k == 1:
                images = np.empty((count, *image.shape), dtype=np.uint8)
            elif image.shape != images.shape[1:]:
                raise DataError(f"video file {path} changes frame size at frame {k - 1}")
            if frame.pts is None:
                raise DataError(
                    f"video file {path} has no presentation times (a raw stream?): put it in a "
                    "container (ffmpeg -i in.h264 -c copy out.mp4)"
                )
            images[k - 1] = image
            stamps[k - 1] = frame.pts
        if k != count:
            more = "more" if k > count else k
            raise DataError(
                f"video file {path} decodes to {more} frames, but holds {count} packets: "
                "re-encode it (ffmpeg -i in.mp4 out.mp4)"
            )
        # decoders give frames in presentation order, but with the stamps of their packets,
        # in decoding order, where the container stores no presentation times (AVI with
        # B-frames): the frames' times are the stamps in order
        return images, np.sort(stamps) * float(stream.time_base)

    return _with_video(Path(path), decode)


def video_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``info`` of a video feature in LeRobot's ``meta/info.json``, read off the file.

    Keys: ``video.height``, ``video.width``, ``video.codec`` (the stream's codec, such as
    ``"h264"``), ``video.pix_fmt``, ``video.is_depth_map``, ``video.fps``, ``video.channels``
    and ``has_audio``.

    Raises:
      DataError: the file is missing or not a video; the message names it.
    """

    def describe(container: Any, stream: Any) -> dict[str, Any]:
        context = stream.codec_context
        return {
            "video.height": int(context.height),
            "video.width": int(context.width),
            "video.codec": str(context.codec.canonical_name),
            "video.pix_fmt": str(context.pix_fmt),
            "video.is_depth_map": False,
            "video.fps": plain_number(float(stream.average_rate or stream.base_rate)),
            "video.channels": 3,
            "has_audio": bool(container.streams.audio),
        }

    return _with_video(Path(path), describe)


def _with_video(path: Path, use: Callable[[Any, Any], _T]) -> _T:
    """``use(container, stream)`` on the open file `path` and its video stream
    (`video_stream`), or `DataError` naming the file when it is missing, holds no video or
    cannot be decoded."""
    av = _av()
    try:
        with _open_video(path) as container:
            return use(container, video_stream(container))
    except av.error.FFmpegError as exc:
        raise DataError(f"video file {path} cannot be decoded: {exc}") from None


def _open_video(path: Path) -> Any:
    """The open PyAV container of `path`, which has a video stream, or `DataError` naming
    the file when it is missing, holds no video or cannot be opened."""
    av = _av()
    if not path.is_file():
        raise DataError(f"video file {path} is {'a folder' if path.is_dir() else 'missing'}")
    try:
        container = av.open(str(path))
    except av.error.FFmpegError as exc:
        raise DataError(f"video file {path} cannot be decoded: {exc}") from None
    if not container.streams.video:
        container.close()
        raise DataError(f"{path} holds no video stream")
    return container


def video_stream(container: Any) -> Any:
    """The video stream of an open PyAV container (which has one) that the ``ffmpeg`` tool
    picks by default: of several, the one of most pixels (the first of those), cover pictures
    last."""
    cover = _av().stream.Disposition.attached_pic

    def rank(stream: Any) -> tuple[bool, int]:
        context = stream.codec_context
        return not stream.disposition & cover, context.width * context.height

    return max(container.streams.video, key=rank)


def check_fps(fps: object) -> float:
    """`fps` as a float, or `InputError` unless it lies in `FPS_RANGE`."""
    low, high = FPS_RANGE
    rate = check_real("fps (--fps)", fps)
    if not low <= rate <= high:
        raise InputError(f"fps (--fps) must be between {low:g} and {high:g} Hz, got {rate:g}")
    return rate


def _frame_rate(fps: float) -> Fraction:
    """`fps` (`check_fps`) as the exact fraction PyAV takes for a stream's rate."""
    return Fraction(check_fps(fps)).limit_denominator(1_000_000)


# the videos of a LeRobot v3 dataset

# seconds: a frame's time on the file's timeline may differ this much from the one asked for
# (LeRobot's tolerance_s)
TOLERANCE_S = 1e-4
# the quantiles of every feature's statistics, as LeRobot's stats.json holds them
QUANTILES = {"q01": 0.01, "q10": 0.10, "q50": 0.50, "q90": 0.90, "q99": 0.99}


@dataclasses.dataclass(frozen=True)
class VideoSegment:
    """Where an episode's frames of one camera lie: a file and a span of its timeline.

    Attributes:
      chunk_index, file_index: the mp4 file (LeRobot's ``video_path`` template).
      from_timestamp, to_timestamp: the episode's span on that file's timeline, in seconds;
        frame k of the episode is shown at ``from_timestamp + timestamp[k]``.
    """

    chunk_index: int
    file_index: int
    from_timestamp: float
    to_timestamp: float


class CameraWriter:
    """One camera's mp4 files of a dataset being written, one episode after another.

    Episodes follow each other on a file's timeline, frame k of the whole file at ``k / fps``;
    a file takes no further episode once it has passed `file_size_mb` megabytes (LeRobot's
    ``video_files_size_in_mb``), and each chunk directory holds `chunks_size` files. Use it as
    a context manager, which closes the last file.

    Args:
      root: the dataset directory being written.
      template: the ``video_path`` template, with ``video_key``, ``chunk_index`` and
        ``file_index`` fields.
      key: the feature, ``observation.images.<camera>``.
      fps: frames per second.
    """

    def __init__(
        self,
        root: Path,
        template: str,
        key: str,
        fps: float,
        *,
        chunks_size: int,
        file_size_mb: float,
    ) -> None:
        self._root, self._template, self._key, self._fps = root, template, key, fps
        self._chunks_size = chunks_size
        self._budget = file_size_mb * 1024 * 1024
        self._writer: _VideoWriter | None = None
        self._number = 0

    def add(self, frames: Frames) -> VideoSegment:
        """Encode an episode's (T, H, W, 3) uint8 frames, of the size of the others; its segment."""
        chunk, index = divmod(self._number, self._chunks_size)
        if self._writer is None:
            path = self._root / self._template.format(
                video_key=self._key, chunk_index=chunk, file_index=index
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = _VideoWriter(path, (frames.shape[1], frames.shape[2]), self._fps)
        writer = self._writer
        start = writer.frames_written
        writer.write(frames)
        segment = VideoSegment(chunk, index, start / self._fps, writer.frames_written / self._fps)
        # the file appears only once the encoder has emitted its first packet
        if writer.path.exists() and writer.path.stat().st_size > self._budget:
            self.close()
            self._number += 1
        return segment

    def close(self) -> None:
        """Finish the file being written, if any."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.__exit__(None, None, None)

    def __enter__(self) -> CameraWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def frame_histogram(frames: Frames) -> Int:
    """(3, 256) counts of every level of each colour channel of (T, H, W, 3) uint8 frames;
    those of several sets of frames add up to theirs together."""
    pixels = frames.reshape(-1, 3)
    return np.stack([np.bincount(pixels[:, c], minlength=256) for c in range(3)])


def histogram_statistics(histogram: Int, count: int) -> dict[str, list[Any]]:
    """min, max, mean, std, count and quantiles of `count` frames whose `frame_histogram` is
    `histogram`, per channel in [0, 1], each a (3, 1, 1) nested list as LeRobot writes image
    statistics (count: [count])."""
    levels = np.arange(256) / 255.0
    total = histogram.sum(axis=1)
    mean = histogram @ levels / total
    variance = histogram @ levels**2 / total - mean**2
    cumulative = np.cumsum(histogram, axis=1) / total[:, None]
    stats: dict[str, Any] = {
        "min": [levels[np.flatnonzero(h)[0]] for h in histogram],
        "max": [levels[np.flatnonzero(h)[-1]] for h in histogram],
        "mean": mean.tolist(),
        "std": np.sqrt(np.maximum(variance, 0.0)).tolist(),
    }
    for name, q in QUANTILES.items():
        stats[name] = [levels[int(np.searchsorted(row, q))] for row in cumulative]
    out = {name: [[[float(v)]] for v in values] for name, values in stats.items()}
    return out | {"count": [int(count)]}


class _FileReader:
    """One mp4 file's frames, decoded forwards as they are asked for. A request drops the
    frames before its own, so reading a file's episodes in order decodes it once and holds
    about one episode's frames; a request for earlier frames seeks back to the keyframe before
    them (as LeRobot's decoders do)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._av = _av()
        self._container = _open_video(path)
        self._stream = video_stream(self._container)
        self._start(None)

    def _start(self, seconds: float | None) -> None:
        """Decode from the file's start, or from the keyframe at or before `seconds`."""
        if seconds is not None:
            offset = int(seconds / self._stream.time_base)
            self._container.seek(offset, stream=self._stream, backward=True)
        self._decoder = self._container.decode(self._stream)
        self._buffer: list[tuple[float, Frames]] = []
        # the time of the last frame decoded, and of the last one dropped
        self._last = self._dropped = -np.inf
        # the earliest time this decoding can give: frames before a seek's are not decoded
        self._origin = -np.inf if seconds is None else seconds
        self._ended = False

    def span(self, first: float, last: float) -> tuple[Frames, NDArray[np.float64]]:
        """(n, H, W, 3) the frames whose times lie in [first, last] seconds, and their (n,)
        times; frames before `first` are dropped, and the first one after `last` is decoded
        (`end` then tells whether there is one).

        Raises:
          DataError: the file cannot be decoded; the message names it.
        """
        kept = [(t, image) for t, image in self._buffer if t >= first]
        if len(kept) < len(self._buffer):
            self._dropped = max(t for t, _ in self._buffer if t < first)
        self._buffer = kept
        try:
            if first <= self._dropped or first < self._origin:
                self._start(first)
            # to the first frame after `last`, which tells whether there is one
            while not self._ended and self._last <= last:
                frame = next(self._decoder, None)
                if frame is None:
                    self._ended = True
                    break
                self._last = float(frame.pts * frame.time_base)
                if self._last < first:
                    self._dropped = self._last
                else:
                    self._buffer.append((self._last, frame.to_ndarray(format="rgb24")))
        except self._av.error.FFmpegError as exc:
            raise DataError(f"video file {self.path} cannot be decoded: {exc}") from None
        inside = [(t, image) for t, image in self._buffer if t <= last]
        if not inside:
            return np.empty((0, 0, 0, 3), np.uint8), np.empty(0)
        return np.stack([image for _, image in inside]), np.array([t for t, _ in inside])

    def end(self) -> float:
        """The time of the last frame decoded so far (-inf before the first)."""
        return self._last

    def close(self) -> None:
        self._container.close()


def _nearest(times: NDArray[np.float64], wanted: NDArray[np.float64]) -> NDArray[np.int64]:
    """For each of `wanted`, the index of the nearest of the ascending, non-empty `times`."""
    after = np.searchsorted(times, wanted).clip(0, len(times) - 1)
    before = (after - 1).clip(0)
    closer = np.abs(times[before] - wanted) <= np.abs(times[after] - wanted)
    return np.where(closer, before, after)


class VideoFrames:
    """Frames of a dataset's videos by episode segment. Each feature keeps its current file
    open and decodes it forwards (`_FileReader`), so that reading episodes in order decodes
    every file once and holds about one episode's frames per feature, never a whole file."""

    def __init__(self, root: Path, template: str) -> None:
        self.root, self.template = root, template
        self._readers: dict[str, _FileReader] = {}

    def path(self, key: str, segment: VideoSegment) -> Path:
        """The mp4 file of `segment` of feature `key`."""
        relative = self.template.format(
            video_key=key, chunk_index=segment.chunk_index, file_index=segment.file_index
        )
        return self.root / relative

    def frames(
        self,
        key: str,
        segment: VideoSegment,
        timestamps: NDArray[Any],
        *,
        episode: int,
        last_in_file: bool,
    ) -> Frames:
        """(T, H, W, 3) the frames of episode `episode` shown at ``segment.from_timestamp +
        timestamps`` (T,).

        The episode's frames are those of its segment, from ``from_timestamp`` up to
        ``to_timestamp`` (where the next one starts), and, for the last segment of its
        file (`last_in_file`), to the file's end: there must be T of them. Frames between
        two segments belong to no episode and are not read (nor by LeRobot).

        Raises:
          DataError: the file is missing or corrupt, the episode has another number of frames
            than T, or no frame within `TOLERANCE_S` of a wanted time; the message names the
            file.
        """
        wanted = segment.from_timestamp + np.asarray(timestamps, dtype=np.float64)
        last = wanted.max() + TOLERANCE_S
        # the next episode's first frame is at to_timestamp
        reach = math.inf if last_in_file else segment.to_timestamp - TOLERANCE_S
        reader = self._reader(key, self.path(key, segment))
        images, times = reader.span(segment.from_timestamp - TOLERANCE_S, last)
        # end(): the frame after those, or the file's last where there is none
        if len(times) != len(wanted) or last < reader.end() < reach:
            later = _packet_times(reader.path)
            count = len(times) + np.count_nonzero((later > last) & (later < reach))
            until = "the file's end" if last_in_file else f"{segment.to_timestamp:.6f} s"
            raise DataError(
                f"{reader.path}: episode {episode} has {count} frames from "
                f"{segment.from_timestamp:.6f} s to {until}, but {len(wanted)} rows: the "
                "video and the episodes' data or metadata disagree"
            )
        index = _nearest(times, wanted)
        off = np.abs(times[index] - wanted)
        if np.any(off > TOLERANCE_S):
            k = int(np.argmax(off))
            raise DataError(
                f"{reader.path}: no frame at {wanted[k]:.6f} s (frame {k} of episode "
                f"{episode}); the nearest is at {times[index[k]]:.6f} s"
            )
        return images[index]

    def _reader(self, key: str, path: Path) -> _FileReader:
        """The open reader of `key`'s file `path`, its previous file closed."""
        reader = self._readers.get(key)
        if reader is None or reader.path != path:
            if reader is not None:
                # forgotten before the next file opens, which may fail
                reader.close()
                del self._readers[key]
            self._readers[key] = reader = _FileReader(path)
        return reader


# plain files as episodes: videos and folders of images

VIDEO_SUFFIXES = (".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
Source = str | os.PathLike[str]


def _pil() -> tuple[ModuleType, ModuleType]:
    """The ``PIL.Image`` and ``PIL.ImageOps`` modules (Pillow: the learn extra, and matplotlib)."""
    try:
        from PIL import Image, ImageOps
    except ImportError as exc:  # pragma: no cover - matplotlib installs Pillow
        raise ImportError(f"reading images needs Pillow: pip install pillow ({exc})") from exc
    return Image, ImageOps


# the advice for frames of several sizes, or of a size no video takes
_RESIZE = "pass size=(width, height) (--size WIDTHxHEIGHT on the command line) to resize them"


def check_size(size: Any) -> tuple[int, int]:
    """`size` as a (width, height) pair of even integers >= 2 (a video frame's), or
    `InputError`."""
    width, height = _image_size(size)
    if width % 2 or height % 2:
        raise InputError(
            f"size is {width}x{height}: video frames need an even width and height ({PIX_FMT})"
        )
    return width, height


def _image_size(size: Any) -> tuple[int, int]:
    """`size` as a (width, height) pair of integers >= 1, or `InputError`."""
    if isinstance(size, (str, bytes)) or not isinstance(size, Sequence) or len(size) != 2:
        raise InputError(f"size must be (width, height), got {size!r}")
    width, height = (
        check_count(f"size {name}", n, minimum=1) for name, n in zip(("width", "height"), size)
    )
    return width, height


def find_sources(sources: Source | Sequence[Source]) -> list[Path]:
    """The episodes among `sources`: video files and folders of images, in order.

    Each path is a video file (`VIDEO_SUFFIXES`: one episode) or a folder: every video file
    and every folder holding image files (`IMAGE_SUFFIXES`: one episode, its images in name
    order) at any depth beneath it is an episode. Names sort with their numbers by value
    (``frame2`` before ``frame10``), a folder's entries in that order; hidden entries
    (``.name``) are skipped, and other files (and links to nothing) are skipped with a
    warning that names them.

    Raises:
      InputError: no sources, a path that does not exist or is neither of these, a folder
        with nothing to import beneath it, one holding both images and video files, or a
        LeRobot dataset or a path inside one (whose video files hold several episodes); the
        message names it.
    """
    paths = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if not paths:
        raise InputError("sources is empty: give a folder, video files or folders of images")
    found: list[Path] = []
    for entry in paths:
        path = Path(entry)
        _check_outside_datasets(path)
        if _is_video_file(path):
            found.append(path)
        elif path.is_dir():
            skipped: list[Path] = []
            inside = _episodes_beneath(path, skipped, set())
            if not inside:
                raise InputError(
                    f"{path} holds no video file ({', '.join(VIDEO_SUFFIXES)}) and no folder "
                    f"of images ({', '.join(IMAGE_SUFFIXES)}) at any depth: nothing to import"
                )
            if skipped:
                names = ", ".join(str(p.relative_to(path)) for p in skipped[:3])
                more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
                files = "1 file" if len(skipped) == 1 else f"{len(skipped)} files"
                warn(f"{path}: skipped {files} neither video nor image: {names}{more}")
            found.extend(inside)
        elif path.exists():
            raise InputError(f"{path} is neither a video file nor a folder")
        else:
            raise InputError(f"{path}: no such file or folder")
    return found


def holds_sources(path: Path) -> bool:
    """Whether `path` is a video file or a folder with episodes for `find_sources` beneath
    it (video files, folders of images); `InputError` as `find_sources` for a path inside a
    LeRobot dataset, or a folder that holds one, or both images and video files."""
    _check_outside_datasets(path)
    return _is_video_file(path) or bool(_episodes_beneath(path, [], set()))


def _check_outside_datasets(path: Path) -> None:
    """`InputError` when `path` lies inside a LeRobot dataset, whose video files hold
    several episodes each."""
    folder = enclosing_dataset(path)
    if folder is not None:
        raise InputError(
            f"{path} lies inside the LeRobot dataset {folder}, whose video files hold "
            f"several episodes each: label the dataset (invdyn label RUN {folder}) or "
            "copy the videos out of it"
        )


def _episodes_beneath(folder: Path, skipped: list[Path], seen: set[Path]) -> list[Path]:
    """The episodes of `find_sources` in `folder` and beneath it, the folder first when it
    holds images; files that are neither videos nor images are added to `skipped`, and
    folders already in `seen` (reached again through a link) are not entered twice."""
    real = folder.resolve()
    if real in seen:
        return []
    seen.add(real)
    if (folder / "meta" / "info.json").is_file():
        raise InputError(
            f"{folder} is a LeRobot dataset, whose video files hold several episodes each, "
            f"not a folder of videos: label it as a dataset (invdyn label RUN {folder}), or "
            "move it out of the folder of videos"
        )
    entries = _entries(folder)
    images = any(_is_image_file(p) for p in entries)
    if images and any(_is_video_file(p) for p in entries):
        raise InputError(
            f"{folder} holds both images and video files: move the images into a folder of "
            f"their own (one per episode)"
        )
    found = [folder] if images else []
    for path in entries:
        if path.is_dir():
            found.extend(_episodes_beneath(path, skipped, seen))
        elif _is_video_file(path):
            found.append(path)
        elif not _is_image_file(path):
            # other files, and links to nothing
            skipped.append(path)
    return found


def image_files(folder: Path) -> list[Path]:
    """The image files of `folder` (`IMAGE_SUFFIXES`, any case) by name, [] for a non-folder."""
    return [p for p in _entries(folder) if _is_image_file(p)]


def _is_image_file(path: Path) -> bool:
    """Whether `path` is a file named as an image (`IMAGE_SUFFIXES`, any case)."""
    return path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES


def _is_video_file(path: Path) -> bool:
    """Whether `path` is a file named as a video (`VIDEO_SUFFIXES`, any case)."""
    return path.is_file() and path.suffix.lower() in VIDEO_SUFFIXES


def _entries(folder: Path) -> list[Path]:
    """The entries of `folder` but hidden ones, numbers in names sorted by value."""
    if not folder.is_dir():
        return []

    def key(path: Path) -> tuple[list[tuple[int, int | str]], str]:
        parts = re.split(r"(\d+)", path.name)
        # names of equal numbers (1.png, 01.png) in the order of their text
        return [(1, int(part)) if part.isdigit() else (0, part) for part in parts], path.name

    return sorted((p for p in folder.iterdir() if not p.name.startswith(".")), key=key)


def scan_sources(
    paths: Sequence[Source], *, fps: float | None = None, fps_origin: str = "the fps asked for is"
) -> tuple[list[int], float]:
    """The number of frames of each episode source of `find_sources`, and their one frame
    rate, read without decoding a frame: a video file's packets (one per frame), a folder's
    images.

    Nothing is resampled in time: every video file must have a constant frame rate, `fps`,
    or without it that of the first video file; images have no rate of their own and take
    that one.

    Args:
      paths: video files and folders of images.
      fps: frames per second, > 0; None to take it from the video files.
      fps_origin: where `fps` comes from, as the words before "<fps> fps" in the message
        about a video file of another rate (such as "the model was trained at").

    Raises:
      InputError: a bad `fps`, no `fps` for images only, or a video file of another rate;
        the message names the file.
      DataError: video files that are missing, corrupt, hold no frames or have a variable
        frame rate; the message names every one.
    """
    files = [Path(p) for p in paths]
    videos = [p for p in files if _is_video_file(p)]
    times, rates, problems = {}, {}, []
    for path in videos:
        try:
            times[path] = _packet_times(path)
            rates[path] = float(video_info(path)["video.fps"])
            # packets without presentation times are left to decoding (`read_video`) to time
            if np.all(np.isfinite(times[path])):
                _check_constant_rate(path, times[path], rates[path])
        except DataError as error:
            problems.append(str(error))
    if len(problems) == 1:
        raise DataError(problems[0])
    if problems:
        listed = "\n  ".join(problems)
        raise DataError(f"{len(problems)} of {len(videos)} video files are unreadable:\n  {listed}")
    if fps is not None:
        rate, origin = check_fps(fps), fps_origin
    elif videos:
        rate, origin = rates[videos[0]], f"{videos[0]} has"
    else:
        raise InputError("fps is needed: folders of images have no frame rate, and no video")
    for path, found in rates.items():
        if abs(found - rate) > 1e-4 * rate:
            advice = _resampling_advice(found, rate)
            raise InputError(f"{path} has {found:g} fps, but {origin} {rate:g} fps: {advice}")
    return [len(times[p]) if p in times else len(image_files(p)) for p in files], rate


def _resampling_advice(found: float, wanted: float) -> str:
    """What to do with a video of `found` fps where `wanted` fps are needed: resample it
    down, or, below the rate, record it anew (raising its rate would only repeat frames)."""
    if found > wanted:
        return (
            "videos are not resampled here; resample it down first "
            f"(ffmpeg -i in.mp4 -vf fps={wanted:g} out.mp4)"
        )
    return (
        "raising its rate would only repeat frames, not show the motion between them; "
        f"record or export it at {wanted:g} fps"
    )


def iter_sources(
    paths: Sequence[Source], *, size: tuple[int, int] | None = None, progress: bool = False
) -> Iterator[Frames]:
    """The frames of the episode sources that `scan_sources` passed, one source at a time
    (only its frames are held), at one size.

    Args:
      paths: video files and folders of images, as given to `scan_sources`.
      size: (width, height) to resize every frame to (`check_size`), or None to keep them
        (they must then all have one size, even width and height).
      progress: show a progress bar over the sources (tqdm).

    Yields:
      (T_i, H, W, 3) uint8 RGB frames of each source, T_i as `scan_sources` counted.

    Raises:
      InputError: a bad `size`, frames of another size or an odd one; the message names the
        file.
      DataError: as `read_video` and `read_images`.
    """
    wanted = None if size is None else check_size(size)
    files = [Path(p) for p in paths]
    # the first source's frame, whose size the others must have
    first: Frames | None = None
    for path in tqdm(files, disable=not progress, desc="import", unit="ep"):
        if _is_video_file(path):
            images, _ = read_video(path, size=wanted)
        else:
            images = read_images(image_files(path), size=wanted)
        if first is not None and images.shape[1:] != first.shape:
            raise InputError(
                f"{path} has frames of {_size_text(images[0])}, but {files[0]} of "
                f"{_size_text(first)}: {_RESIZE}"
            )
        try:
            checked = check_frames(str(path), images)
        except InputError as error:
            raise InputError(f"{error}; {_RESIZE}") from None
        first = checked[0].copy() if first is None else first
        yield checked


def _packet_times(path: Path) -> NDArray[np.float64]:
    """The presentation times in seconds, in order, of a video file's frames in its video
    stream (`video_stream`), from its packets (one per frame; demuxed, not decoded), NaN
    for packets without one; `DataError` naming the file if it cannot be read or holds
    no frames."""

    def stamps(container: Any, stream: Any) -> NDArray[np.float64]:
        found = [p.pts for p in container.demux(stream) if p.size > 0]
        known = np.array([math.nan if pts is None else pts for pts in found], dtype=np.float64)
        return np.sort(known) * float(stream.time_base)

    times = _with_video(path, stamps)
    if len(times) == 0:
        raise DataError(f"video file {path} holds no frames")
    return times


def _check_constant_rate(path: Path, times: NDArray[np.float64], fps: float) -> None:
    """`DataError` naming the video file `path` unless its frame k, shown at ``times[k]``
    (seconds, in order), is shown at about ``k / fps``: a variable frame rate, which
    nothing here resamples."""
    late = np.abs(times - times[0] - np.arange(len(times)) / fps)
    k = int(np.argmax(late))
    if late[k] > 0.5 / fps:
        raise DataError(
            f"video file {path} has a variable frame rate: frame {k} is shown at "
            f"{times[k] - times[0]:.4f} s, not at {k / fps:.4f} s as its average {fps:g} fps "
            "puts it; re-encode it at a constant rate (ffmpeg -i in.mp4 -vf fps=<rate> out.mp4)"
        )


def read_video(
    path: str | os.PathLike[str], *, size: tuple[int, int] | None = None
) -> tuple[Frames, float]:
    """All frames of a video file shot at a constant frame rate, and that rate.

    Args:
      path: the video file.
      size: (width, height) to resize each frame to as it is decoded (`decode_video`); None
        to keep them.

    Returns:
      (T, H, W, 3) uint8 RGB frames, and frames per second.

    Raises:
      DataError: the file is missing, not a video or corrupt (`decode_video`), or frame k is
        not shown at about ``k / fps`` (a variable frame rate, which this does not resample);
        the message names the file.
    """
    frames, times = decode_video(path, size=size)
    fps = float(video_info(path)["video.fps"])
    _check_constant_rate(Path(path), times, fps)
    return frames, fps


def read_images(files: Sequence[Path], *, size: tuple[int, int] | None = None) -> Frames:
    """Image files as RGB frames, in the given order: greyscale and RGBA become RGB, and an
    EXIF orientation is applied.

    Args:
      files: the image files, at least one.
      size: (width, height) to resize every image to (`check_size`), or None to keep them
        (they must then all have the same size).

    Returns:
      (T, H, W, 3) uint8 frames, T = len(files).

    Raises:
      DataError: a file that is missing, not an image or corrupt; the message names it.
      InputError: no files, a bad `size`, or images of different sizes without `size`.
    """
    Image, ImageOps = _pil()
    if not files:
        raise InputError("read_images needs at least one image file")
    wanted = None if size is None else check_size(size)
    frames: list[Frames] = []
    for file in files:
        try:
            with Image.open(file) as opened:
                image = _eight_bit(Image, ImageOps.exif_transpose(opened)).convert("RGB")
        except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
            raise DataError(f"image file {file} cannot be read: {exc}") from None
        frame = np.asarray(image if wanted is None else _resized(image, wanted), dtype=np.uint8)
        if frames and frame.shape != frames[0].shape:
            raise InputError(
                f"{file} is {_size_text(frame)}, but {files[0]} is {_size_text(frames[0])}: "
                f"{_RESIZE}"
            )
        frames.append(frame)
    return np.stack(frames)


def _eight_bit(Image: ModuleType, image: Any) -> Any:
    """`image` with 8 bits per channel: 16-bit greyscale (Pillow's ``I;16`` modes, and ``I``
    holding 16-bit values) scaled by 1/257, as ``convert`` alone would clip it to white."""
    if not image.mode.startswith("I"):
        return image
    values = np.asarray(image, dtype=np.int64)
    if values.min() < 0 or values.max() > 65535:
        raise DataError(f"{image.mode} image holds values outside 16 bits: not a picture")
    return Image.fromarray(((values * 255 + 32767) // 65535).astype(np.uint8))


def _resized(image: Any, size: tuple[int, int]) -> Any:
    """A PIL image at `size` = (width, height), resampled with Lanczos where it differs;
    stretching it to another aspect ratio is warned of (once for each pair of sizes)."""
    Image, _ = _pil()
    if image.size == size:
        return image
    (width, height), (to_width, to_height) = image.size, size
    if abs(width * to_height - height * to_width) > ASPECT_TOLERANCE * height * to_width:
        warn(
            f"frames of {width}x{height} are stretched to {to_width}x{to_height} (aspect ratio "
            f"{width / height:.2f} to {to_width / to_height:.2f}): crop them first to keep "
            "their proportions"
        )
    return image.resize(size, Image.Resampling.LANCZOS)


def _size_text(frame: NDArray[Any]) -> str:
    """ "WxH": the size of an (H, W, 3) frame."""
    return f"{frame.shape[1]}x{frame.shape[0]}"
