"""Every input either counts exactly or is refused by name.

Kinds, each with its examples and, where it fits, a property test:
1. config decimals mean the decimal written (coverage threshold met exactly is met);
2. one result counts for one pair only (shared paths, symlinks, hard links, foreign identity);
3. duplicate keys are refused (metadata line, result file, release YAML, paper table);
4. a broken setup never succeeds in silence (results_root missing or empty, a model without
   any result file, a notebook without its release);
5. hostile JSON / text never reaches an unhandled exception (surrogates, NUL, NaN, deep
   nesting, huge integers, non-UTF-8, alias bombs, bad SOURCE_DATE_EPOCH);
6. published folders get the ordinary file modes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from factory import CANONICAL, make_release, model, prompt, read_artifacts, result, row, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

import searchgen_nb.aggregate as aggregate
from searchgen_nb.config import exact_decimal, load_config
from searchgen_nb.errors import ConfigError, MetadataError, ResultIdentityError, ValidationFailed
from searchgen_nb.pipeline import run_data

ROOT = Path(__file__).resolve().parents[1]


def _threshold_release(tmp_path, k: int, n: int, threshold: str):
    prompts = [prompt(f"p{i:03d}") for i in range(n)]
    results = {("m", f"p{i:03d}"): result({"checklist:0": 2}) for i in range(k)}
    results[("full", "p000")] = result({"checklist:0": 1})
    results.update({("full", f"p{i:03d}"): result({"checklist:0": 1}) for i in range(n)})
    cfg = make_release(tmp_path, prompts, {"m": model("M"), "full": model("Full")}, results)
    text = cfg.read_text() + f"scoring:\n  min_ranking_coverage: {threshold}\n"
    cfg.write_text(text)
    return cfg


# ---- 1. numbers mean what the user wrote -----------------------------------------------


@pytest.mark.parametrize(
    "k, n, threshold",
    [(9, 10, "0.9"), (32, 40, "0.8"), (7, 10, "0.7"), (3, 10, "0.3"), (6, 10, "0.6")],
)
def test_threshold_met_exactly_is_ranked(tmp_path, k, n, threshold):
    cfg = _threshold_release(tmp_path, k, n, threshold)
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    overall = json.loads((tmp_path / "out" / "leaderboard_overall.json").read_text())
    assert row(overall, "m")["n_scored"] == k
    assert row(overall, "m")["ranked"] is True
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["scoring"]["min_ranking_coverage"] == float(threshold)


def test_threshold_one_short_is_not_ranked(tmp_path):
    cfg = _threshold_release(tmp_path, 8, 10, "0.9")
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    overall = json.loads((tmp_path / "out" / "leaderboard_overall.json").read_text())
    assert row(overall, "m")["ranked"] is False and row(overall, "m")["rank"] is None


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 2000), data=st.data(), digits=st.integers(1, 4))
def test_property_threshold_compares_the_written_decimal(n, data, digits):
    """For every k/n and every decimal t with up to 4 digits: ranked ⇔ k/n ≥ t exactly."""
    k = data.draw(st.integers(0, n))
    t_units = data.draw(st.integers(0, 10**digits))
    text = str(Decimal(t_units).scaleb(-digits))
    t = exact_decimal(Decimal(text))
    assert t == Decimal(text)
    r = {"n_scored": k, "n_total": n}
    assert aggregate._covered(r, t) is (Fraction(k, n) >= Fraction(text))
    # a float given by a Python caller means the decimal it prints, not its binary value
    assert aggregate._covered(r, float(text)) is (Fraction(k, n) >= Fraction(text))


def test_yaml_floats_are_read_as_decimals(tmp_path):
    cfg = _threshold_release(tmp_path, 1, 1, "0.9")
    assert load_config(cfg).scoring.min_ranking_coverage == Decimal("0.9")


@pytest.mark.parametrize(
    "value, message",
    [
        (".nan", "finite"),
        ("1.5", "between 0 and 1"),
        ("0.1234567890123456", "15 significant digits"),
        ('"0.9"', "must be a number"),
    ],
)
def test_threshold_values_refused_by_name(tmp_path, value, message):
    cfg = _threshold_release(tmp_path, 1, 1, value)
    with pytest.raises(ConfigError, match=rf"`scoring.min_ranking_coverage`: .*{message}"):
        load_config(cfg)


def test_gate_catches_an_aggregation_comparing_the_binary_float(tmp_path, monkeypatch):
    """Mutant of item 1: the aggregation compares through the binary double again."""
    cfg = _threshold_release(tmp_path, 9, 10, "0.9")
    monkeypatch.setattr(
        aggregate,
        "_covered",
        lambda r, t: (
            r["n_total"] > 0 and Fraction(r["n_scored"], r["n_total"]) >= Fraction(float(t))
        ),
    )
    with pytest.raises(ValidationFailed, match=r"check aggregates failed") as info:
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    assert "ranked is false, recomputed true" in str(info.value) and "model_id m" in str(info.value)
    assert not (tmp_path / "out").exists()


# ---- 2. one result, one pair -------------------------------------------------------------


def _result_file(root: Path, sample_id: str, source_id: str) -> Path:
    """Where :func:`factory.make_release` writes a pair's result (canonical layout, lane none)."""
    return (
        root
        / "results"
        / CANONICAL.format(
            release_row=f"rows/{sample_id}", lane="none", source_id=source_id, sample_id=sample_id
        )
    )


