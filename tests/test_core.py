"""The columnar core: the vectorised aggregation and the validator's vectorised
checks agree with plain exact arithmetic on every cell, whatever the order of the table.

The values include sums whose float64 result lies on the wrong side of a rounding boundary
(found by search: naive float rounding gives 21.2 for the exact 21.25 → 21.3 of
[0.05, 0.7, 1.1, 0.7]), exact ties (2.4375 → 81.25 → 81.3) and nulls.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchgen_nb.aggregate import ModelMeta, leaderboards
from searchgen_nb.config import SliceConfig
from searchgen_nb.constants import STATUSES
from searchgen_nb.declaration import BENCHMARK, COMPONENTS
from searchgen_nb.gate.checks import reconstruct
from searchgen_nb.gate.records import nearest_double_of_mean
from searchgen_nb.numeric import public_units
from searchgen_nb.slices import manifest_slices, slice_members, slice_specs
from searchgen_nb.table import OVERALL_9, OVERALL_10, ReleaseTable

TRAPS = [0.05, 0.7, 1.1, 0.7, 2.9, 0.3, 2.3, 0.1, 2.4375, 1 / 3, 2 / 3, 0.0, 3.0]


def exact_public(values: list[float], n: int, decimals: int = 1) -> float | None:
    """Reference: half-up of the exact rational mean × 100 / 3 (data contract, § Public scale
    and rounding)."""
    if n == 0:
        return None
    units = (
        sum(map(Fraction, values), Fraction(0)) / n * 100 * 10**decimals / 3 + Fraction(1, 2)
    ).__floor__()
    return float(Fraction(units, 10**decimals))


def one_group_table(
    columns: dict[str, list[list[float | None]]], statuses: dict[str, list[str]] | None = None
) -> ReleaseTable:
    """A table of models × prompts, every prompt NoSearch with tag ART; ``columns[m][p]``
    are the twelve raw values (None = null)."""
    models = list(columns)
    n = len(next(iter(columns.values())))
    prompts = [
        {
            "sample_id": f"p{i:03d}",
            "prompt_index": i,
            "release_row": f"r{i}",
            "subset": "NoSearch",
            "stratum": "NoSearch",
            "search_type": "NoSearch",
            "domains": ["ART"],
            "failure_modes": [],
        }
        for i in range(n)
    ]
    table = ReleaseTable.empty(
        prompts,
        models,
        ["none"] * len(models),
        models,
        [[f"{m}/{i}" for i in range(n)] for m in models],
    )
    for k, m in enumerate(models):
        for p, row in enumerate(columns[m]):
            status = (statuses or {}).get(m, ["scored"] * n)[p]
            table.status[k, p] = STATUSES.index(status)
            if status == "scored":
                table.values[k, p] = [math.nan if v is None else v for v in row]
    return table


def overall9_only(values: list[float | None]) -> list[list[float | None]]:
    return [[None] * OVERALL_9 + [v] for v in values]


def test_float_traps_round_as_the_exact_mean():
    table = one_group_table(
        {
            "a": overall9_only(
                [0.05, 0.7, 1.1, 0.7]
            ),  # float64 mean rounds to 21.2; exact 21.25 → 21.3
            "b": overall9_only(
                [2.9, 0.3, 2.3, 0.05]
            ),  # float64 rounds to 46.3; exact 46.2499… → 46.2
            "c": overall9_only([2.4375] * 4),  # exact tie 81.25 → 81.3
        }
    )
    metas = [ModelMeta(m, m, "Open", "exclude") for m in table.model_ids]
    rows = {
        r["model_id"]: r
        for r in leaderboards(table, metas, Decimal("0.5"), 1)["leaderboard_overall.json"]
    }
    assert (rows["a"]["overall_9"], rows["b"]["overall_9"], rows["c"]["overall_9"]) == (
        21.3,
        46.2,
        81.3,
    )
    assert [rows[m]["rank"] for m in "cba"] == [1, 2, 3]


def test_public_units_settles_only_cells_near_a_boundary():
    settled = []
    sums = np.array([0.05 + 0.7 + 1.1 + 0.7, 2.0, 0.0])
    units = public_units(
        sums,
        np.array([4.0, 1.0, 0.0]),
        np.array([4.0, 1.0, 0.0]),
        1,
        lambda i: settled.append(i) or 213,
    )
    assert units.tolist() == [213, 667, -1] and settled == [(0,)]


values_st = st.one_of(st.none(), st.sampled_from(TRAPS), st.floats(0, 3, allow_nan=False))


@st.composite
def tables(draw):
    n_models, n_prompts = draw(st.integers(1, 3)), draw(st.integers(1, 9))
    models = [f"m{k}" for k in range(n_models)]
    table = one_group_table({m: [[None] * 12] * n_prompts for m in models})
    for p in range(n_prompts):
        table.prompts[p].update(
            stratum=draw(st.sampled_from(["NoSearch", "SearchIntensive"])),
            domains=draw(st.lists(st.sampled_from(["ART", "HIS", "PSY"]), unique=True)),
            failure_modes=draw(st.lists(st.sampled_from(["FM1", "FM2"]), unique=True)),
        )
        table.prompts[p]["eval_slices"] = draw(
            st.one_of(
                st.none(),
                st.sampled_from(["mini", "hard"]),
                st.lists(st.sampled_from(["mini", "hard"]), unique=True),
            )
        )
        st_ = table.prompts[p]["stratum"]
        table.prompts[p]["search_type"] = (
            st_ if st_ == "NoSearch" else draw(st.sampled_from(["VisualSearch", "TextualSearch"]))
        )
        for k in range(n_models):
            status = draw(st.sampled_from(STATUSES + ("scored", "scored")))
            table.status[k, p] = STATUSES.index(status)
            if status == "scored":
                comps = draw(st.lists(values_st, min_size=10, max_size=10))
                o10 = draw(st.sampled_from(TRAPS))
                o9 = draw(st.one_of(st.none(), st.sampled_from(TRAPS)))
                table.values[k, p] = [math.nan if v is None else v for v in [*comps, o10, o9]]
    policies = draw(
        st.lists(st.sampled_from(["exclude", "zero_fill"]), min_size=n_models, max_size=n_models)
    )
    return table, [ModelMeta(m, m.upper(), "Open", pol) for m, pol in zip(models, policies)]


SLICES = {
    "mini": SliceConfig(field="eval_slices", include=["mini"]),
    "mini_and_hard": SliceConfig(field="eval_slices", include=["mini", "hard"], match="all"),
}


def manifest_of(metas: list[ModelMeta], table: ReleaseTable) -> dict:
    specs = slice_specs(SLICES, table.n_prompts)
    return {
        "scoring": {
            "public_rounding_decimals": 1,
            "overall_10_components": list(COMPONENTS),
            "min_ranking_coverage": 0.5,
        },
        "declaration": BENCHMARK.as_dict(),
        "model_order": [m.model_id for m in metas],
        "models": {
            m.model_id: {
                "display_name": m.display_name,
                "type": m.type,
                "missing_policy": m.missing_policy,
            }
            for m in metas
        },
        **manifest_slices(specs, slice_members(table.prompts, specs), table.prompts),
    }


@settings(max_examples=150, deadline=None)
@given(tables(), st.randoms(use_true_random=False))
def test_vectorised_aggregation_equals_exact_reference_and_validator(case, rnd):
    table, metas = case
    members = slice_members(table.prompts, slice_specs(SLICES, table.n_prompts))
    boards = leaderboards(table, metas, Decimal("0.5"), 1, None, members)
    assert list(boards["leaderboard_by_slice.json"]) == [
        f"full_{table.n_prompts}",
        "mini",
        "mini_and_hard",
    ]
    mini = [
        i
        for i, p in enumerate(table.prompts)
        if "mini"
        in ([p["eval_slices"]] if isinstance(p["eval_slices"], str) else p["eval_slices"] or [])
    ]
    assert members["mini"].tolist() == mini
    assert boards["leaderboard_by_slice.json"]["mini"]["overall"][0]["n_total"] == len(mini)
    # every cell of group All against the plain exact reference
    for row in boards["leaderboard_overall.json"]:
        k = table.model_ids.index(row["model_id"])
        scored = table.status[k] == 0
        n_zero = int((~scored).sum()) if metas[k].missing_policy == "zero_fill" else 0
        for col, got in (
            (OVERALL_9, row["overall_9"]),
            (OVERALL_10, row["overall_10"]),
            (0, row["components"]["checklist"]),
        ):
            vals = [v for v in table.values[k, scored, col].tolist() if v == v]
            assert got == exact_public(vals, len(vals) + n_zero), (row["model_id"], col)
    # the validator's own reconstruction (bincount, Fraction settlement) from the records
    assert reconstruct(manifest_of(metas, table), list(table.records())) == boards
    # any order of prompts and models: the same boards
    prompts, models = list(range(table.n_prompts)), list(range(table.n_models))
    rnd.shuffle(prompts)
    rnd.shuffle(models)
    shuffled = table.permuted(prompts, models)
    by_id = {m.model_id: m for m in metas}
    shuffled_members = slice_members(shuffled.prompts, slice_specs(SLICES, table.n_prompts))
    assert (
        leaderboards(
            shuffled,
            [by_id[m] for m in shuffled.model_ids],
            Decimal("0.5"),
            1,
            table.model_ids,
            shuffled_members,
        )
        == boards
    )


def nearest_double(values: list[float]) -> float:
    return float(sum(map(Fraction, values), Fraction(0)) / len(values))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(st.none(), st.sampled_from(TRAPS), st.floats(0, 3), st.floats(0, 1e-6)),
            min_size=1,
            max_size=10,
        ),
        min_size=1,
        max_size=20,
    )
)
def test_validator_overall_check_is_exact(rows):
    width = max(len(r) for r in rows)
    vals = np.array(
        [[math.nan if v is None else v for v in r] + [math.nan] * (width - len(r)) for r in rows]
    )
    right = np.array(
        [
            math.nan
            if all(v is None for v in r)
            else nearest_double([v for v in r if v is not None])
            for r in rows
        ]
    )
    assert nearest_double_of_mean(vals, right).all()
    off = np.where(
        np.isnan(right), 1.0, np.nextafter(right, 4.0)
    )  # one unit in the last place too high
    assert not nearest_double_of_mean(vals, off).any()
    low = np.where(right > 0, np.nextafter(right, -1.0), math.nan)
    assert not nearest_double_of_mean(vals, low)[right > 0].any()


@pytest.mark.parametrize(
    "values, stored, ok",
    [
        ([0.0, 0.0], 0.0, True),
        (
            [0.0, 5e-324],
            0.0,
            True,
        ),  # the exact mean 2.5e-324 is a tie between 0 and 5e-324: even (0) wins
        ([5e-324, 5e-324], 0.0, False),
        ([3.0, 1e-300], 1.5, True),  # 300 orders of magnitude apart: settled with fractions
        ([1.0, 2.0, 2.0], 5 / 3, True),
        (
            [0.0, 5e-324, 5e-324],
            5e-324,
            True,
        ),  # a subnormal mean (found by hypothesis): its unit is the value itself
        ([0.0, 5e-324, 5e-324], 0.0, False),
        (
            [2.0**-1022, 2.0**-1022 - 5e-324],
            2.0**-1022,
            True,
        ),  # a tie just below the smallest normal: the even one
        ([2.0**-1022, 2.0**-1022 - 5e-324], 2.0**-1022 - 5e-324, False),
    ],
)
def test_validator_overall_check_edge_rows(values, stored, ok):
    assert nearest_double_of_mean(np.array([values]), np.array([stored])).tolist() == [ok]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(TRAPS), st.floats(0, 3), st.floats(0, 1e-300)), max_size=9),
    st.one_of(st.none(), st.sampled_from(TRAPS), st.floats(0, 3)),
)
def test_prompt_overalls_are_correctly_rounded_exact_means(base, extra):
    """``means_with_extra`` = the exact rational means rounded once (data contract,
    § Per-prompt values)."""
    from searchgen_nb.numeric import means_with_extra

    both = base if extra is None else [*base, extra]
    want10 = nearest_double(both) if both else None
    want9 = (nearest_double(base) if base else None) if extra is not None else want10
    assert means_with_extra(list(base), extra) == (want10, want9)


def test_a_mean_whose_float_sum_is_inexact_is_still_the_exact_mean_rounded_once():
    """The plain float mean of these five is one double too low; an exact float sum (the
    integers, the halves) is divided once."""
    from searchgen_nb.numeric import mean_raw

    values = [2.9, 1e-17, 0.3, 0.6666666666666666, 0.2]
    assert sum(values) / 5 == 0.8133333333333332
    assert mean_raw(values) == 0.8133333333333334 == nearest_double(values)
    assert mean_raw([1.0, 1.5, 2.0]) == 1.5 and mean_raw([0.0, 0.0, 1.0]) == 1 / 3
    assert mean_raw([]) is None


def test_vectorised_coverage_and_public_values_equal_the_scalar_rules():
    """numeric.coverage_values / public_values (the aggregation's) = round_coverage / to_public."""
    from searchgen_nb.numeric import coverage_values, public_values, round_coverage, to_public

    pairs = [(s, t) for t in range(0, 41) for s in range(0, t + 1)] + [
        (9, 10),
        (2, 3),
        (1, 7),
        (6008, 6008),
    ]
    got = coverage_values(
        np.array([float(s) for s, _ in pairs]), np.array([float(t) for _, t in pairs])
    )
    assert got == [round_coverage(s, t) for s, t in pairs]
    raws = [Fraction(k, 48) for k in range(0, 145)]  # 0 … 3 in 1/48 steps: ties and non-ties
    for d in (0, 1, 2, 6):
        units = np.array([(r * 100 * 10**d / 3 + Fraction(1, 2)).__floor__() for r in raws] + [-1])
        assert public_values(units, d)[:-1] == [to_public(r, d) for r in raws]
        assert public_values(units, d)[-1] != public_values(units, d)[-1]  # NaN: no mean
