"""Untrusted text lands escaped for its context, names that hide or fake characters are refused
at the door, silent surprises (an empty slice, ``$`` in a path, a rounding change) are settled,
and the work a config asks for is bounded before any result file is read."""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace

import numpy as np
import pytest
import yaml
from factory import make_release, model, prompt, result, run_cli

from searchgen_nb.book import tables
from searchgen_nb.book.downloads import leaderboard_csv
from searchgen_nb.bounds import MAX_PAIRS, MAX_ROW_PROMPTS, MAX_VALUES, Work
from searchgen_nb.changes_markdown import markdown


def _release(root, prompts=None, models=None, scores=None, **config):
    """A small release: two models, three prompts, every pair scored (``scores[(m, sid)]``)."""
    prompts = prompts or [
        prompt("p1", domains=["A B"]),
        prompt("p2", domains=["A"]),
        prompt("p3", subset="NoSearch", domains=["B"]),
    ]
    models = models or {"a": model("Model A"), "b": model("Model B")}
    scores = scores or {}
    res = {
        (m, p["sample_id"]): result(
            {"checklist:0": scores.get((m, p["sample_id"]), 2 if m == "a" else 1)}
        )
        for m in models
        for p in prompts
    }
    return make_release(root, prompts, models, res, uncertainty={"n_bootstrap": 20}, **config)


def _edit(cfg_path, change) -> None:
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    change(cfg)
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True), encoding="utf-8")


# ---- Markdown, CSV: every untrusted string escaped for where it lands ---------------------------


