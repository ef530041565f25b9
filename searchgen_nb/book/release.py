"""``searchgen-nb release``: notebooks through papermill, book through Jupyter Book, then publish.

Flow: the output root is checked first (:func:`check_output_root`: nothing there is replaced
that the release did not make); the numbered notebooks in ``notebooks/`` run in order with the
parameters ``release_config`` and ``staging``; each executed notebook is checked (no error
output, every code cell ran) and normalised (no timestamps, random ids or absolute paths); the
book is built from a staged copy of the book sources; only when everything succeeded are
``public/data/``, ``_build/html/`` and ``book/notebooks/`` published, together, as one version
(:func:`searchgen_nb.publish.publish`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from searchgen_nb.artifacts import source_date_epoch
from searchgen_nb.config import PROJECT_ENV, WORK_ROOT_ENV, find_config, load_config, project_root
from searchgen_nb.book.downloads import FOLDER as DOWNLOADS
from searchgen_nb.book.downloads import write_downloads
from searchgen_nb.errors import ReleaseError, ReleaseInterrupted
from searchgen_nb.pipeline import inputs
from searchgen_nb.publish import (
    MARKER, RELEASES, current_version, describe, mark, marked, publication_problems, publish,
    release_lock, step,
)
from searchgen_nb.untrusted import excerpt

BUILD = "build/release"  # work folder, relative to the project root
STAGING = f"{BUILD}/data"  # where the notebooks write the artifacts
VENDOR_CACHE = "build/cache"  # the Vega bundle between releases (assets.vega_bundle), relative to the output root
BOOK_SOURCES = ("_config.yml", "_toc.yml", "book")
#: Print style sheet of a synthetic demo's book: the marking in every printed page's margin.
DEMO_PRINT_CSS = "searchgen-demo-print.css"
#: Staged folder whose contents Sphinx copies to the book's root (``html_extra_path``).
EXTRA = "book/extra"
VOLATILE_CELL_METADATA = ("execution", "papermill", "collapsed", "scrolled", "ExecuteTime")
EXTERNAL_URL = re.compile(r"""(?:\b(?:src|href|action|poster|data)\s*=\s*["']?\s*|url\(\s*["']?|@import\s+["']?)(?:https?:)?//""", re.I)


@dataclass
class ReleaseOutcome:
    """Where things landed and how long each step took (seconds)."""

    public_data: Path
    html: Path
    notebooks: list[Path]
    timings: dict[str, float] = field(default_factory=dict)


def notebook_sources(root: Path | None = None) -> list[Path]:
    """The numbered source notebooks, in run order (``notebooks/NN_name.ipynb``)."""
    root = root or project_root()
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def release_parameters(config_path: Path, out: Path) -> dict:
    """Notebook parameters with no machine path: ``staging`` relative to the output root
    ``out`` (the kernels' work root, ``$SEARCHGEN_ROOT``); ``release_config`` relative to
    ``out`` when the config lies below it, else to the project root when below that (both
    are searched by :func:`config.find_config`), else the relative path from ``out``."""
    config_path = config_path.resolve()
    for base in (out, project_root()):  # the folders find_config searches
        if config_path.is_relative_to(base):
            rel = config_path.relative_to(base).as_posix()
            if base == out or not (out / rel).exists():
                return {"release_config": rel, "staging": STAGING}
    return {"release_config": Path(os.path.relpath(config_path, out)).as_posix(), "staging": STAGING}


def default_project() -> Path:
    """The folder with ``notebooks/``, ``book/``, ``_config.yml`` and ``_toc.yml``: the checkout
    this package runs from (editable install), else the current directory when it is one.
    Raises :class:`ReleaseError` saying to pass ``--project`` otherwise (a non-editable install
    carries no notebooks, and nothing is ever written into site-packages)."""
    for candidate in (project_root(), Path.cwd()):
        if all((candidate / n).exists() for n in ("notebooks", "book", "_config.yml", "_toc.yml")):
            return candidate.resolve()
    raise ReleaseError(
        "no project folder: give --project DIR, the folder holding notebooks/, book/, _config.yml and _toc.yml "
        "(a clone of searchgen-nb); the installed package does not carry them"
    )


