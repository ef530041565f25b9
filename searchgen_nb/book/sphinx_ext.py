"""Sphinx extension of the book (``sphinx: extra_extensions: [searchgen_nb.book.sphinx_ext]``):
per page, drops duplicated script/style entries and the vendor scripts the page does not use
(:data:`searchgen_nb.book.assets.PAGE_SCRIPTS`), and fails the build (with ``-W``) on any
script or style sheet loaded from the web — the book must open offline (data contract,
§ The book). The release checks the built book once more (:func:`check_offline`): a page, style
sheet or script may load nothing from the web.
"""

from __future__ import annotations

import re
from pathlib import Path

from searchgen_nb.errors import ReleaseError

_EXTERNAL_RE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


def _asset_url(asset: object) -> str:
    # Sphinx 7.4 passes _JavaScript/_CascadingStyleSheet objects (their str() is a repr, not
    # the URL); inline scripts have filename None or "" depending on when they were added.
    filename = getattr(asset, "filename", asset)
    return "" if filename is None else str(filename)


def _asset_key(asset: object) -> tuple:
    attrs = getattr(asset, "attributes", None) or {}
    return (_asset_url(asset), tuple(sorted((str(k), str(v)) for k, v in attrs.items())))


def _page_assets_guard(app, pagename, templatename, context, doctree) -> None:
    """Per page: drop exact duplicate script/style entries and the vendor scripts of
    :data:`~searchgen_nb.book.assets.PAGE_SCRIPTS` whose marker the page's body lacks (Vega on
    a page without a chart), and warn about any web URL.

    Jupyter Book 1.0.4 (Sphinx 7.4) emits sphinx-thebe's and sphinx-togglebutton's inline
    scripts twice on every page; the second ``const THEBE_JS_URL`` throws "Identifier
    'THEBE_JS_URL' has already been declared" in the console. A script or style sheet whose
    URL points at the web (MathJax from a page with math, require.js for widget outputs,
    thebe ``always_load``...) is reported as a warning, which ``-W`` turns into a failed build.
    """
    from sphinx.util import logging

    from searchgen_nb.book.assets import PAGE_SCRIPTS

    logger = logging.getLogger(__name__)
    body = context.get("body") or ""
    unused = {name for name, marker in PAGE_SCRIPTS.items() if marker not in body}
    for key in ("script_files", "css_files"):
        files = context.get(key)
        if not files:
            continue
        seen, kept = set(), []
        for asset in files:
            k = _asset_key(asset)
            name = _asset_url(asset).split("?")[0].rsplit("/", 1)[-1]
            if k in seen or (key == "script_files" and name in unused):
                continue
            seen.add(k)
            kept.append(asset)
            if _EXTERNAL_RE.match(_asset_url(asset)):
                logger.warning(
                    "%s: page loads %s from the web (the book must work offline)", pagename,
                    _asset_url(asset), type="searchgen", subtype="offline",
                )
        context[key] = kept


def setup(app):
    """Sphinx extension (``sphinx: extra_extensions: [searchgen_nb.book.sphinx_ext]``): see
    :func:`_page_assets_guard`. It loads nothing itself; the assets come from ``_config.yml``."""
    app.connect("html-page-context", _page_assets_guard, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


#: What a built page, style sheet or script would load from the web (an attribute, ``url()`` or
#: ``@import`` naming an ``http(s)://`` or ``//`` URL); an ``<a …>`` tag, a link a reader may
#: follow, is matched whole so that nothing inside it counts.
EXTERNAL_URL = re.compile(
    r"""<a\s[^>]*>
    | (?P<load>(?:\b(?:src|href|action|poster|data)\s*=\s*["']?\s* | url\(\s*["']?
                | @import\s+["']?)(?:https?:)?//)""", re.I | re.X)


def external_references(html_dir: Path) -> list[str]:
    """``file: snippet`` for every URL a built page, style sheet or script would load from the
    web (:data:`EXTERNAL_URL`)."""
    found = []
    for path in sorted(html_dir.rglob("*")):
        if path.suffix in (".html", ".css", ".js") and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{path.relative_to(html_dir)}: {text[m.start():m.end() + 40]!r}"
                      for m in EXTERNAL_URL.finditer(text) if m["load"]]
    return found


def check_offline(html_dir: Path) -> None:
    """Raise :class:`ReleaseError` naming what the built book would load from the web (it must
    open offline: data contract, § The book)."""
    leaks = external_references(html_dir)
    if leaks:
        raise ReleaseError("book references external URLs (it must open offline):\n  "
                           + "\n  ".join(leaks[:20]))