def test_diff_markdown_cannot_forge_headings_or_split_rows(tmp_path):
    """A display name with a line break and table pipes (in a hand-edited release folder) stays
    on its line of ``searchgen-nb diff``: no forged heading, every table row keeps its cells."""
    old = _release(tmp_path / "old")
    new = _release(tmp_path / "new", scores={("b", "p1"): 3})
    for cfg, out in ((old, "old-data"), (new, "new-data")):
        assert run_cli("data", str(cfg), "--out", str(tmp_path / out)).returncode == 0
    manifest = tmp_path / "new-data" / "manifest.json"
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    doc["models"]["b"]["display_name"] = "B\n# Forged heading\n| x | y |\u202e"
    manifest.write_text(json.dumps(doc), encoding="utf-8")
    r = run_cli("diff", str(tmp_path / "old-data"), str(tmp_path / "new-data"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [x for x in lines if x.startswith("#")] == [
        "## What changed",
        "### Score changes",
        "### Prompt × model changes",
    ]
    assert "**B\\n# Forged heading\\n\\| x \\| y \\|\\u202e** (`b`)" in r.stdout
    widths = {len(re.split(r"(?<!\\)\|", x)) for x in lines if x.startswith("|")}
    assert widths == {8, 9}  # the two tables' rows: 6 and 7 cells, none split


def test_markdown_escapes_tags_statuses_and_ids():
    ch = {
        "first_release": False,
        "models": {"added": ["m`x\n#"], "removed": [], "changed": []},
        "prompts": {
            "added": [],
            "removed": [],
            "metadata_changed": [{"sample_id": "s", "fields": ["*f*"]}],
        },
        "groups": {
            "domain:T\n# h": {
                "m": {
                    "overall_9_before": 1.0,
                    "overall_9_after": 2.0,
                    "delta": 1.0,
                    "rank_before": 1,
                    "rank_after": 2,
                }
            }
        },
        "pairs": [
            {
                "model_id": "m",
                "sample_id": "s|1",
                "status_before": "<b>",
                "status_after": "scored",
                "overall_9_before": None,
                "overall_9_after": 1.0,
            }
        ],
        "paired_bootstrap": None,
    }
    text = markdown(ch, {"m": "M"})
    assert not any(x.startswith("# ") for x in text.splitlines())
    for piece in ("``m`x\\n#``", "(\\*f\\*)", "domain T\\n# h +1", "\\<b\\> → scored", "`s\\|1`"):
        assert piece in text


def test_markdown_names_make_no_mention_or_link_and_pipes_escape_only_in_tables():
    cell = {
        "overall_9_before": 1.0,
        "overall_9_after": 2.0,
        "delta": 1.0,
        "rank_before": 1,
        "rank_after": 1,
    }
    pair = {
        "model_id": "a|b",
        "sample_id": "s|1",
        "status_before": "scored",
        "status_after": "scored",
        "overall_9_before": 1.0,
        "overall_9_after": 2.0,
    }
    ch = {
        "first_release": False, "models": {"added": ["a|b"], "removed": [], "changed": []},
        "prompts": {"added": [], "removed": [], "metadata_changed": []},
        "groups": {"all:All": {"a|b": cell}}, "pairs": [pair], "paired_bootstrap": None,
    }  # fmt: skip
    text = markdown(ch, {"a|b": "@octocat https://evil.example/x #1 www.evil.example GH-2 a_b"})
    name = "`@octocat` `https://evil.example/x` `#1` `www.evil.example` `GH-2` a_b"
    assert f"- Models added: **{name}** (`a|b`)" in text
    assert f"| All | {name} | 1.0 | 2.0 | +1.0 | 1 | 1 |" in text
    assert f"| {name} | `s\\|1` | scored | scored | 1.0 | 2.0 |" in text


def test_csv_cells_are_not_formulas():
    row = {
        "model_id": "m",
        "display_name": '=HYPERLINK("http://x")',
        "type": "@Open",
        "rank": 1,
        "overall_9": 50.0,
    }
    text = leaderboard_csv("leaderboard_by_domain.json", {"-2+3": [row]})
    assert text.splitlines()[1].startswith('\'-2+3,1,,m,"\'=HYPERLINK(""http://x"")",\'@Open,')


# ---- the config and metadata door ----------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda c: c["models"]["a"].update(display_name="A\n# Forged"),
            r"`models\.a\.display_name`: A\\n# Forged holds a control character \(U\+000A\)",
        ),
        (
            lambda c: c["models"]["a"].update(display_name="A\u202eB"),
            r"`models\.a\.display_name`: A\\u202eB holds a bidirectional control \(U\+202E\)",
        ),
        (
            lambda c: c["models"].update({"c\u200b": model("C", source_id="c")}),
            r"`key c\\u200b of models`: c\\u200b holds an invisible or non-printable character "
            r"\(U\+200B\)",
        ),
        (
            lambda c: c.update(slices={"s": {"field": "domains", "include": ["A\tB"]}}),
            r"`slices\.s\.include\[0\]`: A\\tB holds a control character \(U\+0009\)",
        ),
        # invisible twins: both named
        (
            lambda c: c["models"].update({"a\u200b": model("C", source_id="c")}),
            r"`models`: model ids a and a\\u200b look the same",
        ),
        (
            lambda c: c["models"]["b"].update(display_name="Model\u200b A"),
            r"`models`: display names Model A and Model\\u200b A look the same",
        ),
        (
            lambda c: c["models"]["b"].update(display_name="\u202eModel A"),
            r"`models`: display names Model A and \\u202eModel A look the same",
        ),
        (
            lambda c: (
                c["models"]["a"].update(display_name="Café"),
                c["models"]["b"].update(display_name="Cafe\u0301"),
            ),
            r"`models`: display names Caf\\xe9 and Cafe\\u0301 look the same",
        ),
    ],
)
def test_config_refuses_names_that_hide_characters(tmp_path, change, message):
    cfg = _release(tmp_path / "r")
    _edit(cfg, change)
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    assert f"config {cfg}: " in r.stderr and re.search(message, r.stderr), r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("tag", ["A\nB", "A\u200bB", "A\u2028B", "\u2066A"])
def test_metadata_refuses_tags_that_hide_characters(tmp_path, tag):
    cfg = _release(tmp_path / "r", prompts=[prompt("p1", failure_modes=[tag])])
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    shown = tag.encode("unicode_escape").decode()
    assert (
        f"metadata prompts.jsonl line 1 (sample_id 'p1'): failure_modes: tag {shown} holds "
        in r.stderr
    ), r.stderr


# ---- silent surprises -------------------------------------------------------------------------


def test_slice_selecting_no_prompt_is_refused(tmp_path):
    cfg = _release(tmp_path / "r", slices={"hard": {"field": "domains", "include": ["Aa"]}})
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    assert (
        f"config {cfg}: `slices`: no prompt is in 1 slice(s): "
        "slice hard: field domains holds none of ['Aa']" in r.stderr
    )
    _edit(
        cfg, lambda c: c["slices"]["hard"].update(expected_rows=0)
    )  # meant to be empty: published
    assert run_cli("data", str(cfg), "--out", str(tmp_path / "out")).returncode == 0
    counts = json.loads((tmp_path / "out" / "manifest.json").read_text())["slice_partitions"][
        "hard"
    ]
    assert set(counts.values()) == {0}