def check_executed(nb: nbformat.NotebookNode, name: str) -> None:
    """Raise :class:`ReleaseError` when an executed notebook holds an error output or stopped early."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                raise ReleaseError(f"notebook {name}: cell {i} raised {out.get('ename')}: {_clean(out.get('evalue', ''))}")
        if cell.source.strip() and cell.get("execution_count") is None:
            raise ReleaseError(f"notebook {name}: cell {i} never ran (the notebook exited early)")


def _clean(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def normalize(nb: nbformat.NotebookNode, root: Path) -> nbformat.NotebookNode:
    """Strip what changes run to run: timestamps, durations, random ids, absolute paths.

    Keeps ``metadata.papermill.parameters`` (reviewers see what the run was given) and
    hides the parameter cells' code in the book.
    """
    params = nb.metadata.get("papermill", {}).get("parameters", {})
    nb.metadata = nbformat.from_dict(
        {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "papermill": {"parameters": params},
        }
    )
    prefixes = sorted({str(root) + os.sep, str(project_root()) + os.sep, str(Path(sys.prefix)) + os.sep}, key=len, reverse=True)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        tags = cell.metadata.get("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            cell.metadata["tags"] = [*tags, "remove-cell"]
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                text = out["text"]
                for p in prefixes:
                    text = text.replace(p, "")
                out["text"] = text
    return nb


@contextlib.contextmanager
def kernel_stderr_to(log_path: Path):
    """Send what kernels write to stderr (transport warnings, shutdown noise) to a log file.

    Kernels inherit file descriptor 2, so it is redirected for the duration; the release's
    own messages are written after it is restored. Failures still name the notebook and
    cell; the log keeps the kernels' raw output for debugging.
    """
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


@dataclass
class SharedKernel:
    """The release's one running kernel (``km``) and its one ready client (``kc``)."""

    km: object
    kc: object


#: The release kernel keeps no IPython history: the notebooks' cells are not written into the
#: user's ``~/.ipython`` history database (a release writes below its output root only), and
#: the reset between notebooks does not start a new history session in it.
KERNEL_ARGUMENTS = ["--HistoryManager.enabled=False"]


