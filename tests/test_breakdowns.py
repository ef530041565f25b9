"""Breakdowns by any prompt metadata field (data contract, § Breakdowns): a `breakdowns:` block in
a release config gives a board, bootstrap intervals with rank ranges and pairwise tests, a CSV
and a passing gate, with no code change; the gate refuses a tampered breakdown board; a bad name,
a field no prompt carries and a value that is no group are refused by name."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from dataclasses import astuple

import pytest
from factory import make_release, model, prompt, result

from searchgen_nb.book.downloads import write_downloads
from searchgen_nb.bounds import preflight
from searchgen_nb.changes import first_release
from searchgen_nb.changes_markdown import markdown
from searchgen_nb.config import load_config
from searchgen_nb.errors import ConfigError, MetadataError
from searchgen_nb.gate.checks import validate_folder
from searchgen_nb.gate.columns import Columns
from searchgen_nb.gate.work import count
from searchgen_nb.pipeline import run_data
from searchgen_nb.prompts import read_prompts

#: (sample_id, difficulty, level, theme, model a's checklist, model b's checklist)
TABLE = [
    ("p1", "easy", 1, ["x", "y"], 3, 1.5),
    ("p2", "hard", 2, ["x"], 1.5, 3),
    ("p3", "easy", 1, [], 0, 3),
    ("p4", None, None, ["y"], 3, 0),
]
BREAKDOWNS = {
    "difficulty": {"field": "difficulty"},
    "level": {"field": "level"},
    "theme": {"field": "theme"},
}


def _release(tmp_path, breakdowns=BREAKDOWNS, table=TABLE):
    prompts = [
        prompt(sid, difficulty=d, **({} if lv is None else {"level": lv}), theme=th)
        for sid, d, lv, th, _, _ in table
    ]
    results = {("a", row[0]): result({"checklist:0": row[4]}) for row in table}
    results |= {("b", row[0]): result({"checklist:0": row[5]}) for row in table}
    models = {"a": model("A"), "b": model("B")}
    return make_release(
        tmp_path,
        prompts,
        models,
        results,
        breakdowns=breakdowns,
        uncertainty={"n_bootstrap": 200, "seed": 3},
    )


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    root = tmp_path_factory.mktemp("breakdowns")
    out = root / "out"
    run_data(load_config(_release(root / "in")), out, progress=False)
    return out


def _board(out, name: str) -> dict:
    board = json.loads((out / f"leaderboard_by_{name}.json").read_text(encoding="utf-8"))
    return {g: [(r["model_id"], r["overall_9"], r["n_total"], r["rank"]) for r in rows]
            for g, rows in board.items()}  # fmt: skip


def test_each_breakdown_has_its_board_by_hand(released):
    # easy = p1, p3: A (3 + 0) / 2 = 1.5 → 50.0, B (1.5 + 3) / 2 = 2.25 → 75.0; hard = p2;
    # p4 has no difficulty (null): in no group
    assert _board(released, "difficulty") == {
        "easy": [("b", 75.0, 2, 1), ("a", 50.0, 2, 2)],
        "hard": [("b", 100.0, 1, 1), ("a", 50.0, 1, 2)],
    }
    # a number is one group, its JSON text; p4 has no level key
    assert _board(released, "level") == {
        "1": [("b", 75.0, 2, 1), ("a", 50.0, 2, 2)],
        "2": [("b", 100.0, 1, 1), ("a", 50.0, 1, 2)],
    }
    # a list is multi-label: x = p1, p2 (a tie at 75.0, by model_id), y = p1, p4
    assert _board(released, "theme") == {
        "x": [("a", 75.0, 2, 1), ("b", 75.0, 2, 2)],
        "y": [("a", 100.0, 2, 1), ("b", 25.0, 2, 2)],
    }
    manifest = json.loads((released / "manifest.json").read_text(encoding="utf-8"))
    kinds = {k["kind"]: k for k in manifest["declaration"]["group_kinds"]}
    assert kinds["level"] == {
        "kind": "level", "label": "level", "from": "breakdown", "fields": ["level"],
        "groups": None, "board": "leaderboard_by_level.json", "slice_key": None,
        "uncertainty_prefix": "level:",
    }  # fmt: skip
    assert "leaderboard_by_theme.json" in manifest["artifacts"]
    assert "leaderboard_by_theme.json" in manifest["artifact_sha256"]
    records = [json.loads(line) for line in (released / "prompt_scores.jsonl").open()]
    assert [(r["level"], r["theme"]) for r in records][:2] == [(1, ["x", "y"]), (2, ["x"])]
    by_slice = json.loads((released / "leaderboard_by_slice.json").read_text(encoding="utf-8"))
    assert set(by_slice["full_4"]) == {"overall", "strata", "domains", "failure_modes"}


def test_breakdown_groups_have_intervals_rank_ranges_and_pairwise_tests(released):
    u = json.loads((released / "uncertainty.json").read_text(encoding="utf-8"))
    assert {k for k in u["groups"] if k.split(":")[0] in BREAKDOWNS} == {
        "difficulty:easy", "difficulty:hard", "level:1", "level:2", "theme:x", "theme:y",
    }  # fmt: skip
    # one prompt, drawn by 131 of the 200 replicates of its stratum (four prompts): B's value is
    # always 100.0; in a replicate without it neither model has a value and they tie by model_id
    hard = u["groups"]["difficulty:hard"]
    assert hard["b"] == {"overall_9": [100.0, 100.0], "overall_10": [100.0, 100.0],
                         "rank": [1, 2], "n_valid": 131}  # fmt: skip
    assert [(p["a"], p["b"], p["diff"], p["ci"]) for p in u["pairs"]["difficulty:hard"]] == [
        ("b", "a", 50.0, [50.0, 50.0])
    ]
    assert [(p["a"], p["b"], p["diff"]) for p in u["pairs"]["theme:y"]] == [("a", "b", 75.0)]


def test_breakdown_csv_beside_the_board(released, tmp_path):
    names = write_downloads(released, tmp_path / "dl")
    assert {"leaderboard_by_theme.json", "leaderboard_by_theme.csv"} <= set(names)
    text = (tmp_path / "dl" / "leaderboard_by_difficulty.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["group"], r["model_id"], r["overall_9"], r["rank_low"]) for r in rows] == [
        ("easy", "b", "75.0", "1"), ("easy", "a", "50.0", "1"),
        ("hard", "b", "100.0", "1"), ("hard", "a", "50.0", "1"),
    ]  # fmt: skip


def test_the_gate_passes_the_release_and_fails_a_tampered_breakdown_board(released, tmp_path):
    assert validate_folder(released).passed
    copy = tmp_path / "copy"
    shutil.copytree(released, copy)
    path = copy / "leaderboard_by_theme.json"
    board = json.loads(path.read_text(encoding="utf-8"))
    board["y"][1]["overall_9"] = 30.0
    path.write_text(json.dumps(board, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["artifact_sha256"][path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    report = validate_folder(copy)
    failed = report.checks["aggregates"]
    assert not failed["passed"]
    assert failed["failures"][0] == {
        "message": "leaderboard_by_theme.json: overall_9 is 30.0, recomputed 25.0",
        "file": "leaderboard_by_theme.json", "group": "y", "model_id": "b",
    }  # fmt: skip


def test_a_bad_name_an_unknown_field_and_a_dict_value_are_named(tmp_path):
    with pytest.raises(ConfigError, match=r"`breakdowns`: .*breakdown name 'Hard!'"):
        load_config(_release(tmp_path / "a", {"Hard!": {"field": "difficulty"}}))
    with pytest.raises(ConfigError, match=r"breakdown name 'domain' is taken"):
        load_config(_release(tmp_path / "b", {"domain": {"field": "difficulty"}}))
    cfg = load_config(_release(tmp_path / "c", {"mood": {"field": "mood"}}))
    with pytest.raises(ConfigError, match=r"breakdown mood: field 'mood' .* no prompt"):
        run_data(cfg, tmp_path / "c_out", progress=False)
    table = [(*TABLE[0][:3], {"x": 1}, *TABLE[0][4:]), *TABLE[1:]]
    cfg = load_config(_release(tmp_path / "d", table=table))
    with pytest.raises(MetadataError, match=r"\(sample_id 'p1'\): breakdown field 'theme'"):
        run_data(cfg, tmp_path / "d_out", progress=False)
    assert not (tmp_path / "c_out").exists() and not (tmp_path / "d_out").exists()


def test_the_work_bounds_count_the_breakdown_groups(released, tmp_path):
    """``data``'s preflight and the gate count the six breakdown groups and their ten prompt
    memberships alike."""
    cfg = load_config(_release(tmp_path))
    fields = tuple(b.field for b in cfg.breakdowns.values())
    ours = preflight(cfg, read_prompts(cfg.dataset_path, fields))
    manifest = json.loads((released / "manifest.json").read_text(encoding="utf-8"))
    records = [json.loads(line) for line in (released / "prompt_scores.jsonl").open()]
    theirs = count(manifest, Columns.from_records(manifest, records))
    assert astuple(ours) == astuple(theirs)
    # memberships: 4 in All, 8 in the strata (SearchIntensive and VisualSearch), 4 in domain ART,
    # 4 in the slice, 3 + 3 + 4 in the breakdowns; groups: All, 4 strata, 1 tag, 1 slice, 6
    assert (ours.n_breakdown_groups, ours.memberships, ours.groups) == (6, 30, 13)


def test_the_gate_refuses_a_declaration_it_cannot_recompute(released, tmp_path):
    """A manifest whose declaration drops a built-in kind (its board would go unchecked) or
    gives a breakdown another board fails ``strict_json`` by name; nothing is recomputed."""

    def tampered(edit) -> dict:
        copy = tmp_path / f"copy{len(list(tmp_path.iterdir()))}"
        shutil.copytree(released, copy)
        manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
        edit(manifest["declaration"]["group_kinds"])
        (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        return validate_folder(copy).checks

    checks = tampered(lambda kinds: kinds.pop(1))  # domain
    assert checks["strict_json"]["failures"] == [
        {
            "message": "manifest.json: declaration: its group kinds before the breakdowns are not"
            " the built-in ones",
            "file": "manifest.json",
        }
    ]
    assert checks["aggregates"]["skipped"]
    checks = tampered(lambda kinds: kinds[-1].update(board="leaderboard_by_domain.json"))
    assert checks["strict_json"]["failures"][0]["message"] == (
        "manifest.json: declaration: breakdown theme is not declared as a breakdown is"
    )
    copy = tmp_path / "before-declarations"  # a manifest as published before it had one
    shutil.copytree(released, copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    del manifest["declaration"]
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert validate_folder(copy).checks["strict_json"]["failures"][0]["message"] == (
        "manifest.json: no declaration: a folder published before manifests carried one is "
        "checked by the version that made it (its manifest's pipeline_commit)"
    )


def test_a_value_the_book_cannot_show_is_refused_by_line_and_field(tmp_path):
    table = [*TABLE[:3], ("p4", "__proto__", None, ["y"], 3, 0)]
    cfg = load_config(_release(tmp_path, table=table))
    with pytest.raises(
        MetadataError,
        match=r"line 4 \(sample_id 'p4'\): breakdown field 'difficulty': value __proto__ is "
        r"'__proto__', a name every JavaScript object already has",
    ):
        run_data(cfg, tmp_path / "out", progress=False)


def test_changes_name_the_breakdown_groups(released, tmp_path):
    # the next release lowers A on p1 (easy) from 3 to 0: easy A (0 + 0) / 2 → 0.0, from 50.0
    table = [("p1", "easy", 1, ["x", "y"], 0, 1.5), *TABLE[1:]]
    shutil.copytree(released, tmp_path / "old-data")
    config = _release(tmp_path / "in", table=table)
    text = config.read_text(encoding="utf-8")
    config.write_text(text + "previous_release: ../old-data\n", encoding="utf-8")
    run_data(load_config(config), tmp_path / "out", progress=False)
    groups = json.loads((tmp_path / "out" / "changes.json").read_text(encoding="utf-8"))["groups"]
    easy = groups["difficulty:easy"]["a"]
    assert (easy["overall_9_before"], easy["overall_9_after"], easy["delta"]) == (50.0, 0.0, -50.0)
    assert groups["difficulty:hard"]["a"]["delta"] == 0.0
    assert {g for g in groups if g.startswith(("level:", "theme:"))} == {
        "level:1", "level:2", "theme:x", "theme:y"
    }  # fmt: skip
    changes = json.loads((tmp_path / "out" / "changes.json").read_text(encoding="utf-8"))
    text = markdown(changes, {"a": "A", "b": "B"}, policies={}, decimals=1)
    assert "| difficulty easy | A | 50.0 | 0.0 | −50.0 | 2 | 2 |" in text.splitlines()
    assert "- Rank change in theme x: **A** (`a`) 1 → 2 ↓; moved with it: **B** (`b`) 2 → 1 ↑" in (
        text.splitlines()
    )


def test_a_group_is_named_after_its_kind_in_words():
    # one model's Overall-9 falls in the stratum NoSearch and in the breakdown task_type's "edit"
    cell = {"overall_9_before": 50.0, "overall_9_after": 40.0, "delta": -10.0,
            "rank_before": 1, "rank_after": 1}  # fmt: skip
    groups = {"stratum:NoSearch": {"a": cell}, "task_type:edit": {"a": cell}}
    changes = first_release() | {"first_release": False, "groups": groups}
    lines = markdown(changes, {"a": "A"}, policies={}, decimals=1).splitlines()
    assert "| NoSearch | A | 50.0 | 40.0 | −10.0 | 1 | 1 |" in lines
    assert "| task type edit | A | 50.0 | 40.0 | −10.0 | 1 | 1 |" in lines
