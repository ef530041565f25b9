"""Built-in extractor on the public evaluator's real files; pluggable and ToolGen extractors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from factory import make_release, model, prompt, result
from paths import FIXTURES

from searchgen_nb.config import load_config
from searchgen_nb.errors import ExtractorError, ReleaseError
from searchgen_nb.pipeline import run_data

REF = FIXTURES / "evaluator_results"
TESTS = Path(__file__).resolve().parent


@pytest.fixture()
def evaluator_release(tmp_path):
    cfg = tmp_path / "release.yml"
    cfg.write_text(
        f"benchmark: Evaluator sample\n"
        f"dataset: {REF / 'prompts.jsonl'}\n"
        f"results_root: {REF / 'results'}\n"
        "result_path: '{source_id}/{sample_id}/augmented_parsed_result_evaluation_protocol.json'\n"
        "models:\n"
        "  model_a: {display_name: Model A, type: Open, source_id: model_a}\n"
        "  model_b: {display_name: Model B, type: Commercial, source_id: model_b}\n"
    )
    return cfg


def _records(out: Path) -> dict:
    return {
        json.loads(line)["sample_id"]: json.loads(line)
        for line in (out / "prompt_scores.jsonl").read_text().splitlines()
    }


def test_real_evaluator_files(evaluator_release, tmp_path):
    run_data(load_config(evaluator_release), tmp_path / "out", progress=False)
    rec = _records(tmp_path / "out")
    a = rec["bench_0001"]["models"]["model_a"]["components_raw_0to3"]
    # checklist (2+0+0+3)/4; landmark_accuracy is the only adaptive rubric; text_rendering
    # is "" in `parsed` and absent from `scores` → not applicable
    assert a["checklist"] == 1.25 and a["rubric_adaptive"] == 2.0 and a["text_rendering"] is None
    assert a["visual_reference_evaluation"] == 2.0 and a["text_reference_evaluation"] == 2.0
    assert (
        rec["bench_0001"]["models"]["model_a"]["overall_9_raw"]
        == (1.25 + 2 + 1.5 + 3 + 1.5 + 2.5 + 0.5 + 2) / 8
    )
    b7 = rec["bench_0007"]["models"]["model_b"]
    assert b7["status"] == "invalid_evaluation"
    assert "score must be in [0, 3], got 4.0" in b7["error"]
    assert rec["bench_texthard_0000"]["stratum"] == "NoSearch"  # subset wins over the id
    assert rec["bench_texthard_0005"]["search_type"] == "TextualSearch"
    adaptive = rec["bench_0002"]["models"]["model_a"]["components_raw_0to3"]["rubric_adaptive"]
    assert adaptive == 2.75  # mean of landmark_accuracy 2.5 and style_consistency 3.0


def test_configured_extractor_sequence_and_errors(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))
    prompts = [prompt("p1"), prompt("p2")]
    results = {("m", "p1"): result({"checklist:0": 1.0}), ("m", "p2"): result({"checklist:0": 2.5})}
    cfg = make_release(
        tmp_path,
        prompts,
        {"m": model("M")},
        results,
        extractor="stub_extractors.seq:first_checklist_only",
    )
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    rec = _records(tmp_path / "out")
    c = rec["p1"]["models"]["m"]["components_raw_0to3"]
    assert (
        c["checklist"] == 1.0
        and c["text_reference_evaluation"] == 1.0
        and c["image_quality"] is None
    )
    p2 = rec["p2"]["models"]["m"]
    assert p2["status"] == "invalid_evaluation" and p2["error"] == "refusing 2.5 on purpose"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["extraction"]["extractor"] == "stub_extractors.seq:first_checklist_only"


def _one_pair(tmp_path: Path, extractor: str) -> Path:
    """A release of one prompt and one model, read with ``extractor``; its config."""
    return make_release(
        tmp_path,
        [prompt("p1")],
        {"m": model("M")},
        {("m", "p1"): result({"checklist:0": 1.0})},
        extractor=extractor,
    )


def test_extractor_value_out_of_range_is_invalid(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))
    cfg = _one_pair(tmp_path, "stub_extractors.seq:out_of_range")
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    e = _records(tmp_path / "out")["p1"]["models"]["m"]
    assert e["status"] == "invalid_evaluation" and "outside 0–3" in e["error"]


@pytest.mark.parametrize("scores, said", [
    (None, "'scores' is not an object: null"),
    ([5, 7], "'scores' is not an object: [5, 7]"),
    ({"checklist:0": 7}, "score 'checklist:0' is outside 0–3: 7"),
])  # fmt: skip
def test_the_files_scores_are_checked_whichever_extractor_reads_it(
    tmp_path, monkeypatch, scores, said
):
    monkeypatch.syspath_prepend(str(TESTS))
    cfg = _one_pair(tmp_path, "stub_extractors.seq:from_parsed")
    path = next((tmp_path / "results").rglob("*.json"))
    answer = {"success": True, "parsed": {"c": 2.0}}
    path.write_text(json.dumps({**answer, **({} if scores is None else {"scores": scores})}))
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    e = _records(tmp_path / "out")["p1"]["models"]["m"]
    assert e["status"] == "invalid_evaluation" and e["error"] == said, e


def test_a_numpy_nan_of_any_width_is_not_applicable(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))
    cfg = _one_pair(tmp_path, "stub_extractors.seq:float32_nan")
    path = next((tmp_path / "results").rglob("*.json"))
    path.write_text(json.dumps({**result({"checklist:0": 2.0}), "parsed": {"c": 2.0}}))
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    e = _records(tmp_path / "out")["p1"]["models"]["m"]
    assert e["status"] == "scored" and e["overall_9_raw"] == 2.0, e
    assert [c for c, v in e["components_raw_0to3"].items() if v is not None] == ["checklist"]


def test_unimportable_extractor_is_a_clear_error(tmp_path):
    cfg = make_release(
        tmp_path, [prompt("p1")], {"m": model("M")}, {}, extractor="no_such_module:f"
    )
    with pytest.raises(
        ExtractorError, match="extractor no_such_module:f: cannot import no_such_module"
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_toolgen_root_extractor_adapter(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLGEN_ROOT", str(TESTS / "toolgen_stub"))
    prompts = [prompt("p1"), prompt("p2")]
    results = {
        ("m", "p1"): result(
            {
                "checklist:0": 1.0,
                "checklist:1": 2.0,
                "visual_reference_evaluation": 1.0,
                "text_reference_evaluation": 0.0,
            }
        ),
        ("m", "p2"): result({"boom": 1.0}),
    }
    cfg = make_release(tmp_path, prompts, {"m": model("M")}, results)
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    rec = _records(tmp_path / "out")
    c = rec["p1"]["models"]["m"]["components_raw_0to3"]
    assert c["checklist"] == 1.5
    assert c["visual_reference_evaluation"] == 2.0  # the stand-in's doubling: ToolGen's code ran
    assert (
        c["text_reference_evaluation"] == 0.0 and c["image_quality"] is None
    )  # NaN → null, 0 stays 0
    assert rec["p1"]["models"]["m"]["overall_9_raw"] == 1.75
    p2 = rec["p2"]["models"]["m"]
    assert (
        p2["status"] == "invalid_evaluation" and p2["error"] == "extractor raised KeyError: 'boom'"
    )
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["extraction"]["extractor"] == "paper_materials.recompute_tables:extract_10comp"


def test_toolgen_root_not_a_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLGEN_ROOT", str(tmp_path / "nope"))
    cfg = make_release(tmp_path, [prompt("p1")], {"m": model("M")}, {})
    with pytest.raises(ExtractorError, match="TOOLGEN_ROOT"):
        run_data(load_config(cfg), tmp_path / "out", progress=False)


def test_a_worker_that_dies_stops_the_command_and_publishes_nothing(tmp_path, monkeypatch):
    """The extractor runs in the workers that read the result files: one killed there (as the
    out-of-memory killer would) stops ``data`` with a named error; nothing is published."""
    monkeypatch.syspath_prepend(str(TESTS))
    cfg = _one_pair(tmp_path, "stub_extractors.seq:dies")
    with pytest.raises(ReleaseError) as err:
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    assert str(err.value) == (
        "extract: a worker process ended before its result files were read (killed, or out "
        "of memory?); nothing was published"
    )
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
