"""Prompt-macro aggregation into the leaderboard artifacts (data contract, § Aggregation over a
group of prompts; § Coverage and ranking): matrix products of a prompt × group membership matrix
with the release table, each public cell half-up on the exact mean."""

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from searchgen_nb.constants import (
    ARTIFACTS,
    COMPONENTS,
    EXCLUDE,
    PARTITION_KEYS,
    STATUSES,
    ZERO_FILL,
)
from searchgen_nb.numeric import (
    coverage_values,
    exact_mean,
    half_up_units,
    public_units,
    public_values,
)
from searchgen_nb.table import OVERALL_9, OVERALL_10, SCORED_CODE, ReleaseTable


@dataclass(frozen=True)
class ModelMeta:
    """What a leaderboard row shows about a model besides its numbers."""

    model_id: str
    display_name: str
    type: str
    missing_policy: str
    pending: bool = False  # results not in yet on purpose: listed, never ranked


def prompt_groups(prompts: list[dict]) -> dict[str, dict[str, np.ndarray]]:
    """``{"stratum": {All, NoSearch, ...}, "domain": {tag: …}, "failure_mode": {…}}`` of sorted
    prompt-index arrays: strata even when empty, tags sorted (data contract, § Aggregation …)."""
    strata = {"All": list(range(len(prompts))), **{k: [] for k in PARTITION_KEYS}}
    tags: dict[str, dict[str, list[int]]] = {"domain": {}, "failure_mode": {}}
    for i, r in enumerate(prompts):
        for s in dict.fromkeys((r["stratum"], r["search_type"])):
            strata[s].append(i)
        for kind, groups in tags.items():
            for t in dict.fromkeys(r[f"{kind}s"]):
                groups.setdefault(t, []).append(i)
    out = {"stratum": strata, **{kind: dict(sorted(by.items())) for kind, by in tags.items()}}
    return {
        kind: {g: np.asarray(idx, dtype=np.int64) for g, idx in groups.items()}
        for kind, groups in out.items()
    }


GROUP_BLOCK = 64  # groups per block of the membership matrix (block × n_prompts × 8 bytes)


