"""Sphinx extension of the book (``sphinx: extra_extensions: [searchgen_nb.book.sphinx_ext]``):
per page, drops duplicated script/style entries and the vendor scripts the page does not use
(:data:`searchgen_nb.book.assets.PAGE_SCRIPTS`), and fails the build (with ``-W``) on any
script or style sheet loaded from the web — the book must open offline."""

from __future__ import annotations

import re

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
