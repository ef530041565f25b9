"""The whole release through papermill and Jupyter Book, checked in headless Chromium.

Runs a small fixture release (a null component, a ``<script>`` display name, a model
without results) and reads the session's demo release (``conftest.demo_release``), then
opens the built pages from disk. Tests that run a release are marked ``slow``; those that
open Chromium, ``browser``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from book_fixture import EVIL, MODELS, PROMPTS, RESULTS
from browser import Page
from conftest import TEST_EPOCH
from factory import make_release, read_artifacts

from searchgen_nb import pipeline
from searchgen_nb.book.notebooks import check_executed, execute_notebook
from searchgen_nb.book.release import run_release
from searchgen_nb.book.sphinx_ext import check_offline, external_references
from searchgen_nb.config import load_config
from searchgen_nb.errors import ReleaseError
from searchgen_nb.notebook import open_page
from searchgen_nb.pipeline import run_data


@pytest.fixture(autouse=True)
def _reproducible_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)


def page_path(site: Path, name: str) -> Path:
    return site / "_build" / "html" / "book" / "notebooks" / f"{name}.html"


@pytest.mark.slow
def test_release_publishes_everything(fixture_release):
    _, site, outcome = fixture_release
    assert sorted(p.name for p in (site / "public" / "data").iterdir()) == [
        "CHANGES.md",
        "changes.json",
        "leaderboard_by_domain.json",
        "leaderboard_by_failure_mode.json",
        "leaderboard_by_slice.json",
        "leaderboard_by_stratum.json",
        "leaderboard_overall.json",
        "manifest.json",
        "previews",
        "prompt_evidence.jsonl",
        "prompt_scores.jsonl",
        "schemas",
        "thumbs",
        "uncertainty.json",
        "validation_report.json",
    ]
    assert (site / "_build" / "html" / "index.html").exists()
    # Sphinx's .buildinfo hashes a configuration holding the environment's absolute paths (two
    # fresh clones, each with its own .venv, published different bytes); it is not published
    assert not (site / "_build" / "html" / ".buildinfo").exists()
    assert [p.name for p in outcome.notebooks] == [
        "01_extract.ipynb",
        "02_aggregate.ipynb",
        "03_validate.ipynb",
        "04_leaderboard.ipynb",
        "05_domains.ipynb",
        "06_failure_modes.ipynb",
        "07_compare.ipynb",
        "08_audit.ipynb",
        "09_changes.ipynb",
        "10_prompts.ipynb",
        "11_breakdowns.ipynb",
    ]
    assert external_references(site / "_build" / "html") == []
    # the kernels' IPython folder is the work folder's, not the user's, and holds no history
    assert (site / "build" / "release" / "ipython" / "profile_default").is_dir()
    assert list((site / "build" / "release" / "ipython").rglob("history.sqlite*")) == []


@pytest.mark.slow
def test_pages_load_only_the_vendor_scripts_they_use(fixture_release):
    """Vega only where a chart is drawn, DataTables only where a table is enhanced (parsing
    both costs every page a quarter of a second); the opened pages stay free of script errors
    (the browser tests)."""
    import re

    html = fixture_release[1] / "_build" / "html" / "book"

    def vendor(page: str) -> list[str]:
        return re.findall(
            r'<script src="[^"]*/(vega-embed|datatables)\.bundle\.js',
            (html / page).read_text(encoding="utf-8"),
        )

    assert vendor("notebooks/04_leaderboard.html") == ["vega-embed", "datatables"]
    assert vendor("notebooks/09_changes.html") == ["datatables"]  # tables of the changes, no chart
    assert vendor("intro.html") == []


@pytest.mark.slow
def test_executed_notebooks_are_normalized(fixture_release):
    _, site, outcome = fixture_release
    for path in outcome.notebooks:
        text = path.read_text()
        assert (
            "/tmp/" not in text.replace(str(site), "<site>") or "staging" in text
        )  # only the staging parameter
        assert str(site) not in text and ".releases" not in text, (
            path.name
        )  # no path of where it ran
        assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text), (
            path.name
        )  # no time (generated_at)
        nb = nbformat.read(path, as_version=4)
        assert set(nb.metadata["papermill"]) == {"parameters"}
        assert [c["id"] for c in nb.cells] == [f"cell-{i:02d}" for i in range(len(nb.cells))]
        for c in nb.cells:
            assert "execution" not in c.metadata and "papermill" not in c.metadata
            for out in c.get("outputs", []):
                assert out.get("output_type") != "error"


@pytest.mark.slow
@pytest.mark.browser
def test_fixture_book_in_browser(fixture_release, browser):
    """The fixture book's result pages, each opened once: every chart drawn, N/A cells (never 0)
    and the ``<script>`` name as text; then what the leaderboard and audit pages must do."""
    _, site, _ = fixture_release
    expected = {
        "04_leaderboard": 5,
        "05_domains": 2,
        "06_failure_modes": 2,
        "07_compare": 3,
        "08_audit": 1,
    }
    for name, n in expected.items():
        pg = Page(browser, page_path(site, name))
        assert pg.wait_for_charts() == n, name
        svg_text = pg.page.evaluate(
            "() => [...document.querySelectorAll('.sg-chart svg text')].map(t => "
            "t.textContent).join(' ')"
        )
        if name in ("05_domains", "06_failure_modes"):
            assert "N/A" in svg_text  # the exclude model without results: N/A cells, not 0
            assert "<script>" in svg_text  # model label drawn as text
        if name == "07_compare":
            assert "N/A" in svg_text  # text rendering applies to nothing
            assert "Δ Overall-9 between ranked models" in svg_text  # the pairwise matrix
        if name == "04_leaderboard":
            assert (
                "Overall-9 with 95% intervals" in svg_text and "All · slice" in svg_text
            )  # one forest plot per group with values
            _check_fixture_leaderboard(pg)
        if name == "08_audit":
            _check_fixture_audit(pg)
        assert (pg.errors, pg.dialogs, pg.external) == ([], [], []), name


def _check_fixture_leaderboard(pg: Page) -> None:
    """Rows sort by a clicked header; the ``<script>`` name is text; N/A and a real 0.0 differ."""
    table = pg.page.locator("table#leaderboard-all")
    rows = table.locator("tbody tr")
    assert rows.count() == 3
    names = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(3)]
    assert names[0].startswith("Good Model")  # default: Overall-9 descending
    assert any(EVIL in n for n in names)  # the <script> name is text
    assert pg.page.locator("table#leaderboard-all script").count() == 0
    # sort by Model (ascending): "<script>…" sorts before "Empty" and "Good"
    header = table.locator("thead th").nth(1)
    box = header.bounding_box()
    pg.page.mouse.click(box["x"] + 5, box["y"] + 5)
    pg.page.wait_for_function(
        "(first) => document.querySelector('table#leaderboard-all tbody tr "
        "td:nth-child(2)').innerText !== first",
        arg=names[0],
        timeout=5000,
    )
    sorted_names = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(3)]
    assert sorted_names != names
    assert sorted_names == sorted(sorted_names, key=str.lower)
    # a component that applies to no prompt shows N/A; a real zero shows 0.0
    headers = [h.get_attribute("data-sg-col") for h in table.locator("thead th").all()]
    text_rendering_col = headers.index("text_rendering")
    cells = {
        sorted_names[i].split("\n")[0]: rows.nth(i)
        .locator("td")
        .nth(text_rendering_col)
        .inner_text()
        for i in range(3)
    }
    # Good: every prompt scored, none has text rendering → N/A. Empty: excluded, nothing → N/A.
    # Evil: zero_fill, its missing prompt counts 0 for every component → a real 0.0
    assert cells == {"Good Model": "N/A", "Empty Model pending": "N/A", EVIL: "0.0"}  # flagged row


def _check_fixture_audit(pg: Page) -> None:
    """The validation result with every check named; the missing-result counts of a model."""
    text = pg.page.inner_text("main")
    assert "Validation: every release check passed." in text
    for check in ("expected_counts", "aggregates", "order_invariance", "strict_json"):
        assert check in text
    assert "Missing evaluation" in text
    row = pg.page.locator("table#status-counts tbody tr", has_text="Empty Model")
    cells = row.locator("td").all_inner_texts()
    # Empty Model: no result and no image for any of the 4 prompts → 4 missing_generation
    assert cells[:7] == ["Empty Model", "empty", "0", "0", "0", "4", "4"]


@pytest.mark.slow
def test_failed_release_publishes_nothing(fixture_release):
    cfg, site, outcome = fixture_release
    published = {
        "data": read_artifacts(site / "public" / "data"),
        "html": (
            site / "_build" / "html" / "book" / "notebooks" / "04_leaderboard.html"
        ).read_bytes(),
        "nb": outcome.notebooks[0].read_bytes(),
    }
    bad = cfg.parent / "bad.yml"
    data = yaml.safe_load(cfg.read_text())
    data["expected"] = {"n_prompts": 751}
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(
        ReleaseError,
        match=r"(?s)notebook 03_validate.ipynb: cell \d+ .*raised ValidationFailed: .*check "
        r"expected_counts failed.*4 prompts, expected 751",
    ):
        run_release(bad, log=lambda m: None, output_root=site)
    assert read_artifacts(site / "public" / "data") == published["data"]
    assert (
        site / "_build" / "html" / "book" / "notebooks" / "04_leaderboard.html"
    ).read_bytes() == published["html"]
    assert outcome.notebooks[0].read_bytes() == published["nb"]


def test_a_book_that_would_load_from_the_web_fails_the_release(tmp_path):
    """A script, a stylesheet, a CSS ``url()`` or ``@import`` from the network is named with its
    file and stops the release (check_offline runs on the built book before anything is
    published); a link a reader may follow is no load."""
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "page.html").write_text(
        '<p>x</p><script src="https://cdn.example/vega.js"></script>\n<a '
        'href="https://example.org">a link</a>'
        "<link rel=stylesheet HREF = '//fonts.example/f.css'><img data-x=1 src=img.png>",
        encoding="utf-8",
    )
    (tmp_path / "site.css").write_text(
        'b { background: url( "http://x.example/b.png") }\n@import "https://y.example/c.css";',
        encoding="utf-8",
    )
    (tmp_path / "local.js").write_text(
        "// a comment, not a URL: src=x\nvar u = 'https://in.a.string';", encoding="utf-8"
    )
    found = [
        (name, ast.literal_eval(snippet))
        for name, snippet in (f.split(": ", 1) for f in external_references(tmp_path))
    ]
    assert [(name, snippet[: snippet.index("//") + 2]) for name, snippet in found] == [
        ("book/page.html", 'src="https://'),
        ("book/page.html", "HREF = '//"),
        ("site.css", 'url( "http://'),
        ("site.css", '@import "https://'),
    ]
    assert (
        found[0][1] == 'src="https://cdn.example/vega.js"></script>\n<a href="'
    )  # the match and 40 characters
    loads = r"^book references external URLs .*\n  book/page.html: 'src=\"https://cdn"
    with pytest.raises(ReleaseError, match=loads):
        check_offline(tmp_path)
    (tmp_path / "book" / "page.html").write_text('<a href="https://x.org">a</a>', encoding="utf-8")
    (tmp_path / "site.css").unlink()
    check_offline(tmp_path)


def test_every_code_cell_hides_its_source_in_the_book():
    """A reader sees prose, tables and charts; code stays one click away ("hide-input") or out
    of the book (the parameters cell): a new cell without its tag shows raw code on the page."""
    root = Path(__file__).resolve().parents[1] / "notebooks"
    untagged = [
        f"{path.name} cell {cell.get('id')}"
        for path in sorted(root.glob("[0-9][0-9]_*.ipynb"))
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code"
        and not {"hide-input", "remove-cell"} & set(cell.metadata.get("tags", []))
    ]
    assert untagged == []


def test_error_output_or_early_exit_blocks_the_book():
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("1"), nbformat.v4.new_code_cell("2")]
    )
    nb.cells[0].execution_count = 1
    nb.cells[0].outputs = [
        nbformat.v4.new_output("error", ename="SystemExit", evalue="0", traceback=[])
    ]
    with pytest.raises(ReleaseError, match="notebook x.ipynb: cell 0 raised SystemExit: 0"):
        check_executed(nb, "x.ipynb")
    nb.cells[0].outputs = []
    with pytest.raises(ReleaseError, match="notebook x.ipynb: cell 1 never ran"):
        check_executed(nb, "x.ipynb")


#: The demo book's pages with charts or large tables, visited by one half of
#: test_demo_book_in_browser, the other pages by the other half (the two halves can run on the
#: two test workers at once).
DEMO_RESULT_PAGES = ("04_leaderboard", "05_domains", "06_failure_modes", "07_compare", "10_prompts")


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("part", ["results", "other pages"])
def test_demo_book_in_browser(browser, demo_release, part):
    """Every page of the demo book, opened once, fresh from disk: no script or console error
    (the theme used to log "Got invalid theme mode" on each), no dialog, no request leaving
    the disk, every chart drawn (slice sections opened); then what each page must show. In two
    halves: the result pages (:data:`DEMO_RESULT_PAGES`) and the others."""
    html = demo_release / "_build" / "html"
    paths = sorted(
        p
        for p in html.rglob("*.html")
        if "_static" not in p.parts and p.name not in ("search.html", "genindex.html")
    )
    assert len(paths) >= 13 and {p.stem for p in paths} >= set(DEMO_RESULT_PAGES)
    if part == "results":
        paths = [p for p in paths if p.stem in DEMO_RESULT_PAGES]
    else:
        assert external_references(html) == []
        paths = [p for p in paths if p.stem not in DEMO_RESULT_PAGES]
    explorer = (
        _explorer_link(html / "book" / "notebooks") if part == "results" else ""
    )  # opened from a domain heatmap cell
    charts = {}
    for path in paths:
        pg = Page(
            browser, path, query=explorer.split("?")[1] if path.name == "10_prompts.html" else ""
        )
        if (
            'http-equiv="refresh"' in path.read_text(encoding="utf-8").lower()
        ):  # index.html: a redirect to the intro
            pg.page.wait_for_url("**/book/intro.html")
        else:
            pg.open_slices()
            charts[path.stem] = pg.wait_for_charts()
        if path.stem in ("04_leaderboard", "intro", "methods"):
            assert "Synthetic demo data" in pg.page.inner_text("body"), path.name
        if path.stem == "04_leaderboard":
            _check_demo_leaderboard(pg.page)
            _check_type_filter_and_component_toggle(pg)
        if path.stem == "07_compare":
            _check_compare_picker(pg)
        if path.stem == "10_prompts":
            _check_prompt_explorer(pg, explorer, path.parent)
        if path.stem == "05_domains":
            # light charts for a light system (dark: test_book_follows_the_dark_theme) …
            assert (
                pg.page.evaluate(
                    "() => document.querySelector('#sg-chart-heatmap-domain "
                    "svg').style.backgroundColor"
                )
                == "white"
            )
            # … and 22 domain columns fit a 1280 px window, without sideways scrolling
            pg.page.set_viewport_size({"width": 1280, "height": 1000})
            svg, box = pg.page.evaluate(
                "() => { const c = document.querySelector('#sg-chart-heatmap-domain'); return "
                "[c.querySelector('svg').getBoundingClientRect().width, c.clientWidth]; }"
            )
            assert 0 < svg <= box, (svg, box)
        assert (pg.errors, pg.dialogs, pg.external) == ([], [], []), (
            path.name
        )  # the page's load and what the checks did
    # domains, failure modes (absolute and relative), compare (components and pairs): the full set
    # and three slices each; the leaderboard's forests (All and four strata, three slices); audit;
    # the compare picker; the breakdowns (difficulty and language, absolute and relative)
    drawn = (
        {"04_leaderboard": 8, "05_domains": 8, "06_failure_modes": 8, "07_compare": 9}
        if part == "results"
        else {"08_audit": 1, "11_breakdowns": 4}
    )
    assert {k: v for k, v in charts.items() if v} == drawn


def _explorer_link(notebooks: Path) -> str:
    """The link of the domain heatmap's cell (FAS, Halcyon Draw) to the prompt explorer, made
    in the chart from the cell of the heatmaps' data block in the page."""
    import json
    import re

    page_text = (notebooks / "05_domains.html").read_text(encoding="utf-8")
    block = re.search(
        r'<script type="application/json" id="sg-data-heatmap-domain">(.*?)</script>',
        page_text,
        re.S,
    ).group(1)
    cell = next(
        r
        for r in json.loads(block)["values"]
        if r.get("tag") == "FAS" and r.get("model_id") == "halcyon_draw"
    )
    assert cell["n_total"] == 23 and "href" not in cell  # the chart makes the cell's link
    assert 'datum.tag_q + \\"\\u0026model=\\" + datum.model_id_q' in page_text
    return "10_prompts.html?domain=FAS&model=halcyon_draw"


