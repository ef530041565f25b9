"""The package works installed the ordinary way (non-editable), from outside the checkout,
and no machine path reaches anything meant to be committed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import TEST_EPOCH

ROOT = Path(__file__).resolve().parents[1]


def tree_bytes(root: Path) -> dict[str, bytes]:
    """``{relative path: bytes}`` of every file below ``root`` (links followed)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def first_difference(name: str, mine: dict[str, bytes], theirs: dict[str, bytes]) -> str:
    """The first differing line of one file of two trees, for the failure message."""
    for i, (a, b) in enumerate(zip(mine[name].splitlines(), theirs[name].splitlines()), 1):
        if a != b:
            return f"{name} line {i}: {a[:300]!r} != {b[:300]!r}"
    return f"{name}: one is a prefix of the other"


@pytest.mark.slow
def test_non_editable_install_releases_from_outside_the_checkout(
    tmp_path, tmp_path_factory, demo_tree, fixture_release, wheel
):
    """``pip install .`` (not editable) into a fresh venv — the wheel that command builds
    (``conftest.wheel``: ``pip wheel`` of the sources, which test_packaging reads) installed
    —, then ``demo`` and ``release --project`` run from a folder outside the checkout; outputs
    land below --output-root, never in site-packages, and the executed notebooks hold no
    machine path.

    Two installs, two places, two processes, one result: the installed ``demo`` writes the
    session's demo byte for byte, and the installed ``release`` of the book tests' release
    (``conftest.fixture_release``: a previous release, every page, a ``<script>`` name) publishes
    the book, the executed notebooks and the artifacts that the editable checkout published
    in-process in another folder, byte for byte. This is the "two fresh clones build the same
    book" promise; the lock's versions are checked against the installed ones by test_packaging.

    The fresh venv borrows the dependencies of this environment through a ``.pth`` file (the
    lock is checked by test_packaging), so the test needs no network."""
    cfg, site, _ = fixture_release
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site_packages = next((venv / "lib").glob("python3*/site-packages"))
    (site_packages / "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel[0]),
        ],
        capture_output=True,
        text=True,
    )
    assert pip.returncode == 0, pip.stderr
    assert (
        site_packages / "searchgen_nb" / "data" / "taxonomy.json"
    ).exists()  # installed, not linked
    assert not list(site_packages.glob("__editable__*searchgen_nb*"))
    work = tmp_path / "elsewhere"
    work.mkdir()
    # The same relative layout as the session's releases: the notebooks name their config
    # relative to the output root, so "the same release" means the same folders below one root.
    base = tmp_path_factory.getbasetemp()  # where the session fixtures are
    demo_dir = demo_tree.path.relative_to(base).as_posix()
    env = {**os.environ, "SOURCE_DATE_EPOCH": TEST_EPOCH, "PYTHONHASHSEED": "12345"}
    env.pop("SEARCHGEN_ROOT", None)
    exe = str(venv / "bin" / "searchgen-nb")
    r = subprocess.run(
        [exe, "demo", "--out", demo_dir], cwd=work, capture_output=True, text=True, env=env
    )
    assert r.returncode == 0, r.stderr
    # another process, hash seed, cwd and install write the very same demo, byte for byte
    assert tree_bytes(work / demo_dir) == tree_bytes(demo_tree.path)
    book = site.parent.relative_to(base)
    for part in ("src", "prev-data"):
        shutil.copytree(base / book / part, work / book / part)
    config, out = (book / "src" / cfg.name).as_posix(), (book / "site").as_posix()
    r = subprocess.run(
        [exe, "release", config, "--output-root", out],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 1 and "give --project DIR" in r.stderr, (
        r.stderr
    )  # no notebooks in site-packages
    r = subprocess.run(
        [exe, "release", config, "--project", str(ROOT), "--output-root", out],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert (work / out / "_build" / "html" / "book" / "notebooks" / "09_changes.html").exists()
    assert (work / out / "public" / "data" / "manifest.json").exists()
    assert not list(site_packages.glob("build")) and not list(
        site_packages.glob("public")
    )  # nothing written into site-packages
    machine = (str(tmp_path), str(ROOT), sys.prefix)
    committed = [
        *(work / out / "book" / "notebooks").glob("*.ipynb"),
        *(
            p
            for p in (work / out / "public" / "data").rglob("*")
            if p.is_file() and p.suffix != ".webp"
        ),
    ]
    assert len(committed) > 8
    for path in committed:
        text = path.read_text(encoding="utf-8")
        for m in machine:
            assert m not in text, (path.name, m)
    for part in ("_build/html", "book/notebooks", "public/data"):
        mine, theirs = tree_bytes(work / out / part), tree_bytes(site / part)
        assert sorted(mine) == sorted(theirs), part
        differ = [name for name in mine if mine[name] != theirs[name]]
        assert differ == [], (
            f"{part}: {len(differ)} files differ, {first_difference(differ[0], mine, theirs)}"
        )