def _two_model_release(tmp_path, **extra_models):
    prompts = [prompt("p1"), prompt("p2")]
    models = {"a": model("A"), "b": model("B"), **extra_models}
    results = {
        (m, p["sample_id"]): result(
            {"checklist:0": 1 if m == "a" else 3},
            sample_id=p["sample_id"],
            generator_name=models[m]["source_id"],
        )
        for m in ("a", "b")
        for p in prompts
    }
    return make_release(tmp_path, prompts, models, results)


def test_symlink_to_another_models_result_is_refused(tmp_path):
    cfg = _two_model_release(tmp_path)
    b_file = _result_file(tmp_path, "p1", "b")
    a_file = _result_file(tmp_path, "p1", "a")
    b_file.unlink()
    b_file.symlink_to(a_file)
    with pytest.raises(ResultIdentityError) as info:
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    msg = str(info.value)
    assert "sample_id p1, model b" in msg and "same file as rows/p1/none/a/" in msg
    assert not (tmp_path / "out").exists()


def test_hard_link_shared_by_two_pairs_is_refused(tmp_path):
    cfg = _two_model_release(tmp_path)
    target = _result_file(tmp_path, "p2", "a")
    target.unlink()
    os.link(_result_file(tmp_path, "p1", "a"), target)
    with pytest.raises(ResultIdentityError, match=r"sample_id p1, model a"):
        run_data(load_config(cfg), tmp_path / "out", progress=False)


