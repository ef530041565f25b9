"""One command of two versions of the package, side by side, in interleaved rounds.

Usage::

    .venv/bin/python benchmarks/bench_versions.py OLD NEW data CONFIG [--rounds 5]
    .venv/bin/python benchmarks/bench_versions.py OLD NEW release [--rounds 5]
    .venv/bin/python benchmarks/bench_versions.py OLD NEW data CONFIG --stage extract [--rounds 5]

``OLD`` and ``NEW`` are git revisions of this checkout: each is unpacked (``git archive``) into
its own work folder and run as ``python -m searchgen_nb`` with that folder on ``PYTHONPATH``
and as the working directory, with this checkout's venv. ``data CONFIG`` runs ``data CONFIG
--out TMP`` (the output is removed after each run, untimed); ``release`` makes each version's
demo (``demo --out data/demo``, untimed) and runs ``release releases/demo.yml`` in its folder.

Each round runs both versions, in an order that alternates from round to round, after one
untimed warm-up run of each. Reported: the wall time of each run (without ``--stage``, its
CPU seconds too, subprocesses included, and the load average after the round), the per-round
ratio NEW / OLD and the median of those ratios (the drift of a shared machine hits both runs
of a round alike).

``--stage NAME`` (``data`` only) compares CPU seconds of one stage instead (``data --timings``;
the ``extract`` stage without the ``thumbnails`` stage it holds, which is shown apart) and runs
the read floor of ``bench_scale.py`` (one process: read and ``json.loads`` every result file)
in each round too, reporting each version's stage against it (CPU seconds both).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_scale import list_result_files, snapshot  # `git archive REV` unpacked into a folder

#: Stages timed inside another (``data --timings``): subtracted from it by ``--stage``.
NESTED = {"extract": ("thumbnails",)}


#: CPU seconds (user + system) of each version's runs, its subprocesses (kernels, builds) too.
CPU: dict[str, list[float]] = {}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(src: Path, argv: list[str], env: dict) -> float:
    """Wall seconds of ``python -m searchgen_nb ARGV`` run from ``src`` (CPU seconds: CPU)."""
    t0, cpu0 = time.perf_counter(), children_cpu()
    subprocess.run(
        [sys.executable, "-m", "searchgen_nb", *argv],
        cwd=src, env={**env, "PYTHONPATH": str(src)}, check=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    CPU.setdefault(str(src), []).append(children_cpu() - cpu0)
    return time.perf_counter() - t0


def stage_cpu(timings: Path, stage: str) -> tuple[float, float]:
    """CPU seconds of ``stage`` without its nested stages, and of those nested stages."""
    stages = json.loads(timings.read_text(encoding="utf-8"))["stages"]
    nested = sum(stages[n]["cpu_s"] for n in NESTED.get(stage, ()) if n in stages)
    return stages[stage]["cpu_s"] - nested, nested


def floor_cpu(file_list: Path) -> float:
    """CPU seconds of ``bench_scale.py``'s read floor in one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    here = Path(__file__).parent / "bench_scale.py"
    subprocess.run([sys.executable, str(here), "_floor", str(file_list), "1"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("command", choices=("data", "release"))
    ap.add_argument("config", nargs="?", help="the release config of `data`")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--stage", help="`data` only: compare CPU seconds of this stage, floor too")
    args = ap.parse_args()
    if args.stage and args.command != "data":
        ap.error("--stage needs the data command")
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
            if args.stage:
                argv += ["--timings", str(work / "timings.json")]
                list_result_files(Path(config), work / "files.txt")
        else:
            argv = ["release", "releases/demo.yml"]
            for src in srcs.values():
                run(src, ["demo", "--out", "data/demo"], env)

        def once(rev: str) -> float:
            seconds = run(srcs[rev], argv, env)
            shutil.rmtree(out, ignore_errors=True)
            if not args.stage:
                return seconds
            cpu, nested = stage_cpu(work / "timings.json", args.stage)
            print(f"  {rev}: {args.stage} {cpu:.2f} s CPU (nested stages {nested:.2f} s)")
            return cpu

        for rev in srcs:  # warm-up: page cache, byte-compiled files
            once(rev)
        ratios, to_floor = [], {args.old: [], args.new: []}
        for r in range(args.rounds):
            order = (args.old, args.new) if r % 2 == 0 else (args.new, args.old)
            t = {rev: once(rev) for rev in order}
            ratios.append(t[args.new] / t[args.old])
            line = f"{args.old} {t[args.old]:.2f} s, {args.new} {t[args.new]:.2f} s"
            if args.stage:
                floor = floor_cpu(work / "files.txt")
                for rev in t:
                    to_floor[rev].append(t[rev] / floor)
                line += f", read floor {floor:.2f} s (load {os.getloadavg()[0]:.1f})"
            if not args.stage:
                cpu = {rev: CPU[str(srcs[rev])][-1] for rev in t}
                line += f" (CPU {cpu[args.old]:.1f} s, {cpu[args.new]:.1f} s"
                line += f", load {os.getloadavg()[0]:.1f})"
            print(f"round {r + 1}: {line}, ratio {ratios[-1]:.3f}", flush=True)
        print(f"median ratio {args.new} / {args.old}: {statistics.median(ratios):.3f}")
        for rev, xs in to_floor.items():
            if xs:
                print(f"median ratio {rev} {args.stage} / read floor: {statistics.median(xs):.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
