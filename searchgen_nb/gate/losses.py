"""The gate's guard against losing results (data contract, § The release gate): the pairs the
previous release scored that this one does not (check ``lost_results``), a coverage lock's
shortfall listed culprit first (check ``coverage_lock``), and the warning of a release that
nothing guards. Reads the previous release's ``prompt_scores.jsonl`` with its own code."""

from __future__ import annotations

from pathlib import Path

from searchgen_nb.files import read_lines
from searchgen_nb.gate.columns import SCORED, STATUSES, Columns
from searchgen_nb.gate.report import MAX_MESSAGE, Report
from searchgen_nb.untrusted import excerpt, strict_loads

#: How a pair without a result file is described; an invalid one gives its own reason.
_NO_FILE = {
    "missing_evaluation": "no result file (the image is there)",
    "missing_generation": "neither a result file nor an image",
}
#: Culprit first: an image without its result file (deleted?), a file that cannot be used,
#: then neither a file nor an image.
_RANK = {"missing_evaluation": 0, "invalid_evaluation": 1, "missing_generation": 2}
UNGUARDED = "unguarded_results"


def previous_statuses(folder: Path, report: Report) -> dict[tuple, object] | None:
    """``{(model_id, sample_id): status}`` of the previous release in ``folder``, read line by
    line as strict JSON; None (``lost_results`` failed, naming the file and line) when a line
    is not a record or the file cannot be read."""
    path = Path(folder) / "prompt_scores.jsonl"
    out: dict[tuple, object] = {}
    where = f"previous release {path}"
    try:
        for n, raw in enumerate(read_lines(path), start=1):
            try:
                rec = strict_loads(raw.decode("utf-8"))
            except (ValueError, RecursionError) as exc:
                report.fail(
                    "lost_results",
                    f"{where}: line {n}: not strict JSON ({excerpt(str(exc), 120)})",
                    file=str(path),
                    line=n,
                )
                return None
            sid = rec.get("sample_id") if isinstance(rec, dict) else None
            entries = rec.get("models") if isinstance(rec, dict) else None
            if not isinstance(sid, str) or not isinstance(entries, dict):
                report.fail(
                    "lost_results",
                    f"{where}: line {n}: not a record (a sample_id and a models map)",
                    file=str(path),
                    line=n,
                )
                return None
            out.update(
                ((m, sid), e.get("status") if isinstance(e, dict) else None)
                for m, e in entries.items()
            )
    except OSError as exc:
        report.fail("lost_results", f"{where}: cannot read: {exc.strerror or exc}", file=str(path))
        return None
    return out


def unscored(cols: Columns, k: int, lost: set) -> list[dict]:
    """Model ``k``'s pairs that are not scored, culprit first: those ``lost`` (sample_ids the
    previous release scored), then by status (an image without its result, a file that cannot
    be used, neither), then by sample_id; each with its status, reason and result file."""
    pairs = []
    for i, (sid, code) in enumerate(zip(cols.sample_ids, cols.status[k].tolist())):
        if code != SCORED:
            status = STATUSES[code] if code < len(STATUSES) else "unknown"
            reason = cols.errors[k][i] or _NO_FILE.get(status, "unknown status")
            pairs.append(
                {
                    "sample_id": sid,
                    "status": status,
                    "reason": reason,
                    "result_file": cols.files[k][i],
                    "lost": sid in lost,
                }
            )
    return sorted(
        pairs, key=lambda p: (not p["lost"], _RANK.get(p["status"], 3), str(p["sample_id"]))
    )


def listing(head: str, pairs: list[dict]) -> str:
    """``head`` and as many of ``pairs`` as fit in one bounded message, then how many more: a
    lost pair with its status, reason and result file, the others' sample_ids by status."""
    text, status = head, None
    for n, p in enumerate(pairs):
        sid = excerpt(p["sample_id"], 60)
        if p["lost"]:
            item = (
                f"{sid} {p['status']}, {excerpt(p['reason'], 100)}"
                f" (results_root/{excerpt(p['result_file'], 160)})"
            )
        else:
            item = sid if p["status"] == status else f"{p['status']} {sid}"
        sep = ": " if n == 0 else ", " if item == sid else "; "
        if n and len(text) + len(sep) + len(item) + len(_more(len(pairs) - n - 1)) > MAX_MESSAGE:
            return text + _more(len(pairs) - n)
        text, status = text + sep + item, None if p["lost"] else p["status"]
    return text


def _more(n: int) -> str:
    return f"; … {n} more in validation_report.json" if n else ""


