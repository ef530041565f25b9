"""The book's breakdowns (data contract, § The book, § Breakdowns), driven by the manifest's
declaration: the Breakdowns page has, per breakdown, its heatmap and a leaderboard per group
with intervals and tie groups, and its downloads; the prompt explorer a column and a URL filter
per breakdown; the prompt card the prompt's groups as tags (the release of ``test_breakdowns``).
A release without breakdowns says so in one sentence and its explorer and cards are as before."""

from __future__ import annotations

import json
import re

import pytest
from factory import make_release, model, prompt, result
from test_breakdowns import BREAKDOWNS, TABLE

from searchgen_nb.book import cards, pages, views
from searchgen_nb.config import load_config
from searchgen_nb.pipeline import run_data

#: Model a's and b's checklist score in a row of ``TABLE``.
AB = (("a", 4), ("b", 5))


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("breakdown-book")
    prompts = [
        prompt(sid, difficulty=d, **({} if lv is None else {"level": lv}), theme=th)
        for sid, d, lv, th, _, _ in TABLE
    ]
    results = {(m, row[0]): result({"checklist:0": row[i]}) for row in TABLE for m, i in AB}
    models = {"a": model("A"), "b": model("B")}
    uncertainty = {"n_bootstrap": 200, "seed": 3}
    cfg = make_release(
        root / "in", prompts, models, results, breakdowns=BREAKDOWNS, uncertainty=uncertainty
    )
    run_data(load_config(cfg), root / "out", progress=False)
    return views.Release(root / "out")


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    root = tmp_path_factory.mktemp("no-breakdown-book")
    prompts = [prompt("q1", difficulty="easy"), prompt("q2")]
    results = {("a", p["sample_id"]): result({"checklist:0": 3}) for p in prompts}
    cfg = make_release(root / "in", prompts, {"a": model("A")}, results)
    run_data(load_config(cfg), root / "out", progress=False)
    return views.Release(root / "out")


def _html(fragments) -> str:
    return "\n".join(f.html for f in fragments)


def _table(html: str, table_id: str) -> str:
    return re.search(rf'<table id="{table_id}".*?</table>', html, re.S).group(0)


def _row(table: str, model_id: str) -> list[str]:
    """The cells' texts of one model's row (tags stripped)."""
    row = re.search(rf'<tr data-model-id="{model_id}">(.*?)</tr>', table, re.S).group(1)
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


def test_each_breakdown_has_its_heatmap_and_a_board_per_group(release):
    html = _html(pages.breakdown_sections(release))
    for name in ("difficulty", "level", "theme"):
        assert f'<h2 id="breakdown-{name}">By {name}</h2>' in html
        assert f'<a href="#breakdown-{name}">by {name}</a>' in html
        assert f'"heatmap-{name}"' in html and f'"heatmap-{name}-relative"' in html
        assert f"downloads/leaderboard_by_{name}.csv" in html
        assert f"downloads/leaderboard_by_{name}.json" in html
    # a heatmap cell opens its prompts: the explorer filtered by the breakdown's own key
    assert r"\"10_prompts.html?by_difficulty=\" + datum.tag_q" in html
    # every group of every breakdown, numbers by their JSON text (level 1, 2)
    ids = re.findall(r'<table id="(leaderboard-[^"]+)"', html)
    assert ids == [
        "leaderboard-difficulty-easy",
        "leaderboard-difficulty-hard",
        "leaderboard-level-1",
        "leaderboard-level-2",
        "leaderboard-theme-x",
        "leaderboard-theme-y",
    ]
    # easy = p1, p3: B (1.5 + 3) / 2 → 75.0 first, A (3 + 0) / 2 → 50.0; two prompts do not
    # separate them: one tie group; p4 has no difficulty
    easy = _table(html, "leaderboard-difficulty-easy")
    assert "difficulty easy · 2 prompts · 2 of 2 models ranked" in easy
    b, a = _row(easy, "b"), _row(easy, "a")
    assert (b[0], b[1], b[3], b[4]) == ("1", "Bb", "75.0", "25.0")
    assert (a[0], a[3]) == ("2", "50.0")
    assert "≈ T1" in b[6] and "≈ T1" in a[6]
    assert re.fullmatch(r"\d+\.\d–\d+\.\d", b[5])  # the bootstrap interval of the group
    assert "1 prompt has no value" in html.split('id="breakdown-level"')[0]
    # the heatmap's tooltip names a column by the breakdown, not "Tag"
    assert '"title": "Difficulty"' in html and '"title": "Tag"' not in html


