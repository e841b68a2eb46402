"""Video files of datasets: mp4 encoding and decoding with PyAV, in LeRobot v3's layout.

Frames are (T, H, W, 3) uint8 RGB arrays. A camera's frames of many episodes go into one mp4
stream, episode after episode (LeRobot v3 concatenates episodes the same way); an episode's
frames are those between its ``from_timestamp`` and ``to_timestamp`` in seconds on that
stream's timeline, which the dataset's episode metadata records
(`invdyn.learn.datasets.lerobot`).

Encoding is H.264 (``libx264``, one of LeRobot's codecs) in ``yuv420p`` with a keyframe every
`DEFAULT_GOP` frames and constant quality `DEFAULT_CRF`: near-lossless on rendered scenes
(about 38 dB PSNR at 64x64) and decoded at thousands of frames per second on one core.
``yuv420p`` needs an even width and height.

Frames are resized as they are decoded (`check_size`, `resized`: Lanczos, each frame as it
comes); plain video files and folders of images become episodes in
`invdyn.learn.datasets.videos`.

Needs the ``learn`` extra's ``av`` (PyAV), imported when first used, and Pillow to resize.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import check_count, check_real, plain_number
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

    size = None if size is None else image_size(size)
    # one array, made at the first frame and filled as they are decoded: as many frames as
    # the file has packets
    count = len(packet_times(Path(path)))

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
                image = np.asarray(resized(frame.to_image(), size), dtype=np.uint8)
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

    return with_video(Path(path), decode)


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

    return with_video(Path(path), describe)


def packet_times(path: Path) -> NDArray[np.float64]:
    """The presentation times in seconds, in order, of a video file's frames in its video
    stream (`video_stream`), from its packets (one per frame; demuxed, not decoded), NaN
    for packets without one; `DataError` naming the file if it cannot be read or holds
    no frames."""

    def stamps(container: Any, stream: Any) -> NDArray[np.float64]:
        found = [p.pts for p in container.demux(stream) if p.size > 0]
        known = np.array([math.nan if pts is None else pts for pts in found], dtype=np.float64)
        return np.sort(known) * float(stream.time_base)

    times = with_video(path, stamps)
    if len(times) == 0:
        raise DataError(f"video file {path} holds no frames")
    return times


def with_video(path: Path, use: Callable[[Any, Any], _T]) -> _T:
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
            later = packet_times(reader.path)
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


# frame sizes


def load_pil() -> tuple[ModuleType, ModuleType]:
    """The ``PIL.Image`` and ``PIL.ImageOps`` modules (Pillow comes with matplotlib)."""
    try:
        from PIL import Image, ImageOps
    except ImportError as exc:  # pragma: no cover - matplotlib installs Pillow
        raise ImportError(f"reading images needs Pillow: pip install pillow ({exc})") from exc
    return Image, ImageOps


def check_size(size: Any) -> tuple[int, int]:
    """`size` as a (width, height) pair of even integers >= 2 (a video frame's), or
    `InputError`."""
    width, height = image_size(size)
    if width % 2 or height % 2:
        raise InputError(
            f"size is {width}x{height}: video frames need an even width and height ({PIX_FMT})"
        )
    return width, height


def image_size(size: Any) -> tuple[int, int]:
    """`size` as a (width, height) pair of integers >= 1, or `InputError`."""
    if isinstance(size, (str, bytes)) or not isinstance(size, Sequence) or len(size) != 2:
        raise InputError(f"size must be (width, height), got {size!r}")
    width, height = (
        check_count(f"size {name}", n, minimum=1) for name, n in zip(("width", "height"), size)
    )
    return width, height


def resized(image: Any, size: tuple[int, int]) -> Any:
    """A PIL image at `size` = (width, height), resampled with Lanczos where it differs;
    stretching it to another aspect ratio is warned of (once for each pair of sizes)."""
    Image, _ = load_pil()
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
