"""Work spread over a worker process per core: the reading of the result files and the
thumbnail pass. Workers are forked (they inherit what the command has read, nothing is sent
but the task's arguments), leave Ctrl-C to the command and die quietly on SIGTERM."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from searchgen_nb.errors import ReleaseError

_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def n_workers(n_tasks: int) -> int:
    """How many worker processes ``n_tasks`` tasks get: one per core this process may use."""
    return max(1, min(n_tasks, len(os.sched_getaffinity(0))))


def _start(init: Callable[..., None] | None, args: tuple) -> None:
    """A worker's start: Ctrl-C ignored, SIGTERM fatal (both were blocked from before the fork
    until here), then ``init(*args)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    if init is not None:
        init(*args)


def on_workers(
    task: Callable[[Any], Any],
    items: Iterable,
    lost: str,
    init: Callable[..., None] | None = None,
    args: tuple = (),
    chunksize: int = 1,
) -> Iterator:
    """``task(item)`` of every item, in order, on :func:`n_workers` forked processes that each
    ran ``init(*args)`` first (``task`` and each item are pickled, ``args`` are not). On any
    exception the work not started is dropped; a worker that dies (killed, out of memory) raises
    :class:`ReleaseError` ``"{lost} (killed, or out of memory?); nothing was published"``."""
    items = list(items)
    if not items:
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        context = multiprocessing.get_context("fork")
        pool = ProcessPoolExecutor(n_workers(len(items)), context, _start, (init, args))
        results = pool.map(task, items, chunksize=chunksize)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    try:
        yield from results
    except BrokenProcessPool:
        raise ReleaseError(f"{lost} (killed, or out of memory?); nothing was published") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
