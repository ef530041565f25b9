"""The gate's own recomputation of the five leaderboard files from its columns and the manifest
alone (data contract, § Aggregation over a group of prompts; § Public scale and rounding;
§ Coverage and ranking): every cell an exact mean rounded half-up once."""

from collections import Counter
from fractions import Fraction
from typing import Any

from searchgen_nb.constants import OVERALL_BOARD, STATUSES
from searchgen_nb.gate.columns import (
    BUILT_IN,
    SCORED,
    Columns,
    breakdown_prompts,
    breakdowns,
    exact_numerators,
    half_up,
    slice_prompts,
    tag_groups,
)

#: The files the site reads, in the order :func:`reconstruct_columns` makes them.
FIXED_BOARDS = (OVERALL_BOARD, *(board for *_, board, _, _ in BUILT_IN))


def reconstruct(manifest: dict, records: list[dict]) -> dict[str, Any]:
    """Recompute the leaderboard artifacts from records (in memory) and manifest alone."""
    return reconstruct_columns(manifest, Columns.from_records(manifest, records))


def reconstruct_columns(manifest: dict, cols: Columns) -> dict[str, Any]:
    """Recompute the leaderboard artifacts from the validator's columns: the five files and each
    breakdown's board of the manifest's declaration."""
    order = manifest["model_order"]
    groups = _groups(cols, manifest)
    rows = {m: _model_rows(manifest, cols, k, groups) for k, m in enumerate(order)}
    by_slice: dict[str, dict[str, Any]] = {
        name: {"overall": None, "strata": {}, "domains": {}, "failure_modes": {}}
        for name in manifest["published_slices"]
    }
    out: dict[str, dict] = {kind.board: {} for kind in breakdowns(manifest)}
    for g, ((slice_name, kind, name), _) in enumerate(groups):
        board = _board(manifest, [rows[m][g] for m in order])
        if slice_name is None:  # a breakdown's group: ``kind`` is its board
            out[kind][name] = board
        else:
            by_slice[slice_name][kind][name] = board
    for b in by_slice.values():
        b["overall"] = b["strata"]["All"]
    shown = by_slice[manifest["output_slice"]]
    parts = (shown["overall"], shown["strata"], shown["domains"], shown["failure_modes"], by_slice)
    return {**dict(zip(FIXED_BOARDS, parts)), **out}


def _groups(cols: Columns, manifest: dict) -> list[tuple[tuple, list[int]]]:
    """Every ``((slice, kind, group), prompt indices)`` in the files' order, then every
    ``((None, board, value), prompt indices)`` of the breakdowns."""
    named = manifest["evaluation_slices"]["named"]
    out: list[tuple[tuple, list[int]]] = []
    for name in manifest["published_slices"]:
        groups = tag_groups(cols, slice_prompts(cols, named[name]))
        out += [((name, *key), members) for key, members in groups.items()]
    for kind in breakdowns(manifest):
        values = breakdown_prompts(cols, kind.fields[0])
        out += [((None, kind.board, value), members) for value, members in values.items()]
    return out


def _exact_column(cols: Columns, k: int, j: int) -> tuple[list[int | None], int]:
    """Value j of model k's scored entries per prompt as integers over one denominator
    (None where there is no value)."""
    values = [
        v if s == SCORED and v == v else None
        for v, s in zip(cols.values[k, :, j].tolist(), cols.status[k].tolist())
    ]
    nums, den = exact_numerators([v for v in values if v is not None])
    present = iter(nums)
    return [None if v is None else next(present) for v in values], den


def _model_rows(manifest: dict, cols: Columns, k: int, groups: list) -> list[dict]:
    """Model k's row in every group, unranked."""
    m = cols.models[k]
    meta, sc = manifest["models"][m], manifest["scoring"]
    policy, comps10 = meta["missing_policy"], sc["overall_10_components"]
    dec = sc["public_rounding_decimals"]
    columns = [_exact_column(cols, k, j) for j in range(cols.n_components + 2)]
    codes = cols.status[k].tolist()
    rows = []
    for _, members in groups:
        status = Counter(codes[i] for i in members)
        nt, ns = len(members), status[SCORED]
        zeros = nt - ns if policy == "zero_fill" else 0
        cells = [_cell(column, members, zeros, dec) for column in columns]
        rows.append(
            {
                "model_id": m,
                "display_name": meta["display_name"],
                "type": meta["type"],
                "missing_policy": policy,
                "n_total": nt,
                "n_scored": ns,
                "n_included": ns + zeros,
                "coverage": half_up(Fraction(ns, nt), 4) if nt else 0.0,
                "overall_9": cells[cols.column["overall_9"]][0],
                "overall_10": cells[cols.column["overall_10"]][0],
                "components": {c: cell[0] for c, cell in zip(comps10, cells)},
                "component_counts": {c: cell[1] for c, cell in zip(comps10, cells)},
                "status_counts": {s: status[i] for i, s in enumerate(STATUSES)},
            }
        )
    return rows


def _cell(column: tuple[list, int], members: list[int], zeros: int, dec: int) -> tuple:
    """``(public value, n included)``: the exact mean of the members' values and ``zeros``
    zeros on 0–100, half-up to ``dec`` (None where nothing is included)."""
    nums, den = column
    present = [nums[i] for i in members if nums[i] is not None]
    n = len(present) + zeros
    return (None if n == 0 else half_up(Fraction(sum(present), den * n) * 100 / 3, dec)), n


def _board(manifest: dict, rows: list[dict]) -> list[dict]:
    """Rank one group's rows (data contract, § Coverage and ranking): coverage ≥ the written
    min_ranking_coverage, an Overall-9, not pending; by Overall-9 down, model_id; the rest after."""
    # the decimal written in the config (its JSON number's shortest repr), never the binary double
    min_cov = Fraction(str(manifest["scoring"]["min_ranking_coverage"]))
    order = manifest["model_order"]
    pending = {m for m in order if manifest["models"][m].get("pending") is True}

    def eligible(r: dict) -> bool:
        return (
            r["overall_9"] is not None
            and r["model_id"] not in pending
            and r["n_total"]
            and Fraction(r["n_scored"], r["n_total"]) >= min_cov
        )

    ranked = sorted(filter(eligible, rows), key=lambda r: (-r["overall_9"], r["model_id"]))
    rest = [r for r in rows if r not in ranked]
    rest.sort(
        key=lambda r: (r["overall_9"] is None, -(r["overall_9"] or 0), order.index(r["model_id"]))
    )
    for i, r in enumerate(ranked + rest, 1):
        r["rank"], r["ranked"] = (i, True) if i <= len(ranked) else (None, False)
    return ranked + rest
