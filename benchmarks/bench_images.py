"""What the thumbnails of a real-image release cost (data contract, § Prompt evidence and
thumbnails), in interleaved rounds on a release ``make_images.py`` wrote, medians of per-round
ratios. Each round:

1. the decode floor: Pillow's bare decode (``Image.open(path).load()``) of every image, on a
   process per core;
2. the first release: ``searchgen-nb data release.yml --thumb-cache RUNS/cache`` with the cache
   emptied; its image work is the ``thumbnails`` stage of ``--timings``;
3. a re-release after ``--changed`` images were replaced by other pictures:
   ``data release-again.yml`` (``previous_release``: the first) with the same cache;
4. the same re-release with images off (``release-off.yml``);
5. the first release with images off, so that the image work's CPU time (the first release's
   less this one's, every process counted) can be set against the floor's: on a shared machine
   a steadier figure than the wall times.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_images.py build/bench/images [--rounds 3]

Targets: first-release image work ≤ 1.3× the floor; re-release ≤ 1.5× images off.
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
import time
from multiprocessing import Pool
from pathlib import Path

import yaml
from make_images import distinct, image_paths, picture
from PIL import Image


def decode(path: Path) -> None:
    with Image.open(path) as im:
        im.load()


def cpu() -> float:
    """CPU seconds (user and system) of this process and its ended children so far."""
    return sum(
        r.ru_utime + r.ru_stime
        for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )


def floor(paths: list[Path]) -> tuple[float, float]:
    """Wall and CPU seconds of the bare decode of ``paths`` on a process per core."""
    start, before = time.perf_counter(), cpu()
    with Pool(len(os.sched_getaffinity(0))) as pool:
        for _ in pool.imap_unordered(decode, paths, chunksize=8):
            pass
        pool.close()
        pool.join()
    return time.perf_counter() - start, cpu() - before


def data(config: Path, out: Path, *extra: str) -> dict:
    """``searchgen-nb data`` as a user runs it: wall seconds and the stages' timings."""
    exe = Path(sys.executable).with_name("searchgen-nb")
    timings = out.with_name(out.name + ".timings.json")
    start, before = time.perf_counter(), cpu()
    subprocess.run(
        [
            str(exe),
            "data",
            str(config),
            "--out",
            str(out),
            "--no-progress",
            "--timings",
            str(timings),
            *extra,
        ],
        check=True,
        capture_output=True,
        env={**os.environ, "SOURCE_DATE_EPOCH": "1700000000"},
    )
    wall, used = time.perf_counter() - start, cpu() - before
    return {"wall": wall, "cpu": used, **json.loads(timings.read_text())["stages"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--changed", type=int, default=10)
    args = ap.parse_args()
    src = args.folder / "src"
    cfg = yaml.safe_load((src / "release.yml").read_text(encoding="utf-8"))
    again = yaml.safe_load((src / "release-again.yml").read_text(encoding="utf-8"))
    runs = Path(again["previous_release"]).parent  # outside the project: data never writes there
    runs.mkdir(parents=True, exist_ok=True)
    cache = runs / "cache"
    first_off = src / "release-first-off.yml"  # beside the inputs its paths are relative to
    first_off.write_text(
        yaml.safe_dump({**cfg, "evidence": {"thumbnails": False}}, sort_keys=False),
        encoding="utf-8",
    )
    paths = image_paths(src, [m["source_id"] for m in cfg["models"].values()])
    step = len(paths) // args.changed
    changed = {
        p: (p.read_bytes(), distinct(picture(10_000 + n), 10**6 + n))
        for n, p in enumerate(paths[::step][: args.changed])
    }
    print(
        f"{len(paths)} images, {sum(p.stat().st_size for p in paths) / 2**30:.2f} GiB; "
        f"{len(os.sched_getaffinity(0))} cores; load {os.getloadavg()}",
        flush=True,
    )
    floor(paths)  # the page cache holds the images for every round
    rounds = []
    for r in range(args.rounds):
        for path, (before, _) in changed.items():
            path.write_bytes(before)
        shutil.rmtree(cache, ignore_errors=True)
        load = os.getloadavg()[0]
        bare, bare_cpu = floor(paths)
        first = data(src / "release.yml", runs / "first", "--thumb-cache", str(cache))
        for path, (_, after) in changed.items():
            path.write_bytes(after)
        again = data(src / "release-again.yml", runs / "again", "--thumb-cache", str(cache))
        off = data(src / "release-off.yml", runs / "off")
        plain = data(first_off, runs / "first-off")
        row = {
            "load": load,
            "floor": bare,
            "first": first["wall"],
            "first_images": first["thumbnails"]["wall_s"],
            "again": again["wall"],
            "again_images": again["thumbnails"]["wall_s"],
            "off": off["wall"],
            "floor_cpu": bare_cpu,
            "images_cpu": first["cpu"] - plain["cpu"],
        }
        row["images/floor"] = row["first_images"] / bare
        row["cpu images/floor"] = row["images_cpu"] / bare_cpu
        row["again/off"] = row["again"] / row["off"]
        rounds.append(row)
        print(f"round {r}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()), flush=True)
    for key in ("images/floor", "cpu images/floor", "again/off"):
        values = [row[key] for row in rounds]
        print(
            f"median {key}: {statistics.median(values):.3f} "
            f"({', '.join(f'{v:.3f}' for v in values)})"
        )
    for path, (before, _) in changed.items():
        path.write_bytes(before)


if __name__ == "__main__":
    main()