@contextlib.contextmanager
def release_kernel(cwd: Path):
    """One ``python3`` kernel (of this environment) and one client for all of a release's
    notebooks; yields a :class:`SharedKernel`.

    Starting a kernel and importing pandas, altair and the book package costs about a second
    per notebook; a release runs ten. Making a client ready costs another 0.2 s each time
    (``wait_for_ready`` drains IOPub with a 0.2 s timeout), so the client is made once too and
    every notebook runs on it (:class:`SharedKernelEngine`). The kernel starts in ``cwd`` and
    is shut down on exit. Each notebook still starts from an empty namespace
    (:func:`reset_namespace`), so a notebook can only use what it imports and computes itself,
    as when it is run alone. Raises :class:`ReleaseError` when the kernel cannot start."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync

    km = AsyncKernelManager(kernel_name="python3")
    kc = None
    try:
        run_sync(km.start_kernel)(cwd=str(cwd), extra_arguments=KERNEL_ARGUMENTS)
        kc = km.client()
        kc.start_channels()
        run_sync(kc.wait_for_ready)(timeout=60)
        kc.allow_stdin = False
    except Exception as exc:  # noqa: BLE001 - no kernelspec, a kernel that dies at start, …
        _stop(km, kc)
        raise ReleaseError(f"could not start the notebooks' python3 kernel: {type(exc).__name__}: {_clean(str(exc))}") from None
    try:
        yield SharedKernel(km, kc)
    finally:
        _stop(km, kc)


def _stop(km, kc) -> None:
    """Close the client's channels (if any) and shut the kernel down; each step runs even if
    the other fails (a kernel that already died)."""
    from jupyter_core.utils import run_sync

    if kc is not None:
        with contextlib.suppress(Exception):
            kc.stop_channels()
    with contextlib.suppress(Exception):
        run_sync(km.shutdown_kernel)(now=True)


#: IPython's own reset: empty user namespace (imported modules stay loaded), a new history
#: session, execution count back to 1. The reset ends with a full garbage collection; what
#: survives it (the loaded modules, IPython's own objects) is then moved out of the collector's
#: sight (``gc.freeze``), so the next reset, and the collections while the next notebook runs,
#: scan only what that notebook made: a demo release's nine resets 0.76 → 0.21 s, its notebooks
#: 6.6 → 6.0 s. Nothing is bound in the namespace; a frozen object is still freed when its last
#: reference goes, only a cycle among frozen objects would stay.
RESET_CODE = "get_ipython().reset(new_session=True); __import__('gc').freeze()"


def reset_namespace(kernel: SharedKernel) -> None:
    """Empty the shared kernel's user namespace (:data:`RESET_CODE`, not itself counted as an
    execution): the next notebook starts as in a new kernel, execution counts from 1.
    Raises :class:`ReleaseError` when the kernel died or the reset failed."""
    from jupyter_core.utils import run_sync

    try:
        reply = run_sync(kernel.kc.execute_interactive)(RESET_CODE, store_history=False, timeout=60, output_hook=lambda msg: None)
    except Exception as exc:  # noqa: BLE001 - the kernel died between two notebooks, …
        raise ReleaseError(f"could not reset the notebooks' kernel between two notebooks: {type(exc).__name__}: {_clean(str(exc))}") from None
    if reply["content"].get("status") != "ok":
        raise ReleaseError(f"kernel namespace reset failed: {reply['content'].get('ename', '?')}")


#: papermill's name of the engine of :func:`_shared_kernel_engine`.
SHARED_KERNEL_ENGINE = "searchgen-shared-kernel"


@functools.cache
def _shared_kernel_engine() -> None:
    """papermill's nbclient engine, running the notebook on a :class:`SharedKernel`'s ready
    client instead of making (and waiting for) a new client per notebook. Registered with
    papermill as :data:`SHARED_KERNEL_ENGINE` on first use (once per process)."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.log import logger

    class SharedKernelEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None, stderr_file=None,
                                     start_timeout=60, execution_timeout=None, shared_kernel=None, **kwargs):
            kwargs.pop("input_path", None)
            client = PapermillNotebookClient(
                nb_man, km=shared_kernel.km, kernel_name=kernel_name, log=logger, log_output=log_output,
                stdout_file=stdout_file, stderr_file=stderr_file, startup_timeout=start_timeout, timeout=execution_timeout, **kwargs,
            )
            client.kc = shared_kernel.kc  # ready: nbclient neither makes nor stops a client it is given
            return client.execute()

    papermill_engines.register(SHARED_KERNEL_ENGINE, SharedKernelEngine)


