"""The bootstrap (data contract, § Uncertainty: the stratified prompt bootstrap): the pipeline's
and the gate's recomputation both equal a literal, exact implementation of the contract (plain
fractions, one ``integers`` call per stratum, every replicate a Python list of prompts), on
random small releases that include float traps, exact rounding ties, identical models (exact
rank ties), nulls, both missing policies and empty strata."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_core import SLICES, manifest_of, one_group_table, overall9_only, tables

import searchgen_nb.uncertainty as unc
from searchgen_nb.aggregate import ModelMeta, leaderboards
from searchgen_nb.config import UncertaintyConfig, config_from_dict
from searchgen_nb.errors import ConfigError
from searchgen_nb.gate.bootstrap import reconstruct_uncertainty
from searchgen_nb.gate.columns import Columns, slice_prompts
from searchgen_nb.slices import slice_members, slice_specs

LEAVES = ("NoSearch", "VisualSearch", "TextualSearch")


# ---- the literal reference ----------------------------------------------------------------


def half_up(x: Fraction, dec: int) -> float:
    u = math.floor(abs(x) * 10**dec + Fraction(1, 2))
    return float(Fraction(u if x >= 0 else -u, 10**dec))


def reference(table, metas, boards, slices, cfg: UncertaintyConfig, dec: int = 1) -> dict:
    """The data contract's bootstrap read literally, in exact fractions."""
    B, alpha = cfg.n_bootstrap, 1 - Fraction(cfg.confidence)
    out = {
        "method": "stratified prompt bootstrap",
        "n_bootstrap": B,
        "seed": cfg.seed,
        "confidence": float(cfg.confidence),
        "strata_order": list(LEAVES),
        "groups": {},
        "pairs": {},
    }
    if B == 0:
        return out
    order = sorted(range(table.n_prompts), key=lambda i: table.prompts[i]["sample_id"])
    rng = np.random.default_rng(cfg.seed)
    reps = [[] for _ in range(B)]
    for leaf in LEAVES:
        members = [i for i in order if table.prompts[i]["search_type"] == leaf]
        if not members:
            continue
        idx = rng.integers(0, len(members), size=(B, len(members)))
        for b in range(B):
            reps[b] += [members[j] for j in idx[b]]
    policy = {m.model_id: m.missing_policy for m in metas}

    def value(b, group, m, col):
        k = table.model_ids.index(m)
        total, n = Fraction(0), 0
        for p in reps[b]:
            if p not in group:
                continue
            if table.status[k, p] == 0:
                v = table.values[k, p, col]
                if v == v:
                    total += Fraction(float(v))
                    n += 1
            elif policy[m] == "zero_fill":
                n += 1
        return None if n == 0 else total / n * 100 / 3

    def ends(vals):
        vals = sorted(v for v in vals if v is not None)
        if not vals:
            return None
        n = len(vals)
        return [
            half_up(vals[max(math.ceil(alpha / 2 * n), 1) - 1], dec),
            half_up(vals[max(math.ceil((1 - alpha / 2) * n), 1) - 1], dec),
        ]

    def rank_ends(ranks):
        ranks = sorted(ranks)
        n = len(ranks)
        return [
            ranks[max(math.ceil(alpha / 2 * n), 1) - 1],
            ranks[max(math.ceil((1 - alpha / 2) * n), 1) - 1],
        ]

    from searchgen_nb.aggregate import prompt_groups

    pg = prompt_groups(table.prompts)
    groups = [("all:All", pg["stratum"]["All"], boards["leaderboard_overall.json"])]
    groups += [
        (f"stratum:{s}", pg["stratum"][s], boards["leaderboard_by_stratum.json"][s])
        for s in ("NoSearch", "SearchIntensive", "VisualSearch", "TextualSearch")
    ]
    groups += [(f"domain:{t}", idx, None) for t, idx in pg["domain"].items()]
    groups += [(f"failure_mode:{t}", idx, None) for t, idx in pg["failure_mode"].items()]
    groups += [
        (f"slice:{n}", idx, boards["leaderboard_by_slice.json"][n]["overall"])
        for n, idx in slices.items()
    ]
    for key, idx, rows in groups:
        group = set(np.asarray(idx).tolist())
        v9 = {m: [value(b, group, m, 11) for b in range(B)] for m in table.model_ids}
        v10 = {m: [value(b, group, m, 10) for b in range(B)] for m in table.model_ids}
        cells = {
            m: {
                "overall_9": ends(v9[m]),
                "overall_10": ends(v10[m]),
                "rank": None,
                "n_valid": sum(v is not None for v in v9[m]),
            }
            for m in sorted(table.model_ids)
        }
        if rows is not None and any(r["ranked"] for r in rows):
            ranked = [r for r in rows if r["ranked"]]
            ids = [r["model_id"] for r in ranked]
            ranks = {m: [] for m in ids}
            for b in range(B):
                ordered = sorted(  # stable: ties keep model_id order; none below any value
                    sorted(ids),
                    key=lambda m: (0 if v9[m][b] is None else 1, v9[m][b] or 0),
                    reverse=True,
                )
                for pos, m in enumerate(ordered, start=1):
                    ranks[m].append(pos)
            for m in ids:
                cells[m]["rank"] = rank_ends(ranks[m])
            pairs, ps = [], []
            for i in range(len(ids)):
                # above 40 configured models only the neighbours in rank are tested
                for j in range(i + 1, len(ids) if table.n_models <= 40 else min(i + 2, len(ids))):
                    a, bb = ids[i], ids[j]
                    d = [
                        None if v9[a][b] is None or v9[bb][b] is None else v9[a][b] - v9[bb][b]
                        for b in range(B)
                    ]
                    le = sum(1 for x in d if x is not None and x <= 0)
                    ge = sum(1 for x in d if x is not None and x >= 0)
                    p = min(Fraction(1), Fraction(2 * min(1 + le, 1 + ge), B + 1))
                    ps.append(p)
                    diff = float(
                        Decimal(repr(ranked[i]["overall_9"]))
                        - Decimal(repr(ranked[j]["overall_9"]))
                    )
                    pairs.append({"a": a, "b": bb, "diff": diff, "ci": ends(d)})
            k = len(ps)
            adj, best = [None] * k, Fraction(0)
            for step, t in enumerate(sorted(range(k), key=lambda t: ps[t])):
                best = max(best, min(Fraction(1), (k - step) * ps[t]))
                adj[t] = best
            for row, p, a in zip(pairs, ps, adj):
                row.update(p=half_up(p, 4), p_holm=half_up(a, 4), separable=a <= alpha)
            out["pairs"][key] = pairs
        out["groups"][key] = cells
    return out


