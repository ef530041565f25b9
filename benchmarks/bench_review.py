"""How big a review is: the git diff of the executed notebooks between two demo releases that
differ by a small realistic change, and the weight of the heaviest page of the book.

Usage::

    .venv/bin/python benchmarks/bench_review.py --work /tmp/sgbench/review

Steps (``SOURCE_DATE_EPOCH`` fixed, as the README's "Review a change" flow): the demo's inputs;
its release with the book (``r1``); the changed demo (``demo --changed``: one model lower on 5
prompts of one domain, two results of another model lost) with ``previous_release`` naming
``r1/public/data``; its release with the book (``r2``). Prints one JSON object: the diff's bytes
per notebook and in all, the longest changed line, the changed lines that name no model, the
changed chart-data lines that do not name both their model and their group, the changed lines
holding a path or a timestamp, and the heaviest HTML page. The time ``SOURCE_DATE_EPOCH`` names
(the previous release's ``generated_at`` on the What changed page) is no timestamp here: it
is the same on every rerun.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

BIN = Path(sys.executable).parent
#: A folder of this machine or a moment of the run (an ISO time of day, the release's stamp).
VOLATILE = re.compile(
    r"/tmp/|/dev/shm/|/home/|/root/|release_config|\d{4}-\d\d-\d\dT\d\d:\d\d"
    r"|release-\d{8}T\d{6}"
)
#: A line of chart data in a notebook: a JSON string holding one JSON record.
CHART_LINE = re.compile(r'^[+-]\s*"\{\\"')


def run(*args: str, env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(
        [str(BIN / "searchgen-nb"), *args], check=True, env=env, stdout=subprocess.DEVNULL
    )
    return round(time.perf_counter() - t, 1)


def releases(work: Path, epoch: str) -> dict:
    """The two releases below ``work`` (emptied first); their seconds."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = {**os.environ, "SOURCE_DATE_EPOCH": epoch}
    run("demo", "--out", str(work / "demo"), env=env)
    first = run(
        "release", str(work / "demo" / "release.yml"), "--output-root", str(work / "r1"), env=env
    )
    run(
        "demo",
        "--out",
        str(work / "demo-changed"),
        "--changed",
        "--previous",
        str(work / "r1" / "public" / "data"),
        env=env,
    )
    second = run(
        "release",
        str(work / "demo-changed" / "release.yml"),
        "--output-root",
        str(work / "r2"),
        env=env,
    )
    return {"first_release_s": first, "second_release_s": second}


def git_diff(a: Path, b: Path) -> str:
    proc = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", a.resolve(), b.resolve()],
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)
    return proc.stdout


def names(data: Path) -> tuple[set[str], set[str]]:
    """(model ids and display names, group names: "All", strata, tags and slices)."""
    manifest = json.loads((data / "manifest.json").read_text(encoding="utf-8"))
    models = {m for mid, meta in manifest["models"].items() for m in (mid, meta["display_name"])}
    groups = {"All"}
    for path in data.glob("leaderboard_by_*.json"):
        groups |= set(json.loads(path.read_text(encoding="utf-8")))
    return models, groups


def measure(work: Path, epoch: str) -> dict:
    r1, r2 = work / "r1", work / "r2"
    stable = datetime.fromtimestamp(int(epoch), UTC).isoformat()
    models, groups = names(r2 / "public" / "data")
    per_notebook, changed = {}, []
    for nb in sorted((r2 / "book" / "notebooks").glob("*.ipynb")):
        text = git_diff(r1 / "book" / "notebooks" / nb.name, nb)
        per_notebook[nb.name] = len(text.encode())
        changed += [
            line
            for line in text.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
    chart = [line for line in changed if CHART_LINE.match(line)]
    pages = {
        str(p.relative_to(r2 / "_build" / "html")): p.stat().st_size
        for p in (r2 / "_build" / "html").rglob("*.html")
    }
    heaviest = max(pages, key=pages.get)
    return {
        "notebooks_diff_bytes": sum(per_notebook.values()),
        "notebooks_diff_bytes_by_notebook": {k: v for k, v in per_notebook.items() if v},
        "changed_lines": len(changed),
        "longest_changed_line": max(map(len, changed), default=0),
        "changed_lines_naming_no_model": sum(
            not any(m in line for m in models) for line in changed
        ),
        "chart_data_lines": len(chart),
        "chart_data_lines_without_model_and_group": sum(
            not (any(m in line for m in models) and any(g in line for g in groups))
            for line in chart
        ),
        "changed_lines_with_path_or_timestamp": sum(
            bool(VOLATILE.search(line.replace(stable, ""))) for line in changed
        ),
        "public_data_diff_bytes": len(
            git_diff(r1 / "public" / "data", r2 / "public" / "data").encode()
        ),
        "heaviest_page": heaviest,
        "heaviest_page_bytes": pages[heaviest],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/sgbench/review"))
    parser.add_argument("--epoch", default="1700000000", help="SOURCE_DATE_EPOCH of both")
    parser.add_argument(
        "--measure-only", action="store_true", help="measure the releases already in --work"
    )
    args = parser.parse_args()
    timing = {} if args.measure_only else releases(args.work, args.epoch)
    print(json.dumps({**measure(args.work, args.epoch), **timing}, indent=1))


if __name__ == "__main__":
    main()
