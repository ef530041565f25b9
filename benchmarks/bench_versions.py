"""One command of two versions of the package, side by side, in interleaved rounds.

Usage::

    .venv/bin/python benchmarks/bench_versions.py OLD NEW data CONFIG [--rounds 5]
    .venv/bin/python benchmarks/bench_versions.py OLD NEW release [--rounds 5]

``OLD`` and ``NEW`` are git revisions of this checkout: each is unpacked (``git archive``) into
its own work folder and run as ``python -m searchgen_nb`` with that folder on ``PYTHONPATH``
and as the working directory, with this checkout's venv. ``data CONFIG`` runs ``data CONFIG
--out TMP`` (the output is removed after each run, untimed); ``release`` makes each version's
demo (``demo --out data/demo``, untimed) and runs ``release releases/demo.yml`` in its folder.

Each round runs both versions, in an order that alternates from round to round, after one
untimed warm-up run of each. Reported: the wall time of each run, the per-round ratio
NEW / OLD and the median of those ratios (the drift of a shared machine hits both runs of a
round alike).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_scale import snapshot  # `git archive REV` unpacked into a folder


def run(src: Path, argv: list[str], env: dict) -> float:
    """Wall seconds of ``python -m searchgen_nb ARGV`` run from ``src``."""
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "searchgen_nb", *argv],
        cwd=src, env={**env, "PYTHONPATH": str(src)}, check=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("command", choices=("data", "release"))
    ap.add_argument("config", nargs="?", help="the release config of `data`")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000", "PYTHONDONTWRITEBYTECODE": "1"}
    work = Path(tempfile.mkdtemp(prefix="bench-versions-"))
    try:
        srcs = {
            rev: Path(snapshot(rev, work / f"src{i}")[0])
            for i, rev in enumerate((args.old, args.new))
        }
        out = work / "out"
        if args.command == "data":
            config = str(Path(args.config).resolve())
            argv = ["data", config, "--out", str(out), "--no-progress"]
        else:
            argv = ["release", "releases/demo.yml"]
            for src in srcs.values():
                run(src, ["demo", "--out", "data/demo"], env)

        def once(rev: str) -> float:
            seconds = run(srcs[rev], argv, env)
            shutil.rmtree(out, ignore_errors=True)
            return seconds

        for rev in srcs:  # warm-up: page cache, byte-compiled files
            once(rev)
        ratios = []
        for r in range(args.rounds):
            order = (args.old, args.new) if r % 2 == 0 else (args.new, args.old)
            t = {rev: once(rev) for rev in order}
            ratios.append(t[args.new] / t[args.old])
            print(
                f"round {r + 1}: {args.old} {t[args.old]:.2f} s, {args.new} {t[args.new]:.2f} s, "
                f"ratio {ratios[-1]:.3f}",
                flush=True,
            )
        print(f"median ratio {args.new} / {args.old}: {statistics.median(ratios):.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
