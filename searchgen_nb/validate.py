"""Independent release validator (SPEC §7; design document §11).

Reads only ``prompt_scores.jsonl`` and ``manifest.json`` and reconstructs every aggregate
on its own — it does not import the aggregation, record or exact-arithmetic modules — then
compares with the published aggregate files exactly. A bug in one implementation is caught
by the other.

Checks (names as they appear in the report and in error messages):

0. ``schema``               every artifact conforms to its JSON Schema (first, before any number)
1. ``expected_counts``      prompt count and partition counts equal ``expected``
2. ``unique_records``       unique sample_id, no duplicate prompt × model, every model for every prompt
3. ``tag_fields``           every tag field a list of strings without duplicates
4. ``component_values``     scored values finite in 0–3; statuses allowed; non-scored carry no values
5. ``null_zero_distinct``   null / missing / invalid / 0.0 stay distinguishable
6. ``prompt_overalls``      per-prompt Overall-9 / Overall-10 recompute exactly
7. ``aggregates``           every aggregate row reproduces under the declared policy
8. ``paper_table``          Overall-10 within half a rounding unit of the canonical table
9. ``coverage_lock``        no model below its locked ``n_scored``
10. ``order_invariance``    the pipeline's aggregation of permuted input equals the reconstruction
11. ``uncertainty``         every bootstrap interval, rank interval and p-value recomputes (own code:
                            :mod:`searchgen_nb.validate_bootstrap`)
12. ``strict_json``         artifacts parse with NaN/Infinity rejected; sha256 match the manifest
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import posixpath
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Callable

from array import array

from searchgen_nb.files import ARTIFACT_MAX, STREAM_MAX, open_regular, read_bytes, read_lines
from searchgen_nb.schemas import check_document, check_folder
from searchgen_nb.untrusted import strict_loads
from searchgen_nb.validate_bootstrap import SettingsError, reconstruct_uncertainty

import numpy as np

CHECKS = (
    "schema",
    "expected_counts",
    "unique_records",
    "tag_fields",
    "component_values",
    "null_zero_distinct",
    "prompt_overalls",
    "aggregates",
    "paper_table",
    "coverage_lock",
    "order_invariance",
    "uncertainty",
    "strict_json",
)
#: One line per check for reports and the book's Validation and Audit pages.
CHECK_DESCRIPTIONS = {
    "schema": "every artifact (each line of prompt_scores.jsonl) conforms to its JSON Schema (draft 2020-12, searchgen_nb/schemas/)",
    "expected_counts": "prompt count and partition counts equal the config's expected values; every prompt's stratum follows the partition rule",
    "unique_records": "unique sample_id; no duplicate prompt × model record; every configured model present for every prompt",
    "tag_fields": "every domain and failure-mode field is a list of strings without duplicates",
    "component_values": "scored values finite and within 0–3; statuses from the four allowed; non-scored records carry no values",
    "null_zero_distinct": "null, missing, invalid and 0.0 stay distinguishable in records and in every aggregate row",
    "prompt_overalls": "every per-prompt Overall-9 and Overall-10 recomputes exactly from its components",
    "aggregates": "every aggregate row (counts, coverage, components, overalls, rank) reproduces under the declared policy",
    "paper_table": "Overall-10 within half a rounding unit of the canonical recomputation (paper table)",
    "coverage_lock": "no model has fewer scored prompts than its locked n_scored",
    "order_invariance": "the pipeline's aggregation of the release with prompts and models permuted equals the independent reconstruction",
    "uncertainty": "every bootstrap interval, rank interval and (Holm-adjusted) p-value in uncertainty.json recomputes from prompt_scores.jsonl with the validator's own code (SPEC §8)",
    "strict_json": "artifacts parse with NaN/Infinity rejected and match the sha256 recorded in the manifest",
}
_STATUSES = ("scored", "invalid_evaluation", "missing_evaluation", "missing_generation")
_BOARDS = (
    "leaderboard_overall.json",
    "leaderboard_by_stratum.json",
    "leaderboard_by_domain.json",
    "leaderboard_by_failure_mode.json",
    "leaderboard_by_slice.json",
)
_SLICE_KINDS = ("overall", "strata", "domains", "failure_modes")
_UNCERTAINTY = "uncertainty.json"
_CHANGES = "changes.json"
_MAX_LISTED = 50  # failures listed per check; the count is always complete


class Report:
    """Validation report: one entry per check with pass/fail and the offending items."""

    def __init__(self) -> None:
        self.checks: dict[str, dict] = {name: {"name": name, "passed": True, "n_failures": 0, "failures": [], "skipped": None} for name in CHECKS}

    def fail(self, check: str, message: str, **where) -> None:
        entry = self.checks[check]
        entry["passed"] = False
        entry["n_failures"] += 1
        if len(entry["failures"]) < _MAX_LISTED:
            entry["failures"].append({"message": message, **{k: v for k, v in where.items() if v is not None}})

    def skip(self, check: str, why: str) -> None:
        self.checks[check]["skipped"] = why

    @property
    def passed(self) -> bool:
        return all(c["passed"] for c in self.checks.values())

    def failed_checks(self) -> list[str]:
        return [n for n, c in self.checks.items() if not c["passed"]]

    def as_dict(self) -> dict:
        return {"passed": self.passed, "checks": [self.checks[n] for n in CHECKS]}

    def summary(self) -> str:
        """Human-readable lines: every failed check with its first offending items."""
        lines = []
        for name in self.failed_checks():
            c = self.checks[name]
            lines.append(f"check {name} failed ({c['n_failures']} problem(s)):")
            for f in c["failures"][:10]:
                where = ", ".join(f"{k} {v}" for k, v in f.items() if k != "message")
                lines.append(f"  - {f['message']}" + (f" [{where}]" if where else ""))
        return "\n".join(lines) if lines else "all release checks passed"


# ---- independent arithmetic (Fraction-based; the aggregation code uses Decimal) ---------



def _mean(values: list[float]) -> Fraction | None:
    if not values:
        return None
    # common power-of-two denominator: sum numerators as integers
    shift = 0
    parts = []
    for v in values:
        n, d = v.as_integer_ratio()
        k = d.bit_length() - 1
        parts.append((n, k))
        shift = max(shift, k)
    total = sum(n << (shift - k) for n, k in parts)
    return Fraction(total, (1 << shift) * len(values))


def _half_up(x: Fraction, decimals: int) -> float:
    units = math.floor(x * 10**decimals + Fraction(1, 2))
    return float(Fraction(units, 10**decimals)) if decimals else float(units)


def _public(raw: Fraction | None, decimals: int) -> float | None:
    return None if raw is None else _half_up(raw * 100 / 3, decimals)


# ---- loading --------------------------------------------------------------------------


def _strict_load(path: Path) -> object:
    """An artifact as strict JSON: NaN, Infinity, a repeated key and nesting too deep are
    refused (``ValueError``); so is a file that is not a regular file or is over its bound
    (``OSError`` whose text says why)."""
    try:
        return strict_loads(read_bytes(path, ARTIFACT_MAX).decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open_regular(path, STREAM_MAX) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _why(exc: Exception) -> str:
    return (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)


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
        report.fail("strict_json", f"{name}: cannot read: {_why(exc)}", file=name)


def _load(folder: Path, report: Report) -> tuple[dict, dict] | None:
    """The manifest and the four leaderboard files (strict JSON), and every artifact's sha256
    against the manifest. ``prompt_scores.jsonl`` is read by :func:`_scan_records`."""
    check = "strict_json"
    try:
        manifest = _strict_load(folder / "manifest.json")
    except (OSError, ValueError) as exc:
        report.fail(check, f"manifest.json: {_why(exc)}", file="manifest.json")
        return None
    try:
        open_regular(folder / "prompt_scores.jsonl", STREAM_MAX).close()  # read by _scan_records
    except OSError as exc:
        why = "missing" if isinstance(exc, FileNotFoundError) else f"cannot read: {_why(exc)}"
        report.fail(check, f"prompt_scores.jsonl: {why}", file="prompt_scores.jsonl")
        return None
    boards = {}
    for name in _BOARDS:
        try:
            boards[name] = _strict_load(folder / name)
        except (OSError, ValueError) as exc:
            report.fail(check, f"{name}: {_why(exc)}", file=name)
    try:
        boards[_UNCERTAINTY] = _strict_load(folder / _UNCERTAINTY)
    except (OSError, ValueError) as exc:
        report.fail(check, f"{_UNCERTAINTY}: {_why(exc)}", file=_UNCERTAINTY)
    try:
        _strict_load(folder / _CHANGES)  # its shape: the schema check; its figures: the published boards of two releases
    except (OSError, ValueError) as exc:
        report.fail(check, f"{_CHANGES}: {_why(exc)}", file=_CHANGES)
    hashes = manifest.get("artifact_sha256", {}) if isinstance(manifest, dict) else {}
    for name in ("prompt_scores.jsonl", *_BOARDS, _UNCERTAINTY, _CHANGES):
        p = folder / name
        try:
            differs = os.path.lexists(p) and hashes.get(name) != _sha256_file(p)
        except OSError:  # not readable: reported when it was read
            continue
        if differs:
            report.fail(check, f"{name}: sha256 differs from the manifest's artifact_sha256", file=name)
    if len(boards) != len(_BOARDS) + 1:
        return None
    return manifest, boards


class _Columns:
    """What the validator keeps of ``prompt_scores.jsonl``: per prompt its sample_id, partition
    and tags; per model and prompt a status code and the twelve raw values (ten components,
    Overall-10, Overall-9; NaN = null) in compact arrays — never the records themselves."""

    def __init__(self, models: list[str], slice_fields: list[str] = ()) -> None:
        self.models = models
        self.slice_fields = list(slice_fields)
        self.field_values: list[tuple] = []  # per prompt, the values of each slice field
        self.sample_ids: list = []
        self.prompts: list[tuple] = []  # (stratum, search_type, domains, failure_modes)
        self.files: list[list] = [[] for _ in models]  # result_file per model and prompt, for messages
        self._status = [bytearray() for _ in models]
        self._values = [array("d") for _ in models]

    def add_prompt(self, r: dict) -> int:
        self.sample_ids.append(r.get("sample_id"))
        self.field_values.append(tuple(r.get(f) for f in self.slice_fields))
        doms, fms = r.get("domains"), r.get("failure_modes")
        self.prompts.append((r.get("stratum"), r.get("search_type"),
                             tuple(doms) if isinstance(doms, list) else (), tuple(fms) if isinstance(fms, list) else ()))
        return len(self.sample_ids) - 1

    def add_entry(self, k: int, status: int, values: list[float], result_file) -> None:
        self._status[k].append(status)
        self._values[k].extend(values)
        self.files[k].append(result_file)

    def finish(self) -> None:
        """Freeze into arrays, prompts sorted by sample_id (the reconstruction's own order)."""
        n = len(self.sample_ids)
        order = sorted(range(n), key=lambda i: str(self.sample_ids[i]))
        status = np.array([np.frombuffer(bytes(b), dtype=np.uint8) for b in self._status]).reshape(len(self.models), n)
        values = np.array([np.frombuffer(a, dtype=np.float64) for a in self._values]).reshape(len(self.models), n, 12)
        self.status, self.values = status[:, order], values[:, order]
        self.sample_ids = [self.sample_ids[i] for i in order]
        self.prompts = [self.prompts[i] for i in order]
        self.field_values = [self.field_values[i] for i in order]
        self.files = [[f[i] for i in order] for f in self.files]
        del self._status, self._values

    @classmethod
    def from_records(cls, manifest: dict, records: list[dict]) -> "_Columns":
        """Columns of records already in memory (tests; the gate streams the file)."""
        cols = cls(list(manifest["model_order"]), _slice_fields(manifest))
        sc = manifest["scoring"]["overall_10_components"]
        for r in records:
            cols.add_prompt(r)
            for k, m in enumerate(cols.models):
                e = r["models"][m]
                ok = e["status"] == "scored"
                comps = e["components_raw_0to3"]
                row = [comps[c] for c in sc] + [e["overall_10_raw"], e["overall_9_raw"]] if ok else [None] * 12
                cols.add_entry(k, _STATUS_CODE.get(e["status"], _UNKNOWN), [math.nan if v is None else float(v) for v in row], e.get("result_file"))
        cols.finish()
        return cols


_STATUS_CODE = {s: i for i, s in enumerate(("scored", "invalid_evaluation", "missing_evaluation", "missing_generation"))}
_UNKNOWN = 255
_SCORED = _STATUS_CODE["scored"]
_NAN_ROW = [math.nan] * 12


# ---- per-record checks ----------------------------------------------------------------


def _partition(subset, sample_id: str) -> tuple[str, str]:
    if subset == "NoSearch" or (isinstance(subset, list) and "NoSearch" in subset):
        return "NoSearch", "NoSearch"
    if "texthard" in sample_id or "text_rendering" in sample_id:
        return "SearchIntensive", "TextualSearch"
    return "SearchIntensive", "VisualSearch"


def _scan_records(folder: Path, manifest: dict, report: Report) -> _Columns:
    """Read ``prompt_scores.jsonl`` line by line (strict JSON), run the per-record checks
    (partition rule, tag fields, models map, entry values, result files) and keep only the
    columns (:class:`_Columns`)."""
    comps10 = manifest["scoring"]["overall_10_components"]
    comps9 = manifest["scoring"]["overall_9_components"]
    models = list(manifest["model_order"])
    model_set = set(models)
    template = (manifest.get("inputs") or {}).get("result_path")
    if not isinstance(template, str):
        report.fail("unique_records", "manifest has no inputs.result_path")
    files = _ResultFiles(manifest, template, report)
    cols = _Columns(models, _slice_fields(manifest))
    seen: Counter = Counter()
    lines = _lines(folder / "prompt_scores.jsonl", report)
    with contextlib.closing(lines):  # the file is closed however the loop ends
        for line_no, line in lines:
            try:
                r = strict_loads(line)
            except RecursionError:
                why = f"prompt_scores.jsonl line {line_no}: nested too deeply"
                report.fail("strict_json", why, file="prompt_scores.jsonl")
                continue
            except ValueError as exc:
                report.fail("strict_json", f"prompt_scores.jsonl line {line_no}: {exc}", file="prompt_scores.jsonl")
                continue
            conforms = True
            for p in check_document("prompt_scores.jsonl", r, line_no):
                conforms = False
                report.fail("schema", p["message"], file=p["file"], line=p["line"])
            if not isinstance(r, dict):
                report.fail("strict_json", f"prompt_scores.jsonl line {line_no}: not a JSON object", file="prompt_scores.jsonl")
                continue
            sid = r.get("sample_id")
            seen[sid] += 1
            cols.add_prompt(r)
            stratum, search_type = _partition(r.get("subset"), sid)
            if (r.get("stratum"), r.get("search_type")) != (stratum, search_type):
                report.fail("expected_counts", f"partition is {r.get('stratum')}/{r.get('search_type')}, the rule gives {stratum}/{search_type}", sample_id=sid)
            for field in ("domains", "failure_modes"):
                tags = r.get(field)
                if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                    report.fail("tag_fields", f"{field} is not a list of strings: {json.dumps(tags)}", sample_id=sid)
                elif len(set(tags)) != len(tags):
                    report.fail("tag_fields", f"{field} has duplicate tags: {tags}", sample_id=sid)
            entries = r.get("models")
            if not isinstance(entries, dict):
                report.fail("unique_records", "record has no models map", sample_id=sid)
                entries = {}
            for m in models:
                if m not in entries:
                    report.fail("unique_records", "configured model has no record for this prompt", sample_id=sid, model_id=m)
            for m in sorted(set(entries) - model_set):
                report.fail("unique_records", "record for a model that is not configured", sample_id=sid, model_id=m)
            for k, m in enumerate(models):
                e = entries.get(m)
                if not isinstance(e, dict):
                    cols.add_entry(k, _UNKNOWN, _NAN_ROW, None)
                    continue
                if conforms:  # the schema has checked every type, status rule and range of this entry
                    code = _STATUS_CODE[e["status"]]
                    row = _NAN_ROW
                    if code == _SCORED:
                        comps = e["components_raw_0to3"]
                        row = [math.nan if v is None else v for v in (*(comps[c] for c in comps10), e["overall_10_raw"], e["overall_9_raw"])]
                else:  # name each problem under its own check
                    code, row = _check_entry(sid, m, e, comps10, comps9, report)
                cols.add_entry(k, code, row, e.get("result_file"))
                files.check(r, sid, m, e)
    for sid, n in sorted(seen.items(), key=lambda kv: str(kv[0])):
        if n > 1:
            report.fail("unique_records", f"sample_id appears {n} times", sample_id=sid)
    cols.finish()
    for k, p in zip(*np.nonzero((cols.status == _STATUS_CODE["scored"]) & np.isnan(cols.values[:, :, :10]).all(axis=2))):
        report.fail("null_zero_distinct", "scored record with no component value", sample_id=cols.sample_ids[p], model_id=cols.models[k], file=cols.files[k][p])
    _check_prompt_overalls(cols, [comps10.index(c) for c in comps9], report)
    return cols


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
        want = self.template.format(release_row=r.get("release_row"), sample_id=sid, lane=meta.get("lane"), source_id=meta.get("source_id"))
        if got != want:  # equal strings are equal paths; otherwise compare them normalised
            want = posixpath.normpath(want)
        if got != want and (not isinstance(got, str) or posixpath.normpath(got) != want):
            self.report.fail("unique_records", f"result_file is {json.dumps(got)}, the pair's own path is {want}", sample_id=sid, model_id=m)
            return
        first = self.owner.setdefault(posixpath.normpath(want), (sid, m))  # one file, one pair: compare normalised paths
        if first != (sid, m):
            self.report.fail("unique_records", f"result_file {want} is also the file of sample_id {first[0]} / model {first[1]}", sample_id=sid, model_id=m)


_SMALLEST_NORMAL = 2.0**-1022


def _nearest_double_of_mean(vals: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """For each row: is ``stored`` the exact mean of the row's non-NaN values rounded to the
    nearest double (ties to even)? ``vals``: (N, k) float64 in [0, 3], NaN = absent;
    ``stored``: (N,) float64, NaN = null. Returns bool (N,).

    Exact integer arithmetic, vectorised: with every value written ``mant · 2**exp``
    (53-bit integer mantissas), ``r = Σ values − n · stored`` is an int64 in units of the
    smallest exponent whenever the row's exponents span at most 6 bits (every realistic
    score); ``stored`` is right iff ``|r|`` is within half a unit in the last place of
    ``stored`` times n. Other rows are settled with Python fractions.
    """
    present = ~np.isnan(vals)
    n = present.sum(axis=1)
    has = n > 0
    ok = has == ~np.isnan(stored)
    v = np.where(present, vals, 0.0)
    o = np.where(has & ~np.isnan(stored), stored, 0.0)
    mv, ev = np.frexp(v)
    mo, eo = np.frexp(o)
    mv, mo = np.ldexp(mv, 53).astype(np.int64), np.ldexp(mo, 53).astype(np.int64)
    nonzero = mv != 0
    far = 1 << 20
    emin = np.minimum(np.where(nonzero, ev, far).min(axis=1), np.where(mo != 0, eo, far))
    emax = np.maximum(np.where(nonzero, ev, -far).max(axis=1), np.where(mo != 0, eo, -far))
    zeros = (emin == far) & has  # every value 0 and stored 0: right
    # a stored value at or below the smallest normal double (2**-1022) has no 53-bit mantissa
    # and a uniform gap below it: those rows are settled with fractions too
    fast = ok & has & ~zeros & (o > _SMALLEST_NORMAL) & (emax - emin <= 6)
    shift_v = np.where(nonzero & fast[:, None], ev - emin[:, None], 0)
    shift_o = np.where(fast, eo - emin, 0)
    r = np.where(fast[:, None], mv << shift_v, 0).sum(axis=1) - n * np.where(fast, mo << shift_o, 0)
    unit = np.int64(1) << shift_o  # one unit in the last place of stored, in units of 2**(emin-53)
    huge = np.abs(r) > (1 << 58)
    r4 = 4 * np.where(huge, 0, r)
    up = 2 * n * unit
    down = np.where(mo == 1 << 52, n * unit, 2 * n * unit)  # the gap below a power of two is half
    right = ((r4 < up) & (r4 > -down)) | (((r4 == up) | (r4 == -down)) & (mo % 2 == 0))
    result = np.where(fast, right & ~huge, ok & (zeros | ~has))
    for i in np.nonzero(ok & has & ~fast & ~zeros)[0]:  # wide exponent range, or stored 0 with nonzero values
        exact = _mean([float(x) for x in vals[i][present[i]]])
        result[i] = float(exact) == float(stored[i])
    return result


def _check_prompt_overalls(cols: _Columns, nine: list[int], report: Report) -> None:
    """Check 6: every scored entry's Overall-10 and Overall-9 is the exact mean of its present
    components rounded to the nearest double (SPEC §4), all scored pairs at once."""
    scored = cols.status == _STATUS_CODE["scored"]
    k_idx, p_idx = np.nonzero(scored)
    if not len(k_idx):
        return
    rows = cols.values[k_idx, p_idx]  # (n scored, 12)
    for j, key, comp_cols in ((10, "overall_10_raw", list(range(10))), (11, "overall_9_raw", nine)):
        vals = rows[:, comp_cols]
        for i in np.nonzero(~_nearest_double_of_mean(vals, rows[:, j]))[0]:
            k, p = int(k_idx[i]), int(p_idx[i])
            exact = _mean([x for x in vals[i].tolist() if x == x])
            stored = rows[i, j]
            report.fail(
                "prompt_overalls", f"{key} is {None if stored != stored else float(stored)}, recomputed {None if exact is None else float(exact)}",
                sample_id=cols.sample_ids[p], model_id=cols.models[k], file=cols.files[k][p],
            )


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _as_float(v) -> float:
    try:
        return float(v)
    except OverflowError:  # an integer beyond the double range: not a 0–3 score
        return math.inf


def _check_entry(sid, m, e, comps10, comps9, report: Report) -> tuple[int, list[float]]:
    """Checks of one record entry. Returns its status code and its twelve raw values (ten
    components, Overall-10, Overall-9; NaN = null) for the columns; an entry that is not
    usable gives the unknown code and NaN."""
    where = {"sample_id": sid, "model_id": m, "file": e.get("result_file")}
    status = e.get("status")
    if status not in _STATUS_CODE:
        report.fail("component_values", f"unknown status {status!r}", **where)
        return _UNKNOWN, _NAN_ROW
    comps = e.get("components_raw_0to3")
    if not isinstance(comps, dict) or len(comps) != len(comps10) or not all(c in comps for c in comps10):
        report.fail("null_zero_distinct", "components_raw_0to3 must hold exactly the 10 components (a missing key is neither null nor 0)", **where)
        return _UNKNOWN, _NAN_ROW
    values = [comps[c] for c in comps10]
    for c, v in zip(comps10, values):
        if v is not None and not _is_number(v):
            report.fail("null_zero_distinct", f"{c} is {json.dumps(v)}: neither null nor a number", **where)
            return _UNKNOWN, _NAN_ROW
    present = [c for c, v in zip(comps10, values) if v is not None]
    if status == "scored":
        for c, v in zip(comps10, values):
            if v is not None and not (0 <= _as_float(v) <= 3):
                report.fail("component_values", f"{c} = {v} is not a finite value in 0–3", **where)
        if e.get("error") is not None:
            report.fail("null_zero_distinct", "scored record carries an error reason", **where)
        stored = [e.get("overall_10_raw"), e.get("overall_9_raw")]
        for key, got in zip(("overall_10_raw", "overall_9_raw"), stored):
            if got is not None and not (_is_number(got) and math.isfinite(_as_float(got))):
                report.fail("prompt_overalls", f"{key} is {json.dumps(got)}: neither null nor a number", **where)
                return _UNKNOWN, _NAN_ROW
        return _STATUS_CODE["scored"], [math.nan if v is None else _as_float(v) for v in (*values, *stored)]
    if present:
        report.fail("component_values", f"{status} record carries component values ({', '.join(present)})", **where)
    if e.get("overall_10_raw") is not None or e.get("overall_9_raw") is not None:
        report.fail("component_values", f"{status} record carries an overall value", **where)
    if status == "invalid_evaluation" and not e.get("error"):
        report.fail("null_zero_distinct", "invalid_evaluation without its reason", **where)
    if status != "invalid_evaluation" and e.get("error") is not None:
        report.fail("null_zero_distinct", f"{status} record carries an error reason", **where)
    return _STATUS_CODE[status], _NAN_ROW


# ---- independent reconstruction of the aggregates --------------------------------------


def _slice_fields(manifest: dict) -> list[str]:
    named = (manifest.get("evaluation_slices") or {}).get("named") or {}
    return sorted({spec.get("field", "subset") for spec in named.values() if spec.get("include_tags")})


def _slice_prompts(cols: _Columns, spec: dict) -> list[int]:
    """Prompt indices (sample_id order) of one slice of the manifest (SPEC §9): the prompts
    whose ``field`` (a string or a list of strings) holds any / all of ``include_tags``."""
    tags = set(spec["include_tags"])
    if not tags:
        return list(range(len(cols.sample_ids)))
    j = cols.slice_fields.index(spec.get("field", "subset"))
    out = []
    for i, values in enumerate(cols.field_values):
        v = values[j]
        have = {v} if isinstance(v, str) else set(v) if isinstance(v, list) else set()
        if (tags & have) if spec["match"] == "any" else (tags <= have):
            out.append(i)
    return out


def _groups(cols: _Columns, manifest: dict) -> tuple[list[tuple[str, str, str]], np.ndarray, np.ndarray]:
    """Every (slice, kind, group) with its prompts, as long arrays ``(group id, prompt index)``
    (one pair per prompt and group it is in; prompts in sample_id order). Kinds are those of
    ``leaderboard_by_slice.json``: strata, domains, failure_modes."""
    named = manifest["evaluation_slices"]["named"]
    names: list[tuple[str, str, str]] = []
    group, prompt = [], []
    for slice_name in manifest["published_slices"]:
        members = _slice_prompts(cols, named[slice_name])
        strata = ["All", "NoSearch", "SearchIntensive", "VisualSearch", "TextualSearch"]
        doms = sorted({t for i in members for t in cols.prompts[i][2]})
        fms = sorted({t for i in members for t in cols.prompts[i][3]})
        base = len(names)
        gid = {("s", g): base + i for i, g in enumerate(strata)}
        gid.update({("d", t): base + len(strata) + i for i, t in enumerate(doms)})
        gid.update({("f", t): base + len(strata) + len(doms) + i for i, t in enumerate(fms)})
        names += [(slice_name, "strata", g) for g in strata] + [(slice_name, "domains", t) for t in doms] + [(slice_name, "failure_modes", t) for t in fms]
        for i in members:
            stratum, search_type, domains, failure_modes = cols.prompts[i]
            member = {("s", "All"), ("s", stratum), ("s", search_type)}
            member |= {("d", t) for t in domains} | {("f", t) for t in failure_modes}
            for key in member:
                group.append(gid[key])
                prompt.append(i)
    return names, np.array(group, dtype=np.int64), np.array(prompt, dtype=np.int64)


def _public_cells(sums: np.ndarray, counts: np.ndarray, dec: int, exact: Callable[[int], Fraction]) -> list:
    """Public values (0–100, half-up to ``dec``) of float ``sums`` / integer ``counts``; None
    where the count is 0. A cell within the float error bound of a rounding boundary
    (``… .5``; the sum of n values in [0, 3] is off by at most n·2⁻⁵³·sum) is decided by
    ``exact(i)``, its exact rational mean."""
    out: list = []
    for i, (total, n) in enumerate(zip(sums.tolist(), counts.tolist())):
        if n == 0:
            out.append(None)
            continue
        q = total / n * 100 / 3 * 10**dec
        if abs(q - math.floor(q) - 0.5) <= q * (n + 10) * 2.0**-50:
            out.append(_half_up(exact(i) * 100 / 3, dec))
        else:
            out.append(float(Fraction(math.floor(q + 0.5), 10**dec)))
    return out


def reconstruct(manifest: dict, records: list[dict]) -> dict[str, object]:
    """Recompute the four leaderboard artifacts from records (in memory) and manifest alone."""
    return _reconstruct(manifest, _Columns.from_records(manifest, records))


def _reconstruct(manifest: dict, cols: _Columns) -> dict[str, object]:
    """Recompute the four leaderboard artifacts from the validator's columns.

    Its own algorithm: group sums by ``numpy.bincount`` over (group, prompt) pairs — the
    pipeline multiplies a membership matrix — and its own exact settlement near rounding
    boundaries with :class:`fractions.Fraction`."""
    sc = manifest["scoring"]
    dec = sc["public_rounding_decimals"]
    comps10 = sc["overall_10_components"]
    order = manifest["model_order"]
    names, group, prompt = _groups(cols, manifest)
    n_groups = len(names)
    n_total = np.bincount(group, minlength=n_groups)
    keys = [("components", c) for c in comps10] + [("overall_10_raw", None), ("overall_9_raw", None)]
    rows: dict[str, list[dict]] = {m: [] for m in order}
    for k, m in enumerate(order):
        meta = manifest["models"][m]
        policy = meta["missing_policy"]
        status_codes = cols.status[k]
        status = {s: np.bincount(group, weights=(status_codes == i).astype(np.float64)[prompt], minlength=n_groups) for s, i in _STATUS_CODE.items()}
        n_scored = status["scored"].astype(np.int64)
        zeros = n_total - n_scored if policy == "zero_fill" else np.zeros(n_groups, dtype=np.int64)
        x_all = np.where((status_codes == _STATUS_CODE["scored"])[:, None], cols.values[k], math.nan)
        cells = {}
        for j, (key, c) in enumerate(keys):
            x = x_all[:, j]
            has = ~np.isnan(x)
            sums = np.bincount(group, weights=np.where(has, x, 0.0)[prompt], minlength=n_groups)
            counts = np.bincount(group, weights=has[prompt].astype(np.float64), minlength=n_groups).astype(np.int64) + zeros

            def exact(g, x=x, has=has):
                members = prompt[(group == g) & has[prompt]]
                return _mean([float(v) for v in x[members]] + [0.0] * int(zeros[g]))

            cells[c or key] = (_public_cells(sums, counts, dec, exact), counts.tolist())
        for g in range(n_groups):
            nt, ns = int(n_total[g]), int(n_scored[g])
            rows[m].append({
                "model_id": m,
                "display_name": meta["display_name"],
                "type": meta["type"],
                "missing_policy": policy,
                "n_total": nt,
                "n_scored": ns,
                "n_included": ns + int(zeros[g]),
                "coverage": _half_up(Fraction(ns, nt), 4) if nt else 0.0,
                "overall_9": cells["overall_9_raw"][0][g],
                "overall_10": cells["overall_10_raw"][0][g],
                "components": {c: cells[c][0][g] for c in comps10},
                "component_counts": {c: cells[c][1][g] for c in comps10},
                "status_counts": {s: int(status[s][g]) for s in _STATUSES},
            })
    by_slice: dict[str, dict] = {name: {"overall": None, "strata": {}, "domains": {}, "failure_modes": {}} for name in manifest["published_slices"]}
    for g, (slice_name, kind, gname) in enumerate(names):
        by_slice[slice_name][kind][gname] = _board(manifest, [rows[m][g] for m in order])
    for board in by_slice.values():
        board["overall"] = board["strata"]["All"]
    shown = by_slice[manifest["output_slice"]]
    return {
        "leaderboard_overall.json": shown["overall"],
        "leaderboard_by_stratum.json": shown["strata"],
        "leaderboard_by_domain.json": shown["domains"],
        "leaderboard_by_failure_mode.json": shown["failure_modes"],
        "leaderboard_by_slice.json": by_slice,
    }


def _board(manifest: dict, rows: list[dict]) -> list[dict]:
    """Rank one group's rows (SPEC §6): coverage ≥ the written min_ranking_coverage, an
    Overall-9, not pending; by Overall-9 descending, ties by model_id; the rest after."""
    sc = manifest["scoring"]
    # the decimal written in the config (its JSON number's shortest repr), never the binary double
    min_cov = Fraction(str(sc["min_ranking_coverage"]))
    order = manifest["model_order"]
    pending = {m for m in order if manifest["models"][m].get("pending") is True}
    eligible = [
        r for r in rows
        if r["overall_9"] is not None and r["model_id"] not in pending and r["n_total"] and Fraction(r["n_scored"], r["n_total"]) >= min_cov
    ]
    eligible.sort(key=lambda r: (-r["overall_9"], r["model_id"]))
    rest = [r for r in rows if r not in eligible]
    rest.sort(key=lambda r: (r["overall_9"] is None, -(r["overall_9"] or 0), order.index(r["model_id"])))
    for i, r in enumerate(eligible, 1):
        r["rank"], r["ranked"] = i, True
    for r in rest:
        r["rank"], r["ranked"] = None, False
    return eligible + rest


def _flat_slices(data: object) -> object:
    """``leaderboard_by_slice.json`` as one mapping ``{"<slice> <kind> <group>": rows}`` (the
    overall list under ``"<slice> overall"``); anything that is not that shape unchanged."""
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        return data
    flat: dict[str, object] = {}
    for name, board in data.items():
        for kind in sorted(set(board) | set(_SLICE_KINDS)):
            part = board.get(kind, "<missing>")
            if kind == "overall" or not isinstance(part, dict):
                flat[f"{name} {kind}"] = part
            else:
                flat.update({f"{name} {kind} {g}": rows for g, rows in part.items()})
    return flat


def _compare(name: str, want: object, got: object, report: Report, check: str) -> None:
    if name == "leaderboard_overall.json":
        want, got = {"All": want}, {"All": got}
    if name == "leaderboard_by_slice.json":
        want, got = _flat_slices(want), _flat_slices(got)
    if not isinstance(got, dict):
        report.fail(check, f"{name}: not a mapping of groups", file=name)
        return
    for g in sorted(set(want) | set(got)):
        if g not in got:
            report.fail(check, f"{name}: group missing", file=name, group=g)
            continue
        if g not in want:
            report.fail(check, f"{name}: group has no prompt in prompt_scores.jsonl", file=name, group=g)
            continue
        wrows, grows = want[g], got[g]
        if not isinstance(grows, list):
            report.fail(check, f"{name}: group is not a list of rows", file=name, group=g)
            continue
        gby = {r.get("model_id"): r for r in grows if isinstance(r, dict)}
        if [r["model_id"] for r in wrows] != [r.get("model_id") if isinstance(r, dict) else None for r in grows]:
            report.fail(check, f"{name}: row order {[r.get('model_id') for r in grows if isinstance(r, dict)]} differs from the recomputed ranking {[r['model_id'] for r in wrows]}", file=name, group=g)
        for w in wrows:
            r = gby.get(w["model_id"])
            if r is None:
                report.fail(check, f"{name}: row missing", file=name, group=g, model_id=w["model_id"])
                continue
            for key, wv in w.items():
                gv = r.get(key, "<missing>")
                if not _same(wv, gv):
                    report.fail(check, f"{name}: {key} is {json.dumps(gv)}, recomputed {json.dumps(wv)}", file=name, group=g, model_id=w["model_id"])


def _compare_uncertainty(want: dict, got: object, report: Report) -> None:
    """Every figure of ``uncertainty.json`` against the recomputation, named by group, model
    (or pair) and key."""
    name, check = _UNCERTAINTY, "uncertainty"
    if not isinstance(got, dict):
        report.fail(check, f"{name}: not a JSON object", file=name)
        return
    for key in sorted(set(want) | set(got)):
        if key in ("groups", "pairs"):
            continue
        if not _same(want.get(key, "<missing>"), got.get(key, "<missing>")):
            report.fail(check, f"{name}: {key} is {json.dumps(got.get(key, '<missing>'))}, recomputed {json.dumps(want.get(key, '<missing>'))}", file=name)
    groups, pairs = got.get("groups"), got.get("pairs")
    if not isinstance(groups, dict) or not isinstance(pairs, dict):
        report.fail(check, f"{name}: groups and pairs must be JSON objects", file=name)
        return
    for g in sorted(set(want["groups"]) | set(groups)):
        w, h = want["groups"].get(g), groups.get(g)
        if w is None or not isinstance(h, dict):
            report.fail(check, f"{name}: group {'missing' if h is None else 'not recomputed (no such group in prompt_scores.jsonl)' if w is None else 'is not an object'}", file=name, group=g)
            continue
        for m in sorted(set(w) | set(h)):
            if m not in w or not isinstance(h.get(m), dict):
                report.fail(check, f"{name}: model {'missing' if m not in h else 'unknown' if m not in w else 'not an object'}", file=name, group=g, model_id=m)
                continue
            for key, wv in w[m].items():
                hv = h[m].get(key, "<missing>")
                if not _same(wv, hv):
                    report.fail(check, f"{name}: {key} is {json.dumps(hv)}, recomputed {json.dumps(wv)}", file=name, group=g, model_id=m)
    for g in sorted(set(want["pairs"]) | set(pairs)):
        w, h = want["pairs"].get(g), pairs.get(g)
        if w is None or not isinstance(h, list):
            report.fail(check, f"{name}: pairs of the group {'missing' if h is None else 'not expected' if w is None else 'not a list'}", file=name, group=g)
            continue
        order = [(r.get("a"), r.get("b")) if isinstance(r, dict) else None for r in h]
        expected = [(r["a"], r["b"]) for r in w]
        if order != expected:
            first = next((i for i, (x, y) in enumerate(zip(order, expected)) if x != y), min(len(order), len(expected)))
            got_pair = order[first] if first < len(order) else "nothing"
            want_pair = expected[first] if first < len(expected) else "nothing"
            report.fail(check, f"{name}: pairs must be every pair of ranked models in published rank order ({len(expected)} pairs): "
                               f"entry {first + 1} is {json.dumps(got_pair)}, expected {json.dumps(want_pair)}", file=name, group=g)
            continue
        for wr, hr in zip(w, h):
            for key, wv in wr.items():
                hv = hr.get(key, "<missing>")
                if not _same(wv, hv):
                    report.fail(check, f"{name}: pair {wr['a']} vs {wr['b']}: {key} is {json.dumps(hv)}, recomputed {json.dumps(wv)}",
                                file=name, group=g, model_id=f"{wr['a']} vs {wr['b']}")


def _same(a, b) -> bool:
    """Equality that keeps null, 0, 0.0 and False apart: JSON types must match too."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)  # -0.0 prints apart from 0.0
    return a == b


def _check_rows_null_vs_zero(boards: dict, report: Report) -> None:
    """In every row a component is null exactly when no value went into it (count 0)."""
    for name in _BOARDS:
        data = boards[name]
        groups = {"All": data} if isinstance(data, list) else _flat_slices(data) if name == "leaderboard_by_slice.json" else data
        for g, rows in groups.items():
            for r in rows:
                comps, counts = r.get("components", {}), r.get("component_counts", {})
                for c in sorted(set(comps) | set(counts)):
                    if (comps.get(c) is None) != (counts.get(c, 0) == 0):
                        report.fail(
                            "null_zero_distinct",
                            f"{name}: {c} is {json.dumps(comps.get(c))} with component_counts {counts.get(c)} (null must mean no value, and only that)",
                            file=name, group=g, model_id=r.get("model_id"),
                        )


def _check_expected(manifest: dict, cols: _Columns, report: Report) -> None:
    checks = manifest.get("release_checks") or {}
    expected = checks.get("expected") or {}
    n_records = len(cols.sample_ids)
    n = expected.get("n_prompts")
    if n is not None and n_records != n:
        report.fail("expected_counts", f"{n_records} prompts, expected {n}")
    part = expected.get("partition") or {}
    counts: Counter = Counter()
    for stratum, search_type, _, _ in cols.prompts:
        counts[stratum] += 1
        if search_type != stratum:
            counts[search_type] += 1
    for k, want in sorted(part.items()):
        if counts[k] != want:
            report.fail("expected_counts", f"partition {k} has {counts[k]} prompts, expected {want}", group=k)
    mp = manifest.get("partition", {})
    for k in ("NoSearch", "SearchIntensive", "VisualSearch", "TextualSearch"):
        if mp.get(k) != counts[k]:
            report.fail("expected_counts", f"manifest partition {k} = {mp.get(k)}, records give {counts[k]}", group=k)
    if manifest.get("dataset", {}).get("n_prompts") != n_records:
        report.fail("expected_counts", f"manifest dataset.n_prompts = {manifest.get('dataset', {}).get('n_prompts')}, records give {n_records}")
    named = (manifest.get("evaluation_slices") or {}).get("named") or {}
    for name in manifest.get("published_slices") or []:
        spec = named.get(name)
        if not isinstance(spec, dict):
            report.fail("expected_counts", f"published slice {name} is not defined in evaluation_slices", group=name)
            continue
        members = _slice_prompts(cols, spec)
        want_rows = spec.get("expected_rows")
        if want_rows is not None and len(members) != want_rows:
            report.fail("expected_counts", f"slice {name} has {len(members)} prompts, expected_rows is {want_rows}", group=name)
        got: Counter = Counter()
        for i in members:
            stratum, search_type = cols.prompts[i][:2]
            got[stratum] += 1
            if search_type != stratum:
                got[search_type] += 1
        stated = (manifest.get("slice_partitions") or {}).get(name) or {}
        for k in ("NoSearch", "SearchIntensive", "TextualSearch", "VisualSearch"):
            if stated.get(k) != got[k]:
                report.fail("expected_counts", f"slice {name}: manifest slice_partitions {k} = {stated.get(k)}, records give {got[k]}", group=name)
    shown = manifest.get("output_slice")
    if shown not in (manifest.get("published_slices") or []) or named.get(shown, {}).get("include_tags"):
        report.fail("expected_counts", f"output_slice {shown!r} is not a published slice of every prompt")
    if not n and not part and not named:
        report.skip("expected_counts", "no expected counts configured; partition consistency only")

    lock = expected.get("n_scored") or {}
    if not lock:
        report.skip("coverage_lock", "no coverage lock configured")
    for m, want in sorted(lock.items()):
        k = cols.models.index(m) if m in cols.models else None
        codes = cols.status[k] if k is not None else np.zeros(0, dtype=np.uint8)
        n_scored = int((codes == _STATUS_CODE["scored"]).sum())
        if n_scored < want:
            names = {i: s for s, i in _STATUS_CODE.items()}
            lost = [f"{sid} ({names.get(int(c), 'unknown')})" for sid, c in zip(cols.sample_ids, codes.tolist()) if c != _STATUS_CODE["scored"]]
            report.fail(
                "coverage_lock",
                f"model {m} has {n_scored} scored prompts, fewer than the locked {want}; not scored: {', '.join(lost[:20])}" + (" …" if len(lost) > 20 else ""),
                model_id=m,
            )


def _check_paper_table(manifest: dict, boards: dict, report: Report) -> None:
    table = (manifest.get("release_checks") or {}).get("paper_table")
    if table is None:
        report.skip("paper_table", "no paper_table configured")
        return
    dec = manifest["scoring"]["public_rounding_decimals"]
    tol = Fraction(1, 2 * 10**dec)
    rows = {r["model_id"]: r for r in boards["leaderboard_overall.json"]}
    for m in manifest["model_order"]:
        if m not in table:
            report.fail("paper_table", "model missing from paper_table", model_id=m)
            continue
        ours = rows.get(m, {}).get("overall_10")
        ref = table[m]
        # both as the decimals they print (the paper's number as written, ours as published)
        if ours is None or not _is_number(ref) or not math.isfinite(ref) or abs(Fraction(repr(float(ours))) - Fraction(repr(float(ref)))) > tol:
            report.fail("paper_table", f"Overall-10 {ours} differs from the paper table's {ref} by more than {float(tol)}", model_id=m)


def validate_folder(folder: str | Path, aggregate: Callable[[], dict] | None = None) -> Report:
    """Run every release check on a release folder (staging or published) and return the report.

    ``aggregate``: optionally ``() -> {artifact name: data}``, the pipeline's own aggregation
    of the release with prompts and models permuted; check 10 compares it with this
    module's reconstruction. Without it (``searchgen-nb validate``) check 10 is skipped.
    Never raises for bad data: problems are failures in the report.
    """
    folder = Path(folder)
    report = Report()
    for p in check_folder(folder, skip=("prompt_scores.jsonl",)):  # its lines: in _scan_records
        report.fail("schema", p["message"], file=p["file"], line=p["line"])
    loaded = _load(folder, report)
    if loaded is None:
        for name in CHECKS:
            if name != "strict_json":
                report.skip(name, "artifacts could not be read")
        return report
    manifest, boards = loaded
    try:
        cols = _scan_records(folder, manifest, report)
        _check_expected(manifest, cols, report)
        _check_paper_table(manifest, boards, report)
        if not report.checks["unique_records"]["passed"] or not report.checks["null_zero_distinct"]["passed"]:
            report.skip("aggregates", "records are inconsistent; aggregates not reconstructed")
            report.skip("order_invariance", "records are inconsistent")
            report.skip("uncertainty", "records are inconsistent; intervals not recomputed")
            return report
        _check_rows_null_vs_zero(boards, report)
        want = _reconstruct(manifest, cols)
        for name in _BOARDS:
            _compare(name, want[name], boards[name], report, "aggregates")
        if aggregate is None:
            report.skip("order_invariance", "the pipeline's aggregation is not at hand (standalone validate); the reconstruction reads the records in sample_id order")
        else:
            theirs = aggregate()
            for name in _BOARDS:
                _compare(name, want[name], theirs[name], report, "order_invariance")
        if report.checks["aggregates"]["passed"]:
            try:
                want_u = reconstruct_uncertainty(manifest, cols, boards, _slice_prompts)
            except SettingsError as exc:
                report.fail("uncertainty", str(exc), file="manifest.json")
            else:
                _compare_uncertainty(want_u, boards[_UNCERTAINTY], report)
        else:
            report.skip("uncertainty", "the leaderboards do not reconstruct; their rankings cannot be trusted")
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        report.fail("strict_json", f"artifacts do not follow the schema: {type(exc).__name__}: {exc}")
    return report