def group_stats(table: ReleaseTable, members: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """``(sums, present, status)`` per group × model (float64): ``sums[g, m, c]`` of the present
    values of column c of the scored pairs, ``present`` their count, ``status[g, m, s]`` pairs
    of each status; matrix products, :data:`GROUP_BLOCK` groups of ``members`` at a time."""
    n_models, n_prompts = table.status.shape
    present = (table.status == SCORED_CODE)[:, :, None] & ~np.isnan(table.values)
    onehot = table.status[:, :, None] == np.arange(len(STATUSES), dtype=np.int8)
    columns = [np.where(present, table.values, 0.0), present, onehot]
    columns = [a.transpose(1, 0, 2).reshape(n_prompts, -1).astype(np.float64) for a in columns]
    out = [np.empty((len(members), a.shape[1])) for a in columns]
    for start in range(0, len(members), GROUP_BLOCK):
        block = members[start : start + GROUP_BLOCK]
        member = np.zeros((len(block), n_prompts))
        for i, idx in enumerate(block):
            member[i, idx] = 1.0
        for o, a in zip(out, columns):
            o[start : start + len(block)] = member @ a
    return tuple(o.reshape(len(members), n_models, -1) for o in out)


def group_rows(
    table: ReleaseTable, models: list[ModelMeta], members: list[np.ndarray], decimals: int
) -> list[list[dict]]:
    """Unranked leaderboard rows ``rows[g][m]`` (public 0–100) of every model (in the table's
    order) in every group (data contract, § Aggregation over a group of prompts; § Artifacts)."""
    sums, present, status = group_stats(table, members)
    zero_fill = np.array([m.missing_policy == ZERO_FILL for m in models])
    n_scored = status[:, :, SCORED_CODE]
    n_total = status.sum(axis=2)  # every pair has one status
    counts = present + np.where(zero_fill[None, :], n_total - n_scored, 0.0)[:, :, None]

    def settle(index) -> int:
        g, m, c = (int(i) for i in index)
        idx = members[g]
        col = table.values[m, idx, c]
        vals = col[(table.status[m, idx] == SCORED_CODE) & ~np.isnan(col)]
        return half_up_units(exact_mean(vals.tolist(), int(counts[g, m, c])), decimals)

    public = public_values(public_units(sums, counts, present, decimals, settle), decimals)
    coverage = coverage_values(n_scored, n_total)
    counts_int, status_int = counts.astype(np.int64).tolist(), status.astype(np.int64).tolist()

    def row(g: int, k: int, model: ModelMeta) -> dict:
        pub, st = [None if v != v else v for v in public[g][k]], status_int[g][k]
        nt, ns = sum(st), st[SCORED_CODE]
        return {
            "model_id": model.model_id,
            "display_name": model.display_name,
            "type": model.type,
            "missing_policy": model.missing_policy,
            "n_total": nt,
            "n_scored": ns,
            "n_included": ns if model.missing_policy == EXCLUDE else nt,
            "coverage": coverage[g][k],
            "overall_9": pub[OVERALL_9],
            "overall_10": pub[OVERALL_10],
            "components": dict(zip(COMPONENTS, pub[:OVERALL_10])),
            "component_counts": dict(zip(COMPONENTS, counts_int[g][k][:OVERALL_10])),
            "status_counts": dict(zip(STATUSES, st)),
            "rank": None,
            "ranked": False,
        }

    return [[row(g, k, model) for k, model in enumerate(models)] for g in range(len(members))]


def _covered(row: dict, min_ranking_coverage: Decimal) -> bool:
    """Exact ``n_scored / n_total >= min_ranking_coverage``, a float as printed (§ Coverage and
    ranking)."""
    threshold = Fraction(str(min_ranking_coverage))
    return row["n_total"] > 0 and Fraction(row["n_scored"], row["n_total"]) >= threshold


def rank_rows(
    rows: list[dict],
    model_order: list[str],
    min_ranking_coverage: Decimal,
    pending: frozenset[str] = frozenset(),
) -> list[dict]:
    """Rank and sort (§ Coverage and ranking): ranked rows by Overall-9 descending, ties by
    model_id; then the unranked, N/A last, ties in config order."""
    pos = {m: i for i, m in enumerate(model_order)}
    ranked = sorted(
        (
            r
            for r in rows
            if r["overall_9"] is not None
            and r["model_id"] not in pending
            and _covered(r, min_ranking_coverage)
        ),
        key=lambda r: (-r["overall_9"], r["model_id"]),
    )
    ranked_ids = {r["model_id"] for r in ranked}
    unranked = sorted(
        (r for r in rows if r["model_id"] not in ranked_ids),
        key=lambda r: (r["overall_9"] is None, -(r["overall_9"] or 0.0), pos[r["model_id"]]),
    )
    for i, r in enumerate(ranked + unranked, start=1):
        r["rank"], r["ranked"] = (i, True) if i <= len(ranked) else (None, False)
    return ranked + unranked


def leaderboards(
    table: ReleaseTable,
    models: list[ModelMeta],
    min_ranking_coverage: Decimal,
    decimals: int,
    config_order: list[str] | None = None,
    slices: dict[str, np.ndarray] | None = None,
) -> dict[str, object]:
    """The leaderboard artifacts by file name (§ Artifacts; § Named evaluation slices): every
    board of every slice (``{name: prompt indices}``, default ``full_<n>``), the v1.0 files of
    the slice of every prompt; ``config_order``: the order of unranked ties."""
    if [m.model_id for m in models] != table.model_ids:
        raise ValueError("leaderboards: models are not the table's models in its order")
    if slices is None:
        slices = {f"full_{table.n_prompts}": np.arange(table.n_prompts, dtype=np.int64)}
    full = next((name for name, idx in slices.items() if len(idx) == table.n_prompts), None)
    if full is None:
        raise ValueError("leaderboards: no slice holds every prompt")
    # rows do not depend on the table's order
    order = sorted(range(len(models)), key=lambda k: models[k].model_id)
    config_order = list(config_order or table.model_ids)
    pending = frozenset(m.model_id for m in models if m.pending)
    names, members = [], []
    for name, idx in slices.items():
        idx = np.sort(np.asarray(idx, dtype=np.int64))
        for kind, gs in prompt_groups([table.prompts[i] for i in idx.tolist()]).items():
            for g, local in gs.items():
                names.append((name, kind, g))
                members.append(idx[local])
    rows = group_rows(table, models, members, decimals)
    by_slice: dict[str, dict[str, Any]] = {
        name: {"overall": None, "strata": {}, "domains": {}, "failure_modes": {}} for name in slices
    }
    key = {"stratum": "strata", "domain": "domains", "failure_mode": "failure_modes"}
    for (name, kind, g), group in zip(names, rows):
        ranked = rank_rows([group[k] for k in order], config_order, min_ranking_coverage, pending)
        by_slice[name][key[kind]][g] = ranked
    for board in by_slice.values():
        board["overall"] = board["strata"]["All"]
    shown = by_slice[full]
    parts = (shown["overall"], shown["strata"], shown["domains"], shown["failure_modes"], by_slice)
    return dict(zip(ARTIFACTS[1:6], parts))  # leaderboard_overall.json … _by_slice.json
