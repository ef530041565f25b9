"""A release never loses a result unseen: with ``previous_release`` every pair it scored and this
release does not (missing or invalid) fails check ``lost_results`` unless
``expected.lost_results`` acknowledges it; a release guarded by nothing carries the warning
``unguarded_results``; ``coverage_lock`` lists the culprit first (data contract, § The release
gate)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from factory import IMAGE, make_release, model, prompt, read_artifacts, result

from searchgen_nb.book import pages
from searchgen_nb.config import load_config
from searchgen_nb.errors import ConfigError, ValidationFailed
from searchgen_nb.gate.checks import validate_folder
from searchgen_nb.pipeline import aggregate_stage, extract_stage, gate, run_data
from searchgen_nb.schemas import check_document

PROMPTS = [prompt("p1"), prompt("p2_texthard"), prompt("p3", subset="NoSearch"), prompt("p4")]
MODELS = {"a": model("Model A"), "b": model("Model B", "exclude"), "c": model("Model C")}
RESULTS = {
    (m, p["sample_id"]): result({"checklist:0": 2, "rubric:image_quality": 1})
    for m in MODELS
    for p in PROMPTS
}
RESULTS[("b", "p4")] = IMAGE  # not scored in the first release either
FILE = "augmented_parsed_result_ffjudge_pp.json"


def _file(src: Path, model_id: str, sample_id: str) -> Path:
    return src / "results" / "rows" / sample_id / "none" / MODELS[model_id]["source_id"] / FILE


@pytest.fixture()
def first(tmp_path):
    """The source tree and its first release, published in ``tmp/v1`` (no guard of its own)."""
    cfg = make_release(tmp_path / "src", PROMPTS, MODELS, RESULTS)
    run_data(load_config(cfg), tmp_path / "v1", progress=False)
    return cfg.parent, tmp_path / "v1"


def _second(src: Path, **expected) -> Path:
    """The next release's config: the same sources, ``previous_release`` the first release."""
    data = yaml.safe_load((src / "release.yml").read_text())
    data["previous_release"] = "../v1"
    if expected:
        data["expected"] = expected
    path = src / "release2.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _fails(cfg: Path, out: Path, *said: str) -> str:
    before = read_artifacts(out.parent / "v1")
    with pytest.raises(ValidationFailed) as info:
        run_data(load_config(cfg), out, progress=False)
    msg = str(info.value)
    for text in said:
        assert text in msg, (text, msg)
    assert not out.exists() and read_artifacts(out.parent / "v1") == before
    return msg


def test_a_deleted_result_fails_naming_its_file(first):
    src, v1 = first
    _file(src, "a", "p3").unlink()  # the image stays: missing_evaluation
    msg = _fails(
        _second(src),
        v1.parent / "v2",
        "check lost_results failed (1 problem(s))",
        "model a: 1 result(s) the previous release scored are not scored now",
        "p3 missing_evaluation, no result file (the image is there)",
        f"(results_root/rows/p3/none/model-a/{FILE})",
        "[model_id a]",
    )
    assert "check coverage_lock" not in msg  # no lock: this check alone caught it


