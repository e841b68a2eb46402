"""Plain video files and folders of images as episodes of frames alone.

`find_sources` lists video files (mp4 and the other containers FFmpeg reads) and folders of
images, at any depth, `scan_sources` counts their frames without decoding them, and
`iter_sources` reads them, one at a time, at one size (Lanczos, each frame as it is decoded:
`invdyn.learn.datasets.mp4`) and one frame rate, never resampled in time. `read_videos` makes
them episodes without state or action, their frames streamed into a dataset's video as it is
written, and `import_videos` writes that dataset.

Needs the ``learn`` extra's ``av`` (PyAV), imported when first used, and Pillow for images.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from invdyn._files import INFO_PATH, enclosing_dataset
from invdyn.errors import DataError, InputError, warn
from invdyn.learn.datasets.episodes import Episode, Imported
from invdyn.learn.datasets.formats import DatasetFormat, ImportOptions
from invdyn.learn.datasets.lerobot import check_camera
from invdyn.learn.datasets.lerobot_write import check_target, stream_videos, write_dataset
from invdyn.learn.datasets.mp4 import (
    Frames,
    check_fps,
    check_frames,
    check_size,
    decode_video,
    load_pil,
    packet_times,
    resized,
    video_info,
)

VIDEO_SUFFIXES = (".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
Source = str | os.PathLike[str]


# the advice for frames of several sizes, or of a size no video takes
_RESIZE = "pass size=(width, height) (--size WIDTHxHEIGHT on the command line) to resize them"


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
    if (folder / INFO_PATH).is_file():
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
            times[path] = packet_times(path)
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
    Image, ImageOps = load_pil()
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
        frame = np.asarray(image if wanted is None else resized(image, wanted), dtype=np.uint8)
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


def _size_text(frame: NDArray[Any]) -> str:
    """ "WxH": the size of an (H, W, 3) frame."""
    return f"{frame.shape[1]}x{frame.shape[0]}"


# plain videos as a dataset


def read_videos(
    sources: Source | Sequence[Source],
    *,
    camera: str = "video",
    fps: float | None = None,
    fps_origin: str = "the fps asked for is",
    size: tuple[int, int] | None = None,
    progress: bool = False,
) -> Imported:
    """Plain videos and folders of images as episodes of frames alone, one episode each.

    The episodes have neither state nor action (`Episode`), timestamps ``k / fps`` and no
    task; their frames are the video of ``observation.images.<camera>``, read as a dataset is
    written (`stream_videos`), and the metadata lists the file or folder of each episode as
    ``episode_sources``. Frames are not resampled in time: video files must share one frame
    rate (`scan_sources`). The sources are counted first, without decoding; then, as the
    dataset is written, decoded one at a time (only one source's frames, at the output size,
    are held).

    Args:
      sources: a folder, or a list of paths: video files (one episode each), or folders in
        which every video file and every folder of images (``*.png``, ``*.jpg``, ``*.webp``...
        by name: `IMAGE_SUFFIXES`), at any depth, is an episode (`find_sources`).
      camera: the camera's name: letters, digits, '_' or '-'.
      fps: frames per second, > 0; None to take it from the video files (needed for images
        alone). Every video file must have this rate.
      fps_origin: where `fps` comes from, for the message about a video file of another rate
        (`scan_sources`).
      size: (width, height), both even, to resize every frame to; None to keep the frames as
        they are, which must then all have one size, with an even width and height.
      progress: show a progress bar over the sources (tqdm) as they are decoded.

    Returns:
      The episodes, no state or action names, the frame rate, the camera's frames of each
      episode (`videos`), and ``episode_sources`` (`metadata`).

    Raises:
      InputError: bad arguments, nothing to import, images without `fps`, or a video file of
        another rate; and, as the frames are read, frames of different sizes without `size`,
        or of an odd size (the message names the file).
      DataError: a video file that is corrupt or of a variable frame rate; as the frames are
        read, an image or video file that is corrupt; the message names the file.
    """
    check_camera(camera)
    found = find_sources(sources)
    lengths, rate = scan_sources(found, fps=fps, fps_origin=fps_origin)
    episodes = [
        Episode(state=None, action=None, timestamp=np.arange(n, dtype=np.float64) / rate)
        for n in lengths
    ]
    frames = iter_sources(found, size=size, progress=progress)
    return Imported(
        episodes,
        (),
        None,
        rate,
        videos=stream_videos(({camera: f} for f in frames), len(found)),
        metadata={"episode_sources": [str(p) for p in found]},
    )


def import_videos(
    sources: Source | Sequence[Source],
    out: str | os.PathLike[str],
    *,
    camera: str = "video",
    fps: float | None = None,
    fps_origin: str = "the fps asked for is",
    size: tuple[int, int] | None = None,
    overwrite: bool = False,
    progress: bool = False,
) -> Path:
    """Write plain videos and folders of images as a dataset: one episode each, frames only.

    The episodes of `read_videos`, written atomically by `write_dataset`; the dataset's
    source (``robot_type``) is ``"video"``, and its metadata (`read_metadata`) lists the
    file or folder of each episode as ``episode_sources``.

    Args:
      sources, camera, fps, fps_origin, size, progress: as `read_videos`.
      out: the dataset directory to create.
      overwrite: replace an existing dataset at `out`.

    Returns:
      The dataset directory.

    Raises:
      InputError: as `read_videos`; `out` inside a folder of `sources`.
      DataError: as `read_videos`.
      FileExistsError: as `write_dataset`.
    """
    target = Path(out)
    check_target(target, overwrite=overwrite)
    check_outside_sources(target, sources)
    imported = read_videos(
        sources, camera=camera, fps=fps, fps_origin=fps_origin, size=size, progress=progress
    )
    return write_dataset(
        target,
        imported.episodes,
        fps=imported.fps,
        source="video",
        overwrite=overwrite,
        videos=imported.videos,
        metadata={"importer": "import_videos", **imported.metadata},
    )


def check_outside_sources(target: Path, sources: Source | Sequence[Source]) -> None:
    """`InputError` when the dataset `target` would lie inside a folder of `sources`, where
    the folder's next import, or labelling, would find it."""
    given = [sources] if isinstance(sources, str | os.PathLike) else list(sources)
    for folder in (Path(s) for s in given if isinstance(s, str | os.PathLike)):
        if folder.is_dir() and target.resolve().is_relative_to(folder.resolve()):
            raise InputError(
                f"{target} lies inside {folder}, the folder of videos it is imported from: "
                "write it beside the folder, where the folder's next import or labelling "
                "does not find it"
            )


