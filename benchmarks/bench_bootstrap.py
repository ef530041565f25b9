"""The uncertainty section (SPEC §8) on its own: time and peak memory of the pipeline's
bootstrap and of the validator's recomputation, on the demo grown K× in memory.

Usage::

    .venv/bin/searchgen-nb data releases/demo.yml --out /tmp/sgbench/demo-data
    .venv/bin/python benchmarks/bench_bootstrap.py /tmp/sgbench/demo-data --prompts 1 --rounds 5
    .venv/bin/python benchmarks/bench_bootstrap.py /tmp/sgbench/demo-data --prompts 103 --rounds 1   # 1,005,589 pairs

Each measurement runs in a fresh process (``--part core`` / ``--part validator``, rounds
interleaved) that reads the demo's ``prompt_scores.jsonl``, grows it (copy c ≥ 2 of prompt p
is ``{p}-k{c}``, same metadata and scores: the same strata, tags and slices, K× larger),
aggregates it, then times only the bootstrap; the process's peak RSS (VmHWM) is reported
next to its RSS just before the bootstrap. Prints one JSON line per run and a summary
(medians) at the end. Unlike ``bench_scale.py`` this imports the package: it measures one
stage, not the command.
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
    records = [json.loads(line) for line in (folder / "prompt_scores.jsonl").open(encoding="utf-8")]
    out = []
    for c in range(1, k + 1):
        for r in records:
            out.append(r if c == 1 else {**r, "sample_id": f"{r['sample_id']}-k{c}", "release_row": f"{r['release_row']}-k{c}"})
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
    models = manifest["model_order"]
    named = manifest["evaluation_slices"]["named"]
    slices = {n: SliceConfig(field=s.get("field", "subset"), include=s["include_tags"], match=s["match"]) for n, s in named.items()}
    cfg = UncertaintyConfig(n_bootstrap=n_bootstrap)
    metas = [ModelMeta(m, manifest["models"][m]["display_name"], manifest["models"][m]["type"], manifest["models"][m]["missing_policy"]) for m in models]
    decimals = manifest["scoring"]["public_rounding_decimals"]
    if part == "core":
        table = ReleaseTable.from_records(records, models)
        del records
        specs = slice_specs(slices, table.n_prompts)
        members = slice_members(table.prompts, specs)
        boards = leaderboards(table, metas, manifest["scoring"]["min_ranking_coverage"], decimals, models, members)
        from searchgen_nb.uncertainty import uncertainty

        before = _rss_mb("VmRSS")
        t0 = time.perf_counter()
        uncertainty(table, {m.model_id: m.missing_policy == "zero_fill" for m in metas}, boards, members, cfg, decimals)
    else:
        from searchgen_nb.validate import _Columns, _slice_prompts, reconstruct
        from searchgen_nb.validate_bootstrap import reconstruct_uncertainty

        grown = dict(manifest)
        table_prompts = [{k2: v for k2, v in r.items() if k2 != "models"} for r in records]
        specs = slice_specs(slices, len(records))
        from searchgen_nb.slices import slice_members as members_of

        grown.update(manifest_slices(specs, members_of(table_prompts, specs), table_prompts))
        grown["config"] = {**manifest["config"], "uncertainty": {"n_bootstrap": n_bootstrap, "seed": 0, "confidence": 0.95}}
        cols = _Columns.from_records(grown, records)
        boards = reconstruct(grown, records)
        del records, table_prompts
        before = _rss_mb("VmRSS")
        t0 = time.perf_counter()
        reconstruct_uncertainty(grown, cols, boards, _slice_prompts)
    return {"part": part, "prompts_x": k, "n_bootstrap": n_bootstrap, "seconds": round(time.perf_counter() - t0, 3),
            "rss_before_mb": round(before, 1), "peak_rss_mb": round(_rss_mb("VmHWM"), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path, help="a published demo folder (searchgen-nb data releases/demo.yml --out DIR)")
    ap.add_argument("--prompts", type=int, default=1, help="grow the demo's prompts K× (103 ≈ 1M pairs)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n-bootstrap", type=int, default=10_000)
    ap.add_argument("--part", choices=("core", "validator"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.part:
        print(json.dumps(run_part(args.data, args.prompts, args.part, args.n_bootstrap)))
        return
    results: dict[str, list[dict]] = {"core": [], "validator": []}
    for _ in range(args.rounds):
        for part in ("core", "validator"):  # interleaved
            proc = subprocess.run([sys.executable, __file__, str(args.data), "--prompts", str(args.prompts), "--n-bootstrap", str(args.n_bootstrap), "--part", part],
                                  capture_output=True, text=True, check=True)
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            print(json.dumps(row), flush=True)
            results[part].append(row)
    summary = {part: {"median_s": statistics.median(r["seconds"] for r in rows), "max_peak_rss_mb": max(r["peak_rss_mb"] for r in rows),
                      "median_rss_before_mb": statistics.median(r["rss_before_mb"] for r in rows)} for part, rows in results.items()}
    print(json.dumps({"summary": summary, "prompts_x": args.prompts, "n_bootstrap": args.n_bootstrap}))


if __name__ == "__main__":
    main()
