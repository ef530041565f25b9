"""The book's downloads (``_build/html/downloads/``): every published artifact, and CSVs of the
leaderboards (with the tables' gap, interval, rank range, tie group), the pairwise tests and the
prompt × model pairs (raw 0–3 as they count). Null is empty; no cell reads as a formula; every
0–100 figure has the release's ``rounding_decimals`` places."""

from __future__ import annotations

import csv
import io
import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

from searchgen_nb.book.views import BOARD_FILES, in_rank_order, rank_gaps, tie_groups
from searchgen_nb.changes_markdown import counts_as
from searchgen_nb.constants import ARTIFACTS, MANIFEST, UNCERTAINTY, VALIDATION_REPORT
from searchgen_nb.declaration import COMPONENTS, declared
from searchgen_nb.numeric import figure_text
from searchgen_nb.records import read_records
from searchgen_nb.untrusted import csv_cell

#: Folder of the downloads below the built book's root.
FOLDER = "downloads"


def board_csv(name: str) -> str:
    """The CSV beside a leaderboard file: ``leaderboard_by_x.json`` → ``leaderboard_by_x.csv``."""
    return name.removesuffix(".json") + ".csv"


#: Leaderboard JSON file → its CSV.
CSV_FILES = {name: board_csv(name) for name in BOARD_FILES.values()}
#: Other artifacts with a CSV beside them.
EXTRA_CSV = {"uncertainty.json": "pairwise_tests.csv", "prompt_scores.jsonl": "prompt_scores.csv"}
_ROW_KEYS = (
    "rank",
    "ranked",
    "model_id",
    "display_name",
    "type",
    "missing_policy",
    "n_total",
    "n_scored",
    "n_included",
    "coverage",
    "overall_9",
)
_BOOK_KEYS = ("gap_to_next", "interval_low", "interval_high", "rank_low", "rank_high", "tie_group")


def _groups(name: str, data) -> list[tuple[tuple[str, ...], str | None, list[dict]]]:
    """``[(group key columns, uncertainty.json key, rows)]`` of one leaderboard file."""
    if name == "leaderboard_overall.json":
        return [(("All",), "all:All", data)]
    if name == "leaderboard_by_slice.json":
        out: list[tuple[tuple[str, ...], str | None, list[dict]]] = []
        for slice_name, boards in data.items():
            out.append(((slice_name, "overall", "All"), f"slice:{slice_name}", boards["overall"]))
            for kind in ("strata", "domains", "failure_modes"):
                out += [((slice_name, kind, g), None, rows) for g, rows in boards[kind].items()]
        return out
    kind = name.removeprefix("leaderboard_by_").removesuffix(".json")
    return [
        ((g,), "all:All" if (kind, g) == ("stratum", "All") else f"{kind}:{g}", rows)
        for g, rows in data.items()
    ]


def _figure(value: float | None, decimals: int) -> Decimal | None:
    """A 0–100 figure's cell: its text (:func:`~searchgen_nb.numeric.figure_text`, a plain
    minus) as a number, so that it keeps its places; None for null."""
    return None if value is None else Decimal(figure_text(value, decimals, minus="-"))


def _csv(header: list[str], rows) -> str:
    """CSV text: empty for null, ``true``/``false``, text kept from being a formula."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(
        [csv_cell("" if v is None else str(v).lower() if isinstance(v, bool) else v) for v in row]
        for row in rows
    )
    return buf.getvalue()


def leaderboard_csv(name: str, data, uncertainty: dict | None = None, decimals: int = 1) -> str:
    """The CSV text of one leaderboard file (``name`` as in :data:`CSV_FILES`), with the
    intervals, rank ranges and tie groups of ``uncertainty`` (``uncertainty.json``); figures
    at ``decimals`` places."""

    def fig(value: float | None) -> Decimal | None:
        return _figure(value, decimals)

    key_cols = ["slice", "kind", "group"] if name == "leaderboard_by_slice.json" else ["group"]
    u, lines = uncertainty or {}, []
    for key, ukey, rows in _groups(name, data):
        rows = in_rank_order(rows)
        cells = u.get("groups", {}).get(ukey, {})
        gaps, ties = rank_gaps(rows), tie_groups(rows, u.get("pairs", {}).get(ukey, []))
        for r in rows:
            m: Any = r.get("model_id")  # a row of a checked board: a model_id each
            comps = r.get("components") or {}
            cell, counts = cells.get(m) or {}, r.get("component_counts") or {}
            lines.append(
                [
                    *key,
                    *(fig(r.get(k)) if k == "overall_9" else r.get(k) for k in _ROW_KEYS),
                    fig(gaps.get(m)),
                    *map(fig, cell.get("overall_9") or [None, None]),
                    *(cell.get("rank") or [None, None]),
                    ties.get(m),
                    fig(r.get("overall_10")),
                    *(fig(comps.get(c)) for c in COMPONENTS),
                    *(counts.get(c) for c in COMPONENTS),
                ]
            )
    header = [
        *key_cols,
        *_ROW_KEYS,
        *_BOOK_KEYS,
        "overall_10",
        *COMPONENTS,
        *(f"count_{c}" for c in COMPONENTS),
    ]
    return _csv(header, lines)


def pairs_csv(uncertainty: dict, decimals: int = 1) -> str:
    """Every pairwise test of ``uncertainty.json``: group key, models, Δ Overall-9 (published),
    its interval (at ``decimals`` places), p, Holm-adjusted p, separable at the release's α."""
    header = [
        "group",
        "model_a",
        "model_b",
        "diff",
        "interval_low",
        "interval_high",
        "p",
        "p_holm",
        "separable",
    ]
    return _csv(
        header,
        (
            [
                group,
                p["a"],
                p["b"],
                _figure(p["diff"], decimals),
                *(_figure(v, decimals) for v in p["ci"] or [None, None]),
                p["p"],
                p["p_holm"],
                p["separable"],
            ]
            for group, pairs in uncertainty.get("pairs", {}).items()
            for p in pairs
        ),
    )