def _check_prompt_explorer(pg: Page, link: str, html: Path) -> None:
    """Opened from a domain heatmap cell, the explorer shows exactly that cell's prompts; the
    status filter of a model works; a leaderboard's coverage cell (of ``html``, the notebooks'
    pages) opens its group's prompts; the page stays light."""
    import re

    assert link == "10_prompts.html?domain=FAS&model=halcyon_draw"
    pg.page.wait_for_selector("table#prompt-explorer[data-sg-shown]")
    assert pg.page.get_attribute("table#prompt-explorer", "data-sg-shown") == "23"
    assert pg.page.inner_text("#prompt-explorer-filter").startswith(
        "Showing the 23 prompts of: domain FAS, model Halcyon Draw."
    )
    shown = pg.page.locator("table#prompt-explorer tbody tr").all_inner_texts()
    assert len(shown) == 23 and all("FAS" in row for row in shown)
    pg.page.goto(
        (html / "10_prompts.html").as_uri() + "?model=pixelwright_2&status=invalid_evaluation"
    )
    pg.page.wait_for_selector("table#prompt-explorer[data-sg-shown]")
    assert (
        pg.page.get_attribute("table#prompt-explorer", "data-sg-shown") == "3"
    )  # its three invalid evaluations
    # a leaderboard's coverage cell: the group's prompts without a score (SearchIntensive =
    # Visual + Textual: 651 − 627 scored)
    board = (html / "04_leaderboard.html").read_text(encoding="utf-8")
    href = (
        re.search(
            r'href="(10_prompts\.html\?stratum=SearchIntensive&amp;model=quillmark_ultra&amp;status=not_scored)"',
            board,
        )
        .group(1)
        .replace("&amp;", "&")
    )
    pg.page.goto((html / "10_prompts.html").as_uri() + "?" + href.split("?")[1])
    pg.page.wait_for_selector("table#prompt-explorer[data-sg-shown]")
    assert pg.page.get_attribute("table#prompt-explorer", "data-sg-shown") == "24"
    tags = (html / "05_domains.html").read_text(encoding="utf-8")
    assert (
        'href="10_prompts.html?domain=FAS&amp;model=halcyon_draw"' in tags
    )  # the per-model tag tables link too
    assert (html / "10_prompts.html").stat().st_size < 3_000_000


