"""The gate's reading of ``prompt_scores.jsonl``: every line as strict JSON, the per-record
checks and, of what passes, only compact columns (:class:`Columns`)."""

import contextlib
import json
import math
import posixpath
from collections import Counter
from fractions import Fraction
from functools import partial
from pathlib import Path

import numpy as np

from searchgen_nb.constants import ARTIFACTS
from searchgen_nb.files import read_lines
from searchgen_nb.gate.columns import (
    SCORED,
    STATUS_CODE,
    UNKNOWN,
    Columns,
    entry_row,
    exact_numerators,
    nan_row,
    slice_fields,
)
from searchgen_nb.gate.report import Report
from searchgen_nb.schemas import check_document
from searchgen_nb.untrusted import strict_loads

_SCORES = ARTIFACTS[0]  # prompt_scores.jsonl


def _mean(row: list[float]) -> float | None:
    """The exact mean of the row's values (NaN = absent) rounded to the nearest double (ties
    to even); None for no value."""
    present = [x for x in row if x == x]
    if not present:
        return None
    nums, den = exact_numerators(present)
    return float(Fraction(sum(nums), den * len(present)))


def nearest_double_of_mean(vals: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Per row of ``vals`` (N, k; NaN = absent): is ``stored`` (N,; NaN = null) the row's
    :func:`_mean`? A row without values must store null."""
    pairs = zip(vals.tolist(), stored.tolist())
    return np.array([_mean(row) == (None if s != s else s) for row, s in pairs], dtype=bool)


def why(exc: Exception) -> str:
    return (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _as_float(v) -> float:
    try:
        return float(v)
    except OverflowError:  # an integer beyond the double range: not a 0–3 score
        return math.inf


def _partition(subset, sample_id: object) -> tuple[str, str]:
    if subset == "NoSearch" or (isinstance(subset, list) and "NoSearch" in subset):
        return "NoSearch", "NoSearch"
    text = isinstance(sample_id, str) and ("texthard" in sample_id or "text_rendering" in sample_id)
    if text:
        return "SearchIntensive", "TextualSearch"
    return "SearchIntensive", "VisualSearch"


def _records(path: Path, report: Report):
    """``(record, whether it conforms to the schema)`` of every line that is a JSON object,
    streamed; a file or line that cannot be read or parsed is a ``strict_json`` failure."""
    name = path.name
    fail = partial(report.fail, "strict_json", file=name)
    try:
        for line_no, raw in enumerate(read_lines(path), start=1):
            try:
                r = strict_loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                fail(f"{name} line {line_no}: not UTF-8: {exc}")
                continue
            except (RecursionError, ValueError) as exc:
                problem = "nested too deeply" if isinstance(exc, RecursionError) else exc
                fail(f"{name} line {line_no}: {problem}")
                continue
            problems = check_document(name, r, line_no)
            for p in problems:
                report.fail("schema", p["message"], file=p["file"], line=p["line"])
            if isinstance(r, dict):
                yield r, not problems
            else:
                fail(f"{name} line {line_no}: not a JSON object")
    except OSError as exc:
        fail(f"{name}: cannot read: {why(exc)}")


class _Scan:
    """The per-record checks of one release, accumulating the columns."""

    def __init__(self, manifest: dict, report: Report) -> None:
        self.comps10 = manifest["scoring"]["overall_10_components"]
        self.comps9 = manifest["scoring"]["overall_9_components"]
        self.models = list(manifest["model_order"])
        self.template = (manifest.get("inputs") or {}).get("result_path")
        if not isinstance(self.template, str):
            report.fail("unique_records", "manifest has no inputs.result_path")
            self.template = None
        self.meta = manifest.get("models", {})
        self.owner: dict[str, tuple] = {}  # normalised result file → its (sample_id, model)
        self.cols = Columns(self.models, self.comps10, slice_fields(manifest))
        self.seen: Counter = Counter()
        self.report = report

    def record(self, r: dict, conforms: bool) -> None:
        sid = r.get("sample_id")
        fail = partial(self.report.fail, sample_id=sid)
        self.seen[sid] += 1
        self.cols.add_prompt(r)
        stratum, search_type = _partition(r.get("subset"), sid)
        if (r.get("stratum"), r.get("search_type")) != (stratum, search_type):
            fail(
                "expected_counts",
                f"partition is {r.get('stratum')}/{r.get('search_type')},"
                f" the rule gives {stratum}/{search_type}",
            )
        for field in ("domains", "failure_modes"):
            tags = r.get(field)
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                fail("tag_fields", f"{field} is not a list of strings: {json.dumps(tags)}")
            elif len(set(tags)) != len(tags):
                fail("tag_fields", f"{field} has duplicate tags: {tags}")
        entries = r.get("models")
        if not isinstance(entries, dict):
            fail("unique_records", "record has no models map")
            entries = {}
        for m in self.models:
            if m not in entries:
                fail("unique_records", "configured model has no record for this prompt", model_id=m)
        for m in sorted(set(entries) - set(self.models)):
            fail("unique_records", "record for a model that is not configured", model_id=m)
        for k, m in enumerate(self.models):
            e = entries.get(m)
            if not isinstance(e, dict):
                self.cols.add_entry(k, UNKNOWN, nan_row(self.comps10), None)
                continue
            if conforms:  # the schema has checked every type, status rule and range of this entry
                code, row = entry_row(e, self.comps10)
            else:  # name each problem under its own check
                code, row = _check_entry(sid, m, e, self.comps10, self.report)
            self.cols.add_entry(k, code, row, e.get("result_file"), e.get("error"))
            self.result_file(r, sid, m, e)

    def result_file(self, r: dict, sid, m: str, e: dict) -> None:
        """The pair names the result file its own template gives, and no file serves two."""
        meta = self.meta.get(m)
        if self.template is None or not isinstance(meta, dict):
            return
        got, where = e.get("result_file"), {"sample_id": sid, "model_id": m}
        want = self.template.format(
            release_row=r.get("release_row"),
            sample_id=sid,
            lane=meta.get("lane"),
            source_id=meta.get("source_id"),
        )
        if got != want:  # equal strings are equal paths; otherwise compare them normalised
            want = posixpath.normpath(want)
        if got != want and (not isinstance(got, str) or posixpath.normpath(got) != want):
            text = f"result_file is {json.dumps(got)}, the pair's own path is {want}"
            self.report.fail("unique_records", text, **where)
            return
        first = self.owner.setdefault(posixpath.normpath(want), (sid, m))
        if first != (sid, m):
            text = f"result_file {want} is also the file of sample_id {first[0]} / model {first[1]}"
            self.report.fail("unique_records", text, **where)

    def finish(self) -> Columns:
        """The columns, after the checks that need every record."""
        for sid, n in sorted(self.seen.items(), key=lambda kv: str(kv[0])):
            if n > 1:
                self.report.fail("unique_records", f"sample_id appears {n} times", sample_id=sid)
        cols = self.cols
        cols.finish()
        scored = cols.status == SCORED
        none = np.isnan(cols.values[:, :, : cols.n_components]).all(axis=2)
        for k, p in zip(*np.nonzero(scored & none)):
            self.report.fail(
                "null_zero_distinct", "scored record with no component value", **_where(cols, k, p)
            )
        _check_prompt_overalls(cols, [self.comps10.index(c) for c in self.comps9], self.report)
        return cols


def _where(cols: Columns, k: int, p: int) -> dict:
    return {"sample_id": cols.sample_ids[p], "model_id": cols.models[k], "file": cols.files[k][p]}


def scan_records(folder: Path, manifest: dict, report: Report) -> Columns:
    """Read ``prompt_scores.jsonl`` line by line (strict JSON), run the per-record checks and
    keep only the columns (:class:`Columns`)."""
    scan = _Scan(manifest, report)
    records = _records(folder / _SCORES, report)
    with contextlib.closing(records):  # the file is closed however the loop ends
        for r, conforms in records:
            scan.record(r, conforms)
    return scan.finish()


def _check_prompt_overalls(cols: Columns, nine: list[int], report: Report) -> None:
    """Every scored entry's Overall-10 and Overall-9 is the :func:`_mean` of its present
    components (data contract, § Per-prompt values)."""
    k_idx, p_idx = np.nonzero(cols.status == SCORED)
    rows = cols.values[k_idx, p_idx].tolist()  # (n scored, components + 2)
    o10, o9, every = cols.column["overall_10"], cols.column["overall_9"], range(cols.n_components)
    for j, key, comp_cols in ((o10, "overall_10_raw", every), (o9, "overall_9_raw", nine)):
        wants = [_mean([row[c] for c in comp_cols]) for row in rows]  # raises before any failure
        for k, p, row, want in zip(k_idx.tolist(), p_idx.tolist(), rows, wants):
            got = None if row[j] != row[j] else row[j]
            if want != got:
                report.fail(
                    "prompt_overalls", f"{key} is {got}, recomputed {want}", **_where(cols, k, p)
                )


def _check_entry(sid, m, e, comps10, report: Report) -> tuple[int, list[float]]:
    """Checks of an entry that does not conform to the schema: its status code and its raw
    values as :func:`entry_row` gives them; an unusable entry gives the unknown code, NaN."""
    fail = partial(report.fail, sample_id=sid, model_id=m, file=e.get("result_file"))
    blank = nan_row(comps10)
    status = e.get("status")
    if status not in STATUS_CODE:
        fail("component_values", f"unknown status {status!r}")
        return UNKNOWN, blank
    comps = e.get("components_raw_0to3")
    if not isinstance(comps, dict) or set(comps) != set(comps10):
        fail(
            "null_zero_distinct",
            f"components_raw_0to3 must hold exactly the {len(comps10)} components (a"
            " missing key is neither null nor 0)",
        )
        return UNKNOWN, blank
    values = [comps[c] for c in comps10]
    stored = [e.get("overall_10_raw"), e.get("overall_9_raw")]
    for c, v in zip(comps10, values):
        if v is not None and not is_number(v):
            fail("null_zero_distinct", f"{c} is {json.dumps(v)}: neither null nor a number")
            return UNKNOWN, blank
    if status != "scored":
        if present := [c for c, v in zip(comps10, values) if v is not None]:
            fail(
                "component_values",
                f"{status} record carries component values ({', '.join(present)})",
            )
        if stored != [None, None]:
            fail("component_values", f"{status} record carries an overall value")
        if status == "invalid_evaluation" and not e.get("error"):
            fail("null_zero_distinct", "invalid_evaluation without its reason")
        if status != "invalid_evaluation" and e.get("error") is not None:
            fail("null_zero_distinct", f"{status} record carries an error reason")
        return STATUS_CODE[status], blank
    for c, v in zip(comps10, values):
        if v is not None and not (0 <= _as_float(v) <= 3):
            fail("component_values", f"{c} = {v} is not a finite value in 0–3")
    if e.get("error") is not None:
        fail("null_zero_distinct", "scored record carries an error reason")
    for key, got in zip(("overall_10_raw", "overall_9_raw"), stored):
        if got is not None and not (is_number(got) and math.isfinite(_as_float(got))):
            fail("prompt_overalls", f"{key} is {json.dumps(got)}: neither null nor a number")
            return UNKNOWN, blank
    return SCORED, [math.nan if v is None else _as_float(v) for v in (*values, *stored)]
