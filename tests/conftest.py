"""Shared test setup: markers, the session builds, and the order tests run in.

Markers (``pytest -m "not slow and not browser"`` is the fast loop, ``make test-fast``):

* ``slow`` — writes or reads the full synthetic demo (751 prompts × 13 models, ~18,800
  files) or runs a whole release (the notebooks through papermill and the book);
* ``browser`` — opens pages in headless Chromium (Debian ``chromium-headless-shell``, driven by playwright).

The expensive inputs — the demo, its release, the changed demo, the book tests' small release
(:data:`BUILDS`) — are each made once per run, across all pytest-xdist workers (``make test``
runs two), by whichever process needs them first: a test's session fixture or the background
builder started at collection (:func:`start_prebuild`), which makes them while the tests that
need none run first. They are read only: a test that changes one works on its own copy.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import shutil
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

sys.path.insert(0, str(Path(__file__).parent))

#: One BLAS thread in every process of the run (workers, kernels, subprocesses): two test
#: workers already fill the two cores, and OpenBLAS's extra threads only spin — a demo data run
#: takes the same 3.1 s with one thread and 30% less CPU. Set before numpy is loaded.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

#: Every chart a test builds — in this process and in the kernels of the releases the tests
#: run — is checked against the Vega-Lite schema (a plain release skips the check for speed;
#: searchgen_nb.book.charts.VALIDATE_ENV); except in the demo release, which draws the same kinds
#: of chart as the book tests' small release (every kind: forests, heatmaps and their relative
#: views, component bars, pairwise matrices, the Compare picker, coverage bars) with more data,
#: and where the check cost two CPU-seconds.
os.environ["SEARCHGEN_VALIDATE_CHARTS"] = "1"

#: ``SOURCE_DATE_EPOCH`` of every release a test makes (timestamps are then reproducible, and
#: two releases of the same inputs compare byte for byte).
TEST_EPOCH = "1780000000"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: writes or reads the full synthetic demo, or runs a whole release (notebooks + book)"
    )
    config.addinivalue_line("markers", "browser: opens pages in headless Chromium (Debian chromium-headless-shell + playwright)")


def check_marks(items) -> None:
    """Keep the fast loop fast: a test that uses the demo or a browser must say so."""
    unmarked = []
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & set(SLOW_FIXTURES) and item.get_closest_marker("slow") is None:
            unmarked.append(f"{item.nodeid} uses {', '.join(sorted(names & set(SLOW_FIXTURES)))} but is not marked slow")
        if "browser" in names and item.get_closest_marker("browser") is None:
            unmarked.append(f"{item.nodeid} uses the browser fixture but is not marked browser")
    if unmarked:
        raise pytest.UsageError("unmarked expensive tests:\n  " + "\n  ".join(unmarked))


#: The tests that run longest once their builds are ready (two workers, measured): the
#: non-editable install (8 s: pip, the installed demo and a release, in subprocesses), the demo
#: book's result pages in Chromium (4.5 s), the shuffled demo through ``data`` in another
#: process (3 s). Under pytest-xdist the first runs first of all: its worker waits for the
#: demo and the book tests' release (ready after ~8 s) while the other worker and the background
#: builder keep both cores busy — run at the end of its stage, it ran alone in the last 8 s of
#: the run, one core idle. The others run first in their stage, so that the run ends with short
#: tests on both workers.
LONG_TESTS = (
    "test_non_editable_install_releases_from_outside_the_checkout",
    "test_demo_book_in_browser",
    "test_byte_identical_under_shuffle_hashseed_and_cwd",
)


@pytest.hookimpl(trylast=True)  # after -m / -k deselected what will not run
def pytest_collection_modifyitems(session, config, items):
    """Order the tests by the build they wait for (none first, then in BUILDS order, where a
    build comes after those it makes first), the :data:`LONG_TESTS` first in their stage
    (otherwise as collected), and start the background builder for those builds. Under
    pytest-xdist the first of the LONG_TESTS comes first of all (a single process would only
    wait for its builds). Every xdist worker computes the same order, as xdist requires."""
    check_marks(items)
    order = list(BUILDS)
    stage = {
        id(item): max((order.index(FIXTURE_BUILD[f]) + 1 for f in getattr(item, "fixturenames", ()) if f in FIXTURE_BUILD), default=0)
        for item in items
    }
    first = LONG_TESTS[0] if os.environ.get("PYTEST_XDIST_WORKER") else None

    def key(item):
        name = getattr(item, "originalname", item.name)
        return (-1 if name == first else stage[id(item)], name not in LONG_TESTS)

    items.sort(key=key)  # stable: collection order otherwise
    needed = [order[s - 1] for s in sorted(set(stage.values()) - {0})]
    root = shared_root(config._tmp_path_factory)  # the tmp_path_factory fixture's object
    # the kernels the tests start by hand (papermill) keep their IPython files in the run's
    # temporary folder, not in the user's ~/.ipython (a release's own kernel uses its work folder)
    os.environ["IPYTHONDIR"] = str(root / "ipython")
    if needed and not config.option.collectonly and os.environ.get("SEARCHGEN_TEST_PREBUILD", "1") != "0":
        start_prebuild(root, needed)


def pytest_collection_finish(session):
    """Python's full garbage collections cost a test process 3 CPU-seconds a run (measured with
    ``gc.callbacks``: twenty to thirty in a worker, 0.1 s each, walking every object the imported
    libraries made). Once the tests are collected, what is alive is frozen (never walked again;
    later garbage is collected as before) and a full collection waits for 100 younger ones
    instead of 10: the workers' collections 3.1 → 1.2 CPU-s."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(*gc.get_threshold()[:2], 100)