def _check_type_filter_and_component_toggle(pg: Page) -> None:
    """The leaderboard's model-type filter and the button that hides the nine components."""
    pg.page.wait_for_selector("table#leaderboard-all[data-sg-ready]")
    tools = pg.page.locator('.sg-table-tools[data-sg-for="leaderboard-all"]')
    heads = pg.page.locator("table#leaderboard-all thead th").count()
    tools.locator("select").select_option("Open")
    rows = pg.page.locator("table#leaderboard-all tbody tr").all_inner_texts()
    assert len(rows) == 4 and all(
        "\tOpen\t" in r for r in rows
    )  # Brushwell, Sketchloom ×2, Driftpaint
    tools.locator("button").click()
    assert (
        pg.page.locator("table#leaderboard-all thead th").count() == heads - 9
    )  # the nine components, as a group
    assert pg.page.locator('table#leaderboard-all thead th[data-sg-col="overall_9"]').count() == 1
    tools.locator("button").click()
    assert pg.page.locator("table#leaderboard-all thead th").count() == heads


def _check_compare_picker(pg: Page) -> None:
    """The Compare page's picker: every group is in the page; choosing one and adding a model
    in the legend redraws without rerunning anything."""
    bars = (
        "() => document.querySelectorAll("
        "'#sg-chart-compare-picker .role-mark.layer_1_marks path').length"
    )
    assert pg.page.evaluate(bars) == 3 * 9  # the top three, nine components
    swatches = (
        "() => [...document.querySelectorAll('#sg-chart-compare-picker g.role-legend-symbol path')]"
        ".map(p => p.getAttribute('opacity'))"
    )
    assert pg.page.evaluate(swatches)[:4] == [
        "1",
        "1",
        "1",
        "0.35",
    ]  # the picked models show their colour
    chart = pg.page.locator("#sg-chart-compare-picker")
    options = chart.locator("select option").all_inner_texts()
    assert options[0] == "All" and "domain FAS · Fashion" in options and len(options) == 5 + 22 + 12
    chart.locator("select").select_option(label="domain FAS · Fashion")
    chart.locator("g.role-legend-symbol path, g.role-legend-label text").filter(
        has_text="Driftpaint"
    ).first.click(modifiers=["Shift"])
    pg.page.wait_for_function(
        f"() => ({bars})() === 4 * 9", timeout=5000
    )  # redrawn with the fourth model


