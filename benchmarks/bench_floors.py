"""``searchgen-nb data`` against two floors, measured in one interleaved run.

Usage::

    .venv/bin/python benchmarks/bench_floors.py RELEASE.yml [--rounds 5]

Each round runs three fresh processes, in an order that rotates from round to round:

* **read floor**: reads every result file of the release and ``json.loads`` it — what any
  implementation of ``data`` does at least;
* **bootstrap floor**: the data contract's stratified draws (§ Uncertainty) with numpy, then
  every group × model replicate Overall-9 mean and its percentile interval in plain float64
  (groups: All, the four strata and search types, every domain and failure-mode tag; no exact
  settlement, ranks or pairs) — the floor of the ``uncertainty`` stage, and of the gate's
  recomputation of it inside the ``validate`` stage;
* ``searchgen-nb data RELEASE.yml --out TMP --timings T.json``: wall time and its stages.

Reported: the per-round ratios data / read floor, uncertainty / bootstrap floor and
validate / bootstrap floor, and the median of each over the rounds. The floors read the
release's files and the ``prompt_scores.jsonl`` of an untimed first ``data`` run (which also
warms the page cache). The package is not imported: the pipeline runs through its command line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LEAVES = ("NoSearch", "VisualSearch", "TextualSearch")


def read_floor(list_path: str) -> None:
    """Read and parse every file named in ``list_path`` (one path a line)."""
    for path in Path(list_path).read_text(encoding="utf-8").splitlines():
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            json.loads(data)
        except ValueError:  # a broken result file is read all the same
            pass


def bootstrap_floor(folder: str) -> None:
    """Plain float64 stratified bootstrap of every group's Overall-9 (see the module doc)."""
    import numpy as np

    manifest = json.loads(Path(folder, "manifest.json").read_text(encoding="utf-8"))
    settings = manifest["config"]["uncertainty"]
    n_boot, alpha = settings["n_bootstrap"], 1 - settings["confidence"]
    models = manifest["model_order"]
    zero_fill = np.array([manifest["models"][m]["missing_policy"] == "zero_fill" for m in models])
    with open(Path(folder, "prompt_scores.jsonl"), encoding="utf-8") as fh:
        records = sorted((json.loads(line) for line in fh), key=lambda r: r["sample_id"])
    order = [r for leaf in LEAVES for r in records if r["search_type"] == leaf]
    values = (
        np.array(
            [
                [np.nan if (v := r["models"][m]["overall_9_raw"]) is None else v for m in models]
                for r in order
            ]
        )
        * 100
        / 3
    )
    scored = np.array([[r["models"][m]["status"] == "scored" for m in models] for r in order])
    include = (scored & ~np.isnan(values)) | (~scored & zero_fill)
    x = np.where(include, np.nan_to_num(values), 0.0)
    rng = np.random.default_rng(settings["seed"])
    counts = np.zeros((n_boot, len(order)))
    start = 0
    for leaf in LEAVES:
        n_s = sum(r["search_type"] == leaf for r in order)
        if n_s:
            idx = rng.integers(0, n_s, size=(n_boot, n_s))
            flat = (idx + np.arange(n_boot)[:, None] * n_s).ravel()
            counts[:, start : start + n_s] = np.bincount(flat, minlength=n_boot * n_s).reshape(
                n_boot, n_s
            )
            start += n_s
    groups: dict[str, list[int]] = {"All": list(range(len(order)))}
    for i, r in enumerate(order):
        keys = [
            r["stratum"],
            r["search_type"],
            *("d:" + t for t in r["domains"]),
            *("f:" + t for t in r["failure_modes"]),
        ]
        for key in dict.fromkeys(keys):
            groups.setdefault(key, []).append(i)
    for members in groups.values():
        c = counts[:, members]
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (c @ x[members]) / (c @ include[members])
        np.nanquantile(means, [alpha / 2, 1 - alpha / 2], axis=0, method="inverted_cdf")


def list_result_files(config: Path, published: Path, out: Path) -> None:
    """The result files the published release read, one path a line (from its records)."""
    import yaml

    cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    root = config.parent / os.path.expandvars(cfg["results_root"])
    paths = []
    with open(published / "prompt_scores.jsonl", encoding="utf-8") as fh:
        for line in fh:
            for entry in json.loads(line)["models"].values():
                if entry["result_file"] and (root / entry["result_file"]).is_file():
                    paths.append(str(root / entry["result_file"]))
    out.write_text("\n".join(sorted(paths)) + "\n", encoding="utf-8")


def timed(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--rounds", type=int, default=5)
    # the command of this interpreter's environment (the venv running the benchmark)
    here = Path(sys.executable).with_name("searchgen-nb")
    ap.add_argument("--searchgen", default=str(here) if here.exists() else "searchgen-nb")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-floors-"))
    try:
        first = work / "first"
        subprocess.run(
            [args.searchgen, "data", args.config, "--out", str(first)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        list_result_files(Path(args.config), first, work / "files.txt")
        me = [sys.executable, __file__]
        runs = {
            "read": lambda: timed([*me, "_read", str(work / "files.txt")]),
            "boot": lambda: timed([*me, "_boot", str(first)]),
            "data": lambda: _data(args, work),
        }
        rows = []
        for k in range(args.rounds):
            names = list(runs)[k % 3 :] + list(runs)[: k % 3]
            got = {name: runs[name]() for name in names}
            data_s, stages = got["data"]
            rows.append({"read": got["read"], "boot": got["boot"], "data": data_s, **stages})
            print(json.dumps(rows[-1]), file=sys.stderr)
        report(rows, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _data(args, work: Path) -> tuple[float, dict]:
    out, timings = work / "out", work / "timings.json"
    shutil.rmtree(out, ignore_errors=True)
    wall = timed(
        [args.searchgen, "data", args.config, "--out", str(out), "--timings", str(timings)]
    )
    stages = json.loads(timings.read_text(encoding="utf-8"))["stages"]
    return wall, {k: v["wall_s"] if isinstance(v, dict) else v for k, v in stages.items()}


def report(rows: list[dict], args) -> None:
    def med(key_a, key_b):
        return statistics.median(r[key_a] / r[key_b] for r in rows)

    load = os.getloadavg()[0]
    print(f"{args.config}: {len(rows)} interleaved rounds, load average {load:.1f}\n")
    print("| measure | median s | median ratio to its floor |\n|---|---|---|")
    print(f"| read floor | {statistics.median(r['read'] for r in rows):.2f} | |")
    print(f"| bootstrap floor | {statistics.median(r['boot'] for r in rows):.2f} | |")
    print(
        f"| `data` | {statistics.median(r['data'] for r in rows):.2f} | "
        f"{med('data', 'read'):.2f}× read |"
    )
    for stage in ("uncertainty", "validate"):
        print(
            f"| stage {stage} | {statistics.median(r[stage] for r in rows):.2f} | "
            f"{med(stage, 'boot'):.2f}× bootstrap |"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["_read"]:
        read_floor(sys.argv[2])
    elif sys.argv[1:2] == ["_boot"]:
        bootstrap_floor(sys.argv[2])
    else:
        raise SystemExit(main())
