"""Independent release validator (data contract, § The release gate): rebuilds every aggregate
and ``uncertainty.json`` from the artifacts alone (it imports none of the pipeline's scoring
code; the contract lists what it imports) and compares exactly; checks in
:data:`CHECK_DESCRIPTIONS` order."""

from __future__ import annotations

import copy
import hashlib
import math
import os
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any

from searchgen_nb.constants import (
    ARTIFACTS,
    CHANGES,
    MANIFEST,
    PARTITION_KEYS,
    UNCERTAINTY,
    VALIDATION_REPORT,
)
from searchgen_nb.files import ARTIFACT_MAX, STREAM_MAX, open_regular, read_bytes
from searchgen_nb.gate.aggregate import reconstruct, reconstruct_columns
from searchgen_nb.gate.bootstrap import SettingsError, reconstruct_uncertainty
from searchgen_nb.gate.columns import Columns, slice_prompts
from searchgen_nb.gate.compare import (
    board_names,
    check_rows_null_vs_zero,
    compare_board,
    compare_uncertainty,
)
from searchgen_nb.gate.evidence import evidence_entry
from searchgen_nb.gate.losses import (
    UNGUARDED,
    check_coverage_lock,
    check_lost_results,
    previous_statuses,
    unguarded_warning,
)
from searchgen_nb.gate.records import is_number, scan_records, why
from searchgen_nb.gate.report import CHECK_DESCRIPTIONS, CHECKS, Report
from searchgen_nb.gate.work import count, refusal
from searchgen_nb.schemas import check_folder
from searchgen_nb.untrusted import excerpt, strict_loads
from searchgen_nb.workers import beside

__all__ = ["CHECKS", "CHECK_DESCRIPTIONS", "Report", "reconstruct", "validate_folder"]
_SCORES = ARTIFACTS[0]  # prompt_scores.jsonl


