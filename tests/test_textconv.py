"""``searchgen-nb textconv``: a published artifact as short lines for ``git diff`` (data
contract, § Publication, Reviewing a release's data)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from searchgen_nb.textconv import WIDTH, textconv


def _textconv(path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "searchgen_nb", "textconv", str(path)],
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_demo_scores_give_one_short_line_per_pair(demo_data):
    proc = _textconv(demo_data / "prompt_scores.jsonl")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(map(len, lines)) <= 300
    pairs = [line for line in lines if re.match(r"^\S+ \S+: ", line)]
    assert len(pairs) == 751 * 13 == len({line.split(":")[0] for line in pairs})
    record = json.loads((demo_data / "prompt_scores.jsonl").open().readline())
    sid, (m, pair) = record["sample_id"], sorted(record["models"].items())[0]
    comps = pair["components_raw_0to3"]
    order = [
        "checklist",
        "rubric_adaptive",
        "prompt_faithfulness",
        "image_quality",
        "text_rendering",
        "ai_naturalness",
        "composition_and_aesthetics",
        "physical_plausibility",
        "visual_reference_evaluation",
        "text_reference_evaluation",
    ]
    values = " ".join("null" if comps[c] is None else json.dumps(comps[c]) for c in order)
    o9, o10 = json.dumps(pair["overall_9_raw"]), json.dumps(pair["overall_10_raw"])
    assert f"{sid} {m}: scored o9={o9} o10={o10} [{values}] file={pair['result_file']}" in lines
    assert f'{sid}.sample_id = "{sid}"' in lines


def test_json_rows_are_named_and_long_values_go_on(tmp_path):
    rows = [
        {"model_id": "m1", "overall_9": 71.2, "note": "x" * 700},
        {"model_id": "m2", "overall_9": None},
    ]
    (tmp_path / "board.json").write_text(json.dumps(rows))
    lines = list(textconv(tmp_path / "board.json"))
    assert "[model_id=m1].overall_9 = 71.2" in lines
    assert '[model_id=m2] = {"model_id":"m2","overall_9":null}' in lines
    long = [line for line in lines if line.startswith('[model_id=m1].note = "')]
    assert len(long) == 1 and all(len(line) <= WIDTH for line in lines)
    assert [line[:28] for line in lines if "…[" in line] == [
        "[model_id=m1].note = …[300:]",
        "[model_id=m1].note = …[564:]",
    ]


def test_a_file_that_is_not_json_is_named_with_its_line(tmp_path):
    path = tmp_path / "prompt_scores.jsonl"
    path.write_text('{"sample_id": "a", "models": {}}\n{"sample_id": NaN}\n')
    proc = _textconv(path)
    assert proc.returncode == 1 and proc.stdout == 'a = {"sample_id":"a"}\n'
    assert proc.stderr.startswith(f"searchgen-nb textconv: FAILED: {path} line 2: not strict JSON")
    assert len(proc.stderr.splitlines()) == 1
