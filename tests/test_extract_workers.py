"""The result files read on worker processes: the same release as in one process, and a worker
that dies is a named failure with nothing published."""

from __future__ import annotations

import json

import pytest
from factory import IMAGE, make_release, model, prompt, read_artifacts, result

from searchgen_nb import records
from searchgen_nb.config import load_config
from searchgen_nb.errors import ReleaseError
from searchgen_nb.files import image_name
from searchgen_nb.pipeline import run_data

MODELS = {"m_a": model("Model A"), "m_b": model("Model B"), "m_c": model("Model C")}


def _judged(score: float) -> dict:
    parsed = {
        "checklist_scores": [{"item": "a cat", "score": score, "reason": "seen"}],
        "rubric_scores": {"style": {"score": 2, "reason": "fine"}},
    }
    return result({"checklist:0": score, "rubric:style": 2, "odd": 1}, parsed=parsed)


def _pair(n: int, k: int) -> object:
    """Every kind of pair, changing with the prompt and the model."""
    kinds = (
        _judged(n % 4),
        result({"checklist:0": 1.5}, parsed={"checklist_scores": [{"item": "x", "score": 3}]}),
        '{"success": true, "scores": {"checklist:0": 1, "checklist:0": 2}}',
        "not json",
        IMAGE,
        None,
        result({"checklist:0": 9}),
    )
    return kinds[(n + 2 * k) % len(kinds)]


@pytest.fixture()
def release(tmp_path):
    prompts = [prompt(f"p{n:03d}") for n in range(40)]
    results = {
        (m, p["sample_id"]): v
        for n, p in enumerate(prompts)
        for k, m in enumerate(MODELS)
        if (v := _pair(n, k)) is not None
    }
    return make_release(tmp_path / "rel", prompts, MODELS, results)


def _run(cfg, out, monkeypatch, chunk: tuple[int, int]) -> dict[str, bytes]:
    monkeypatch.setattr(records, "CHUNK_MIN", chunk[0])
    monkeypatch.setattr(records, "CHUNK_MAX", chunk[1])
    run_data(load_config(cfg), out, progress=False)
    return read_artifacts(out)


def test_workers_write_what_one_process_writes(release, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.setattr(records, "cores", lambda: 2)
    pools, real = [], records.fork_map

    def counted(fn, items, *rest, **kw):
        pools.append(items)
        return real(fn, items, *rest, **kw)

    monkeypatch.setattr(records, "fork_map", counted)
    alone = _run(release, tmp_path / "alone", monkeypatch, (10**9, 10**9))
    assert pools == []
    spread = _run(release, tmp_path / "spread", monkeypatch, (1, 7))
    assert len(pools[0]) == 18  # 120 pairs in pieces of 7
    assert spread == alone
    lines = [json.loads(line) for line in alone["prompt_evidence.jsonl"].splitlines()]
    judged = lines[7]["models"]["m_a"]  # prompt 7, model A: judged, its image
    assert judged["checklist"] == [{"item": "a cat", "score": 3.0, "reason": "seen"}]
    assert set(judged) >= {"thumbnail", "preview", "rubric", "rubric_reasons"}
    warned = json.loads(alone["manifest.json"])["extraction"]["warnings"]
    ignored = "score key(s) with no component ignored: odd"
    assert sum(w["message"] == ignored for w in warned) == 17  # each judged pair (17 of 120)


def test_a_worker_that_dies_is_named_and_nothing_is_published(tmp_path, monkeypatch):
    prompts = [prompt(f"p{n:03d}") for n in range(8)]
    models = {"m_a": model("Model A")}
    results = {("m_a", p["sample_id"]): result({"checklist:0": 1}) for p in prompts}
    cfg = make_release(
        tmp_path / "rel", prompts, models, results, extractor="stub_extractors.seq:exits"
    )
    monkeypatch.setattr(records, "CHUNK_MIN", 2)
    monkeypatch.setattr(records, "cores", lambda: 2)
    with pytest.raises(ReleaseError) as err:
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    assert str(err.value) == (
        "extract: a worker process ended before its result files were read (killed, or out "
        "of memory?); nothing was published"
    )
    assert not (tmp_path / "out").exists()


def test_image_name_is_the_first_sorted_match_case_insensitive(tmp_path):
    for name in ("b.PNG", "a.Png", "c.txt", "0.jpg.bak"):
        (tmp_path / name).write_bytes(b"")
    assert image_name(str(tmp_path), ["*.png"]) == "a.Png"
    assert image_name(str(tmp_path), ["*.TXT", "*.png"]) == "a.Png"
    assert image_name(str(tmp_path), ["*.txt"]) == "c.txt"
    assert image_name(str(tmp_path), ["*.jpg"]) is None
    assert image_name(str(tmp_path), []) is None
    assert image_name(str(tmp_path / "absent"), ["*"]) is None
