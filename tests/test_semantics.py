"""The data contract's rules pinned with hand-computed values on a four-prompt release."""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest
from factory import (
    CANONICAL,
    EVALUATOR,
    IMAGE,
    make_release,
    model,
    prompt,
    read_artifacts,
    result,
    row,
)

from searchgen_nb.config import load_config
from searchgen_nb.numeric import round_coverage, to_public
from searchgen_nb.partition import partition
from searchgen_nb.pipeline import run_data

PROMPTS = [
    prompt("p01_vis", domains=["ART", "HIS"], failure_modes=["EIK"]),
    prompt("p02_texthard", domains=["ART"], failure_modes=["THG"]),
    prompt("p03_texthard_ns", subset="NoSearch", domains=["HIS"], failure_modes=[]),
    prompt("p04_text_rendering", domains=["SCI"], failure_modes=["EIK", "THG"]),
]
MODELS = {
    "a": model("Model A", "zero_fill"),
    "b": model("Model B", "exclude"),
    "c": model("Model C", "zero_fill", pending=True),  # no results at all (on purpose: pending)
    "d": model("Model D", "exclude", pending=True),  # no results at all (on purpose: pending)
}
RESULTS = {
    # checklist (3+2)/2 = 2.5, rubric_adaptive 1.0, prompt_faithfulness a real 0.0, visual 2.0
    ("a", "p01_vis"): result(
        {
            "checklist:0": 3,
            "checklist:1": 2,
            "rubric:prompt_faithfulness": 0.0,
            "rubric:landmark_accuracy": 1.0,
            "visual_reference_evaluation": 2.0,
        }
    ),
    ("a", "p02_texthard"): result({"text_reference_evaluation": 3.0}),  # only text reference
    ("a", "p03_texthard_ns"): {"success": False, "error": "judge timed out"},
    ("a", "p04_text_rendering"): IMAGE,
    ("b", "p01_vis"): result({"checklist:0": 2, "text_reference_evaluation": 1}),
    ("b", "p02_texthard"): result({"rubric:image_quality": 3}),
    ("b", "p04_text_rendering"): "{not json",
}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("mini")
    cfg_path = make_release(root, PROMPTS, MODELS, RESULTS, scoring={"min_ranking_coverage": 0.5})
    out = root / "out"
    run_data(load_config(cfg_path), out, progress=False)
    boards = {
        n: json.loads((out / n).read_text())
        for n in (
            "leaderboard_overall.json",
            "leaderboard_by_stratum.json",
            "leaderboard_by_domain.json",
            "leaderboard_by_failure_mode.json",
        )
    }
    records = {
        json.loads(line)["sample_id"]: json.loads(line)
        for line in (out / "prompt_scores.jsonl").read_text().splitlines()
    }
    return out, boards, records


def test_partition_rule_order():
    assert partition("NoSearch", "x_texthard_1") == ("NoSearch", "NoSearch")
    assert partition("SearchIntensive", "x_texthard_1") == ("SearchIntensive", "TextualSearch")
    assert partition("SearchIntensive", "x_text_rendering_1") == (
        "SearchIntensive",
        "TextualSearch",
    )
    assert partition(None, "x_1") == ("SearchIntensive", "VisualSearch")


def test_records_keep_null_zero_missing_invalid_apart(release):
    _, _, rec = release
    a = rec["p01_vis"]["models"]["a"]
    assert a["status"] == "scored"
    assert a["components_raw_0to3"]["checklist"] == 2.5
    assert a["components_raw_0to3"]["rubric_adaptive"] == 1.0
    assert a["components_raw_0to3"]["prompt_faithfulness"] == 0.0  # a real zero
    assert a["components_raw_0to3"]["image_quality"] is None  # not applicable
    assert a["overall_9_raw"] == a["overall_10_raw"] == 1.375
    assert rec["p03_texthard_ns"]["models"]["a"]["status"] == "invalid_evaluation"
    assert rec["p03_texthard_ns"]["models"]["a"]["error"] == "success is false: judge timed out"
    assert rec["p04_text_rendering"]["models"]["a"]["status"] == "missing_evaluation"
    assert rec["p03_texthard_ns"]["models"]["b"]["status"] == "missing_generation"
    bad = rec["p04_text_rendering"]["models"]["b"]
    assert bad["status"] == "invalid_evaluation" and bad["error"].startswith("not valid JSON")
    for sid in ("p03_texthard_ns", "p04_text_rendering"):
        e = rec[sid]["models"]["a"]
        assert set(e["components_raw_0to3"].values()) == {None} and e["overall_9_raw"] is None


