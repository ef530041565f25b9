"""Prompt-macro aggregation into the leaderboard artifacts (data contract, § Aggregation over a
group of prompts; § Coverage and ranking): matrix products of a prompt × group membership matrix
with the release table, each public cell half-up on the exact mean."""

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from searchgen_nb.constants import EXCLUDE, OVERALL_BOARD, STATUSES, ZERO_FILL
from searchgen_nb.declaration import (
    BENCHMARK,
    BREAKDOWN,
    COMPONENTS,
    PARTITION,
    SLICES,
    TAGS,
    Declaration,
    GroupKind,
)
from searchgen_nb.numeric import (
    coverage_values,
    exact_mean,
    half_up_units,
    public_units,
    public_values,
)
from searchgen_nb.slices import field_values
from searchgen_nb.table import OVERALL_9, OVERALL_10, SCORED_CODE, ReleaseTable


@dataclass(frozen=True)
class ModelMeta:
    """What a leaderboard row shows about a model besides its numbers."""

    model_id: str
    display_name: str
    type: str
    missing_policy: str
    pending: bool = False  # results not in yet on purpose: listed, never ranked


def groups_of(record: dict, kind: GroupKind) -> list[str]:
    """The groups of ``kind`` a prompt's record is in (data contract, § Aggregation …;
    § Breakdowns): the partition's, finest first (``VisualSearch``, ``SearchIntensive``); a tag
    kind's tags, each once, in the record's order; a breakdown's values, sorted
    (:func:`~searchgen_nb.slices.field_values`: none for null or absent). ``ValueError`` for the
    slices, which the config's specs decide."""
    if kind.source == PARTITION:
        return list(dict.fromkeys(record[f] for f in reversed(kind.fields)))
    if kind.source == TAGS:
        return list(dict.fromkeys(record[kind.fields[0]]))
    if kind.source == BREAKDOWN:
        return sorted(field_values(record, kind.fields[0], scalars=True))
    raise ValueError(f"the groups of {kind.kind} are not a field's: from {kind.source}")


def prompt_groups(
    prompts: list[dict], kinds: tuple[GroupKind, ...] | None = None
) -> dict[str, dict[str, np.ndarray]]:
    """``{kind: {group: sorted prompt indices}}`` of every kind of ``kinds`` (default: the
    package's) but the slices (:func:`groups_of`): ``stratum`` every group even when empty (the
    first, All, every prompt), tags and breakdown values sorted (data contract, § Aggregation …;
    § Breakdowns)."""
    out = {}
    for kind in BENCHMARK.group_kinds if kinds is None else kinds:
        if kind.source == PARTITION:
            first, *rest = kind.groups or ()
            groups = {first: list(range(len(prompts))), **{k: [] for k in rest}}
            for i, r in enumerate(prompts):
                for s in groups_of(r, kind):
                    groups[s].append(i)
        elif kind.source in (TAGS, BREAKDOWN):
            groups = {}
            for i, r in enumerate(prompts):
                for g in groups_of(r, kind):
                    groups.setdefault(g, []).append(i)
            groups = dict(sorted(groups.items()))
        else:
            continue
        out[kind.kind] = {g: np.asarray(idx, dtype=np.int64) for g, idx in groups.items()}
    return out


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
    declaration: Declaration | None = None,
) -> dict[str, object]:
    """The leaderboard artifacts by file name (§ Artifacts; § Named evaluation slices;
    § Breakdowns): every board of every slice (``{name: prompt indices}``, default ``full_<n>``),
    the v1.0 files and each breakdown's board of the slice of every prompt; ``config_order``: the
    order of unranked ties; ``declaration``: the group kinds (default: the package's)."""
    if [m.model_id for m in models] != table.model_ids:
        raise ValueError("leaderboards: models are not the table's models in its order")
    if slices is None:
        slices = {f"full_{table.n_prompts}": np.arange(table.n_prompts, dtype=np.int64)}
    full = next((name for name, idx in slices.items() if len(idx) == table.n_prompts), None)
    if full is None:
        raise ValueError("leaderboards: no slice holds every prompt")
    kinds = (declaration or BENCHMARK).group_kinds
    in_slices = tuple(k for k in kinds if k.slice_key)
    # rows do not depend on the table's order
    order = sorted(range(len(models)), key=lambda k: models[k].model_id)
    config_order = list(config_order or table.model_ids)
    pending = frozenset(m.model_id for m in models if m.pending)
    names: list[tuple[str | None, str, str]] = []
    members: list[np.ndarray] = []
    for name, idx in slices.items():
        idx = np.sort(np.asarray(idx, dtype=np.int64))
        for kind, gs in prompt_groups([table.prompts[i] for i in idx.tolist()], in_slices).items():
            for g, local in gs.items():
                names.append((name, kind, g))
                members.append(idx[local])
    breakdowns = tuple(k for k in kinds if k.source == BREAKDOWN)
    for kind, gs in prompt_groups(table.prompts, breakdowns).items():
        names += [(None, kind, g) for g in gs]
        members += list(gs.values())
    rows = group_rows(table, models, members, decimals)
    keys = {k.kind: k.slice_key for k in in_slices if k.slice_key}
    by_slice: dict[str, dict[str, Any]] = {
        name: {"overall": None, **{key: {} for key in keys.values()}} for name in slices
    }
    by_kind = {k.kind: k for k in kinds}
    out: dict[str, dict[str, list[dict]]] = {k.board: {} for k in breakdowns}
    for (slice_name, kind, g), group in zip(names, rows):
        ranked = rank_rows([group[k] for k in order], config_order, min_ranking_coverage, pending)
        if slice_name is None:
            out[by_kind[kind].board][g] = ranked
        else:
            by_slice[slice_name][keys[kind]][g] = ranked
    whole_kind, whole = (declaration or BENCHMARK).whole
    for board in by_slice.values():
        board["overall"] = board[keys[whole_kind]][whole]
    shown = by_slice[full]
    return {
        OVERALL_BOARD: shown["overall"],
        **{k.board: shown[keys[k.kind]] for k in in_slices},
        **{k.board: by_slice for k in kinds if k.source == SLICES},
        **out,
    }