def test_result_naming_another_sample_or_generator_is_refused(tmp_path):
    cfg = _two_model_release(tmp_path)
    f = _result_file(tmp_path, "p2", "b")
    f.write_text(json.dumps(result({"checklist:0": 3}, sample_id="p2", generator_name="a")))
    with pytest.raises(
        ResultIdentityError,
        match=r"sample_id p2, model b\): the file's generator_name is 'a', not this model's \(b\)",
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    f.write_text(json.dumps(result({"checklist:0": 3}, sample_id="p1", generator_name="b")))
    with pytest.raises(
        ResultIdentityError,
        match=r"sample_id p2, model b\): the file's sample_id is 'p1', not this prompt's",
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)


def test_configured_generator_name_is_accepted(tmp_path):
    cfg = _two_model_release(tmp_path)
    f = _result_file(tmp_path, "p2", "b")
    f.write_text(
        json.dumps(result({"checklist:0": 3}, sample_id="p2", generator_name="B-judge-name"))
    )
    data = yaml.safe_load(cfg.read_text())
    data["models"]["b"]["generator_name"] = "B-judge-name"
    cfg.write_text(yaml.safe_dump(data))
    run_data(load_config(cfg), tmp_path / "out", progress=False)


def test_two_models_with_one_source_id_are_refused(tmp_path):
    cfg = _two_model_release(tmp_path, c=model("C", source_id="a"))
    with pytest.raises(
        ConfigError,
        match=r"two prompt × model pairs would read one result file.*sample_id p1 / model a and "
        r"of sample_id p1 / model c",
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)


def test_two_prompts_with_one_release_row_are_refused(tmp_path):
    prompts = [prompt("p1"), {**prompt("p2"), "release_row": "rows/p1"}]
    cfg = make_release(
        tmp_path, prompts, {"a": model("A")}, {("a", "p1"): result({"checklist:0": 1})}
    )
    with pytest.raises(
        ConfigError,
        match=r"rows/p1/none/a/augmented_parsed_result_ffjudge_pp.json is the result file of "
        r"sample_id p1 / model a and of sample_id p2 / model a",
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)


def test_validator_catches_a_record_pointing_at_another_pairs_file(tmp_path, monkeypatch):
    """Mutant of item 2: extraction records another model's file for a pair."""
    from searchgen_nb.table import ReleaseTable

    cfg = _two_model_release(tmp_path)
    original = ReleaseTable.entry

    def wrong(self, k, p):
        entry = original(self, k, p)
        if entry["source_id"] == "b":
            entry["result_file"] = entry["result_file"].replace("/b/", "/a/")
        return entry

    monkeypatch.setattr(ReleaseTable, "entry", wrong)
    with pytest.raises(ValidationFailed, match=r"check unique_records failed") as info:
        run_data(
            load_config(cfg),
            tmp_path / "out",
            progress=False,
        )
    assert "the pair's own path is rows/p1/none/b/" in str(info.value)


# ---- 3. duplicate keys -----------------------------------------------------------------


def test_duplicate_key_in_metadata_line_is_refused(tmp_path):
    line = '{"sample_id": "p2", "release_row": "rows/p2", "domains": ["ART"], "domains": ["HIS"]}'
    cfg = make_release(
        tmp_path,
        [prompt("p1")],
        {"a": model("A")},
        {("a", "p1"): result({"checklist:0": 1})},
        prompt_lines=[json.dumps(prompt("p1")), line],
    )
    with pytest.raises(
        MetadataError,
        match=r"metadata prompts.jsonl line 2: not valid JSON \(duplicate key 'domains'",
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)


def test_duplicate_score_key_in_result_is_invalid_not_last_wins(tmp_path):
    text = '{"success": true, "scores": {"checklist:0": 99, "checklist:0": 2.0}}'
    cfg = make_release(
        tmp_path,
        [prompt("p1"), prompt("p2")],
        {"a": model("A")},
        {("a", "p1"): text, ("a", "p2"): result({"checklist:0": 1})},
    )
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    rec = json.loads((tmp_path / "out" / "prompt_scores.jsonl").read_text().splitlines()[0])[
        "models"
    ]["a"]
    assert rec["status"] == "invalid_evaluation"
    assert rec["error"] == "not valid JSON: duplicate key 'checklist:0' in one JSON object"


@pytest.mark.parametrize(
    "yaml_text, message",
    [
        (
            "models:\n  a: {display_name: A, type: Open, source_id: a}\n  a: {display_name: A2, "
            "type: Commercial, source_id: a2}\n",
            r"duplicate key a \(first on line 4\)",
        ),
        ("benchmark: X\nbenchmark: Y\n", r"duplicate key benchmark \(first on line 3\)"),
    ],
)
def test_duplicate_key_in_release_yaml_is_refused(tmp_path, yaml_text, message):
    (tmp_path / "r.yml").write_text("dataset: p.jsonl\nresults_root: r\n" + yaml_text)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path / "r.yml")


def test_duplicate_and_nan_in_paper_table_are_refused(tmp_path):
    cfg = _two_model_release(tmp_path)
    text = cfg.read_text() + "paper_table: paper.json\n"
    cfg.write_text(text)
    (tmp_path / "paper.json").write_text('{"a": 33.3, "a": 40.0, "b": 100}')
    with pytest.raises(
        ConfigError, match=r"paper_table paper.json is not valid JSON: duplicate key 'a'"
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    (tmp_path / "paper.json").write_text('{"a": NaN, "b": 100}')
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert (
        r.returncode == 1
        and "paper_table paper.json is not valid JSON: non-standard JSON constant NaN" in r.stderr
    ), r.stderr


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["sample_id", "subset", "domains", "failure_modes", "language"]),
        st.just("x"),
        min_size=1,
    ),
    st.data(),
)
def test_property_any_repeated_metadata_key_is_refused(tmp_path_factory, keys, data):
    key = data.draw(st.sampled_from(sorted(keys)))
    body = ", ".join([f'"{k}": "v"' for k in keys] + [f'"{key}": "w"'])
    path = tmp_path_factory.mktemp("dup") / "prompts.jsonl"
    path.write_text("{" + body + "}\n")
    from searchgen_nb.prompts import read_prompts

    with pytest.raises(MetadataError, match=rf"line 1: not valid JSON \(duplicate key '{key}'"):
        read_prompts(path)


# ---- 4. a broken setup never succeeds in silence ------------------------------------------


