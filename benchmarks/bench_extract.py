"""Extraction speed against its floor: reading and JSON-parsing the same result files.

Usage: ``.venv/bin/python benchmarks/bench_extract.py [CONFIG]`` (default: releases/demo.yml;
the demo data is generated first when absent). Prints the best of ``--repeat`` runs of

* floor: a plain loop that opens, reads and ``json.loads`` every existing result file;
* extract: ``searchgen_nb.records.extract_records`` (status, components, overalls, hashes);
* data: the whole ``searchgen-nb data`` work (extract, aggregate, write, validate).

Target (issue 2): extract within 1.5× of the floor. Both loops read warm files (one untimed
warm-up pass), so the figures compare CPU work, not the disk.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from searchgen_nb.config import load_config, project_root
from searchgen_nb.pipeline import run_data
from searchgen_nb.prompts import read_prompts
from searchgen_nb.records import extract_records, result_file


def floor(paths: list[str]) -> int:
    n = 0
    for p in paths:
        try:
            with open(p, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            continue
        try:
            json.loads(data)
        except ValueError:
            pass
        n += 1
    return n


def best(fns, repeat: int) -> list[float]:
    """Best time of each function over ``repeat`` rounds, the functions interleaved in every
    round so that a slow spell of the machine hits all of them alike."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
    return [min(t) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", nargs="?", default=str(project_root() / "releases" / "demo.yml"))
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    cfg = load_config(args.config)
    if not cfg.dataset_path.exists() and cfg.data_origin == "synthetic-demo":
        from searchgen_nb.demo import write_demo

        write_demo(cfg.dataset_path.parent)
    prompts = read_prompts(cfg.dataset_path)
    root = str(cfg.results_root_path)
    paths = [os.path.join(root, result_file(cfg, p, m)) for m in cfg.models for p in prompts.prompts]
    n = floor(paths)  # warm-up
    extract_records(cfg, prompts, progress=False)
    t_floor, t_extract = best(
        [lambda: floor(paths), lambda: extract_records(cfg, read_prompts(cfg.dataset_path), progress=False)], args.repeat
    )
    out = Path(tempfile.mkdtemp())
    (t_data,) = best([lambda: run_data(cfg, out / "data", progress=False)], max(1, args.repeat // 2))
    shutil.rmtree(out)
    print(f"{len(paths)} prompt × model pairs, {n} result files ({os.cpu_count()} cores)")
    print(f"floor   read + json.loads        {t_floor:6.3f} s")
    print(f"extract extract_records          {t_extract:6.3f} s  ({t_extract / t_floor:.2f}× floor; target ≤ 1.5×)")
    print(f"data    searchgen-nb data (all)  {t_data:6.3f} s")


if __name__ == "__main__":
    main()