def validator_inputs(table, metas, cfg, dec=1) -> tuple[dict, object]:
    """The manifest and the validator's columns of ``table`` (what the gate reads)."""
    manifest = manifest_of(metas, table)
    manifest["scoring"]["public_rounding_decimals"] = dec
    manifest["config"] = {
        "uncertainty": {
            "n_bootstrap": cfg.n_bootstrap,
            "seed": cfg.seed,
            "confidence": float(cfg.confidence),
        }
    }
    return manifest, Columns.from_records(manifest, list(table.records()))


def run_both(table, metas, cfg, dec=1, min_cov=Decimal("0.5")):
    members = slice_members(table.prompts, slice_specs(SLICES, table.n_prompts))
    boards = leaderboards(table, metas, min_cov, dec, None, members)
    zero_fill = {m.model_id: m.missing_policy == "zero_fill" for m in metas}
    ours = unc.uncertainty(table, zero_fill, boards, members, cfg, dec)
    manifest, cols = validator_inputs(table, metas, cfg, dec)
    theirs = reconstruct_uncertainty(manifest, cols, boards, slice_prompts)
    return ours, theirs, boards, members


# ---- properties ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    tables(),
    st.integers(0, 2**32),
    st.sampled_from([1, 2, 7, 40]),
    st.sampled_from(["0.95", "0.9", "0.5"]),
)
def test_pipeline_and_validator_equal_the_literal_contract(case, seed, n_boot, conf):
    table, metas = case
    cfg = UncertaintyConfig(n_bootstrap=n_boot, seed=seed, confidence=Decimal(conf))
    ours, theirs, boards, members = run_both(table, metas, cfg)
    want = reference(table, metas, boards, members, cfg)
    assert ours == want
    assert theirs == want


@settings(max_examples=25, deadline=None)
@given(tables(), st.randoms(use_true_random=False))
def test_no_figure_depends_on_prompt_or_model_order(case, rnd):
    table, metas = case
    cfg = UncertaintyConfig(n_bootstrap=30, seed=3)
    ours, *_ = run_both(table, metas, cfg)
    prompts, models = list(range(table.n_prompts)), list(range(table.n_models))
    rnd.shuffle(prompts)
    rnd.shuffle(models)
    shuffled = table.permuted(prompts, models)
    by_id = {m.model_id: m for m in metas}
    again, *_ = run_both(shuffled, [by_id[m] for m in shuffled.model_ids], cfg)
    assert again == ours


