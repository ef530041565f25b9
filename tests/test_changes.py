"""Changes between releases (data contract, § Changes between releases): ``changes.json``,
``searchgen-nb diff`` and the "What changed" page, on the demo and its second, changed release
(one model lower on five prompts of domain FAS, two NoSearch results of another model lost), and
on small hand-made pairs."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from factory import IMAGE, make_release, model, prompt, result

from searchgen_nb.changes import compare
from searchgen_nb.changes_markdown import markdown
from searchgen_nb.config import load_config
from searchgen_nb.errors import ConfigError, ReleaseError
from searchgen_nb.pipeline import run_data

LOST = ["sgb_nosearch_0017", "sgb_nosearch_0020"]
LOWERED = [
    "sgb_text_rendering_0165",
    "sgb_texthard_0050",
    "sgb_vis_0036",
    "sgb_vis_0040",
    "sgb_vis_0210",
]


def _diff(old, new, *extra):
    return subprocess.run(
        [sys.executable, "-m", "searchgen_nb", "diff", str(old), str(new), *extra],
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_diff_summary_names_every_fact_and_nothing_else(demo_data, changed_data):
    proc = _diff(demo_data, changed_data)
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.split("\n### ")[0].strip().splitlines()
    assert head[:2] == ["## What changed", ""]
    facts = head[2:]
    assert len(facts) == 6, facts
    assert facts[0].startswith(
        "- **Halcyon Draw** (`halcyon_draw`): Overall-9 changed in 21 groups; All 53.3 → 53.2 "
        "(−0.1; paired 95% interval "
    )
    assert ": domain FAS −1.8, " in facts[0]
    assert facts[1].startswith(
        "- **Pixelwright 2** (`pixelwright_2`): Overall-9 changed in 13 groups; All 68.2 → 68.0 "
        "(−0.2; paired 95% interval "
    )
    assert ": domain INF −2.6, NoSearch −1.6, " in facts[1]
    assert (
        facts[2]
        == "- Rank change in domain FAS: **Halcyon Draw** (`halcyon_draw`) 5 → 6 ↓; moved with it: "
        "**Tessellate 3** (`tessellate_3`) 6 → 5 ↑"
    )
    assert (
        facts[3]
        == "- Rank change in failure mode CS: **Halcyon Draw** (`halcyon_draw`) 6 → 7 ↓; moved "
        "with it: **Marrowleaf** (`marrowleaf`) 7 → 6 ↑"
    )
    assert (
        facts[4]
        == f"- **Pixelwright 2** (`pixelwright_2`): 2 results scored → missing evaluation (counts "
        f"0): `{LOST[0]}`, `{LOST[1]}`"
    )
    assert (
        facts[5]
        == "- **Halcyon Draw** (`halcyon_draw`): Overall-9 of 5 scored prompts changed (5 lower, 0 "
        "higher)"
    )
    # nothing about models that did not change
    for quiet in (
        "Quillmark",
        "Vistacraft",
        "Dimlight",
        "added",
        "removed",
    ):  # (Tessellate, Marrowleaf: moved in rank)
        assert quiet not in "\n".join(facts)
    tables = proc.stdout.split("\n### ")[1:]
    assert [t.splitlines()[0] for t in tables] == ["Score changes", "Prompt × model changes"]
    assert [t.splitlines()[2] for t in tables] == [  # one scale per table, named in its heads
        "| group | model | Overall-9 before (0–100) | after (0–100) | Δ (0–100) | rank before | "
        "rank after |",
        "| model | sample_id | status before | status after | raw Overall-9 before (0–3) | after "
        "(0–3) |",
    ]
    assert (
        len(
            [
                line
                for line in tables[0].splitlines()
                if line.startswith("| ") and "group" not in line
            ]
        )
        == 21 + 13
    )  # the slice of every prompt is All again: not repeated
    assert sorted(line.split("`")[1] for line in tables[1].splitlines() if "`" in line) == sorted(
        LOWERED + LOST
    )


@pytest.mark.slow
def test_changes_json_of_the_changed_demo(demo_data, changed_data):
    ch = json.loads((changed_data / "changes.json").read_text())
    first = json.loads((demo_data / "changes.json").read_text())
    assert first["first_release"] is True and first["groups"] == {} and first["previous"] is None
    assert ch["first_release"] is False and ch["previous"]["n_prompts"] == 751
    assert ch["models"] == {"added": [], "removed": [], "changed": []}
    assert ch["prompts"] == {"added": [], "removed": [], "metadata_changed": []}
    assert [(p["model_id"], p["sample_id"], p["status_after"]) for p in ch["pairs"]] == [
        *(("halcyon_draw", s, "scored") for s in LOWERED),
        *(("pixelwright_2", s, "missing_evaluation") for s in LOST),
    ]
    assert all(p["overall_9_after"] < p["overall_9_before"] for p in ch["pairs"][:5])
    assert all(p["overall_9_after"] is None for p in ch["pairs"][5:])
    fas = ch["groups"]["domain:FAS"]
    assert fas["halcyon_draw"] == {
        "overall_9_before": 61.7,
        "overall_9_after": 59.9,
        "delta": -1.8,
        "rank_before": 5,
        "rank_after": 6,
    }
    assert fas["quillmark_ultra"]["delta"] == 0.0
    changed = {
        (k, m) for k, cells in ch["groups"].items() for m, c in cells.items() if c["delta"] != 0.0
    }
    assert {m for _, m in changed} == {"halcyon_draw", "pixelwright_2"}
    pb = ch["paired_bootstrap"]
    assert (pb["n_bootstrap"], pb["seed"], pb["n_common_prompts"]) == (10_000, 0, 751)
    assert pb["models"]["quillmark_ultra"] == {
        "delta": 0.0,
        "ci": [0.0, 0.0],
    }  # unchanged: exactly 0 in every replicate
    lo, hi = pb["models"]["pixelwright_2"]["ci"]
    assert lo < 0 and hi <= 0 and pb["models"]["pixelwright_2"]["delta"] == -0.2
    # the page's table of pairs shows raw values to four decimals (changes.json keeps them exact)
    from searchgen_nb.book import pages, views, views_audit

    html = "".join(f.html for f in pages.changes(views.Release(changed_data)))
    first_pair = ch["pairs"][0]["overall_9_before"]
    assert (
        f">{first_pair!r}<" not in html and f">{first_pair:.4f}</td>" in html
    )  # (sorting keeps the exact value)
    # the page's facts: the rank swap in FAS, the two lost results (the page in a browser:
    # test_book)
    assert (
        "<li>Rank change in domain FAS: <strong>Halcyon Draw</strong> (<code>halcyon_draw</code>) "
        "5 → 6 ↓; moved with it: <strong>Tessellate 3</strong> (<code>tessellate_3</code>) 6 → 5 "
        "↑</li>"
    ) in html
    assert "scored → missing evaluation (counts 0)" in html and all(s in html for s in LOST)
    moves = views_audit.rank_moves_frame(views.Release(changed_data))
    assert [
        tuple(r)
        for r in moves[["Model", "Move", "Rank before", "Rank after"]].itertuples(index=False)
    ] == [
        ("Halcyon Draw", "↓", 5, 6),
        ("Tessellate 3", "↑", 6, 5),
        ("Halcyon Draw", "↓", 6, 7),
        ("Marrowleaf", "↑", 7, 6),
    ]


# ---- small hand-made pairs ------------------------------------------------------------------


def _release(tmp_path, name, prompts, results, **config):
    models = {"a": model("Model A"), "b": model("Model B", "exclude")}
    cfg = make_release(tmp_path / name, prompts, models, results, **config)
    out = tmp_path / f"{name}-data"
    run_data(load_config(cfg), out, progress=False)
    return cfg, out


def test_added_removed_and_retagged_prompts(tmp_path):
    p = [prompt("p1", domains=["ART"]), prompt("p2"), prompt("p3", subset="NoSearch")]
    res = {(m, s["sample_id"]): result({"checklist:0": 2}) for m in "ab" for s in p}
    _, old = _release(tmp_path, "old", p, res, uncertainty={"n_bootstrap": 50})
    p2 = [prompt("p1", domains=["HIS"]), prompt("p3", subset="NoSearch"), prompt("p4")]
    res2 = {(m, s["sample_id"]): result({"checklist:0": 2}) for m in "ab" for s in p2}
    res2[("b", "p4")] = IMAGE
    _, new = _release(
        tmp_path, "new", p2, res2, uncertainty={"n_bootstrap": 50}, previous_release="../old-data"
    )
    ch = json.loads((new / "changes.json").read_text())
    assert ch["prompts"] == {
        "added": ["p4"],
        "removed": ["p2"],
        "metadata_changed": [{"sample_id": "p1", "fields": ["domains"]}],
    }
    assert set(ch["groups"]) >= {"domain:ART", "domain:HIS"}
    assert ch["groups"]["domain:HIS"]["a"]["overall_9_before"] is None  # HIS had no prompt before
    assert ch["pairs"] == []  # p1 and p3 scored alike in both
    text = markdown(ch, {"a": "Model A"})
    assert (
        "- 1 prompt added: `p4`" in text
        and "- 1 prompt removed: `p2`" in text
        and "`p1` (domains)" in text
    )
    assert ch["paired_bootstrap"]["n_common_prompts"] == 2
    # `searchgen-nb diff --json` of the two folders: the changes.json the release published
    as_json = _diff(old, new, "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == ch


def test_models_added_and_removed(tmp_path):
    p = [prompt("p1"), prompt("p2")]
    old_cfg = make_release(
        tmp_path / "old",
        p,
        {"a": model("Model A"), "gone": model("Gone")},
        {(m, s["sample_id"]): result({"checklist:0": 1}) for m in ("a", "gone") for s in p},
    )
    run_data(load_config(old_cfg), tmp_path / "old-data", progress=False)
    new_cfg = make_release(
        tmp_path / "new",
        p,
        {"a": model("Model A"), "fresh": model("Fresh")},
        {(m, s["sample_id"]): result({"checklist:0": 3}) for m in ("a", "fresh") for s in p},
    )
    run_data(load_config(new_cfg), tmp_path / "new-data", progress=False)
    ch = compare(tmp_path / "old-data", tmp_path / "new-data")
    assert ch["models"] == {"added": ["fresh"], "removed": ["gone"], "changed": []}
    assert set(ch["groups"]["all:All"]) == {"a"}  # only models of both releases
    assert ch["groups"]["all:All"]["a"]["delta"] == 66.7  # 33.3 → 100.0
    text = markdown(ch, {"fresh": "Fresh"})
    assert "- Models added: **Fresh** (`fresh`)" in text and "- Models removed: `gone`" in text


def test_paired_interval_equals_the_literal_contract(tmp_path):
    """The paired bootstrap of a change: §8's draws over the common prompts, new − old of the
    same multiset, each under its own policy; checked against plain fractions."""
    p = [prompt(f"p{i}", subset="NoSearch" if i % 3 == 0 else "SearchIntensive") for i in range(9)]
    old_res = {
        (m, s["sample_id"]): result({"checklist:0": (i * 7 + len(m)) % 4})
        for m in "ab"
        for i, s in enumerate(p)
    }
    new_res = dict(old_res)
    new_res[("a", "p1")] = result({"checklist:0": 0})
    new_res[("b", "p4")] = IMAGE  # b excludes missing: the change is on fewer prompts
    new_res[("a", "p5")] = IMAGE  # a zero-fills it
    _, old = _release(tmp_path, "old", p, old_res, uncertainty={"n_bootstrap": 40, "seed": 5})
    lost = {"a": ["p5"], "b": ["p4"]}  # acknowledged: the release would stop on them otherwise
    _, new = _release(
        tmp_path,
        "new",
        p,
        new_res,
        uncertainty={"n_bootstrap": 40, "seed": 5},
        previous_release="../old-data",
        expected={"lost_results": lost},
    )
    ch = json.loads((new / "changes.json").read_text())

    recs = {}
    for side, folder in (("old", old), ("new", new)):
        recs[side] = {
            r["sample_id"]: r
            for r in map(json.loads, (folder / "prompt_scores.jsonl").read_text().splitlines())
        }
    ids = sorted(recs["new"])
    rng = np.random.default_rng(5)
    reps = [[] for _ in range(40)]
    for leaf in ("NoSearch", "VisualSearch", "TextualSearch"):
        members = [s for s in ids if recs["new"][s]["search_type"] == leaf]
        if members:
            idx = rng.integers(0, len(members), size=(40, len(members)))
            for b in range(40):
                reps[b] += [members[j] for j in idx[b]]

    def mean(side, m, sids, zero_fill):
        tot, n = Fraction(0), 0
        for s in sids:
            e = recs[side][s]["models"][m]
            if e["status"] == "scored" and e["overall_9_raw"] is not None:
                tot, n = tot + Fraction(e["overall_9_raw"]), n + 1
            elif e["status"] != "scored" and zero_fill:
                n += 1
        return None if n == 0 else tot / n * 100 / 3

    def half(x):
        u = math.floor(abs(x) * 10 + Fraction(1, 2))
        return float(Fraction(u if x >= 0 else -u, 10))

    for m, zf in (("a", True), ("b", False)):
        d = sorted(mean("new", m, r, zf) - mean("old", m, r, zf) for r in reps)
        n = len(d)
        want = [half(d[math.ceil(n / 40) - 1]), half(d[math.ceil(39 * n / 40) - 1])]
        assert ch["paired_bootstrap"]["models"][m]["ci"] == want, m
        assert ch["paired_bootstrap"]["models"][m]["delta"] == half(
            mean("new", m, ids, zf) - mean("old", m, ids, zf)
        )


def test_previous_release_must_be_a_release(tmp_path):
    p = [prompt("p1")]
    cfg = make_release(
        tmp_path / "src",
        p,
        {"a": model("Model A")},
        {("a", "p1"): result({"checklist:0": 1})},
        previous_release="../nowhere",
    )
    with pytest.raises(ConfigError) as info:
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    assert "previous_release ../nowhere" in str(info.value) and "is not a folder" in str(info.value)
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "manifest.json").write_text("{}")
    cfg2 = make_release(
        tmp_path / "src2",
        p,
        {"a": model("Model A")},
        {("a", "p1"): result({"checklist:0": 1})},
        previous_release="../half",
    )
    with pytest.raises(ConfigError) as info:
        run_data(load_config(cfg2), tmp_path / "out", progress=False)
    assert "not a published release (missing prompt_scores.jsonl" in str(info.value)
    assert not (tmp_path / "out").exists()  # stopped before any work
    proc = _diff(tmp_path / "half", tmp_path / "half")
    assert (
        proc.returncode == 1
        and "searchgen-nb diff: FAILED: OLD_DIR: " in proc.stderr
        and "half is not a published release" in proc.stderr
    )


def test_identical_releases_change_nothing(tmp_path):
    p = [prompt("p1"), prompt("p2", subset="NoSearch")]
    res = {
        (m, s["sample_id"]): result({"checklist:0": 2, "rubric:image_quality": 1})
        for m in "ab"
        for s in p
    }
    _, old = _release(tmp_path, "old", p, res, uncertainty={"n_bootstrap": 30})
    _, new = _release(
        tmp_path, "new", p, res, uncertainty={"n_bootstrap": 30}, previous_release="../old-data"
    )
    ch = json.loads((new / "changes.json").read_text())
    assert ch["pairs"] == [] and all(
        c["delta"] == 0.0
        for cells in ch["groups"].values()
        for c in cells.values()
        if c["delta"] is not None
    )
    assert {m: v["ci"] for m, v in ch["paired_bootstrap"]["models"].items()} == {
        "a": [0.0, 0.0],
        "b": [0.0, 0.0],
    }
    assert (
        markdown(ch).splitlines()[2]
        == "- Nothing changed: same models, prompts, statuses and scores."
    )
    assert Decimal(repr(ch["groups"]["all:All"]["a"]["overall_9_after"])) == Decimal("50.0")


def test_previous_release_is_read_strictly_before_any_work(tmp_path):
    """A damaged or edited previous release is refused naming the file (and line), before the
    new release is extracted; the folder being replaced cannot be its own previous release."""
    p = [prompt("p1"), prompt("p2", subset="NoSearch")]
    res = {(m, s["sample_id"]): result({"checklist:0": 2}) for m in "ab" for s in p}
    _, old = _release(tmp_path, "old", p, res, uncertainty={"n_bootstrap": 20})
    lines = (old / "prompt_scores.jsonl").read_text().splitlines()
    cases = {
        "truncated": lambda d: (d / "prompt_scores.jsonl").write_text(
            lines[0] + "\n" + lines[1][:40] + "\n"
        ),
        "edited": lambda d: (d / "leaderboard_overall.json").write_text(
            (old / "leaderboard_overall.json").read_text().replace('"rank": 1', '"rank": 2', 1)
        ),
        "nan": lambda d: (d / "prompt_scores.jsonl").write_text(
            lines[0]
            + "\n"
            + lines[1].replace('"overall_9_raw":2.0', '"overall_9_raw":NaN', 1)
            + "\n"
        ),
    }
    want = {
        "truncated": "prompt_scores.jsonl: line 2 is not strict JSON",
        "edited": "leaderboard_overall.json: sha256 differs",
        "nan": "prompt_scores.jsonl: line 2 is not strict JSON",
    }
    import shutil

    for name, damage in cases.items():
        prev = tmp_path / f"prev-{name}"
        shutil.copytree(old, prev)
        damage(prev)
        cfg = make_release(
            tmp_path / f"src-{name}",
            p,
            {"a": model("Model A"), "b": model("Model B", "exclude")},
            res,
            previous_release=f"../prev-{name}",
        )
        with pytest.raises(ConfigError) as info:
            run_data(load_config(cfg), tmp_path / f"out-{name}", progress=False)
        assert want[name] in str(info.value) and "previous_release" in str(info.value), (
            name,
            str(info.value),
        )
        assert not (tmp_path / f"out-{name}").exists()
    cfg = make_release(
        tmp_path / "self",
        p,
        {"a": model("Model A"), "b": model("Model B", "exclude")},
        res,
        previous_release="../old-data",
    )
    with pytest.raises(ReleaseError, match="is the previous_release .*: inputs are never written"):
        run_data(load_config(cfg), old, progress=False)


def test_policy_change_and_markdown_escaping(tmp_path):
    """A model whose missing policy changed is reported; names and ids with Markdown
    characters cannot break the summary's tables or inject markup."""
    p = [prompt("p|pipe"), prompt("p`tick", subset="NoSearch")]
    res = {(m, s["sample_id"]): result({"checklist:0": 2}) for m in "ab" for s in p}
    res[("a", "p`tick")] = IMAGE
    old_models = {"a": model("A | *bold* <script>x</script>"), "b": model("Model B")}
    make_release(tmp_path / "old", p, old_models, res, uncertainty={"n_bootstrap": 20})
    run_data(load_config(tmp_path / "old" / "release.yml"), tmp_path / "old-data", progress=False)
    new_models = {
        "a": model("A | *bold* <script>x</script>", "exclude", source_id="a-model-a"),
        "b": model("Model B"),
    }
    new_models["a"]["source_id"] = old_models["a"]["source_id"]
    cfg = make_release(
        tmp_path / "new",
        p,
        new_models,
        res,
        uncertainty={"n_bootstrap": 20},
        previous_release="../old-data",
    )
    run_data(load_config(cfg), tmp_path / "new-data", progress=False)
    ch = json.loads((tmp_path / "new-data" / "changes.json").read_text())
    assert ch["models"]["changed"] == [
        {"model_id": "a", "fields": {"missing_policy": ["zero_fill", "exclude"]}}
    ]
    text = markdown(ch, {"a": "A | *bold* <script>x</script>", "b": "Model B"})
    assert (
        "missing policy zero_fill → exclude" in text
    )  # an underscore between letters is no markup
    assert "<script>" not in text and "\\<script\\>" in text
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [c for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            assert len(cells) in (6, 7), line  # escaped pipes do not split a cell


def test_raw_values_print_half_up_like_the_book():
    """A raw Overall-9 of exactly 1.65625 prints as 1.6563 (half-up), never 1.6562 (the binary
    half-even of ``format``); whole values keep one decimal."""
    from searchgen_nb.changes_markdown import _raw

    assert [_raw(1.65625), _raw(2.0), _raw(0.1), _raw(None)] == ["1.6563", "2.0", "0.1", "null"]