def test_only_braced_variables_are_variables(tmp_path, monkeypatch):
    cfg = _release(tmp_path / "r")
    (tmp_path / "r" / "prompts.jsonl").rename(tmp_path / "r" / "price$HOME.jsonl")
    _edit(cfg, lambda c: c.update(dataset="price$HOME.jsonl"))
    assert run_cli("data", str(cfg), "--out", str(tmp_path / "out")).returncode == 0
    monkeypatch.setenv("SG_DIR", str(tmp_path / "r"))
    monkeypatch.delenv("SG_UNSET", raising=False)
    _edit(
        cfg,
        lambda c: c.update(
            dataset="${SG_DIR}/price$HOME.jsonl", results_root="${SG_UNSET}/results"
        ),
    )
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 1 and "uses ${SG_UNSET}, which is not set in the environment" in r.stderr


def test_rounding_change_alone_is_no_score_change(tmp_path):
    """Releases that differ only by rounding_decimals (1 → 2) and one real change: only the real
    change is a score change (delta 0 where both published values round from one score)."""
    old = _release(tmp_path / "old", scores={("a", "p2"): 2.2})
    assert run_cli("data", str(old), "--out", str(tmp_path / "old-data")).returncode == 0
    new = _release(
        tmp_path / "new",
        scores={("a", "p2"): 2.2, ("b", "p3"): 2},
        previous_release="../old-data",
        scoring={"rounding_decimals": 2},
    )
    assert run_cli("data", str(new), "--out", str(tmp_path / "new-data")).returncode == 0
    ch = json.loads((tmp_path / "new-data" / "changes.json").read_text())
    a = ch["groups"]["all:All"]["a"]
    assert (a["overall_9_before"], a["overall_9_after"], a["delta"]) == (68.9, 68.89, 0.0)
    assert ch["groups"]["all:All"]["b"]["delta"] == 11.14  # 33.3 → 44.44: a real change
    text = run_cli("diff", str(tmp_path / "old-data"), str(tmp_path / "new-data")).stdout
    assert (
        "**Model B** (`b`): Overall-9 changed" in text
        and "**Model A** (`a`): Overall-9 changed" not in text
    )


# ---- bounded work --------------------------------------------------------------------------------