def test_identical_models_tie_exactly_and_rank_by_model_id():
    """Two models with the same scores tie in every replicate: the one whose id sorts first
    is always ranked above; their difference is exactly 0 in every replicate (p = 1)."""
    vals = [0.05, 0.7, 1.1, 0.7, 2.9, 2.4375, 1 / 3]
    table = one_group_table(
        {
            "twin_b": overall9_only(vals),
            "twin_a": overall9_only(vals),
            "other": overall9_only([1.0] * 7),
        }
    )
    metas = [ModelMeta(m, m, "Open", "zero_fill") for m in table.model_ids]
    ours, theirs, boards, members = run_both(
        table, metas, UncertaintyConfig(n_bootstrap=200, seed=1)
    )
    assert (
        ours
        == theirs
        == reference(table, metas, boards, members, UncertaintyConfig(n_bootstrap=200, seed=1))
    )
    assert ours["groups"]["all:All"]["twin_a"]["rank"][1] < ours["groups"]["all:All"]["twin_b"][
        "rank"
    ][0] or (
        ours["groups"]["all:All"]["twin_a"]["rank"] == [1, 2]
        and ours["groups"]["all:All"]["twin_b"]["rank"] == [2, 3]
    )
    twins = next(p for p in ours["pairs"]["all:All"] if {p["a"], p["b"]} == {"twin_a", "twin_b"})
    assert twins["ci"] == [0.0, 0.0] and twins["p"] == 1.0 and twins["separable"] is False


def test_close_replicates_are_settled_by_their_own_draws():
    """y = (0.1, 0.2, 0.7) and x = (0.3, 0.0, 0.7) are within float error of each other in
    every replicate that drew the first two prompts equally often, and exactly apart only when
    it drew them (0.1 + 0.2 > 0.3 as binary doubles: y ranks first; an exact tie ranks x first,
    by model_id): each such replicate is settled by its own counts."""
    table = one_group_table(
        {"y": overall9_only([0.1, 0.2, 0.7]), "x": overall9_only([0.3, 0.0, 0.7])}
    )
    metas = [ModelMeta(m, m, "Open", "exclude") for m in table.model_ids]
    cfg = UncertaintyConfig(n_bootstrap=300, seed=5)
    ours, theirs, boards, members = run_both(table, metas, cfg)
    assert ours == theirs == reference(table, metas, boards, members, cfg)
    pair = ours["pairs"]["all:All"][0]
    assert (
        0 < pair["p"] < 1
    )  # some close replicates tie exactly (none of the first two drawn), others do not
    assert (
        ours["groups"]["all:All"]["x"]["rank"] == ours["groups"]["all:All"]["y"]["rank"] == [1, 2]
    )


def test_above_forty_models_only_rank_neighbours_are_tested():
    """41 models (twins, float traps, a model without values where a replicate misses its
    prompt): the pairs are the 40 of models adjacent in rank, Holm across those; the ranks
    still order every model in every replicate, as the literal contract does; 40 models keep
    every pair."""
    base = {"y": [0.1, 0.2, 0.7, 2.0], "x": [0.3, 0.0, 0.7, 2.0], "sparse": [None, None, None, 2.0]}
    rows = {**base, **{f"m{k:02d}": [k / 13, 0.2, (k % 5) / 4, 1.5] for k in range(30)}}
    rows.update({f"twin{k}": [0.3, 0.0, 0.7, 2.0] for k in range(8)})
    table = one_group_table({m: overall9_only(v) for m, v in rows.items()})
    metas = [ModelMeta(m, m, "Open", "exclude") for m in table.model_ids]
    cfg = UncertaintyConfig(n_bootstrap=60, seed=4)
    ours, theirs, boards, members = run_both(table, metas, cfg)
    assert ours == theirs == reference(table, metas, boards, members, cfg)
    ranked = [r["model_id"] for r in boards["leaderboard_overall.json"] if r["ranked"]]
    assert len(ranked) == 41 and [(p["a"], p["b"]) for p in ours["pairs"]["all:All"]] == list(
        zip(ranked, ranked[1:])
    )
    assert {tuple(c["rank"]) for c in ours["groups"]["all:All"].values()} != {None}
    fewer = one_group_table({m: overall9_only(v) for m, v in list(rows.items())[:40]})
    metas = [ModelMeta(m, m, "Open", "exclude") for m in fewer.model_ids]
    ours, theirs, *_ = run_both(fewer, metas, cfg)
    assert ours == theirs and len(ours["pairs"]["all:All"]) == 40 * 39 // 2