def _check_demo_leaderboard(page) -> None:
    """The demo's leaderboard page: 13 models; the five stratum tables of the full set, then one
    section per other slice with its own five (the published v1.1 counts)."""
    assert page.locator("table#leaderboard-all tbody tr").count() == 13
    caps = page.locator("table.sg-table caption").all_inner_texts()
    parts = [c.split(" · ") for c in caps]
    assert [p[:2] + p[-1:] for p in parts[:5]] == [
        ["All", "751 prompts", "slice full_751"],
        ["NoSearch", "100 prompts", "slice full_751"],
        ["SearchIntensive", "651 prompts", "slice full_751"],
        ["VisualSearch", "387 prompts", "slice full_751"],
        ["TextualSearch", "264 prompts", "slice full_751"],
    ]
    assert [p[:2] + p[-1:] for p in parts[5:] if p[0] in ("All", "NoSearch")] == [
        ["All", "200 prompts", "slice testmini"],
        ["NoSearch", "26 prompts", "slice testmini"],
        ["All", "100 prompts", "slice testmini_easy"],
        ["NoSearch", "13 prompts", "slice testmini_easy"],
        ["All", "100 prompts", "slice testmini_hard"],
        ["NoSearch", "13 prompts", "slice testmini_hard"],
    ]
    assert page.locator("details.sg-slice > summary").all_inner_texts() == [
        "Slice testmini · 200 prompts",
        "Slice testmini_easy · 100 prompts",
        "Slice testmini_hard · 100 prompts",
    ]


