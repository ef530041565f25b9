"""What the bounded figures of a release cost: ``searchgen-nb data`` on variants of the demo,
each with the estimate of :mod:`searchgen_nb.bounds` beside its measured wall time and peak RSS.

Usage::

    .venv/bin/searchgen-nb demo --out /tmp/sgbench/demo
    .venv/bin/python benchmarks/bench_bounds.py /tmp/sgbench/demo --work /tmp/sgbench/bounds \\
        demo slices:200 tags1:1000 models:4 models:8/2500

Variants (``NAME:K``, optionally ``/B`` for n_bootstrap; default the demo's 10,000):

* ``demo``: the demo as it is (751 prompts × 13 models);
* ``slices:K``: the demo plus K slices, slice i holding the prompts of domain tag i mod 22;
* ``tags1:K``: one prompt of the demo (its first) carrying K domain tags;
* ``models:K``: every model K times (model ``{id}_k{c}`` reads copies of its result files);
* ``config:PATH``: the release config at PATH as it is (e.g. one ``make_scale.py`` wrote: many
  prompts, many models), ``/B`` still sets n_bootstrap.

The variant's config drops ``expected`` and the paper table (their counts no longer hold). One
JSON line per run: the variant, the :class:`searchgen_nb.bounds.Work` figures and whether they
are within bounds, exit code, wall seconds, peak RSS (MiB) and the stage timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml


def _base_config(demo: Path) -> dict:
    cfg = yaml.safe_load((demo / "release.yml").read_text(encoding="utf-8"))
    for key in ("expected", "paper_table"):
        cfg.pop(key, None)
    cfg["dataset"] = str(demo / cfg["dataset"])
    cfg["results_root"] = str(demo / cfg["results_root"])
    for spec in (cfg.get("slices") or {}).values():
        spec.pop("expected_rows", None)
    return cfg


def _copy_models(demo: Path, cfg: dict, k: int, work: Path) -> None:
    """Every model k times: copies of its result folders under a new source_id (hard links are
    refused by the pipeline, so the files are copied)."""
    root = Path(cfg["results_root"])
    models = {}
    for mid, m in cfg["models"].items():
        models[mid] = m
        for c in range(2, k + 1):
            models[f"{mid}_k{c}"] = {
                **m,
                "display_name": f"{m['display_name']} k{c}",
                "source_id": f"{m['source_id']}-k{c}",
                "generator_name": m["source_id"],
            }
    new_root = work / "results"
    if not new_root.exists():
        shutil.copytree(root, new_root)
        sources = {m["source_id"] for m in cfg["models"].values()}
        for src in [d for d in new_root.rglob("*") if d.is_dir() and d.name in sources]:
            for c in range(2, k + 1):
                shutil.copytree(src, src.with_name(f"{src.name}-k{c}"))
    cfg["results_root"] = str(new_root)
    cfg["models"] = models


def variant(demo: Path, spec: str, work: Path) -> Path:
    """Write the variant's config (and data) into ``work``; return the config path."""
    name, _, rest = spec.partition(":")
    k_text, slash, b_text = rest.rpartition("/")
    if not slash or not b_text.isdigit():  # no /B (a path's slashes are no B)
        k_text, b_text = rest, ""
    work.mkdir(parents=True, exist_ok=True)
    if name == "config":
        cfg = yaml.safe_load(Path(k_text).read_text(encoding="utf-8"))
        for key in ("dataset", "results_root", "paper_table"):
            if key in cfg:
                cfg[key] = str((Path(k_text).parent / cfg[key]).resolve())
        if b_text:
            cfg.setdefault("uncertainty", {})["n_bootstrap"] = int(b_text)
        path = work / "release.yml"
        path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
        return path
    k = int(k_text or 0)
    cfg = _base_config(demo)
    if b_text:
        cfg.setdefault("uncertainty", {})["n_bootstrap"] = int(b_text)
    if name == "slices":
        tags = sorted(
            {
                t
                for line in open(cfg["dataset"], encoding="utf-8")
                for t in json.loads(line)["domains"]
            }
        )
        cfg["slices"] = {
            **cfg.get("slices", {}),
            **{f"s{i}": {"field": "domains", "include": [tags[i % len(tags)]]} for i in range(k)},
        }
    elif name == "tags1":
        first = json.loads(open(cfg["dataset"], encoding="utf-8").readline())
        first["domains"] = [f"T{i}" for i in range(k)]
        (work / "prompts.jsonl").write_text(json.dumps(first) + "\n", encoding="utf-8")
        cfg["dataset"] = str(work / "prompts.jsonl")
        cfg.pop("slices", None)
    elif name == "models":
        _copy_models(demo, cfg, k, work)
    elif name != "demo":
        raise SystemExit(f"unknown variant {spec}")
    path = work / "release.yml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def estimate(config: Path) -> dict:
    from searchgen_nb.bounds import preflight
    from searchgen_nb.config import load_config
    from searchgen_nb.errors import ConfigError
    from searchgen_nb.prompts import read_prompts

    cfg = load_config(config)
    try:
        w = preflight(cfg, read_prompts(cfg.dataset_path))
        ok = True
    except ConfigError:
        from searchgen_nb.bounds import measure
        from searchgen_nb.records import prompt_record
        from searchgen_nb.slices import slice_members, slice_specs

        prompts = [
            prompt_record(p, i) for i, p in enumerate(read_prompts(cfg.dataset_path).prompts)
        ]
        w = measure(cfg, prompts, slice_members(prompts, slice_specs(cfg.slices, len(prompts))))
        ok = False
    return {
        "within_bounds": ok,
        "values": w.values,
        "comparisons": w.comparisons,
        "draw_sums": w.draw_sums,
        "rows": w.rows,
        "pairs": w.pairs,
        "row_prompts": w.row_prompts,
        "published_bytes": w.published_bytes,
    }


