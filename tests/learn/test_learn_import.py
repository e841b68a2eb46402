"""Plain videos and folders of images imported as state-free, action-free episodes.

The mp4 files and PNG folders are made here, from the moving colour waves of
test_learn_video (each episode in its own brightness), so that nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("av")
pytest.importorskip("pyarrow")
pytest.importorskip("PIL")

from PIL import Image
from test_learn_video import pattern

from conftest import run
from invdyn import DataError, InputError
from invdyn.learn import keys
from invdyn.learn.datasets import import_videos, read_dataset, read_metadata
from invdyn.learn.datasets.mp4 import decode_video, encode_video
from invdyn.learn.datasets.videos import find_sources, image_files, read_video, scan_sources

FPS = 20.0
KEY = keys.OBS_IMAGE_PREFIX + "video"


def save_images(folder: Path, frames: np.ndarray, suffix: str = ".png") -> Path:
    """Each of (T, H, W, 3) `frames` as an image file ``<k><suffix>`` of `folder` (unpadded,
    so that name order is not number order from 10 on)."""
    folder.mkdir(parents=True)
    for k, frame in enumerate(frames):
        Image.fromarray(frame).save(folder / f"{k}{suffix}")
    return folder


def mean_error(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(int) - b).mean())


def test_videos_and_image_folders_round_trip(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    # episodes in name order, numbers by value: clip2, clip10, pictures
    expected = [pattern(9, level=2), pattern(14, level=0), pattern(12, level=1)]
    encode_video(source / "clip10.mp4", expected[1], FPS)
    encode_video(source / "clip2.mp4", expected[0], FPS)
    # folders at any depth
    save_images(source / "more" / "pictures", expected[2])
    (source / "notes.txt").write_text("not an episode")
    (source / "empty").mkdir()

    with pytest.warns(UserWarning, match=r"source: skipped 1 file neither video nor image: notes"):
        path = import_videos(source, tmp_path / "ds", progress=True)
    dataset = read_dataset(path)
    info = dataset.info
    assert (info.fps, info.source, info.tasks) == (FPS, "video", ("",))
    assert (info.state_names, info.n_state, info.state_dtype) == ((), 0, None)
    assert (info.action_names, info.n_action) == (None, 0)
    assert info.videos == {KEY: (32, 48, 3)}
    assert info.total_frames == 9 + 14 + 12
    assert dataset.arrays().state is None and dataset.arrays().action is None
    for k, frames in enumerate(expected):
        episode = dataset.episode(k)
        assert episode.state is None and episode.action is None and episode.task == ""
        np.testing.assert_allclose(episode.timestamp, np.arange(len(frames)) / FPS)
        decoded = dataset.frames("video", k)
        assert decoded.shape == frames.shape
        # the mp4 files went through H.264 twice, the PNG files once
        assert mean_error(decoded, frames) < 5
    features = json.loads((path / "meta/info.json").read_text())["features"]
    assert keys.OBS_STATE not in features and keys.ACTION not in features
    stats = json.loads((path / "meta/stats.json").read_text())
    assert keys.OBS_STATE not in stats and KEY in stats
    # the metadata names the file or folder of each episode
    sources = read_metadata(path)["episode_sources"]
    assert sources == [str(source / name) for name in ("clip2.mp4", "clip10.mp4", "more/pictures")]


def test_single_sources_fps_and_size(tmp_path: Path) -> None:
    """A list of one mp4 file and one image folder, resized; fps given for both."""
    video = encode_video(tmp_path / "a.mp4", pattern(6, 32, 48), FPS)
    folder = save_images(tmp_path / "frames", pattern(11, 20, 30, level=1), ".jpg")
    path = import_videos([video, folder], tmp_path / "ds", camera="wrist", fps=FPS, size=(24, 16))
    dataset = read_dataset(path)
    assert dataset.info.videos == {keys.OBS_IMAGE_PREFIX + "wrist": (16, 24, 3)}
    assert [len(e) for e in dataset] == [6, 11]
    assert dataset.frames("wrist", 1).shape == (11, 16, 24, 3)
    # image folders alone take fps, at any rate
    path = import_videos(folder, tmp_path / "slow", fps=2.5, size=(30, 20))
    np.testing.assert_allclose(read_dataset(path).episode(0).timestamp, np.arange(11) / 2.5)
    # the sizes above kept the frames' proportions; a square stretches them, and says so
    with pytest.warns(UserWarning, match=r"frames of 48x32 are stretched to 16x16 \(aspect ratio"):
        import_videos(video, tmp_path / "square", fps=FPS, size=(16, 16))
    # a dataset written into a folder of sources would be found there by its next import
    with pytest.raises(InputError, match="lies inside .*frames, the folder of videos"):
        import_videos([video, folder], folder / "ds", fps=FPS)
    assert not (folder / "ds").exists()


def test_sources_are_decoded_one_at_a_time(tmp_path: Path) -> None:
    """The sources stream into the dataset: the frames of one are held at a time, so that
    importing many videos takes the memory of the largest, not of all."""
    import tracemalloc

    (tmp_path / "clips").mkdir()
    for k in range(12):
        encode_video(tmp_path / "clips" / f"{k:02d}.mp4", pattern(30, 64, 96, level=k % 3), FPS)
    total = 12 * 30 * 64 * 96 * 3
    tracemalloc.start()
    try:
        import_videos(tmp_path / "clips", tmp_path / "ds")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.5 * total, (peak, total)
    dataset = read_dataset(tmp_path / "ds")
    assert [len(e) for e in dataset] == [30] * 12
    for k in range(12):
        assert mean_error(dataset.frames("video", k), pattern(30, 64, 96, level=k % 3)) < 5


def test_a_video_of_other_packets_than_frames_is_refused(tmp_path: Path, monkeypatch) -> None:
    """The frames are counted from the packets before decoding; a file that decodes to
    another count is refused, naming it, and nothing is written."""
    import invdyn.learn.datasets.mp4

    video = encode_video(tmp_path / "a.mp4", pattern(10), FPS)
    for packets, decoded in ((11, "10"), (9, "more")):
        times = np.arange(packets) / FPS
        monkeypatch.setattr(invdyn.learn.datasets.mp4, "packet_times", lambda path, t=times: t)
        with pytest.raises(
            DataError, match=f"a.mp4 decodes to {decoded} frames, but holds {packets} packets"
        ):
            import_videos(video, tmp_path / "ds")
        assert not (tmp_path / "ds").exists()


def test_images_become_rgb(tmp_path: Path) -> None:
    """Greyscale (8 and 16 bits) and RGBA images are converted; the frames keep the grey
    level."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    grey = np.full((16, 16), 200, dtype=np.uint8)
    Image.fromarray(grey).save(folder / "0.png")
    rgba = np.zeros((16, 16, 4), dtype=np.uint8)
    rgba[..., :3], rgba[..., 3] = 200, 255
    Image.fromarray(rgba).save(folder / "1.png")
    # 16-bit greyscale scales to 8 bits (converting it alone clips it to white)
    Image.fromarray(np.full((16, 16), 200 * 257, dtype=np.uint16)).save(folder / "2.png")
    assert Image.open(folder / "2.png").mode.startswith("I")
    dataset = read_dataset(import_videos(folder, tmp_path / "ds", fps=FPS))
    frames = dataset.frames("video", 0)
    assert frames.shape == (3, 16, 16, 3)
    assert mean_error(frames, np.full_like(frames, 200)) < 2