@pytest.mark.slow
def test_committed_outputs_diff_line_by_line(demo_release):
    """No output line of an executed demo notebook exceeds 500 characters (data contract,
    § 16): chart data are one record per line, table rows and header cells one per line."""
    longest = []
    for path in sorted((demo_release / "book" / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                texts = [v for v in (out.get("data") or {}).values() if isinstance(v, str)] + [
                    out.get("text", "")
                ]
                longest += [(len(line), path.name) for text in texts for line in text.split("\n")]
    assert max(longest)[0] <= 500, max(longest)
    heat = (demo_release / "book" / "notebooks" / "05_domains.ipynb").read_text(encoding="utf-8")
    assert (
        '{\\"coverage_text\\": ' in heat and '\\"model\\": \\"Quillmark Ultra\\"' in heat
    )  # one record per line


@pytest.mark.slow
@pytest.mark.browser
def test_what_changed_page_in_browser(fixture_release, browser):
    """The fixture's "What changed" page (previous release: PREVIOUS_RESULTS): first in Results,
    with the rank swap, the unranked model, the lost result and the paired interval; the
    ``<script>`` name stays text. (The changed demo's page is checked in test_changes.)"""
    _, site, _ = fixture_release
    pg = Page(browser, page_path(site, "09_changes"))
    text = pg.page.inner_text("main")
    import json

    previous = json.loads((site / "public/data/changes.json").read_text())["previous"]
    assert (
        f"Compared with the previous release (4 prompts, results sha256 "
        f"{previous['results_sha256'][:12]})." in text
    )
    assert "2026-05-27" not in text  # no time in an executed notebook
    assert f"Rank change in All: Good Model (good) 2 → 1 ↑, {EVIL} (evil) 1 → 2 ↓" in text
    assert f"Rank change in NoSearch: Good Model (good) 2 → 1 ↑, {EVIL} (evil) 1 → unranked" in text
    assert f"{EVIL} (evil): 1 result scored → missing evaluation (counts 0): f03" in text
    # Good gains 50.0 on every prompt (2.5 after, 1 before, raw 0–3): a paired interval of one point
    assert (
        "All 33.3 → 83.3 (+50.0; paired 95% interval +50.0 to +50.0 on the 4 common prompts)"
        in text
    )
    ranks = pg.page.locator("table#changes-ranks tbody tr").all_inner_texts()
    assert len(ranks) == 20 and f"All\t{EVIL}\t↓\t1\t2\t100.0\t25.0" in ranks
    assert (
        f"NoSearch\t{EVIL}\t•\t1\tN/A\t100.0\t0.0" in ranks
    )  # unranked: no rank, a real 0.0 (zero_fill)
    nav = pg.page.locator("nav.bd-docs-nav a").all_inner_texts()
    assert nav.index("What changed") < nav.index("Leaderboard")  # first in Results
    assert pg.dialogs == [] and pg.external == [] and pg.errors == []


@pytest.mark.slow
def test_every_download_link_resolves(demo_release):
    """Every artifact and a CSV of each leaderboard are in the built book; every link to them
    (intro, tables, heatmaps, pairs, audit) points at a file that exists, from disk."""
    import csv
    import re

    html = demo_release / "_build" / "html"
    links = 0
    for page in html.rglob("*.html"):
        for href in re.findall(
            r'href="([^"#]*downloads/[^"#]*)"', page.read_text(encoding="utf-8")
        ):
            target = (page.parent / href).resolve()
            assert target.exists(), (page.name, href)
            links += 1
    assert links >= 40
    names = {p.name for p in (html / "downloads").iterdir()}
    assert {
        "leaderboard_overall.csv",
        "leaderboard_by_slice.csv",
        "prompt_scores.jsonl",
        "uncertainty.json",
        "changes.json",
        "schemas",
    } <= names
    assert (html / "downloads" / "leaderboard_by_domain.json").read_bytes() == (
        demo_release / "public" / "data" / "leaderboard_by_domain.json"
    ).read_bytes()
    rows = list(
        csv.DictReader((html / "downloads" / "leaderboard_overall.csv").open(encoding="utf-8"))
    )
    assert (
        len(rows) == 13
        and rows[0]["model_id"] == "quillmark_ultra"
        and rows[0]["overall_9"] == "75.6"
    )
    unranked = next(r for r in rows if r["model_id"] == "dimlight_mini")
    assert (
        unranked["rank"] == "" and unranked["ranked"] == "false"
    )  # null is an empty cell, never 0
    intro = (html / "book" / "intro.html").read_text(encoding="utf-8")
    assert 'href="../downloads/leaderboard_overall.csv"' in intro


@pytest.mark.slow
@pytest.mark.browser
def test_phone_width_and_print(browser, demo_release):
    """At 390 px the first row's Overall-9 is on screen without scrolling sideways; printed,
    the intro keeps the synthetic-data banner and hides the table controls."""
    html = demo_release / "_build" / "html"
    pg = Page(
        browser,
        html / "book" / "notebooks" / "04_leaderboard.html",
        viewport={"width": 390, "height": 844},
    )
    page = pg.page
    top = page.evaluate(
        "document.querySelector('table#leaderboard-all').getBoundingClientRect().top + "
        "window.scrollY"
    )
    page.evaluate(f"window.scrollTo(0, {top} - 100)")
    cell = page.locator("table#leaderboard-all tbody tr").first.locator("td").nth(3)
    box = cell.bounding_box()
    assert cell.inner_text() == "75.6" and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    page.set_viewport_size({"width": 1000, "height": 1400})
    assert page.locator(".dt-search").first.is_visible()  # the table's search box on screen …
    page.emulate_media(media="print")
    assert not page.locator(".dt-search").first.is_visible()  # … not on paper
    page.goto((html / "book" / "intro.html").as_uri())
    assert page.locator(".bd-header-announcement").first.is_visible()
    assert "Synthetic demo data" in page.locator(".bd-header-announcement").first.inner_text()
    pdf = page.pdf()
    assert pdf[:4] == b"%PDF"
    # … and every printed page of the demo book carries the marking in its top margin
    assert "searchgen-demo-print.css" in (html / "book" / "intro.html").read_text(encoding="utf-8")
    assert "@top-center" in (html / "_static" / "searchgen-demo-print.css").read_text(
        encoding="utf-8"
    )
    assert (pg.errors, pg.dialogs, pg.external) == ([], [], [])


def test_one_notebook_by_hand_with_papermill(tmp_path):
    """`papermill notebooks/NN.ipynb out.ipynb -f release.yml -p staging DIR` runs alone on what
    `searchgen-nb data --out DIR` (or notebooks 01–03) staged."""
    import subprocess
    import sys

    cfg = make_release(tmp_path / "src", PROMPTS, MODELS, RESULTS)
    data = yaml.safe_load(cfg.read_text())
    data["release_config"] = str(
        cfg
    )  # the key papermill -f injects so the notebook finds its config
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    run_data(load_config(cfg), tmp_path / "staging", progress=False)
    before = read_artifacts(tmp_path / "staging")
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "out.ipynb"
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("papermill")),
            "notebooks/05_domains.ipynb",
            str(out),
            "-f",
            str(cfg),
            "-p",
            "staging",
            str(tmp_path / "staging"),
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    nb = nbformat.read(out, as_version=4)
    check_executed(nb, "05_domains.ipynb")
    html = "".join(
        o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", [])
    )
    assert 'id="sg-chart-heatmap-domain"' in html and "Multi-label" in html
    assert read_artifacts(tmp_path / "staging") == before  # read, never rewritten


def test_a_notebook_alone_never_runs_an_earlier_stage(tmp_path):
    """A notebook stops naming the notebook to run first when its staging folder lacks a stage's
    files or was made from another config (data contract, § The book)."""
    cfg = load_config(make_release(tmp_path / "src", PROMPTS, MODELS, RESULTS))
    staging = tmp_path / "staging"
    first = rf"^staging folder {staging} holds no prompt_scores.jsonl: run 01_extract.ipynb first"
    with pytest.raises(ReleaseError, match=first):
        pipeline.ensure_staged(cfg, staging, upto="extract")
    pipeline.extract_stage(cfg, staging, progress=False)
    assert pipeline.ensure_staged(cfg, staging, upto="extract") == staging
    second = r"holds no leaderboard_overall.json: run 02_aggregate.ipynb first .*searchgen-nb data"
    with pytest.raises(ReleaseError, match=second):
        pipeline.ensure_staged(cfg, staging)
    other = load_config(make_release(tmp_path / "o", PROMPTS, MODELS, RESULTS, benchmark="O"))
    with pytest.raises(ReleaseError, match=r"made from another config than .*: run 01_extract"):
        pipeline.ensure_staged(other, staging, upto="extract")
    assert sorted(p.name for p in staging.iterdir()) == [
        "manifest.json",
        "previews",
        "prompt_evidence.jsonl",
        "prompt_scores.jsonl",
        "schemas",
        "thumbs",
    ]


def test_a_notebook_opens_its_page_with_one_call(tmp_path):
    """``open_page`` runs the notebook's stage (01–03) or checks what its page reads: the Audit
    page reads the gate's report, so it names 03 when the report is missing."""
    config = str(make_release(tmp_path / "src", PROMPTS, MODELS, RESULTS))
    staging = tmp_path / "staging"
    for stage in ("extract", "aggregate"):
        open_page(config, staging, runs=stage)
    assert open_page(config, staging).validation_report is None
    with pytest.raises(ReleaseError, match=r"holds no validation_report.json: run 03_validate"):
        open_page(config, staging, reads="validate")
    assert open_page(config, staging, runs="validate").validation_report["passed"] is True
    assert open_page(config, staging, reads="validate").folder == staging
    with pytest.raises(ValueError, match=r"runs='validation', reads='aggregate': not stages"):
        open_page(config, staging, runs="validation")


def test_one_kernel_starts_each_notebook_empty(tmp_path):
    """A release runs its notebooks in one kernel; the second notebook must not see the first's
    names (it would fail when run alone) and counts its executions from 1."""
    from searchgen_nb.book.notebooks import release_kernel, reset_namespace

    first = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import json\nleft_over = 41")]
    )
    second = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("'json' in dir(), 'left_over' in dir()")]
    )
    third = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("left_over + 1")])
    for name, nb in (("a", first), ("b", second), ("c", third)):
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "3", "language": "python"}
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
    with release_kernel(tmp_path) as kernel:
        execute_notebook(tmp_path / "a.ipynb", tmp_path / "a.out.ipynb", {}, tmp_path, kernel)
        reset_namespace(kernel)
        execute_notebook(tmp_path / "b.ipynb", tmp_path / "b.out.ipynb", {}, tmp_path, kernel)
        reset_namespace(kernel)
        with pytest.raises(
            ReleaseError,
            match=r"notebook c.ipynb: cell 0 .*raised NameError: name 'left_over' is not defined",
        ):
            execute_notebook(tmp_path / "c.ipynb", tmp_path / "c.out.ipynb", {}, tmp_path, kernel)
    cell = nbformat.read(tmp_path / "b.out.ipynb", as_version=4).cells[0]
    assert (cell.execution_count, cell.outputs[0]["data"]["text/plain"]) == (1, "(False, False)")


