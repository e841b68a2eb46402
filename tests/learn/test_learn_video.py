"""Videos: mp4 encoding and decoding, and datasets with camera frames in LeRobot v3's layout.

Frames are smooth colour patterns that move from frame to frame, each episode in its own
brightness, so that a decoded frame can be told apart from its neighbours and from other
episodes' frames despite lossy H.264.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("av")
pytest.importorskip("pyarrow")

from invdyn import DataError, InputError
from invdyn.learn.datasets import (
    Episode,
    Layout,
    read_dataset,
    read_info,
    stream_videos,
    write_collection,
    write_dataset,
)
from invdyn.learn.datasets.mp4 import (
    _FileReader,
    decode_video,
    encode_video,
    frame_histogram,
    histogram_statistics,
)

FPS = 20.0


def pattern(count: int, height: int = 32, width: int = 48, level: int = 0) -> np.ndarray:
    """(count, H, W, 3) uint8 frames: a moving colour wave, brighter with `level`."""
    y, x = np.mgrid[0:height, 0:width] / 16.0
    frames = [
        80 + 40 * level + 60 * np.sin(x[..., None] + 0.5 * y[..., None] + 0.3 * t + np.arange(3))
        for t in range(count)
    ]
    return np.clip(frames, 0, 255).astype(np.uint8)


def episodes(lengths: list[int]) -> list[Episode]:
    rng = np.random.default_rng(0)
    return [
        Episode(rng.normal(size=(n, 2)), rng.normal(size=(n, 1)), np.arange(n) / FPS)
        for n in lengths
    ]


def write(path: Path, lengths: list[int], **options: object) -> tuple[Path, list[np.ndarray]]:
    frames = [pattern(n, level=k) for k, n in enumerate(lengths)]
    written = write_dataset(
        path,
        episodes(lengths),
        fps=FPS,
        state_names=["a", "b"],
        action_names=["u"],
        videos={"front": frames},
        **options,  # type: ignore[arg-type]
    )
    return written, frames


def test_encode_decode_round_trip(tmp_path):
    frames = pattern(30)
    path = encode_video(tmp_path / "a.mp4", frames, FPS)
    decoded, times = decode_video(path)
    assert decoded.shape == frames.shape and decoded.dtype == np.uint8
    np.testing.assert_allclose(times, np.arange(30) / FPS, atol=1e-9)
    # lossy, but close: measured mean absolute error 1.3 of 255
    assert np.abs(decoded.astype(int) - frames).mean() < 4


def raw_h264(path, frames: np.ndarray):
    """`frames` as a raw H.264 stream (no container, so no presentation times)."""
    av = pytest.importorskip("av")
    with av.open(str(path), "w", format="h264") as container:
        stream = container.add_stream("libx264", rate=int(FPS))
        stream.height, stream.width = frames.shape[1:3]
        stream.pix_fmt = "yuv420p"
        for image in frames:
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
        container.mux(stream.encode())
    return path


def test_decode_refuses_raw_streams_and_changes_of_size(tmp_path):
    av = pytest.importorskip("av")
    raw = raw_h264(tmp_path / "a.h264", pattern(5))
    with pytest.raises(DataError, match=r"a.h264 has no presentation times"):
        decode_video(raw)
    # a stream of 5 frames at 48x32 then 5 at 32x16, each packet given its time, in Matroska
    other = raw_h264(tmp_path / "b.h264", pattern(5, 16, 32))
    (tmp_path / "ab.h264").write_bytes(raw.read_bytes() + other.read_bytes())
    with (
        av.open(str(tmp_path / "ab.h264")) as source,
        av.open(str(tmp_path / "ab.mkv"), "w") as out,
    ):
        stream = out.add_stream_from_template(source.streams.video[0])
        stream.time_base = Fraction(1, int(FPS))
        packets = [p for p in source.demux(source.streams.video[0]) if p.size > 0]
        for k, packet in enumerate(packets):
            packet.stream, packet.pts, packet.dts = stream, k, k
            out.mux(packet)
    with pytest.raises(DataError, match=r"ab.mkv changes frame size at frame 5"):
        decode_video(tmp_path / "ab.mkv")


def test_dataset_with_a_camera(tmp_path):
    lengths = [25, 31, 18]
    path, frames = write(tmp_path / "d", lengths)
    dataset = read_dataset(path)
    key = "observation.images.front"
    assert dataset.info.videos == {key: (32, 48, 3)} == read_info(path).videos
    for k, expected in enumerate(frames):
        decoded = dataset.frames("front", k)
        assert decoded.shape == expected.shape
        error = np.abs(decoded.astype(int) - expected).mean(axis=(1, 2, 3))
        assert error.max() < 4, error
        # each frame is its own, not a neighbour's or another episode's
        assert np.abs(decoded[1:].astype(int) - expected[:-1]).mean() > 3 * error.mean()
    np.testing.assert_array_equal(dataset.frames(key, -1), dataset.frames("front", 2))
    for missing in ("back", "observation.images.back"):
        with pytest.raises(InputError, match=r"no camera 'back'; its cameras are \['front'\]"):
            dataset.frames(missing, 0)
    info = json.loads((path / "meta/info.json").read_text())
    feature = info["features"][key]
    assert feature["dtype"] == "video" and feature["shape"] == [32, 48, 3]
    assert feature["names"] == ["height", "width", "channels"]
    assert feature["info"]["video.codec"] == "h264" and feature["info"]["video.fps"] == 20
    assert (
        info["video_path"] == "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    )
    # image statistics per channel in [0, 1], as LeRobot keeps them
    stats = json.loads((path / "meta/stats.json").read_text())[key]
    assert np.array(stats["mean"]).shape == (3, 1, 1) and stats["count"] == [sum(lengths)]
    every = np.concatenate(frames) / 255.0
    np.testing.assert_allclose(np.ravel(stats["mean"]), every.mean(axis=(0, 1, 2)), atol=1e-9)
    np.testing.assert_allclose(np.ravel(stats["max"]), every.max(axis=(0, 1, 2)), atol=1e-9)


def test_episodes_spread_over_files(tmp_path):
    """A tiny video file budget: every episode opens a new file, the spans start at 0 again."""
    layout = Layout(chunks_size=2, video_file_size_mb=1e-6)
    path, frames = write(tmp_path / "d", [10, 12, 14], layout=layout)
    files = sorted(str(p.relative_to(path)) for p in path.rglob("*.mp4"))
    assert files == [
        "videos/observation.images.front/chunk-000/file-000.mp4",
        "videos/observation.images.front/chunk-000/file-001.mp4",
        "videos/observation.images.front/chunk-001/file-000.mp4",
    ]
    dataset = read_dataset(path)
    for k, expected in enumerate(frames):
        assert np.abs(dataset.frames("front", k).astype(int) - expected).mean() < 4


def test_episodes_of_a_few_frames(tmp_path):
    """The encoder holds back its first frames: a file may not exist after an episode."""
    path, frames = write(tmp_path / "d", [1, 2], layout=Layout(video_file_size_mb=1e-6))
    dataset = read_dataset(path)
    for k, expected in enumerate(frames):
        assert np.abs(dataset.frames("front", k).astype(int) - expected).mean() < 4


def test_episodes_read_in_any_order(tmp_path):
    """Episodes read backwards, again, or camera by camera in turn give the frames read in
    order: a reader seeks back to the keyframe before an earlier episode."""
    lengths = [25, 31, 18, 40]
    frames = {"front": [pattern(n, level=k) for k, n in enumerate(lengths)]}
    frames["side"] = [f[:, ::-1] for f in frames["front"]]
    path = write_dataset(
        tmp_path / "d",
        episodes(lengths),
        fps=FPS,
        state_names=["a", "b"],
        action_names=["u"],
        videos=frames,
    )
    in_order = {c: [read_dataset(path).frames(c, k) for k in range(4)] for c in frames}
    dataset = read_dataset(path)
    for k in (3, 0, 2, 2, 1, 3, 0):
        for camera in ("side", "front"):
            np.testing.assert_array_equal(dataset.frames(camera, k), in_order[camera][k])


def test_spans_read_in_any_order_after_seeks(tmp_path):
    """A file's reader gives the frames of any span of times, asked for in any order, as one
    decoding of the whole file does; also after a seek that lands on a span's first frame (a
    keyframe), when an earlier span is asked for next."""
    import av

    path = encode_video(tmp_path / "a.mp4", pattern(120), FPS, gop=10)
    whole, times = _FileReader(path).span(-1.0, np.inf)
    assert len(times) == 120
    with av.open(str(path)) as container:
        packets = container.demux(container.streams.video[0])
        keyframes = [p.pts * p.time_base for p in packets if p.is_keyframe and p.pts is not None]
    starts = [int(np.argmin(np.abs(times - float(t)))) for t in keyframes if t > 0]
    assert len(starts) >= 3
    # from the last keyframe back, each followed by the frames just before it, then at random
    firsts = [110, *(k for start in starts[::-1] for k in (start, start - 5))]
    firsts += list(np.random.default_rng(0).integers(0, 120, 40))
    reader = _FileReader(path)
    for first in firsts:
        last = min(119, first + 8)
        images, got = reader.span(times[first], times[last])
        np.testing.assert_array_equal(got, times[first : last + 1])
        np.testing.assert_array_equal(images, whole[first : last + 1])


def test_reading_in_order_holds_about_an_episode(tmp_path):
    """Reading a file's episodes one after the other never holds the whole file's frames."""
    import tracemalloc

    lengths = [30] * 12
    path, frames = write(tmp_path / "d", lengths)
    dataset = read_dataset(path)
    tracemalloc.start()
    try:
        for k in range(len(lengths)):
            dataset.frames("front", k)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    episode = frames[0].nbytes
    assert peak < 4 * episode, (peak, episode, sum(f.nbytes for f in frames))


def test_frame_statistics_match_numpy():
    frames = pattern(7, 8, 10)
    # histograms of parts add up to the whole's
    histogram = frame_histogram(frames[:3]) + frame_histogram(frames[3:])
    np.testing.assert_array_equal(histogram, frame_histogram(frames))
    stats = histogram_statistics(histogram, len(frames))
    assert stats["count"] == [7]
    values = frames.reshape(-1, 3) / 255.0
    for name, expected in (("min", values.min(0)), ("std", values.std(0))):
        np.testing.assert_allclose(np.ravel(stats[name]), expected, atol=1e-12)
    # quantiles: the smallest level with at least that share of pixels at or below it
    np.testing.assert_allclose(
        np.ravel(stats["q50"]), np.quantile(values, 0.5, axis=0, method="inverted_cdf")
    )


def test_write_collection_with_frames(tmp_path):
    from invdyn.sim.collect import CollectedEpisode, Collection

    items = [
        CollectedEpisode(e.state, e.action, e.timestamp, full_state=e.state) for e in episodes([9])
    ]
    collection = Collection(tuple(items), ("a", "b"), ("u",), FPS, "test")
    path = write_collection(collection, tmp_path / "c", videos={"top": [pattern(9)]})
    assert read_dataset(path).frames("top", 0).shape == (9, 32, 48, 3)


@pytest.mark.parametrize(
    ("videos", "message"),
    [
        ({"front": [pattern(10).astype(np.float32)]}, "uint8"),
        ({"front": [pattern(10)[..., :2]]}, r"\(T, H, W, 3\)"),
        ({"front": [pattern(10, 31, 48)]}, "even width and height"),
        ({"front": [pattern(9)]}, "9 frames, episode 0 10"),
        ({"front": []}, "one frame array per episode"),
        ({"front cam": [pattern(10)]}, "camera name"),
        ("front", "must map camera names"),
    ],
)
def test_bad_videos(tmp_path, videos, message):
    with pytest.raises(InputError, match=message):
        write_dataset(
            tmp_path / "d", episodes([10]), fps=FPS, state_names=["a", "b"],
            action_names=["u"], videos=videos,
        )  # fmt: skip
    assert not (tmp_path / "d").exists()


def test_a_bad_later_episode_leaves_nothing(tmp_path):
    """Frames are checked as they are encoded: a wrong size in the second episode stops the
    write, and neither the dataset nor its staging directory remains."""
    videos = {"front": [pattern(10), pattern(12, 16, 16)]}
    with pytest.raises(InputError, match=r"videos\['front'\]\[1\].*one size per camera"):
        write_dataset(
            tmp_path / "d", episodes([10, 12]), fps=FPS, state_names=["a", "b"],
            action_names=["u"], videos=videos,
        )  # fmt: skip
    assert list(tmp_path.iterdir()) == []


class _ReadLog(Sequence[np.ndarray]):
    """Frames of episodes that log each read as (camera, episode)."""

    def __init__(self, frames: list[np.ndarray], camera: str, log: list[tuple[str, int]]):
        self.frames, self.camera, self.log = frames, camera, log

    def __len__(self) -> int:
        return len(self.frames)

    def __getitem__(self, k):  # type: ignore[override]
        self.log.append((self.camera, k))
        return self.frames[k]


def test_videos_stream_episode_after_episode(tmp_path):
    """Each episode's frames are read once, every camera's of one episode before the next
    episode's, so frames made when read (rendered, say) need not all be held."""
    log: list[tuple[str, int]] = []
    frames = [pattern(n, level=k) for k, n in enumerate([10, 12, 8])]
    videos = {camera: _ReadLog(frames, camera, log) for camera in ("front", "top")}
    path = write_dataset(
        tmp_path / "d", episodes([10, 12, 8]), fps=FPS, state_names=["a", "b"],
        action_names=["u"], videos=videos,
    )  # fmt: skip
    assert log == [(camera, k) for k in range(3) for camera in ("front", "top")]
    dataset = read_dataset(path)
    for k, expected in enumerate(frames):
        assert np.abs(dataset.frames("top", k).astype(int) - expected).mean() < 4


