"""The gate's reading of ``prompt_scores.jsonl``: every line as strict JSON, the per-record
checks (partition rule, tag fields, the models map, each entry's values, result files, each
prompt's overalls) and, of what passes, only compact columns (:class:`Columns`).
"""

from __future__ import annotations

import contextlib
import json
import math
import posixpath
from collections import Counter
from pathlib import Path

import numpy as np

from searchgen_nb.files import read_lines
from searchgen_nb.schemas import check_document
from searchgen_nb.untrusted import strict_loads
from searchgen_nb.validate_columns import (
    NAN_ROW,
    SCORED,
    STATUS_CODE,
    UNKNOWN,
    Columns,
    exact_mean,
    slice_fields,
)
from searchgen_nb.validate_report import Report

_SCORES = "prompt_scores.jsonl"


def nearest_double_of_mean(vals: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """For each row of ``vals`` (N, k; NaN = absent): is ``stored`` (N,; NaN = null) the exact
    mean of its values rounded to the nearest double? ``float(Fraction)`` rounds correctly
    (ties to even); a row without values must store null."""
    out = []
    for row, s in zip(vals.tolist(), stored.tolist()):
        mean = exact_mean([x for x in row if x == x])
        out.append(s != s if mean is None else float(mean) == s)
    return np.array(out, dtype=bool)


def why(exc: Exception) -> str:
    return (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)


def _partition(subset, sample_id: str) -> tuple[str, str]:
    if subset == "NoSearch" or (isinstance(subset, list) and "NoSearch" in subset):
        return "NoSearch", "NoSearch"
    if "texthard" in sample_id or "text_rendering" in sample_id:
        return "SearchIntensive", "TextualSearch"
    return "SearchIntensive", "VisualSearch"


def _lines(path: Path, report: Report):
    """``(line number, text)`` of every line of ``prompt_scores.jsonl``, streamed; a file (or a
    line) that cannot be read is a ``strict_json`` failure naming it."""
    name = path.name
    try:
        for line_no, raw in enumerate(read_lines(path), start=1):
            try:
                yield line_no, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                report.fail("strict_json", f"{name} line {line_no}: not UTF-8: {exc}", file=name)
    except OSError as exc:
        report.fail("strict_json", f"{name}: cannot read: {why(exc)}", file=name)


def _parse(line_no: int, line: str, report: Report) -> tuple[object, bool] | None:
    """One line as strict JSON and whether it conforms to the schema; None (a ``strict_json``
    failure) for a line that is not a JSON object."""
    try:
        r = strict_loads(line)
    except RecursionError:
        report.fail("strict_json", f"{_SCORES} line {line_no}: nested too deeply", file=_SCORES)
        return None
    except ValueError as exc:
        report.fail("strict_json", f"{_SCORES} line {line_no}: {exc}", file=_SCORES)
        return None
    conforms = True
    for p in check_document(_SCORES, r, line_no):
        conforms = False
        report.fail("schema", p["message"], file=p["file"], line=p["line"])
    if not isinstance(r, dict):
        report.fail("strict_json", f"{_SCORES} line {line_no}: not a JSON object", file=_SCORES)
        return None
    return r, conforms


class _Scan:
    """The per-record checks of one release, accumulating the columns."""

    def __init__(self, manifest: dict, report: Report) -> None:
        self.comps10 = manifest["scoring"]["overall_10_components"]
        self.comps9 = manifest["scoring"]["overall_9_components"]
        self.models = list(manifest["model_order"])
        template = (manifest.get("inputs") or {}).get("result_path")
        if not isinstance(template, str):
            report.fail("unique_records", "manifest has no inputs.result_path")
        self.files = _ResultFiles(manifest, template, report)
        self.cols = Columns(self.models, slice_fields(manifest))
        self.seen: Counter = Counter()
        self.report = report

    def record(self, r: dict, conforms: bool) -> None:
        report, sid = self.report, r.get("sample_id")
        self.seen[sid] += 1
        self.cols.add_prompt(r)
        stratum, search_type = _partition(r.get("subset"), sid)
        if (r.get("stratum"), r.get("search_type")) != (stratum, search_type):
            report.fail(
                "expected_counts",
                f"partition is {r.get('stratum')}/"
                f"{r.get('search_type')}, the rule gives {stratum}/{search_type}",
                sample_id=sid,
            )
        for field in ("domains", "failure_modes"):
            tags = r.get(field)
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                report.fail(
                    "tag_fields",
                    f"{field} is not a list of strings: {json.dumps(tags)}",
                    sample_id=sid,
                )
            elif len(set(tags)) != len(tags):
                report.fail("tag_fields", f"{field} has duplicate tags: {tags}", sample_id=sid)
        entries = r.get("models")
        if not isinstance(entries, dict):
            report.fail("unique_records", "record has no models map", sample_id=sid)
            entries = {}
        for m in self.models:
            if m not in entries:
                report.fail(
                    "unique_records",
                    "configured model has no record for this prompt",
                    sample_id=sid,
                    model_id=m,
                )
        for m in sorted(set(entries) - set(self.models)):
            report.fail(
                "unique_records",
                "record for a model that is not configured",
                sample_id=sid,
                model_id=m,
            )
        for k, m in enumerate(self.models):
            self.entry(r, k, entries.get(m), conforms)

    def entry(self, r: dict, k: int, e, conforms: bool) -> None:
        if not isinstance(e, dict):
            self.cols.add_entry(k, UNKNOWN, NAN_ROW, None)
            return
        sid, m = r.get("sample_id"), self.models[k]
        if conforms:  # the schema has checked every type, status rule and range of this entry
            code, row = STATUS_CODE[e["status"]], NAN_ROW
            if code == SCORED:
                comps = e["components_raw_0to3"]
                raw = (*(comps[c] for c in self.comps10), e["overall_10_raw"], e["overall_9_raw"])
                row = [math.nan if v is None else v for v in raw]
        else:  # name each problem under its own check
            code, row = _check_entry(sid, m, e, self.comps10, self.report)
        self.cols.add_entry(k, code, row, e.get("result_file"))
        self.files.check(r, sid, m, e)

    def finish(self) -> Columns:
        """The columns, after the checks that need every record."""
        for sid, n in sorted(self.seen.items(), key=lambda kv: str(kv[0])):
            if n > 1:
                self.report.fail("unique_records", f"sample_id appears {n} times", sample_id=sid)
        cols = self.cols
        cols.finish()
        scored = cols.status == SCORED
        for k, p in zip(*np.nonzero(scored & np.isnan(cols.values[:, :, :10]).all(axis=2))):
            self.report.fail(
                "null_zero_distinct",
                "scored record with no component value",
                sample_id=cols.sample_ids[p],
                model_id=cols.models[k],
                file=cols.files[k][p],
            )
        _check_prompt_overalls(cols, [self.comps10.index(c) for c in self.comps9], self.report)
        return cols


def scan_records(folder: Path, manifest: dict, report: Report) -> Columns:
    """Read ``prompt_scores.jsonl`` line by line (strict JSON), run the per-record checks
    (partition rule, tag fields, models map, entry values, result files) and keep only the
    columns (:class:`Columns`)."""
    scan = _Scan(manifest, report)
    lines = _lines(folder / _SCORES, report)
    with contextlib.closing(lines):  # the file is closed however the loop ends
        for line_no, line in lines:
            parsed = _parse(line_no, line, report)
            if parsed is not None:
                scan.record(*parsed)
    return scan.finish()


class _ResultFiles:
    """Each pair names the result file its own template gives, and no file serves two pairs."""

    def __init__(self, manifest: dict, template, report: Report) -> None:
        self.models = manifest.get("models", {})
        self.template = template if isinstance(template, str) else None
        self.owner: dict[str, tuple] = {}
        self.report = report

    def check(self, r: dict, sid, m: str, e: dict) -> None:
        meta = self.models.get(m)
        if self.template is None or not isinstance(meta, dict):
            return
        got = e.get("result_file")
        want = self.template.format(
            release_row=r.get("release_row"),
            sample_id=sid,
            lane=meta.get("lane"),
            source_id=meta.get("source_id"),
        )
        if got != want:  # equal strings are equal paths; otherwise compare them normalised
            want = posixpath.normpath(want)
        if got != want and (not isinstance(got, str) or posixpath.normpath(got) != want):
            self.report.fail(
                "unique_records",
                f"result_file is {json.dumps(got)}, the pair's own path is {want}",
                sample_id=sid,
                model_id=m,
            )
            return
        # one file, one pair: compare normalised paths
        first = self.owner.setdefault(posixpath.normpath(want), (sid, m))
        if first != (sid, m):
            self.report.fail(
                "unique_records",
                f"result_file {want} is also the file of sample_id {first[0]} / model {first[1]}",
                sample_id=sid,
                model_id=m,
            )


def _check_prompt_overalls(cols: Columns, nine: list[int], report: Report) -> None:
    """Every scored entry's Overall-10 and Overall-9 is the exact mean of its present
    components rounded to the nearest double (data contract, § Per-prompt values)."""
    k_idx, p_idx = np.nonzero(cols.status == SCORED)
    rows = cols.values[k_idx, p_idx]  # (n scored, 12)
    for j, key, comp_cols in ((10, "overall_10_raw", list(range(10))), (11, "overall_9_raw", nine)):
        vals = rows[:, comp_cols]
        for i in np.nonzero(~nearest_double_of_mean(vals, rows[:, j]))[0]:
            k, p = int(k_idx[i]), int(p_idx[i])
            exact = exact_mean([x for x in vals[i].tolist() if x == x])
            stored = rows[i, j]
            report.fail(
                "prompt_overalls",
                f"{key} is {None if stored != stored else float(stored)}"
                f", recomputed {None if exact is None else float(exact)}",
                sample_id=cols.sample_ids[p],
                model_id=cols.models[k],
                file=cols.files[k][p],
            )


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _as_float(v) -> float:
    try:
        return float(v)
    except OverflowError:  # an integer beyond the double range: not a 0–3 score
        return math.inf


def _check_entry(sid, m, e, comps10, report: Report) -> tuple[int, list[float]]:
    """Checks of one record entry that does not conform to the schema. Returns its status code
    and its twelve raw values (ten components, Overall-10, Overall-9; NaN = null) for the
    columns; an entry that is not usable gives the unknown code and NaN."""
    where = {"sample_id": sid, "model_id": m, "file": e.get("result_file")}
    status = e.get("status")
    if status not in STATUS_CODE:
        report.fail("component_values", f"unknown status {status!r}", **where)
        return UNKNOWN, NAN_ROW
    comps = e.get("components_raw_0to3")
    if not isinstance(comps, dict) or set(comps) != set(comps10):
        report.fail(
            "null_zero_distinct",
            "components_raw_0to3 must hold exactly the 10"
            " components (a missing key is neither null nor 0)",
            **where,
        )
        return UNKNOWN, NAN_ROW
    values = [comps[c] for c in comps10]
    for c, v in zip(comps10, values):
        if v is not None and not _is_number(v):
            report.fail(
                "null_zero_distinct", f"{c} is {json.dumps(v)}: neither null nor a number", **where
            )
            return UNKNOWN, NAN_ROW
    if status == "scored":
        return _check_scored(comps10, values, e, where, report)
    present = [c for c, v in zip(comps10, values) if v is not None]
    if present:
        report.fail(
            "component_values",
            f"{status} record carries component values ({', '.join(present)})",
            **where,
        )
    if e.get("overall_10_raw") is not None or e.get("overall_9_raw") is not None:
        report.fail("component_values", f"{status} record carries an overall value", **where)
    if status == "invalid_evaluation" and not e.get("error"):
        report.fail("null_zero_distinct", "invalid_evaluation without its reason", **where)
    if status != "invalid_evaluation" and e.get("error") is not None:
        report.fail("null_zero_distinct", f"{status} record carries an error reason", **where)
    return STATUS_CODE[status], NAN_ROW


def _check_scored(comps10, values, e: dict, where: dict, report: Report) -> tuple[int, list]:
    for c, v in zip(comps10, values):
        if v is not None and not (0 <= _as_float(v) <= 3):
            report.fail("component_values", f"{c} = {v} is not a finite value in 0–3", **where)
    if e.get("error") is not None:
        report.fail("null_zero_distinct", "scored record carries an error reason", **where)
    stored = [e.get("overall_10_raw"), e.get("overall_9_raw")]
    for key, got in zip(("overall_10_raw", "overall_9_raw"), stored):
        if got is not None and not (_is_number(got) and math.isfinite(_as_float(got))):
            report.fail(
                "prompt_overalls", f"{key} is {json.dumps(got)}: neither null nor a number", **where
            )
            return UNKNOWN, NAN_ROW
    return SCORED, [math.nan if v is None else _as_float(v) for v in (*values, *stored)]
