"""The demo release through the data command: published v1.0 format key by key, the
coverage lock, byte-identical reruns under shuffled input, hash seed and cwd.

Every test here reads the session's demo (``conftest.demo_tree``) and its data release
(``conftest.demo_data``); a test that changes either works on a copy.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import TEST_EPOCH
from factory import read_artifacts
from paths import FIXTURES

from searchgen_nb.config import load_config
from searchgen_nb.errors import ValidationFailed
from searchgen_nb.pipeline import run_data

PUBLISHED = FIXTURES / "published" / "v1.0"
ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # every test reads the full demo


@pytest.fixture(scope="module")
def demo(demo_tree, demo_data):
    """``demo.src``: the demo's inputs; ``demo.out``: its published artifacts (both read only)."""
    return SimpleNamespace(src=demo_tree.path, out=demo_data)


def _walk(ref, ours, path, problems):
    """Every key of ``ref`` must exist in ``ours`` with a value of the same JSON type."""

    def jtype(v):
        return (
            "number"
            if isinstance(v, (int, float)) and not isinstance(v, bool)
            else type(v).__name__
        )

    if ref is None:
        return  # published null: any type is acceptable (e.g. source_commit)
    if jtype(ref) != jtype(ours):
        problems.append(f"{path}: published {jtype(ref)}, ours {jtype(ours)}")
        return
    if isinstance(ref, dict):
        for k, v in ref.items():
            if k not in ours:
                problems.append(f"{path}.{k}: missing")
            else:
                _walk(v, ours[k], f"{path}.{k}", problems)
    elif isinstance(ref, list) and ref and ours:
        for i, item in enumerate(ref[:3]):
            _walk(item, ours[min(i, len(ours) - 1)], f"{path}[{i}]", problems)


@pytest.mark.parametrize(
    "name",
    [
        "manifest.json",
        "leaderboard_overall.json",
        "leaderboard_by_stratum.json",
        "leaderboard_by_domain.json",
        "leaderboard_by_failure_mode.json",
    ],
)
def test_published_v1_0_keys_and_types(demo, name):
    ref = json.loads((PUBLISHED / name).read_text())
    ours = json.loads((demo.out / name).read_text())
    problems: list[str] = []
    if name == "manifest.json":
        ref = {k: v for k, v in ref.items() if k != "models"}
        ref_model = next(iter(json.loads((PUBLISHED / name).read_text())["models"].values()))
        for m, spec in ours["models"].items():
            _walk(ref_model, spec, f"models.{m}", problems)
    elif isinstance(ref, dict):
        assert set(ref) <= set(ours) or name != "leaderboard_by_stratum.json"
        # group keys: strata are the same names; tags are the taxonomy codes
        assert sorted(ref) == sorted(ours), (sorted(ref), sorted(ours))
    _walk(ref, ours, name, problems)
    assert problems == []


def test_demo_sizes_and_statuses(demo):
    m = json.loads((demo.out / "manifest.json").read_text())
    assert m["data_origin"] == "synthetic-demo"
    assert m["dataset"]["n_prompts"] == 751
    assert m["partition"] == {
        "NoSearch": 100,
        "SearchIntensive": 651,
        "TextualSearch": 264,
        "VisualSearch": 387,
    }
    totals = {
        s: sum(c[s] for c in m["extraction"]["status_counts"].values())
        for s in ("scored", "invalid_evaluation", "missing_evaluation", "missing_generation")
    }
    assert all(v > 0 for v in totals.values()), totals
    board = json.loads((demo.out / "leaderboard_overall.json").read_text())
    assert len(board) == 13
    assert sorted(r["missing_policy"] for r in board).count("exclude") == 2
    assert [r["rank"] for r in board if r["ranked"]] == list(
        range(1, sum(r["ranked"] for r in board) + 1)
    )
    report = json.loads((demo.out / "validation_report.json").read_text())
    skipped = {c["name"]: c["skipped"] for c in report["checks"] if c["skipped"]}
    assert report["passed"] and skipped == {
        "lost_results": "no previous_release configured"
    }  # paper table and lock applied


def test_deleting_one_scored_result_fails_and_names_it(demo, tmp_path):
    src = tmp_path / "src"
    out = tmp_path / "public" / "data"
    shutil.copytree(demo.out, out)
    before = read_artifacts(out)
    rec = next(json.loads(s) for s in (demo.out / "prompt_scores.jsonl").read_text().splitlines())
    model_id, entry = next(
        (m, e) for m, e in sorted(rec["models"].items()) if e["status"] == "scored"
    )
    _copy_without(demo.src, src, demo.src / "results" / entry["result_file"])
    assert (
        not (src / "results" / entry["result_file"]).exists()
        and (demo.src / "results" / entry["result_file"]).exists()
    )
    # intervals off: the coverage lock does not depend on them, and the run gets to it sooner
    with open(src / "release.yml", "a", encoding="utf-8") as cfg:
        cfg.write("uncertainty:\n  n_bootstrap: 0\n")
    with pytest.raises(ValidationFailed) as info:
        run_data(load_config(src / "release.yml"), out, progress=False)
    msg = str(info.value)
    assert "check coverage_lock failed" in msg
    assert f"model {model_id} has" in msg and rec["sample_id"] in msg
    assert read_artifacts(out) == before