def test_only_text_reference_gives_overall10_not_overall9(release):
    _, _, rec = release
    e = rec["p02_texthard"]["models"]["a"]
    assert e["overall_9_raw"] is None
    assert e["overall_10_raw"] == 3.0


def test_partition_of_records(release):
    _, _, rec = release
    got = {sid: (r["stratum"], r["search_type"]) for sid, r in rec.items()}
    assert got == {
        "p01_vis": ("SearchIntensive", "VisualSearch"),
        "p02_texthard": ("SearchIntensive", "TextualSearch"),
        "p03_texthard_ns": ("NoSearch", "NoSearch"),
        "p04_text_rendering": ("SearchIntensive", "TextualSearch"),
    }
    assert [r["prompt_index"] for r in rec.values()] == [0, 1, 2, 3]


def test_zero_fill_row(release):
    _, boards, _ = release
    a = row(boards["leaderboard_overall.json"], "a")
    assert (a["n_total"], a["n_scored"], a["n_included"], a["coverage"]) == (4, 2, 4, 0.5)
    # Overall-9: p01 1.375, p02 null (left out), two zero-filled prompts → 1.375/3 raw
    # → 15.277… → 15.3
    assert a["overall_9"] == 15.3
    # Overall-10: (1.375 + 3 + 0 + 0) / 4 = 1.09375 raw → 36.458… → 36.5
    assert a["overall_10"] == 36.5
    assert a["components"]["checklist"] == 27.8 and a["component_counts"]["checklist"] == 3
    assert (
        a["components"]["prompt_faithfulness"] == 0.0
        and a["component_counts"]["prompt_faithfulness"] == 3
    )
    assert a["components"]["image_quality"] == 0.0 and a["component_counts"]["image_quality"] == 2
    assert a["components"]["text_reference_evaluation"] == 33.3
    assert a["status_counts"] == {
        "scored": 2,
        "invalid_evaluation": 1,
        "missing_evaluation": 1,
        "missing_generation": 0,
    }


def test_exclude_row(release):
    _, boards, _ = release
    b = row(boards["leaderboard_overall.json"], "b")
    assert (b["n_total"], b["n_scored"], b["n_included"], b["coverage"]) == (4, 2, 2, 0.5)
    assert b["overall_9"] == 83.3  # (2 + 3) / 2 = 2.5 raw
    assert b["overall_10"] == 75.0  # (1.5 + 3) / 2 = 2.25 raw
    assert b["components"]["checklist"] == 66.7 and b["component_counts"]["checklist"] == 1
    assert (
        b["components"]["prompt_faithfulness"] is None
        and b["component_counts"]["prompt_faithfulness"] == 0
    )


def test_model_without_results(release):
    _, boards, _ = release
    c = row(boards["leaderboard_overall.json"], "c")
    assert (c["n_scored"], c["n_included"], c["coverage"], c["overall_9"], c["overall_10"]) == (
        0,
        4,
        0.0,
        0.0,
        0.0,
    )
    assert set(c["components"].values()) == {0.0}
    d = row(boards["leaderboard_overall.json"], "d")
    assert (d["n_scored"], d["n_included"], d["coverage"], d["overall_9"], d["overall_10"]) == (
        0,
        0,
        0.0,
        None,
        None,
    )
    assert set(d["components"].values()) == {None} and set(d["component_counts"].values()) == {0}


def test_ranking_and_order(release):
    _, boards, _ = release
    board = boards["leaderboard_overall.json"]
    assert [(r["model_id"], r["rank"], r["ranked"]) for r in board] == [
        ("b", 1, True),
        ("a", 2, True),
        ("c", None, False),
        ("d", None, False),
    ]