def execute_notebook(src: Path, dest: Path, parameters: dict, root: Path, kernel: SharedKernel | None = None) -> None:
    """Run one notebook with papermill (kernel ``python3`` of this environment started for it,
    or the running ``kernel`` of :func:`release_kernel`), check and normalise it, write it to
    ``dest`` once. Raises :class:`ReleaseError` naming the notebook and cell."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    engine = {}
    if kernel is not None:
        _shared_kernel_engine()
        engine = {"engine_name": SHARED_KERNEL_ENGINE, "shared_kernel": kernel}
    try:
        nb = papermill.execute_notebook(
            str(src), str(dest), parameters=parameters, kernel_name="python3", cwd=str(root), progress_bar=False, log_output=False,
            request_save_on_cell_execute=False,  # written once below, not after every cell
            **engine,
        )
    except PapermillExecutionError as exc:
        raise ReleaseError(f"notebook {src.name}: cell {exc.cell_index} (execution {exc.exec_count}) raised {exc.ename}: {_clean(exc.evalue)}") from None
    except Exception as exc:  # noqa: BLE001 - kernel death, timeout, …
        raise ReleaseError(f"notebook {src.name}: could not be executed: {type(exc).__name__}: {exc}") from None
    check_executed(nb, src.name)
    nbformat.write(normalize(nb, root), dest)


def stage_book_sources(root: Path, dest: Path, demo: bool) -> None:
    """Copy ``_config.yml``, ``_toc.yml`` and ``book/`` into ``dest``; point Sphinx's
    ``html_extra_path`` at :data:`EXTRA` (the downloads); add the demo banner when needed."""
    for name in BOOK_SOURCES:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("notebooks", "vendor", ".*"), dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest / name)
    cfg = yaml.safe_load((dest / "_config.yml").read_text(encoding="utf-8"))
    sphinx = cfg.setdefault("sphinx", {}).setdefault("config", {})
    # the downloads (searchgen_nb.book.downloads): book/extra/downloads/ lands in _build/html/downloads/
    sphinx["html_extra_path"] = [*sphinx.get("html_extra_path", []), EXTRA]
    if demo:
        html = sphinx.setdefault("html_theme_options", {})  # keeps the file's options
        html["announcement"] = (
            "Synthetic demo data: generated by searchgen_nb.demo, not real SearchGen-Bench results."
        )
        # printed, every page carries the marking too (a page-margin box, not only page 1's banner)
        sphinx["html_css_files"] = [*sphinx.get("html_css_files", []), DEMO_PRINT_CSS]
        (dest / "book" / "vendor").mkdir(parents=True, exist_ok=True)
        (dest / "book" / "vendor" / DEMO_PRINT_CSS).write_text(
            '@page { @top-center { content: "Synthetic demo data \\2014  not real SearchGen-Bench results"; '
            "font: 9pt sans-serif; color: #7a3d00; } }\n", encoding="utf-8")
    (dest / "_config.yml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")


#: What the text right before an external URL's ``//`` may consist of (the prefixes of
#: :data:`EXTERNAL_URL`: attribute names, spaces, quotes, ``=``, ``url(``, ``@import``, ``https:``),
#: with every word character, so that the pattern's ``\b`` sees the neighbour it sees in the
#: whole text.
_URL_PREFIX_RUN = re.compile(r"""[\w\s"'=(:@]*""")


def external_urls(text: str):
    """The matches of :data:`EXTERNAL_URL` in ``text``, the very ones ``finditer`` gives, found
    from each ``//``: a match ends with ``//`` and holds no ``/`` before it, so it lies in the run
    of :data:`_URL_PREFIX_RUN` characters before one (measured backwards on the reversed text).
    Scanning the 8.6 MB of a demo book 0.29 → 0.01 s: the pattern starts with alternatives that
    Python's engine tries at every position, and most positions are far from any ``//``."""
    reverse, end = text[::-1], len(text)
    slashes = text.find("//")
    while slashes != -1:
        # the run read backwards from ``//`` ends at reversed position e: it starts at end − e
        start = end - _URL_PREFIX_RUN.match(reverse, end - slashes).end()
        m = EXTERNAL_URL.search(text, start, slashes + 2)
        if m:
            yield m
        slashes = text.find("//", slashes + 2)


def external_references(html_dir: Path) -> list[str]:
    """``file: snippet`` for every external URL a built page or asset would load."""
    found = []
    for path in sorted(html_dir.rglob("*")):
        if path.suffix not in (".html", ".css", ".js") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in external_urls(text):
            if path.suffix == ".html" and _is_link_only(text, m.start()):
                continue
            found.append(f"{path.relative_to(html_dir)}: {text[m.start():m.end() + 40]!r}")
    return found


