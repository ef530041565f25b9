"""``searchgen-nb release``: notebooks through papermill, book through Jupyter Book, then publish.

Flow: the output root is checked first (:func:`check_output_root`: nothing there is replaced
that the release did not make); the numbered notebooks in ``notebooks/`` run in order, each in
a kernel of its own, with the parameters ``release_config`` and ``staging``; each executed
notebook is checked (no error output, every code cell ran) and normalised (no timestamps,
random ids or absolute paths); the book is built from a staged copy of the book sources and
checked to load nothing from the web; only when everything succeeded are ``public/data/``,
``_build/html/`` and ``book/notebooks/`` published, together, as one version
(:func:`searchgen_nb.publish.publish`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import nbformat
import yaml

from searchgen_nb.artifacts import source_date_epoch
from searchgen_nb.book.downloads import FOLDER as DOWNLOADS
from searchgen_nb.book.downloads import write_downloads
from searchgen_nb.config import PROJECT_ENV, WORK_ROOT_ENV, find_config, load_config, project_root
from searchgen_nb.errors import ReleaseError, ReleaseInterrupted
from searchgen_nb.pipeline import inputs
from searchgen_nb.publish import (
    MARKER, RELEASES, current_version, describe, mark, marked, publication_problems, publish,
    release_lock, step,
)
from searchgen_nb.untrusted import excerpt

BUILD = "build/release"  # work folder, relative to the output root
STAGING = f"{BUILD}/data"  # where the notebooks write the artifacts
NOTEBOOKS = "src/book/notebooks"  # the executed notebooks, relative to the work folder
BOOK_SOURCES = ("_config.yml", "_toc.yml", "book")
#: Print style sheet of a synthetic demo's book: the marking in every printed page's margin.
DEMO_PRINT_CSS = "searchgen-demo-print.css"
#: Staged folder whose contents Sphinx copies to the book's root (``html_extra_path``).
EXTRA = "book/extra"
VOLATILE_CELL_METADATA = ("execution", "papermill", "collapsed", "scrolled", "ExecuteTime")
#: What a built page, style sheet or script would load from the web (an attribute, ``url()`` or
#: ``@import`` naming an ``http(s)://`` or ``//`` URL); an ``<a …>`` tag, a link a reader may
#: follow, is matched whole so that nothing inside it counts.
EXTERNAL_URL = re.compile(
    r"""<a\s[^>]*>
    | (?P<load>(?:\b(?:src|href|action|poster|data)\s*=\s*["']?\s* | url\(\s*["']?
                | @import\s+["']?)(?:https?:)?//)""", re.I | re.X)


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
    rel = Path(os.path.relpath(config_path, out)).as_posix()
    return {"release_config": rel, "staging": STAGING}


def default_project() -> Path:
    """The folder with ``notebooks/``, ``book/``, ``_config.yml`` and ``_toc.yml``: the checkout
    this package runs from (editable install), else the current directory when it is one.
    Raises :class:`ReleaseError` saying to pass ``--project`` otherwise (a non-editable install
    carries no notebooks, and nothing is ever written into site-packages)."""
    for candidate in (project_root(), Path.cwd()):
        if all((candidate / n).exists() for n in ("notebooks", "book", *BOOK_SOURCES[:2])):
            return candidate.resolve()
    raise ReleaseError(
        "no project folder: give --project DIR, the folder holding notebooks/, book/, "
        "_config.yml and _toc.yml (a clone of searchgen-nb); the installed package does not "
        "carry them"
    )


def check_executed(nb: nbformat.NotebookNode, name: str) -> None:
    """Raise :class:`ReleaseError` when an executed notebook holds an error output or stopped
    early."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                raise ReleaseError(f"notebook {name}: cell {i} raised {out.get('ename')}: "
                                   f"{_clean(out.get('evalue', ''))}")
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
    nb.metadata = nbformat.from_dict({
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "papermill": {"parameters": params},
    })
    prefixes = sorted({str(p) + os.sep for p in (root, project_root(), Path(sys.prefix))},
                      key=len, reverse=True)
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


@contextlib.contextmanager
def release_kernel(cwd: Path):
    """One ``python3`` kernel (of this environment, started in ``cwd``) for all of a release's
    notebooks; yields its kernel manager and shuts it down on exit. A kernel of its own per
    notebook would start Python and import pandas, altair and the book package ten times, which
    made a demo release almost twice as long. Raises :class:`ReleaseError` when it cannot start."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync

    km = AsyncKernelManager(kernel_name="python3")
    try:
        run_sync(km.start_kernel)(cwd=str(cwd), extra_arguments=["--HistoryManager.enabled=False"])
    except Exception as exc:  # noqa: BLE001 - no kernelspec, a kernel that dies at start, …
        raise ReleaseError("could not start the notebooks' python3 kernel: "
                           f"{type(exc).__name__}: {_clean(str(exc))}") from None
    try:
        yield km
    finally:
        with contextlib.suppress(Exception):  # a kernel that already died
            run_sync(km.shutdown_kernel)(now=True)


def reset_namespace(km) -> None:
    """Empty the shared kernel's user namespace (IPython's own reset: imported modules stay
    loaded, execution counts start again at 1): the next notebook starts as in a new kernel.
    Raises :class:`ReleaseError` when the kernel died or the reset failed."""
    kc = km.blocking_client()
    kc.start_channels()
    try:
        reply = kc.execute_interactive("get_ipython().reset(new_session=True)", store_history=False,
                                       timeout=60, output_hook=lambda msg: None)
    except Exception as exc:  # noqa: BLE001 - the kernel died between two notebooks, …
        raise ReleaseError("could not reset the notebooks' kernel between two notebooks: "
                           f"{type(exc).__name__}: {_clean(str(exc))}") from None
    finally:
        kc.stop_channels()
    if reply["content"].get("status") != "ok":
        raise ReleaseError(f"kernel namespace reset failed: {reply['content'].get('ename', '?')}")


def execute_notebook(src: Path, dest: Path, parameters: dict, root: Path, km=None) -> None:
    """Run one notebook with papermill (in the running kernel ``km`` of :func:`release_kernel`,
    else in a new ``python3`` kernel of this environment), check and normalise it, write it to
    ``dest`` once. Raises :class:`ReleaseError` naming the notebook and cell."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    try:
        nb = papermill.execute_notebook(
            str(src), str(dest), parameters=parameters, kernel_name="python3", cwd=str(root),
            progress_bar=False, log_output=False, km=km,
            request_save_on_cell_execute=False,  # written once below, not after every cell
        )
    except PapermillExecutionError as exc:
        raise ReleaseError(f"notebook {src.name}: cell {exc.cell_index} (execution "
                           f"{exc.exec_count}) raised {exc.ename}: {_clean(exc.evalue)}") from None
    except Exception as exc:  # noqa: BLE001 - kernel death, timeout, …
        raise ReleaseError(f"notebook {src.name}: could not be executed: "
                           f"{type(exc).__name__}: {exc}") from None
    check_executed(nb, src.name)
    nbformat.write(normalize(nb, root), dest)


def run_notebooks(root: Path, out: Path, config_path: Path, log) -> dict[str, float]:
    """Run the numbered notebooks of the project ``root`` in order into the work folder, in one
    kernel emptied between them; return each one's seconds. The kernel runs in ``out`` and
    takes relative parameters from it (``$SEARCHGEN_ROOT``), the commit of the notebooks from
    ``root`` (``$SEARCHGEN_PROJECT``); its IPython folder is the work folder's, not the user's,
    and it keeps no history."""
    sources, work = notebook_sources(root), out / BUILD
    if not sources:
        raise ReleaseError(f"no notebooks found in {root / 'notebooks'}")
    params, timings = release_parameters(config_path, out), {}
    env = {WORK_ROOT_ENV: str(out), PROJECT_ENV: str(root), "IPYTHONDIR": str(work / "ipython")}
    with (mock.patch.dict(os.environ, env), step("release, notebooks"),
          kernel_stderr_to(work / "kernels.log"), release_kernel(out) as km):
        for src in sources:
            t = time.perf_counter()
            log(f"running {src.name} …")
            if timings:
                reset_namespace(km)
            execute_notebook(src, work / NOTEBOOKS / src.name, params, out, km)
            timings[src.name] = time.perf_counter() - t
    return timings


def stage_book_sources(root: Path, dest: Path, demo: bool) -> None:
    """Copy ``_config.yml``, ``_toc.yml`` and ``book/`` into ``dest``; point Sphinx's
    ``html_extra_path`` at :data:`EXTRA` (the downloads); add the demo banner when needed."""
    for name in BOOK_SOURCES:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("notebooks", "vendor", ".*"))
        else:
            shutil.copy2(src, dest / name)
    cfg = yaml.safe_load((dest / "_config.yml").read_text(encoding="utf-8"))
    sphinx = cfg.setdefault("sphinx", {}).setdefault("config", {})
    # the downloads (book.downloads): book/extra/downloads/ lands in _build/html/downloads/
    sphinx["html_extra_path"] = [*sphinx.get("html_extra_path", []), EXTRA]
    if demo:
        html = sphinx.setdefault("html_theme_options", {})  # keeps the file's options
        html["announcement"] = ("Synthetic demo data: generated by searchgen_nb.demo, "
                                "not real SearchGen-Bench results.")
        # printed, every page carries the marking too (a page-margin box, not only page 1's banner)
        sphinx["html_css_files"] = [*sphinx.get("html_css_files", []), DEMO_PRINT_CSS]
        (dest / "book" / "vendor").mkdir(parents=True, exist_ok=True)
        (dest / "book" / "vendor" / DEMO_PRINT_CSS).write_text(
            '@page { @top-center { content: "Synthetic demo data \\2014  not real '
            'SearchGen-Bench results"; font: 9pt sans-serif; color: #7a3d00; } }\n',
            encoding="utf-8")
    (dest / "_config.yml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")


def external_references(html_dir: Path) -> list[str]:
    """``file: snippet`` for every URL a built page, style sheet or script would load from the
    web (:data:`EXTERNAL_URL`)."""
    found = []
    for path in sorted(html_dir.rglob("*")):
        if path.suffix in (".html", ".css", ".js") and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{path.relative_to(html_dir)}: {text[m.start():m.end() + 40]!r}"
                      for m in EXTERNAL_URL.finditer(text) if m["load"]]
    return found


def check_offline(html_dir: Path) -> None:
    """Raise :class:`ReleaseError` naming what the built book would load from the web (it must
    open offline: data contract, § The book)."""
    leaks = external_references(html_dir)
    if leaks:
        raise ReleaseError("book references external URLs (it must open offline):\n  "
                           + "\n  ".join(leaks[:20]))


def build_book(src: Path) -> Path:
    """Run Jupyter Book 1 on the staged sources (warnings are errors); return the html folder."""
    # jupyter-book's own entry point, run by this interpreter: no dependence on PATH or bin/
    launcher = ("import sys; from jupyter_book.cli.main import main; "
                "sys.argv[0] = 'jupyter-book'; sys.exit(main())")
    cmd = [sys.executable, "-c", launcher, "build", str(src), "-W", "-n", "--keep-going", "--quiet"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=src)
    except OSError as exc:
        raise ReleaseError(f"book build could not start: {exc}") from None
    if proc.returncode != 0:
        lines = (proc.stdout + proc.stderr).strip().splitlines()[-25:]
        tail = "\n".join(excerpt(line, 300) for line in lines)
        raise ReleaseError(f"book build failed (jupyter-book exit {proc.returncode}):\n{tail}")
    html = src / "_build" / "html"
    # Sphinx's incremental-build record: a hash of the configuration, which holds the absolute
    # paths of this build; not part of the book (two checkouts would publish different bytes)
    (html / ".buildinfo").unlink(missing_ok=True)
    return html


def make_book(root: Path, work: Path, demo: bool, log) -> Path:
    """Stage the book sources, vendor assets and downloads in the work folder, build the book
    and check that it loads nothing from the web; return its html folder."""
    from searchgen_nb.book import assets

    with step("release, book sources"):
        stage_book_sources(root, work / "src", demo)
        assets.write_vendor_assets(work / "src" / "book" / "vendor")
        write_downloads(work / "data", work / "src" / EXTRA / DOWNLOADS)
    log("building the book …")
    with step("release, book build"):
        html = build_book(work / "src")
    check_offline(html)
    return html


def run_release(config: str | os.PathLike, log=print, output_root: str | os.PathLike | None = None,
                project: str | os.PathLike | None = None) -> ReleaseOutcome:
    """Run the whole release for ``config``; publish only when every step succeeded.

    Notebooks and book sources come from ``project`` (default :func:`default_project`).
    Publishes ``public/data/``, ``_build/html/`` and ``book/notebooks/`` below
    ``output_root`` (default: the project folder; the work folder is ``build/release/`` there).
    Raises :class:`ReleaseError` (or the data layer's errors) naming the failed step; then
    the three published folders are exactly as before.
    """
    root = Path(project).resolve() if project else default_project()
    if not (root / "notebooks").is_dir():
        raise ReleaseError(f"project folder {root} has no notebooks/ (give --project the "
                           "folder holding notebooks/ and book/)")
    out = Path(output_root).resolve() if output_root else root  # checked below, before any change
    t0 = time.perf_counter()
    config_path = find_config(config)
    cfg = load_config(config_path)  # fail fast with the config's own message
    source_date_epoch()  # a bad SOURCE_DATE_EPOCH stops here, naming it
    if not cfg.dataset_path.exists():
        hint = (" (make the demo first: `make demo` or `searchgen-nb demo --out data/demo`)"
                if cfg.data_origin == "synthetic-demo" else "")
        raise ReleaseError(f"config {config_path.name}: dataset {cfg.dataset_path} "
                           f"does not exist{hint}")
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
    from searchgen_nb.book.views import Release

    work = out / BUILD
    with step("release, work folder"):
        fresh_work_folder(work)
        (work / NOTEBOOKS).mkdir(parents=True)
    timings = run_notebooks(root, out, config_path, log)
    release = Release(work / "data")
    if not (release.validation_report or {}).get("passed"):
        raise ReleaseError("validation report missing or failed: "
                           "the validate notebook did not pass the release")
    t = time.perf_counter()
    html = make_book(root, work, release.is_demo, log)
    timings["book"] = time.perf_counter() - t
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    _publish(out, {"public/data": work / "data", "_build/html": html,
                   "book/notebooks": work / NOTEBOOKS}, f"release-{stamp}-{os.getpid()}", log)
    timings["total"] = time.perf_counter() - t0
    notebooks = [out / "book" / "notebooks" / name for name in timings if name.endswith(".ipynb")]
    return ReleaseOutcome(out / "public" / "data", out / "_build" / "html", notebooks, timings)


def _publish(out: Path, sources: dict[str, Path], version: str, log) -> None:
    """Publish the three folders as one version, shown by one atomic link switch; an
    interruption says whether it was published."""
    before = current_version(out)
    try:
        with step("release, publish"):
            publish(out, sources, version, log)
    except KeyboardInterrupt:
        if current_version(out) == version:
            raise ReleaseInterrupted(f"interrupted after the release was published ({version}); "
                                     f"older versions may remain in {out / RELEASES}") from None
        raise ReleaseInterrupted(f"interrupted while publishing: nothing was published, {out} "
                                 f"still shows {before or 'no release'}") from None