def _sized(
    root, n_prompts: int, n_models: int, n_tags: int = 1, n_slices: int = 0, b: int = 10_000
):
    """A config of that size (no result file: a refusal comes before any is read)."""
    root.mkdir()
    lines = [
        json.dumps(
            prompt(
                f"p{i:04d}",
                subset="NoSearch" if i % 7 == 0 else "SearchIntensive",
                domains=[f"D{j}" for j in range(n_tags)] if n_tags > 1 else [f"D{i % 22}"],
            )
        )
        for i in range(n_prompts)
    ]
    (root / "prompts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cfg = {
        "benchmark": "B",
        "dataset": "prompts.jsonl",
        "results_root": "results",
        "uncertainty": {"n_bootstrap": b},
        "models": {f"m{k}": model(f"Model {k}", source_id=f"m{k}") for k in range(n_models)},
    }
    if n_slices:
        cfg["slices"] = {
            f"s{k}": {"field": "domains", "include": [f"D{k % 22}"]} for k in range(n_slices)
        }
    (root / "release.yml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return root / "release.yml"


@pytest.mark.parametrize(
    ("size", "figure"),
    [
        (
            {"n_prompts": 751, "n_models": 40, "n_slices": 20},
            "compare 202,800,000 replicate pairs (n_bootstrap 10,000 × 26 ranked groups × "
            "780 pairs of 40 models); bound 150,000,000: set uncertainty.n_bootstrap ≤ 7,396, "
            "or fewer models or slices",
        ),
        (
            {"n_prompts": 6, "n_models": 3000},
            "keep 360,000,000 replicate values (n_bootstrap 10,000 × 12 groups × 3,000 models); "
            "bound 150,000,000: set uncertainty.n_bootstrap ≤ 4,166, or fewer",
        ),
        (
            {"n_prompts": 1, "n_models": 20, "n_tags": 1000},
            "keep 201,200,000 replicate values (n_bootstrap 10,000 × 1,006 groups",
        ),
        (
            {"n_prompts": 751, "n_models": 13, "n_slices": 200},
            "the leaderboards would hold 70,902 rows (202 boards × 27 groups × "
            "13 models); bound 60,000: publish fewer slices, tags or models",
        ),
        (
            {"n_prompts": 751, "n_models": 5901, "b": 0},
            "the release would read and check 4,431,651 prompt × model pairs (751 prompts × "
            "5,901 models); bound 1,100,000: configure fewer models (or prompts)",
        ),
        (
            {"n_prompts": 26250, "n_models": 40, "n_slices": 8, "b": 0},
            "the aggregation would sum 283,500,000 leaderboard row × prompt cells (10,800 "
            "rows × 26,250 prompts); bound 250,000,000: publish fewer slices, tags or models",
        ),
    ],
)
def test_unbounded_work_is_refused_within_seconds(tmp_path, size, figure):
    cfg = _sized(tmp_path / "r", **size)
    start = time.perf_counter()
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert time.perf_counter() - start < 30  # a refusal, not the work (minutes) or a hang
    assert r.returncode == 1 and not (tmp_path / "out").exists()
    assert f"config {cfg}: the release asks for more work than this version bounds" in r.stderr
    assert figure in r.stderr and len(r.stderr) < 2000, r.stderr


def test_work_figures_of_the_demo_are_within_bounds():
    demo = Work(
        n_prompts=751, n_models=13, n_tags=34, n_slices=4, memberships=7626, n_bootstrap=10_000
    )
    assert (demo.groups, demo.ranked_groups, demo.values, demo.comparisons) == (
        43,
        9,
        5_590_000,
        7_020_000,  # 10,000 × 9 ranked groups × 78 pairs of 13 models
    )
    assert demo.problems() == [] and demo.values * 4 < MAX_VALUES
    assert demo.pairs * 20 < MAX_PAIRS and demo.row_prompts * 20 < MAX_ROW_PROMPTS


def test_sizes_measured_to_finish_are_accepted():
    """300 models on the demo's prompts and slices at B = 10,000 (the pairs: neighbours in
    rank), and the demo's prompts 103 times over (1,005,589 pairs, 4 slices)."""
    roster = Work(751, 300, 34, 4, 7626, 10_000)
    assert roster.tested == 299 and roster.comparisons == 10_000 * 9 * 299
    million = Work(77_353, 13, 34, 4, 7626 * 103, 10_000)
    assert million.pairs == 1_005_589 and roster.problems() == million.problems() == []
    many = Work(6, 3000, 6, 1, 30, 10_000)  # one largest n_bootstrap for every figure it bounds
    assert all("n_bootstrap ≤ 4,166," in p for p in many.problems()[:2])

    def grow_with_b(b):
        return [p for p in replace(many, n_bootstrap=b).problems() if "n_bootstrap ≤" in p]

    assert grow_with_b(4_166) == [] and len(grow_with_b(4_167)) == 1


def test_work_is_measured_from_the_release(tmp_path):
    from searchgen_nb.bounds import preflight
    from searchgen_nb.config import load_config
    from searchgen_nb.prompts import read_prompts

    cfg = load_config(
        _release(tmp_path / "r", slices={"ab": {"field": "domains", "include": ["A B"]}})
    )
    w = preflight(cfg, read_prompts(cfg.dataset_path))
    # All 3 + strata (NoSearch 1, SearchIntensive 2, VisualSearch 2) + tags 3 + slices (3, 1)
    assert (w.n_tags, w.n_slices, w.memberships, w.values) == (3, 2, 15, 20 * 10 * 2)


# ---- the prompt explorer: whole tags, URL parameters never compiled ----------------------------


def _explorer_page(tmp_path):
    from searchgen_nb.book import assets
    from searchgen_nb.book.views import tag_columns
    from searchgen_nb.declaration import BENCHMARK

    site = tmp_path / "site"
    names = assets.write_vendor_assets(site / "vendor")
    head = "".join(f'<script src="vendor/{n}"></script>' for n in names if n.endswith(".js"))
    head += "".join(
        f'<link rel="stylesheet" href="vendor/{n}">' for n in names if n.endswith(".css")
    )
    models = [("m", "M"), ("m x", "MX")]
    rows = [
        {
            "sample_id": f"p{i}",
            "tags": {
                "stratum": ["NoSearch"] if i == 5 else ["VisualSearch", "SearchIntensive"],
                "domains": d,
                "failure_modes": [],
                "slices": [],
            },
            "difficulty": None,
            "spread": None,
            "scores": {"m": None, "m x": None},
            "statuses": {"m": st, "m x": "scored"},
        }
        for i, (d, st) in enumerate(
            [
                (["A B"], "scored"),
                (["A"], "scored"),
                (["B"], "scored"),
                (["A", "C"], "missing_generation"),
                (["A B", "A"], "scored"),
                (["C"], "scored"),
            ]
        )
    ]
    columns = tag_columns(BENCHMARK)
    body = tables.prompt_table(rows, models, "prompt-explorer", columns).html
    (site / "index.html").write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'>{head}</head><body>{body}</body></html>",
        encoding="utf-8",
    )
    return site / "index.html"


