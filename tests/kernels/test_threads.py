"""Batches on the compiled kernels' threads: in processes forked after the threads ran, from
several Python threads at once, and on one thread."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import invdyn
from invdyn.configuration import random_configuration
from invdyn.kernels import cpu

_BATCHES = """
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
"""

_FORKED = (
    _BATCHES
    + """
import os
child = os.fork()
if child == 0:
    same = all(np.array_equal(flat(batch()), e) for batch, e in zip(batches, expected))
    os._exit(0 if same else 1)
_, status = os.waitpid(child, 0)
raise SystemExit(os.waitstatus_to_exitcode(status))
"""
)

_PRINTED = _BATCHES + "\nnp.save(__import__('sys').stdout.buffer, np.concatenate(expected))\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform has no fork")
def test_a_process_forked_after_the_threads_ran_runs_its_batches() -> None:
    """A process forked from one whose threads had run large batches (a fork-based pool, a
    DataLoader's workers) has none of those threads: it starts its own, with the parent's
    results."""
    run = subprocess.run(
        [sys.executable, "-c", _FORKED], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr


def test_batches_on_one_thread_equal_batches_on_many(tmp_path) -> None:
    """INVDYN_NUM_THREADS=1 runs every batch on the calling thread, to the same bits."""
    results = []
    for threads in ("1", "2"):
        env = {**os.environ, "INVDYN_NUM_THREADS": threads}
        run = subprocess.run(
            [sys.executable, "-c", _PRINTED], capture_output=True, env=env, timeout=300
        )
        assert run.returncode == 0, run.stderr.decode()
        path = tmp_path / f"{threads}.npy"
        path.write_bytes(run.stdout)
        results.append(np.load(path))
    np.testing.assert_array_equal(results[0], results[1])


def test_batches_from_several_python_threads_at_once() -> None:
    """Several Python threads run batches at the same time (one on the pool, the others each on
    its own thread, the GIL released), each with its own results."""
    model = invdyn.load("talos", floating_base=True)
    rng = np.random.default_rng(0)
    states = [
        (random_configuration(model, rng=k, shape=300), rng.normal(size=(300, model.nv)))
        for k in range(4)
    ]
    expected = [invdyn.rnea_derivatives(model, q, v, v)[0] for q, v in states]
    results: list[np.ndarray | None] = [None] * len(states)

    def work(k: int) -> None:
        q, v = states[k]
        for _ in range(5):
            results[k] = invdyn.rnea_derivatives(model, q, v, v)[0]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(states))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k, result in enumerate(results):
        np.testing.assert_array_equal(result, expected[k])


def test_the_pool_has_a_thread_per_available_core() -> None:
    given = os.environ.get("INVDYN_NUM_THREADS")
    expected = int(given) if given else len(os.sched_getaffinity(0))
    assert cpu.num_threads() == expected
