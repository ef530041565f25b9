"""Shared test setup: markers, and the synthetic demo written once per session.

Markers (``pytest -m "not slow and not browser"`` is the fast loop, ``make test-fast``):

* ``slow`` — writes or reads the full synthetic demo (751 prompts × 13 models, ~18,800
  files) or runs a whole release (eight notebooks through papermill and the book);
* ``browser`` — opens pages in headless Chromium (Debian ``chromium``, driven by playwright).

The demo and its release are expensive, so each is made once per session and shared by the
tests that only read them. A test that changes the demo works on its own copy
(``shutil.copytree``, hard links when it only deletes files) and never on ``demo_tree.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

import pytest

sys.path.insert(0, str(Path(__file__).parent))

#: Session fixtures that make the full demo; a test that uses one must be marked ``slow``.
SLOW_FIXTURES = ("demo_tree", "demo_data", "demo_release")

#: Expensive shared fixtures → the pytest-xdist group of the tests that use them. ``make test``
#: runs two workers with ``--dist loadgroup``: every test of a group runs on one worker, so each
#: fixture is still made once per run; the tests that use none spread over both workers.
XDIST_GROUPS = {"demo_release": "demo", "demo_data": "demo", "demo_tree": "demo", "fixture_release": "book-fixture"}

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
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        group = next((g for f, g in XDIST_GROUPS.items() if f in names), None)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


class DemoTree(NamedTuple):
    """The written demo (``release.yml``, ``prompts.jsonl``, ``results/``, ``paper_table.json``)
    and the summary :func:`searchgen_nb.demo.write_demo` returned. Read only."""

    path: Path
    summary: dict


@pytest.fixture(scope="session")
def demo_tree(tmp_path_factory) -> DemoTree:
    """The synthetic demo, written once per session into a temporary folder (outside the
    project, so its ``release.yml`` has no ``release_config`` key)."""
    from searchgen_nb.demo import write_demo

    out = tmp_path_factory.mktemp("demo") / "release"
    summary = write_demo(out)
    return DemoTree(out, summary)


@pytest.fixture(scope="session")
def demo_data(demo_tree, tmp_path_factory) -> Path:
    """The demo's artifacts from the data command (``run_data``: extract, aggregate, validate,
    publish) in a folder of their own. Read only: copy it before changing it."""
    from searchgen_nb.config import load_config
    from searchgen_nb.pipeline import run_data

    out = tmp_path_factory.mktemp("demo-data") / "data"
    run_data(load_config(demo_tree.path / "release.yml"), out, progress=False)
    return out


@pytest.fixture(scope="session")
def demo_release(demo_tree, tmp_path_factory) -> Path:
    """The whole demo release (notebooks → book → publish) below a session folder; returns
    that output root (``public/data/``, ``_build/html/``, ``book/notebooks/``). Read only."""
    from searchgen_nb.release import run_release

    site = tmp_path_factory.mktemp("demo-release") / "site"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
        run_release(demo_tree.path / "release.yml", log=lambda m: None, output_root=site)
    return site
