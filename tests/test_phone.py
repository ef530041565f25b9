"""The result pages on a phone (390 px wide): no page scrolls sideways as a whole, every forest
plot's points are on screen, a chart wider than the screen scrolls in its own frame under a cue,
the console stays silent (no warning, no error), and the compare picker adds a model by a tap."""

from __future__ import annotations

import pytest
from browser import Page

PHONE = {"width": 390, "height": 844}
PAGES = ("04_leaderboard", "05_domains", "06_failure_modes", "07_compare")
#: Per forest plot, its drawn width and points (the plot takes the frame's width).
FORESTS = """() => [...document.querySelectorAll('.sg-chart[data-sg-chart^="forest"]')]
  .map(c => [c.querySelector('svg').getBoundingClientRect().width > 250,
             c.querySelectorAll('.mark-symbol path').length > 0])"""
#: Forest-plot points outside the window: [chart, left, right] each.
POINTS_OFF_SCREEN = """() => [...document.querySelectorAll('.sg-chart[data-sg-chart^="forest"]')]
  .flatMap(c => [...c.querySelectorAll('.mark-symbol path')].map(p => {
    const r = p.getBoundingClientRect();
    return [c.id, Math.round(r.left), Math.round(r.right)];
  })).filter(([id, l, r]) => l < 0 || r > window.innerWidth)"""
BARS = (
    "() => document.querySelectorAll("
    "'#sg-chart-compare-picker .role-mark.layer_1_marks path').length"
)


@pytest.mark.slow
@pytest.mark.browser
def test_result_pages_fit_a_phone(browser, demo_release):
    notebooks = demo_release / "_build" / "html" / "book" / "notebooks"
    logged: list[str] = []
    Page(browser, notebooks.parent / "intro.html", viewport=PHONE).page.on(
        "console",
        lambda m: logged.append(f"{m.type}: {m.text}") if m.type in ("warning", "error") else None,
    )
    for stem in PAGES:
        pg = Page(browser, notebooks / f"{stem}.html", viewport=PHONE)
        pg.open_slices()
        pg.wait_for_charts()
        assert pg.page.evaluate("document.documentElement.scrollWidth") <= 390, stem
        assert pg.page.evaluate(POINTS_OFF_SCREEN) == [], stem
        assert all(all(f) for f in pg.page.evaluate(FORESTS)), stem
        if stem == "05_domains":  # 22 columns: the heatmap scrolls in its frame, and says so
            assert pg.page.locator("#sg-chart-heatmap-domain.sg-scrolls").count() == 1
        if stem == "07_compare":
            assert pg.page.evaluate(BARS) == 3 * 9
            legend = pg.page.locator("#sg-chart-compare-picker g.role-legend-label text")
            legend.filter(has_text="Driftpaint").first.click()  # a tap: no shift key
            pg.page.wait_for_function(f"() => ({BARS})() === 4 * 9", timeout=5000)
        assert (pg.errors, pg.external) == ([], []), stem
    assert logged == []
