"""What the book's What-changed and audit pages show, as plain data: the frames of
changes.json, the prompt explorer's rows and the status, invalid, warning and validation
frames of a :class:`~searchgen_nb.book.views.Release`."""

from __future__ import annotations

import functools
from fractions import Fraction

import pandas as pd

from searchgen_nb.book.fmt import NA, coverage_text, interval_text, pair_cell
from searchgen_nb.book.views import TAG_KINDS, Release, group_label
from searchgen_nb.changes_markdown import score_changed, status_text
from searchgen_nb.constants import INVALID, STATUSES
from searchgen_nb.gate.report import CHECK_DESCRIPTIONS
from searchgen_nb.numeric import RAW_DECIMALS, to_public


def change_group_label(key: str) -> str:
    """``domain:FAS`` → "domain FAS · Fashion"; ``all:All`` → "All"; strata and slices by name."""
    kind, _, name = key.partition(":")
    if kind in TAG_KINDS:
        return group_label(kind, name)
    return {"all": "All", "stratum": name}.get(kind, f"slice {name}")


def _changed_cells(release: Release):
    """``(key, group label, display name, model_id, cell)`` of each group × model of changes."""
    names = release.names
    for key, cells in (release.changes or {}).get("groups", {}).items():
        for m, c in cells.items():
            yield key, change_group_label(key), names.get(m, m), m, c


def rank_moves_frame(release: Release) -> pd.DataFrame:
    """Every group × model whose rank changed: Group, Model, an arrow, ranks and scores."""
    rows = []
    for _, group, name, _, c in _changed_cells(release):
        if (b := c["rank_before"]) != (a := c["rank_after"]):
            move = "•" if b is None or a is None else "↑" if a < b else "↓"
            rows.append((group, name, move, b, a, c["overall_9_before"], c["overall_9_after"]))
    return pd.DataFrame(
        rows,
        columns=[
            "Group",
            "Model",
            "Move",
            "Rank before",
            "Rank after",
            "Overall-9 before",
            "Overall-9 after",
        ],
        dtype=object,
    )


def score_changes_frame(release: Release) -> pd.DataFrame:
    """Every group × model whose Overall-9 changed, largest change first (Δ before the values,
    so that a phone shows it), with the paired bootstrap interval of the change for All."""
    boot = ((release.changes or {}).get("paired_bootstrap") or {}).get("models", {})
    rows = []
    for key, group, name, m, c in _changed_cells(release):
        if score_changed(c):
            ci = (boot.get(m) or {}).get("ci") if key == "all:All" else None
            rows.append(
                (
                    group,
                    name,
                    c["delta"],
                    c["overall_9_before"],
                    c["overall_9_after"],
                    interval_text(ci, release.decimals) if ci else "–",
                )
            )
    rows.sort(key=lambda r: (-abs(r[2] or 0), r[0], r[1]))
    iv = f"{release.confidence} interval of Δ (paired, common prompts)"
    return pd.DataFrame(
        rows,
        columns=["Group", "Model", "Δ", "Overall-9 before", "Overall-9 after", iv],
        dtype=object,
    )


def status_changes_frame(release: Release) -> pd.DataFrame:
    """Every prompt × model whose status or raw Overall-9 changed: the transition by name, each
    status not scored with how it counts by the model's missing policy in that release (one
    status when it stayed), and the raw (0–3) Overall-9 before and after as it counts."""
    changed = {
        c["model_id"]: c["fields"]
        for c in (release.changes or {}).get("models", {}).get("changed", [])
    }
    names, policies, rows = release.names, release.policies, []
    for p in (release.changes or {}).get("pairs", []):
        m, now = p["model_id"], policies.get(p["model_id"])
        pol = ((changed.get(m, {}).get("missing_policy") or [now])[0], now)  # before, after
        texts = [status_text(p[f"status_{s}"], pol[i]) for i, s in enumerate(("before", "after"))]
        rows.append(
            (
                names.get(m, m),
                p["sample_id"],
                texts[1] if texts[0] == texts[1] else " → ".join(texts),
                *(
                    pair_cell(p[f"overall_9_{s}"], p[f"status_{s}"], pol[i], RAW_DECIMALS)
                    for i, s in enumerate(("before", "after"))
                ),
            )
        )
    return pd.DataFrame(
        rows,
        columns=["Model", "sample_id", "Change", "Raw Overall-9 before", "Raw Overall-9 after"],
        dtype=object,
    )