def test_missing_results_root_fails_naming_it(tmp_path):
    cfg = _two_model_release(tmp_path)
    (tmp_path / "results").rename(tmp_path / "elsewhere")
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 1 and "results_root results is not a folder" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_empty_results_root_fails_naming_it(tmp_path):
    cfg = _two_model_release(tmp_path)
    import shutil

    shutil.rmtree(tmp_path / "results")
    (tmp_path / "results").mkdir()
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert (
        r.returncode == 1 and "results_root results holds no result file for any model" in r.stderr
    ), r.stderr


def test_model_without_any_result_fails_unless_pending(tmp_path):
    cfg = _two_model_release(tmp_path, c=model("C", "zero_fill"))
    with pytest.raises(
        ConfigError, match=r"no result file at all for model\(s\) c \(source_id c, lane none"
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    data = yaml.safe_load(cfg.read_text())
    data["models"]["c"]["pending"] = True
    data["scoring"] = {"min_ranking_coverage": 0}
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    overall = json.loads((tmp_path / "out" / "leaderboard_overall.json").read_text())
    c = row(overall, "c")
    # zero_fill publishes its 0.0, but a pending model is never ranked, even at threshold 0
    assert (c["overall_9"], c["ranked"], c["rank"]) == (0.0, False, None)
    assert [r["ranked"] for r in overall] == [True, True, False]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert (
        manifest["models"]["c"]["pending"] is True and manifest["models"]["a"]["pending"] is False
    )


def test_validator_catches_a_pending_model_ranked(tmp_path, monkeypatch):
    cfg = _two_model_release(tmp_path, c=model("C", "zero_fill", pending=True))
    data = yaml.safe_load(cfg.read_text())
    data["scoring"] = {"min_ranking_coverage": 0}
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    original = aggregate.rank_rows
    monkeypatch.setattr(
        aggregate, "rank_rows", lambda rows, order, t, pending=frozenset(): original(rows, order, t)
    )
    with pytest.raises(
        ValidationFailed,
        match=r"(?s)check aggregates failed.*ranked is true, recomputed false \[file "
        r"leaderboard_overall.json, group All, model_id c\]",
    ):
        run_data(load_config(cfg), tmp_path / "out", progress=False)


def test_notebook_without_release_config_stops_naming_it(tmp_path):
    demo_cfg = yaml.safe_load((ROOT / "releases" / "demo.yml").read_text())
    demo_cfg.pop("release_config")
    other = tmp_path / "other.yml"
    other.write_text(yaml.safe_dump(demo_cfg))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "papermill",
            str(ROOT / "notebooks" / "04_leaderboard.ipynb"),
            str(tmp_path / "out.ipynb"),
            "-f",
            str(other),
            "--cwd",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0
    assert "notebook parameter `release_config` is not set" in r.stderr


def test_notebook_parameters_of_another_release_are_refused():
    from searchgen_nb.book.views import open_config

    cfg = yaml.safe_load((ROOT / "releases" / "demo.yml").read_text())
    with pytest.raises(
        ConfigError,
        match=r"notebook parameter `scoring` differs from `scoring` in releases/demo.yml",
    ):
        open_config(
            "releases/demo.yml",
            given={**cfg, "scoring": {**cfg["scoring"], "min_ranking_coverage": 0.8}},
        )
    with pytest.raises(ConfigError, match=r"notebook parameter `paper_table` differs"):
        open_config("releases/demo.yml", given={**cfg, "paper_table": "other.json"})
    assert open_config("releases/demo.yml", given=cfg).benchmark == cfg["benchmark"]


# ---- 5. hostile text and JSON -------------------------------------------------------------

HOSTILE_RESULTS = {
    "surrogate_error": (
        '{"success": false, "error": "judge said \\ud835"}',
        "success is false: judge said \\ud835",
    ),
    "surrogate_key": ('{"success": true, "scores": {"checklist:0": 2, "odd\\ud835": 1}}', None),
    "deep": (
        '{"success": true, "parsed": '
        + "[" * 200_000
        + "]" * 200_000
        + ', "scores": {"checklist:0": 1}}',
        "not valid JSON: nested too deeply",
    ),
    "huge_int": (
        '{"success": true, "scores": {"checklist:0": ' + "9" * 5001 + "}}",
        "not valid JSON: Exceeds the limit (4300 digits)",
    ),
    "latin1": (
        b'{"success": true, "error": "\xff", "scores": {}}',
        "not valid JSON: 'utf-8' codec can't decode byte 0xff",
    ),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_RESULTS))