def test_streamed_videos(tmp_path):
    """Episodes' frames made one after another are written as a list of them would be; read
    out of order, or short of episodes, they raise a clear error."""
    frames = [pattern(n, level=k) for k, n in enumerate([10, 12])]
    made = ({"front": f, "top": f[:, ::2, ::2]} for f in frames)
    path = write_dataset(
        tmp_path / "d", episodes([10, 12]), fps=FPS, state_names=["a", "b"],
        action_names=["u"], videos=stream_videos(made, 2),
    )  # fmt: skip
    dataset = read_dataset(path)
    assert dataset.frames("top", 1).shape == (12, 16, 24, 3)
    assert np.abs(dataset.frames("front", 1).astype(int) - frames[1]).mean() < 4
    # a video of the dataset is a sequence of its episodes' frames
    video = dataset.video("top")
    assert [len(f) for f in video] == [10, 12]
    np.testing.assert_array_equal(video[-1], dataset.frames("top", 1))
    with pytest.raises(IndexError):
        video[2]

    videos = stream_videos(({"front": f} for f in frames), 2)
    with pytest.raises(InputError, match="read once, in order: episode 1 asked after episode -1"):
        videos["front"][1]
    short = stream_videos(iter([{"front": frames[0]}]), 2)
    with pytest.raises(InputError, match="end after 1 episodes"):
        write_dataset(
            tmp_path / "e", episodes([10, 12]), fps=FPS, state_names=["a", "b"],
            action_names=["u"], videos=short,
        )  # fmt: skip
    assert not (tmp_path / "e").exists()
    with pytest.raises(InputError, match="at least one episode"):
        stream_videos([], 0)


