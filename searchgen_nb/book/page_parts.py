"""What every page section of the book shares: the links a notebook page makes (Methods,
the prompt explorer, downloads), the column heads and a few HTML helpers."""

from __future__ import annotations

import hashlib
import re
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup

from searchgen_nb.book import texts
from searchgen_nb.book.display import HTMLFragment, wrapped
from searchgen_nb.book.downloads import CSV_FILES, EXTRA_CSV, board_csv, links_html
from searchgen_nb.book.tables import COLUMN_DEFINITIONS as DEFS
from searchgen_nb.book.tables import METHOD_ANCHORS, Head
from searchgen_nb.book.views import Release
from searchgen_nb.declaration import BOARD_PATTERN, COMPONENT_LABELS, OVERALL_9_COMPONENTS

# The Methods page, the prompt explorer and the book's root (its downloads/) as seen from an
# executed notebook (book/notebooks/NN.html).
METHODS, EXPLORER, ROOT = "../methods.html", "10_prompts.html", "../../"

_TAG_TITLES = texts.mapping("tag_columns.yaml")
TAG_HEADS = {
    "Overall-9": Head(None, DEFS["overall_9"], f"{METHODS}#overall-9"),
    **{
        column: Head(None, _TAG_TITLES[column], f"{METHODS}#{anchor}")
        for column, anchor in (
            ("Prompts", "multi-label"),
            ("Scored", "status"),
            ("Coverage %", "coverage"),
        )
    },
    **{
        COMPONENT_LABELS[c]: Head(None, DEFS[c], f"{METHODS}#{METHOD_ANCHORS[c]}")
        for c in OVERALL_9_COMPONENTS
    },
}


def para(html_text: str, cls: str = "sg-slice-note", label: str = "html") -> HTMLFragment:
    return HTMLFragment(f'<p class="{cls}">{html_text}</p>', label)


def link(anchor: str, text: str) -> str:
    """A link to a section of the Methods page."""
    return f'<a href="{METHODS}#{anchor}">{text}</a>'


def prose(template: str, /, **values: Any) -> str:
    """The book template ``template`` (``book/templates/``) filled with ``values`` (text is
    escaped); the template writes a link to Methods as ``{{ link(anchor, text) }}``."""
    return texts.render(template, link=lambda anchor, text: Markup(link(anchor, text)), **values)


def safe_id(model_id: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9_-]", "-", model_id)
    digest = hashlib.sha1(model_id.encode()).hexdigest()[:6]
    return clean if clean == model_id else f"{clean}-{digest}"


def board_file(release: Release, kind: str) -> str:
    return f"leaderboard_by_{kind}.json" if release.is_full else "leaderboard_by_slice.json"


def slice_filter(release: Release) -> dict[str, str]:
    """The explorer's slice filter of a slice view ({} for the full set)."""
    return {} if release.is_full else {"slice": release.slice_name}


def explorer_link(model_template: bool = False, **filters: str) -> str:
    """URL of the prompt explorer filtered to a group's prompts (``domain=FAS``, ``model=…``);
    ``model_template``: end with ``model={model_id}&status=not_scored`` (a table fills it per
    row: the model's prompts of the group without a score)."""
    parts = [urlencode(filters), "model={model_id}&status=not_scored" if model_template else ""]
    query = "&".join(q for q in parts if q)
    return EXPLORER + ("?" + query if query else "")


def downloads(*names: str) -> HTMLFragment:
    """A "Download: …" line linking the given artifacts (and their CSVs, a breakdown's board's
    too) in the built book."""
    csv = {**CSV_FILES, **EXTRA_CSV}
    csv |= {n: board_csv(n) for n in names if BOARD_PATTERN.fullmatch(n) and n not in csv}
    files = [f for n in names for f in ([csv[n]] if n in csv else []) + [n]]
    return HTMLFragment(links_html(files, ROOT), "downloads")


def with_legend(chart: HTMLFragment, text: str) -> HTMLFragment:
    """A chart followed by its legend note (ready HTML with links to Methods)."""
    return HTMLFragment(
        f'{chart.html}\n<p class="sg-chart-legend">{wrapped(text)}</p>', chart.label
    )