def test_explorer_has_a_column_and_a_filter_per_breakdown(release):
    table = pages.prompt_explorer(release)[1].html
    filters = json.loads(re.search(r"data-sg-filters='([^']*)'", table)[1])
    assert filters == {
        "filters": {
            "stratum": "stratum", "domain": "domains", "failure_mode": "failure_modes",
            "slice": "slices", "by_difficulty": "by_difficulty", "by_level": "by_level",
            "by_theme": "by_theme",
        },
        "lists": ["domains", "failure_modes", "slices", "by_difficulty", "by_level", "by_theme"],
    }  # fmt: skip
    heads = re.findall(r'data-sg-col="([^"]+)"', table)
    assert heads[:9] == [
        *("sample_id", "text", "stratum", "domains", "failure_modes", "slices"),
        *("by_difficulty", "by_level", "by_theme"),
    ]
    rows = dict(re.findall(r"<tr data-sg-values='([^']*)'>\n<td data-search=\"(\w+)\"", table))
    values = {sid: json.loads(v) for v, sid in rows.items()}
    assert {k: values["p1"][k] for k in ("by_difficulty", "by_level", "by_theme")} == {
        "by_difficulty": ["easy"],
        "by_level": ["1"],
        "by_theme": ["x", "y"],
    }
    assert (values["p4"]["by_difficulty"], values["p4"]["by_level"]) == ([], [])
    p1 = table.split('data-search="p1"')[1].split("</tr>")[0]
    assert "<td>easy</td>\n<td>1</td>\n<td>x y</td>" in p1
    # the breakdown "difficulty" is the only column that says so: the mean has its own name
    labels = re.findall(r"<th [^>]*>([^<]+)<", table)
    assert [t for t in labels if "ifficulty" in t] == ["difficulty"]
    assert "Mean Overall-9" in labels


def test_card_shows_the_prompts_groups_as_tags(release, tmp_path):
    by_id = {c["id"]: c for c in cards.card_data(release)}
    assert by_id["p1"]["tags"][4:] == [["easy"], ["1"], ["x", "y"]]
    assert by_id["p4"]["tags"][4:] == [[], [], ["y"]]
    cards.write_card_assets(release.folder, tmp_path)
    index = (tmp_path / "index.js").read_text(encoding="utf-8")
    labels = '"tags":["Stratum","Domains","Failure modes","Slices","difficulty","level","theme"]'
    assert labels in index


def test_without_breakdowns_the_page_says_so_and_nothing_else_changes(plain):
    assert [f.html for f in pages.breakdown_sections(plain)] == [
        '<p class="sg-note">This release declares no breakdown (its config has no '
        "<code>breakdowns</code>).</p>"
    ]
    table = pages.prompt_explorer(plain)[1].html
    assert "by_" not in table
    assert len(cards.card_data(plain)[0]["tags"]) == 4


@pytest.mark.slow
@pytest.mark.browser
def test_demo_breakdowns_in_browser(demo_release, browser):
    """The demo's Breakdowns page draws its heatmaps; the explorer filtered by a breakdown shows
    that group's prompts; a card opened from it marks the group among its breakdown tags."""
    from browser import Page

    html = demo_release / "_build" / "html"
    board = json.loads((demo_release / "public/data/leaderboard_by_difficulty.json").read_text())
    page = Page(browser, html / "book/notebooks/11_breakdowns.html")
    assert page.wait_for_charts() == 4  # difficulty and language, absolute and relative
    assert page.page.locator("table.sg-leaderboard").count() == 5  # easy, hard, medium; en, zh
    lst = Page(browser, html / "book/notebooks/10_prompts.html", "by_difficulty=hard")
    lst.page.wait_for_selector("#prompt-explorer[data-sg-ready]")
    shown = lst.page.get_attribute("#prompt-explorer", "data-sg-shown")
    assert int(shown) == board["hard"][0]["n_total"]
    assert "by difficulty hard" in lst.page.locator("#prompt-explorer-filter").inner_text()
    lst.page.locator("#prompt-explorer tbody a").first.click()
    lst.page.wait_for_selector(".sg-card-models", timeout=15000)
    assert "tag=hard" in lst.page.url
    tags = lst.page.locator(".sg-card-tags").all_inner_texts()
    assert "difficulty: hard" in tags and any(t.startswith("language: ") for t in tags)
    assert lst.page.locator(".sg-card-this").first.inner_text() == "hard"
    assert (page.errors, lst.errors) == ([], [])
