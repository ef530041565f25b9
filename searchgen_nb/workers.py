"""Work spread over forked processes: the reading of the result files and the thumbnail pass
on a worker per core (:func:`on_workers`), the gate's evidence check beside its other checks
(:func:`beside`). A process is forked (it inherits what the command has read, nothing is sent
but a task's arguments), leaves Ctrl-C to the command and dies quietly on SIGTERM; it never
outlives the block that started it, nor the command, even a killed one. (The forks happen in a
notebook's kernel too, which runs threads of its own: a forked process touches none of their
locks.)"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from searchgen_nb.errors import ReleaseError

_SIGNALS = {signal.SIGINT, signal.SIGTERM}
_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1  # <sys/prctl.h>


def n_workers(n_tasks: int) -> int:
    """How many worker processes ``n_tasks`` tasks get: one per core this process may use."""
    return max(1, min(n_tasks, len(os.sched_getaffinity(0))))


def _start(parent: int, init: Callable[..., None] | None, args: tuple) -> None:
    """A worker's start: Ctrl-C ignored, SIGTERM fatal and sent when the command (process
    ``parent``) dies, killed or not (both signals were blocked from before the fork until
    here), then ``init(*args)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # Linux's; the project's system
    if os.getppid() != parent:  # it died before the line above
        os._exit(1)
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
    gets the results, in order, as they come. On leaving it every worker has ended (on an
    exception, Ctrl-C included, stopped at once: a task that never ends holds nothing up). A
    worker that dies (killed, out of memory) raises :class:`ReleaseError` ``lost``; a task's
    own exception is raised as it is."""
    items, pool, mine = list(items), None, set()
    try:
        if not items:
            yield iter(())
            return
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            context = multiprocessing.get_context("fork")
            start, others = (os.getpid(), init, args), set(multiprocessing.active_children())
            pool = ProcessPoolExecutor(n_workers(len(items)), context, _start, start)
            results = pool.map(task, items, chunksize=chunksize)  # forks every worker now
            mine = set(multiprocessing.active_children()) - others
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        yield _collected(results, lost)
    except BaseException:
        for worker in mine:
            worker.terminate()
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _collected(results: Iterator, lost: str) -> Iterator:
    """The pool's results; a dead worker as :func:`on_workers` says."""
    try:
        yield from results
    except BrokenProcessPool:
        raise ReleaseError(lost) from None


@contextlib.contextmanager
def beside(task: Callable[..., Any], args: tuple, lost: str) -> Iterator[Callable[[], Any]]:
    """Start ``task(*args)`` on one forked process (``args`` are not pickled, the result is)
    while the block runs; the block calls the function it gets for the result, which raises
    what the task raised (:class:`ReleaseError` naming an exception that cannot be sent back),
    or :class:`ReleaseError` ``lost`` when the process died. On leaving the block the process
    has ended: stopped if still running."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = None
    try:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            run = (os.getpid(), send, task, args)
            started = context.Process(target=_run_beside, args=run, daemon=True)
            started.start()  # a fork that fails raises here, naming its OSError
            process = started
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            send.close()

        def result() -> Any:
            try:
                done, value = receive.recv()
            except (EOFError, OSError, pickle.UnpicklingError):
                raise ReleaseError(lost) from None
            if done:
                return value
            raise value

        yield result
    finally:
        if process is not None:
            if process.is_alive():
                process.terminate()
            process.join()
        receive.close()


def _run_beside(parent: int, send, task: Callable[..., Any], args: tuple) -> None:
    """In the process of :func:`beside`: send ``(True, result)`` or ``(False, exception)``."""
    _start(parent, None, ())
    try:
        outcome = True, task(*args)
    except BaseException as exc:  # sent back as it is, or named when it cannot be
        outcome = False, exc
    try:
        message = pickle.dumps(outcome)
        if not outcome[0]:
            pickle.loads(message)  # an exception whose class cannot be built from its args
        send.send_bytes(message)
    except Exception:  # a result or exception that does not pickle, or not back
        text = f"{type(outcome[1]).__name__}: {outcome[1]}"[:300]
        send.send((False, ReleaseError(f"a process beside the command failed: {text}")))
    send.close()
