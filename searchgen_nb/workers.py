"""Work spread over a forked worker process per core, results in the order given: the result
files' reading (:mod:`searchgen_nb.records`) and the images' decoding (:mod:`searchgen_nb.thumbs`).
A worker leaves Ctrl-C to the command and dies quietly on SIGTERM."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from searchgen_nb.errors import ReleaseError

_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))


def _start(initializer: Callable | None, initargs: tuple) -> None:
    """Ctrl-C ignored, SIGTERM by default (both were blocked from before the fork until here);
    then ``initializer(*initargs)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    if initializer is not None:
        initializer(*initargs)


def fork_map(
    fn: Callable[[Any], Any],
    items: Sequence,
    broken: str,
    initializer: Callable | None = None,
    initargs: tuple = (),
    chunksize: int = 1,
) -> Iterator:
    """``fn(item)`` of every item, in order, on a worker process per core (at most one per item;
    forked with Ctrl-C and SIGTERM blocked, ``initializer(*initargs)`` run in each, its
    arguments inherited, never pickled). :class:`ReleaseError` with the text ``broken`` when a
    worker ends before its work is done; on any exception the work not started is dropped."""
    n = min(len(items), cores())
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        pool = ProcessPoolExecutor(
            n, multiprocessing.get_context("fork"), _start, (initializer, initargs)
        )
        results = pool.map(fn, items, chunksize=chunksize)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    try:
        yield from results
    except BrokenProcessPool:
        raise ReleaseError(broken) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
