"""The book's notebooks, run for a release: papermill on one kernel, emptied between notebooks;
each executed notebook checked (no error output, every code cell ran) and normalised (no
timestamps, random ids or absolute paths)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

import nbformat

from searchgen_nb.config import PROJECT_ENV, WORK_ROOT_ENV, project_root
from searchgen_nb.errors import ReleaseError
from searchgen_nb.publish import step
from searchgen_nb.thumbs import CACHE_ENV
from searchgen_nb.untrusted import no_ansi

NOTEBOOKS = "src/book/notebooks"  # the executed notebooks, relative to the work folder
THUMB_CACHE = "build/thumbs"  # the release's thumbnail cache, relative to the output root
VOLATILE_CELL_METADATA = ("execution", "papermill", "collapsed", "scrolled", "ExecuteTime")


def check_executed(nb: nbformat.NotebookNode, name: str) -> None:
    """Raise :class:`ReleaseError` if an executed notebook holds an error output or ended early."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                raise ReleaseError(
                    f"notebook {name}: cell {i} raised {out.get('ename')}: "
                    f"{_clean(out.get('evalue', ''))}"
                )
        if cell.source.strip() and cell.get("execution_count") is None:
            raise ReleaseError(f"notebook {name}: cell {i} never ran (the notebook exited early)")


def _clean(text: str) -> str:
    return no_ansi(text)


def normalize(nb: nbformat.NotebookNode, root: Path) -> nbformat.NotebookNode:
    """Strip what changes run to run: timestamps, durations, random ids, absolute paths. Keeps
    ``metadata.papermill.parameters`` (the release config by its file name: the folder a release
    ran from is no part of what it published) and hides the parameter cells in the book."""
    from papermill.translators import PythonTranslator

    params = dict(nb.metadata.get("papermill", {}).get("parameters", {}))
    if isinstance(given := params.get("release_config"), str):
        params["release_config"] = name = Path(given).name
        old, new = (f"release_config = {PythonTranslator.translate(v)}" for v in (given, name))
        for cell in nb.cells:
            if "injected-parameters" in cell.metadata.get("tags", []):
                cell.source = cell.source.replace(old, new)
    nb.metadata = nbformat.from_dict(
        {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "papermill": {"parameters": params},
        }
    )
    prefixes = sorted(
        {str(p) + os.sep for p in (root, project_root(), Path(sys.prefix))}, key=len, reverse=True
    )
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        tags = cell.metadata.get("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            cell.metadata["tags"] = [*tags, "remove-cell"]
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                for p in prefixes:
                    out["text"] = out["text"].replace(p, "")
    return nb


@contextlib.contextmanager
def kernel_stderr_to(log_path: Path):
    """Send what kernels write to file descriptor 2 (transport warnings, shutdown noise) to a
    log file for the duration; failures still name the notebook and cell."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(log_path, "ab") as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def _dead_kernel_said(loop, context: dict) -> None:
    """The event loop's handler of errors nobody retrieved: a notebook task that failed because
    the kernel died (Ctrl-C and SIGTERM reach the kernel too) is said by the failure or the
    interruption the command reports; anything else goes to asyncio's own handler."""
    from nbclient.exceptions import DeadKernelError

    if not isinstance(context.get("exception"), DeadKernelError):
        loop.default_exception_handler(context)


#: No IPython history; no output cache (``Out``, ``_1``, …, which no notebook reads): IPython's
#: reset between two notebooks then skips its full garbage collection (0.07–0.1 s → 0.005 s).
KERNEL_ARGUMENTS = ["--HistoryManager.enabled=False", "--InteractiveShell.cache_size=0"]


@contextlib.contextmanager
def release_kernel(cwd: Path):
    """One ``python3`` kernel started in ``cwd`` for all of a release's notebooks (a kernel per
    notebook imports pandas and altair ten times: a demo release takes 1.6 times as long); yields
    (manager, ready client), shut down on exit. :class:`ReleaseError` when it cannot start."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import ensure_event_loop, run_sync

    km, kc = AsyncKernelManager(kernel_name="python3"), None
    ensure_event_loop().set_exception_handler(_dead_kernel_said)  # the loop run_sync runs
    try:
        try:
            run_sync(km.start_kernel)(cwd=str(cwd), extra_arguments=KERNEL_ARGUMENTS)
            kc = km.client()
            kc.start_channels()
            run_sync(kc.wait_for_ready)(timeout=60)
            kc.allow_stdin = False
        except Exception as exc:  # no kernelspec, a kernel that dies at start, …
            raise ReleaseError(
                "could not start the notebooks' python3 kernel: "
                f"{type(exc).__name__}: {_clean(str(exc))}"
            ) from None
        yield km, kc
    finally:
        # a task an interruption left pending (a reset between two notebooks) is cancelled, so
        # that the shutdown below, on the same loop, never resumes it on stopped channels
        for task in asyncio.all_tasks(ensure_event_loop()):
            task.cancel()
        if kc is not None:
            with contextlib.suppress(Exception):
                kc.stop_channels()
        with contextlib.suppress(Exception):  # a kernel that already died
            run_sync(km.shutdown_kernel)(now=True)


def reset_namespace(kernel: tuple) -> None:
    """Empty the kernel's user namespace (IPython's reset: modules stay loaded, execution counts
    start again at 1). :class:`ReleaseError` when the kernel died or the reset failed."""
    from jupyter_core.utils import run_sync

    _, kc = kernel
    try:
        reply = run_sync(kc.execute_interactive)(
            "get_ipython().reset(new_session=True)",
            store_history=False,
            timeout=60,
            output_hook=lambda msg: None,
        )
    except Exception as exc:  # the kernel died between two notebooks, …
        raise ReleaseError(
            "could not reset the notebooks' kernel between two notebooks: "
            f"{type(exc).__name__}: {_clean(str(exc))}"
        ) from None
    if reply["content"].get("status") != "ok":
        raise ReleaseError(f"kernel namespace reset failed: {reply['content'].get('ename', '?')}")


def _kernel_engine() -> str:
    """Register papermill's nbclient engine running a notebook on :func:`release_kernel`'s ready
    client (given only the kernel, nbclient would make a client per notebook and leave it
    running); return its name."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines

    class KernelEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, kernel=None, **kwargs):
            km, kc = kernel
            client = PapermillNotebookClient(nb_man, km=km, kernel_name=kernel_name)
            client.kc = kc  # ready: nbclient neither makes nor closes a client it is given
            return client.execute()

    papermill_engines.register("searchgen-kernel", KernelEngine)
    return "searchgen-kernel"


