"""The inter-process lock around numba's compilations and its on-disk cache."""

from __future__ import annotations

import fcntl
import inspect
import os
import re
import threading
import time
from pathlib import Path
from types import ModuleType

import numba
import pytest
from numba.core.registry import CPUDispatcher

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


def test_a_compilation_waits_for_the_lock_that_another_holds() -> None:
    """Another process's lock is another open file on `LOCK_PATH`: while it is held, a locked
    kernel's first call waits, and an unlocked twin compiles meanwhile."""

    def add_one(x: float) -> float:
        return x + 1.0

    kernel = compiler.locked(numba.njit(add_one))
    twin = numba.njit(add_one)
    results: dict[str, float] = {}
    callers = {
        name: threading.Thread(target=lambda n=name, k=k: results.update({n: k(1.0)}))
        for name, k in (("locked", kernel), ("twin", twin))
    }
    other = os.open(compiler.LOCK_PATH, os.O_RDONLY | os.O_CREAT, 0o666)
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


def test_waiting_for_the_lock_is_said() -> None:
    other = os.open(compiler.LOCK_PATH, os.O_RDONLY | os.O_CREAT, 0o666)
    fcntl.flock(other, fcntl.LOCK_EX)
    threading.Timer(0.5, os.close, (other,)).start()
    with pytest.warns(UserWarning, match="waiting for another process that compiles invdyn's"):
        with compiler.compile_lock():
            pass


def test_the_lock_is_reentrant_in_a_thread() -> None:
    with compiler.compile_lock(), compiler.compile_lock():
        pass
    # and released: another open file takes it at once
    other = os.open(compiler.LOCK_PATH, os.O_RDONLY)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(other)