def _is_link_only(text: str, pos: int) -> bool:
    """An ``<a href=…>`` is a link a reader may follow, not something the page loads."""
    tag_start = text.rfind("<", 0, pos)
    return text[tag_start : tag_start + 3].lower() == "<a "


def build_book(src: Path) -> Path:
    """Run Jupyter Book 1 on the staged sources (warnings are errors); return the html folder."""
    # jupyter-book's own entry point, run by this interpreter: no dependence on PATH or bin/
    launcher = "import sys; from jupyter_book.cli.main import main; sys.argv[0] = 'jupyter-book'; sys.exit(main())"
    cmd = [sys.executable, "-c", launcher, "build", str(src), "-W", "-n", "--keep-going", "--quiet"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=src)
    except OSError as exc:
        raise ReleaseError(f"book build could not start: {exc}") from None
    if proc.returncode != 0:
        lines = (proc.stdout + proc.stderr).strip().splitlines()[-25:]
        tail = "\n".join(excerpt(line, 300) for line in lines)
        raise ReleaseError(f"book build failed (jupyter-book exit {proc.returncode}):\n{tail}")
    return src / "_build" / "html"


def run_release(config: str | os.PathLike, log=print, output_root: str | os.PathLike | None = None, project: str | os.PathLike | None = None) -> ReleaseOutcome:
    """Run the whole release for ``config``; publish only when every step succeeded.

    Notebooks and book sources come from ``project`` (default :func:`default_project`).
    Publishes ``public/data/``, ``_build/html/`` and ``book/notebooks/`` below
    ``output_root`` (default: the project folder; the work folder is ``build/release/`` there).
    Raises :class:`ReleaseError` (or the data layer's errors) naming the failed step; then
    the three published folders are exactly as before.
    """
    root = Path(project).resolve() if project else default_project()
    if not (root / "notebooks").is_dir():
        raise ReleaseError(f"project folder {root} has no notebooks/ (give --project the folder holding notebooks/ and book/)")
    out = Path(output_root).resolve() if output_root else root  # checked below, before any change
    t0 = time.perf_counter()
    config_path = find_config(config)
    cfg = load_config(config_path)  # fail fast with the config's own message
    source_date_epoch()  # a bad SOURCE_DATE_EPOCH stops here, naming it
    if not cfg.dataset_path.exists():
        hint = " (make the demo first: `make demo` or `searchgen-nb demo --out data/demo`)" if cfg.data_origin == "synthetic-demo" else ""
        raise ReleaseError(f"config {config_path.name}: dataset {cfg.dataset_path} does not exist{hint}")
    check_output_root(out, cfg)
    with release_lock(out, str(config_path.name)):
        return _run_locked(root, out, config_path, log, t0)


def output_root_problems(out: Path, cfg) -> list[str]:
    """What stops a release from writing below the output root ``out`` (resolved), before any
    change: the published paths (:func:`publish.publication_problems`); ``out`` being or lying
    inside the results or the previous release; the work folder ``build/release``, which a
    release empties, not being its own (marked) or holding an input."""
    problems = publication_problems(out)
    ins = inputs(cfg)
    for name in ("results_root", "previous_release"):
        if name in ins and out.is_relative_to(ins[name]):
            how = "is" if out == ins[name] else "lies inside"
            problems.append(f"{out} {how} the {name} {ins[name]}, which is never written")
    work = out / BUILD
    if os.path.lexists(work.parent) and not work.parent.is_dir():
        problems.append(f"{work.parent} is {describe(work.parent)}, not a folder")
    elif os.path.lexists(work) and not (marked(work) or describe(work) == "an empty folder"):
        problems.append(f"the work folder {work} is {describe(work)} without this tool's mark "
                        f"{MARKER} (a release empties it)")
    problems += [f"the {name} {path} lies inside the work folder {work}, which a release empties"
                 for name, path in ins.items() if path.is_relative_to(work)]
    return problems