def execute_notebook(src: Path, dest: Path, parameters: dict, root: Path, kernel: tuple) -> None:
    """Run one notebook with papermill on the running ``kernel``, check and normalise it, write
    it to ``dest`` once. Raises :class:`ReleaseError` naming the notebook and cell."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    try:
        nb = papermill.execute_notebook(
            str(src),
            str(dest),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(root),
            progress_bar=False,
            log_output=False,
            engine_name=_kernel_engine(),
            kernel=kernel,
            request_save_on_cell_execute=False,  # written once below, not after every cell
        )
    except PapermillExecutionError as exc:
        raise ReleaseError(
            f"notebook {src.name}: cell {exc.cell_index} (execution "
            f"{exc.exec_count}) raised {exc.ename}: {_clean(exc.evalue)}"
        ) from None
    except Exception as exc:  # kernel death, timeout, …
        raise ReleaseError(
            f"notebook {src.name}: could not be executed: {type(exc).__name__}: {exc}"
        ) from None
    check_executed(nb, src.name)
    nbformat.write(normalize(nb, root), dest)


@contextlib.contextmanager
def environ(values: dict[str, str]):
    """``os.environ`` with ``values`` set inside the block and put back as it was after."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_notebooks(
    root: Path, out: Path, work: Path, params: dict, log, after: dict | None = None
) -> dict[str, float]:
    """Run ``root/notebooks/NN_*.ipynb`` in order into ``work/`` :data:`NOTEBOOKS` on one kernel
    emptied between them, in ``out`` (``$SEARCHGEN_ROOT``; ``$SEARCHGEN_PROJECT``: ``root``), with
    the work folder's IPython folder and the thumbnail cache ``out/build/thumbs``; ``after``:
    notebook name → a function called once that notebook has run (it must not wait for work it
    starts). Return each notebook's seconds."""
    sources = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    timings: dict[str, float] = {}
    if not sources:
        raise ReleaseError(f"no notebooks found in {root / 'notebooks'}")
    env = {
        WORK_ROOT_ENV: str(out),
        PROJECT_ENV: str(root),
        "IPYTHONDIR": str(work / "ipython"),
        CACHE_ENV: str(out / THUMB_CACHE),
    }
    with (
        environ(env),
        step("release, notebooks"),
        kernel_stderr_to(work / "kernels.log"),
        release_kernel(out) as kernel,
    ):
        for src in sources:
            t = time.perf_counter()
            log(f"running {src.name} …")
            if timings:
                reset_namespace(kernel)
            execute_notebook(src, work / NOTEBOOKS / src.name, params, out, kernel)
            timings[src.name] = time.perf_counter() - t
            if start := (after or {}).get(src.name):
                start()
    return timings