@pytest.mark.browser
def test_explorer_filters_by_whole_tag(tmp_path, browser):
    from urllib.parse import quote

    from browser import Page

    page_path = _explorer_page(tmp_path)
    cases = [
        (f"domain={quote('A B')}", ["p0", "p4"]),
        ("domain=A", ["p1", "p3", "p4"]),
        ("domain=B", ["p2"]),
        ("domain=A&model=m&status=scored", ["p1", "p4"]),
        ("model=m%20x&status=scored", ["p0", "p1", "p2", "p3", "p4", "p5"]),
        ("stratum=SearchIntensive", ["p0", "p1", "p2", "p3", "p4"]),
        ("stratum=Search", []),
        ("domain=" + "(" * 100_000, []),
        ("domain=.*", []),
    ]
    for query, want in cases:
        pg = Page(browser, page_path, query=query)
        pg.page.wait_for_selector("table#prompt-explorer[data-sg-shown]")
        shown = pg.page.get_attribute("table#prompt-explorer", "data-sg-shown")
        ids = (
            [
                t.split("\t")[0].strip()
                for t in pg.page.locator("table#prompt-explorer tbody tr").all_inner_texts()
            ]
            if want
            else []
        )
        assert (shown, ids) == (str(len(want)), want), query[:40]
        assert pg.errors == [], pg.errors
        assert len(pg.page.inner_text("#prompt-explorer-filter")) < 300


@pytest.mark.browser
def test_explorer_rows_download_keeps_each_tag_whole(tmp_path, browser):
    """ "Download these rows": a list cell is its JSON array, so the tag "A B" reads as one tag
    and ["A B", "A"] as two."""
    import csv
    import io

    from browser import Page

    pg = Page(browser, _explorer_page(tmp_path), query="domain=A")
    pg.page.wait_for_selector("table#prompt-explorer[data-sg-shown]")
    with pg.page.expect_download() as dl:
        pg.page.click("button.sg-export-rows")
    rows = list(csv.DictReader(io.StringIO(open(dl.value.path(), encoding="utf-8").read())))
    got = {r["sample_id"]: (json.loads(r["domains"]), json.loads(r["slices"])) for r in rows}
    assert got == {"p1": (["A"], []), "p3": (["A", "C"], []), "p4": (["A B", "A"], [])}
    assert pg.errors == []


# ---- bounded input: tag lists, generation_glob --------------------------------------------------


@pytest.mark.parametrize(
    ("n", "message"),
    [
        (1_000, None),
        (1_000_000, "line 1 (sample_id 'p1'): domains lists 1,000,000 tags, at most 1,000"),
    ],
)
def test_repeated_tags_are_read_at_once_and_bounded(tmp_path, n, message):
    from searchgen_nb.errors import MetadataError
    from searchgen_nb.prompts import read_prompts

    path = tmp_path / "prompts.jsonl"
    path.write_text(json.dumps(prompt("p1", domains=["ART"] * n)) + "\n", encoding="utf-8")
    start = time.perf_counter()
    if message is None:
        ps = read_prompts(path)
        assert ps.prompts[0].domains == ("ART",)
        assert [w["message"] for w in ps.warnings] == ["domains: duplicate tag(s) ART dropped"]
    else:
        with pytest.raises(MetadataError, match=re.escape(message)):
            read_prompts(path)
    assert time.perf_counter() - start < 30  # a refusal, not the work (minutes) or a hang


