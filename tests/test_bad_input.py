"""Bad input: metadata and config stop the command with a message naming the place;
broken result files become invalid_evaluation with the reason kept; nothing half-written."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from factory import make_release, model, prompt, read_artifacts, result

from searchgen_nb.config import load_config
from searchgen_nb.errors import ConfigError, MetadataError
from searchgen_nb.pipeline import run_data

GOOD = json.dumps(prompt("p_ok"))


def _run_with_lines(tmp_path, lines):
    cfg = make_release(tmp_path, [prompt("p_ok")], {"m": model("M")}, {}, prompt_lines=lines)
    run_data(load_config(cfg), tmp_path / "out", progress=False)


@pytest.mark.parametrize(
    "line, message",
    [
        (
            '{"sample_id": "p_bad", "domains": ["A"',
            r"metadata prompts.jsonl line 2: not valid JSON",
        ),
        ('["p_bad"]', r"line 2: expected a JSON object, got list"),
        (
            '{"sample_id": 7}',
            r"line 2 \(sample_id 7\): sample_id \(or bench_id\) must be a non-empty string",
        ),
        (
            json.dumps(prompt("p_ok")),
            r"line 2 \(sample_id 'p_ok'\): duplicate sample_id \(first on line 1\)",
        ),
        (
            json.dumps(prompt("p_bad", domains="ART")),
            r"line 2 \(sample_id 'p_bad'\): domains must be a list of strings, got \"ART\"",
        ),
        (
            json.dumps(prompt("p_bad", failure_modes=["EIK", 3])),
            r"line 2 \(sample_id 'p_bad'\): failure_modes must be a list of strings",
        ),
        (
            json.dumps({**prompt("p_bad"), "release_row": "/etc/rows/p_bad"}),
            r"line 2 \(sample_id 'p_bad'\): release_row '/etc/rows/p_bad' is an absolute path",
        ),
        (
            json.dumps({**prompt("p_bad"), "release_row": "rows/../../p_bad"}),
            r"line 2 \(sample_id 'p_bad'\): release_row 'rows/../../p_bad' climbs out of "
            r"results_root",
        ),
        (
            json.dumps({"sample_id": "a", "bench_id": "b"}),
            r"line 2 \(sample_id 'a'\): sample_id and its alias bench_id differ",
        ),
    ],
)
def test_metadata_errors_name_line_and_sample_id(tmp_path, line, message):
    (tmp_path / "out").mkdir()
    stand_in = '{"artifact_sha256": {}, "artifacts": [], "schema_version": "1.1.0"}'
    (tmp_path / "out" / "manifest.json").write_text(stand_in)  # a previous data release
    with pytest.raises(MetadataError, match=message):
        _run_with_lines(tmp_path, [GOOD, line])
    assert read_artifacts(tmp_path / "out") == {"manifest.json": stand_in.encode()}
    assert [
        p.name for p in tmp_path.iterdir() if p.name.startswith(".out")
    ] == []  # no staging left


def test_duplicate_tag_is_dropped_with_warning(tmp_path):
    lines = [json.dumps(prompt("p1", domains=["ART", "HIS", "ART"]))]
    cfg = make_release(
        tmp_path,
        [prompt("p1")],
        {"m": model("M")},
        {("m", "p1"): result({"checklist:0": 1})},
        prompt_lines=lines,
    )
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    rec = json.loads((tmp_path / "out" / "prompt_scores.jsonl").read_text())
    assert rec["domains"] == ["ART", "HIS"]
    warnings = json.loads((tmp_path / "out" / "manifest.json").read_text())["extraction"][
        "warnings"
    ]
    assert warnings == [
        {
            "check": "duplicate_tag",
            "line": 1,
            "message": "domains: duplicate tag(s) ART dropped",
            "sample_id": "p1",
        }
    ]


def _config(tmp_path, **changes):
    cfg = make_release(tmp_path, [prompt("p1")], {"m": model("M")}, {})
    data = yaml.safe_load(cfg.read_text())
    for key, value in changes.items():
        if value is KeyError:
            data.pop(key)
        else:
            data[key] = value
    cfg.write_text(yaml.safe_dump(data))
    return cfg


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"dataset": KeyError}, r"`dataset`: required key is missing"),
        ({"models": KeyError}, r"`models`: required key is missing"),
        ({"results_root": 5}, r"`results_root`: Input should be a valid string"),
        (
            {
                "models": {
                    "m": {
                        "display_name": "M",
                        "type": "Open",
                        "source_id": "m",
                        "missing_policy": "drop",
                    }
                }
            },
            r"`models.m.missing_policy`: Input should be 'zero_fill' or 'exclude'",
        ),
        (
            {"models": {"m": {"display_name": "M", "type": "Closed", "source_id": "m"}}},
            r"`models.m.type`: Input should be 'Open' or 'Commercial'",
        ),
        ({"scoring": {"missing_policy_default": "drop"}}, r"`scoring.missing_policy_default`"),
        (
            {"scoring": {"rounding_decimals": "1"}},
            r"`scoring.rounding_decimals`: Input should be a valid integer",
        ),
        ({"result_path": "{release_row}/{model}/x.json"}, r"unknown field \{model\}"),
        ({"extractor": "no_colon"}, r"`extractor`: Value error, must be 'module:function'"),
        (
            {"expected": {"n_scored": {"ghost": 3}}},
            r"`expected.n_scored` names unknown model\(s\): ghost",
        ),
        ({"colour": "red"}, r"`colour`: unknown key"),
    ],
)
def test_config_errors_name_the_key(tmp_path, changes, message):
    cfg = _config(tmp_path, **changes)
    with pytest.raises(ConfigError, match=message):
        load_config(cfg)


def test_result_path_escaping_results_root(tmp_path):
    cfg = make_release(
        tmp_path, [prompt("p1")], {"m": model("M", source_id="../../../../outside")}, {}
    )
    with pytest.raises(
        ConfigError, match=r"result_path gives .* for model m, sample_id p1: outside results_root"
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)


BROKEN = {
    "not_json": ("{'scores': 1}", "not valid JSON"),
    "not_object": ("[1, 2]", "not a JSON object (got list)"),
    "success_false": (
        json.dumps({"success": False, "error": "ValueError: bad"}),
        "success is false: ValueError: bad",
    ),
    "success_missing": (json.dumps({"scores": {"checklist:0": 1}}), "success is null"),
    "nan": (
        '{"success": true, "scores": {"checklist:0": NaN}}',
        "not valid JSON: non-standard JSON constant NaN",
    ),
    "infinity": (
        '{"success": true, "scores": {"rubric:image_quality": Infinity}}',
        "not valid JSON: non-standard JSON constant Infinity",
    ),
    "nan_outside_scores": (
        '{"success": true, "scores": {"checklist:0": 2}, "parsed": {"note": NaN}}',
        "not valid JSON: non-standard JSON constant NaN",
    ),
    "overflow_outside_scores": (
        '{"success": true, "scores": {"checklist:0": 2}, "extra": -1e999}',
        "not valid JSON: number -1e999 is out of range (it would read as Infinity)",
    ),
    "string": (
        json.dumps(result({"checklist:0": "2"})),
        "score 'checklist:0' is not a number: \"2\"",
    ),
    "boolean": (
        json.dumps(result({"checklist:0": True})),
        "score 'checklist:0' is not a number: true",
    ),
    "above": (
        json.dumps(result({"visual_reference_evaluation": 3.5})),
        "score 'visual_reference_evaluation' is outside 0–3: 3.5",
    ),
    "negative": (
        json.dumps(result({"checklist:0": -0.5})),
        "score 'checklist:0' is outside 0–3: -0.5",
    ),
    "no_scores": (json.dumps(result({})), "no usable score (no component present)"),
    "scores_not_object": (
        json.dumps({"success": True, "scores": [1]}),
        "'scores' is not an object",
    ),
}


def test_broken_result_files_become_invalid_with_reason(tmp_path):
    prompts = [prompt(f"p_{k}") for k in BROKEN]
    results = {("m", f"p_{k}"): text for k, (text, _) in BROKEN.items()}
    cfg = make_release(tmp_path, prompts, {"m": model("M")}, results)
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    recs = {
        json.loads(line)["sample_id"]: json.loads(line)
        for line in (tmp_path / "out" / "prompt_scores.jsonl").read_text().splitlines()
    }
    for k, (_, reason) in BROKEN.items():
        e = recs[f"p_{k}"]["models"]["m"]
        assert e["status"] == "invalid_evaluation", k
        assert reason in e["error"], (k, e["error"])
        assert e["overall_9_raw"] is None and set(e["components_raw_0to3"].values()) == {None}


def test_unknown_score_key_is_a_warning(tmp_path):
    cfg = make_release(
        tmp_path,
        [prompt("p1")],
        {"m": model("M")},
        {("m", "p1"): result({"checklist:0": 2, "overall": 2})},
    )
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    w = json.loads((tmp_path / "out" / "manifest.json").read_text())["extraction"]["warnings"]
    assert w == [
        {
            "check": "result_warning",
            "file": "rows/p1/none/m/augmented_parsed_result_ffjudge_pp.json",
            "message": "score key(s) with no component ignored: overall",
            "model_id": "m",
            "sample_id": "p1",
        }
    ]


def test_data_says_its_warnings_and_where_the_rest_are(tmp_path):
    """Every warning is counted; the first five of the extraction are said, then where the
    rest are, then the gate's."""
    sids = [f"p{i}" for i in range(7)]
    cfg = make_release(
        tmp_path,
        [prompt(s) for s in sids],
        {"m": model("M")},
        {("m", s): result({"checklist:0": 2, "overall": 2}) for s in sids},
    )
    run = subprocess.run(
        [sys.executable, "-m", "searchgen_nb", "data", str(cfg), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    gate = [line for line in lines if line.startswith("searchgen-nb data: warning unguarded")]
    assert len(gate) == 1
    assert f"(7 result files read, {7 + len(gate)} warnings); all release checks passed" in lines[0]
    assert lines[1:7] == [
        *(
            f"searchgen-nb data: warning result_warning [sample_id {s}, model_id m]: score key(s)"
            " with no component ignored: overall"
            for s in sids[:5]
        ),
        "searchgen-nb data: … and 2 more warnings in manifest.json (extraction.warnings)",
    ]
    assert lines[7:] == gate


def test_cli_reports_without_traceback(tmp_path):
    cfg = make_release(
        tmp_path,
        [prompt("p1")],
        {"m": model("M")},
        {},
        prompt_lines=[GOOD, '{"sample_id": "p2", "domains": "X"}'],
    )
    proc = subprocess.run(
        [sys.executable, "-m", "searchgen_nb", "data", str(cfg), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert (
        "searchgen-nb data: FAILED: metadata prompts.jsonl line 2 (sample_id 'p2'): domains must "
        "be a list of strings" in proc.stderr
    )
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_data_escapes_and_bounds_a_warning_from_a_result_file():
    from searchgen_nb.cli import extraction_warning_lines

    key = "\x1b]0;owned\x07\nsearchgen-nb data: FORGED" + "x" * 3000
    (line,) = extraction_warning_lines(
        [{"check": "result_warning", "sample_id": "p1", "model_id": "m", "message": key}]
    )
    assert "\n" not in line and "\x1b" not in line and "\x07" not in line
    assert len(line) < 400 and line.endswith("…")