def test_validator_ranks_each_replicate_by_its_exact_values():
    """The validator's ranks in every replicate equal a plain sort of that replicate's exact
    values (higher first, no value last, then model_id): twins (identical inputs), pairs that
    are exactly apart in only some close replicates, a model with one result (no value where
    a replicate does not draw it)."""
    import searchgen_nb.gate.bootstrap as vb

    rows = {
        "y": [0.1, 0.2, 0.7, 2.0],
        "x": [0.3, 0.0, 0.7, 2.0],
        "x_twin": [0.3, 0.0, 0.7, 2.0],
        "w": [0.2, 0.1, 0.7, 2.0],
        "sparse": [None, None, None, 2.0],
    }
    table = one_group_table({m: overall9_only(v) for m, v in rows.items()})
    metas = [ModelMeta(m, m, "Open", "exclude") for m in table.model_ids]
    cfg = UncertaintyConfig(n_bootstrap=400, seed=3)
    members_of_slices = slice_members(table.prompts, slice_specs(SLICES, table.n_prompts))
    boards = leaderboards(table, metas, Decimal("0"), 1, None, members_of_slices)
    rec = vb.Recompute(*validator_inputs(table, metas, cfg), boards, slice_prompts)
    overall = boards["leaderboard_overall.json"]
    ranked = [(r["model_id"], r["overall_9"]) for r in overall if r["ranked"]]
    members = [rec.models.index(m) for m, _ in ranked]
    assert len(members) == 5
    ranks, _ = rec.ranked(0, rec.replicate_values()["overall_9"][0], ranked)  # group 0: All
    counts = rec.counts(np.arange(cfg.n_bootstrap))
    for b in range(cfg.n_bootstrap):
        values = [rec.exact("overall_9", 0, m, tuple(counts[b].tolist())) for m in members]
        order = sorted(
            range(5),
            key=lambda i: (
                values[i] is None,
                0 if values[i] is None else -values[i],
                rec.models[members[i]],
            ),
        )
        assert [int(ranks[b, i]) for i in order] == [1, 2, 3, 4, 5], b


def test_rounding_tie_is_settled_exactly():
    """A replicate mean of exactly 81.25 (raw 2.4375) is 81.3, never a float's 81.2."""
    table = one_group_table({"m": overall9_only([2.4375] * 3)})
    metas = [ModelMeta("m", "M", "Open", "exclude")]
    ours, theirs, *_ = run_both(table, metas, UncertaintyConfig(n_bootstrap=5))
    assert (
        ours["groups"]["all:All"]["m"]["overall_9"]
        == [81.3, 81.3]
        == theirs["groups"]["all:All"]["m"]["overall_9"]
    )


# ---- the pieces -----------------------------------------------------------------------------


def test_chunked_draws_equal_one_call_per_stratum():
    """The count matrix made chunk by chunk (saved generator states) equals the contract's
    single ``integers`` call per stratum, for any chunk size."""
    leaf = [
        "VisualSearch",
        "NoSearch",
        "TextualSearch",
        "VisualSearch",
        "NoSearch",
        "VisualSearch",
        "VisualSearch",
    ]
    IDS = ["v9", "n2", "t1", "v1", "n1", "v3", "v2"]  # numbering inside a stratum: sample_id order
    B = 23
    rng = np.random.default_rng(5)
    want = np.zeros((B, len(leaf)), dtype=np.int64)
    for s in LEAVES:
        members = sorted((i for i, x in enumerate(leaf) if x == s), key=lambda i: IDS[i])
        idx = rng.integers(0, len(members), size=(B, len(members)))
        for b in range(B):
            for j in idx[b]:
                want[b, members[j]] += 1
    for chunk_bytes in (1, 8 * 7 * 5, 10**9):
        draws = unc.Draws(leaf, IDS, B, 5, chunk_bytes=chunk_bytes)
        got = np.hstack([draws.by_prompt(c) for c in range(len(draws.chunks))]).T
        assert np.array_equal(got, want), chunk_bytes
        assert np.array_equal(draws.count_rows(np.array([22, 0, 7])), want[[22, 0, 7]])
    assert len(unc.Draws(leaf, IDS, B, 5, chunk_bytes=1).chunks) == B


def test_chunked_release_equals_one_chunk(monkeypatch):
    """Counts made a few replicates at a time (pipeline and validator) give the figures of one
    chunk."""
    import searchgen_nb.gate.bootstrap as vb

    table = one_group_table(
        {
            "a": overall9_only([0.1, 2.9, 1.5, 3.0]),
            "b": overall9_only([1.0, 2.0, None, 2.5]),
            "c": overall9_only([0.3, 2.7, 1.5, 3.0]),
            "d": overall9_only([0.3, 2.7, 1.5, 3.0]),
        }
    )
    metas = [
        ModelMeta("a", "A", "Open", "zero_fill"),
        ModelMeta("b", "B", "Open", "exclude"),
        ModelMeta("c", "C", "Open", "exclude"),
        ModelMeta("d", "D", "Open", "exclude"),
    ]
    cfg = UncertaintyConfig(n_bootstrap=50, seed=9)
    whole = run_both(table, metas, cfg)[:2]
    monkeypatch.setattr(unc, "CHUNK_BYTES", 8 * 4 * 3)  # three replicates per chunk
    monkeypatch.setattr(vb, "_SLICE_BYTES", 8 * 4 * 3)
    assert (
        len(unc.Draws(["NoSearch"] * 4, list("abcd"), 50, 9).chunks) == 17
    )  # (the settings take effect)
    ours, theirs, boards, _ = run_both(table, metas, cfg)
    assert (ours, theirs) == whole
    rec = vb.Recompute(*validator_inputs(table, metas, cfg), boards, slice_prompts)
    rec.replicate_values()
    assert len(rec.states) == 17  # slices of three replicates of the one stratum


