"""Sortable HTML tables (static HTML, made DataTables by ``searchgen-nb.js`` from their
``data-sg-options``): a numeric column sorts by its cells' leading number or ``data-order``
(empty for N/A: last both ways); null shows "N/A"; all text from the data is escaped."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple
from urllib.parse import quote

import pandas as pd

from searchgen_nb.declaration import COMPONENT_LABELS, OVERALL_9_COMPONENTS, PARTITION
from searchgen_nb.evidence import clip

from . import texts
from .cards import card_href
from .display import HTMLFragment
from .fmt import (
    NA,
    Shown,
    coverage_text,
    esc,
    format_number,
    interval_text,
    is_null,
    is_number,
    pair_cell,
    pct_label,
    rank_text,
)
from .views import TagColumn, explorer_filters, in_rank_order, rank_gaps

_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
#: DataTables' own "entries per page" choices.
_LENGTH_MENU = (10, 25, 50, 100)

#: Anchor (on the Methods page) that each leaderboard column links to.
METHOD_ANCHORS = {
    "rank": "ranking",
    "model": "models",
    "type": "models",
    "overall_9": "overall-9",
    "overall_10": "overall-10",
    "coverage": "coverage",
    "missing_policy": "missing-policy",
    "interval": "uncertainty",
    "rank_range": "uncertainty",
    **{c: "component-" + c.replace("_", "-") for c in COMPONENT_LABELS},
}

#: Header tooltips (``title``) of the leaderboard columns.
_DEFINITIONS = texts.mapping("column_definitions.yaml")
COLUMN_DEFINITIONS = {
    **{k: v for k, v in _DEFINITIONS.items() if k != "component"},
    **{c: _DEFINITIONS["component"].format(label=label) for c, label in COMPONENT_LABELS.items()},
}


class Head(NamedTuple):
    """A header of :func:`data_table`: label (default: the column name), tooltip, "?" link."""

    label: str | None = None
    title: str | None = None
    href: str | None = None


def _check_id(table_id: str) -> None:
    if not isinstance(table_id, str) or not _ID_RE.match(table_id):
        raise ValueError(f"table_id must match {_ID_RE.pattern!r}, got {table_id!r}")


def _paging(page_length: int | None) -> dict:
    if page_length is None:
        return {"paging": False}
    n = int(page_length)  # a length not in the menu is added, else the menu shows no choice
    return {
        "paging": True,
        "pageLength": n,
        **({} if n in _LENGTH_MENU else {"lengthMenu": sorted({*_LENGTH_MENU, n})}),
    }


def _th(key: str, head: Head, numeric: bool, *classes: str) -> str:
    """A header cell; ``classes``: e.g. a set of columns shown or hidden together."""
    label, cls = head.label or key, " ".join(["sg-num" if numeric else "sg-text", *classes])
    title, inner = f' title="{esc(head.title)}"' if head.title else "", esc(label)
    if head.href:
        link = f'href="{esc(head.href)}"' + ("" if head.title else f' title="{esc(label)}"')
        inner += f'\n<a class="sg-help" {link}>?</a>'
    return f'<th class="{cls}" data-sg-col="{esc(key)}"{title}>{inner}</th>'


def _link(inner: str, href: str | None) -> str:
    return f'<a href="{esc(href)}">{inner}</a>' if href else inner


def _shown_td(cell: Shown, href: str | None = None) -> str:
    """A cell shown as :class:`~searchgen_nb.book.fmt.Shown` says (a number, a status)."""
    cls = f' class="{cell.cls}"' if cell.cls else ""
    title = f' title="{esc(cell.title)}"' if cell.title else ""
    return f'<td{cls} data-order="{esc(cell.key)}"{title}>{_link(esc(cell.text), href)}</td>'


def _num_td(value: Any, decimals: int | None = None, na: str = NA, href: str | None = None) -> str:
    text, key = format_number(value, decimals, na)
    return _shown_td(Shown(text, key, cls="" if key else "sg-na"), href)


def _text_td(value: Any, href: str | None = None) -> str:
    cls, text = (' class="sg-na"', NA) if is_null(value) else ("", esc(value))
    return f"<td{cls}>{_link(text, href)}</td>"


#: A cell's leading number, as the sort reads a cell without data-order (parseFloat of its HTML)
_LEADING_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_ORDER_ATTR = re.compile(r' data-order="([^"]*)"')


def _sorts_as_shown(td: str) -> bool:
    """True when the cell's HTML sorts as its ``data-order`` says (or it has none)."""
    if not (m := _ORDER_ATTR.search(td)):
        return True
    shown = _LEADING_NUMBER.match(td[td.index(">") + 1 :])
    try:
        return (float(m[1]) if m[1] else None) == (float(shown[0]) if shown else None)
    except ValueError:  # a text key (a model's name)
        return False


