"""``searchgen-nb release``: notebooks through papermill, book through Jupyter Book, then publish.

Flow: the output root is checked first (:func:`check_output_root`: nothing there is replaced
that the release did not make); the numbered notebooks in ``notebooks/`` run in order with the
parameters ``release_config`` and ``staging``, each checked and normalised
(:mod:`searchgen_nb.book.notebooks`); the book is built from a staged copy of the book sources
and checked to load nothing from the web; only when everything succeeded are
``public/data/``, ``_build/html/`` and ``book/notebooks/`` published, together, as one version
(:func:`searchgen_nb.publish.publish`).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from searchgen_nb.artifacts import source_date_epoch
from searchgen_nb.book.downloads import FOLDER as DOWNLOADS
from searchgen_nb.book.downloads import write_downloads
from searchgen_nb.book.cards import FOLDER as CARD_DATA
from searchgen_nb.book.cards import write_card_assets
from searchgen_nb.book.notebooks import NOTEBOOKS, run_notebooks
from searchgen_nb.book.sphinx_ext import check_offline
from searchgen_nb.config import find_config, load_config, project_root
from searchgen_nb.errors import ReleaseError, ReleaseInterrupted
from searchgen_nb.pipeline import inputs
from searchgen_nb.publish import (
    MARKER, RELEASES, current_version, describe, mark, marked, publication_problems, publish,
    release_lock, step,
)
from searchgen_nb.untrusted import excerpt

BUILD = "build/release"  # work folder, relative to the output root
STAGING = f"{BUILD}/data"  # where the notebooks write the artifacts
BOOK_SOURCES = ("_config.yml", "_toc.yml", "book")
#: Print style sheet of a synthetic demo's book: the marking in every printed page's margin.
DEMO_PRINT_CSS = "searchgen-demo-print.css"
#: The change summary published beside the artifacts (:func:`write_change_summary`).
CHANGES = "CHANGES.md"
#: Staged folder whose contents Sphinx copies to the book's root (``html_extra_path``).
EXTRA = "book/extra"


@dataclass
class ReleaseOutcome:
    """Where things landed and how long each step took (seconds)."""

    public_data: Path
    html: Path
    notebooks: list[Path]
    timings: dict[str, float] = field(default_factory=dict)


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
        write_card_assets(work / "data", work / "src" / EXTRA / CARD_DATA)
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
        return _run_locked(root, out, config_path, log, t0, inputs(cfg))


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


def _run_locked(root: Path, out: Path, config_path: Path, log, t0: float,
                ins: dict[str, Path]) -> ReleaseOutcome:
    from searchgen_nb.book.views import Release

    work = out / BUILD
    with step("release, work folder"):
        fresh_work_folder(work)
        (work / NOTEBOOKS).mkdir(parents=True)
    timings = run_notebooks(root, out, work, release_parameters(config_path, out), log)
    release = Release(work / "data")
    if not (release.validation_report or {}).get("passed"):
        raise ReleaseError("validation report missing or failed: "
                           "the validate notebook did not pass the release")
    with step("release, change summary"):
        write_change_summary(release)
    t = time.perf_counter()
    html = make_book(root, work, release.is_demo, log)
    timings["book"] = time.perf_counter() - t
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    _publish(out, {"public/data": work / "data", "_build/html": html,
                   "book/notebooks": work / NOTEBOOKS}, f"release-{stamp}-{os.getpid()}", log, ins)
    timings["total"] = time.perf_counter() - t0
    notebooks = [out / "book" / "notebooks" / name for name in timings if name.endswith(".ipynb")]
    return ReleaseOutcome(out / "public" / "data", out / "_build" / "html", notebooks, timings)


def write_change_summary(release) -> None:
    """``CHANGES.md`` beside the staged artifacts: the Markdown of ``searchgen-nb diff`` for
    this release's ``changes.json`` (the first-release sentence without a previous release),
    published with them for a pull request to carry (data contract, § Changes between
    releases)."""
    from searchgen_nb.changes import first_release
    from searchgen_nb.changes_markdown import markdown

    text = markdown(release.changes or first_release(), release.names, policies=release.policies)
    (release.folder / CHANGES).write_text(text, encoding="utf-8", newline="\n")


def _publish(out: Path, sources: dict[str, Path], version: str, log,
             ins: dict[str, Path]) -> None:
    """Publish the three folders as one version, shown by one atomic link switch (a version
    holding one of the inputs ``ins`` is kept); an interruption says whether it was published."""
    before = current_version(out)
    try:
        with step("release, publish"):
            publish(out, sources, version, log, ins)
    except KeyboardInterrupt:
        if current_version(out) == version:
            raise ReleaseInterrupted(f"interrupted after the release was published ({version}); "
                                     f"older versions may remain in {out / RELEASES}") from None
        raise ReleaseInterrupted(f"interrupted while publishing: nothing was published, {out} "
                                 f"still shows {before or 'no release'}") from None