def test_overwrite(tmp_path: Path) -> None:
    video = encode_video(tmp_path / "a.mp4", pattern(4), FPS)
    path = import_videos(video, tmp_path / "ds")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        import_videos(video, path)
    import_videos([video, video], path, overwrite=True)
    assert len(read_dataset(path)) == 2


def bad_sources(tmp_path: Path, case: str) -> tuple[object, dict[str, object]]:
    """The sources and options of a bad import `case`."""
    if case == "empty folder":
        (tmp_path / "empty").mkdir()
        return tmp_path / "empty", {}
    if case == "missing path":
        return tmp_path / "absent.mp4", {}
    if case == "not a video":
        (tmp_path / "notes.txt").write_text("")
        return tmp_path / "notes.txt", {}
    if case == "no sources":
        return [], {}
    if case == "images and videos in one folder":
        folder = save_images(tmp_path / "both", pattern(2))
        encode_video(folder / "a.mp4", pattern(2), FPS)
        return folder, {}
    if case == "sizes":
        a = encode_video(tmp_path / "a.mp4", pattern(4, 32, 48), FPS)
        return [a, encode_video(tmp_path / "b.mp4", pattern(4, 32, 64), FPS)], {}
    if case == "image sizes":
        folder = save_images(tmp_path / "frames", pattern(2, 32, 48))
        Image.fromarray(pattern(1, 16, 16)[0]).save(folder / "2.png")
        return folder, {"fps": FPS}
    if case == "rates":
        a = encode_video(tmp_path / "a.mp4", pattern(4), FPS)
        return [a, encode_video(tmp_path / "b.mp4", pattern(4), 25.0)], {}
    if case == "rate against fps":
        return encode_video(tmp_path / "a.mp4", pattern(4), FPS), {"fps": 30}
    if case == "images without fps":
        return save_images(tmp_path / "frames", pattern(2)), {}
    if case == "odd size":
        return save_images(tmp_path / "frames", pattern(2, 31, 48)), {"fps": FPS}
    if case == "odd size asked":
        return save_images(tmp_path / "frames", pattern(2)), {"fps": FPS, "size": (47, 32)}
    if case == "camera":
        return encode_video(tmp_path / "a.mp4", pattern(4), FPS), {"camera": "front cam"}
    raise AssertionError(case)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("empty folder", r"empty holds no video file .* and no folder of images"),
        ("missing path", r"absent.mp4: no such file or folder"),
        ("not a video", r"notes.txt is neither a video file nor a folder"),
        ("no sources", "sources is empty"),
        ("images and videos in one folder", "both holds both images and video files"),
        ("sizes", r"b.mp4 has frames of 64x32, but .*a.mp4 of 48x32: pass size="),
        ("image sizes", r"2.png is 16x16, but .*0.png is 48x32: pass size="),
        ("rates", r"b.mp4 has 25 fps, but .*a.mp4 has 20 fps: .* resample it down .*fps=20 "),
        ("rate against fps", r"a.mp4 has 20 fps, but the fps asked for is 30 fps: raising"),
        ("images without fps", "fps is needed"),
        ("odd size", r"frames is 48x31: .*even width and height .* pass size="),
        ("odd size asked", r"size is 47x32: .*even"),
        ("camera", "camera name 'front cam'"),
    ],
)
def test_bad_imports_are_input_errors(tmp_path: Path, case: str, message: str) -> None:
    sources, options = bad_sources(tmp_path, case)
    with pytest.raises(InputError, match=message):
        import_videos(sources, tmp_path / "ds", **options)  # type: ignore[arg-type]
    assert not (tmp_path / "ds").exists()