def _table(
    table_id: str,
    header: Sequence[str],
    body: Sequence[tuple[str, list[str]]],
    options: Mapping[str, Any],
    caption: str | None = None,
    extra_class: str = "",
    extra_attrs: str = "",
) -> str:
    """The table's HTML; ``body``: ``(<tr ...>, cells)`` per row; ``extra_attrs``: escaped.
    A column keeps ``data-order`` only where a cell sorts otherwise without it (DataTables
    reads it per column); each cell on a line of its own, so a change shows as one line."""
    lean = [all(map(_sorts_as_shown, col)) for col in zip(*(cells for _, cells in body))]
    rows = [
        "\n".join(
            [tr, *(_ORDER_ATTR.sub("", td, 1) if lean[j] else td for j, td in enumerate(cells))]
        )
        + "</tr>"
        for tr, cells in body
    ]
    cls = "sg-table display compact" + (f" {extra_class}" if extra_class else "")
    opts = esc(
        json.dumps(
            options, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    )
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (
        f'<div class="sg-table-wrap" id="{table_id}-wrap">\n'
        f'<table id="{table_id}"{extra_attrs} class="{cls}" data-sg-options="{opts}">'
        f"{cap}<thead><tr>\n"
        + "\n".join(header)
        + "\n</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table></div>"
    )


# --------------------------------------------------------------------------- leaderboard

_TOOLS = (
    '<div class="sg-table-tools" data-sg-for="{}"><label>Type <select data-sg-filter-col='
    '"type"><option value="">all</option><option value="Open">Open</option><option value='
    '"Commercial">Commercial</option></select></label> <button type="button" class="sg-'
    'toggle-components" data-sg-toggle="sg-component" aria-pressed="false">Hide the '
    "components</button></div>"
)
_PENDING = (
    ' <span class="sg-badge sg-unranked-badge" title="results not in yet (pending in the '
    'release config): never ranked">pending</span>'
)


def leaderboard_table(
    rows: Sequence[Mapping[str, Any]],
    table_id: str,
    *,
    min_coverage: float = 0.9,
    pending: frozenset[str] = frozenset(),
    intervals: Mapping[str, Mapping[str, Any]] | None = None,
    ties: Mapping[str, str] | None = None,
    confidence: str = "95%",
    caption: str | None = None,
    prompts_href: str | None = None,
    methods_href: str | None = "methods.html",
    decimals: int = 1,
) -> HTMLFragment:
    """Sortable leaderboard in the contract's order (§ Coverage and ranking); ``intervals``
    adds interval and rank range (``ties`` badges); ``prompts_href``: a ``{model_id}`` template
    linking Coverage; headers link to Methods (``methods_href``, None: no); every figure at
    ``decimals`` places (the release's ``rounding_decimals``)."""
    _check_id(table_id)
    cols = [
        ("rank", "Rank"),
        ("model", "Model"),
        ("type", "Type"),
        ("overall_9", "Overall-9"),
        ("gap", "Gap to next"),
        *(
            [("interval", f"{confidence} interval"), ("rank_range", "Rank range")]
            if intervals
            else []
        ),
        ("overall_10", "Overall-10 (paper-compatible)"),
        ("coverage", "Coverage"),
        ("missing_policy", "Missing policy"),
        *((c, COMPONENT_LABELS[c]) for c in OVERALL_9_COMPONENTS),
    ]
    header = []
    for key, label in cols:  # a definition, a "?" link to Methods; the components one group
        anchor = METHOD_ANCHORS.get(key) if methods_href else None
        href = f"{methods_href}#{anchor}" if anchor else None
        group = ["sg-component"] if key in COMPONENT_LABELS else []
        classes = ["sg-asc-first"] if key == "rank" else group
        header.append(
            _th(
                key,
                Head(label, COLUMN_DEFINITIONS.get(key), href),
                key not in ("model", "type", "missing_policy"),
                *classes,
            )
        )
    gaps, threshold, body = rank_gaps(list(rows)), esc(pct_label(min_coverage)), []
    for row in in_rank_order(list(rows)):
        mid: Any = row.get("model_id")
        unranked = row.get("ranked") is False
        name = row.get("display_name", mid)  # the model cell: name, badge, model_id below
        ident = f'<span class="sg-model-id">{esc(mid)}</span>' if mid is not None else ""
        badge = (
            ""
            if not unranked
            else _PENDING
            if mid in pending
            else (
                f' <span class="sg-badge sg-unranked-badge" '
                f'title="{esc(COLUMN_DEFINITIONS["rank"])}">'
                f"unranked (coverage &lt; {threshold})</span>"
            )
        )
        cells = [
            f'<td class="sg-na" data-order="" title="unranked: coverage below {threshold}">–</td>'
            if unranked
            else _num_td(row.get("rank")),
            f'<td data-order="{esc(name)}">{esc(name)}{badge}{ident}</td>',
            _text_td(row.get("type")),
            _num_td(row.get("overall_9"), decimals),
            _num_td(gaps.get(mid), decimals, na="–"),
            *(
                _uncertainty_tds(intervals.get(mid), (ties or {}).get(mid), decimals)
                if intervals
                else []
            ),
            _num_td(row.get("overall_10"), decimals),
            _coverage_td(row, prompts_href, decimals),
            _text_td(row.get("missing_policy")),
            *[
                _num_td((row.get("components") or {}).get(c), decimals)
                for c in OVERALL_9_COMPONENTS
            ],
        ]
        attrs = ' class="sg-unranked"' if unranked else ""
        attrs += f' data-model-id="{esc(mid)}"' if mid is not None else ""
        body.append((f"<tr{attrs}>", cells))
    options = {"order": [], "autoWidth": False, **_paging(None)}
    table = _table(table_id, header, body, options, caption, "sg-leaderboard")
    return HTMLFragment(_TOOLS.format(table_id) + "\n" + table, f"leaderboard table {table_id}")


def _coverage_td(row: Mapping[str, Any], prompts_href: str | None, decimals: int) -> str:
    """ "719/751 (95.7%)", sorted by the coverage; a link to the prompts without a score."""
    n_scored: Any = row.get("n_scored")
    n_total: Any = row.get("n_total")
    cov: Any = row.get("coverage")
    if is_null(n_scored) or is_null(n_total):
        return _num_td(cov)
    s, t = int(n_scored), int(n_total)
    key = repr(float(cov)) if not is_null(cov) else repr(s / t) if t else ""
    inner = esc(coverage_text(s, t, decimals))
    if prompts_href and row.get("model_id") is not None and s < t:
        link = prompts_href.format(model_id=quote(str(row["model_id"])))
        inner = f'<a href="{esc(link)}" title="its {t - s} prompts without a score">{inner}</a>'
    return f'<td data-order="{esc(key)}">{inner}</td>'


def _uncertainty_tds(cell: Mapping[str, Any] | None, tie: str | None, decimals: int) -> list[str]:
    """The interval and rank-range cells of one leaderboard row (N/A, – without a value)."""
    iv, rk = (cell or {}).get("overall_9"), (cell or {}).get("rank")
    iv_td = (
        f'<td class="sg-na">{NA}</td>'
        if iv is None
        else (f'<td data-order="{esc(repr(float(iv[0])))}">{esc(interval_text(iv, decimals))}</td>')
    )
    if rk is None:
        return [iv_td, '<td class="sg-na">–</td>']
    badge = (
        f' <span class="sg-badge sg-tie" title="cannot be separated from its neighbour in '
        f'rank: tie group {esc(tie)}">≈ {esc(tie)}</span>'
        if tie
        else ""
    )
    return [iv_td, f'<td data-order="{rk[0]}">{esc(rank_text(rk))}{badge}</td>']


# --------------------------------------------------------------------------- prompt explorer

#: Characters of a prompt's text the explorer shows (one line; the card shows it whole).
EXPLORER_TEXT = 60
#: The explorer's columns before its tag columns (``views.TagColumn``).
_EXPLORER_HEADS = [
    ("sample_id", "sample_id", "The prompt's id.", False),
    ("text", "Prompt", "The prompt's text, cut to one line: the whole text is on its card.", False),
]
#: The explorer's figures, after its tag columns.
_EXPLORER_FIGURES = [
    (
        "difficulty",
        "Mean Overall-9",
        "Mean Overall-9 (0–100) of the models with a value on this prompt: low = hard.",
        True,
    ),
    (
        "spread",
        "Spread",
        "Highest minus lowest Overall-9 across models: high = the prompt tells models apart.",
        True,
    ),
]


def _row_values(r: Mapping[str, Any]) -> str:
    """A prompt's ``data-sg-values`` (single-quoted JSON) for the URL filters of the book's
    script: its groups of each kind (``tags``) and non-scored statuses."""
    values = {**r["tags"], **({"statuses": dict(r["statuses"])} if r["statuses"] else {})}
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "'" + text.replace("&", "&amp;").replace("<", "&lt;").replace("'", "&#x27;") + "'"


def _tag_td(column: TagColumn, values: Sequence[str]) -> str:
    """A prompt's cell of a tag column: the partition's finest group, searchable by each of
    its groups; else the groups, space-separated."""
    if column.kind.source == PARTITION:
        return f'<td data-search="{esc(" ".join(values))}">{esc(values[0])}</td>'
    return f"<td>{esc(' '.join(values))}</td>"


def prompt_table(
    rows: Sequence[Mapping[str, Any]],
    models: Sequence[tuple[str, str]],
    table_id: str,
    columns: Sequence[TagColumn],
    *,
    decimals: int | None = None,
    policies: Mapping[str, str] | None = None,
) -> HTMLFragment:
    """The prompt explorer: a row per prompt (``views_audit.prompt_rows``, with its ``text`` or
    None) filtered from the URL; its text cut to :data:`EXPLORER_TEXT` characters; a column
    and a URL filter per tag column (``views.TagColumn``); a column per ``models``
    ``(model_id, name)``: Overall-9, or the status as it counts by ``policies``; a hidden
    column of ``model_id=status`` words for the search; its URL filters for the book's script
    (``views.explorer_filters``, safe ids)."""
    _check_id(table_id)
    header = [_th(key, Head(label, title), num) for key, label, title, num in _EXPLORER_HEADS]
    header += [_th(c.values, Head(c.label, c.title), False) for c in columns]
    header += [_th(key, Head(label, title), num) for key, label, title, num in _EXPLORER_FIGURES]
    header += [
        _th(
            f"m:{m}",
            Head(name, f"{name} ({m}): Overall-9 on this prompt, or its status when it has none."),
            True,
        )
        for m, name in models
    ]
    header.append('<th class="sg-text sg-hidden" data-sg-col="statuses">statuses</th>')
    body = []
    for r in rows:
        sid, card = esc(r["sample_id"]), esc(card_href(r["sample_id"]))
        # data-search: the page's script adds the prompt text (searchgen-nb.js, prompt card)
        text = r.get("text")
        cells = [
            f'<td data-search="{sid}"><a href="{card}">{sid}</a></td>',
            '<td class="sg-na">–</td>'
            if text is None
            else f'<td class="sg-prompt-text">{esc(clip(text, EXPLORER_TEXT))}</td>',
            *(_tag_td(c, r["tags"][c.values]) for c in columns),
            _num_td(r["difficulty"], decimals),
            _num_td(r["spread"], decimals),
        ]
        cells += [
            _shown_td(
                pair_cell(
                    r["scores"][m],
                    r["statuses"].get(m, "scored"),
                    (policies or {}).get(m),
                    decimals,
                    (r.get("reasons") or {}).get(m),
                )
            )
            for m, _ in models
        ]
        words = " ".join(f"{m}={r['statuses'][m]}" for m, _ in models if m in r["statuses"])
        values = _row_values(r)
        body.append((f"<tr data-sg-values={values}>", [*cells, f"<td>{esc(words)}</td>"]))
    options = {"autoWidth": False, "order": [[0, "asc"]], **_paging(50)}
    note = (
        f'<p class="sg-explorer-filter" id="{table_id}-filter" aria-live="polite"></p>\n'
        f'<div class="sg-table-tools"><button type="button" class="sg-export-rows" '
        f'data-sg-for="{table_id}">Download these rows (CSV)</button></div>'
    )
    filters = explorer_filters(columns)
    filters_json = json.dumps(filters, separators=(",", ":"))  # a line of its own
    attrs = f" data-sg-explorer=\"1\"\ndata-sg-filters='{filters_json}'\n"
    table = _table(table_id, header, body, options, None, "sg-explorer", attrs)
    return HTMLFragment(note + "\n" + table, f"prompt table {table_id}")


# --------------------------------------------------------------------------- generic


def data_table(
    df: Any,
    table_id: str,
    *,
    decimals: int | Mapping[str, int] | None = None,
    order: Sequence[tuple[str, str]] = (),
    page_length: int | None = None,
    heads: Mapping[str, Head] | None = None,
    row_links: Mapping[str, Sequence[str | None]] | None = None,
) -> HTMLFragment:
    """A DataFrame (or records) as a sortable table of every row; a column of numbers only is
    numeric. ``decimals``: int or ``{column: int}``; ``order``: ``[("n", "desc")]``; ``heads``:
    :class:`Head` per column; ``row_links``: ``{column: [href or None]}``."""
    _check_id(table_id)
    frame = df if isinstance(df, pd.DataFrame) else pd.DataFrame(list(df))
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        raise ValueError(f"duplicate column names: {columns}")
    records = list(frame.itertuples(index=False, name=None))
    numeric = [_numeric([r[j] for r in records], frame.iloc[:, j]) for j in range(len(columns))]
    heads, links = heads or {}, [(row_links or {}).get(c) for c in columns]
    decs = [decimals.get(c) if isinstance(decimals, Mapping) else decimals for c in columns]
    header = [_th(c, heads.get(c, Head()), numeric[j]) for j, c in enumerate(columns)]
    body = [
        (
            "<tr>",
            [
                _td(v, numeric[j], decs[j], None if (link := links[j]) is None else link[i])
                for j, v in enumerate(r)
            ],
        )
        for i, r in enumerate(records)
    ]
    options = {
        "autoWidth": False,
        **_paging(page_length),
        "order": [[columns.index(c), d] for c, d in order],
    }
    return HTMLFragment(_table(table_id, header, body, options), f"data table {table_id}")


def _td(value: Any, numeric: bool, decimals: int | None, href: str | None) -> str:
    if isinstance(value, Shown):
        return _shown_td(value, href)
    return _num_td(value, decimals, NA, href) if numeric else _text_td(value, href)


def _numeric(values: list, series: pd.Series) -> bool:
    """Numbers (or :class:`Shown` cells) only, bool excluded; only nulls: by its dtype."""
    if values := [v for v in values if not is_null(v)]:
        return all(is_number(v) or isinstance(v, Shown) for v in values)
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