def test_truncated_and_missing_results_of_several_models_fail_each_named(first):
    src, v1 = first
    text = _file(src, "b", "p1").read_text()
    _file(src, "b", "p1").write_text(text[: len(text) // 2])  # truncated: invalid_evaluation
    for sid in ("p2_texthard", "p1"):  # result and image gone: missing_generation
        _file(src, "c", sid).unlink()
        (_file(src, "c", sid).parent / "image.png").unlink()
    msg = _fails(
        _second(src),
        v1.parent / "v2",
        "check lost_results failed (2 problem(s))",
        "model b: 1 result(s)",
        "p1 invalid_evaluation, not valid JSON",
        f"(results_root/rows/p1/none/model-b/{FILE})",
        "model c: 2 result(s)",
        "p1 missing_generation, neither a result file nor an"
        f" image (results_root/rows/p1/none/model-c/{FILE}); p2_texthard"
        " missing_generation",
    )
    assert "model a" not in msg


def test_a_lock_says_how_to_accept_an_acknowledged_loss(first):
    """An acknowledged loss still counts against a model's locked count: the lock's failure
    says to lower it."""
    src, v1 = first
    _file(src, "a", "p3").unlink()
    cfg = _second(src, lost_results={"a": ["p3"]}, n_scored={"a": 4})
    msg = _fails(cfg, v1.parent / "v2", "check coverage_lock failed (1 problem(s))")
    assert (
        "model a has 3 scored prompts, fewer than the locked 4; expected.lost_results"
        " acknowledges 1 of its unscored pairs as lost, but the lock still counts them: lower"
        " expected.n_scored a to 3 to accept that loss; not scored (1): p3 missing_evaluation"
    ) in msg
    assert "lost_results failed" not in msg


def test_an_acknowledged_loss_publishes_and_shows_as_a_change(first):
    src, v1 = first
    _file(src, "a", "p3").unlink()
    _file(src, "c", "p1").write_text("{")
    cfg = _second(src, lost_results={"a": ["p3"], "c": ["p1"]})
    run_data(load_config(cfg), v1.parent / "v2", progress=False)
    report = json.loads((v1.parent / "v2" / "validation_report.json").read_text())
    check = next(c for c in report["checks"] if c["name"] == "lost_results")
    assert check == {
        "name": "lost_results",
        "passed": True,
        "n_failures": 0,
        "failures": [],
        "skipped": None,
    }
    assert report["warnings"] == []  # previous_release guards it
    pairs = json.loads((v1.parent / "v2" / "changes.json").read_text())["pairs"]
    assert [(p["model_id"], p["sample_id"], p["status_after"]) for p in pairs] == [
        ("a", "p3", "missing_evaluation"),
        ("c", "p1", "invalid_evaluation"),
    ]
    alone = validate_folder(v1.parent / "v2").checks["lost_results"]  # searchgen-nb validate
    assert alone["passed"] and alone["skipped"] == (
        "the previous release is not at hand (standalone validate)"
    )


def test_the_gate_names_a_previous_release_it_cannot_read(first, tmp_path):
    _, v1 = first
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    lines = (v1 / "prompt_scores.jsonl").read_text().splitlines(keepends=True)
    (damaged / "prompt_scores.jsonl").write_text(lines[0] + '{"sample_id": "p2"\n')
    check = validate_folder(v1, previous=damaged).checks["lost_results"]
    assert check["failures"] == [
        {
            "message": f"previous release {damaged}/prompt_scores.jsonl: line 2: not strict JSON"
            " (Expecting ',' delimiter: line 2 column 1 (char 19))",
            "file": f"{damaged}/prompt_scores.jsonl",
            "line": 2,
        }
    ]
    (damaged / "prompt_scores.jsonl").unlink()
    message = validate_folder(v1, previous=damaged).checks["lost_results"]["failures"][0]
    assert message["message"] == (
        f"previous release {damaged}/prompt_scores.jsonl: cannot read: No such file or directory"
    )


@pytest.mark.parametrize(
    "model_id, sample_id, why",
    [
        ("a", "p1", "it is scored in this release"),
        ("b", "p4", "it was not scored in the previous release"),
        ("a", "p9", "it is no pair of both releases"),
    ],
)
def test_an_acknowledgement_of_a_pair_not_lost_fails(first, model_id, sample_id, why):
    src, v1 = first
    cfg = _second(src, lost_results={model_id: [sample_id]})
    _fails(
        cfg,
        v1.parent / "v2",
        "check lost_results failed (1 problem(s))",
        f"expected.lost_results names model {model_id}, sample_id {sample_id}, which was not"
        f" lost: {why} [model_id {model_id}, sample_id {sample_id}]",
    )


def test_an_acknowledgement_covers_only_its_pair(first):
    src, v1 = first
    _file(src, "a", "p3").unlink()
    _file(src, "a", "p1").unlink()
    _fails(
        _second(src, lost_results={"a": ["p3"]}),
        v1.parent / "v2",
        "model a: 1 result(s)",
        "p1 missing_evaluation",
    )


@pytest.mark.parametrize(
    "expected, previous, said",
    [
        (
            {"lost_results": {"a": ["p1"]}},
            False,
            "`expected.lost_results`: acknowledges results lost"
            " since the previous release, but `previous_release` is not set",
        ),
        (
            {"lost_results": {"zz": ["p1"]}},
            True,
            "`expected.lost_results` names unknown model(s): zz",
        ),
        ({"lost_results": {"a": ["p1", "p2", "p1"]}}, True, "model a names sample_id p1 twice"),
        (
            {"lost_results": {"a": "p1"}},
            True,
            "`expected.lost_results.a`: Input should be a valid list",
        ),
        ({"lost_result": {"a": ["p1"]}}, True, "`expected.lost_result`: unknown key"),
    ],
)
def test_the_acknowledgement_is_loaded_strictly(tmp_path, expected, previous, said):
    extra = {"previous_release": "../v1"} if previous else {}
    cfg = make_release(tmp_path / "src", PROMPTS, MODELS, RESULTS, expected=expected, **extra)
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert f"config {cfg}: " in str(info.value) and said in str(info.value), str(info.value)


def test_a_release_without_any_guard_publishes_with_the_named_warning(tmp_path):
    cfg = make_release(tmp_path / "src", PROMPTS, MODELS, RESULTS)
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "searchgen_nb.cli", "data", str(cfg), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    warning = (
        "nothing guarded this release against losing results: neither previous_release"
        " nor an expected.n_scored lock, so a deleted or damaged result file would"
        " publish unseen; set previous_release to the last release's public/data"
    )
    assert run.returncode == 0, run.stderr
    assert "all release checks passed" in run.stdout
    assert f"searchgen-nb data: warning unguarded_results: {warning}\n" in run.stdout
    report = json.loads((out / "validation_report.json").read_text())
    assert report["passed"] and report["warnings"] == [
        {"name": "unguarded_results", "message": warning}
    ]
    html = "".join(f.html for f in pages.audit_validation(report))
    assert (
        f"<strong>Warning unguarded_results:</strong> {warning.replace(chr(39), '&#x27;')}" in html
    )
    again = subprocess.run(
        [sys.executable, "-m", "searchgen_nb.cli", "validate", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == 0 and "warning unguarded_results: nothing guarded" in again.stdout


@pytest.mark.parametrize(
    "config, said",
    [
        ({"expected": {"n_scored": {"a": 4, "b": 3, "c": 4}}}, None),
        ({"expected": {"n_scored": {"a": 4}}}, "nothing guarded 2 model(s) (b, c) against losing"),
        (
            {
                "expected": {"n_scored": {"a": 4}},
                "models": {**MODELS, "b": model("B", pending=True), "c": model("C", pending=True)},
            },
            None,
        ),
    ],
)
def test_the_warning_names_exactly_the_models_nothing_guards(tmp_path, config, said):
    models = config.pop("models", MODELS)
    cfg = make_release(tmp_path / "src", PROMPTS, models, RESULTS, **config)
    report = run_data(load_config(cfg), tmp_path / "out", progress=False).report
    assert [w["message"][: len(said)] for w in report.warnings] == ([said] if said else [])


def test_a_truncated_file_under_a_lock_alone_is_named_first(tmp_path):
    """Without a previous release the lock's message lists the pairs with an image or a file
    first, however many pairs without either sort before them."""
    prompts = [prompt(f"an_early_prompt_{i:02d}") for i in range(40)] + [prompt("zz")]
    results = {("a", p["sample_id"]): result({"checklist:0": 1}) for p in prompts[30:]}
    cfg = make_release(
        tmp_path / "src", prompts, {"a": MODELS["a"]}, results, expected={"n_scored": {"a": 11}}
    )
    _file(cfg.parent, "a", "zz").write_text('{"success": tr')
    with pytest.raises(ValidationFailed) as info:
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    msg = str(info.value)
    assert (
        "model a has 10 scored prompts, fewer than the locked 11; not scored (31):"
        " invalid_evaluation zz; missing_generation an_early_prompt_00, an_early_prompt_01"
    ) in msg, msg
    assert "more in validation_report.json" in msg


def test_the_lock_names_the_lost_result_first_and_the_report_keeps_every_pair(first, tmp_path):
    _, v1 = first
    prompts = PROMPTS + [prompt(f"n{i:02d}") for i in range(60)]  # never a result for b
    cfg = make_release(
        tmp_path / "src2",
        prompts,
        MODELS,
        {**RESULTS, ("b", "p1"): IMAGE},
        expected={"n_scored": {"b": 3}},
        previous_release="../v1",
    )
    msg = _fails(cfg, v1.parent / "v2", "check coverage_lock failed", "check lost_results failed")
    line = next(x for x in msg.splitlines() if "has 2 scored prompts" in x)
    assert line.startswith(
        "  - model b has 2 scored prompts, fewer than the locked 3; not"
        " scored (62): p1 missing_evaluation, no result file (the image is"
        f" there) (results_root/rows/p1/none/model-b/{FILE});"
        " missing_evaluation p4; missing_generation n00, n01"
    ), line
    assert line.endswith("more in validation_report.json [model_id b]")
    assert len(line) <= len("  - ") + 500 + len(" [model_id b]")
    # the gate writes its report before it refuses: the whole list, in the message's order
    staged, config = tmp_path / "staged", load_config(cfg)
    aggregate_stage(config, staged, extract_stage(config, staged).table)
    with pytest.raises(ValidationFailed):
        gate(config, staged)
    report = json.loads((staged / "validation_report.json").read_text())
    failure = next(c for c in report["checks"] if c["name"] == "coverage_lock")["failures"][0]
    assert [(p["sample_id"], p["status"], p["lost"]) for p in failure["pairs"]] == [
        ("p1", "missing_evaluation", True),
        ("p4", "missing_evaluation", False),
        *((f"n{i:02d}", "missing_generation", False) for i in range(60)),
    ]
    assert failure["pairs"][0] == {
        "sample_id": "p1",
        "status": "missing_evaluation",
        "lost": True,
        "reason": "no result file (the image is there)",
        "result_file": f"rows/p1/none/model-b/{FILE}",
    }
    assert len(failure["message"]) <= 500
    assert not check_document("validation_report.json", report)


@pytest.mark.slow
def test_an_unguarded_release_says_so_in_its_log_and_on_its_audit_page(tmp_path, monkeypatch):
    from conftest import TEST_EPOCH

    from searchgen_nb.book.release import run_release

    monkeypatch.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
    cfg = make_release(
        tmp_path / "src",
        PROMPTS,
        MODELS,
        RESULTS,
        expected={"n_scored": {"a": 4, "b": 3}},
        uncertainty={"n_bootstrap": 0},
    )
    said = []
    run_release(cfg, log=said.append, output_root=tmp_path / "site")
    warning = "warning unguarded_results: nothing guarded 1 model(s) (c) against losing results"
    assert [m for m in said if m.startswith("warning")] == [
        next(m for m in said if m.startswith(warning))
    ]
    page = tmp_path / "site" / "_build" / "html" / "book" / "notebooks" / "08_audit.html"
    assert (
        "<strong>Warning unguarded_results:</strong> nothing guarded 1 model(s) (c) against"
        " losing results"
    ) in page.read_text(encoding="utf-8")