@pytest.mark.parametrize(
    "n,alpha,want",
    [
        (10_000, Fraction(1, 20), (249, 9749)),
        (40, Fraction(1, 20), (0, 38)),
        (1, Fraction(1, 20), (0, 0)),
        (7, Fraction(1, 2), (1, 5)),
    ],
)
def test_percentile_positions(n, alpha, want):
    """⌈(α/2)·n⌉ and ⌈(1−α/2)·n⌉, 1-based (numpy's inverted_cdf), as 0-based positions."""
    assert unc.percentile_positions(n, alpha) == want
    values = np.arange(n, dtype=float)
    assert (
        np.percentile(values, float(alpha / 2) * 100, method="inverted_cdf"),
        np.percentile(values, float(1 - alpha / 2) * 100, method="inverted_cdf"),
    ) == want


def test_holm_step_down_is_monotone_and_capped():
    # p = 1/100, 4/100, 3/100 over K = 3: 3·0.01 = 0.03, 2·0.03 = 0.06,
    # then max(0.06, 1·0.04) = 0.06
    assert unc._holm([1, 4, 3], 100) == [3, 6, 6]
    assert unc._holm([60, 50], 100) == [100, 100]  # 2·0.5 = 1 (capped), then max(1, 0.6)


def test_p_value_rounding_and_smallest_p():
    assert unc._p_value(2, 10_001) == 0.0002  # every replicate on one side: 2 / (B + 1)
    assert (
        unc._p_value(1, 8) == 0.125
        and unc._p_value(1, 3) == 0.3333
        and unc._p_value(2, 3) == 0.6667
    )
    assert unc._p_value(1, 20_000) == 0.0001  # 0.00005 → half-up


def test_half_up_signed_rounds_halves_away_from_zero():
    assert (
        unc.half_up_signed(Fraction(-225, 100), 1) == -23
        and unc.half_up_signed(Fraction(225, 100), 1) == 23
    )
    assert unc.half_up_signed(Fraction(-224, 100), 1) == -22


def test_off_gives_the_header_only():
    table = one_group_table({"a": overall9_only([1.0, 2.0])})
    ours, theirs, *_ = run_both(
        table, [ModelMeta("a", "A", "Open", "exclude")], UncertaintyConfig(n_bootstrap=0)
    )
    assert (
        ours == theirs and ours["groups"] == {} and ours["pairs"] == {} and ours["n_bootstrap"] == 0
    )


def test_empty_group_has_null_intervals():
    """A stratum without prompts (here TextualSearch) has no replicate value: null, n_valid 0."""
    table = one_group_table({"a": overall9_only([1.0, 2.0])})
    ours, theirs, *_ = run_both(
        table, [ModelMeta("a", "A", "Open", "exclude")], UncertaintyConfig(n_bootstrap=20)
    )
    assert ours == theirs
    assert ours["groups"]["stratum:TextualSearch"]["a"] == {
        "overall_9": None,
        "overall_10": None,
        "rank": None,
        "n_valid": 0,
    }


# ---- config -----------------------------------------------------------------------------------


def _config(tmp_path, block):
    raw = {
        "benchmark": "B",
        "dataset": "p.jsonl",
        "results_root": "r",
        "models": {"a": {"display_name": "A", "type": "Open", "source_id": "a"}},
    }
    if block is not None:
        raw["uncertainty"] = block
    return config_from_dict(raw, tmp_path / "release.yml")


def test_config_defaults_and_exact_confidence(tmp_path):
    cfg = _config(tmp_path, None).uncertainty
    assert (cfg.n_bootstrap, cfg.seed, cfg.confidence, cfg.alpha) == (
        10_000,
        0,
        Decimal("0.95"),
        Fraction(1, 20),
    )
    assert _config(tmp_path, {"confidence": Decimal("0.9")}).uncertainty.alpha == Fraction(
        1, 10
    )  # not the binary 0.9


@pytest.mark.parametrize(
    "block,fragment",
    [
        ({"confidence": Decimal("1")}, "uncertainty.confidence"),
        ({"confidence": "0.95"}, "uncertainty.confidence"),
        ({"n_bootstrap": -1}, "uncertainty.n_bootstrap"),
        ({"n_bootstrap": 2.5}, "uncertainty.n_bootstrap"),
        ({"seed": -3}, "uncertainty.seed"),
        ({"replicates": 100}, "uncertainty.replicates"),
    ],
)
def test_config_rejects_bad_blocks(tmp_path, block, fragment):
    with pytest.raises(ConfigError) as info:
        _config(tmp_path, block)
    assert fragment in str(info.value)


