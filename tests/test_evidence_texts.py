"""The evidence's texts (data contract, § Prompt evidence and thumbnails; § Input files): every
string bounded as it is stored, the metadata read once and hashed as read, a JSON or YAML input
nested too deeply refused by name, and the gate covering the texts and the report."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from factory import make_release, model, prompt, result

from searchgen_nb import evidence, pipeline
from searchgen_nb.config import load_config
from searchgen_nb.gate.checks import validate_folder
from searchgen_nb.pipeline import run_data
from searchgen_nb.untrusted import shown

DEEP = "[" * 100_000 + "]" * 100_000
LONG = "Paint the harbour at dawn.\n" + "w" * 2_500  # a real multi-paragraph prompt's shape
ZW = "a\u200b" * 1_000  # 1,000 zero-width spaces: 6,000 characters once escaped
ITEM = "\t" + "i" * 320
RUBRIC = "d" * 60 + "\u200b" * 4  # 64 characters, 84 once escaped


def _release(root: Path, prompts: list[dict], parsed: dict | None = None) -> Path:
    """One model scored on every prompt (its judge's answer ``parsed``)."""
    scores = {"checklist:0": 2, "rubric:image_quality": 2}
    good = result(scores, parsed=parsed or {})
    pairs = {("a", p["sample_id"]): good for p in prompts}
    return make_release(root, prompts, {"a": model("A")}, pairs, uncertainty={"n_bootstrap": 20})


def _lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "prompt_evidence.jsonl").open()]


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def _cli(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SEARCHGEN_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "searchgen_nb", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# ---- clipped as stored -------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2, 7, 64, 300, 2000])
def test_clip_bounds_the_stored_form_and_never_cuts_an_escape(limit):
    rng = random.Random(limit)
    alphabet = ["a", "é", "\n", "\t", "\u200b", "\u202e", "\x00", "\U000e0001", "…"]
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(3 * limit + 2)))
        got = evidence.clip(text, limit)
        assert len(got) <= limit
        if got == shown(text):
            continue
        assert got.endswith("…")  # cut: what is kept is the escaped form of a prefix
        assert any(shown(text[:k]) == got[:-1] for k in range(len(text) + 1)), (text, got)


def test_clip_keeps_a_text_within_the_bound_whole():
    assert evidence.clip("x" * 300, 300) == "x" * 300
    assert evidence.clip("a\tb", 4) == "a\\tb" and evidence.clip("a\tb", 3) == "a…"
    assert evidence.clip("\u200b" * 3, 13) == "\\u200b\\u200b…"  # not "\\u200b\\u200b\\u2…"
    assert evidence.clip(None, 10) == ""


def test_long_escaped_texts_publish_within_their_bounds(tmp_path):
    """A 2,500-character prompt with a line break, 1,000 zero-width spaces, a 320-character
    checklist item with a tab and a 64-character rubric name with zero-width spaces publish."""
    prompts = [prompt("p1", user_prompt=LONG, checklist=[ITEM]), prompt("p2", prompt=ZW)]
    parsed = {
        "checklist_scores": [{"item": ITEM, "score": 2}],
        "rubric_scores": {RUBRIC: {"score": 1}, "image_quality": {"score": 2}},
    }
    out = run_data(
        load_config(_release(tmp_path, prompts, parsed)), tmp_path / "d", progress=False
    ).out_dir
    p1, p2 = _lines(out)
    assert len(p1["text"]) == 2000 and p1["text"].startswith("Paint the harbour at dawn.\\nwww")
    assert p1["text"].endswith("w…")
    assert re.fullmatch(r"(a\\u200b){285}a…", p2["text"]), p2["text"][-20:]  # 285 × 7 + 2
    assert p1["checklist"] == ["\\t" + "i" * 297 + "…"]
    pair = p1["models"]["a"]
    assert pair["checklist"] == [{"item": "\\t" + "i" * 297 + "…", "score": 2.0}]
    assert set(pair["rubric"]) == {"d" * 60 + "…", "image_quality"}