def shared_root(tmp_path_factory) -> Path:
    """The temporary folder every pytest-xdist worker of this run sees (its own basetemp's
    parent under xdist; the basetemp itself in a plain run)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


# ---- the expensive session builds -------------------------------------------------------------
#
# Each is a folder ``<shared root>/<name>`` made once per run by whichever process gets there
# first — a test's fixture or the background builder (:func:`start_prebuild`) — under an
# exclusive lock; a ``<name>.done.pickle`` beside it holds the build's value. A process that
# dies while building leaves no ``done`` file: the next one to need it builds it again.


def _build_demo(root: Path, folder: Path) -> dict:
    from searchgen_nb.demo import write_demo

    return write_demo(folder / "release")


def _build_demo_release(root: Path, folder: Path) -> None:
    from searchgen_nb.book.release import run_release

    demo, _ = ensure_built(root, "demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
        mp.setenv("SEARCHGEN_VALIDATE_CHARTS", "0")  # the small release checks every kind (above)
        run_release(demo / "release" / "release.yml", log=lambda m: None, output_root=folder / "site")


def _build_demo_changed(root: Path, folder: Path) -> None:
    from searchgen_nb.config import load_config
    from searchgen_nb.demo import write_demo
    from searchgen_nb.pipeline import run_data

    demo_release, _ = ensure_built(root, "demo-release")
    write_demo(folder / "src", changed=True, previous=demo_release / "site" / "public" / "data")
    run_data(load_config(folder / "src" / "release.yml"), folder / "data", progress=False)


def _build_book(root: Path, folder: Path):
    from book_fixture import MODELS, PREVIOUS_RESULTS, PROMPTS, RESULTS
    from factory import make_release

    from searchgen_nb.book.release import run_release
    from searchgen_nb.config import load_config
    from searchgen_nb.pipeline import run_data

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", str(int(TEST_EPOCH) - 86400))
        prev = make_release(folder / "prev", PROMPTS, MODELS, PREVIOUS_RESULTS, scoring={"min_ranking_coverage": 0.5})
        run_data(load_config(prev), folder / "prev-data", progress=False)
        cfg = make_release(folder / "src", PROMPTS, MODELS, RESULTS, scoring={"min_ranking_coverage": 0.5}, previous_release="../prev-data")
        mp.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
        return cfg, run_release(cfg, log=lambda m: None, output_root=folder / "site")


#: name → build(root, folder); a build makes what it needs first with :func:`ensure_built`,
#: and comes after it here.
BUILDS = {
    "demo": _build_demo,
    "book": _build_book,
    "demo-release": _build_demo_release,
    "demo-changed": _build_demo_changed,
}
#: The session fixture that hands out each build (the fixtures read their build here).
FIXTURE_BUILD = {
    "demo_tree": "demo",
    "fixture_release": "book",
    "demo_release": "demo-release",
    "demo_data": "demo-release",
    "changed_data": "demo-changed",
}
#: Every fixture that makes or reads one of the builds; a test that uses one must be ``slow``.
SLOW_FIXTURES = tuple(FIXTURE_BUILD)


def ensure_built(root: Path, name: str) -> tuple[Path, object]:
    """``BUILDS[name]`` run once per test run, whatever the number of processes: the first to
    get here builds ``<root>/<name>`` under an exclusive lock (``flock``); the others wait for
    it and reuse the folder. Returns ``(folder, value)``."""
    return built_once_in(root, name, lambda folder: BUILDS[name](root, folder))


def built_once_in(root: Path, name: str, build) -> tuple[Path, object]:
    """``build(folder)`` once per run for ``<root>/<name>`` (see :func:`ensure_built`); ``build``
    returns a picklable value, kept beside the folder. Returns ``(folder, value)``."""
    folder, done = root / name, root / f"{name}.done.pickle"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            done.write_bytes(pickle.dumps(build(folder)))
        return folder, pickle.loads(done.read_bytes())


def built_once(tmp_path_factory, name: str, build) -> tuple[Path, object]:
    """:func:`built_once_in` the run's shared temporary folder."""
    return built_once_in(shared_root(tmp_path_factory), name, build)


