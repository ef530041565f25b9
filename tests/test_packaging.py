"""Packaging: the environment is the lock, the version is written once, the wheel is complete.

- every package pinned in ``requirements.txt`` is installed at exactly that version (a
  stale ``.venv`` fails here with the list of differences: run ``make setup``);
- the lock still satisfies every dependency declared in ``pyproject.toml`` (a dependency
  edited without ``make lock`` fails here);
- ``pyproject.toml``'s ``[project] version`` is ``searchgen_nb.__version__``;
- a wheel built from the sources holds every module, ``data/*.json``, the console script
  and the declared dependencies.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import searchgen_nb

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.txt"
PYPROJECT = ROOT / "pyproject.toml"


def _pyproject() -> dict:
    with open(PYPROJECT, "rb") as f:
        return tomllib.load(f)


def locked_pins(text: str) -> dict[str, Version]:
    """``{canonical name: version}`` of the ``name==version`` lines of the lock (``uv pip
    compile`` output) whose environment marker (if any) holds here."""
    pins: dict[str, Version] = {}
    # A requirement starts a line; its hashes follow on backslash-continued lines.
    for line in text.splitlines():
        if not line or line[0] in " \t#-":
            continue
        req = Requirement(line.rstrip("\\ ").strip())
        if req.marker is not None and not req.marker.evaluate():
            continue
        specs = list(req.specifier)
        exact = len(specs) == 1 and specs[0].operator == "=="
        assert exact, f"requirements.txt: not an exact pin: {line!r}"
        pins[canonicalize_name(req.name)] = Version(specs[0].version)
    return pins


def installed_versions() -> dict[str, set[str]]:
    """``{canonical name: {versions}}`` of the distributions this interpreter sees."""
    found: dict[str, set[str]] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(canonicalize_name(name), set()).add(dist.version)
    return found


def lock_differences(pins: dict[str, Version], installed: dict[str, set[str]]) -> list[str]:
    diffs = []
    for name, want in sorted(pins.items()):
        have = installed.get(name)
        if not have:
            diffs.append(f"{name}: locked {want}, not installed")
        elif {Version(v) for v in have} != {want}:
            diffs.append(f"{name}: locked {want}, installed {', '.join(sorted(have))}")
    return diffs


def test_locked_pins_parser():
    text = (
        "#\n#    make lock\n#\n"
        "foo-bar==1.0.4.post1 \\\n    --hash=sha256:00 \\\n    --hash=sha256:11\n    # via x\n"
        "Baz_Qux==2.0 ; python_version >= '3'\n"
        "nope==1.0 ; python_version < '3'\n"
    )
    assert locked_pins(text) == {"foo-bar": Version("1.0.4.post1"), "baz-qux": Version("2.0")}
    assert lock_differences(
        {"a": Version("1.0"), "b": Version("2.0"), "c": Version("3.0")},
        {"a": {"1.0"}, "b": {"2.1"}},
    ) == ["b: locked 2.0, installed 2.1", "c: locked 3.0, not installed"]


def test_installed_packages_match_the_lock():
    pins = locked_pins(LOCK.read_text(encoding="utf-8"))
    assert len(pins) > 50, "requirements.txt: suspiciously few pins"
    diffs = lock_differences(pins, installed_versions())
    head = f"{len(diffs)} package(s) differ from requirements.txt (run `make setup`):"
    assert not diffs, "\n  ".join([head, *diffs])


def test_lock_satisfies_pyproject_dependencies():
    """Every runtime and `test` dependency of pyproject.toml is locked at a version its range
    allows: a change to pyproject.toml needs `make lock`."""
    project = _pyproject()["project"]
    declared = list(project["dependencies"]) + list(project["optional-dependencies"]["test"])
    pins = locked_pins(LOCK.read_text(encoding="utf-8"))
    problems = []
    for line in declared:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        if name not in pins:
            problems.append(f"{line}: not in requirements.txt")
        elif not req.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{line}: locked {pins[name]}")
    head = "requirements.txt is out of date with pyproject.toml (run `make lock`):"
    assert not problems, "\n  ".join([head, *problems])


def test_version_is_written_once():
    version = _pyproject()["project"]["version"]
    assert searchgen_nb.__version__ == version
    assert "version" not in _pyproject()["project"].get("dynamic", [])
    # No second copy of the number in the package's sources.
    init = (ROOT / "searchgen_nb" / "__init__.py").read_text(encoding="utf-8")
    assert not re.search(r"__version__\s*=\s*['\"]", init)


def test_wheel_ships_modules_data_and_metadata(wheel):
    """The wheel (``conftest.wheel``: built offline, without build isolation, from a copy of the
    sources) holds every module and data file, the version, the entry point and the dependencies."""
    wheel, src = wheel
    version = _pyproject()["project"]["version"]
    assert wheel.name.startswith(f"searchgen_nb-{version}-")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist_info = f"searchgen_nb-{version}.dist-info"
        meta = Parser().parsestr(zf.read(f"{dist_info}/METADATA").decode("utf-8"))
        entry_points = zf.read(f"{dist_info}/entry_points.txt").decode("utf-8")
    expected = {
        p.relative_to(src).as_posix()
        for p in (src / "searchgen_nb").rglob("*")
        if p.is_file()
        and (
            p.suffix == ".py"
            or p.parent.name in ("data", "schemas")
            and p.suffix in (".json", ".yaml")
        )
    }
    assert {
        "searchgen_nb/data/taxonomy.json",
        "searchgen_nb/data/benchmark.yaml",
        "searchgen_nb/schemas/manifest.schema.json",
    } <= expected
    assert not expected - names, f"missing from the wheel: {sorted(expected - names)}"
    assert meta["Version"] == version
    assert "searchgen-nb = searchgen_nb.launch:main" in entry_points
    requires = {
        canonicalize_name(Requirement(r).name)
        for r in meta.get_all("Requires-Dist") or []
        if "extra ==" not in r
    }
    declared = {
        canonicalize_name(Requirement(r).name) for r in _pyproject()["project"]["dependencies"]
    }
    assert requires == declared


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (lazy imports inside functions too)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    pkg = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    + ([base] if base else [])
                )
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return out


def test_the_book_side_imports_the_data_layer_never_the_reverse():
    """``searchgen_nb/book/`` (views, formatting, tables, charts, pages, the Sphinx extension,
    downloads, the release) reads the data layer; no data-layer module imports it, and no book
    module runs a pipeline stage itself (the entry points do: the CLI, the notebooks' first
    call in ``notebook.py``)."""
    package = ROOT / "searchgen_nb"
    book = sorted((package / "book").glob("*.py"))
    data = sorted(
        p
        for p in package.rglob("*.py")
        if "book" not in p.relative_to(package).parts
        and p.name not in ("cli.py", "launch.py", "__main__.py", "notebook.py")
    )
    assert {p.name for p in book} >= {
        "views.py",
        "fmt.py",
        "display.py",
        "tables.py",
        "charts.py",
        "pages.py",
        "sphinx_ext.py",
        "assets.py",
        "release.py",
    }
    offenders = [
        f"{p.relative_to(ROOT)} imports {m}"
        for p in data
        for m in sorted(_imports(p))
        if m == "searchgen_nb.book" or m.startswith("searchgen_nb.book.")
    ]
    assert offenders == []
    uses_data = {
        p.name
        for p in book
        if any(
            m.startswith("searchgen_nb.") and not m.startswith("searchgen_nb.book")
            for m in _imports(p)
        )
    }
    assert {"views.py", "pages.py", "release.py"} <= uses_data
    stage_calls = [
        p.name
        for p in book
        if any(
            f"{s}(" in p.read_text(encoding="utf-8")
            for s in ("extract_stage", "aggregate_stage", "ensure_staged", "run_data")
        )
    ]
    assert stage_calls == []
    static = {p.name for p in (package / "book" / "static").iterdir()}
    assert static == {"searchgen-nb.js", "searchgen-nb.css"}  # real files, shipped as package data


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("2", "2")])
def test_the_command_runs_openblas_on_one_thread_unless_told(given, seen):
    """``searchgen-nb`` sets ``OPENBLAS_NUM_THREADS=1`` before any command loads numpy, keeping a
    value the environment gives (data contract, § Bounded work)."""
    code = (
        "import os, sys\n"
        "sys.argv = ['searchgen-nb', '--help']\n"
        "from searchgen_nb.launch import main\n"
        "assert 'numpy' not in sys.modules\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'], file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env |= {"OPENBLAS_NUM_THREADS": given} if given else {}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.stderr.splitlines()[-1] == seen