def test_a_datasets_videos_are_copied_at_its_frame_rate(tmp_path):
    """A dataset's video written into a dataset of the same episodes keeps its mp4 files, byte
    for byte, in their chunks and files; at another fps its frames are encoded again."""
    layout = Layout(chunks_size=2, video_file_size_mb=1e-6)  # a file per episode, 2 chunks
    path, _ = write(tmp_path / "d", [10, 12, 8], layout=layout)
    source = read_dataset(path)
    copy = write_dataset(
        tmp_path / "copy", list(source), fps=FPS, state_names=["a", "b"], action_names=["u"],
        videos={"front": source.video("front")},
    )  # fmt: skip
    files = sorted(f.relative_to(path) for f in path.rglob("*.mp4"))
    assert len(files) == 3 and files == sorted(f.relative_to(copy) for f in copy.rglob("*.mp4"))
    assert all((path / f).read_bytes() == (copy / f).read_bytes() for f in files)
    copied = read_dataset(copy)
    assert copied.info.videos == source.info.videos
    for k in range(3):
        np.testing.assert_array_equal(copied.frames("front", k), source.frames("front", k))
    # the statistics are the source's, as it records them: nothing is decoded
    import pyarrow.parquet as pq

    key = "observation.images.front"
    assert copied.stats[key].keys() == source.stats[key].keys()
    for name, value in source.stats[key].items():
        np.testing.assert_array_equal(copied.stats[key][name], value, err_msg=name)
    episodes_file = "meta/episodes/chunk-000/file-000.parquet"
    columns = [c for c in pq.read_schema(path / episodes_file).names if c.startswith("stats/")]
    assert pq.read_table(copy / episodes_file, columns=columns).equals(
        pq.read_table(path / episodes_file, columns=columns)
    )
    # a dataset that records no statistics of its episodes' frames has them encoded anew
    table = pq.read_table(path / episodes_file)
    kept = [c for c in table.column_names if not c.startswith(f"stats/{key}/")]
    pq.write_table(table.select(kept), path / episodes_file)
    anew = write_dataset(
        tmp_path / "anew", list(source), fps=FPS, state_names=["a", "b"], action_names=["u"],
        videos={"front": read_dataset(path).video("front")},
    )  # fmt: skip
    assert len(list(anew.rglob("*.mp4"))) == 1
    pixels = np.concatenate([read_dataset(anew).frames("front", k) for k in range(3)]) / 255
    assert (
        np.abs(read_dataset(anew).stats[key]["mean"].ravel() - pixels.mean((0, 1, 2))).max() < 0.01
    )

    slower = [Episode(e.state, e.action, np.arange(len(e)) / (FPS / 2)) for e in source]
    again = write_dataset(
        tmp_path / "again", slower, fps=FPS / 2, state_names=["a", "b"], action_names=["u"],
        videos={"front": source.video("front")},
    )  # fmt: skip
    assert len(list(again.rglob("*.mp4"))) == 1  # encoded anew, in one file
    decoded = read_dataset(again).frames("front", 1)
    assert np.abs(decoded.astype(int) - source.frames("front", 1)).mean() < 2


