"""What the check ``lost_results`` costs the release gate: ``validate_folder`` on one published
data folder without and with a previous release (the folder itself), in interleaved rounds;
prints the median of each and the median of the per-round ratios (with / without).

    .venv/bin/python benchmarks/bench_lost_results.py DATA_DIR [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from searchgen_nb.gate.checks import validate_folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    plain, guarded = [], []
    for _ in range(args.rounds):
        for times, previous in ((plain, None), (guarded, args.data_dir)):
            t = time.perf_counter()
            report = validate_folder(args.data_dir, previous=previous)
            times.append(time.perf_counter() - t)
            assert report.passed, report.summary()
    ratio = statistics.median(g / p for g, p in zip(guarded, plain))
    print(
        f"without previous release: {statistics.median(plain):.2f} s; with: "
        f"{statistics.median(guarded):.2f} s; median ratio {ratio:.3f}"
    )


if __name__ == "__main__":
    main()