def test_hostile_result_file_is_one_invalid_pair_not_a_crash(tmp_path, kind):
    text, reason = HOSTILE_RESULTS[kind]
    cfg = make_release(
        tmp_path,
        [prompt("p1"), prompt("p2")],
        {"a": model("A")},
        {("a", "p2"): result({"checklist:0": 1})},
    )
    f = _result_file(tmp_path, "p1", "a")
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    recs = [
        json.loads(line)
        for line in (tmp_path / "out" / "prompt_scores.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    entry = recs[0]["models"]["a"]
    if reason is None:  # the odd key is reported, the score counted
        assert entry["status"] == "scored"
        warnings = json.loads((tmp_path / "out" / "manifest.json").read_text())["extraction"][
            "warnings"
        ]
        assert warnings[0]["message"] == "score key(s) with no component ignored: odd\\ud835"
    else:
        assert entry["status"] == "invalid_evaluation"
        assert entry["error"].startswith(reason), entry["error"]


@pytest.mark.parametrize(
    "line, message",
    [
        (
            '{"sample_id": "p2", "language": "\\ud835"}',
            r"line 2 \(sample_id 'p2'\): language holds a lone surrogate",
        ),
        (
            '{"sample_id": "p2", "difficulty": NaN}',
            r"line 2: not valid JSON \(non-standard JSON constant NaN\)",
        ),
        (
            '{"sample_id": "p2", "difficulty": 1e999}',
            r"line 2: not valid JSON \(number 1e999 is out of range \(it would read as Inf",
        ),
        (
            '{"sample_id": "p\\u00002"}',
            r"line 2 \(sample_id 'p\\x002'\): sample_id holds a control",
        ),
        (
            '{"sample_id": "p2", "difficulty": ' + "1" * 5001 + "}",
            r"line 2: not valid JSON \(Exceeds the limit",
        ),
        (
            '{"sample_id": "p2", "difficulty": ' + "[" * 200_000 + "]" * 200_000 + "}",
            r"line 2: not valid JSON \(nested too deeply\)",
        ),
        (
            '{"sample_id": "p2", "release_row": "rows/\\u0007"}',
            r"line 2 \(sample_id 'p2'\): release_row holds a control",
        ),
    ],
)
def test_hostile_metadata_line_names_the_line(tmp_path, line, message):
    cfg = make_release(
        tmp_path,
        [prompt("p1")],
        {"a": model("A")},
        {("a", "p1"): result({"checklist:0": 1})},
        prompt_lines=[json.dumps(prompt("p1")), line],
    )
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 1, r.stderr
    import re

    assert re.search(message, r.stderr), r.stderr
    assert "internal error" not in r.stderr


@pytest.mark.parametrize(
    "content, message",
    [
        (b'benchmark: "\xff"\n', r"line 1: not UTF-8 text \(byte 0xff at offset 12\)"),
        (
            b'benchmark: "a\\0b"\ndataset: p\nresults_root: r\nmodels: {}\n',
            r"`benchmark`: a\\x00b holds a control character \(U\+0000\)",
        ),
        (b'benchmark: "\\ud835"\n', r"(lone surrogate|not a valid release config YAML)"),
        (b'result_path: "{sample_id:>999999999}"\n', r"field \{sample_id\} takes no format spec"),
    ],
)
def test_hostile_config_is_refused_by_name(tmp_path, content, message):
    path = tmp_path / "r.yml"
    path.write_bytes(content)
    r = run_cli("data", str(path), "--out", str(tmp_path / "out"))
    assert r.returncode == 1, r.stderr
    import re

    assert re.search(message, r.stderr), r.stderr


def test_yaml_alias_bomb_is_refused_quickly_with_a_short_message(tmp_path):
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    path = tmp_path / "bomb.yml"
    path.write_text("\n".join(lines) + "\n")
    r = run_cli("data", str(path), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    assert "anchors and aliases (& and *) are not allowed in a release config" in r.stderr
    assert len(r.stderr) < 1000


@pytest.mark.parametrize("value", ["yesterday", "-5", "1e9", "99999999999999999999"])
def test_bad_source_date_epoch_is_named(tmp_path, value):
    cfg = _two_model_release(tmp_path)
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"), env={"SOURCE_DATE_EPOCH": value})
    assert r.returncode == 1, r.stderr
    assert f"SOURCE_DATE_EPOCH={value} is not a Unix timestamp" in r.stderr


# ---- 6. modes -------------------------------------------------------------------------------


def test_published_data_folder_has_the_ordinary_mode(tmp_path):
    cfg = _two_model_release(tmp_path)
    old = os.umask(0o022)
    try:
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    finally:
        os.umask(old)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "out" / "manifest.json").stat().st_mode & 0o777 == 0o644
    assert read_artifacts(tmp_path / "out")  # readable