def _read(path: Path, options: ImportOptions) -> Imported:
    """`read_videos` of `invdyn import`'s options."""
    return read_videos(
        path,
        camera=options.camera or "video",
        fps=options.fps,
        fps_origin="--fps is",
        size=options.size,
        progress=options.progress,
    )


def _check_out(source: Path, out: Path) -> None:
    """`check_outside_sources` of `invdyn import`'s source."""
    check_outside_sources(out, source)


def _detect(path: Path) -> bool:
    """Whether `path` is named as a video file, or is a folder of video files and folders of
    images (`holds_sources`)."""
    if path.is_dir():
        return holds_sources(path)
    return path.suffix.lower() in VIDEO_SUFFIXES


FORMAT = DatasetFormat(
    name="video",
    description=f"a video file ({', '.join(VIDEO_SUFFIXES)}), or a folder of them and of "
    f"folders of images ({', '.join(IMAGE_SUFFIXES)}) at any depth: episodes of frames alone, "
    "one per video or folder of images, in observation.images.<camera>",
    detect=_detect,
    read=_read,
    options=("camera", "size"),
    looks_like=f"a video ({', '.join(VIDEO_SUFFIXES)}) or a folder of videos and of folders "
    f"of images ({', '.join(IMAGE_SUFFIXES)})",
    noun="videos and images",
    check_out=_check_out,
)