#: ``searchgen-nb`` with the bounds lifted, the pipeline's and the gate's (``--unbounded``: to
#: measure beyond them).
_UNBOUNDED = (
    "import sys, searchgen_nb.bounds, searchgen_nb.gate.work\n"
    "for b in (searchgen_nb.bounds, searchgen_nb.gate.work):\n"
    "    b.MAX_VALUES = b.MAX_COMPARISONS = b.MAX_DRAW_SUMS = 10**30\n"
    "    b.MAX_ROWS = b.MAX_PUBLISHED_BYTES = b.MAX_PAIRS = b.MAX_ROW_PROMPTS = 10**30\n"
    "from searchgen_nb.cli import main; sys.argv[0] = 'searchgen-nb'; main()"
)


def run(config: Path, out: Path, unbounded: bool) -> dict:
    timings = out.with_suffix(".timings.json")
    head = (
        [sys.executable, "-c", _UNBOUNDED]
        if unbounded
        else [str(Path(sys.executable).with_name("searchgen-nb"))]
    )
    cmd = [
        *head,
        "data",
        str(config),
        "--out",
        str(out),
        "--no-progress",
        "--timings",
        str(timings),
    ]
    timings.unlink(missing_ok=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    res = {
        "exit": proc.returncode,
        "wall_s": round(time.perf_counter() - t0, 1),
        "stderr": proc.stderr.strip()[-300:],
    }
    if timings.exists():
        t = json.loads(timings.read_text())
        res["peak_rss_mib"] = t["peak_rss_mb"]
        res["stages"] = {k: v["wall_s"] for k, v in t["stages"].items()}
        res["stages_cpu"] = {k: v["cpu_s"] for k, v in t["stages"].items()}
        res["cpu_s"] = round(sum(res["stages_cpu"].values()), 1)
    shutil.rmtree(out, ignore_errors=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("demo", type=Path, help="a folder written by searchgen-nb demo --out")
    ap.add_argument("variants", nargs="+")
    ap.add_argument(
        "--work", type=Path, required=True, help="folder for the variants' configs and data"
    )
    ap.add_argument(
        "--unbounded", action="store_true", help="lift the bounds (to measure what they refuse)"
    )
    args = ap.parse_args()
    for spec in args.variants:
        work = args.work / spec.replace(":", "_").replace("/", "_b").replace(".", "_")
        config = variant(args.demo.resolve(), spec, work)
        line = {"variant": spec, "load": round(os.getloadavg()[0], 1), **estimate(config)}
        line.update(run(config, work / "out", args.unbounded))
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