# ---- the gate ---------------------------------------------------------------------------------


def _small_release(tmp_path, n_bootstrap=19):
    from factory import make_release, model, prompt, result

    prompts = [
        prompt(
            f"p{i:02d}{'_texthard' if i % 3 == 1 else ''}",
            subset="NoSearch" if i % 3 == 0 else "SearchIntensive",
            domains=["ART"] if i % 2 else ["HIS"],
            failure_modes=["EIK"] if i % 4 == 0 else [],
        )
        for i in range(12)
    ]
    models = {"a": model("Model A"), "b": model("Model B", "exclude"), "c": model("Model C")}
    results = {}
    for k, m in enumerate(models):
        for i, p in enumerate(prompts):
            if (k, i) != (1, 5):
                results[(m, p["sample_id"])] = result(
                    {"checklist:0": (i * (k + 2)) % 4, "rubric:image_quality": (i + k) % 3}
                )
    return make_release(
        tmp_path / "src",
        prompts,
        models,
        results,
        uncertainty={"n_bootstrap": n_bootstrap, "seed": 11},
    )


def test_gate_fails_when_one_replicate_is_shifted(tmp_path, monkeypatch):
    """A bug that shifts one replicate (every prompt drawn in replicate 0 of the first stratum
    moves to the next prompt) changes intervals; the validator, drawing on its own, names the
    check, the group and the model, and nothing is published."""
    from factory import read_artifacts

    from searchgen_nb.config import load_config
    from searchgen_nb.errors import ValidationFailed
    from searchgen_nb.pipeline import run_data

    cfg = load_config(_small_release(tmp_path))
    out = tmp_path / "public" / "data"
    run_data(cfg, out, progress=False)
    before = read_artifacts(out)
    original = unc.Draws.indices

    def shifted(self, chunk, block):
        idx = original(self, chunk, block)
        if chunk == 0 and block == 0:
            idx = idx.copy()
            idx[0] = (idx[0] + 1) % len(self.strata[0])
        return idx

    monkeypatch.setattr(unc.Draws, "indices", shifted)
    with pytest.raises(ValidationFailed) as info:
        run_data(cfg, out, progress=False)
    msg = str(info.value)
    assert (
        "check uncertainty failed" in msg and "uncertainty.json: " in msg and "recomputed" in msg
    ), msg
    assert "group " in msg and "model_id " in msg or "pair " in msg, msg
    assert read_artifacts(out) == before


def test_validate_names_an_edited_interval(tmp_path):
    """uncertainty.json edited after publication: the sha256 and the recomputation both fail."""
    import json
    import subprocess
    import sys

    from searchgen_nb.config import load_config
    from searchgen_nb.pipeline import run_data

    out = tmp_path / "public" / "data"
    run_data(load_config(_small_release(tmp_path)), out, progress=False)
    data = json.loads((out / "uncertainty.json").read_text())
    lo, hi = data["groups"]["domain:ART"]["a"]["overall_9"]
    data["groups"]["domain:ART"]["a"]["overall_9"] = [lo, hi + 0.1]
    (out / "uncertainty.json").write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-m", "searchgen_nb", "validate", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "uncertainty.json: sha256 differs" in proc.stderr
    assert (
        f"uncertainty.json: overall_9 is [{lo}, {hi + 0.1}], recomputed [{lo}, {hi}] [file "
        f"uncertainty.json, group domain:ART, model_id a]" in proc.stderr
    ), proc.stderr


# ---- the demo release and the book's views -----------------------------------------------------


