"""The release gate stands apart from the pipeline (data contract, § The release gate, "What
the gate imports"): every import of every module of ``searchgen_nb/gate/`` — inside functions
too — is in the contract's allowlist, and the check fails when an import of the scoring code is
planted. The gate counts the work of a release with its own code, to the same figures."""

from __future__ import annotations

import ast
import itertools
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from searchgen_nb.bounds import Work as PipelineWork
from searchgen_nb.declaration import BENCHMARK
from searchgen_nb.gate.columns import Columns
from searchgen_nb.gate.work import Work as GateWork

PACKAGE = Path(__file__).resolve().parent.parent / "searchgen_nb"
GATE = PACKAGE / "gate"

#: Outside the standard library: numpy and the schema library.
THIRD_PARTY = {"numpy", "jsonschema", "jsonschema_rs", "referencing"}
#: The package's modules the gate may import: its own, errors, the worker processes, the
#: input-safety readers, the schemas' reader and the published names.
OWN = "searchgen_nb.gate"
SHARED = {"searchgen_nb.errors", "searchgen_nb.workers", "searchgen_nb.files",
          "searchgen_nb.untrusted", "searchgen_nb.schemas", "searchgen_nb.constants",
          "searchgen_nb.declaration"}  # fmt: skip


def _within(name: str, allowed: set[str]) -> bool:
    return any(name == a or name.startswith(a + ".") for a in allowed)


def allowed(name: str) -> bool:
    """Whether the gate may import ``name`` (a module, or ``module.attribute`` of a from-import)."""
    top = name.split(".")[0]
    if top == "searchgen_nb":
        return _within(name, SHARED | {OWN})
    return top in sys.stdlib_module_names or top in THIRD_PARTY


def imported(tree: ast.Module, package: str) -> list[tuple[int, str]]:
    """Every name a module imports, at any depth (lazy imports too), with its line: ``import a.b``
    gives ``a.b``, ``from a import b`` gives ``a.b``, a relative import is resolved against
    ``package`` (the module's package); a call of ``__import__`` or ``import_module`` is listed
    as such, for no dynamic import is allowed."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                up = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{up}.{base}" if base else up
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("__import__", "import_module"):
                out.append((node.lineno, f"a dynamic import ({called})"))
    return out


def outside_allowlist(folder: Path, package: str) -> list[str]:
    """``FILE:LINE: NAME`` for every import of a module of ``folder`` (the package ``package``)
    that the gate may not make."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        sub = path.relative_to(folder).parent.parts
        pkg = ".".join((package, *sub))
        for line, name in imported(ast.parse(path.read_text(encoding="utf-8")), pkg):
            if not allowed(name):
                found.append(f"{path.relative_to(folder)}:{line}: {name}")
    return found


def test_the_gate_imports_only_what_the_contract_allows():
    modules = sorted(p.name for p in GATE.glob("*.py"))
    assert {"__init__.py", "checks.py", "aggregate.py", "bootstrap.py", "work.py"} <= set(modules)
    assert outside_allowlist(GATE, OWN) == []


def test_the_shared_modules_import_no_other_module_of_the_package():
    """What the gate shares with the pipeline imports, of the package, only itself; the published
    names hold no logic (no function, no class, no import)."""
    for name in sorted(SHARED):
        path = PACKAGE / f"{name.split('.')[-1]}.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        ours = [n for _, n in imported(tree, "searchgen_nb") if n.split(".")[0] == "searchgen_nb"]
        assert [n for n in ours if not _within(n, SHARED)] == [], name
    constants = ast.parse((PACKAGE / "constants.py").read_text(encoding="utf-8"))
    logic = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
             ast.Lambda)  # fmt: skip
    assert [type(n).__name__ for n in ast.walk(constants) if isinstance(n, logic)] == []


#: (module of the gate, planted source, what the check names)
PLANTED = [
    ("checks.py", "import searchgen_nb.aggregate\n", "searchgen_nb.aggregate"),
    ("work.py", "def _count():\n    from searchgen_nb.bounds import Work\n",
     "searchgen_nb.bounds.Work"),
    ("columns.py", "from searchgen_nb import uncertainty\n", "searchgen_nb.uncertainty"),
    ("records.py", "from .. import numeric\n", "searchgen_nb.numeric"),
    ("compare.py", "import importlib\nimportlib.import_module('searchgen_nb.aggregate')\n",
     "a dynamic import (import_module)"),
]  # fmt: skip


@pytest.mark.parametrize("module, planted, named", PLANTED)
def test_a_planted_scoring_import_fails_the_check(tmp_path, module, planted, named):
    copy = tmp_path / "gate"
    shutil.copytree(GATE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert outside_allowlist(copy, OWN) == []
    with open(copy / module, "a", encoding="utf-8") as fh:
        fh.write("\n\n" + planted)
    found = outside_allowlist(copy, OWN)
    assert len(found) == 1 and found[0].startswith(f"{module}:"), found
    assert found[0].endswith(f": {named}"), found


def test_the_gate_counts_the_work_as_data_does():
    """Its own code, the same figures, bounds and messages as ``data``'s preflight."""
    grid = itertools.product((0, 3, 751, 77_353), (0, 1, 2, 13, 41, 300, 3000, 5901), (0, 34),
                             (0, 4), (0, 1, 10_000, 100_000), (0, 5))  # fmt: skip
    refused = breakdowns = 0
    for prompts, models, tags, slices, b, d in grid:
        size = (prompts, models, tags, slices, prompts * (2 + slices) + tags * 20 + d * 9)
        ours, theirs = GateWork(*size, b, d), PipelineWork(*size, b, d)
        assert ours.problems() == theirs.problems(), (size, b, d)
        assert ours.without_bootstrap().problems() == PipelineWork(*size, 0, d).problems()
        refused += bool(theirs.problems())
        breakdowns += any("breakdown groups" in p for p in theirs.problems())
    assert refused > 100 and breakdowns > 10  # the messages compared, not only empty lists


def test_the_gate_lays_out_its_columns_by_the_manifests_components():
    """The gate's columns follow the manifest's components (here three), then Overall-10 and
    Overall-9: no count of its own."""
    manifest = {"model_order": ["a", "b"], "scoring": {"overall_10_components": ["x", "y", "z"]},
                "declaration": BENCHMARK.as_dict()}  # fmt: skip
    scored = {"status": "scored", "components_raw_0to3": {"x": 1, "y": None, "z": 3},
              "overall_10_raw": 2.0, "overall_9_raw": 1.0}  # fmt: skip
    missing = {"status": "missing_generation", "components_raw_0to3": dict.fromkeys("xyz")}
    cols = Columns.from_records(
        manifest, [{"sample_id": "p1", "models": {"a": scored, "b": missing}}]
    )
    assert (cols.n_components, cols.column) == (3, {"overall_10": 3, "overall_9": 4})
    assert cols.values.shape == (2, 1, 5)
    assert np.isnan(cols.values[0, 0, 1]) and cols.values[0, 0].tolist()[2:] == [3.0, 2.0, 1.0]
    assert np.isnan(cols.values[1, 0]).all()
