"""What changed between two published releases: ``changes.json`` (data contract, § Changes
between releases). Figures are the published ones, differences exact decimal subtractions."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, cast

import numpy as np

from searchgen_nb.errors import ConfigError
from searchgen_nb.numeric import exact_mean
from searchgen_nb.published import Published, bootstrap_settings, not_compared, shown
from searchgen_nb.table import OVERALL_9, ReleaseTable
from searchgen_nb.uncertainty import Bootstrap, GroupDef, half_up_signed, intervals

#: Prompt fields that are not metadata (never reported as a metadata change).
_NOT_METADATA = ("models", "prompt_index")
#: Model metadata whose change is reported (a new display name, type or missing policy).
_MODEL_FIELDS = ("display_name", "type", "missing_policy")


def _delta(after: float | None, before: float | None, decimals: tuple[int, int]) -> float | None:
    """after − before, exact decimal; None when either is None. Releases rounding to different
    ``decimals``: 0 within half a unit of the coarser (the same score, rounded twice)."""
    if after is None or before is None:
        return None
    d = Decimal(repr(after)) - Decimal(repr(before))
    if decimals[0] != decimals[1] and abs(d) <= Decimal(5).scaleb(-min(decimals) - 1):
        return 0.0
    return float(d)


def first_release() -> dict:
    """``changes.json`` of a release without ``previous_release``."""
    return {
        "first_release": True,
        "previous": None,
        "groups": {},
        "pairs": [],
        "models": {"added": [], "removed": [], "changed": []},
        "prompts": {"added": [], "removed": [], "metadata_changed": []},
        "paired_bootstrap": None,
    }


def compare(old_folder: Path | Published, new_folder: Path | Published) -> dict:
    """``changes.json`` from a previous release's folder to a new one. :class:`ConfigError` for
    releases of two benchmarks or data origins; ``KeyError``/``ValueError`` only for folders
    that :func:`check_previous` refuses."""
    old, new = (
        r if isinstance(r, Published) else Published(Path(r)) for r in (old_folder, new_folder)
    )
    om, nm = old.manifest, new.manifest
    for key in ("benchmark", "data_origin"):
        if om.get(key) != nm.get(key):
            a, b = shown(om.get(key)), shown(nm.get(key))
            raise ConfigError(
                f"{old.folder} is a release of {key} {a}, {new.folder} of {key} {b}: "
                + not_compared(key)
            )
    old_models, new_models = om["model_order"], nm["model_order"]
    common = [m for m in new_models if m in old_models]
    orec, nrec = ({r["sample_id"]: r for r in x.records} for x in (old, new))
    shared = sorted(set(orec) & set(nrec))
    return {
        "first_release": False,
        "previous": {"generated_at": om.get("generated_at"),
                     "schema_version": om.get("schema_version"),
                     "n_prompts": om["dataset"]["n_prompts"],
                     "results_sha256": om.get("inputs", {}).get("results_sha256")},
        "models": {"added": [m for m in new_models if m not in old_models],
                   "removed": [m for m in old_models if m not in new_models],
                   "changed": _model_changes(om["models"], nm["models"], sorted(common))},
        "prompts": {"added": sorted(set(nrec) - set(orec)),
                    "removed": sorted(set(orec) - set(nrec)),
                    "metadata_changed": _retagged(orec, nrec, shared)},
        "groups": _group_changes(old, new, sorted(common)),
        "pairs": _pair_changes(orec, nrec, sorted(common), shared),
        "paired_bootstrap": paired_bootstrap(old, new, common, shared),
    }  # fmt: skip


def _model_changes(old: dict, new: dict, models: list[str]) -> list[dict]:
    """``[{model_id, fields: {field: [before, after]}}]`` of the models of both releases whose
    display name, type or missing policy changed."""
    out = []
    for m in models:
        a, b = old.get(m) or {}, new.get(m) or {}
        if fields := {f: [a.get(f), b.get(f)] for f in _MODEL_FIELDS if a.get(f) != b.get(f)}:
            out.append({"model_id": m, "fields": fields})
    return out


def _retagged(orec: dict, nrec: dict, shared: list[str]) -> list[dict]:
    """The common prompts whose metadata changed, with the fields that did."""
    out = []
    for sid in shared:
        a, b = orec[sid], nrec[sid]
        if fields := sorted(k for k in {*a, *b} - set(_NOT_METADATA) if a.get(k) != b.get(k)):
            out.append({"sample_id": sid, "fields": fields})
    return out


def _pair_changes(orec: dict, nrec: dict, models: list[str], shared: list[str]) -> list[dict]:
    """Every prompt × model of both releases whose status or raw Overall-9 differs."""
    out = []
    for m in models:
        for sid in shared:
            a, b = orec[sid]["models"][m], nrec[sid]["models"][m]
            if a["status"] != b["status"] or a["overall_9_raw"] != b["overall_9_raw"]:
                out.append(
                    {
                        "model_id": m,
                        "sample_id": sid,
                        "status_before": a["status"],
                        "status_after": b["status"],
                        "overall_9_before": a["overall_9_raw"],
                        "overall_9_after": b["overall_9_raw"],
                    }
                )
    return out


def _group_changes(old: Published, new: Published, models: list[str]) -> dict[str, dict]:
    """``{group: {model: cell}}`` for every group of either release."""
    decimals = tuple(
        r.manifest.get("scoring", {}).get("public_rounding_decimals") for r in (old, new)
    )
    groups: dict[str, dict] = {}
    for key in sorted(set(old.groups) | set(new.groups)):
        before = {r["model_id"]: r for r in old.groups.get(key, [])}
        after = {r["model_id"]: r for r in new.groups.get(key, [])}
        cells = groups[key] = {}
        for m in models:
            b, a = before.get(m) or {}, after.get(m) or {}
            cells[m] = {
                "overall_9_before": b.get("overall_9"), "overall_9_after": a.get("overall_9"),
                "delta": _delta(a.get("overall_9"), b.get("overall_9"), decimals),
                "rank_before": b.get("rank"), "rank_after": a.get("rank"),
            }  # fmt: skip
    return groups


def paired_bootstrap(old: Published, new: Published, models: list[str], shared: list[str]) -> dict:
    """Each model's Overall-9 change (new − old) on the common prompts and its interval over
    the replicates of those prompts (public scale, halves away from zero), with the new
    release's settings (data contract, § Uncertainty: the stratified prompt bootstrap)."""
    cfg = bootstrap_settings(new.manifest)
    decimals = new.manifest["scoring"]["public_rounding_decimals"]
    head: dict[str, Any] = {
        "n_bootstrap": cfg.n_bootstrap,
        "seed": cfg.seed,
        "confidence": float(cfg.confidence),
        "n_common_prompts": len(shared),
        "models": {},
    }
    if not models or not shared:
        return head
    # both releases' columns of the common prompts side by side: models m\0old, then m\0new
    sides = [
        ("old", old, {x["sample_id"]: x for x in old.records}),
        ("new", new, {x["sample_id"]: x for x in new.records}),
    ]
    ids = [f"{m}\u0000{side}" for side, _, _ in sides for m in models]
    rows = [{**sides[1][2][s], "models": {f"{m}\u0000{side}": rec[s]["models"][m]
                                          for side, _, rec in sides for m in models}}
            for s in shared]  # fmt: skip
    table = ReleaseTable.from_records(rows, ids)
    zero_fill = np.array(
        [
            r.manifest["models"][m]["missing_policy"] == "zero_fill"
            for _, r, _ in sides
            for m in models
        ]
    )
    cis = _paired_intervals(table, zero_fill, cfg, decimals) if cfg.n_bootstrap else None
    for k, m in enumerate(models):
        before, after = (
            _overall_9_mean(table, row, zero_fill[row]) for row in (k, len(models) + k)
        )
        delta = None
        if before is not None and after is not None:
            delta = half_up_signed(after - before, decimals) / 10**decimals
        head["models"][m] = {"delta": delta, "ci": None if cis is None else cis[k]}
    return head