def _edit_evidence(out: Path, change) -> None:
    """Change the evidence and re-hash it in the manifest, as a careful hand would."""
    lines = _lines(out)
    change(lines)
    path = out / "prompt_evidence.jsonl"
    path.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    manifest = _manifest(out)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["artifact_sha256"]["prompt_evidence.jsonl"] = digest
    (out / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "change,said",
    [
        (
            lambda d: d[0].update(text="t" * 2001),
            "line 1, sample_id p1 /text: too long: 2,001 characters, at most 2,000",
        ),
        (
            lambda d: d[0].update(checklist=["c" * 301]),
            "line 1, sample_id p1 /checklist/0: too long: 301 characters, at most 300",
        ),
        (
            lambda d: d[0]["models"]["a"].update(rubric={"r" * 65: 1}),
            "line 1, sample_id p1, model a /models/a/rubric: a key too long: 65 characters, at "
            "most 64",
        ),
        (lambda d: d[0].update(checklist=["c"] * 65), "/checklist: too long: 65 items, at most 64"),
    ],
)
def test_the_gate_says_too_long_with_the_limit(tmp_path, change, said):
    out = run_data(
        load_config(_release(tmp_path, [prompt("p1", user_prompt="short")])),
        tmp_path / "d",
        progress=False,
    ).out_dir
    _edit_evidence(out, change)
    check = validate_folder(out).checks["evidence"]
    assert not check["passed"] and said in check["failures"][0]["message"], check


# ---- the metadata read once, hashed as read ------------------------------------------------


def _two(root: Path, text: str = "Old text", order=(0, 1)) -> Path:
    prompts = [prompt("p1", user_prompt=text, checklist=["old item"]), prompt("p2", prompt="Two")]
    return _release(root, [prompts[i] for i in order])


@pytest.mark.parametrize("replacement", ["new", "truncated", "deep"])
def test_the_metadata_replaced_during_a_run_changes_nothing_published(
    tmp_path, monkeypatch, replacement
):
    """The metadata is read once: replacing it (``mv``) once the results are being read
    publishes the texts, scores and hash of what was read, whatever the new file holds."""
    cfg = load_config(_two(tmp_path / "src"))
    dataset = cfg.dataset_path
    first = dataset.read_bytes()
    new = {
        "new": first.replace(b"Old text", b"New text").replace(b"old item", b"new item"),
        "truncated": first[:40],
        "deep": DEEP.encode() + b"\n",
    }[replacement]
    real = pipeline.extract_records

    def replaced_then_extract(*args, **kwargs):
        (tmp_path / "next.jsonl").write_bytes(new)
        os.replace(tmp_path / "next.jsonl", dataset)  # as mv does
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "extract_records", replaced_then_extract)
    out = run_data(cfg, tmp_path / "d", progress=False).out_dir
    assert dataset.read_bytes() == new
    p1, p2 = _lines(out)
    assert (p1["text"], p1["checklist"], p2["text"]) == ("Old text", ["old item"], "Two")
    monkeypatch.undo()
    (tmp_path / "again").mkdir()
    again = tmp_path / "again" / "prompts.jsonl"
    again.write_bytes(first)
    cfg2 = load_config(_two(tmp_path / "again"))
    again_out = run_data(cfg2, tmp_path / "d2", progress=False).out_dir
    assert _manifest(out)["dataset"] == _manifest(again_out)["dataset"]


def test_the_dataset_hash_covers_every_field_read_but_not_line_order(tmp_path):
    def dataset(name: str, **kwargs) -> dict:
        out = run_data(
            load_config(_two(tmp_path / name, **kwargs)), tmp_path / f"{name}-out", progress=False
        ).out_dir
        return _manifest(out)["dataset"]

    base, reordered = dataset("base"), dataset("reordered", order=(1, 0))
    other = dataset("other", text="Other text")
    assert base == reordered
    assert other["sha256"] != base["sha256"] and other["texts_sha256"] != base["texts_sha256"]
    lines = [json.loads(line) for line in (tmp_path / "base" / "prompts.jsonl").open()]
    canonical = sorted(json.dumps(row, sort_keys=True, ensure_ascii=False) for row in lines)
    want = hashlib.sha256("".join(f"{c}\n" for c in canonical).encode()).hexdigest()
    assert base["sha256"] == want