# ---- the background builder -------------------------------------------------------------------
#
# While the tests that need no build run, one background process makes the builds the selected
# tests need (in BUILDS order, the longest chain first): the run then keeps both cores busy
# instead of waiting for a release at its first browser test. Tests are ordered to match:
# those without a build first, then by the last build they need. SEARCHGEN_TEST_PREBUILD=0
# turns the builder off (each build is then made by the first test that needs it).

_PREBUILD: dict = {}


def start_prebuild(root: Path, names: list[str]) -> None:
    """Start ``python conftest.py ROOT NAME…`` (its own process group, output in
    ``<root>/prebuild.log``) unless another process of this run already did."""
    import subprocess

    try:
        fd = os.open(root / "prebuild.started", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    log = open(root / "prebuild.log", "wb")
    _PREBUILD["proc"] = subprocess.Popen(
        [sys.executable, str(Path(__file__)), str(root), *names], stdout=log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True, cwd=Path(__file__).parent,
    )
    log.close()


# ---- the previous run's temporary files ------------------------------------------------------
#
# pytest keeps ``tmp_path_retention_count`` runs' temporary folders and removes the older ones at
# the end of a run: on the run's last, single-threaded second (the previous run's ~60,000 files,
# three demo trees among them: 0.8 s, while the workers exit). Its own cleanup is run here
# instead, in a thread of the controller at the start, while the workers start up and the cores
# are half idle; at the end it then finds nothing left to remove. The same rule, the same
# folders: those older than the kept ones, unless another live run holds their lock.

_CLEANUP: dict = {}


@pytest.hookimpl(trylast=True)  # after pytest-xdist made the run's folder for its workers
def pytest_sessionstart(session):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import threading

    from _pytest.pathlib import LOCK_TIMEOUT, cleanup_numbered_dir

    factory = session.config._tmp_path_factory
    if factory._given_basetemp is not None:  # --basetemp: no numbered folders to clean
        return
    keep = 0 if factory._retention_policy == "none" else factory._retention_count
    if keep == 0:  # then pytest removes this run's folder too, at its end: left to pytest
        return
    base = factory.getbasetemp()
    thread = threading.Thread(
        target=cleanup_numbered_dir, args=(base.parent, "pytest-", keep, base.stat().st_mtime - LOCK_TIMEOUT),
        name="previous-run-cleanup", daemon=True,
    )
    thread.start()
    _CLEANUP["thread"] = thread


@pytest.hookimpl(tryfirst=True)  # before pytest's own cleanup of the temporary folders
def pytest_sessionfinish(session, exitstatus):
    """Wait for the background builder (every build it makes is one a selected test needs),
    unless the run was stopped early: then stop it and everything it started. Wait for the
    cleanup of the previous run's temporary files too."""
    import signal
    import subprocess

    thread = _CLEANUP.pop("thread", None)
    if thread is not None:
        thread.join()
    proc = _PREBUILD.pop("proc", None)
    if proc is None:
        return
    if exitstatus == 0:
        try:
            proc.wait(timeout=600)
            return
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


class DemoTree(NamedTuple):
    """The written demo (``release.yml``, ``prompts.jsonl``, ``results/``, ``paper_table.json``)
    and the summary :func:`searchgen_nb.demo.write_demo` returned. Read only."""

    path: Path
    summary: dict


def _session_build(request, tmp_path_factory) -> tuple[Path, object]:
    """The build the requesting session fixture hands out (:data:`FIXTURE_BUILD`), made once
    per run: ``(folder, value)``."""
    return ensure_built(shared_root(tmp_path_factory), FIXTURE_BUILD[request.fixturename])


@pytest.fixture(scope="session")
def demo_tree(request, tmp_path_factory) -> DemoTree:
    """The synthetic demo (751 prompts × 13 models, ~18,800 files), written once per run into a
    temporary folder (outside the project, so its ``release.yml`` has no ``release_config`` key)."""
    folder, summary = _session_build(request, tmp_path_factory)
    return DemoTree(folder / "release", summary)


@pytest.fixture(scope="session")
def demo_data(request, tmp_path_factory) -> Path:
    """The demo's published artifacts (``public/data`` of :func:`demo_release`: extract,
    aggregate, validate, publish, run by its notebooks). ``searchgen-nb data`` writes the same
    bytes (test_demo_release). Read only: copy it before changing it."""
    folder, _ = _session_build(request, tmp_path_factory)
    return folder / "site" / "public" / "data"


@pytest.fixture(scope="session")
def demo_release(request, tmp_path_factory) -> Path:
    """The whole demo release (notebooks → book → publish) below a session folder; returns
    that output root (``public/data/``, ``_build/html/``, ``book/notebooks/``). Read only."""
    folder, _ = _session_build(request, tmp_path_factory)
    return folder / "site"


@pytest.fixture(scope="session")
def changed_data(request, tmp_path_factory) -> Path:
    """The second, changed demo release (``searchgen-nb demo --changed``) with
    ``previous_release`` = the demo's published data (:func:`demo_data`), published by ``run_data``.
    Its source tree is the folder's ``src``. Read only."""
    folder, _ = _session_build(request, tmp_path_factory)
    return folder / "data"


@pytest.fixture(scope="session")
def fixture_release(request, tmp_path_factory):
    """The small release of the book tests (``book_fixture``), with a previous release
    (``prev-data``, published by ``run_data``) so that its "What changed" page has a rank swap
    and a lost result. Returns ``(config path, output root, ReleaseOutcome)``. Read only."""
    base, (cfg, outcome) = _session_build(request, tmp_path_factory)
    return cfg, base / "site", outcome


def _build_wheel(folder: Path) -> str:
    """``pip wheel`` of a copy of the package sources (``pyproject.toml``, ``README.md``,
    ``searchgen_nb/``: the checkout's ``build/`` is left alone), offline, without build isolation
    (the locked setuptools) — what ``pip install .`` builds before it installs. Returns the
    wheel's file name in ``folder / "dist"``."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    src = folder / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(root / name, src / name)
    shutil.copytree(root / "searchgen_nb", src / "searchgen_nb", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(folder / "dist"), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"pip wheel failed:\n{proc.stdout}{proc.stderr}")
    (wheel,) = (folder / "dist").glob("searchgen_nb-*.whl")
    return wheel.name


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> tuple[Path, Path]:
    """The package's wheel, built once per run (:func:`_build_wheel`) for the tests that read
    it and the one that installs it: ``(wheel file, the copy of the sources it was built from)``.
    Read only."""
    folder, name = built_once(tmp_path_factory, "wheel", _build_wheel)
    return folder / "dist" / name, folder / "src"


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium, launched once per test process (a launch costs about a CPU-second);
    pages are opened in its reusable tab with :class:`browser.Page`."""
    from browser import launch
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


if __name__ == "__main__":  # the background builder: python conftest.py ROOT NAME…
    for name in sys.argv[2:]:
        ensure_built(Path(sys.argv[1]), name)
