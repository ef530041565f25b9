"""Headless Chromium for the book tests: Debian's ``chromium-headless-shell`` (Chromium's
headless-only build, the one playwright itself runs headless tests on: the same Blink and V8
as the browser, a fifth less CPU per page here), driven by playwright.

Outside CI a missing browser skips the test; in CI (``CI`` set) it is an error, so a
missing install step cannot turn the browser tests green.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium-headless-shell") or "/usr/bin/chromium-headless-shell"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def launch(p):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            raise RuntimeError(
                "chromium-headless-shell is not installed (apt-get install -y "
                "chromium-headless-shell; make browser)"
            )
        pytest.skip("chromium-headless-shell not installed (make browser)")
    return p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)


#: True once every chart container of the page holds its drawn SVG.
CHARTS_DRAWN = (
    "() => [...document.querySelectorAll('.sg-chart')].every(d => d.querySelector('svg'))"
)
#: The window of every page a test opens with :class:`Page`.
VIEWPORT = {"width": 1400, "height": 1000}
#: One tab per launched browser, reused by every :class:`Page`: a new context and tab per page
#: cost Chromium about a CPU-second each (a new renderer process), twice what the page itself
#: costs; a navigation loads the page fresh from disk all the same.
_TABS: dict = {}


class Page:
    """A book page loaded fresh from disk in the browser's reusable tab, with the requests,
    dialogs and page errors its load caused. Each Page sets the tab's window (``viewport``,
    default :data:`VIEWPORT`), colour scheme (``color_scheme``: the system's light or dark) and
    media (screen) before loading, so a test may change them on its page (print media, a phone
    width) without affecting the next. The tab belongs to the next Page once that one is opened."""

    def __init__(
        self,
        browser,
        path: Path,
        query: str = "",
        viewport: dict | None = None,
        color_scheme: str = "light",
    ):
        self.external: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        tab = _TABS.get(browser)
        if tab is None or tab.is_closed():
            tab = _TABS[browser] = browser.new_page()
            tab.sg_current = self
            # each page starts with empty storage, as in a new context (the theme keeps its mode
            # there)
            tab.add_init_script(
                "try { localStorage.clear(); sessionStorage.clear(); } catch (e) {}"
            )
            tab.on(
                "request",
                lambda r: (
                    None
                    if r.url.startswith(("file:", "data:", "blob:", "about:"))
                    else tab.sg_current.external.append(r.url)
                ),
            )
            tab.on("dialog", lambda d: (tab.sg_current.dialogs.append(d.message), d.dismiss()))
            tab.on("pageerror", lambda e: tab.sg_current.errors.append(str(e)))
            tab.on(
                "console",
                lambda m: (
                    tab.sg_current.errors.append(f"console.{m.type}: {m.text}")
                    if m.type == "error"
                    else None
                ),
            )
        tab.goto("about:blank")  # the previous page's late events go to the previous Page
        tab.sg_current = self
        tab.set_viewport_size(viewport or VIEWPORT)
        tab.emulate_media(media="screen", color_scheme=color_scheme)
        self.page = tab
        tab.goto(path.resolve().as_uri() + (f"?{query}" if query else ""))
        tab.wait_for_load_state("load")

    def open_slices(self) -> None:
        """Open every collapsed slice section (``details.sg-slice``) so its charts are drawn."""
        self.page.evaluate(
            "document.querySelectorAll('details.sg-slice').forEach(d => d.open = true)"
        )

    def wait_for_charts(self) -> int:
        """Wait until every chart container holds an SVG; return the number of charts."""
        n = self.page.locator(".sg-chart").count()
        if n:
            self.page.wait_for_function(CHARTS_DRAWN, timeout=15000)
        return n
