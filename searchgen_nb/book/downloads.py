"""The book's downloads: every published artifact and a CSV of each leaderboard, copied into
the built book (``_build/html/downloads/``) so that a reader who opened the book from disk can
take the data with them.

The CSVs are a flat view of the JSON leaderboards — one row per group × model, the group in
the first columns, components on the public 0–100 scale, an empty cell for null (N/A) — written
deterministically (sorted groups in file order, ``\\n`` line ends), so a rerun gives the same
bytes.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

from searchgen_nb.constants import ARTIFACTS, COMPONENTS, MANIFEST, VALIDATION_REPORT
from searchgen_nb.untrusted import csv_cell

#: Folder of the downloads below the built book's root.
FOLDER = "downloads"
#: Leaderboard JSON file → (CSV file, how its groups are keyed).
CSV_FILES = {
    "leaderboard_overall.json": "leaderboard_overall.csv",
    "leaderboard_by_stratum.json": "leaderboard_by_stratum.csv",
    "leaderboard_by_domain.json": "leaderboard_by_domain.csv",
    "leaderboard_by_failure_mode.json": "leaderboard_by_failure_mode.csv",
    "leaderboard_by_slice.json": "leaderboard_by_slice.csv",
}
_ROW_KEYS = ("rank", "ranked", "model_id", "display_name", "type", "missing_policy", "n_total",
             "n_scored", "n_included", "coverage", "overall_9", "overall_10")


def _groups(name: str, data) -> list[tuple[tuple[str, ...], list[dict]]]:
    """``[(group key columns, rows)]`` of one leaderboard file, in file order."""
    if name == "leaderboard_overall.json":
        return [(("All",), data)]
    if name == "leaderboard_by_slice.json":
        out = []
        for slice_name, boards in data.items():
            out.append(((slice_name, "overall", "All"), boards["overall"]))
            for kind in ("strata", "domains", "failure_modes"):
                out += [((slice_name, kind, g), rows) for g, rows in boards[kind].items()]
        return out
    return [((g,), rows) for g, rows in data.items()]


def leaderboard_csv(name: str, data) -> str:
    """The CSV text of one leaderboard file (``name`` as in :data:`CSV_FILES`)."""
    key_cols = {"leaderboard_by_slice.json": ["slice", "kind", "group"]}.get(name, ["group"])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*key_cols, *_ROW_KEYS, *COMPONENTS, *(f"count_{c}" for c in COMPONENTS)])
    for key, rows in _groups(name, data):
        for r in rows:
            comps, counts = r.get("components") or {}, r.get("component_counts") or {}
            values = ([r.get(k) for k in _ROW_KEYS] + [comps.get(c) for c in COMPONENTS]
                      + [counts.get(c) for c in COMPONENTS])
            cells = [*key, *("" if v is None else str(v).lower() if isinstance(v, bool) else v
                             for v in values)]
            w.writerow([csv_cell(v) for v in cells])  # no name is read as a spreadsheet formula
    return buf.getvalue()


def write_downloads(data_dir: Path, dest: Path) -> list[str]:
    """Copy the artifacts of ``data_dir`` (a staged or published ``public/data``) into
    ``dest`` and write a CSV beside each leaderboard file; return the file names, sorted.
    Raises ``FileNotFoundError`` naming a missing artifact."""
    data_dir, dest = Path(data_dir), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    names = []
    for name in (*ARTIFACTS, MANIFEST, VALIDATION_REPORT):
        src = data_dir / name
        if not src.is_file():
            raise FileNotFoundError(f"downloads: {name} is missing from {data_dir.name}")
        shutil.copyfile(src, dest / name)
        names.append(name)
        if name in CSV_FILES:
            text = leaderboard_csv(name, json.loads(src.read_text(encoding="utf-8")))
            (dest / CSV_FILES[name]).write_text(text, encoding="utf-8", newline="\n")
            names.append(CSV_FILES[name])
    if (data_dir / "schemas").is_dir():
        shutil.copytree(data_dir / "schemas", dest / "schemas", dirs_exist_ok=True)
    return sorted(names)


def links_html(names: list[str], prefix: str) -> str:
    """``Download: <a>name</a> · …`` for a table's caption line (``prefix``: the path from the
    page to the book root, e.g. ``../../`` from an executed notebook)."""
    return '<p class="sg-downloads">Download: ' + " · ".join(
        f'<a href="{prefix}{FOLDER}/{n}" download>{n}</a>' for n in names) + "</p>"