def test_a_book_part_written_beside_the_notebooks_fails_at_its_step(tmp_path):
    """The vendor assets are written in a thread while the notebooks run: a failure there is
    said when the book is staged, at that step and in the system's words, as it was when they
    were written after the notebooks; the parts after it are not written."""
    from searchgen_nb.book.release import beside_notebooks, book_parts, make_book
    from searchgen_nb.config import project_root

    work = tmp_path / "work"
    (work / "src" / "book").mkdir(parents=True)
    (work / "src" / "book" / "vendor").write_text("a file where the folder goes\n")
    vendor = re.escape(str(work / "src" / "book" / "vendor"))
    with pytest.raises(ReleaseError, match=rf"^release, book sources: {vendor}: File exists$"):
        with beside_notebooks() as pool:
            started = {"vendor": pool.submit(book_parts(work)["vendor"])}
            make_book(project_root(), work, False, lambda m: None, started)
    assert not (work / "src" / "book" / "extra").exists()  # downloads and cards: not written


@pytest.mark.parametrize("how", ["dies", "cannot start"])
def test_kernel_failure_is_a_named_release_error(tmp_path, monkeypatch, how):
    from jupyter_client.manager import AsyncKernelManager

    from searchgen_nb.book.notebooks import release_kernel

    async def refuse(self, **kw):
        raise RuntimeError("no python3 kernelspec")

    if how == "cannot start":
        monkeypatch.setattr(AsyncKernelManager, "start_kernel", refuse)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\nos._exit(3)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "3", "language": "python"}
    nbformat.write(nb, tmp_path / "dies.ipynb")
    error = {
        "dies": r"^notebook dies.ipynb: could not be executed: DeadKernelError",
        "cannot start": r"^could not start the notebooks' python3 kernel: "
        r"RuntimeError: no python3 kernelspec$",
    }[how]
    with pytest.raises(ReleaseError, match=error):
        with release_kernel(tmp_path) as kernel:
            execute_notebook(tmp_path / "dies.ipynb", tmp_path / "out.ipynb", {}, tmp_path, kernel)


