"""Headless Chromium for the book tests (Debian ``chromium`` driven by playwright).

Outside CI a missing browser skips the test; in CI (``CI`` set) it is an error, so a
missing install step cannot turn the browser tests green.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
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
            raise RuntimeError("chromium is not installed (apt-get install -y chromium)")
        pytest.skip("chromium not installed")
    return p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)


class Page:
    """A loaded book page with the requests, dialogs and page errors it caused."""

    def __init__(self, browser, path: Path, query: str = ""):
        self.external: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "blob:", "about:")) else self.external.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        self.page.goto(path.resolve().as_uri() + (f"?{query}" if query else ""))
        self.page.wait_for_load_state("load")

    def wait_for_charts(self) -> int:
        """Wait until every chart container holds an SVG; return the number of charts."""
        n = self.page.locator(".sg-chart").count()
        if n:
            self.page.wait_for_function(
                "() => [...document.querySelectorAll('.sg-chart')].every(d => d.querySelector('svg'))", timeout=15000
            )
        return n
