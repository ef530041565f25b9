"""Work spread over a worker process per core: the reading of the result files and the
thumbnail pass. Workers are forked (they inherit what the command has read, nothing is sent
but the task's arguments), leave Ctrl-C to the command and die quietly on SIGTERM."""

from __future__ import annotations

import contextlib
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


@contextlib.contextmanager
def on_workers(
    task: Callable[[Any], Any],
    items: Iterable,
    lost: str,
    init: Callable[..., None] | None = None,
    args: tuple = (),
    chunksize: int = 1,
) -> Iterator[Iterator]:
    """Start ``task(item)`` of every item on :func:`n_workers` forked processes that each ran
    ``init(*args)`` first (``task`` and each item are pickled, ``args`` are not); the block
    gets the results, in order, as they come. On leaving it every worker has ended; on any
    exception the work not started is dropped. A worker that dies (killed, out of memory)
    raises :class:`ReleaseError` ``"{lost} (killed, or out of memory?); nothing was
    published"``; a task's own exception is raised as it is."""
    items = list(items)
    if not items:
        yield iter(())
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        context = multiprocessing.get_context("fork")
        pool = ProcessPoolExecutor(n_workers(len(items)), context, _start, (init, args))
        results = pool.map(task, items, chunksize=chunksize)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    try:
        yield _collected(results, lost)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _collected(results: Iterator, lost: str) -> Iterator:
    """The pool's results; a dead worker as :func:`on_workers` says."""
    try:
        yield from results
    except BrokenProcessPool:
        raise ReleaseError(f"{lost} (killed, or out of memory?); nothing was published") from None


@contextlib.contextmanager
def beside(task: Callable[..., Any], args: tuple, lost: str) -> Iterator[Callable[[], Any]]:
    """Start ``task(*args)`` on one forked process (``args`` are not pickled, the result is)
    while the block runs; the block calls the function it gets for the result, which raises
    what the task raised, or :class:`ReleaseError` as :func:`on_workers` says when the process
    died. On leaving the block the process has ended: stopped if still running."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        process = context.Process(target=_run_beside, args=(send, task, args), daemon=True)
        process.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        send.close()

    def result() -> Any:
        try:
            done, value = receive.recv()
        except EOFError:
            raise ReleaseError(
                f"{lost} (killed, or out of memory?); nothing was published"
            ) from None
        if done:
            return value
        raise value

    try:
        yield result
    finally:
        if process.is_alive():
            process.terminate()
        process.join()
        receive.close()


def _run_beside(send, task: Callable[..., Any], args: tuple) -> None:
    """In the process of :func:`beside`: ``(True, result)`` or ``(False, exception)``."""
    _start(None, ())
    try:
        outcome = True, task(*args)
    except Exception as exc:
        outcome = False, exc
    send.send(outcome)
    send.close()
