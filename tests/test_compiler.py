"""The inter-process lock around numba's compilations and its on-disk cache; batches in forked
processes."""

from __future__ import annotations

import fcntl
import inspect
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from types import ModuleType

import numba
import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

import invdyn
from invdyn.configuration import random_configuration
from invdyn.kernels import compiler, cpu, cpu_derivatives


def _dispatchers(module: ModuleType) -> dict[str, CPUDispatcher]:
    return {name: value for name, value in vars(module).items() if isinstance(value, CPUDispatcher)}


@pytest.mark.parametrize("module", [cpu, cpu_derivatives], ids=lambda m: m.__name__)
def test_every_kernel_compiles_holding_the_lock(module: ModuleType) -> None:
    kernels = _dispatchers(module)
    assert len(kernels) > 10
    unlocked = [name for name, kernel in kernels.items() if "_compile_for_args" not in vars(kernel)]
    assert not unlocked, unlocked


def test_no_kernel_calls_a_parallel_kernel() -> None:
    """numba caches a caller compiled where a parallel kernel was loaded from the cache without
    that kernel's code; every later process that loads the caller then crashes on calling it
    (seen: rnea on a batch, after a process that had cached the parallel batch kernel)."""
    kernels = {**_dispatchers(cpu), **_dispatchers(cpu_derivatives)}
    parallel = [name for name, kernel in kernels.items() if kernel.targetoptions.get("parallel")]
    assert "rnea_batch" in parallel
    callers = [
        (caller, name)
        for caller, kernel in kernels.items()
        for name in parallel
        if caller != name and re.search(rf"\b{name}\(", inspect.getsource(kernel.py_func))
    ]
    assert not callers, callers


def _add_one(x: float) -> float:
    return x + 1.0


def test_a_compilation_waits_for_the_lock_that_another_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's lock is another open file on the cache directory's lock: while it is
    held, a locked kernel's first call waits, and an unlocked twin compiles meanwhile."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    kernel = compiler.jit()(_add_one)
    path = compiler.lock_path(kernel)
    assert path is not None and path.parent.is_relative_to(tmp_path)
    twin = numba.njit(_add_one)
    assert compiler.lock_path(twin) is None  # nothing on disk to guard
    results: dict[str, float] = {}
    callers = {
        name: threading.Thread(target=lambda n=name, k=k: results.update({n: k(1.0)}))
        for name, k in (("locked", kernel), ("twin", twin))
    }
    other = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    try:
        fcntl.flock(other, fcntl.LOCK_EX)
        for caller in callers.values():
            caller.start()
        callers["twin"].join(timeout=120)
        time.sleep(0.5)
        assert results == {"twin": 2.0}, results
        assert callers["locked"].is_alive() and not kernel.signatures
    finally:
        os.close(other)
    callers["locked"].join(timeout=120)
    assert results == {"twin": 2.0, "locked": 2.0}


def test_kernels_of_one_cache_share_a_lock_file_in_it() -> None:
    paths = {compiler.lock_path(k) for k in (cpu.rnea_batch, cpu_derivatives.rnea_derivatives)}
    assert paths == {Path(cpu.rnea_batch._cache._cache_path) / compiler.LOCK_NAME}


def _triple(x: float) -> float:
    return 3.0 * x


def test_the_cache_saves_the_machine_code_before_the_index_entry_that_points_at_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped between the two, the entry then points at nothing, not at stale code; and a
    second process loads the saved version rather than compiling it."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    kernel = compiler.jit()(_triple)
    cache_file = kernel._cache._cache_file
    assert isinstance(cache_file, compiler.DataFirstCacheFile)
    saved: list[str] = []
    for method in ("_save_data", "_save_index"):
        original = getattr(cache_file, method)
        monkeypatch.setattr(
            cache_file, method, lambda *a, o=original, m=method: (saved.append(m), o(*a))[1]
        )
    assert kernel(2.0) == 6.0
    assert saved == ["_save_data", "_save_index"]
    assert kernel(3) == 9.0  # another version: a second data file, then the index
    assert saved[2:] == ["_save_data", "_save_index"]
    assert len(list(tmp_path.rglob("*.nbc"))) == 2

    again = compiler.jit()(_triple)
    assert again(2.0) == 6.0 and again.stats.cache_hits[again.signatures[0]] == 1