def test_missing_dataset_stops_before_any_notebook(tmp_path):
    cfg = make_release(tmp_path / "src", PROMPTS, MODELS, {}, data_origin="synthetic-demo")
    (tmp_path / "src" / "prompts.jsonl").unlink()
    with pytest.raises(
        ReleaseError, match=r"dataset .*prompts.jsonl does not exist \(make the demo first"
    ):
        run_release(cfg, log=lambda m: None, output_root=tmp_path / "site")
    assert not (tmp_path / "site" / "public").exists()


@pytest.mark.slow
@pytest.mark.browser
def test_book_follows_the_dark_theme(browser, fixture_release):
    """A reader whose system is dark gets dark charts and no light box around the tables (the
    book tests' release: the same page as the demo's, with less data to draw)."""
    _, site, _ = fixture_release
    pg = Page(browser, page_path(site, "04_leaderboard"), color_scheme="dark")
    assert pg.wait_for_charts() == 5  # the forest plots: All and the four strata (no slices)
    backgrounds = pg.page.evaluate(
        "() => [...document.querySelectorAll('.sg-chart svg.marks')].map(s => "
        "s.style.backgroundColor)"
    )
    pg.page.wait_for_selector("table#leaderboard-all[data-sg-ready]")
    box = pg.page.evaluate(
        "() => getComputedStyle(document.querySelector('.sg-table-tools').parentElement)"
        ".backgroundColor"
    )
    right = pg.page.evaluate(
        "() => [document.querySelector('.dt-search input').getBoundingClientRect().right, "
        "document.querySelector('#leaderboard-all-wrap').getBoundingClientRect().right]"
    )
    assert (
        backgrounds == ["rgb(51, 51, 51)"] * 5
    )  # (white for a light system: test_demo_book_in_browser)
    assert box == "rgba(0, 0, 0, 0)"  # no light box around every table
    assert right[0] <= right[1]  # the search box stays inside its table
    # muted text (a model_id under its name, an N/A cell, a chart's legend) and the demo banner's
    # code stay readable: WCAG AA contrast (4.5) against what they are drawn on (they were fixed
    # greys, #555 on #121212)
    colours = pg.page.evaluate(
        """() => {
          const main = document.querySelector('.bd-article');
          const add = (html) => {
            const d = document.createElement('div'); d.innerHTML = html; main.appendChild(d);
            return d;
          };
          const legend = add('<p class="sg-chart-legend">legend</p>').firstChild;
          const banner = add(
            '<div class="sg-demo-banner">demo <code>searchgen_nb.demo</code></div>'
          ).firstChild;
          const page = getComputedStyle(document.body).backgroundColor;
          const colour = (sel) => getComputedStyle(document.querySelector(sel)).color;
          return {
            model_id: [colour('table#leaderboard-all .sg-model-id'), page],
            na_cell: [colour('table#leaderboard-all td.sg-na'), page],
            legend: [getComputedStyle(legend).color, page],
            banner_code: [
              getComputedStyle(banner.querySelector('code')).color,
              getComputedStyle(banner).backgroundColor,
            ],
          };
        }"""
    )
    assert {k: contrast(*v) >= 4.5 for k, v in colours.items()} == dict.fromkeys(colours, True), (
        colours
    )


def contrast(fg: str, bg: str) -> float:
    """WCAG contrast ratio of two opaque CSS colours ``rgb(r, g, b)``."""

    def luminance(css: str) -> float:
        channels = [int(v) / 255 for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    hi, lo = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
