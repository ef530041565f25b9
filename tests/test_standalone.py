"""The package works installed the ordinary way (non-editable), from outside the checkout,
and no machine path reaches anything meant to be committed."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_non_editable_install_releases_from_outside_the_checkout(tmp_path):
    """``pip install .`` (not editable) into a fresh venv, then ``demo`` and ``release --project``
    run from a folder outside the checkout; outputs land below --output-root, never in
    site-packages, and the executed notebooks hold no machine path.

    The fresh venv borrows the dependencies of this environment through a ``.pth`` file (the
    lock is checked by test_packaging), so the test needs no network."""
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", str(ROOT)],
        capture_output=True, text=True,
    )
    assert pip.returncode == 0, pip.stderr
    assert (site / "searchgen_nb" / "data" / "taxonomy.json").exists()  # installed, not linked
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1780000000"}
    env.pop("SEARCHGEN_ROOT", None)
    exe = str(venv / "bin" / "searchgen-nb")
    r = subprocess.run([exe, "demo", "--out", "d"], cwd=work, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([exe, "release", "d/release.yml", "--output-root", "site"], cwd=work, capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "give --project DIR" in r.stderr, r.stderr  # no notebooks in site-packages
    r = subprocess.run([exe, "release", "d/release.yml", "--project", str(ROOT), "--output-root", "site"], cwd=work, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert (work / "site" / "_build" / "html" / "index.html").exists()
    assert (work / "site" / "public" / "data" / "manifest.json").exists()
    assert not list(site.glob("build")) and not list(site.glob("public"))  # nothing written into site-packages
    machine = (str(tmp_path), str(ROOT), sys.prefix)
    committed = [*(work / "site" / "book" / "notebooks").glob("*.ipynb"), *(work / "site" / "public" / "data").iterdir()]
    assert len(committed) > 8
    for path in committed:
        text = path.read_text(encoding="utf-8")
        for m in machine:
            assert m not in text, (path.name, m)