@pytest.mark.slow
def test_demo_has_statistical_texture(demo_data):
    """The demo shows what the book must: an adjacent pair in All that cannot be separated, one
    that can, and a domain of at most six prompts whose intervals are visibly wide."""
    import json

    u = json.loads((demo_data / "uncertainty.json").read_text())
    assert (u["n_bootstrap"], u["seed"], u["confidence"]) == (10_000, 0, 0.95)  # the defaults
    overall = json.loads((demo_data / "leaderboard_overall.json").read_text())
    ranked = [r["model_id"] for r in overall if r["ranked"]]
    pairs = {(p["a"], p["b"]): p for p in u["pairs"]["all:All"]}
    assert list(pairs) == [
        (a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :]
    ]  # published rank order
    adjacent = [pairs[(a, b)] for a, b in zip(ranked, ranked[1:])]
    tie = pairs[("marrowleaf", "emberline_flash")]
    assert tie["separable"] is False and tie["diff"] == 0.3 and tie["ci"][0] < 0 < tie["ci"][1]
    assert sum(p["separable"] for p in adjacent) == len(adjacent) - 1
    assert (
        u["groups"]["all:All"]["marrowleaf"]["rank"]
        == [7, 8]
        == u["groups"]["all:All"]["emberline_flash"]["rank"]
    )
    domains = json.loads((demo_data / "leaderboard_by_domain.json").read_text())
    small = [t for t, rows in domains.items() if rows[0]["n_total"] <= 6]
    assert small
    widths = [
        hi - lo
        for t in small
        for c in u["groups"][f"domain:{t}"].values()
        if c["overall_9"]
        for lo, hi in [c["overall_9"]]
    ]
    assert (
        sorted(widths)[len(widths) // 2] > 15 and max(widths) > 30
    )  # All's are about 3 points wide
    assert set(u["groups"]) >= {
        "all:All",
        "stratum:TextualSearch",
        "domain:PSY",
        "failure_mode:EIK",
        "slice:testmini_hard",
    }


@pytest.mark.slow
def test_documented_reproduction_recipe_matches(demo_data, tmp_path):
    """The Methods page's "reproduce one interval by hand" snippet, run as printed on the demo's
    published files, prints the published interval."""
    import json
    import re
    import subprocess
    import sys
    from pathlib import Path

    methods = (Path(__file__).resolve().parents[1] / "book" / "methods.md").read_text(
        encoding="utf-8"
    )
    code = re.search(r"```python\n(import json, math.*?)```", methods, re.S).group(1)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=demo_data, capture_output=True, text=True, check=True
    )
    lo, hi = json.loads((demo_data / "uncertainty.json").read_text())["groups"]["all:All"][
        "quillmark_ultra"
    ]["overall_9"]
    assert proc.stdout.split() == [str(lo), str(hi)]


def test_tie_groups_chain_adjacent_non_separable_pairs():
    from searchgen_nb.book.views import tie_groups

    rows = [{"model_id": m, "ranked": True} for m in "abcdef"] + [
        {"model_id": "z", "ranked": False}
    ]
    pairs = [
        {"a": x, "b": y, "separable": (x, y) not in {("a", "b"), ("b", "c"), ("e", "f")}}
        for i, x in enumerate("abcdef")
        for y in "abcdef"[i + 1 :]
    ]
    assert tie_groups(rows, pairs) == {"a": "T1", "b": "T1", "c": "T1", "e": "T2", "f": "T2"}
    assert tie_groups(rows, []) == {}


@pytest.mark.slow
def test_leaderboard_and_heatmap_show_intervals(demo_data):
    from searchgen_nb.book import heatmaps, pages, views

    release = views.Release(demo_data)
    html = pages.leaderboard_view(release, "All").html
    assert "95% interval" in html and "Rank range" in html
    assert ">74.1–77.0<" in html  # quillmark_ultra's interval
    assert (
        html.count('class="sg-badge sg-tie"') == 2 and html.count(">≈ T1</span>") == 2
    )  # marrowleaf and emberline_flash
    assert "sg-chart-forest-all" in html
    frame = views.tag_frame(release, "domain")
    psy = frame[(frame["tag"] == "PSY") & (frame["model_id"] == "quillmark_ultra")].iloc[0]
    assert (
        psy["interval"]
        == release.uncertainty["groups"]["domain:PSY"]["quillmark_ultra"]["overall_9"]
    )
    spec = heatmaps.heatmap(frame, "t", wide_interval=20.0).html
    assert (
        '"strokeDash": [\n' in spec and '"filter": "datum.wide"' in spec
    )  # the dashed outline layer
    pairs = views.pairs_frame(release, "stratum", "All")
    assert len(pairs) == 66 and pairs.columns.tolist() == [
        "A",
        "B",
        "Δ Overall-9",
        "95% interval of Δ",
        "p",
        "Holm p",
        "Separable",
    ]
    slice_view = release.for_slice("testmini")
    assert views.uncertainty_key(slice_view, "stratum", "All") == "slice:testmini"
    assert views.uncertainty_key(slice_view, "stratum", "NoSearch") is None
    assert (
        "95% interval" not in pages.leaderboard_view(slice_view, "NoSearch").html
    )  # no interval inside a slice's strata


def test_fifteen_digit_confidence_keeps_exact_positions():
    """α with a 15-digit denominator: positions in Python integers (an int64 product overflowed)."""
    table = one_group_table(
        {"a": overall9_only([0.0, 1.0, 2.0, 3.0]), "b": overall9_only([1.0, 1.0, 2.0, 2.5])}
    )
    metas = [ModelMeta("a", "A", "Open", "zero_fill"), ModelMeta("b", "B", "Open", "zero_fill")]
    cfg = UncertaintyConfig(n_bootstrap=200, seed=2, confidence=Decimal("0.999999999999999"))
    ours, theirs, boards, members = run_both(table, metas, cfg)
    assert ours == theirs == reference(table, metas, boards, members, cfg)
    assert ours["groups"]["all:All"]["a"]["overall_9"] == [
        0.0,
        100.0,
    ]  # the extremes of 200 replicates of 4 prompts