def prompts_csv(records: list[dict], manifest: dict) -> str:
    """One row per prompt × model (prompt, then model order): status, reason, how it counts and
    the raw (0–3) components and overalls as they count (0 when zero-filled, empty when
    excluded or not applicable)."""
    lines = []
    for rec in records:
        for m in manifest["model_order"]:
            e, policy = rec["models"][m], manifest["models"][m]["missing_policy"]
            how = counts_as(e["status"], policy)
            comps = e["components_raw_0to3"]
            values = [comps.get(c) for c in COMPONENTS] + [e["overall_9_raw"], e["overall_10_raw"]]
            if how != "value":
                values = [0.0 if how == "0" else None] * len(values)
            lines.append(
                [
                    rec["sample_id"],
                    rec["search_type"],
                    m,
                    e["status"],
                    e.get("error"),
                    policy,
                    how,
                    *values,
                ]
            )
    header = [
        "sample_id",
        "stratum",
        "model_id",
        "status",
        "reason",
        "missing_policy",
        "counts_as",
        *(f"{c}_raw" for c in COMPONENTS),
        "overall_9_raw",
        "overall_10_raw",
    ]
    return _csv(header, lines)


def write_downloads(data_dir: Path, dest: Path) -> list[str]:
    """Copy the artifacts of ``data_dir`` (a staged or published ``public/data``) into ``dest``
    with the CSVs beside them, each breakdown's board of the manifest's declaration too; return
    the file names, sorted. FileNotFoundError names a missing artifact."""
    data_dir, dest = Path(data_dir), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)

    def read(name: str):
        return json.loads((data_dir / name).read_text(encoding="utf-8"))

    def present(names: list[str]) -> list[str]:
        for name in names:
            if not (data_dir / name).is_file():
                raise FileNotFoundError(f"downloads: {name} is missing from {data_dir.name}")
        return names

    names = present([*ARTIFACTS, MANIFEST, VALIDATION_REPORT])
    manifest = read(MANIFEST)
    added = present([k.board for k in declared(manifest).breakdowns])
    names += added
    for name in names:
        shutil.copyfile(data_dir / name, dest / name)
    u, dec = read(UNCERTAINTY), manifest["scoring"]["public_rounding_decimals"]
    csv_files = CSV_FILES | {name: board_csv(name) for name in added}
    texts = {
        csv_name: leaderboard_csv(name, read(name), u, dec) for name, csv_name in csv_files.items()
    }
    texts[EXTRA_CSV[UNCERTAINTY]] = pairs_csv(u, dec)
    texts[EXTRA_CSV["prompt_scores.jsonl"]] = prompts_csv(read_records(data_dir), manifest)
    for name, text in texts.items():
        (dest / name).write_text(text, encoding="utf-8", newline="\n")
    if (data_dir / "schemas").is_dir():
        shutil.copytree(data_dir / "schemas", dest / "schemas", dirs_exist_ok=True)
    return sorted([*names, *texts])


def links_html(names: list[str], prefix: str) -> str:
    """``Download: <a>name</a> · …`` for a table's caption line (``prefix``: the path from the
    page to the book root, e.g. ``../../`` from an executed notebook)."""
    return (
        '<p class="sg-downloads">Download: '
        + " · ".join(f'<a href="{prefix}{FOLDER}/{n}" download>{n}</a>' for n in names)
        + "</p>"
    )
