"""The views' notebooks (04–11) of two versions of the package, side by side, in interleaved rounds.

Usage::

    .venv/bin/searchgen-nb release releases/demo.yml --output-root /tmp/sgbench/site
    .venv/bin/python benchmarks/bench_views.py OLD NEW /tmp/sgbench/site [--rounds 5]

``SITE`` is the output root of a release (its work folder ``build/release`` holds the staged
data). Each version (``git archive REV``) runs the code cells of ``notebooks/04_*``–``11_*``
(its own) in order in one IPython shell of a process of its own, the namespace reset between
notebooks as the release's kernel does, with the demo's parameters; the views' modules are
imported first, untimed (notebook 01 imports them in a release). Reported: the seconds of each
run, a hash of every display output (the same for two versions that show the same bytes), the
per-round ratio NEW / OLD and the median of those ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_scale import snapshot  # `git archive REV` unpacked into a folder

#: Run in the version's folder (``PYTHONPATH``) with the site as the working directory.
RUN = """\
import hashlib, os, sys, time
import nbformat
from IPython.core.interactiveshell import InteractiveShell
src, params = sys.argv[1], {"release_config": "releases/demo.yml", "staging": "build/release/data"}
shell = InteractiveShell.instance()
shell.run_cell("from searchgen_nb.book import pages, paper, tables, views")
digest, format = hashlib.sha256(), shell.display_formatter.format
def hashed(obj, include=None, exclude=None):
    shown = format(obj, include, exclude)
    digest.update(repr(shown).encode())
    return shown
shell.display_formatter.format = hashed
t0 = time.perf_counter()
for name in sorted(os.listdir(f"{src}/notebooks"))[3:]:
    shell.reset(new_session=True)
    for cell in nbformat.read(f"{src}/notebooks/{name}", as_version=4).cells:
        if cell.cell_type == "code":
            if not shell.run_cell(cell.source, silent=False).success:
                sys.exit(f"{name} failed")
            if "parameters" in cell.metadata.get("tags", []):
                shell.user_ns.update(params)
print(f"{time.perf_counter() - t0:.3f} {digest.hexdigest()[:16]}", file=sys.stderr)
"""


def run(src: Path, site: Path) -> tuple[float, str]:
    """(seconds, output hash) of one run of the views of the version in ``src``."""
    env = {"PYTHONPATH": str(src), "SEARCHGEN_ROOT": str(site), "SEARCHGEN_PROJECT": str(src)}
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(src)],
        cwd=site,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, digest = proc.stderr.strip().splitlines()[-1].split()
    return float(seconds), digest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("site", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    old, new, site = args.old, args.new, args.site.resolve()
    work = Path(tempfile.mkdtemp(prefix="bench-views-"))
    try:
        srcs = {rev: Path(snapshot(rev, work / f"src{i}")[0]) for i, rev in enumerate((old, new))}
        for rev in srcs:  # warm-up: page cache, byte-compiled files
            run(srcs[rev], site)
        ratios = []
        for r in range(args.rounds):
            order = (old, new) if r % 2 == 0 else (new, old)
            t = {rev: run(srcs[rev], site) for rev in order}
            ratios.append(t[new][0] / t[old][0])
            said = ", ".join(f"{rev} {t[rev][0]:.2f} s ({t[rev][1]})" for rev in (old, new))
            load = os.getloadavg()[0]
            print(f"round {r + 1}: {said}, load {load:.1f}, ratio {ratios[-1]:.3f}", flush=True)
        print(f"median ratio {new} / {old}: {statistics.median(ratios):.3f}")
    finally:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
