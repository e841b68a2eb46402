"""Training on several processes (`invdyn.learn.distributed`): ``invdyn train --nproc 2`` runs
two gloo processes under ``torch.distributed.run`` that train as one process does (same
held-out R^2, same losses), a two-process run killed after a checkpoint resumes from it, and the
workers of a killed launcher stop.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import driven_pendulums, unannounced

torch = pytest.importorskip("torch")
pytest.importorskip("pyarrow")

from invdyn import InputError  # noqa: E402
from invdyn.cli import main  # noqa: E402
from invdyn.learn import distributed  # noqa: E402
from invdyn.learn.checkpoint import load_checkpoint  # noqa: E402
from invdyn.learn.config import preset  # noqa: E402
from invdyn.learn.datasets import Episode, read_dataset, write_dataset  # noqa: E402
from invdyn.learn.train import train  # noqa: E402

DT = 0.02


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    episodes = [
        Episode(s, a, np.arange(100) * DT, task="swing")
        for s, a in driven_pendulums(30, 100, 0, DT)
    ]
    return write_dataset(
        tmp_path_factory.mktemp("ddp") / "data",
        episodes,
        fps=1 / DT,
        state_names=("q0", "q1", "v0", "v1"),
        action_names=("tau0", "tau1"),
        source="pendulums",
    )


def settings(epochs: int, **more: object) -> list[str]:
    pairs = {"train.epochs": epochs, "train.num_threads": 1, **more}
    return [option for key, value in pairs.items() for option in ("--set", f"{key}={value}")]


def command(dataset: Path, out: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "invdyn", "train", str(dataset), "--out", str(out),
            "--preset", "small", "--no-progress", "--nproc", "2", *options]  # fmt: skip


def one_process(dataset: Path, out: Path, epochs: int, **more: object) -> dict:
    pairs = {"train.epochs": epochs, "train.num_threads": 1, **more}
    overrides = [f"{key}={value}" for key, value in pairs.items()] + [f"dataset={dataset}"]
    train(read_dataset(dataset), preset("small").with_overrides(overrides), out, progress=False)
    return load_checkpoint(out / "checkpoint").metrics


def test_two_gloo_processes_train_as_one(dataset, tmp_path):
    single = one_process(dataset, tmp_path / "one", 8)
    done = subprocess.run(command(dataset, tmp_path / "two", *settings(8)), capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("wrote") == 1  # the first process alone reports and writes
    shared = load_checkpoint(tmp_path / "two" / "checkpoint").metrics
    r2_one, r2_two = single["validation"]["r2_mean"], shared["validation"]["r2_mean"]
    assert r2_one > 0.95 and abs(r2_two - r2_one) < 0.005, (r2_one, r2_two)
    for a, b in zip(single["history"], shared["history"]):
        assert a["train_loss"] == pytest.approx(b["train_loss"], rel=1e-4), (a, b)


def _workers(launcher: int) -> list[int]:
    """The pids of the processes whose parent is `launcher`."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _parent(entry) == launcher
    ]