def test_corrupt_files_are_data_errors(tmp_path: Path) -> None:
    folder = save_images(tmp_path / "frames", pattern(3))
    (folder / "1.png").write_bytes((folder / "1.png").read_bytes()[:40])
    with pytest.raises(DataError, match=r"image file .*1.png cannot be read"):
        import_videos(folder, tmp_path / "ds", fps=FPS)
    video = encode_video(tmp_path / "a.mp4", pattern(10), FPS)
    video.write_bytes(b"not a video at all" * 10)
    with pytest.raises(DataError, match=r"a.mp4"):
        import_videos(video, tmp_path / "ds")
    assert not (tmp_path / "ds").exists()
    # in a folder, every unreadable video is named at once, before any is decoded
    clips = tmp_path / "clips"
    clips.mkdir()
    encode_video(clips / "good.mp4", pattern(5), FPS)
    (clips / "text.mp4").write_text("notes")
    (clips / "empty.mp4").write_bytes(b"")
    with pytest.raises(
        DataError, match=r"^2 of 3 video files are unreadable:\n  .*empty.mp4.*\n  .*text.mp4"
    ):
        import_videos(clips, tmp_path / "ds")


def test_variable_frame_rate_is_refused(tmp_path: Path) -> None:
    """A file whose frames are not shown every 1 / fps seconds is not silently retimed."""
    av = pytest.importorskip("av")
    path = tmp_path / "vfr.mp4"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=20)
        stream.height, stream.width, stream.pix_fmt = 32, 48, "yuv420p"
        for k, image in enumerate(pattern(10)):
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts = k if k < 5 else 2 * k  # half the rate after frame 5
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    variable = r"vfr.mp4 has a variable frame rate: frame \d+ is shown at [\d.]+ s, not at"
    # found from the packets' times, before the average rate is compared with fps
    with pytest.raises(DataError, match=variable):
        import_videos(path, tmp_path / "ds", fps=20)
    with pytest.raises(DataError, match=variable):
        read_video(path)