def _paired_intervals(table: ReleaseTable, zero_fill: np.ndarray, cfg, decimals: int) -> list:
    """The interval of each model's change over the replicates of every common prompt."""
    boot = Bootstrap(table, zero_fill, [GroupDef("all:All", np.arange(table.n_prompts))], cfg)
    q, n = boot.q["overall_9"][0], table.n_models // 2
    d = q[:, n:] - q[:, :n]
    tol = (
        boot.tolerance(0, np.nan_to_num(q[:, n:]))
        + boot.tolerance(0, np.nan_to_num(q[:, :n]))
        + np.abs(np.nan_to_num(d)) * 2.0**-52
    )

    def exact_d(k, reps):
        # replicates where both have a value (the interval's own): no None
        new, old = (cast(list[Fraction], boot.exact("overall_9", 0, c, reps)) for c in (n + k, k))
        return [a - b for a, b in zip(new, old)]

    return intervals(d, tol, cfg.alpha, decimals, exact_d)


def _overall_9_mean(table: ReleaseTable, row: int, zero_fill: bool) -> Fraction | None:
    """The public Overall-9 of one column over every prompt (None when nothing is included)."""
    scored, vals = table.status[row] == 0, table.values[row, :, OVERALL_9]
    has = scored & ~np.isnan(vals)
    n_inc = int(has.sum()) + (int((~scored).sum()) if zero_fill else 0)
    return None if n_inc == 0 else exact_mean(vals[has].tolist(), n_inc) * 100 / 3