def test_strata_and_multilabel(release):
    _, boards, _ = release
    s = boards["leaderboard_by_stratum.json"]
    assert list(s) == ["All", "NoSearch", "SearchIntensive", "TextualSearch", "VisualSearch"]
    assert row(s["NoSearch"], "a")["overall_9"] == 0.0  # invalid → zero-filled
    assert row(s["NoSearch"], "b")["overall_9"] is None  # missing, excluded → nothing to average
    t = row(s["TextualSearch"], "a")
    assert (t["n_total"], t["overall_9"], t["overall_10"]) == (2, 0.0, 50.0)
    dom = boards["leaderboard_by_domain.json"]
    assert list(dom) == ["ART", "HIS", "SCI"]
    assert [row(dom[t], "a")["n_total"] for t in dom] == [2, 2, 1]  # 5 > 4 prompts: overlap
    assert row(dom["HIS"], "a")["overall_9"] == 22.9  # (1.375 + 0) / 2 raw → 22.916…
    fm = boards["leaderboard_by_failure_mode.json"]
    assert {t: row(fm[t], "a")["n_total"] for t in fm} == {"EIK": 2, "THG": 2}


def test_half_up_rounding_of_exact_value(tmp_path):
    # Overall-9 raw values 2.5 and 2.375 → mean 2.4375 → exactly 81.25 → 81.3
    # (float round gives 81.2)
    prompts = [prompt("q1"), prompt("q2")]
    results = {
        ("a", "q1"): result({"checklist:0": 2.5}),
        ("a", "q2"): result({"checklist:0": 2.0, "checklist:1": 2.75}),
    }
    cfg = make_release(tmp_path, prompts, {"a": model("A")}, results)
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    board = json.loads((tmp_path / "out" / "leaderboard_overall.json").read_text())
    assert board[0]["overall_9"] == 81.3
    assert round(2.4375 * 100 / 3, 1) == 81.2  # what binary rounding would have shown
    assert to_public(Fraction(867, 400), 1) == 72.3  # 72.25 → 72.3
    assert to_public(Fraction(2167, 1000), 1) == 72.2
    assert round_coverage(719, 751) == 0.9574


def _shuffled_release(root, seed: int):
    rng = random.Random(seed)
    prompts = list(PROMPTS)
    rng.shuffle(prompts)
    order = list(RESULTS)
    rng.shuffle(order)
    return make_release(
        root, prompts, MODELS, RESULTS, file_order=order, scoring={"min_ranking_coverage": 0.5}
    )


def test_order_invariance_byte_identical(tmp_path, monkeypatch, release):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    outs = []
    for seed in (1, 2):
        root = tmp_path / f"r{seed}"
        cfg = _shuffled_release(root, seed)
        run_data(load_config(cfg), root / "out", progress=False)
        outs.append(read_artifacts(root / "out"))
    assert (tmp_path / "r1" / "prompts.jsonl").read_bytes() != (
        tmp_path / "r2" / "prompts.jsonl"
    ).read_bytes()
    assert outs[0] == outs[1]


def test_bench_id_alias_and_evaluator_layout(tmp_path):
    prompts = [
        {
            "bench_id": "bench_0001",
            "subset": "SearchIntensive",
            "domains": ["SCI"],
            "failure_modes": None,
        }
    ]
    results = {("m", "bench_0001"): result({"checklist:0": 1.0})}
    cfg = make_release(
        tmp_path, prompts, {"m": model("M", source_id="model_a")}, results, layout=EVALUATOR
    )
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    rec = json.loads((tmp_path / "out" / "prompt_scores.jsonl").read_text())
    assert rec["sample_id"] == "bench_0001" and rec["release_row"] == "bench_0001"
    assert rec["failure_modes"] == []
    assert (
        rec["models"]["m"]["result_file"]
        == "model_a/bench_0001/augmented_parsed_result_evaluation_protocol.json"
    )
    assert rec["models"]["m"]["overall_9_raw"] == 1.0


def test_canonical_layout_uses_release_row_and_lane(tmp_path):
    models = {"m": {**model("M"), "lane": "lane2"}}
    results = {("m", "p1"): result({"checklist:0": 3})}
    cfg = make_release(tmp_path, [prompt("p1")], models, results, layout=CANONICAL)
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    rec = json.loads((tmp_path / "out" / "prompt_scores.jsonl").read_text())
    assert (
        rec["models"]["m"]["result_file"]
        == "rows/p1/lane2/m/augmented_parsed_result_ffjudge_pp.json"
    )
    assert rec["models"]["m"]["status"] == "scored"


def test_extraction_counts_the_files_read(release):
    from searchgen_nb.prompts import read_prompts
    from searchgen_nb.records import extract_records

    cfg = load_config(release[0].parent / "release.yml")
    extraction = extract_records(cfg, read_prompts(cfg.dataset_path), progress=False)
    assert extraction.n_files_read == 6  # the IMAGE pair and the missing ones have no file