def test_video_needs_timestamps_at_the_frame_rate(tmp_path):
    late = [Episode(np.zeros((5, 1)), None, 0.5 + np.arange(5) / FPS)]
    with pytest.raises(InputError, match="timestamps must be k / fps"):
        write_dataset(tmp_path / "d", late, fps=FPS, state_names=["a"], videos={"f": [pattern(5)]})


def test_missing_or_corrupt_video_is_a_data_error(tmp_path):
    path, _ = write(tmp_path / "d", [10, 10])
    video = next(path.rglob("*.mp4"))
    # truncated: decoding fails or comes up short
    video.write_bytes(video.read_bytes()[:300])
    dataset = read_dataset(path)
    with pytest.raises(DataError, match=str(video.name)):
        dataset.frames("front", 1)
    with pytest.raises(InputError, match="no camera 'side'"):
        dataset.frames("side", 0)
    video.unlink()
    with pytest.raises(DataError, match="missing"):
        read_dataset(path)


def test_frames_of_another_size_than_declared_are_a_data_error(tmp_path):
    """A dataset whose info.json declares 32x48 frames while its file holds 16x24 ones (a
    video re-encoded in place): the frames are refused, not fed to a model at their size."""
    path, _ = write(tmp_path / "d", [10, 10])
    video = next(path.rglob("*.mp4"))
    small = [pattern(10, height=16, width=24), pattern(10, height=16, width=24, level=1)]
    smaller = write_dataset(
        tmp_path / "small",
        episodes([10, 10]),
        fps=FPS,
        state_names=["a", "b"],
        action_names=["u"],
        videos={"front": small},
    )
    video.write_bytes(next(smaller.rglob("*.mp4")).read_bytes())
    dataset = read_dataset(path)
    with pytest.raises(DataError, match=r"frames are \(16, 24, 3\).*declares .* \(32, 48, 3\)"):
        dataset.frames("front", 0)