@pytest.mark.parametrize(
    "where,said",
    [
        ("config", "release.yml: not a valid release config YAML: nested too deeply"),
        ("paper_table", "paper_table paper.json is not valid JSON: nested too deeply"),
        ("dataset", "metadata prompts.jsonl line 3: not valid JSON (nested too deeply)"),
    ],
)
def test_an_input_nested_too_deeply_is_refused_by_name(tmp_path, where, said):
    path = _two(tmp_path)
    if where == "config":
        path.write_text(path.read_text() + f"extra: {DEEP}\n")
    elif where == "paper_table":
        (tmp_path / "paper.json").write_text('{"a": ' + DEEP + "}")
        path.write_text(path.read_text() + "paper_table: paper.json\n")
    else:
        with (tmp_path / "prompts.jsonl").open("a") as fh:
            fh.write('{"sample_id": "p3", "user_prompt": ' + DEEP + "}\n")
    before = _tree(tmp_path)
    proc = _cli("data", path, "--out", tmp_path / "out")
    assert proc.returncode == 1 and said in proc.stderr and "Error" not in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and not (tmp_path / "out").exists()
    assert _tree(tmp_path) == before


def test_an_evidence_line_nested_too_deeply_fails_by_line(tmp_path):
    out = run_data(load_config(_two(tmp_path)), tmp_path / "d", progress=False).out_dir
    lines = (out / "prompt_evidence.jsonl").read_text().splitlines()
    (out / "prompt_evidence.jsonl").write_text(lines[0] + "\n" + DEEP + "\n")
    said = validate_folder(out).checks["evidence"]["failures"][0]["message"]
    assert said == "prompt_evidence.jsonl line 2: not strict JSON: nested too deeply"


# ---- the gate covers the texts and the report ----------------------------------------------


def test_validate_refuses_a_hand_edited_text_rehashed_in_the_manifest(tmp_path):
    out = run_data(load_config(_two(tmp_path)), tmp_path / "d", progress=False).out_dir
    _edit_evidence(out, lambda d: d[0].update(text="Edited by hand"))
    before = _tree(out)
    proc = _cli("validate", out)
    assert proc.returncode == 1, proc.stderr
    assert (
        "prompt_evidence.jsonl: its prompt texts and checklists are not the ones the metadata"
        " gave (their sha256 differs from manifest.json /dataset/texts_sha256)"
    ) in proc.stderr
    assert "check evidence failed (1 problem(s))" in proc.stderr and _tree(out) == before


@pytest.mark.parametrize("edit", ["passed", "check"])
def test_validate_refuses_a_report_that_did_not_pass(tmp_path, edit):
    out = run_data(load_config(_two(tmp_path)), tmp_path / "d", progress=False).out_dir
    path = out / "validation_report.json"
    report = json.loads(path.read_text())
    if edit == "passed":
        report["passed"] = False
    else:
        report["checks"][1].update(passed=False, n_failures=1, failures=[{"message": "x"}])
    path.write_text(json.dumps(report))
    proc = _cli("validate", out)
    failed = "expected_counts" if edit == "check" else "none named"
    assert proc.returncode == 1, proc.stderr
    assert (
        f"validation_report.json says the release did not pass (passed: "
        f"{'False' if edit == 'passed' else 'True'}; failed checks: {failed}); a published "
        "release passed every check"
    ) in proc.stderr
    assert json.loads(path.read_text()) == report


def test_a_folder_without_a_report_is_still_checked(tmp_path):
    out = run_data(load_config(_two(tmp_path)), tmp_path / "d", progress=False).out_dir
    (out / "validation_report.json").unlink()
    assert validate_folder(out).passed


def test_the_gate_rewrites_a_staged_report_that_did_not_pass(tmp_path):
    """A notebook run again on its staging folder: the gate's own report of the run before is
    not a reason to fail."""
    cfg, staging = load_config(_two(tmp_path)), tmp_path / "staging"
    pipeline.extract_stage(cfg, staging, progress=False)
    pipeline.aggregate_stage(cfg, staging)
    pipeline.gate(cfg, staging)
    path = staging / "validation_report.json"
    report = json.loads(path.read_text())
    report["passed"] = False
    report["checks"][1].update(passed=False, n_failures=1, failures=[{"message": "before"}])
    path.write_text(json.dumps(report))
    assert pipeline.gate(cfg, staging).passed
    assert json.loads((staging / "validation_report.json").read_text())["passed"] is True