@pytest.mark.parametrize(
    "edit,fragment",
    [
        (lambda u: u.pop("seed"), "manifest.json config.uncertainty.seed is null"),
        (
            lambda u: u.update(n_bootstrap=200.7),
            "manifest.json config.uncertainty.n_bootstrap is 200.7: expected a whole number",
        ),
        (
            lambda u: u.update(confidence="0.95"),
            'manifest.json config.uncertainty.confidence is "0.95"',
        ),
    ],
)
def test_validator_names_bad_bootstrap_settings(tmp_path, edit, fragment):
    import json

    from searchgen_nb.config import load_config
    from searchgen_nb.gate.checks import validate_folder
    from searchgen_nb.pipeline import run_data

    out = tmp_path / "public" / "data"
    run_data(load_config(_small_release(tmp_path)), out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    edit(manifest["config"]["uncertainty"])
    (out / "manifest.json").write_text(json.dumps(manifest))
    report = validate_folder(out)
    failures = report.checks["uncertainty"]["failures"]
    assert [f["message"] for f in failures if fragment in f["message"]], failures


def test_strict_json_refuses_overflow_and_keeps_negative_zero_apart():
    from searchgen_nb.gate.compare import same
    from searchgen_nb.untrusted import strict_loads

    with pytest.raises(ValueError, match="out of range"):
        strict_loads('{"x": 1e999}')
    assert strict_loads('{"x": 1e308}') == {"x": 1e308}
    assert not same(-0.0, 0.0) and same(0.0, 0.0)


@pytest.mark.slow
def test_compare_accepts_display_names_and_tag_names_any_case(demo_data):
    from searchgen_nb.book import pages, views

    release = views.Release(demo_data)
    assert views.resolve_models(release, ["quillmark ULTRA", "pixelwright_2", "Pixelwright 2"]) == [
        "quillmark_ultra",
        "pixelwright_2",
    ]
    assert (
        views.resolve_group(release, "art") == "ART"
        and views.resolve_group(release, "art & design") == "ART"
    )
    assert views.resolve_group(release, "nosearch") == "NoSearch"
    html = "".join(
        f.html for f in pages.compare(release, "fashion", ["Marrowleaf", "emberline flash"])
    )
    assert "domain FAS" in html and "Marrowleaf" in html
    with pytest.raises(ValueError) as info:
        views.resolve_models(release, [7])
    assert str(info.value).startswith(
        "compare_models: '7' is not a model of this release; valid (id or display name, any case): "
        "quillmark_ultra (Quillmark Ultra)"
    )
    assert "\n" not in str(info.value)
    with pytest.raises(
        ValueError,
        match=r"^compare_group: 'Artz' is not a group of this release; valid \(code or name, any "
        r"case\): All, ",
    ):
        views.resolve_group(release, "Artz")
    # the page's slice sections: a slice with no prompt in the group says so (it stopped the
    # notebook with the printed example `compare_group: fashion`); a typo still stops it
    hard = release.for_slice("testmini_hard")
    assert "FAS" not in hard.boards["domain"]
    (note,) = pages.compare(hard, "fashion", ["Marrowleaf"])
    assert (
        note.html
        == '<p class="sg-slice-note">No prompt of slice <code>testmini_hard</code> is in group '
        "<code>FAS</code>.</p>"
    )
    with pytest.raises(ValueError, match="^compare_group: 'Artz' is not a group of this release"):
        pages.compare(hard, "Artz", None)
    pairs_note = "".join(f.html for f in pages.pairwise(release, "All"))
    assert "separable = adjusted p ≤ 0.05." in pairs_note


@pytest.mark.slow
def test_slice_heatmaps_claim_no_interval_they_lack(demo_data):
    """Inside a named slice only the whole slice is bootstrapped: its tag heatmaps carry no
    interval tooltip, no dashed-outline legend, and the relative view names its baseline."""
    from searchgen_nb.book import pages, views

    release = views.Release(demo_data)
    full = " ".join(pages.tag_heatmap(release, "domain").html.split())  # legends wrap lines
    tip = '"field": "interval_text"'  # the tooltip line of the interval
    assert tip in full and "Dashed outline" in full and "bootstrap interval</a>, prompts" in full
    assert "Overall-9 on all prompts (exact differences" in full
    part = " ".join(pages.tag_heatmap(release.for_slice("testmini"), "domain").html.split())
    assert (
        tip not in part
        and "Dashed outline" not in part
        and "bootstrap interval</a>, prompts" not in part
    )
    assert "Intervals: computed for every prompt of the release only" in part
    assert "Overall-9 on all prompts of slice testmini (exact differences" in part
    assert "minus the model's Overall-9 on all prompts of slice testmini" in part