def test_a_rate_is_named_by_where_it_comes_from(tmp_path: Path) -> None:
    """A video file of another rate than the one asked for: the message says whose rate it
    is, and does not advise raising a rate, which would only repeat frames."""
    video = encode_video(tmp_path / "a.mp4", pattern(4), FPS)
    trained = "the model was trained at"
    lower = rf"a.mp4 has 20 fps, but {trained} 40 fps: raising its rate would only repeat frames"
    with pytest.raises(InputError, match=rf"{lower}.*; record or export it at 40 fps$"):
        import_videos(video, tmp_path / "ds", fps=2 * FPS, fps_origin=trained)
    higher = rf"a.mp4 has 20 fps, but {trained} 10 fps: .*resample it down .*fps=10 out.mp4\)$"
    with pytest.raises(InputError, match=higher):
        import_videos(video, tmp_path / "ds", fps=FPS / 2, fps_origin=trained)


def test_find_sources_orders_by_name(tmp_path: Path) -> None:
    for name in ("b.mp4", "a10.MP4", "a9.mp4", ".hidden.mp4"):
        encode_video(tmp_path / name, pattern(2), FPS)
    save_images(tmp_path / "a9-images", pattern(2))
    found = [p.name for p in find_sources(tmp_path)]
    assert found == ["a9-images", "a9.mp4", "a10.MP4", "b.mp4"]
    assert find_sources([tmp_path / "b.mp4", tmp_path / "a9-images"]) == [
        tmp_path / "b.mp4",
        tmp_path / "a9-images",
    ]


def test_find_sources_settles_ties_and_skips_what_it_cannot_read(tmp_path: Path) -> None:
    """Names of one number keep the order of their text on every machine; webp images are
    images; a link to nothing is skipped with a warning; a LeRobot dataset is not a folder of
    videos (its files hold several episodes each), nor is anything inside it."""
    (tmp_path / "frames").mkdir()
    for name in ("1.webp", "001.webp", "01.webp"):
        Image.fromarray(pattern(1)[0]).save(tmp_path / "frames" / name)
    (tmp_path / "gone.mp4").symlink_to(tmp_path / "nowhere.mp4")
    with pytest.warns(UserWarning, match=r"skipped 1 file neither video nor image: gone.mp4"):
        assert find_sources(tmp_path) == [tmp_path / "frames"]
    assert [p.name for p in image_files(tmp_path / "frames")] == ["001.webp", "01.webp", "1.webp"]
    dataset = import_videos(tmp_path / "frames", tmp_path / "parent" / "ds", fps=FPS)
    for sources in (dataset, tmp_path / "parent"):
        with pytest.raises(InputError, match=r"ds is a LeRobot dataset, whose video files hold"):
            find_sources(sources)
    (video,) = dataset.glob("videos/**/*.mp4")
    for sources in (dataset / "videos", video):
        with pytest.raises(InputError, match=r"inside the LeRobot dataset .*ds, whose video"):
            find_sources(sources)


