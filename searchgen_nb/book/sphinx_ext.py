"""The book's Sphinx extension (``extra_extensions`` in ``_config.yml``) and the release's check
of the built book: it must load nothing from the web (data contract, § The book)."""

from __future__ import annotations

import re
from pathlib import Path

from searchgen_nb.errors import ReleaseError

_EXTERNAL_RE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


def _page_assets_guard(app, pagename, templatename, context, doctree) -> None:
    """Per page: drop duplicate script/style entries (Jupyter Book 1.0.4 emits sphinx-thebe's
    twice) and the :data:`~searchgen_nb.book.assets.PAGE_SCRIPTS` whose marker the body lacks;
    warn (an error under ``-W``) about a script or style sheet loaded from the web."""
    from sphinx.util import logging

    from searchgen_nb.book.assets import PAGE_SCRIPTS

    body = context.get("body") or ""
    unused = {name for name, marker in PAGE_SCRIPTS.items() if marker not in body}
    for key in ("script_files", "css_files"):
        if not context.get(key):
            continue
        seen, kept = set(), []
        for asset in context[key]:
            # Sphinx 7.4 passes _JavaScript/_CascadingStyleSheet objects (str() is a repr, not
            # the URL); inline scripts have filename None or ""
            url = getattr(asset, "filename", asset)
            url, attrs = "" if url is None else str(url), getattr(asset, "attributes", None) or {}
            k = (url, tuple(sorted((str(a), str(v)) for a, v in attrs.items())))
            unused_here = key == "script_files" and url.split("?")[0].rsplit("/", 1)[-1] in unused
            if k in seen or unused_here:
                continue
            seen.add(k)
            kept.append(asset)
            if _EXTERNAL_RE.match(url):
                logging.getLogger(__name__).warning(
                    "%s: page loads %s from the web (the book must work offline)",
                    pagename,
                    url,
                    type="searchgen",
                    subtype="offline",
                )
        context[key] = kept


def setup(app):
    """Connect :func:`_page_assets_guard`; the extension loads nothing itself."""
    app.connect("html-page-context", _page_assets_guard, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


#: What a built page, style sheet or script would load from the web (an attribute, ``url()`` or
#: ``@import`` naming an ``http(s)://`` or ``//`` URL); an ``<a …>`` tag, a link a reader may
#: follow, is matched whole so that nothing inside it counts.
EXTERNAL_URL = re.compile(
    r"""<a\s[^>]*>
    | (?P<load>(?:\b(?:src|href|action|poster|data)\s*=\s*["']?\s* | url\(\s*["']?
                | @import\s+["']?)(?:https?:)?//)""",
    re.I | re.X,
)


def external_references(html_dir: Path) -> list[str]:
    """``file: snippet`` for every URL of :data:`EXTERNAL_URL` in the built book."""
    found = []
    for path in sorted(html_dir.rglob("*")):
        if path.suffix in (".html", ".css", ".js") and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            if "//" not in text:  # what loads ends in "//" (most of the card data has none)
                continue
            found += [
                f"{path.relative_to(html_dir)}: {text[m.start() : m.end() + 40]!r}"
                for m in EXTERNAL_URL.finditer(text)
                if m["load"]
            ]
    return found


def check_offline(html_dir: Path) -> None:
    """Raise :class:`ReleaseError` naming what the built book would load from the web."""
    if leaks := external_references(html_dir):
        raise ReleaseError(
            "book references external URLs (it must open offline):\n  " + "\n  ".join(leaks[:20])
        )