def _kill_run(pid: int) -> None:
    """SIGKILL the launcher `pid` and its workers, as a crash of the machine would: torchrun
    starts each worker in a session of its own, which killing the launcher's group misses."""
    workers = _workers(pid)
    os.killpg(pid, signal.SIGKILL)
    for worker in workers:
        try:
            os.killpg(worker, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _training_into(out: Path) -> list[int]:
    """The pids of the processes whose command line names `out`."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(out).encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            pass
    return pids


def _parent(process: Path) -> int | None:
    """The parent pid of the process of /proc entry `process`, None if it has gone."""
    try:
        # the fields after the command's parenthesised name: state, then the parent's pid
        return int((process / "stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def test_a_killed_two_process_run_resumes(dataset, tmp_path):
    epochs = 40
    reference = one_process(
        dataset, tmp_path / "reference", epochs, **{"train.checkpoint_every": 1}
    )
    out = tmp_path / "run"
    argv = command(dataset, out, *settings(epochs, **{"train.checkpoint_every": 1}))
    run = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and run.poll() is None:
            try:
                epoch = load_checkpoint(out / "checkpoint").train_state["epoch"]
            except Exception:
                epoch = 0
            if epoch >= 2:
                break
            time.sleep(0.1)
    finally:
        _kill_run(run.pid)
        run.wait()
    killed_at = load_checkpoint(out / "checkpoint").train_state["epoch"]
    assert 2 <= killed_at < epochs, killed_at
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "resumed from epoch" in done.stdout
    resumed = load_checkpoint(out / "checkpoint").metrics
    r2, expected = resumed["validation"]["r2_mean"], reference["validation"]["r2_mean"]
    assert abs(r2 - expected) < 0.005, (r2, expected)
    assert len(resumed["history"]) == epochs


def test_workers_end_when_their_launcher_is_killed(dataset, tmp_path):
    """A SIGKILL of the launcher alone (``kill -9``, the out-of-memory killer) does not leave
    its workers training on into the checkpoints that a rerun resumes from."""
    out = tmp_path / "run"
    argv = command(dataset, out, *settings(400, **{"train.checkpoint_every": 1}))
    run = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)  # fmt: skip
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (out / "checkpoint").exists():
            time.sleep(0.1)
        workers = _workers(run.pid)
        assert len(workers) == 2, workers
        run.kill()
        run.wait()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(map(_running, workers)):
            time.sleep(0.1)
        assert not any(map(_running, workers)), "the workers outlived their launcher"
    finally:
        if run.poll() is None:
            _kill_run(run.pid)
        for worker in filter(_running, workers):
            os.kill(worker, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_shares_cover_the_batch_and_their_weights_average_to_it(monkeypatch):
    rows = torch.arange(10)
    assert distributed.share(rows) == (rows, 1.0)  # one process: the whole batch
    monkeypatch.setattr(distributed, "world_size", lambda: 3)
    for batch, sizes in ((rows, [4, 3, 3]), (rows[:2], [1, 1, 1])):
        shares = []
        for r in range(3):
            monkeypatch.setattr(distributed, "rank", lambda r=r: r)
            shares.append(distributed.share(batch))
        assert [len(local) for local, _ in shares] == sizes
        losses = batch.double() ** 2
        # DistributedDataParallel averages the processes' weighted mean losses' gradients
        averaged = sum(w * losses[local - batch[0]].mean() for local, w in shares) / 3
        assert float(averaged) == pytest.approx(float(losses.mean()))
    # a process of a batch smaller than the group takes a row at weight 0
    assert shares[2][1] == 0.0


def test_an_error_or_a_stop_in_the_processes_is_said_once(dataset, tmp_path):
    """An input error that every process meets is one line and status 2; a Ctrl-C or SIGTERM
    of the launcher stops every process with one line and 130 or 143, no traceback."""
    argv = command(dataset, tmp_path / "bad", *settings(1, **{"model.horizon": 1000}))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    said_once = unannounced(done.stderr)
    assert done.returncode == 2 and said_once.startswith("invdyn: error: no training windows")
    assert said_once.count("\n") == 1, done.stderr
    for stop, status, said in (
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "terminated"),
    ):
        out = tmp_path / said
        run = subprocess.Popen(command(dataset, out, *settings(1000)), stderr=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, text=True)  # fmt: skip
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (out / "checkpoint").exists():
            time.sleep(0.1)
        run.send_signal(stop)
        _, err = run.communicate(timeout=120)
        assert run.returncode == status and unannounced(err) == f"invdyn: {said}\n", err
        assert not _training_into(out)


def test_bad_process_counts(dataset, tmp_path, capsys):
    for bad in (0, -1):
        assert main(["train", str(dataset), "--out", str(tmp_path), "--nproc", str(bad)]) == 2
        assert "nproc must be an integer >= 1" in capsys.readouterr().err
    with pytest.raises(InputError, match="nproc"):
        distributed.launch(True, [])  # type: ignore[arg-type]
    # more processes on CUDA than the machine has GPUs
    with pytest.raises(InputError, match=r"need \d+ GPUs, this machine has"):
        distributed.check_gpus(torch.cuda.device_count() + 1, torch.device("cuda"))
    distributed.check_gpus(torch.cuda.device_count() + 1, torch.device("cpu"))


def test_two_processes_train_a_frame_model_with_augmentations_as_one(tmp_path):
    # random shifts and colours are drawn from (seed, epoch): every process draws for its
    # share of a batch what one process draws for the batch
    from test_learn_frames import config, dataset

    frames = dataset(tmp_path / "frames", 30, 0)
    settings_ = config(4)
    assert settings_.model.augment and settings_.model.jitter
    single = train(frames, settings_, tmp_path / "one", progress=False).history
    overrides = [
        "--set", "model.cameras=cam", "--set", "model.state=false",
        "--set", "model.encoder=[16,32]", "--set", "model.hidden=[64]",
        "--set", f"model.augment={settings_.model.augment}",
        "--set", f"model.jitter={settings_.model.jitter}",
        *settings(4, **{"train.batch_size": 64}),
    ]  # fmt: skip
    argv = command(frames.path, tmp_path / "two", *overrides)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    shared = load_checkpoint(tmp_path / "two" / "checkpoint").metrics["history"]
    for a, b in zip(single, shared):
        assert a["train_loss"] == pytest.approx(b["train_loss"], rel=1e-3), (a, b)