def _strict_load(path: Path) -> Any:
    """An artifact as strict JSON: NaN, Infinity, a repeated key and nesting too deep are
    refused (``ValueError``), so is a file not regular or over its bound (``OSError``)."""
    try:
        return strict_loads(read_bytes(path, ARTIFACT_MAX).decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _load(folder: Path, report: Report) -> tuple[dict, dict] | None:
    """The manifest, the leaderboards and ``uncertainty.json`` (strict JSON), and every
    artifact's sha256 against the manifest; None when one cannot be read."""
    check = "strict_json"
    try:
        manifest = _strict_load(folder / MANIFEST)
    except (OSError, ValueError) as exc:
        report.fail(check, f"{MANIFEST}: {why(exc)}", file=MANIFEST)
        return None
    try:
        open_regular(folder / _SCORES, STREAM_MAX).close()
    except OSError as exc:
        problem = "missing" if isinstance(exc, FileNotFoundError) else f"cannot read: {why(exc)}"
        report.fail(check, f"{_SCORES}: {problem}", file=_SCORES)
        return None
    try:
        names = board_names(manifest)
    except ValueError as exc:
        report.fail(check, f"{MANIFEST}: {exc}", file=MANIFEST)
        return None
    boards = {}
    for name in (*names, UNCERTAINTY, CHANGES):  # changes.json: read for strict JSON only
        try:
            boards[name] = _strict_load(folder / name)
        except (OSError, ValueError) as exc:
            report.fail(check, f"{name}: {why(exc)}", file=name)
    hashes = manifest.get("artifact_sha256") if isinstance(manifest, dict) else None
    hashes = hashes if isinstance(hashes, dict) else {}  # the schema check names it
    for name in (_SCORES, *names, UNCERTAINTY, CHANGES):
        try:
            with open_regular(folder / name, STREAM_MAX) as fh:
                differs = hashes.get(name) != hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError:  # missing or not readable: reported when it was read
            continue
        if differs:
            report.fail(
                check, f"{name}: sha256 differs from the manifest's artifact_sha256", file=name
            )
    boards.pop(CHANGES, None)
    return (manifest, boards) if len(boards) == len(names) + 1 else None


def _check_own_report(folder: Path, report: Report) -> None:
    """A folder's ``validation_report.json``, when there, must say that every check passed: a
    release is published only then."""
    path = folder / VALIDATION_REPORT
    if not os.path.lexists(path):
        return
    try:
        doc = _strict_load(path)
    except (OSError, ValueError) as exc:
        report.fail("strict_json", f"{VALIDATION_REPORT}: {why(exc)}", file=VALIDATION_REPORT)
        return
    doc = doc if isinstance(doc, dict) else {}  # the schema check names what is wrong
    checks = found if isinstance(found := doc.get("checks"), list) else []
    failed = [c.get("name") for c in checks if isinstance(c, dict) and c.get("passed") is not True]
    if doc.get("passed") is not True or failed:
        listed = ", ".join(excerpt(n, 40) for n in failed[:5]) or "none named"
        report.fail(
            "strict_json",
            f"{VALIDATION_REPORT} says the release did not pass (passed: "
            f"{excerpt(doc.get('passed'), 20)}; failed checks: {listed}); a published "
            "release passed every check",
            file=VALIDATION_REPORT,
        )


def _partition_counts(cols: Columns, members) -> Counter:
    return Counter(k for i in members for k in set(cols.prompts[i][:2]))


def _check_expected(manifest: dict, cols: Columns, report: Report) -> None:
    """Check 1: prompt and partition counts against the config's expected values and the
    manifest's own statements."""
    fail = partial(report.fail, "expected_counts")
    expected = (manifest.get("release_checks") or {}).get("expected") or {}
    n_records, n = len(cols.sample_ids), expected.get("n_prompts")
    if n is not None and n_records != n:
        fail(f"{n_records} prompts, expected {n}")
    part = expected.get("partition") or {}
    counts = _partition_counts(cols, range(n_records))
    for k, want in sorted(part.items()):
        if counts[k] != want:
            fail(f"partition {k} has {counts[k]} prompts, expected {want}", group=k)
    mp = manifest.get("partition", {})
    for k in PARTITION_KEYS:
        if mp.get(k) != counts[k]:
            fail(f"manifest partition {k} = {mp.get(k)}, records give {counts[k]}", group=k)
    stated = manifest.get("dataset", {}).get("n_prompts")
    if stated != n_records:
        fail(f"manifest dataset.n_prompts = {excerpt(stated, 40)}, records give {n_records}")
    named = (manifest.get("evaluation_slices") or {}).get("named") or {}
    published = manifest.get("published_slices") or []
    for name in published:
        spec = named.get(name)
        if not isinstance(spec, dict):
            fail(f"published slice {name} is not defined in evaluation_slices", group=name)
            continue
        members = slice_prompts(cols, spec)
        want_rows = spec.get("expected_rows")
        if want_rows is not None and len(members) != want_rows:
            fail(
                f"slice {name} has {len(members)} prompts, expected_rows is {want_rows}", group=name
            )
        got = _partition_counts(cols, members)
        stated = (manifest.get("slice_partitions") or {}).get(name) or {}
        for k in sorted(PARTITION_KEYS):
            if stated.get(k) != got[k]:
                fail(
                    f"slice {name}: manifest slice_partitions {k} = {stated.get(k)}, records give"
                    f" {got[k]}",
                    group=name,
                )
    shown = manifest.get("output_slice")
    if shown not in published or named.get(shown, {}).get("include_tags"):
        fail(f"output_slice {shown!r} is not a published slice of every prompt")
    if not n and not part and not named:
        report.skip("expected_counts", "no expected counts configured; partition consistency only")


def _check_paper_table(manifest: dict, boards: dict, report: Report) -> None:
    """Check 8: both as the decimals they print (the paper's number as written, ours as
    published) within half a rounding unit."""
    table = (manifest.get("release_checks") or {}).get("paper_table")
    if table is None:
        report.skip("paper_table", "no paper_table configured")
        return
    tol = Fraction(1, 2 * 10 ** manifest["scoring"]["public_rounding_decimals"])
    rows = {r["model_id"]: r for r in boards["leaderboard_overall.json"]}
    for m in manifest["model_order"]:
        if m not in table:
            report.fail("paper_table", "model missing from paper_table", model_id=m)
            continue
        ours, ref = rows.get(m, {}).get("overall_10"), table[m]
        if (
            ours is None
            or not is_number(ref)
            or not math.isfinite(ref)
            or abs(Fraction(repr(float(ours))) - Fraction(repr(float(ref)))) > tol
        ):
            report.fail(
                "paper_table",
                f"Overall-10 {ours} differs from the paper table's {ref} by more than {float(tol)}",
                model_id=m,
            )


#: What reading artifacts that parse but do not follow their schema raises (→ ``strict_json``).
UNREADABLE = (KeyError, TypeError, AttributeError, ValueError, ArithmeticError)
_LOST = (
    "validate: the process checking prompt_evidence.jsonl ended before it was done (killed, "
    "or out of memory?)"
)


def validate_folder(
    folder: str | Path,
    aggregate: Callable[[], dict] | None = None,
    previous: str | Path | None = None,
    staged: bool = False,
) -> Report:
    """Run every release check on a release folder (staging or published); never raises for
    bad data. ``aggregate``: optionally ``() -> {artifact name: data}``, the pipeline's own
    aggregation with prompts and models permuted, for ``order_invariance``; ``previous``: the
    folder of the previous release, for ``lost_results`` (each skipped without it); ``staged``:
    the gate's own folder, whose ``validation_report.json`` it is about to write."""
    folder = Path(folder)
    report = Report()
    damaged = False
    for p in check_folder(folder, skip=(_SCORES,)):  # its lines: in scan_records
        report.fail("schema", p["message"], file=p["file"], line=p["line"])
        damaged = damaged or p["file"] == MANIFEST
    loaded = _load(folder, report)
    if not staged:
        _check_own_report(folder, report)
    if loaded is None or damaged:
        said = "artifacts could not be read" if loaded is None else f"{MANIFEST} fails its schema"
        for name in CHECKS:
            if name not in ("schema", "strict_json"):
                report.skip(name, said)
        return report
    try:
        _check_release(*loaded, folder, aggregate, previous, report)
    except UNREADABLE as exc:
        report.fail(
            "strict_json",
            f"artifacts do not follow the schema: {type(exc).__name__}: {excerpt(str(exc), 200)}",
        )
    return report


def _check_release(
    manifest: dict, boards: dict, folder: Path, aggregate, previous, report: Report
) -> None:
    """The checks after ``schema`` and ``strict_json``, on artifacts that parse."""
    cols = scan_records(folder, manifest, report)
    # the evidence check reads the largest file: in a process of its own while the others run,
    # the report as if it ran first (when it stops, what the others found is dropped)
    before = copy.deepcopy((report.checks, report.warnings))
    with beside(evidence_entry, (folder, manifest, cols, UNREADABLE), _LOST) as evidence:
        try:
            _check_against_records(manifest, boards, cols, aggregate, previous, report)
            stopped = None
        except UNREADABLE as exc:
            stopped = exc
        try:
            entry, stopped_first = evidence()
        except BaseException:
            report.checks, report.warnings = before
            raise
    if stopped_first is not None:
        report.checks, report.warnings = before
        stopped = stopped_first
    report.checks["evidence"] = entry
    if stopped is not None:
        raise stopped


def _check_against_records(
    manifest: dict, boards: dict, cols: Columns, aggregate, previous, report: Report
) -> None:
    """The checks after ``evidence``: counts, losses, the reconstruction and the uncertainty."""
    _check_expected(manifest, cols, report)
    statuses = None if previous is None else previous_statuses(previous, report)
    lost = check_lost_results(manifest, cols, statuses, report)
    check_coverage_lock(manifest, cols, lost, report)
    if warning := unguarded_warning(manifest):
        report.warn(UNGUARDED, warning)
    _check_paper_table(manifest, boards, report)
    if not all(report.checks[c]["passed"] for c in ("unique_records", "null_zero_distinct")):
        report.skip("aggregates", "records are inconsistent; aggregates not reconstructed")
        report.skip("order_invariance", "records are inconsistent")
        report.skip("uncertainty", "records are inconsistent; intervals not recomputed")
        return
    work = count(manifest, cols)
    if too_much := work.without_bootstrap().problems():
        report.fail("aggregates", refusal(too_much), file=MANIFEST)
        for check in ("order_invariance", "uncertainty"):
            report.skip(check, "the release asks for more work than this version bounds")
        return
    check_rows_null_vs_zero(boards, report)
    want = reconstruct_columns(manifest, cols)
    names = board_names(manifest)
    for name in names:
        compare_board(name, want[name], boards[name], report, "aggregates")
    if aggregate is None:
        report.skip(
            "order_invariance",
            "the pipeline's aggregation is not at hand (standalone"
            " validate); the reconstruction reads the records in sample_id order",
        )
    else:
        theirs = aggregate()
        for name in names:
            compare_board(name, want[name], theirs[name], report, "order_invariance")
    if not report.checks["aggregates"]["passed"]:
        report.skip(
            "uncertainty", "the leaderboards do not reconstruct; their rankings cannot be trusted"
        )
    elif work.problems():
        report.fail("uncertainty", refusal(work.problems()), file=MANIFEST)
    else:
        try:
            want_u = reconstruct_uncertainty(manifest, cols, boards, slice_prompts)
        except SettingsError as exc:
            report.fail("uncertainty", str(exc), file=MANIFEST)
        else:
            compare_uncertainty(want_u, boards[UNCERTAINTY], report)
