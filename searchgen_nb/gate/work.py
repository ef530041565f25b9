"""The gate's own count of the work a release asks for (data contract, § Release config,
"Bounded work"), from the records and the manifest: the figures and bounds that ``data`` counts
before reading a result file, counted here without the pipeline's code, so that a folder asking
for more is refused before anything is recomputed."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from searchgen_nb.constants import (
    ALL_PAIRS_MAX_MODELS,
    CELL_BYTES,
    MANIFEST,
    MAX_COMPARISONS,
    MAX_DRAW_SUMS,
    MAX_PAIRS,
    MAX_PUBLISHED_BYTES,
    MAX_ROW_PROMPTS,
    MAX_ROWS,
    MAX_VALUES,
    PAIR_BYTES,
    ROW_BYTES,
    STRATUM_GROUPS,
)
from searchgen_nb.gate.columns import Columns, breakdown_prompts, breakdowns, slice_prompts

#: Groups of every board and of the bootstrap besides the tags and slices: All and the strata.
_FIXED = len(STRATUM_GROUPS)
_MIB = 2**20


@dataclass(frozen=True)
class Work:
    """The size of a release: P prompts, M models, T tags, S published slices, the prompts
    summed over every group (All, strata, tags, slices, breakdowns), B bootstrap replicates and
    the D groups of the breakdowns."""

    n_prompts: int
    n_models: int
    n_tags: int
    n_slices: int
    memberships: int
    n_bootstrap: int
    n_breakdown_groups: int = 0

    def without_bootstrap(self) -> Work:
        """The same release at B = 0: what the leaderboards alone cost."""
        return replace(self, n_bootstrap=0)

    def problems(self) -> list[str]:
        """Each figure over its bound: what it counts, the bound and the setting to change (for
        the figures that grow with B, the largest B within all of them)."""
        figures = _figures(self)
        largest = min(f.bound // max(f.per_b, 1) for f in figures if f.per_b is not None)
        out = []
        for f in (f for f in figures if f.value > f.bound):
            shown = f"{f.bound / _MIB:,.0f} MiB" if f.in_mib else f"{f.bound:,}"
            smaller = f"set uncertainty.n_bootstrap ≤ {largest:,}, or "
            out.append(f"{f.said}; bound {shown}: {'' if f.per_b is None else smaller}{f.other}")
        return out


class _Figure(NamedTuple):
    value: int
    per_b: int | None  # its value per bootstrap replicate; None: it does not grow with B
    bound: int
    said: str  # what it counts and how it is made
    other: str  # the change besides a smaller B
    in_mib: bool = False


def _figures(w: Work) -> list[_Figure]:
    """The contract's figures, in its order."""
    b, p, m, d = w.n_bootstrap, w.n_prompts, w.n_models, w.n_breakdown_groups
    groups, ranked = _FIXED + w.n_tags + w.n_slices + d, _FIXED + w.n_slices + d
    tested = m - 1 if m > ALL_PAIRS_MAX_MODELS else m * (m - 1) // 2
    drawn = w.memberships + p * groups  # prompt memberships a model's replicate sums
    rows = ((1 + w.n_slices) * (_FIXED + w.n_tags) + d) * m
    more = f" + {d:,} breakdown groups × {m:,} models" if d else ""
    size = rows * ROW_BYTES
    if b:
        size += groups * m * CELL_BYTES + ranked * tested * PAIR_BYTES
    n_b, fewer = f"n_bootstrap {b:,}", "fewer slices, tags or models"
    publish = f"publish {fewer}"
    return [
        _Figure(b * groups * m, groups * m, MAX_VALUES, "the bootstrap would keep "
                f"{b * groups * m:,} replicate values ({n_b} × {groups:,} groups × {m:,} models)",
                fewer),
        _Figure(b * ranked * tested, ranked * tested, MAX_COMPARISONS, "the pairwise tests would "
                f"compare {b * ranked * tested:,} replicate pairs ({n_b} × {ranked:,} ranked "
                f"groups × {tested:,} pairs of {m:,} models)", "fewer models or slices"),
        _Figure(b * m * drawn, m * drawn, MAX_DRAW_SUMS, "the bootstrap would sum "
                f"{b * m * drawn:,} prompt draws ({n_b} × {m:,} models × {drawn:,} prompt "
                "memberships)", fewer),
        _Figure(rows, None, MAX_ROWS, f"the leaderboards would hold {rows:,} rows "
                f"({1 + w.n_slices:,} boards × {_FIXED + w.n_tags:,} groups × {m:,} models{more})",
                publish),
        _Figure(p * m, None, MAX_PAIRS, f"the release would read and check {p * m:,} prompt × "
                f"model pairs ({p:,} prompts × {m:,} models)",
                "configure fewer models (or prompts)"),
        _Figure(rows * p, None, MAX_ROW_PROMPTS, f"the aggregation would sum {rows * p:,} "
                f"leaderboard row × prompt cells ({rows:,} rows × {p:,} prompts)", publish),
        _Figure(size, None, MAX_PUBLISHED_BYTES, "the leaderboards and uncertainty.json would "
                f"take about {size / _MIB:,.0f} MiB", publish, in_mib=True),
    ]  # fmt: skip


def count(manifest: dict, cols: Columns) -> Work:
    """The :class:`Work` of a release from its records and the manifest's published slices,
    breakdowns and ``config.uncertainty.n_bootstrap`` (not an integer: 0 here, the
    ``uncertainty`` check names it)."""
    named = (manifest.get("evaluation_slices") or {}).get("named") or {}
    published = [named[s] for s in manifest.get("published_slices") or [] if s in named]
    tags = {(j, t) for p in cols.prompts for j in (2, 3) for t in p[j]}
    strata = sum(1 + (p[1] != p[0]) for p in cols.prompts)
    in_tags = sum(len(set(p[2])) + len(set(p[3])) for p in cols.prompts)
    in_slices = sum(len(slice_prompts(cols, spec)) for spec in published)
    split = [breakdown_prompts(cols, kind.fields[0]) for kind in breakdowns(manifest)]
    in_breakdowns = sum(len(idx) for groups in split for idx in groups.values())
    b = ((manifest.get("config") or {}).get("uncertainty") or {}).get("n_bootstrap")
    b = b if isinstance(b, int) and not isinstance(b, bool) else 0
    n = len(cols.sample_ids)
    memberships = n + strata + in_tags + in_slices + in_breakdowns
    d = sum(len(groups) for groups in split)
    return Work(n, len(cols.models), len(tags), len(published), memberships, b, d)


def refusal(problems: list[str]) -> str:
    """The failure's message: the manifest asks for more work than this version bounds."""
    return (
        f"{MANIFEST}: the release asks for more work than this version bounds (data contract,"
        " § Release config; not recomputed): " + "; ".join(problems)
    )
