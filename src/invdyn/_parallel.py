"""Work on shards of a list in a pool of processes, with one progress bar."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
from tqdm.auto import tqdm

from invdyn._arrays import check_count

Item = TypeVar("Item")
Result = TypeVar("Result")

#: shards per process: enough that a slow shard does not leave the other processes idle
SHARDS_PER_WORKER = 4


def map_in_shards(
    function: Callable[..., list[Result]],
    items: Sequence[Item],
    workers: int,
    *,
    progress: bool = False,
    desc: str = "",
    unit: str = "ep",
) -> list[Result]:
    """``function(items)``'s results, one per item in order, computed on shards of `items` by
    `workers` processes.

    ``function(shard, done=None)`` returns one result per item of `shard` and calls ``done()``
    after each when given. With one worker it runs here on all the items, the progress bar
    counting every item; with more, it (picklable: a ``functools.partial`` of a module-level
    function) runs on consecutive shards in a pool of that many processes, started by
    ``spawn`` (MuJoCo and OpenGL do not survive a fork), the bar counting finished shards, and
    the first error cancels the shards not yet started. As with any ``spawn`` pool, a script
    that calls this must do so under ``if __name__ == "__main__":``.
    """
    workers = check_count("workers", workers)
    with tqdm(total=len(items), disable=not progress, desc=desc, unit=unit) as bar:
        if workers == 1:
            return function(items, done=lambda: bar.update(1))
        bounds = np.array_split(np.arange(len(items)), SHARDS_PER_WORKER * workers)
        shards = [[items[i] for i in shard] for shard in bounds if len(shard)]
        context = multiprocessing.get_context("spawn")
        results: dict[int, list[Result]] = {}
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            futures = {pool.submit(function, shard): k for k, shard in enumerate(shards)}
            try:
                for future in concurrent.futures.as_completed(futures):
                    results[futures[future]] = future.result()
                    bar.update(len(results[futures[future]]))
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    return [result for k in range(len(shards)) for result in results[k]]
