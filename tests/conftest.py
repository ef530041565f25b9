"""Markers, the run's environment, and the expensive inputs (the demo, its release, the changed
demo, the book tests' release, the wheel) as session fixtures below ``tmp_path_factory``: made
once per test process (per pytest-xdist worker). Read only: a test that changes one copies it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

# One BLAS thread per process (kernels, subprocesses too; set before the imports below load
# numpy): the test workers already fill the cores.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# Every chart a test builds, here and in the kernels of its releases, is checked against the
# Vega-Lite schema (searchgen_nb.book.charts.VALIDATE_ENV; the demo release skips it below).
os.environ["SEARCHGEN_VALIDATE_CHARTS"] = "1"

from book_fixture import MODELS, PREVIOUS_RESULTS, PROMPTS, RESULTS  # noqa: E402
from factory import make_release  # noqa: E402

from searchgen_nb.book.release import run_release  # noqa: E402
from searchgen_nb.config import load_config  # noqa: E402
from searchgen_nb.demo import write_demo  # noqa: E402
from searchgen_nb.pipeline import run_data  # noqa: E402

#: ``SOURCE_DATE_EPOCH`` of every release a test makes: releases of the same inputs are equal.
TEST_EPOCH = "1780000000"
#: The fixtures that make or read the demo or a release: a test that uses one must be ``slow``.
SLOW_FIXTURES = {"demo_tree", "demo_data", "demo_release", "changed_data", "fixture_release"}


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: uses the full demo or runs a whole release")
    config.addinivalue_line("markers", "browser: opens pages in headless Chromium (playwright)")


def pytest_collection_modifyitems(items):
    """Keep the fast loop (``-m "not slow and not browser"``) fast: such tests must say so."""
    unmarked = []
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & SLOW_FIXTURES and item.get_closest_marker("slow") is None:
            unmarked.append(f"{item.nodeid} uses {', '.join(sorted(names & SLOW_FIXTURES))}")
        if "browser" in names and item.get_closest_marker("browser") is None:
            unmarked.append(f"{item.nodeid} uses browser")
    if unmarked:
        raise pytest.UsageError("mark these slow / browser:\n  " + "\n  ".join(unmarked))


@pytest.fixture(scope="session", autouse=True)
def run_folders(tmp_path_factory):
    """The kernels' IPython files go to the run's folder, not the user's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
        yield


class DemoTree(NamedTuple):
    """The written demo (``release.yml``, ``prompts.jsonl``, ``results/``, …) and its summary."""

    path: Path
    summary: dict


@pytest.fixture(scope="session")
def demo_tree(tmp_path_factory) -> DemoTree:
    """The synthetic demo (751 prompts × 13 models, ~18,800 files) in a temporary folder
    (outside the project, so its ``release.yml`` has no ``release_config`` key)."""
    path = tmp_path_factory.mktemp("demo") / "release"
    return DemoTree(path, write_demo(path))


@pytest.fixture(scope="session")
def demo_release(demo_tree, tmp_path_factory) -> Path:
    """The whole demo release (notebooks → book → publish); returns its output root
    (``public/data/``, ``_build/html/``, ``book/notebooks/``). Read only."""
    site = tmp_path_factory.mktemp("demo-release") / "site"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
        mp.setenv("SEARCHGEN_VALIDATE_CHARTS", "0")  # the small release checks every chart kind
        run_release(demo_tree.path / "release.yml", log=lambda m: None, output_root=site)
    return site


@pytest.fixture(scope="session")
def demo_data(demo_release) -> Path:
    """The demo's published artifacts (``public/data`` of :func:`demo_release`). Read only."""
    return demo_release / "public" / "data"


@pytest.fixture(scope="session")
def changed_data(demo_data, tmp_path_factory) -> Path:
    """The changed demo (``demo --changed``, sources in the sibling ``src``) published by
    ``run_data`` with ``previous_release`` = :func:`demo_data`. Read only."""
    folder = tmp_path_factory.mktemp("demo-changed")
    write_demo(folder / "src", changed=True, previous=demo_data)
    run_data(load_config(folder / "src" / "release.yml"), folder / "data", progress=False)
    return folder / "data"


@pytest.fixture(scope="session")
def fixture_release(tmp_path_factory):
    """The book tests' release (``book_fixture``; its previous release, ``prev-data``, gives a
    rank swap and a lost result): ``(config path, output root, ReleaseOutcome)``. Read only."""
    folder, kw = tmp_path_factory.mktemp("book"), {"scoring": {"min_ranking_coverage": 0.5}}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", str(int(TEST_EPOCH) - 86400))
        prev = make_release(folder / "prev", PROMPTS, MODELS, PREVIOUS_RESULTS, **kw)
        run_data(load_config(prev), folder / "prev-data", progress=False)
        kw["previous_release"] = "../prev-data"
        kw["expected"] = {"lost_results": {"evil": ["f03"]}}  # the lost result, acknowledged
        cfg, site = make_release(folder / "src", PROMPTS, MODELS, RESULTS, **kw), folder / "site"
        mp.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
        return cfg, site, run_release(cfg, log=lambda m: None, output_root=site)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> tuple[Path, Path]:
    """What ``pip install .`` builds: ``pip wheel`` of a copy of the sources, offline, without
    build isolation (the locked setuptools). ``(wheel file, the sources' copy)``."""
    root, folder = Path(__file__).resolve().parents[1], tmp_path_factory.mktemp("wheel")
    src, ignore = folder / "src", shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(root / "searchgen_nb", src / "searchgen_nb", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(root / name, src / name)
    cmd = "wheel -q --no-deps --no-index --no-build-isolation -w dist ./src".split()
    proc = subprocess.run([sys.executable, "-m", "pip", *cmd], cwd=folder, capture_output=True)
    assert proc.returncode == 0, f"pip wheel failed:\n{proc.stdout.decode()}{proc.stderr.decode()}"
    (path,) = (folder / "dist").glob("searchgen_nb-*.whl")
    return path, src


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium, once per test process; pages open in its tab with ``browser.Page``."""
    from browser import launch
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield launch(p)  # closed with playwright
