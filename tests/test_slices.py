"""Named evaluation slices (data contract, § Named evaluation slices): membership, per-slice
leaderboards, the v1.1 manifest keys, and the gate's checks of them."""

from __future__ import annotations

import json

import pytest
from factory import make_release, model, prompt, result, row
from paths import FIXTURES

from searchgen_nb.config import SliceConfig, load_config
from searchgen_nb.errors import ConfigError, MetadataError, ValidationFailed
from searchgen_nb.pipeline import run_data
from searchgen_nb.slices import field_values, in_slice, slice_specs

V1_1 = FIXTURES / "published" / "v1.1"


def _release(tmp_path, slices, prompts=None):
    prompts = prompts or [
        prompt("p1", eval_slices=["mini", "hard"]),
        prompt("p2", "NoSearch", eval_slices=["mini"]),
        prompt("p3_texthard", eval_slices="hard"),
        prompt("p4"),
    ]
    results = {
        ("a", p["sample_id"]): result({"checklist:0": 1 + i % 3}) for i, p in enumerate(prompts)
    }
    results |= {("b", p["sample_id"]): result({"checklist:0": 2}) for p in prompts[:2]}
    return make_release(
        tmp_path, prompts, {"a": model("A"), "b": model("B", "exclude")}, results, slices=slices
    )


def test_membership_any_all_and_empty():
    mini_or_hard = SliceConfig(field="eval_slices", include=["mini", "hard"])
    both = SliceConfig(field="eval_slices", include=["mini", "hard"], match="all")
    everyone = SliceConfig(include=[])
    assert [
        in_slice(frozenset(v), mini_or_hard) for v in (["mini"], ["hard"], [], ["mini", "hard"])
    ] == [True, True, False, True]
    assert [in_slice(frozenset(v), both) for v in (["mini"], ["hard"], [], ["mini", "hard"])] == [
        False,
        False,
        False,
        True,
    ]
    assert in_slice(frozenset(), everyone)
    assert field_values({"eval_slices": "mini"}, "eval_slices") == {"mini"}
    assert field_values({"eval_slices": None}, "eval_slices") == frozenset()
    with pytest.raises(
        MetadataError,
        match=r"sample_id p9: slice field 'eval_slices' is 3, not a string or a list of strings",
    ):
        field_values({"sample_id": "p9", "eval_slices": 3}, "eval_slices")


def test_full_slice_added_when_no_slice_holds_every_prompt():
    specs = slice_specs({"mini": SliceConfig(field="eval_slices", include=["mini"])}, 4)
    assert list(specs) == ["full_4", "mini"] and specs["full_4"].expected_rows == 4
    assert list(slice_specs(None, 751)) == ["full_751"]


def test_every_board_inside_every_slice_with_its_own_coverage_and_ranks(tmp_path):
    cfg = _release(
        tmp_path,
        {
            "mini": {"field": "eval_slices", "include": ["mini"], "expected_rows": 2},
            "both": {
                "field": "eval_slices",
                "include": ["mini", "hard"],
                "match": "all",
                "expected_rows": 1,
            },
        },
    )
    out = tmp_path / "out"
    run_data(load_config(cfg), out, progress=False)
    by_slice = json.loads((out / "leaderboard_by_slice.json").read_text())
    assert sorted(by_slice) == [
        "both",
        "full_4",
        "mini",
    ]  # keys sorted in the file; the order is the manifest's published_slices
    full = json.loads((out / "leaderboard_overall.json").read_text())
    assert by_slice["full_4"]["overall"] == full
    # in the full set model b has 2 of 4 (coverage 0.5, unranked at 0.9); in "mini" 2 of 2: ranked
    assert (row(full, "b")["coverage"], row(full, "b")["ranked"]) == (0.5, False)
    mini = by_slice["mini"]
    assert [(r["model_id"], r["n_total"], r["coverage"], r["rank"]) for r in mini["overall"]] == [
        ("b", 2, 1.0, 1),
        ("a", 2, 1.0, 2),
    ]
    assert sorted(mini["strata"]) == [
        "All",
        "NoSearch",
        "SearchIntensive",
        "TextualSearch",
        "VisualSearch",
    ]
    assert (
        row(mini["strata"]["NoSearch"], "a")["n_total"] == 1
        and row(mini["strata"]["TextualSearch"], "a")["n_total"] == 0
    )
    assert row(by_slice["both"]["overall"], "a")["n_total"] == 1
    m = json.loads((out / "manifest.json").read_text())
    assert m["published_slices"] == ["full_4", "mini", "both"] and m["output_slice"] == "full_4"
    assert m["evaluation_slices"]["subset_field"] == "eval_slices"
    assert m["evaluation_slices"]["named"]["both"] == {
        "deduplicate_by": "release_row",
        "expected_rows": 1,
        "field": "eval_slices",
        "include_tags": ["mini", "hard"],
        "match": "all",
    }
    assert m["slice_partitions"]["mini"] == {
        "NoSearch": 1,
        "SearchIntensive": 1,
        "TextualSearch": 0,
        "VisualSearch": 1,
    }
    assert "leaderboard_by_slice.json" in m["artifacts"] and m["schema_version"] == "1.1.0"


def test_gate_fails_naming_the_slice_when_expected_rows_differs(tmp_path):
    cfg = _release(
        tmp_path, {"mini": {"field": "eval_slices", "include": ["mini"], "expected_rows": 3}}
    )
    with pytest.raises(
        ValidationFailed,
        match=r"check expected_counts failed.*\n.*slice mini has 2 prompts, expected_rows is 3 "
        r"\[group mini\]",
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "slices, message",
    [
        ({"bad name!": {"include": ["x"]}}, "slice name 'bad name!'"),
        ({"mini": {"field": "nonsense", "include": ["x"]}}, "slices.mini.field"),
        ({"mini": {"include": ["x"], "match": "some"}}, "slices.mini.match"),
        ({}, "names no slice"),
    ],
)
def test_bad_slice_config_is_refused_by_name(tmp_path, slices, message):
    cfg = _release(tmp_path, slices)
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("!", "!")):
        load_config(cfg)


@pytest.mark.slow
def test_demo_slices_have_the_published_v1_1_partitions(demo_data):
    ours = json.loads((demo_data / "manifest.json").read_text())
    published = json.loads((V1_1 / "manifest.json").read_text())
    assert ours["published_slices"] == published["published_slices"]
    assert ours["slice_partitions"] == published["slice_partitions"]
    assert {k: v["expected_rows"] for k, v in ours["evaluation_slices"]["named"].items()} == {
        k: v["expected_rows"] for k, v in published["evaluation_slices"]["named"].items()
    }
    by_slice = json.loads((demo_data / "leaderboard_by_slice.json").read_text())
    assert {k: v["overall"][0]["n_total"] for k, v in by_slice.items()} == {
        "full_751": 751,
        "testmini": 200,
        "testmini_easy": 100,
        "testmini_hard": 100,
    }