def test_a_long_wait_for_the_lock_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Waiting longer than QUIET_WAIT_S is said; a short wait (workers loading the cached
    kernels one after another) is not."""
    path = tmp_path / compiler.LOCK_NAME
    monkeypatch.setattr(compiler, "QUIET_WAIT_S", 1.0)
    message = f"waiting for another process that compiles invdyn's kernels into {tmp_path}"
    for held, warns in ((2.0, True), (0.05, False)):
        other = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
        fcntl.flock(other, fcntl.LOCK_EX)
        threading.Timer(held, os.close, (other,)).start()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with compiler.compile_lock(path):
                pass
        assert any(message in str(w.message) for w in caught) == warns, (held, caught)


def test_the_lock_is_reentrant_in_a_thread(tmp_path: Path) -> None:
    path = tmp_path / compiler.LOCK_NAME
    with compiler.compile_lock(path), compiler.compile_lock(path):
        pass
    # and released: another open file takes it at once
    other = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(other)


_FORKED_BATCHES = """
import os
import numpy as np
import invdyn
from invdyn.configuration import random_configuration

model = invdyn.load("panda")
q = random_configuration(model, rng=0, shape=256)
v, a = np.ones((256, model.nv)), np.ones((256, model.nv))
hand = model.frame_name[-1]
batches = [
    lambda: invdyn.rnea(model, q, v, a),
    lambda: invdyn.mass_matrix(model, q),
    lambda: invdyn.aba(model, q, v, a),
    lambda: invdyn.coriolis(model, q, v),
    lambda: invdyn.joint_torque_regressor(model, q, v, a),
    lambda: invdyn.rnea_derivatives(model, q, v, a),
    lambda: invdyn.aba_derivatives(model, q, v, a),
    lambda: invdyn.forward_kinematics(model, q),
    lambda: invdyn.frame_placement(model, q, hand),
    lambda: invdyn.frame_jacobian(model, q, hand),
    lambda: invdyn.frame_acceleration(model, q, v, a, hand),
    lambda: invdyn.center_of_mass(model, q),
    lambda: invdyn.centroidal_momentum_matrix(model, q),
    lambda: invdyn.centroidal_momentum_rate(model, q, v, a),
]


def flat(result):
    return np.concatenate([np.ravel(p) for p in (result if type(result) is tuple else [result])])


expected = [flat(batch()) for batch in batches]
child = os.fork()
if child == 0:
    same = all(np.array_equal(flat(batch()), e) for batch, e in zip(batches, expected))
    os._exit(0 if same else 1)
_, status = os.waitpid(child, 0)
raise SystemExit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform has no fork")
def test_a_process_forked_after_the_threads_ran_runs_its_batches_on_one_thread() -> None:
    """numba terminates a process forked after GNU OpenMP's threads had started at its first
    parallel launch (a fork-based pool whose parent had run a large batch): there the batch
    kernels run on the calling thread, with the parent's results."""
    run = subprocess.run(
        [sys.executable, "-c", _FORKED_BATCHES], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr


def test_batches_on_one_thread_equal_batches_on_many(monkeypatch: pytest.MonkeyPatch) -> None:
    model = invdyn.load("panda")
    q = random_configuration(model, rng=1, shape=100)
    v = np.random.default_rng(2).normal(size=(100, model.nv))
    threaded = invdyn.rnea(model, q, v, v), invdyn.mass_matrix(model, q)
    monkeypatch.setattr(compiler, "_forked_after_gnu_openmp", True)
    assert compiler.parallel_from() > 100
    serial = invdyn.rnea(model, q, v, v), invdyn.mass_matrix(model, q)
    for one, many in zip(serial, threaded):
        np.testing.assert_array_equal(one, many)