def check_lost_results(manifest: dict, cols: Columns, previous: dict | None, report: Report) -> set:
    """Check ``lost_results``: every pair of a model and a prompt of both releases that the
    previous release scored and this one does not fails, unless ``expected.lost_results``
    acknowledges it; an acknowledged pair that was not lost fails too. Returns the lost pairs
    ``{(model_id, sample_id)}``, acknowledged or not."""
    expected = (manifest.get("release_checks") or {}).get("expected") or {}
    acked = {(m, s) for m, ids in (expected.get("lost_results") or {}).items() for s in ids}
    if previous is None:
        if report.checks["lost_results"]["passed"]:
            said = (
                "no previous_release configured"
                if not (manifest.get("config") or {}).get("previous_release")
                else "the previous release is not at hand (standalone validate)"
            )
            report.skip("lost_results", said)
        return set()
    lost = set()
    for k, m in enumerate(cols.models):
        was = {sid for sid in cols.sample_ids if previous.get((m, sid)) == "scored"}
        pairs = [p for p in unscored(cols, k, was) if p["lost"]]
        lost |= {(m, p["sample_id"]) for p in pairs}
        if shown := [p for p in pairs if (m, p["sample_id"]) not in acked]:
            head = (
                f"model {excerpt(m, 60)}: {len(shown)} result(s) the previous release scored"
                " are not scored now (not acknowledged in expected.lost_results)"
            )
            report.fail("lost_results", listing(head, shown), model_id=m, pairs=shown)
    now = {(m, sid) for m in cols.models for sid in cols.sample_ids}
    for m, sid in sorted(acked - lost):
        why = (
            "is no pair of both releases"
            if (m, sid) not in now or (m, sid) not in previous
            else "was not scored in the previous release"
            if previous[(m, sid)] != "scored"
            else "is scored in this release"
        )
        report.fail(
            "lost_results",
            f"expected.lost_results names model {excerpt(m, 60)},"
            f" sample_id {excerpt(sid, 60)}, which was not lost: it {why}",
            model_id=m,
            sample_id=sid,
        )
    return lost


def check_coverage_lock(manifest: dict, cols: Columns, lost: set, report: Report) -> None:
    """Check ``coverage_lock``: no model has fewer scored prompts than its locked ``n_scored``;
    the failure lists the model's unscored pairs culprit first (:func:`unscored`)."""
    expected = (manifest.get("release_checks") or {}).get("expected") or {}
    lock, acked = expected.get("n_scored") or {}, expected.get("lost_results") or {}
    if not lock:
        report.skip("coverage_lock", "no coverage lock configured")
    for m, want in sorted(lock.items()):
        k = cols.models.index(m) if m in cols.models else None
        n_scored = 0 if k is None else cols.status[k].tolist().count(SCORED)
        if n_scored < want:
            gone = {s for n, s in lost if n == m}
            pairs = [] if k is None else unscored(cols, k, gone)
            head = f"model {m} has {n_scored} scored prompts, fewer than the locked {want};"
            if n_acked := len(gone & set(acked.get(m) or ())):
                head += (
                    f" expected.lost_results acknowledges {n_acked} of its unscored pairs as"
                    f" lost, but the lock still counts them: lower expected.n_scored {m} to"
                    f" {want - n_acked} to accept that loss;"
                )
            head += f" not scored ({len(pairs)})"
            report.fail("coverage_lock", listing(head, pairs), model_id=m, pairs=pairs)


def unguarded_warning(manifest: dict) -> str | None:
    """The warning :data:`UNGUARDED` when a model's results are guarded neither by a previous
    release nor by an ``expected.n_scored`` lock (pending models aside), else None."""
    if (manifest.get("config") or {}).get("previous_release"):
        return None
    lock = ((manifest.get("release_checks") or {}).get("expected") or {}).get("n_scored") or {}
    models = manifest.get("models") or {}
    due = [m for m in manifest.get("model_order") or [] if not models.get(m, {}).get("pending")]
    if not (bare := [m for m in due if m not in lock]):
        return None
    who = (
        "this release"
        if len(bare) == len(due)
        else f"{len(bare)} model(s) ("
        + ", ".join(excerpt(m, 40) for m in bare[:5])
        + (", …" if len(bare) > 5 else "")
        + ")"
    )
    return (
        f"nothing guarded {who} against losing results: neither previous_release nor an"
        " expected.n_scored lock, so a deleted or damaged result file would publish unseen;"
        " set previous_release to the last release's public/data"
    )
