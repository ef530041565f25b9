"""Statuses shown as they count (data contract, § Aggregation over a group of prompts; § The
book): the prompt explorer's cells, sorting and row export, the coverage links, What changed,
tables in rank order, and downloads with every column their tables show."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from conftest import TEST_EPOCH

from searchgen_nb.book import downloads, fmt
from searchgen_nb.book.release import run_release
from searchgen_nb.changes_markdown import markdown
from searchgen_nb.demo import write_demo


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        ((72.25, "scored", "zero_fill", 1), ("72.3", "72.25", "", "")),
        (
            (None, "scored", "zero_fill", 1),
            ("N/A", "", "scored, but not applicable: no component of the set has a value", "sg-na"),
        ),
        (
            (None, "missing_generation", "zero_fill", 1),
            (
                "0 · no image",
                "0",
                "missing generation · counts 0 (missing policy zero_fill)",
                "sg-zero",
            ),
        ),
        (
            (None, "invalid_evaluation", "exclude", 1, "=bad"),
            (
                "invalid · excluded",
                "",
                "invalid evaluation: =bad · excluded: left out of every mean (missing policy "
                "exclude); sorts last",
                "sg-excluded",
            ),
        ),
    ],
)
def test_a_pair_shows_how_it_counts(args, shown):
    assert tuple(fmt.pair_cell(*args)) == shown


UNCERTAINTY = {
    "groups": {
        "all:All": {
            "b": {"overall_9": [40.1, 44.9], "rank": [1, 2]},
            "a": {"overall_9": [39.0, 45.5], "rank": [1, 2]},
        }
    },
    "pairs": {
        "all:All": [
            {
                "a": "a",
                "b": "b",
                "diff": 0.0,
                "ci": [-1.2, 1.3],
                "p": 0.9,
                "p_holm": 1.0,
                "separable": False,
            }
        ]
    },
}
ROWS = [  # as a leaderboard file: b after a (same published Overall-9, ordered by model_id)
    {"rank": None, "ranked": False, "model_id": "c", "display_name": "=C", "overall_9": 9.0},
    {"rank": 2, "ranked": True, "model_id": "b", "display_name": "B", "overall_9": 42.5},
    {"rank": 1, "ranked": True, "model_id": "a", "display_name": "A", "overall_9": 42.5},
]


def test_leaderboard_csv_has_the_table_columns_in_rank_order():
    rows = list(
        csv.DictReader(
            io.StringIO(downloads.leaderboard_csv("leaderboard_overall.json", ROWS, UNCERTAINTY))
        )
    )
    got = [
        [
            r[k]
            for k in (
                "model_id",
                "rank",
                "gap_to_next",
                "interval_low",
                "interval_high",
                "rank_low",
                "rank_high",
                "tie_group",
                "display_name",
            )
        ]
        for r in rows
    ]
    assert got == [
        ["a", "1", "0.0", "39.0", "45.5", "1", "2", "T1", "A"],
        ["b", "2", "", "40.1", "44.9", "1", "2", "T1", "B"],
        ["c", "", "", "", "", "", "", "", "'=C"],
    ]


def test_pairs_and_prompts_csv():
    assert downloads.pairs_csv(UNCERTAINTY).splitlines() == [
        "group,model_a,model_b,diff,interval_low,interval_high,p,p_holm,separable",
        "all:All,a,b,0.0,-1.2,1.3,0.9,1.0,false",
    ]
    entry = {"components_raw_0to3": {}, "overall_9_raw": None, "overall_10_raw": None}
    record = {
        "sample_id": "p1",
        "search_type": "NoSearch",
        "models": {
            "z": {**entry, "status": "invalid_evaluation", "error": "-1 is out of range"},
            "x": {**entry, "status": "missing_generation", "error": None},
            "s": {
                **entry,
                "status": "scored",
                "error": None,
                "components_raw_0to3": {"checklist": 2.5},
                "overall_9_raw": 2.5,
                "overall_10_raw": 2.5,
            },
        },
    }
    manifest = {
        "model_order": ["z", "x", "s"],
        "models": {
            "z": {"missing_policy": "zero_fill"},
            "x": {"missing_policy": "exclude"},
            "s": {"missing_policy": "exclude"},
        },
    }
    lines = downloads.prompts_csv([record], manifest).splitlines()
    assert lines[0].startswith(
        "sample_id,stratum,model_id,status,reason,missing_policy,counts_as,checklist_raw,"
    )
    assert lines[
        1
    ] == "p1,NoSearch,z,invalid_evaluation,'-1 is out of range,zero_fill,0," + ",".join(
        ["0.0"] * 12
    )
    assert lines[2] == "p1,NoSearch,x,missing_generation,,exclude,excluded" + "," * 12
    assert lines[3] == "p1,NoSearch,s,scored,,exclude,value,2.5" + "," * 9 + ",2.5,2.5"


def test_status_transitions_by_name():
    ch = {
        "first_release": False,
        "models": {"added": [], "removed": [], "changed": []},
        "prompts": {"added": [], "removed": [], "metadata_changed": []},
        "groups": {},
        "pairs": [
            {
                "model_id": "m",
                "sample_id": "s1",
                "status_before": "scored",
                "status_after": "missing_generation",
                "overall_9_before": 1.5,
                "overall_9_after": None,
            }
        ],
    }
    assert "- `m`: 1 result scored → missing generation (counts 0): `s1`" in markdown(
        ch, policies={"m": "zero_fill"}
    )
    assert "- `m`: 1 result scored → missing generation: `s1`" in markdown(ch)


# ---- the demo book in the browser ------------------------------------------------------------

NOTEBOOKS = Path("_build", "html", "book", "notebooks")


@pytest.fixture(scope="module")
def changed_site(demo_data, tmp_path_factory) -> Path:
    """The changed demo (one model lower on some prompts, two results of a zero_fill model
    lost) released as a book with the demo as its previous release."""
    folder = tmp_path_factory.mktemp("changed-book")
    write_demo(folder / "src", changed=True, previous=demo_data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
        mp.setenv("SEARCHGEN_VALIDATE_CHARTS", "0")
        run_release(folder / "src" / "release.yml", log=lambda m: None, output_root=folder / "site")
    return folder / "site"


@pytest.fixture(scope="module")
def tab(browser):
    """A tab recording every console warning and error and every page error."""
    page = browser.new_page()
    page.sg_problems = []
    page.on(
        "console",
        lambda m: (
            page.sg_problems.append(f"{m.type}: {m.text}")
            if m.type in ("warning", "error")
            else None
        ),
    )
    page.on("pageerror", lambda e: page.sg_problems.append(str(e)))
    yield page
    page.close()


def _open(tab, path: Path, query: str = "", width: int = 1400):
    tab.set_viewport_size({"width": width, "height": 900})
    tab.sg_problems.clear()
    tab.goto(path.resolve().as_uri() + (f"?{query}" if query else ""))
    tab.wait_for_selector("table.sg-table[data-sg-ready]", state="attached")
    return tab


_SORTED = """([id, col, direction]) => { const t = document.getElementById(id), api = t.sgApi;
  const i = [...t.querySelectorAll('thead th')].findIndex(th => th.dataset.sgCol === col);
  if (direction) { api.order([i, direction]).draw(); }
  return api.rows({search: 'applied', order: 'applied'}).indexes().toArray().map(r => {
    const td = api.cell(r, i).node();
    return [td.className, td.textContent, td.title || '']; }); }"""


@pytest.mark.slow
@pytest.mark.browser
def test_explorer_shows_and_sorts_statuses_as_they_count(tab, demo_release):
    page = _open(tab, demo_release / NOTEBOOKS / "10_prompts.html")
    cells = page.evaluate(_SORTED, ["prompt-explorer", "m:quillmark_ultra", None])
    zero = [c for c in cells if "sg-zero" in c[0]]
    assert len(zero) == 30 and [
        "0 · no image",
        "missing generation · counts 0 (missing policy zero_fill)",
    ] in [c[1:] for c in zero]
    invalid = next(c for c in zero if c[1] == "0 · invalid")
    assert invalid[2].startswith("invalid evaluation: ") and invalid[2].endswith(
        "· counts 0 (missing policy zero_fill)"
    )
    for model, n, where in (
        ("quillmark_ultra", 30, "sg-zero"),
        ("glintframe_pro", 34, "sg-excluded"),
    ):
        for direction in ("asc", "desc"):
            cells = page.evaluate(_SORTED, ["prompt-explorer", f"m:{model}", direction])
            at = [i for i, c in enumerate(cells) if where in c[0]]
            first = where == "sg-zero" and direction == "asc"  # zero-filled: sorted as 0
            assert at == list(range(n) if first else range(751 - n, 751)), (model, direction)
    assert page.sg_problems == []
    page.evaluate(_SORTED, ["prompt-explorer", "m:quillmark_ultra", "asc"])
    with page.expect_download() as dl:
        page.click("button.sg-export-rows")
    rows = list(csv.DictReader(open(dl.value.path(), encoding="utf-8")))
    assert len(rows) == 751 and rows[0]["quillmark_ultra status"] in (
        "missing_generation",
        "invalid_evaluation",
        "missing_evaluation",
    )
    assert rows[0]["quillmark_ultra"] == "0" and rows[-1]["quillmark_ultra"] not in ("", "0")
    assert {r["glintframe_pro"] for r in rows if r["glintframe_pro status"] != "scored"} == {""}


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize(
    ("table", "model", "missing", "said"),
    [
        (
            "leaderboard-all",
            "quillmark_ultra",
            30,
            "Showing the 30 prompts of Quillmark Ultra without a score. ",
        ),
        (
            "leaderboard-nosearch",
            "quillmark_ultra",
            6,
            "Showing the 6 prompts of Quillmark Ultra without a score in stratum NoSearch. ",
        ),
    ],
)
def test_coverage_link_opens_the_prompts_without_a_score(
    tab, demo_release, table, model, missing, said
):
    page = _open(tab, demo_release / NOTEBOOKS / "04_leaderboard.html")
    link = page.locator(f'#{table} tr[data-model-id="{model}"] a[href*="status=not_scored"]')
    n_scored, n_total = map(int, link.inner_text().split(" ")[0].split("/"))
    assert n_total - n_scored == missing
    page.goto(link.evaluate("a => a.href"))
    page.wait_for_selector("#prompt-explorer[data-sg-shown]", state="attached")
    assert page.get_attribute("#prompt-explorer", "data-sg-shown") == str(missing)
    assert page.inner_text("#prompt-explorer-filter").startswith(said.strip())


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("name", ["04_leaderboard.html", "07_compare.html"])
def test_every_leaderboard_lists_its_rows_in_rank_order(tab, demo_release, name):
    page = _open(tab, demo_release / NOTEBOOKS / name)
    tables = page.evaluate("""[...document.querySelectorAll('table.sg-leaderboard')].map(t =>
        [...t.querySelectorAll('tbody tr')].map(tr => tr.cells[0].textContent.trim()))""")
    assert tables and all(ranks for ranks in tables)
    for ranks in tables:
        ranked = [int(r) for r in ranks if r != "–"]
        assert ranks == [
            *map(str, ranked),
            *["–"] * (len(ranks) - len(ranked)),
        ] and ranked == sorted(ranked)


@pytest.mark.slow
def test_downloads_match_the_tables(demo_release):
    folder = demo_release / "_build" / "html" / "downloads"
    for name in downloads.CSV_FILES.values():
        header = (folder / name).read_text(encoding="utf-8").splitlines()[0].split(",")
        assert {
            "gap_to_next",
            "interval_low",
            "interval_high",
            "rank_low",
            "rank_high",
            "tie_group",
            "n_scored",
            "n_total",
            "missing_policy",
        } <= set(header)
    rows = list(csv.DictReader((folder / "leaderboard_by_stratum.csv").open(encoding="utf-8")))
    tie = [
        [r[k] for k in ("rank", "overall_9", "gap_to_next", "rank_low", "rank_high", "tie_group")]
        for r in rows
        if r["group"] == "NoSearch" and r["model_id"].startswith("sketchloom")
    ]
    assert tie == [["11", "38.3", "0.0", "10", "12", "T3"], ["12", "38.3", "", "11", "12", "T3"]]
    prompts = csv.DictReader((folder / "prompt_scores.csv").open(encoding="utf-8"))
    row = next(
        r
        for r in prompts
        if (r["sample_id"], r["model_id"]) == ("sgb_nosearch_0228", "quillmark_ultra")
    )
    assert (row["status"], row["counts_as"], row["overall_9_raw"]) == (
        "missing_generation",
        "0",
        "0.0",
    )


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize(
    ("name", "file"),
    [("10_prompts.html", "prompt_scores.csv"), ("07_compare.html", "pairwise_tests.csv")],
)
def test_csv_downloads_resolve_from_file_urls(tab, demo_release, name, file):
    page = _open(tab, demo_release / NOTEBOOKS / name)
    hrefs = page.evaluate(
        f"[...document.querySelectorAll('a[href$=\"/{file}\"]')].map(a => a.href)"
    )
    assert hrefs and all(Path(h.removeprefix("file://")).is_file() for h in hrefs)


@pytest.mark.slow
@pytest.mark.browser
def test_what_changed_names_each_transition(tab, changed_site):
    page = _open(tab, changed_site / NOTEBOOKS / "09_changes.html")
    rows = page.evaluate("""[...document.querySelectorAll('#changes-pairs tbody tr')].map(tr =>
        [...tr.cells].map(td => td.textContent))""")
    lost = [r for r in rows if r[2] == "scored → missing evaluation (counts 0)"]
    assert len(lost) == 2 and all(r[0] == "Pixelwright 2" and r[4] == "0 · no eval" for r in lost)
    assert "2 results scored → missing evaluation (counts 0)" in page.inner_text("body")
    assert page.sg_problems == []


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("name", ["10_prompts.html", "09_changes.html"])
def test_phone_width_keeps_the_page_still(tab, changed_site, name):
    page = _open(tab, changed_site / NOTEBOOKS / name, width=390)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 and page.sg_problems == []
    if name == "09_changes.html":  # Δ and rank after are on the screen, not behind a scroll
        for table, col in (("changes-scores", "Δ"), ("changes-ranks", "Rank after")):
            right = page.evaluate(
                f"document.querySelector('#{table} thead "
                f'th[data-sg-col="{col}"]\').getBoundingClientRect().right'
            )
            assert right <= 390
