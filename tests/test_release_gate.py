"""Release gate: one mutation per check. Each corrupts a copy of a fixture release (its
inputs, its staged artifacts, or the aggregation code), asserts the release fails naming
the check and the offending id, and asserts the published folder is byte-for-byte unchanged."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from factory import IMAGE, make_release, model, prompt, read_artifacts, result

import searchgen_nb.pipeline as pipeline
from searchgen_nb.config import load_config
from searchgen_nb.errors import ReleaseInterrupted, ValidationFailed
from searchgen_nb.gate.checks import CHECKS
from searchgen_nb.pipeline import run_data

PROMPTS = [
    prompt("p1", domains=["ART"], failure_modes=["EIK"]),
    prompt("p2_texthard", domains=["ART", "HIS"], failure_modes=[]),
    prompt("p3", subset="NoSearch", domains=["HIS"], failure_modes=["EIK"]),
]
MODELS = {"a": model("Model A"), "b": model("Model B", "exclude")}
RESULTS = {
    ("a", "p1"): result({"checklist:0": 3, "rubric:image_quality": 2}),
    ("a", "p2_texthard"): result({"checklist:0": 1, "text_reference_evaluation": 2}),
    ("a", "p3"): result({"checklist:0": 0}),
    ("b", "p1"): result({"checklist:0": 2}),
    ("b", "p2_texthard"): IMAGE,
    ("b", "p3"): result({"rubric:ai_naturalness": 1.5}),
}
EXPECTED = {
    "n_prompts": 3,
    "partition": {"NoSearch": 1, "SearchIntensive": 2, "VisualSearch": 1, "TextualSearch": 1},
    "n_scored": {"a": 3, "b": 2},
}


@pytest.fixture()
def published(tmp_path):
    """A fixture release already published once (the 'last good' folder)."""
    cfg = make_release(tmp_path / "src", PROMPTS, MODELS, RESULTS, expected=EXPECTED)
    out = tmp_path / "public" / "data"
    run_data(load_config(cfg), out, progress=False)
    return cfg, out, read_artifacts(out)


def _fails(cfg_path, out, before, check, *ids):
    with pytest.raises(ValidationFailed) as info:
        run_data(load_config(cfg_path), out, progress=False)
    msg = str(info.value)
    assert f"check {check} failed" in msg, msg
    for i in ids:
        assert i in msg, (i, msg)
    assert read_artifacts(out) == before  # last good release untouched
    assert sorted(p.name for p in out.parent.iterdir()) == ["data"]  # no staging left behind
    return msg


def _corrupt_staged(monkeypatch, mutate):
    """Make the pipeline write corrupted artifacts (as a bug would), hashes kept consistent."""
    original = pipeline.aggregate_stage

    def wrapped(cfg, folder, *args):
        boards = original(cfg, folder, *args)
        mutate(folder)
        manifest = json.loads((folder / "manifest.json").read_text())
        for name in manifest["artifact_sha256"]:
            manifest["artifact_sha256"][name] = hashlib.sha256(
                (folder / name).read_bytes()
            ).hexdigest()
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        return boards

    monkeypatch.setattr(pipeline, "aggregate_stage", wrapped)


def _edit_records(folder: Path, edit):
    path = folder / "prompt_scores.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    recs = edit(recs) or recs
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))


def _edit_json(folder: Path, name: str, edit):
    path = folder / name
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def _rewrite_config(cfg_path, **changes):
    import yaml

    data = yaml.safe_load(cfg_path.read_text())
    data.update(changes)
    cfg_path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_good_release_passes_every_check(published):
    _, out, _ = published
    report = json.loads((out / "validation_report.json").read_text())
    assert report["passed"] is True
    assert [c["name"] for c in report["checks"]] == list(CHECKS)
    assert all(c["passed"] for c in report["checks"])
    assert {c["name"]: c["skipped"] for c in report["checks"] if c["skipped"]} == {
        "paper_table": "no paper_table configured",
        "lost_results": "no previous_release configured",
    }


def test_1_expected_counts(published):
    cfg, out, before = published
    _rewrite_config(
        cfg,
        expected={
            **EXPECTED,
            "n_prompts": 751,
            "partition": {**EXPECTED["partition"], "TextualSearch": 264},
        },
    )
    msg = _fails(cfg, out, before, "expected_counts", "3 prompts, expected 751", "TextualSearch")
    assert "partition TextualSearch has 1 prompts, expected 264" in msg


def test_2_unique_records(published, monkeypatch):
    cfg, out, before = published
    _corrupt_staged(monkeypatch, lambda f: _edit_records(f, lambda r: r + [r[0]]))
    _fails(cfg, out, before, "unique_records", "sample_id p1")


def test_2_every_model_for_every_prompt(published, monkeypatch):
    cfg, out, before = published

    def drop(recs):
        del recs[1]["models"]["b"]

    _corrupt_staged(monkeypatch, lambda f: _edit_records(f, drop))
    _fails(cfg, out, before, "unique_records", "sample_id p2_texthard", "model_id b")


def test_3_tag_fields(published, monkeypatch):
    cfg, out, before = published

    def dup(recs):
        recs[2]["domains"] = ["HIS", "HIS"]

    _corrupt_staged(monkeypatch, lambda f: _edit_records(f, dup))
    _fails(cfg, out, before, "tag_fields", "sample_id p3", "duplicate tags")


def test_4_component_values(published, monkeypatch):
    cfg, out, before = published

    def bad(recs):
        recs[0]["models"]["a"]["components_raw_0to3"]["image_quality"] = 3.5

    _corrupt_staged(monkeypatch, lambda f: _edit_records(f, bad))
    _fails(
        cfg, out, before, "component_values", "image_quality = 3.5", "sample_id p1", "model_id a"
    )


def test_4_non_scored_record_carries_values(published, monkeypatch):
    cfg, out, before = published

    def bad(recs):
        recs[1]["models"]["b"]["components_raw_0to3"]["checklist"] = 0.0

    _corrupt_staged(monkeypatch, lambda f: _edit_records(f, bad))
    _fails(
        cfg,
        out,
        before,
        "component_values",
        "missing_evaluation record carries component values (checklist)",
        "sample_id p2_texthard",
        "model_id b",
    )


def test_5_null_zero_distinct(published, monkeypatch):
    cfg, out, before = published

    def null_as_zero(data):
        row = next(r for r in data if r["model_id"] == "b")
        row["components"]["text_reference_evaluation"] = 0.0  # b has no text reference value at all

    _corrupt_staged(monkeypatch, lambda f: _edit_json(f, "leaderboard_overall.json", null_as_zero))
    _fails(
        cfg,
        out,
        before,
        "null_zero_distinct",
        "text_reference_evaluation is 0.0 with component_counts 0",
        "model_id b",
    )


def test_5_missing_component_key(published, monkeypatch):
    cfg, out, before = published

    def drop_key(recs):
        del recs[0]["models"]["a"]["components_raw_0to3"]["text_rendering"]

    _corrupt_staged(monkeypatch, lambda f: _edit_records(f, drop_key))
    _fails(cfg, out, before, "null_zero_distinct", "sample_id p1", "model_id a")


def test_6_prompt_overalls(published, monkeypatch):
    cfg, out, before = published

    def bad(recs):
        recs[2]["models"]["a"]["overall_9_raw"] = 0.1

    _corrupt_staged(monkeypatch, lambda f: _edit_records(f, bad))
    _fails(
        cfg,
        out,
        before,
        "prompt_overalls",
        "overall_9_raw is 0.1, recomputed 0.0",
        "sample_id p3",
        "model_id a",
    )


def test_7_aggregates(published, monkeypatch):
    cfg, out, before = published

    def bad(data):
        data["HIS"][0]["overall_9"] += 0.1

    _corrupt_staged(monkeypatch, lambda f: _edit_json(f, "leaderboard_by_domain.json", bad))
    _fails(cfg, out, before, "aggregates", "leaderboard_by_domain.json: overall_9", "group HIS")


def test_7_aggregates_policy(published, monkeypatch):
    cfg, out, before = published

    def bad(data):
        row = next(r for r in data if r["model_id"] == "b")
        row["n_included"] = row["n_total"]  # claims zero_fill for an exclude model

    _corrupt_staged(monkeypatch, lambda f: _edit_json(f, "leaderboard_overall.json", bad))
    _fails(cfg, out, before, "aggregates", "n_included is 3, recomputed 2", "model_id b")


def test_8_paper_table(published):
    cfg, out, before = published
    board = json.loads(before["leaderboard_overall.json"])
    table = {r["model_id"]: r["overall_10"] for r in board}
    table["b"] = round(table["b"] + 0.1, 1)
    (cfg.parent / "paper_table.json").write_text(json.dumps(table))
    _rewrite_config(cfg, paper_table="paper_table.json")
    _fails(cfg, out, before, "paper_table", "model_id b", "by more than 0.05")


def test_8_paper_table_within_half_unit_passes(published):
    cfg, out, before = published
    table = {
        r["model_id"]: r["overall_10"] + 0.04
        for r in json.loads(before["leaderboard_overall.json"])
    }
    (cfg.parent / "paper_table.json").write_text(json.dumps(table))
    _rewrite_config(cfg, paper_table="paper_table.json")
    run_data(load_config(cfg), out, progress=False)


def test_9_coverage_lock_deleted_result_file(published):
    cfg, out, before = published
    (cfg.parent / "results/rows/p3/none/model-a/augmented_parsed_result_ffjudge_pp.json").unlink()
    msg = _fails(
        cfg, out, before, "coverage_lock", "model_id a", "not scored (1): missing_evaluation p3"
    )
    assert "model a has 2 scored prompts, fewer than the locked 3" in msg


def test_10_order_invariance(published, monkeypatch):
    cfg, out, before = published
    original = pipeline.leaderboards

    def order_dependent(table, *args):
        boards = original(table, *args)
        # a bug: the first prompt of the table (the staged order: prompt_index 0) changes a figure
        boards["leaderboard_overall.json"][0]["overall_10"] = float(
            table.prompts[0]["prompt_index"]
        )
        return boards

    calls = []
    monkeypatch.setattr(pipeline, "leaderboards", lambda *a: calls.append(1) or order_dependent(*a))
    _fails(cfg, out, before, "order_invariance", "overall_10")
    assert len(calls) >= 2


def test_11_strict_json(published, monkeypatch):
    cfg, out, before = published

    def nan(folder):
        p = folder / "leaderboard_overall.json"
        p.write_text(p.read_text().replace('"overall_10": ', '"overall_10": NaN, "x": ', 1))

    _corrupt_staged(monkeypatch, nan)
    _fails(
        cfg, out, before, "strict_json", "leaderboard_overall.json: non-standard JSON constant NaN"
    )


def test_0_schema_is_the_first_check(published, monkeypatch):
    """A row with a key no schema allows, and a count written as text: the schema check names
    file, JSON path and line before any number is recomputed."""
    cfg, out, before = published

    def bad_shapes(folder):
        p = folder / "leaderboard_overall.json"
        rows = json.loads(p.read_text())
        rows[0]["extra"] = 1
        rows[1]["n_total"] = str(rows[1]["n_total"])
        p.write_text(json.dumps(rows))
        lines = (folder / "prompt_scores.jsonl").read_text().splitlines()
        rec = json.loads(lines[1])
        rec["models"]["a"]["status"] = "maybe"
        lines[1] = json.dumps(rec)
        (folder / "prompt_scores.jsonl").write_text("\n".join(lines) + "\n")

    _corrupt_staged(monkeypatch, bad_shapes)
    msg = _fails(
        cfg,
        out,
        before,
        "schema",
        "leaderboard_overall.json /0: Additional properties are not allowed ('extra' was "
        "unexpected)",
        "leaderboard_overall.json /1/n_total: '",
        "prompt_scores.jsonl line 2 /models/a/status: 'maybe'",
    )
    assert msg.split("\n")[1].startswith("check schema failed (")  # the first check listed


def test_0_record_without_sample_id_is_named_by_the_schema_check(published, monkeypatch):
    """A record without its sample_id: the schema check names the line and the key, and the
    record checks read it without tripping over the missing key."""
    cfg, out, before = published

    def drop(recs):
        del recs[0]["sample_id"]
        recs[0]["subset"] = "VisualSearch"

    _corrupt_staged(monkeypatch, lambda f: _edit_records(f, drop))
    msg = _fails(cfg, out, before, "schema", "line 1 (top level): 'sample_id' is a required")
    assert "TypeError" not in msg and "strict_json" not in msg, msg


def test_11_artifact_hash(published):
    _, out, _ = published
    (out / "leaderboard_by_stratum.json").write_text(
        (out / "leaderboard_by_stratum.json").read_text().replace("Model A", "Model Z")
    )
    proc = subprocess.run(
        [sys.executable, "-m", "searchgen_nb", "validate", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert (
        "check strict_json failed" in proc.stderr
        and "leaderboard_by_stratum.json: sha256 differs" in proc.stderr
    )


def test_crash_mid_release_leaves_published_untouched(published, monkeypatch):
    cfg, out, before = published

    def crash(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "gate", crash)
    with pytest.raises(ReleaseInterrupted, match="nothing was published"):
        run_data(load_config(cfg), out, progress=False)
    assert read_artifacts(out) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["data"]


def test_validate_cli_on_published_folder(published):
    _, out, _ = published
    proc = subprocess.run(
        [sys.executable, "-m", "searchgen_nb", "validate", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "all 15 release checks passed" in proc.stdout


def test_gate_equality_is_equality_of_json_text():
    """The gate's comparison keeps apart exactly what the JSON text keeps apart."""
    from searchgen_nb.gate.compare import same

    values = [None, 0, 0.0, -0.0, False, True, 1, 1.0, 2**70, 1.5, 1.5000000000000002]
    values += ["1", "", float("nan"), float("inf"), [1, 2.0], [1, 2], [0.0], [-0.0], [None], []]
    values += [{"a": 1}, {"a": 1.0}, {"b": [0.0, None]}]
    for a in values:
        for b in values:
            assert same(a, b) == (json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True))
    assert not same(0.0, -0.0) and not same(1, 1.0) and not same(0, False) and same([1.5], [1.5])