@pytest.mark.parametrize(
    ("globs", "message"),
    [
        ([f"*.x{i}" for i in range(65)], "`generation_glob`: List should have at most 64 items"),
        (["*" * 257], "`generation_glob.0`: String should have at most 256 characters"),
    ],
)
def test_generation_glob_is_bounded(tmp_path, globs, message):
    cfg = _release(tmp_path / "r", generation_glob=globs)
    r = run_cli("data", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 1 and message in r.stderr and len(r.stderr) < 1000, r.stderr


class _Unreadable(float):
    """A number type of an extractor's own whose conversion and comparisons fail."""

    def __float__(self):
        raise RuntimeError("no value")

    def __le__(self, other):
        raise RuntimeError("no comparison")

    __ge__ = __lt__ = __gt__ = __le__


def _itself() -> list:
    loop: list = []
    loop.append(loop)
    return loop


@pytest.mark.parametrize(("value", "said"), [
    (np.float64(1.5), 1.5),
    (_Unreadable(1.0), "score 'checklist': a _Unreadable that cannot be read (RuntimeError: "
     "no value)"),
    (_itself(), "score 'checklist' is not a number: [[...]]"),
    (10**400, "score 'checklist' is outside 0–3: 1000000000"),
])  # fmt: skip
def test_an_extractors_value_is_read_or_its_problem_named(value, said):
    from searchgen_nb.extract import InvalidResult, adapt_components

    if isinstance(said, float):
        assert adapt_components({"checklist": value})["checklist"] == said
    else:
        with pytest.raises(InvalidResult) as info:
            adapt_components({"checklist": value})
        assert str(info.value).startswith(said) and len(str(info.value)) < 200


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "difficulty",
            "A" * 257,
            "difficulty must be a string of at most 256 characters, a list "
            "of such strings or null, got a string of 257 characters",
        ),
        ("language", ["en"] * 3_000_000, "language lists 3,000,000 tags, at most 1,000"),
        ("generation_task_type", 7, "generation_task_type must be a string"),
        ("is_miniset", 1, "is_miniset must be true, false or null, got 1"),
        ("eval_slices", ["s"] * 1_001, "eval_slices lists 1,001 tags, at most 1,000"),
        ("eval_slices", {"a": 1}, "eval_slices must be a string of at most 256 characters"),
        ("domains", ["A" * 300], "domains: tag AAAA"),
        ("subset", "S" * 300, "subset must be a string of at most 256 characters"),
    ],
)
def test_optional_metadata_is_typed_and_bounded(tmp_path, field, value, message):
    """An oversized or mistyped optional field is one error naming the line, sample_id and
    field, within seconds; the demo's kinds of values stay accepted."""
    from searchgen_nb.errors import MetadataError
    from searchgen_nb.prompts import read_prompts

    path = tmp_path / "prompts.jsonl"
    good = prompt("p0", difficulty="hard", language="zh", generation_task_type="photo",
                  is_miniset=True, eval_slices=["test-mini", "test-mini-hard"])  # fmt: skip
    lines = [good, prompt("p1", **{field: value})]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    start = time.perf_counter()
    with pytest.raises(MetadataError) as exc:
        read_prompts(path)
    assert f"metadata prompts.jsonl line 2 (sample_id 'p1'): {message}" in str(exc.value)
    assert len(str(exc.value)) < 300
    assert time.perf_counter() - start < 30  # a refusal, not the work (minutes) or a hang
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert read_prompts(path).prompts[0].optional["eval_slices"] == ["test-mini", "test-mini-hard"]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("$\\sqrt{x}$", "\\$\\\\sqrt{x}\\$"),
        ("great :+1: model", "great \\:+1\\: model"),
        ("fix 1a2b3c4d", "fix `1a2b3c4d`"),
        ("abcdef1234567890abcdef1234567890abcdef12", "`abcdef1234567890abcdef1234567890abcdef12`"),
        ("deadbeef 1234567 abc12e", "deadbeef 1234567 abc12e"),
    ],
)
def test_markdown_names_make_no_math_emoji_or_commit_link(name, shown):
    from searchgen_nb.untrusted import md_text

    assert md_text(name) == shown