def prompt_rows(release: Release) -> list[dict]:
    """A dict per prompt of this view: sample_id, ``tags`` (:meth:`Release.prompt_tags`), the
    difficulty and spread (mean, range) of the public Overall-9s, and by model_id ``scores``
    (None: no value) and, for the models without a score, ``statuses`` and ``reasons``."""
    public = functools.partial(to_public, decimals=release.decimals)
    out = []
    for r in release.records:
        entries = {m: r["models"][m] for m in release.model_order}
        raws = {
            m: Fraction(e["overall_9_raw"])
            for m, e in entries.items()
            if e["status"] == "scored" and e["overall_9_raw"] is not None
        }
        out.append(
            {
                "sample_id": r["sample_id"],
                "tags": release.prompt_tags(r),
                "difficulty": public(sum(raws.values(), Fraction(0)) / len(raws)) if raws else None,
                "spread": public(max(raws.values()) - min(raws.values())) if raws else None,
                "scores": {m: public(raws[m]) if m in raws else None for m in entries},
                "statuses": {m: e["status"] for m, e in entries.items() if e["status"] != "scored"},
                "reasons": {m: e["error"] for m, e in entries.items() if e.get("error")},
            }
        )
    return out


def status_frame(release: Release) -> pd.DataFrame:
    """Per model (config order): display_name, model_id, the four status counts, prompts,
    coverage text and missing policy (from the manifest)."""
    m, n = release.manifest, release.manifest["dataset"]["n_prompts"]
    rows = []
    for model_id in release.model_order:
        counts = m["extraction"]["status_counts"][model_id]
        rows.append(
            {
                "display_name": release.display_name(model_id),
                "model_id": model_id,
                **{s: counts[s] for s in STATUSES},
                "prompts": n,
                "coverage": coverage_text(counts["scored"], n, release.decimals) if n else NA,
                "missing_policy": m["models"][model_id]["missing_policy"],
            }
        )
    return pd.DataFrame(rows)


def invalid_frame(release: Release) -> pd.DataFrame:
    """Every ``invalid_evaluation`` pair: model, sample_id, file (below results_root), reason."""
    rows = sorted(
        (
            (release.display_name(m), m, r["sample_id"], e["error"], e["result_file"])
            for r in release.records
            for m, e in r["models"].items()
            if e["status"] == INVALID
        ),
        key=lambda row: (row[1], row[2]),
    )
    return pd.DataFrame(rows, columns=["Model", "model_id", "sample_id", "Reason", "File"])


def warnings_frame(release: Release) -> pd.DataFrame:
    """Every extraction warning recorded in the manifest."""
    cols = ["check", "model_id", "sample_id", "line", "file", "message"]
    warnings = release.manifest["extraction"]["warnings"]
    return pd.DataFrame([{c: w.get(c) for c in cols} for w in warnings], columns=cols, dtype=object)


def validation_frame(report: dict) -> pd.DataFrame:
    """One row per release check: number, name, result, problems, first problem / why skipped."""
    return pd.DataFrame(
        [
            {
                "#": i,
                "Check": c["name"],
                "What it checks": CHECK_DESCRIPTIONS.get(c["name"], ""),
                "Result": ("PASS (not applicable)" if c.get("skipped") else "PASS")
                if c["passed"]
                else "FAIL",
                "Problems": c["n_failures"],
                "First problem / note": c["failures"][0]["message"]
                if c["failures"]
                else (c.get("skipped") or "–"),
            }
            for i, c in enumerate(report["checks"], start=1)
        ]
    )
