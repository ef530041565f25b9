"""The uncertainty section on its own: time, CPU and peak memory of the pipeline's bootstrap
and of the gate's recomputation, on the demo grown K× in memory.

Usage::

    .venv/bin/searchgen-nb data releases/demo.yml --out /tmp/sgbench/demo-data
    .venv/bin/python benchmarks/bench_bootstrap.py /tmp/sgbench/demo-data --prompts 1 --rounds 5
    .venv/bin/python benchmarks/bench_bootstrap.py /tmp/sgbench/demo-data --prompts 103 --rounds 1
    .venv/bin/python benchmarks/bench_bootstrap.py DATA --against ../other/.venv/bin/python

Each measurement runs in a fresh process (``--part core`` / ``--part validator``, rounds
interleaved) that reads the demo's ``prompt_scores.jsonl``, grows it (copy c ≥ 2 of prompt p
is ``{p}-k{c}``, same metadata and scores: the same strata, tags and slices, K× larger; 103 ≈
1M pairs), aggregates it, then times only the bootstrap (wall and CPU seconds, threads
included); the process's peak RSS (VmHWM) is reported next to its RSS just before the
bootstrap. ``--against PYTHON`` runs every part with that interpreter too (another checkout's
environment) in the same rounds and adds the median of the per-round ratios (this checkout /
the other). Prints one JSON line per run and a summary (medians). Unlike ``bench_scale.py``
this imports the package: it measures one stage, not the command.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _rss_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _grown_records(folder: Path, k: int) -> list[dict]:
    with (folder / "prompt_scores.jsonl").open(encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    out = list(records)
    for c in range(2, k + 1):
        out += [
            {**r, "sample_id": f"{r['sample_id']}-k{c}", "release_row": f"{r['release_row']}-k{c}"}
            for r in records
        ]
    out.sort(key=lambda r: r["sample_id"])
    for i, r in enumerate(out):
        r["prompt_index"] = i
    return out


def run_part(folder: Path, k: int, part: str, n_bootstrap: int) -> dict:
    from searchgen_nb.aggregate import ModelMeta, leaderboards
    from searchgen_nb.config import SliceConfig, UncertaintyConfig
    from searchgen_nb.slices import manifest_slices, slice_members, slice_specs
    from searchgen_nb.table import ReleaseTable

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    records = _grown_records(folder, k)
    models, about = manifest["model_order"], manifest["models"]
    named = manifest["evaluation_slices"]["named"]
    slices = {
        n: SliceConfig(field=s.get("field", "subset"), include=s["include_tags"], match=s["match"])
        for n, s in named.items()
    }
    cfg = UncertaintyConfig(n_bootstrap=n_bootstrap)
    metas = [
        ModelMeta(m, about[m]["display_name"], about[m]["type"], about[m]["missing_policy"])
        for m in models
    ]
    decimals = manifest["scoring"]["public_rounding_decimals"]
    if part == "core":
        from searchgen_nb.uncertainty import uncertainty

        table = ReleaseTable.from_records(records, models)
        del records
        members = slice_members(table.prompts, slice_specs(slices, table.n_prompts))
        coverage = manifest["scoring"]["min_ranking_coverage"]
        boards = leaderboards(table, metas, coverage, decimals, models, members)
        zero_fill = {m.model_id: m.missing_policy == "zero_fill" for m in metas}
        before = _rss_mb("VmRSS")
        t0, c0 = time.perf_counter(), time.process_time()
        uncertainty(table, zero_fill, boards, members, cfg, decimals)
    else:
        from searchgen_nb.gate.bootstrap import reconstruct_uncertainty
        from searchgen_nb.gate.checks import reconstruct
        from searchgen_nb.gate.columns import Columns, slice_prompts

        grown = dict(manifest)
        table_prompts = [{k2: v for k2, v in r.items() if k2 != "models"} for r in records]
        specs = slice_specs(slices, len(records))
        grown.update(manifest_slices(specs, slice_members(table_prompts, specs), table_prompts))
        settings = {"n_bootstrap": n_bootstrap, "seed": 0, "confidence": 0.95}
        grown["config"] = {**manifest["config"], "uncertainty": settings}
        cols = Columns.from_records(grown, records)
        boards = reconstruct(grown, records)
        del records, table_prompts
        before = _rss_mb("VmRSS")
        t0, c0 = time.perf_counter(), time.process_time()
        reconstruct_uncertainty(grown, cols, boards, slice_prompts)
    return {
        "part": part,
        "prompts_x": k,
        "n_bootstrap": n_bootstrap,
        "seconds": round(time.perf_counter() - t0, 3),
        "cpu_s": round(time.process_time() - c0, 3),
        "rss_before_mb": round(before, 1),
        "peak_rss_mb": round(_rss_mb("VmHWM"), 1),
    }


def _summary(rows: list[dict]) -> dict:
    return {
        "median_s": statistics.median(r["seconds"] for r in rows),
        "median_cpu_s": statistics.median(r["cpu_s"] for r in rows),
        "max_peak_rss_mb": max(r["peak_rss_mb"] for r in rows),
        "median_rss_before_mb": statistics.median(r["rss_before_mb"] for r in rows),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path, help="a published demo folder (data … --out DIR)")
    ap.add_argument("--prompts", type=int, default=1, help="grow the prompts K×")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n-bootstrap", type=int, default=10_000)
    ap.add_argument("--against", metavar="PYTHON", help="also run every part with this interpreter")
    ap.add_argument("--part", choices=("core", "validator"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.part:
        print(json.dumps(run_part(args.data, args.prompts, args.part, args.n_bootstrap)))
        return
    pythons = {"this": sys.executable, **({"other": args.against} if args.against else {})}
    results: dict[str, list[dict]] = {}
    for _ in range(args.rounds):
        for part in ("core", "validator"):  # interleaved
            for who, python in pythons.items():
                cmd = [
                    python,
                    __file__,
                    str(args.data),
                    "--prompts",
                    str(args.prompts),
                    "--n-bootstrap",
                    str(args.n_bootstrap),
                    "--part",
                    part,
                ]
                proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
                row = {"python": who, **json.loads(proc.stdout.strip().splitlines()[-1])}
                print(json.dumps(row), flush=True)
                results.setdefault(f"{who} {part}", []).append(row)
    summary = {key: _summary(rows) for key, rows in results.items()}
    for part in ("core", "validator") if args.against else ():
        pairs = list(zip(results[f"this {part}"], results[f"other {part}"]))
        summary[f"ratio {part}"] = {
            k: round(statistics.median(a[k] / b[k] for a, b in pairs), 3)
            for k in ("seconds", "cpu_s")
        }
    print(
        json.dumps({"summary": summary, "prompts_x": args.prompts, "n_bootstrap": args.n_bootstrap})
    )


if __name__ == "__main__":
    main()