def check_output_root(out: Path, cfg) -> None:
    """Raise :class:`ReleaseError` naming every problem of :func:`output_root_problems`."""
    problems = output_root_problems(out, cfg)
    if problems:
        raise ReleaseError(
            f"cannot release into {out}: " + "; ".join(problems[:6]) + ". A release replaces only "
            "what it made itself and never writes into its inputs or a published version: move "
            "what is there elsewhere (for instance `mv public/data public/data.old`) or give "
            "another --output-root; nothing was changed"
        )


def fresh_work_folder(work: Path) -> None:
    """Empty the work folder (checked by :func:`check_output_root`: absent, empty or marked)
    and mark it as this tool's."""
    if marked(work) or describe(work) == "an empty folder":
        shutil.rmtree(work)
    work.mkdir(parents=True)
    mark(work)


def _run_locked(root: Path, out: Path, config_path: Path, log, t0: float) -> ReleaseOutcome:
    from searchgen_nb.book import assets
    from searchgen_nb.book.views import Release

    timings: dict[str, float] = {}
    work = out / BUILD
    with step("release, work folder"):
        fresh_work_folder(work)
        (work / "src" / "book" / "notebooks").mkdir(parents=True)
    params = release_parameters(config_path, out)
    executed = []
    saved = {k: os.environ.get(k) for k in (WORK_ROOT_ENV, PROJECT_ENV)}
    os.environ[WORK_ROOT_ENV] = str(out)  # kernels take relative parameters from the output root
    os.environ[PROJECT_ENV] = str(root)  # … and the commit of the notebooks they run
    try:
        with (step("release, notebooks"), kernel_stderr_to(work / "kernels.log"),
              release_kernel(out) as kernel):
            for src in notebook_sources(root):
                t = time.perf_counter()
                dest = work / "src" / "book" / "notebooks" / src.name
                log(f"running {src.name} …")
                if executed:
                    reset_namespace(kernel)
                execute_notebook(src, dest, params, out, kernel=kernel)
                executed.append(dest)
                timings[src.name] = time.perf_counter() - t
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if not executed:
        raise ReleaseError(f"no notebooks found in {root / 'notebooks'}")
    release = Release(work / "data")
    if not (release.validation_report or {}).get("passed"):
        raise ReleaseError("validation report missing or failed: the validate notebook did not pass the release")
    t = time.perf_counter()
    with step("release, book sources"):
        stage_book_sources(root, work / "src", release.is_demo)
        assets.write_vendor_assets(work / "src" / "book" / "vendor", cache=out / VENDOR_CACHE)
        write_downloads(work / "data", work / "src" / EXTRA / DOWNLOADS)
    log("building the book …")
    with step("release, book build"):
        html = build_book(work / "src")
    # Sphinx's incremental-build record: a hash of the configuration, which holds the absolute
    # paths of this build; not part of the book (two checkouts would publish different bytes)
    (html / ".buildinfo").unlink(missing_ok=True)
    leaks = external_references(html)
    if leaks:
        raise ReleaseError("book references external URLs (it must open offline):\n  " + "\n  ".join(leaks[:20]))
    timings["book"] = time.perf_counter() - t
    # publish: the three folders as one version, shown by one atomic link switch
    version = "release-" + dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
    sources = {"public/data": work / "data", "_build/html": html, "book/notebooks": work / "src" / "book" / "notebooks"}
    before = current_version(out)
    try:
        with step("release, publish"):
            publish(out, sources, version, log)
    except KeyboardInterrupt:
        if current_version(out) == version:
            raise ReleaseInterrupted(f"interrupted after the release was published ({version}); older versions may remain in {out / RELEASES}") from None
        raise ReleaseInterrupted(f"interrupted while publishing: nothing was published, {out} still shows {before or 'no release'}") from None
    timings["total"] = time.perf_counter() - t0
    return ReleaseOutcome(out / "public" / "data", out / "_build" / "html", [out / "book" / "notebooks" / p.name for p in executed], timings)
