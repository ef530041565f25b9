"""Prompt-macro aggregation into the four leaderboard artifacts (SPEC §5–6).

Input: the release table (:mod:`searchgen_nb.table`: prompt × model columns, raw 0–3,
NaN = null) and the models' metadata. Every group (strata, search types, tags) is a row of
a prompt × group membership matrix; sums and counts of all groups, models and value
columns are matrix products. Output rows are on the public 0–100 scale, rounded half-up on
the exact mean (float64 decides every cell whose value is not within its error bound of a
rounding boundary; the others are settled with exact rationals), so no figure depends on
the order of prompts or models.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from searchgen_nb.constants import COMPONENTS, EXCLUDE, PARTITION_KEYS, STATUSES, ZERO_FILL
from searchgen_nb.numeric import coverage_values, exact_mean, half_up_units, public_units, public_values
from searchgen_nb.table import OVERALL_9, OVERALL_10, SCORED_CODE, VALUE_COLUMNS, ReleaseTable


@dataclass(frozen=True)
class ModelMeta:
    """What a leaderboard row shows about a model besides its numbers."""

    model_id: str
    display_name: str
    type: str
    missing_policy: str
    pending: bool = False  # results not in yet on purpose: listed, never ranked


def prompt_groups(prompts: list[dict]) -> dict[str, dict[str, np.ndarray]]:
    """Prompt groups (SPEC §5) as sorted prompt-index arrays:
    ``{"stratum": {All, NoSearch, ...}, "domain": {tag: ...}, "failure_mode": {...}}``.

    ``prompts``: the prompt part of the records (``stratum``, ``search_type``, ``domains``,
    ``failure_modes``). Strata appear even when empty (n_total 0); tags are those present
    in the metadata, sorted. A prompt is in every tag it carries, once (multi-label).
    """
    strata: dict[str, list[int]] = {"All": list(range(len(prompts))), **{k: [] for k in PARTITION_KEYS}}
    domains: dict[str, list[int]] = {}
    modes: dict[str, list[int]] = {}
    for i, r in enumerate(prompts):
        strata[r["stratum"]].append(i)
        if r["search_type"] != r["stratum"]:
            strata[r["search_type"]].append(i)
        for t in dict.fromkeys(r["domains"]):
            domains.setdefault(t, []).append(i)
        for t in dict.fromkeys(r["failure_modes"]):
            modes.setdefault(t, []).append(i)

    def arrays(groups: dict[str, list[int]], order) -> dict[str, np.ndarray]:
        return {g: np.asarray(groups[g], dtype=np.int64) for g in order}

    return {
        "stratum": arrays(strata, strata),
        "domain": arrays(domains, sorted(domains)),
        "failure_mode": arrays(modes, sorted(modes)),
    }


#: Groups per block of the membership matrix (bounds its memory: block × n_prompts × 8 bytes).
GROUP_BLOCK = 64


@dataclass
class GroupStats:
    """Per group × model sums over one release table (all arrays float64, exact integers
    for the counts).

    ``sums[g, m, c]``: float sum of the present values of column c (:data:`VALUE_COLUMNS`)
    of model m's scored pairs in group g; ``present[g, m, c]``: how many; ``status[g, m, s]``:
    pairs of each status; ``n_total[g]``: prompts in group g.
    """

    sums: np.ndarray
    present: np.ndarray
    status: np.ndarray
    n_total: np.ndarray


def group_stats(table: ReleaseTable, members: list[np.ndarray]) -> GroupStats:
    """Sums and counts of every group × model × value column as matrix products (SPEC §5).

    ``members``: one prompt-index array per group. The membership matrix is built in blocks
    of :data:`GROUP_BLOCK` groups, so memory stays bounded for any number of groups.
    """
    n_models, n_prompts = table.status.shape
    n_cols = len(VALUE_COLUMNS)
    scored = table.status == SCORED_CODE
    present = scored[:, :, None] & ~np.isnan(table.values)
    x = np.where(present, table.values, 0.0).transpose(1, 0, 2).reshape(n_prompts, n_models * n_cols)
    cnt = present.transpose(1, 0, 2).reshape(n_prompts, n_models * n_cols).astype(np.float64)
    onehot = (table.status.T[:, :, None] == np.arange(len(STATUSES), dtype=np.int8)).reshape(n_prompts, n_models * len(STATUSES)).astype(np.float64)
    n_groups = len(members)
    sums = np.empty((n_groups, n_models * n_cols))
    counts = np.empty((n_groups, n_models * n_cols))
    status = np.empty((n_groups, n_models * len(STATUSES)))
    for start in range(0, n_groups, GROUP_BLOCK):
        block = members[start : start + GROUP_BLOCK]
        member = np.zeros((len(block), n_prompts))
        for i, idx in enumerate(block):
            member[i, idx] = 1.0
        sums[start : start + len(block)] = member @ x
        counts[start : start + len(block)] = member @ cnt
        status[start : start + len(block)] = member @ onehot
    return GroupStats(
        sums.reshape(n_groups, n_models, n_cols),
        counts.reshape(n_groups, n_models, n_cols),
        status.reshape(n_groups, n_models, len(STATUSES)),
        np.array([len(idx) for idx in members], dtype=np.float64),
    )


def group_rows(table: ReleaseTable, models: list[ModelMeta], members: list[np.ndarray], decimals: int) -> list[list[dict]]:
    """Unranked leaderboard rows of every model in every group (SPEC §5–6), public 0–100.

    ``models`` in the table's model order. Returns ``rows[g][m]``. Policy ``exclude``:
    included = scored prompts; ``zero_fill``: every prompt, a non-scored one counting 0 for
    both overalls and every component. A scored prompt's null value is left out of that
    mean; ``component_counts[c]`` = values in the mean. Means are exact rationals rounded
    half-up (:func:`searchgen_nb.numeric.public_units`), whatever the order of the table.
    """
    stats = group_stats(table, members)
    zero_fill = np.array([m.missing_policy == ZERO_FILL for m in models])
    n_scored = stats.status[:, :, SCORED_CODE]
    n_total = np.broadcast_to(stats.n_total[:, None], n_scored.shape)
    n_zero = np.where(zero_fill[None, :], n_total - n_scored, 0.0)
    counts = stats.present + n_zero[:, :, None]
    n_terms = np.broadcast_to(stats.present, counts.shape)

    def settle(index) -> int:
        g, m, c = (int(i) for i in index)
        idx = members[g]
        col = table.values[m, idx, c]
        vals = col[(table.status[m, idx] == SCORED_CODE) & ~np.isnan(col)]
        return half_up_units(exact_mean(vals.tolist(), int(counts[g, m, c])), decimals)

    units = public_units(stats.sums, counts, n_terms, decimals, settle)
    public = public_values(units, decimals)
    coverage = coverage_values(n_scored, n_total)
    counts_int = counts.astype(np.int64).tolist()
    status_int = stats.status.astype(np.int64).tolist()
    out = []
    for g in range(len(members)):
        rows = []
        for k, model in enumerate(models):
            pub = [None if v != v else v for v in public[g][k]]
            nt, ns = int(n_total[g, k]), int(n_scored[g, k])
            rows.append({
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
                "status_counts": dict(zip(STATUSES, status_int[g][k])),
                "rank": None,
                "ranked": False,
            })
        out.append(rows)
    return out


def _covered(row: dict, min_ranking_coverage: Decimal) -> bool:
    """Exact ``n_scored / n_total >= min_ranking_coverage`` (not the 4-decimal coverage).

    ``min_ranking_coverage`` is the decimal written in the config (``Decimal('0.9')`` = 9/10),
    so 9 of 10 prompts meets 0.9 (SPEC §5–6; a binary 0.9 is slightly above 9/10)."""
    t = min_ranking_coverage
    threshold = Fraction(repr(t)) if isinstance(t, float) else Fraction(t)  # a float as the decimal it prints
    return row["n_total"] > 0 and Fraction(row["n_scored"], row["n_total"]) >= threshold


def rank_rows(rows: list[dict], model_order: list[str], min_ranking_coverage: Decimal, pending: frozenset[str] = frozenset()) -> list[dict]:
    """Assign ``rank``/``ranked`` and sort (SPEC §6).

    Ranked rows (coverage ≥ ``min_ranking_coverage``, an Overall-9, and the model not
    ``pending`` in the config) are ordered by the
    published Overall-9 descending, ties broken by model_id, and numbered from 1. Unranked
    rows follow (rank null), by Overall-9 descending (N/A last), ties in config order.
    """
    pos = {m: i for i, m in enumerate(model_order)}
    ranked = sorted(
        (r for r in rows if r["overall_9"] is not None and r["model_id"] not in pending and _covered(r, min_ranking_coverage)),
        key=lambda r: (-r["overall_9"], r["model_id"]),
    )
    ranked_ids = {r["model_id"] for r in ranked}
    unranked = sorted(
        (r for r in rows if r["model_id"] not in ranked_ids),
        key=lambda r: (r["overall_9"] is None, -(r["overall_9"] or 0.0), pos[r["model_id"]]),
    )
    for i, r in enumerate(ranked, start=1):
        r["rank"], r["ranked"] = i, True
    for r in unranked:
        r["rank"], r["ranked"] = None, False
    return ranked + unranked


def leaderboards(
    table: ReleaseTable,
    models: list[ModelMeta],
    min_ranking_coverage: Decimal,
    decimals: int,
    config_order: list[str] | None = None,
    slices: dict[str, np.ndarray] | None = None,
) -> dict[str, object]:
    """The leaderboard artifacts of a release table, keyed by file name (SPEC §6, §9).

    ``models``: the table's models in the table's order; ``config_order``: the model ids in
    config order (the order of unranked ties; default: the table's). ``slices``: ``{name:
    prompt indices}`` in publication order, the first holding every prompt (default: one
    slice ``full_<n>``). Every leaderboard is computed inside every slice, with its own
    coverage and ranks. Returns ``{"leaderboard_overall.json": [rows],
    "leaderboard_by_stratum.json": {group: [rows]}, "leaderboard_by_domain.json": {tag:
    [rows]}, "leaderboard_by_failure_mode.json": {tag: [rows]}, "leaderboard_by_slice.json":
    {slice: {"overall", "strata", "domains", "failure_modes"}}}``; the first four show the
    slice of every prompt. Raises ValueError when ``models`` do not match the table's model
    ids or no slice holds every prompt.
    """
    if [m.model_id for m in models] != table.model_ids:
        raise ValueError("leaderboards: models are not the table's models in its order")
    everything = np.arange(table.n_prompts, dtype=np.int64)
    if slices is None:
        slices = {f"full_{table.n_prompts}": everything}
    full = next((name for name, idx in slices.items() if len(idx) == table.n_prompts), None)
    if full is None:
        raise ValueError("leaderboards: no slice holds every prompt")
    order = sorted(range(len(models)), key=lambda k: models[k].model_id)  # rows do not depend on the table's order
    config_order = list(config_order or table.model_ids)
    pending = frozenset(m.model_id for m in models if m.pending)
    names, members = [], []
    for name, idx in slices.items():
        idx = np.sort(np.asarray(idx, dtype=np.int64))
        groups = prompt_groups([table.prompts[i] for i in idx.tolist()])
        for kind, gs in groups.items():
            for g, local in gs.items():
                names.append((name, kind, g))
                members.append(idx[local])
    rows = group_rows(table, models, members, decimals)
    by_slice: dict[str, dict] = {name: {"overall": None, "strata": {}, "domains": {}, "failure_modes": {}} for name in slices}
    key = {"stratum": "strata", "domain": "domains", "failure_mode": "failure_modes"}
    for (name, kind, g), group in zip(names, rows):
        by_slice[name][key[kind]][g] = rank_rows([group[k] for k in order], config_order, min_ranking_coverage, pending)
    for board in by_slice.values():
        board["overall"] = board["strata"]["All"]
    shown = by_slice[full]
    return {
        "leaderboard_overall.json": shown["overall"],
        "leaderboard_by_stratum.json": shown["strata"],
        "leaderboard_by_domain.json": shown["domains"],
        "leaderboard_by_failure_mode.json": shown["failure_modes"],
        "leaderboard_by_slice.json": by_slice,
    }
