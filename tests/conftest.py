"""Shared test setup: markers, and the synthetic demo written once per session.

Markers (``pytest -m "not slow and not browser"`` is the fast loop, ``make test-fast``):

* ``slow`` — writes or reads the full synthetic demo (751 prompts × 13 models, ~18,800
  files) or runs a whole release (eight notebooks through papermill and the book);
* ``browser`` — opens pages in headless Chromium (Debian ``chromium``, driven by playwright).

The demo and its release are expensive, so each is made once per run — once across all
pytest-xdist workers (``make test`` runs two), see :func:`built_once` — and shared by the tests
that only read them. A test that changes the demo works on its own copy
(``shutil.copytree``, hard links when it only deletes files) and never on ``demo_tree.path``.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

sys.path.insert(0, str(Path(__file__).parent))

#: Session fixtures that make the full demo; a test that uses one must be marked ``slow``.
SLOW_FIXTURES = ("demo_tree", "demo_data", "demo_release", "changed_data", "fixture_release")

#: Every chart a test builds — in this process and in the kernels of the releases the tests
#: run — is checked against the Vega-Lite schema (a plain release skips the check for speed;
#: searchgen_nb.book.charts.VALIDATE_ENV).
os.environ["SEARCHGEN_VALIDATE_CHARTS"] = "1"

#: ``SOURCE_DATE_EPOCH`` of every release a test makes (timestamps are then reproducible, and
#: two releases of the same inputs compare byte for byte).
TEST_EPOCH = "1780000000"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: writes or reads the full synthetic demo, or runs a whole release (notebooks + book)"
    )
    config.addinivalue_line("markers", "browser: opens pages in headless Chromium (Debian chromium + playwright)")


def pytest_collection_modifyitems(config, items):
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


def shared_root(tmp_path_factory) -> Path:
    """The temporary folder every pytest-xdist worker of this run sees (its own basetemp's
    parent under xdist; the basetemp itself in a plain run)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory, name: str, build) -> tuple[Path, object]:
    """``build(folder)`` run once per test run, whatever the number of xdist workers: the first
    worker to get here builds ``<shared root>/<name>`` under an exclusive lock (``flock``); the
    others wait for it and reuse the folder. ``build`` returns a picklable value, kept beside
    the folder. Returns ``(folder, value)``."""
    root = shared_root(tmp_path_factory)
    folder, done = root / name, root / f"{name}.done.pickle"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            done.write_bytes(pickle.dumps(build(folder)))
        return folder, pickle.loads(done.read_bytes())


class DemoTree(NamedTuple):
    """The written demo (``release.yml``, ``prompts.jsonl``, ``results/``, ``paper_table.json``)
    and the summary :func:`searchgen_nb.demo.write_demo` returned. Read only."""

    path: Path
    summary: dict


@pytest.fixture(scope="session")
def demo_tree(tmp_path_factory) -> DemoTree:
    """The synthetic demo, written once per run into a temporary folder (outside the
    project, so its ``release.yml`` has no ``release_config`` key)."""
    from searchgen_nb.demo import write_demo

    folder, summary = built_once(tmp_path_factory, "demo", lambda f: write_demo(f / "release"))
    return DemoTree(folder / "release", summary)


@pytest.fixture(scope="session")
def demo_data(demo_tree, tmp_path_factory) -> Path:
    """The demo's artifacts from the data command (``run_data``: extract, aggregate, validate,
    publish) in a folder of their own. Read only: copy it before changing it."""
    from searchgen_nb.config import load_config
    from searchgen_nb.pipeline import run_data

    def build(folder: Path) -> None:
        run_data(load_config(demo_tree.path / "release.yml"), folder / "data", progress=False)

    folder, _ = built_once(tmp_path_factory, "demo-data", build)
    return folder / "data"


@pytest.fixture(scope="session")
def demo_release(demo_tree, tmp_path_factory) -> Path:
    """The whole demo release (notebooks → book → publish) below a session folder; returns
    that output root (``public/data/``, ``_build/html/``, ``book/notebooks/``). Read only."""
    from searchgen_nb.book.release import run_release

    def build(folder: Path) -> None:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
            run_release(demo_tree.path / "release.yml", log=lambda m: None, output_root=folder / "site")

    folder, _ = built_once(tmp_path_factory, "demo-release", build)
    return folder / "site"


@pytest.fixture(scope="session")
def changed_data(demo_data, tmp_path_factory) -> Path:
    """The second, changed demo release (``searchgen-nb demo --changed``) with
    ``previous_release`` = the demo's published data (``demo_data``), published by ``run_data``.
    Its source tree is the folder's ``src``. Read only."""
    from searchgen_nb.config import load_config
    from searchgen_nb.demo import write_demo
    from searchgen_nb.pipeline import run_data

    def build(folder: Path) -> None:
        write_demo(folder / "src", changed=True, previous=demo_data)
        run_data(load_config(folder / "src" / "release.yml"), folder / "data", progress=False)

    folder, _ = built_once(tmp_path_factory, "demo-changed", build)
    return folder / "data"


@pytest.fixture(scope="session")
def fixture_release(tmp_path_factory):
    """The small release, made once per run (across xdist workers, :func:`conftest.built_once`),
    with a previous release (``prev-data``, published by ``run_data``) so that its "What changed"
    page has a rank swap and a lost result."""
    from book_fixture import MODELS, PREVIOUS_RESULTS, PROMPTS, RESULTS
    from factory import make_release

    from searchgen_nb.book.release import run_release
    from searchgen_nb.config import load_config
    from searchgen_nb.pipeline import run_data

    def build(base: Path):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SOURCE_DATE_EPOCH", str(int(TEST_EPOCH) - 86400))
            prev = make_release(base / "prev", PROMPTS, MODELS, PREVIOUS_RESULTS, scoring={"min_ranking_coverage": 0.5})
            run_data(load_config(prev), base / "prev-data", progress=False)
            cfg = make_release(base / "src", PROMPTS, MODELS, RESULTS, scoring={"min_ranking_coverage": 0.5}, previous_release="../prev-data")
            mp.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
            return cfg, run_release(cfg, log=lambda m: None, output_root=base / "site")

    base, (cfg, outcome) = built_once(tmp_path_factory, "book", build)
    return cfg, base / "site", outcome
