"""Work on shards of a list in a pool of processes, in order, with a progress bar; and the
mark of the processes that a launcher starts (`LAUNCHED`)."""

from __future__ import annotations

import collections
import concurrent.futures
import math
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from tqdm.auto import tqdm

from invdyn._arrays import check_count

Item = TypeVar("Item")
Result = TypeVar("Result")

#: shards per process: enough that a slow shard does not leave the other processes idle
SHARDS_PER_WORKER = 4

LAUNCHED = "INVDYN_TRAIN_NPROC"
"""Set in the environment of the processes that ``invdyn train --nproc`` starts: their
launcher, not each of them, says that a stop ended them."""


def map_in_shards(
    function: Callable[..., list[Result]],
    items: Sequence[Item],
    workers: int,
    *,
    progress: bool = False,
    desc: str = "",
) -> list[Result]:
    """``function(items)``'s results, one per item in order: all at once with one worker, on
    `SHARDS_PER_WORKER` shards of `items` per process with more (`iter_in_shards`)."""
    workers = check_count("workers", workers)
    count = 1 if workers == 1 else SHARDS_PER_WORKER * workers
    size = max(1, math.ceil(len(items) / count))
    with tqdm(total=len(items), disable=not progress, desc=desc, unit="ep") as bar:
        ahead = max(1, len(items))
        return list(iter_in_shards(function, items, workers, shard=size, ahead=ahead, bar=bar))


def iter_in_shards(
    function: Callable[..., list[Result]],
    items: Sequence[Item],
    workers: int,
    *,
    shard: int,
    ahead: int,
    bar: tqdm[Result] | None = None,
) -> Iterator[Result]:
    """``function(items)``'s results, one per item in order, as they are read, computed on
    consecutive shards of `shard` items.

    ``function(shard, done=None)`` returns one result per item of the shard and calls
    ``done()`` after each when given. With one worker it runs here, shard after shard as the
    results are read, `bar` counting each item; with more, it (picklable: a
    ``functools.partial`` of a module-level function) runs in a pool of that many processes
    started by ``spawn`` (MuJoCo and OpenGL do not survive a fork), on at most `ahead` shards
    beyond the one being read, so that at most that many shards' results are held, `bar`
    counting the items of each shard read; an error raised by `function` is raised here and
    cancels the shards not yet started. As with any ``spawn`` pool, a script that calls this
    must do so under ``if __name__ == "__main__":``.
    """
    workers = check_count("workers", workers)
    shard, ahead = check_count("shard", shard), check_count("ahead", ahead)
    shards = (items[start : start + shard] for start in range(0, len(items), shard))
    if workers == 1:
        done = None if bar is None else (lambda: bar.update(1))
        for part in shards:
            yield from function(part, done=done)
        return
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        pending: collections.deque[concurrent.futures.Future[list[Result]]] = collections.deque()

        def oldest() -> list[Result]:
            results = pending.popleft().result()
            if bar is not None:
                bar.update(len(results))
            return results

        try:
            for part in shards:
                pending.append(pool.submit(function, part))
                while len(pending) > ahead:
                    yield from oldest()
            while pending:
                yield from oldest()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
