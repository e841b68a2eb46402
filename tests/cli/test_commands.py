"""The commands' work as library functions of typed configurations: the checks that the command
line made before anything ran are the library's, so a Python caller meets them too, with the
same messages (the command line's own are in test_cli.py); and `invdyn._settings`' overrides
read any configuration of sections by its annotations."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import invdyn
from invdyn import InputError
from invdyn._files import MODEL_FILE, check_json_path, check_output_directory
from invdyn._settings import check_fields, with_overrides
from invdyn.sim.plant import Plant, PlantOptions, mass_scale


def test_output_and_json_paths_are_checked_before_any_work(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine")
    with pytest.raises(InputError, match="--out .*taken: exists and is not a directory"):
        check_output_directory(taken)
    with pytest.raises(InputError, match=f"cannot be made, {taken} is not a directory"):
        check_output_directory(taken / "run")
    dataset = tmp_path / "dataset"
    (dataset / "meta").mkdir(parents=True)
    (dataset / "meta" / "info.json").write_text("{}")
    with pytest.raises(InputError, match="holds a dataset"):
        check_output_directory(dataset)
    (dataset / "data").mkdir()
    with pytest.raises(InputError, match="lies inside the dataset"):
        check_output_directory(dataset / "runs")
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / MODEL_FILE).write_text("weights")
    with pytest.raises(InputError, match="would write into the checkpoint"):
        check_json_path(checkpoint / "metrics.json")
    with pytest.raises(InputError, match="is a directory; give a file path"):
        check_json_path(tmp_path)
    out = tmp_path / "run"
    with pytest.raises(InputError, match="inside --out"):
        check_json_path(out / "metrics.json", out=out)
    check_output_directory(None)
    check_json_path(None)
    check_json_path(tmp_path / "metrics.json", out=out)


def test_plant_options_name_the_options() -> None:
    model = invdyn.load("double_pendulum")
    with pytest.raises(InputError, match="--payload-frame places the --payload: give a mass"):
        PlantOptions(payload_frame="link1").plant(model)
    with pytest.raises(InputError, match="--mass-error must be a number above -1, got -1"):
        PlantOptions(mass_error=-1.0).plant(model)
    with pytest.raises(InputError, match="--payload must be"):
        PlantOptions(payload=-1.0).plant(model)
    plant = PlantOptions(payload=1.0, mass_error=0.1, timestep=5e-4).plant(model)
    assert plant.payload_frame == "link2" and plant.mass_scale == pytest.approx(1.1)
    assert plant.timestep == 5e-4 and mass_scale(0.0) == 1.0
    assert PlantOptions(payload=1.0, damping=0.2).given() == ("payload", "damping")
    assert PlantOptions().plant(model) == Plant()


def test_tracking_is_checked_before_it_is_simulated(tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    from invdyn.experiments.demo import DemoConfig, run_demo
    from invdyn.experiments.track import TrackConfig, check_run_length, run_track

    out = tmp_path / "run"
    refused = {
        "unknown controller 'pid'": TrackConfig("pendulum", out, controllers=("pid",)),
        "--rate must be a positive number": TrackConfig("pendulum", out, rate=0.0),
        "--no-limit-check applies to a --trajectory CSV": TrackConfig(
            "pendulum", out, limit_check=False
        ),
        "neither 'minimum_jerk' nor a CSV file": TrackConfig("pendulum", out, trajectory="x"),
        "control steps, whose logs": TrackConfig("pendulum", out, duration=1e9),
        "give a mass too": TrackConfig("pendulum", out, plant=PlantOptions(payload_frame="tip")),
    }
    for message, config in refused.items():
        with pytest.raises(InputError, match=message):
            run_track(config)
        assert not out.exists()
    with pytest.raises(InputError, match="--duration must be a positive number"):
        run_demo(DemoConfig(robot="pendulum", out=out, duration=0.0))
    with pytest.raises(InputError, match="exceed this machine's memory"):
        check_run_length(invdyn.load("pendulum"), 1e9, 1e3, 1)
    said: list[str] = []
    tracked = run_track(
        TrackConfig("pendulum", out, controllers=("pd", "computed_torque"), duration=0.2),
        say=said.append,
    )
    assert set(tracked.results) == {"pd", "computed_torque"} and not said
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics == json.loads(json.dumps(tracked.metrics))
    assert sorted(tracked.written) == [
        "computed_torque.csv",
        "metrics.json",
        "pd.csv",
        "tracking.png",
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"steps": 5}, "--steps: not an option of an invdyn robot"),
        ({"size": (32, 32)}, "--size applies to rendered frames: pass --camera too"),
        ({"episodes": 0}, "--episodes must be an integer"),
        ({"rate": -1.0}, "--rate must be a positive number"),
        ({"cameras": ("front",), "size": (63, 64)}, "even width and height"),
    ],
)
def test_a_collection_is_checked_before_it_is_simulated(
    options: dict, message: str, tmp_path: Path
) -> None:
    pytest.importorskip("mujoco")
    from invdyn.learn.collect import CollectConfig, collect_dataset

    with pytest.raises(InputError, match=message):
        collect_dataset(CollectConfig("double_pendulum", tmp_path / "data", **options))
    assert not (tmp_path / "data").exists()


def test_a_gym_collection_refuses_a_robots_options(tmp_path: Path) -> None:
    from invdyn.learn.collect import CollectConfig, collect_dataset, is_gym_id

    assert is_gym_id("Reacher-v5") and not is_gym_id("panda") and not is_gym_id("arm-v2.urdf")
    config = CollectConfig(
        "Reacher-v5", tmp_path / "data", meshes=True, plant=PlantOptions(payload=1.0)
    )
    with pytest.raises(InputError, match="--meshes, --payload: not options of a Gymnasium"):
        collect_dataset(config)


def test_balance_options_are_checked_before_the_robot_is_simulated(tmp_path: Path) -> None:
    from invdyn.experiments.wbc import WbcConfig, legged_robot, run_wbc

    with pytest.raises(InputError, match="--amplitude sets sway and squat, not stand"):
        run_wbc(WbcConfig("pendulum", amplitude=0.01, out=tmp_path))
    with pytest.raises(InputError, match="--push must be a finite force"):
        run_wbc(WbcConfig("pendulum", scenario="push", push=float("nan"), out=tmp_path))
    with pytest.raises(InputError, match="pendulum is a fixed-base robot"):
        legged_robot("pendulum")


def test_training_settings_leave_the_dataset_to_its_argument(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from invdyn.learn.runs import TrainRunConfig, evaluation_dir, run_config, train_run

    with pytest.raises(InputError, match="--set dataset=x: the dataset is the command's first"):
        run_config("small", ("dataset=x",), None)  # type: ignore[arg-type]
    taken = tmp_path / "taken"
    taken.write_text("mine")
    with pytest.raises(InputError, match="exists and is not a directory"):
        train_run(TrainRunConfig(str(tmp_path), taken))
    run = tmp_path / "run" / "checkpoint"
    assert evaluation_dir(run) == tmp_path / "run" / "evaluation"
    assert evaluation_dir(tmp_path / "elsewhere") == tmp_path / "elsewhere" / "evaluation"


def test_labelling_names_what_its_data_is_not(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from invdyn.learn.label import LabelConfig, label_data

    out = tmp_path / "labelled"
    with pytest.raises(InputError, match="no such file or directory"):
        label_data(LabelConfig(str(tmp_path), str(tmp_path / "missing"), out))
    (tmp_path / "broken" / "meta").mkdir(parents=True)
    with pytest.raises(InputError, match="has meta/ but no meta/info.json"):
        label_data(LabelConfig(str(tmp_path), str(tmp_path / "broken"), out))
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="is neither a dataset"):
        label_data(LabelConfig(str(tmp_path), str(tmp_path / "notes.txt"), out))


def test_identification_refuses_what_a_table_cannot_use(tmp_path: Path) -> None:
    from invdyn.ident.run import IdentConfig, identify_run
    from invdyn.ident.signals import Filter

    table = tmp_path / "rows.csv"
    table.write_text("q.joint1,v.joint1,a.joint1,tau.joint1\n0,0,0,0\n")
    refused = {
        "is a table: pass --robot": IdentConfig(str(table)),
        "--cutoff needs a dataset of episodes": IdentConfig(
            str(table), robot="pendulum", filtering=Filter(cutoff=5.0)
        ),
        "--learn needs a dataset of episodes": IdentConfig(
            str(table), robot="pendulum", learn=True
        ),
        "--preset, --set and --restart are about the networks": IdentConfig(
            str(table), robot="pendulum", overrides=("train.epochs=2",)
        ),
    }
    for message, config in refused.items():
        with pytest.raises(InputError, match=message):
            identify_run(dataclasses.replace(config, out=tmp_path / "ident"))
    notes = tmp_path / "notes.json"
    notes.write_text("{}")
    with pytest.raises(InputError, match="neither a dataset directory nor a table"):
        identify_run(IdentConfig(str(notes), robot="pendulum", out=tmp_path / "ident"))


@dataclasses.dataclass(frozen=True)
class _Optics:
    aperture: float = 2.8
    zoom: bool = False
    stops: tuple[int, ...] = (1, 2)

    def __post_init__(self) -> None:
        check_fields(self, "optics")


@dataclasses.dataclass(frozen=True)
class _Sensor:
    width: int = 640
    name: str = "cam"

    def __post_init__(self) -> None:
        check_fields(self, "sensor")


@dataclasses.dataclass(frozen=True)
class _Camera:
    optics: _Optics = dataclasses.field(default_factory=_Optics)
    sensor: _Sensor = dataclasses.field(default_factory=_Sensor)
    label: str = ""


def test_overrides_are_parsed_by_the_fields_annotations() -> None:
    camera = with_overrides(
        _Camera(), ["optics.aperture=4", "zoom=yes", "stops=3,4", "width=800", "label=front"]
    )
    assert camera == _Camera(_Optics(4.0, True, (3, 4)), _Sensor(800), "front")
    assert isinstance(camera.optics.aperture, float)
    assert with_overrides(_Camera(), ["stops="]).optics.stops == ()
    refused = {
        "an override must be 'key=value'": ["zoom"],
        "unknown config key 'optics.width'": ["optics.width=2"],
        r"use section.field \(optics.\* or sensor.\*\)": ["depth=2"],
        "sensor.width: cannot parse 'wide' as int": ["width=wide"],
        "optics.stops: cannot parse 'x' as tuple": ["stops=x"],
        "optics.aperture must be a finite number, got nan": ["aperture=nan"],
    }
    for message, overrides in refused.items():
        with pytest.raises(InputError, match=message):
            with_overrides(_Camera(), overrides)
    with pytest.raises(InputError, match="sensor.width must be an int, got 1.5"):
        _Sensor(width=1.5)  # type: ignore[arg-type]
    assert _Optics(stops=[5]).stops == (5,)  # type: ignore[arg-type]
    assert np.isclose(_Optics(aperture=2).aperture, 2.0)