def test_more_frames_than_rows_are_a_data_error(tmp_path):
    """An episode's rows are the frames of its span of the file (``from_timestamp`` to
    ``to_timestamp``), and, for the file's last episode, of the rest of the file: a span that
    holds more frames than rows, or a file that goes on after its last episode, is refused,
    naming the file, the episode and both counts. Frames of other episodes in the file are not
    an episode's own."""
    import pyarrow.parquet as pq

    path, _ = write(tmp_path / "d", [10, 10])
    video = next(path.rglob("*.mp4"))
    episodes_file = path / "meta/episodes/chunk-000/file-000.parquet"
    table = pq.read_table(episodes_file)
    # episode 0's span reaches 2 frames into episode 1's
    column = "videos/observation.images.front/to_timestamp"
    spans = table.column(column).to_numpy().copy()
    spans[0] += 2 / FPS
    wider = table.set_column(table.column_names.index(column), column, [spans])
    pq.write_table(wider, episodes_file)
    dataset = read_dataset(path)
    with pytest.raises(DataError, match=rf"{video.name}: episode 0 .* 12 frames.* 10 rows"):
        dataset.frames("front", 0)
    assert len(dataset.frames("front", 1)) == 10
    pq.write_table(table, episodes_file)

    # the file replaced by a longer one of the same episodes
    longer, _ = write(tmp_path / "longer", [10, 15])
    video.write_bytes(next(longer.rglob("*.mp4")).read_bytes())
    dataset = read_dataset(path)
    assert len(dataset.frames("front", 0)) == 10
    with pytest.raises(DataError, match=rf"{video.name}: episode 1 .* 15 frames.* 10 rows"):
        dataset.frames("front", 1)