def _without_one_result(demo, tmp_path, model_id: str, sample_id: str, *config: str):
    """The demo's sources in ``tmp/src`` without one pair's result file (its image stays), the
    config given ``config`` lines (intervals off: no check here depends on them); returns the
    pair's ``result_file`` and the published copy of the demo ``tmp/public/data``."""
    rec = next(
        r
        for r in map(json.loads, (demo.out / "prompt_scores.jsonl").open())
        if r["sample_id"] == sample_id
    )
    entry = rec["models"][model_id]
    assert entry["status"] == "scored"
    _copy_without(demo.src, tmp_path / "src", demo.src / "results" / entry["result_file"])
    with open(tmp_path / "src" / "release.yml", "a", encoding="utf-8") as cfg:
        cfg.write("".join(line + "\n" for line in ("uncertainty:", "  n_bootstrap: 0", *config)))
    out = tmp_path / "public" / "data"
    shutil.copytree(demo.out, out)
    return entry["result_file"], out


def test_a_deleted_result_under_previous_release_is_named_with_its_file(demo, tmp_path):
    result_file, out = _without_one_result(
        demo, tmp_path, "quillmark_ultra", "sgb_vis_0624", f"previous_release: {demo.out}"
    )
    before = read_artifacts(out)
    with pytest.raises(ValidationFailed) as info:
        run_data(load_config(tmp_path / "src" / "release.yml"), out, progress=False)
    msg = str(info.value)
    lost = (
        f"sgb_vis_0624 missing_evaluation, no result file (the image is there)"
        f" (results_root/{result_file})"
    )
    assert (
        "check lost_results failed (1 problem(s)):\n  - model quillmark_ultra: 1 result(s)"
        " the previous release scored are not scored now (not acknowledged in"
        f" expected.lost_results): {lost} [model_id quillmark_ultra]"
    ) in msg, msg
    assert f"not scored (31): {lost}; missing_evaluation " in msg  # the lock: the culprit first
    assert read_artifacts(out) == before


def test_the_lock_alone_names_the_deleted_result(demo, tmp_path):
    _, out = _without_one_result(demo, tmp_path, "quillmark_ultra", "sgb_vis_0624")
    with pytest.raises(ValidationFailed) as info:
        run_data(load_config(tmp_path / "src" / "release.yml"), out, progress=False)
    line = next(x for x in str(info.value).splitlines() if "model quillmark_ultra has" in x)
    assert "not scored (31): missing_evaluation sgb_" in line and "sgb_vis_0624" in line, line


def test_a_deleted_result_without_any_guard_publishes_with_the_warning(demo, tmp_path):
    _, out = _without_one_result(demo, tmp_path, "quillmark_ultra", "sgb_vis_0624")
    cfg = tmp_path / "src" / "release.yml"
    text = cfg.read_text(encoding="utf-8")
    text = text[: text.index("  n_scored:")] + text[text.index("uncertainty:") :]
    cfg.write_text(text.replace("paper_table: paper_table.json\n", ""))  # it would catch it too
    report = run_data(load_config(cfg), out, progress=False).report
    assert report.passed and [w["name"] for w in report.warnings] == ["unguarded_results"]
    assert report.warnings[0]["message"].startswith("nothing guarded this release against")
    saved = json.loads((out / "validation_report.json").read_text())
    assert saved["warnings"] == report.warnings


def _copy_without(original: Path, copy: Path, removed: Path) -> None:
    """``copy``: the tree ``original`` without the file ``removed``. The folders on the way to it
    are real and hold copies of their files (a config is read where it really is); every other
    folder is a symbolic link into ``original``, which stays intact."""
    copy.mkdir()
    for part in removed.relative_to(original).parts:
        for entry in original.iterdir():
            if entry.name == part:
                continue
            if entry.is_dir():
                (copy / entry.name).symlink_to(entry)
            else:
                shutil.copy2(entry, copy / entry.name)
        original, copy = original / part, copy / part
        if original.is_dir():
            copy.mkdir()


def _shuffle_lines(path: Path, seed: int) -> None:
    lines = path.read_text().splitlines()
    random.Random(seed).shuffle(lines)
    path.write_text("\n".join(lines) + "\n")


def test_byte_identical_under_shuffle_hashseed_and_cwd(demo, tmp_path):
    """Same inputs → same bytes, whatever line order, PYTHONHASHSEED, working directory or
    path: ``searchgen-nb data`` in another process, on the demo with its prompt lines shuffled,
    writes the very artifacts the session's release published through its notebooks."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("release.yml", "prompts.jsonl", "paper_table.json"):
        shutil.copy(demo.src / name, src / name)
    (src / "results").symlink_to(demo.src / "results")
    _shuffle_lines(src / "prompts.jsonl", 2)
    assert (src / "prompts.jsonl").read_bytes() != (demo.src / "prompts.jsonl").read_bytes()
    env = {**os.environ, "PYTHONHASHSEED": "12345", "SOURCE_DATE_EPOCH": TEST_EPOCH}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "searchgen_nb",
            "data",
            str(src / "release.yml"),
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    out = read_artifacts(tmp_path / "out")
    assert out == {
        k: v for k, v in read_artifacts(demo.out).items() if k != "CHANGES.md"
    }  # (release's)
    assert json.loads(out["manifest.json"])["generated_at"] == "2026-05-28T20:26:40+00:00"