def test_video_streams_and_times_as_ffmpeg_reads_them(tmp_path: Path) -> None:
    """An AVI with B-frames (no presentation times: its frames come with their packets'
    stamps, in decoding order) reads at its rate, frames in order; of several video streams,
    the largest is read, as FFmpeg picks it."""
    av = pytest.importorskip("av")
    frames = pattern(12)
    path = tmp_path / "b-frames.avi"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=20, options={"bf": "3"})
        stream.height, stream.width, stream.pix_fmt = 32, 48, "yuv420p"
        for k, image in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts = k
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    decoded, fps = read_video(path)
    assert fps == 20 and len(decoded) == len(frames)
    assert [int(np.argmin([mean_error(d, f) for f in frames])) for d in decoded] == list(range(12))

    two = tmp_path / "two.mkv"
    with av.open(str(two), "w") as container:
        small = container.add_stream("libx264", rate=20)
        small.height, small.width, small.pix_fmt = 16, 16, "yuv420p"
        large = container.add_stream("libx264", rate=20)
        large.height, large.width, large.pix_fmt = 32, 48, "yuv420p"
        for k, image in enumerate(frames):
            for stream, picture in ((small, image[:16, :16]), (large, image)):
                frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(picture), format="rgb24")
                frame.pts = k
                container.mux(stream.encode(frame))
        container.mux(small.encode())
        container.mux(large.encode())
    decoded, _ = decode_video(two)
    assert decoded.shape == (12, 32, 48, 3) and mean_error(decoded[5], frames[5]) < 4
    with pytest.raises(InputError, match=r"size height must be an integer >= 1"):
        decode_video(two, size=(8, 0))
    with pytest.raises(DataError, match="is a folder"):
        decode_video(tmp_path)
    assert scan_sources([str(path)]) == ([12], 20.0)


def test_invdyn_import_takes_videos_and_image_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`invdyn import` detects a video file, or a folder of videos and image folders, and
    imports it as `import_videos` does, with --camera, --size and --fps; options of the other
    formats are refused."""

    source = tmp_path / "clips"
    source.mkdir()
    encode_video(source / "a.mp4", pattern(7, 32, 48), FPS)
    save_images(source / "b", pattern(5, 32, 48, level=1))
    status, out, err = run(
        capsys, "import", str(source), "--out", str(tmp_path / "ds"), "--fps", str(FPS),
        "--camera", "wrist", "--size", "24x16", "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    assert f"{source}: 2 episodes, 12 frames at 20 fps, state 0, no action" in out
    dataset = read_dataset(tmp_path / "ds")
    assert dataset.info.videos == {keys.OBS_IMAGE_PREFIX + "wrist": (16, 24, 3)}
    assert [len(e) for e in dataset] == [7, 5] and dataset.info.source == "video"
    # one file: its own rate, default camera and size
    status, out, err = run(capsys, "import", str(source / "a.mp4"), "--out", str(tmp_path / "one"))
    assert status == 0, err
    assert read_dataset(tmp_path / "one").info.videos == {KEY: (32, 48, 3)}
    status, _, err = run(
        capsys, "import", str(source), "--out", str(tmp_path / "x"), "--obs-keys", "q"
    )
    assert status == 2 and "--obs-keys: not an option of videos and images" in err, err
    status, _, err = run(capsys, "import", str(source), "--out", str(tmp_path / "x"), "--fps", "-5")
    assert status == 2 and "fps (--fps) must be between 1e-06 and 1e+06 Hz, got -5" in err, err
