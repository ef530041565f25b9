"""The data the book pages show: frames read from the artifacts, N/A kept as None."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from factory import IMAGE, make_release, model, prompt, result

from searchgen_nb.book import pages, paper, views, views_audit
from searchgen_nb.config import load_config
from searchgen_nb.errors import ConfigError
from searchgen_nb.pipeline import run_data


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("views")
    prompts = [
        prompt("v1", domains=["ART", "HIS"], failure_modes=["EIK"]),
        prompt("v2", subset="NoSearch", domains=["ART"], failure_modes=[]),
    ]
    models = {"a": model("A"), "b": model("B <b>", "exclude")}
    results = {
        ("a", "v1"): result({"checklist:0": 3}),
        ("a", "v2"): result({"checklist:0": 0}),
        ("b", "v2"): IMAGE,
        ("b", "v1"): "[]",
    }
    cfg = make_release(root, prompts, models, results, data_origin="synthetic-demo")
    run_data(load_config(cfg), root / "out", progress=False)
    return views.Release(root / "out")


@pytest.mark.parametrize(
    ("name", "key", "read"),
    [
        ("manifest.json", "output_slice", lambda r: r.output_slice),
        ("uncertainty.json", "groups", lambda r: views.group_intervals(r, "stratum", "All")),
        ("leaderboard_overall.json", "rank", lambda r: views.in_rank_order(r.boards["overall"])),
    ],
)
def test_the_book_reads_a_release_strictly_naming_file_and_key(release, tmp_path, name, key, read):
    """The book reads through the one reader: a key the schema requires is never given a
    default; its absence stops the book, naming the folder, the file and the key."""
    shutil.copytree(release.folder, tmp_path / "out")
    doc = json.loads((tmp_path / "out" / name).read_text())
    for obj in doc if isinstance(doc, list) else [doc]:
        del obj[key]
    (tmp_path / "out" / name).write_text(json.dumps(doc))
    with pytest.raises(ConfigError) as info:
        read(views.Release(tmp_path / "out"))
    assert str(info.value) == f'{tmp_path / "out" / name}: no key "{key}", which this version reads'


def test_tag_frame_keeps_null(release):
    df = views.tag_frame(release, "domain")
    b_art = df[(df.model_id == "b") & (df.tag == "ART")].iloc[0]
    assert b_art["overall_9"] is None and b_art["n_total"] == 2 and b_art["coverage"] == 0.0
    a_his = df[(df.model_id == "a") & (df.tag == "HIS")].iloc[0]
    assert a_his["overall_9"] == 100.0 and a_his["tag_name"] == "History"


def test_model_tag_table(release):
    t = views.model_tag_table(release, "domain", "a")
    assert t["Tag"].tolist() == ["ART · Art & Design", "HIS · History"]
    assert t["Overall-9"].tolist() == [50.0, 100.0]  # ART: (3 + 0) / 2 raw → 50.0
    assert t["Text Rendering"].tolist() == [None, None]


def test_stratum_views_counts_from_data(release):
    assert [(g, n) for g, n, _ in views.stratum_views(release)] == [
        ("All", 2),
        ("NoSearch", 1),
        ("SearchIntensive", 1),
        ("VisualSearch", 1),
        ("TextualSearch", 0),
    ]


def test_group_rows_and_compare_errors(release):
    assert views.group_rows(release, "HIS")[0] == "domain HIS · History"
    assert views.group_rows(release, "All")[0] == "all prompts"
    assert views.group_rows(release, "VisualSearch")[0] == "search type VisualSearch"
    assert views.group_rows(release, "EIK")[0].startswith("failure mode EIK")
    with pytest.raises(KeyError, match="group 'XYZ' is not a stratum, domain or failure mode"):
        views.group_rows(release, "XYZ")
    with pytest.raises(
        ValueError,
        match=r"^compare_models: 'nope' is not a model of this release; valid \(id or display "
        r"name, any case\): a \(",
    ):
        pages.compare(release, "All", ["a", "nope"])
    assert views.top_models(release, 1) == ["a"]


def test_audit_frames(release):
    inv = views_audit.invalid_frame(release)
    assert inv[["model_id", "sample_id", "Reason"]].values.tolist() == [
        ["b", "v1", "not a JSON object (got list)"]
    ]
    st = views_audit.status_frame(release).set_index("model_id")
    assert st.loc["b", "missing_evaluation"] == 1 and st.loc["b", "coverage"] == "0/2 (0.0%)"
    checks = views_audit.validation_frame(release.validation_report)
    assert checks["Check"].tolist()[:2] == ["schema", "expected_counts"] and len(checks) == 15


def test_banner_and_escaping(release):
    assert "Synthetic demo data" in pages.banner(release).html
    html = pages.tag_tables(release, "domain").html
    assert "B &lt;b&gt;" in html and "B <b>" not in html


def test_release_without_any_tag_of_a_kind_says_so(tmp_path):
    """No prompt carries a failure-mode tag: the pages say so instead of crashing."""
    cfg = make_release(
        tmp_path,
        [prompt("t1", failure_modes=[]), prompt("t2", failure_modes=[])],
        {"a": model("A")},
        {("a", "t1"): result({"checklist:0": 3})},
    )
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    rel = views.Release(tmp_path / "out")
    counts = views.tag_counts(rel, "failure_mode")
    assert counts.columns.tolist() == ["Tag", "Prompts"] and len(counts) == 0
    note = "No prompt of this release carries a failure-mode tag."
    assert note in pages.tag_heatmap(rel, "failure_mode")._repr_html_()
    assert note in pages.tag_tables(rel, "failure_mode")._repr_html_()
    assert (
        "The 0 failure-mode tags carry 0 prompt memberships for 2 prompts (2 prompts have no "
        "failure-mode tag)" in pages.multilabel_note(rel, "failure_mode")._repr_html_()
    )


def test_prompt_rows_difficulty_and_spread(release):
    rows = {r["sample_id"]: r for r in views_audit.prompt_rows(release)}
    some = next(iter(rows.values()))
    assert set(some) == {
        "sample_id",
        "tags",
        "difficulty",
        "spread",
        "scores",
        "statuses",
        "reasons",
    }
    # the release declares no breakdown: the tags of the declared kinds only
    assert list(some["tags"]) == ["stratum", "domains", "failure_modes", "slices"]
    # the partition's groups, finest first: what the explorer shows, then what it filters by
    for rec in release.records:
        want = [rec["search_type"]] + ([] if rec["stratum"] == "NoSearch" else [rec["stratum"]])
        assert rows[rec["sample_id"]]["tags"]["stratum"] == want
    assert {r["tags"]["stratum"][-1] for r in rows.values()} == {"NoSearch", "SearchIntensive"}
    assert (
        rows["v1"]["reasons"] == {"b": "not a JSON object (got list)"}
        and rows["v2"]["reasons"] == {}
    )
    for r in rows.values():
        values = [v for v in r["scores"].values() if v is not None]
        if values:
            assert min(values) - 0.05 <= r["difficulty"] <= max(values) + 0.05
            assert abs(r["spread"] - (max(values) - min(values))) <= 0.1
        else:
            assert r["difficulty"] is None and r["spread"] is None
        for m, st in r["statuses"].items():
            assert (r["scores"][m] is None) or st == "scored"


def test_the_papers_overall_10_beside_ours(release, tmp_path):
    assert "gives no paper table" in paper.comparison(release).html
    prompts = [prompt("v1"), prompt("v2")]
    models = {"a": model("A"), "c": model("C")}
    results = {
        ("a", "v1"): result({"checklist:0": 3}),
        ("a", "v2"): result({"checklist:0": 1.5}),
        ("c", "v1"): result({"checklist:0": 0}),
        ("c", "v2"): result({"checklist:0": 3}),
    }
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "paper_table.json").write_text('{"a": 75.04, "c": 50}')
    cfg = make_release(tmp_path / "src", prompts, models, results, paper_table="paper_table.json")
    run_data(load_config(cfg), tmp_path / "out", progress=False)
    html = paper.comparison(views.Release(tmp_path / "out")).html
    rows = [r.split("</tr>")[0] for r in html.split("<tr")[2:]]
    assert [re.findall(r">([^<>]+)</td>", r) for r in rows] == [
        ["A", "a", "75.0", "75.04", "\u22120.04"],
        ["C", "c", "50.0", "50.0", "0.0"],
    ]
