"""Sortable HTML tables for the book (DataTables, vendored; see :mod:`searchgen_nb.book.assets`).

Each table is complete static HTML: every row is in the page (no downsampling, readable
without JavaScript). The vendored ``searchgen-nb.js`` turns every ``table.sg-table`` into a
DataTable on page load, with the options in its ``data-sg-options`` attribute. Numeric cells
carry ``data-order`` (the number, or empty for N/A); header class ``sg-num`` gives the column the
``sg-num-na`` sort type, which sorts numerically and keeps N/A last in both directions.

Null is shown as "N/A" (never blank, "nan" or 0); 0.0 is shown as "0.0". All text from the
data is HTML-escaped. Table ids are given by the caller: the output is deterministic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from .display import HTMLFragment
from .fmt import NA, format_number, interval_text, is_null
from .fmt import esc as _esc
from .fmt import is_number as _is_number
from searchgen_nb.constants import COMPONENT_LABELS, OVERALL_9_COMPONENTS
from searchgen_nb.numeric import percent

__all__ = [
    "COLUMN_DEFINITIONS",
    "METHOD_ANCHORS",
    "NA",
    "data_table",
    "format_number",
    "leaderboard_table",
]

_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")

#: Anchor (on the Methods page) that each leaderboard column links to. The Methods page must
#: define these targets, e.g. MyST ``(overall-9)=`` above the heading.
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
COLUMN_DEFINITIONS = {
    "rank": "1-based position by Overall-9 among models whose coverage reaches the ranking "
    "threshold (ties broken by model_id); N/A = unranked.",
    "model": "Model display name (model_id below).",
    "type": "Open or Commercial model.",
    "overall_9": "Overall-9 (0–100): prompt-macro mean of each prompt's mean over the nine public "
    "components (text reference excluded). The default ranking metric.",
    "overall_10": "Overall-10 (0–100, paper-compatible): prompt-macro mean of each prompt's mean "
    "over all ten components, text reference included.",
    "coverage": "Scored prompts / prompts in the group (n_scored/n_total).",
    "gap": "Overall-9 minus the next ranked model's (published values); – for the last ranked and unranked models.",
    "interval": "Bootstrap interval of Overall-9: the range the score takes over resampled prompt sets "
    "(stratified prompt bootstrap); prompt sampling only, not judge noise.",
    "rank_range": "Bootstrap interval of the rank: the ranks the model takes over resampled prompt sets. "
    "≈ T1: cannot be separated from its neighbour in rank (Holm-adjusted p above α); same label = one tie group.",
    "missing_policy": "How non-scored prompts count: zero_fill = as 0 in every score; "
    "exclude = left out (only scored prompts are averaged).",
    **{
        c: f"{label} (0–100): mean over included prompts that have this component; "
        "N/A = no included prompt has it."
        for c, label in COMPONENT_LABELS.items()
    },
}


def _check_id(table_id: str) -> str:
    if not isinstance(table_id, str) or not _ID_RE.match(table_id):
        raise ValueError(f"table_id must match {_ID_RE.pattern!r}, got {table_id!r}")
    return table_id


def _options_attr(options: Mapping[str, Any]) -> str:
    return _esc(json.dumps(options, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False))


#: DataTables' own "entries per page" choices.
_LENGTH_MENU = (10, 25, 50, 100)


def _paging_options(n_rows: int, page_length: int | None) -> dict:
    if page_length is None:
        return {"paging": False}
    options = {"paging": True, "pageLength": int(page_length)}
    if int(page_length) not in _LENGTH_MENU:  # else the "entries per page" box shows no choice
        options["lengthMenu"] = sorted({*_LENGTH_MENU, int(page_length)})
    return options


def _href(methods_href: str | None, anchor: str | None) -> str | None:
    if not methods_href or not anchor:
        return None
    return f"{methods_href}#{anchor}"


def _th(label: str, *, title: str | None, href: str | None, numeric: bool, key: str, asc_first: bool = False, group: str | None = None) -> str:
    """A header cell; ``group``: a class naming a set of columns shown or hidden together."""
    classes = ["sg-num"] if numeric else ["sg-text"]
    if group:
        classes.append(group)
    if asc_first:
        classes.append("sg-asc-first")
    attrs = [f'class="{" ".join(classes)}"', f'data-sg-col="{_esc(key)}"']
    if title:
        attrs.append(f'title="{_esc(title)}"')
    inner = _esc(label)
    if href:
        inner += f' <a class="sg-help" href="{_esc(href)}" title="{_esc(title or label)}">?</a>'
    return f"<th {' '.join(attrs)}>{inner}</th>"


def _num_td(value: Any, decimals: int | None = None, na: str = NA) -> str:
    text, key = format_number(value, decimals, na)
    cls = "sg-num sg-na" if key == "" else "sg-num"
    return f'<td class="{cls}" data-order="{_esc(key)}">{_esc(text)}</td>'


def _text_td(value: Any, na: str = NA, order: str | None = None) -> str:
    if is_null(value):
        return f'<td class="sg-na" data-order="">{_esc(na)}</td>'
    order_attr = f' data-order="{_esc(order)}"' if order is not None else ""
    return f"<td{order_attr}>{_esc(value)}</td>"


def _table(
    table_id: str,
    header_cells: Sequence[str],
    body_rows: Sequence[str],
    options: Mapping[str, Any],
    caption: str | None,
    extra_class: str = "",
    extra_attrs: str = "",
) -> str:
    """The table's HTML; ``extra_attrs``: more attributes of the ``<table>`` (ready, escaped)."""
    cls = "sg-table display compact" + (f" {extra_class}" if extra_class else "")
    cap = f"<caption>{_esc(caption)}</caption>" if caption else ""
    return (
        f'<div class="sg-table-wrap" id="{table_id}-wrap">\n'
        f'<table id="{table_id}"{extra_attrs} class="{cls}" data-sg-options="{_options_attr(options)}">'
        f"{cap}<thead><tr>\n" + "\n".join(header_cells) + "\n</tr></thead>\n<tbody>\n"
        + "\n".join(body_rows)
        + "\n</tbody></table></div>"
    )


# --------------------------------------------------------------------------- leaderboard

def leaderboard_table(
    rows: Sequence[Mapping[str, Any]],
    table_id: str,
    *,
    methods_href: str | None = "methods.html",
    components: Sequence[str] = OVERALL_9_COMPONENTS,
    min_coverage: float = 0.9,
    caption: str | None = None,
    page_length: int | None = None,
    decimals: int | None = None,
    pending: frozenset[str] = frozenset(),
    intervals: Mapping[str, Mapping[str, Any]] | None = None,
    ties: Mapping[str, str] | None = None,
    confidence: str = "95%",
    prompts_href: str | None = None,
) -> HTMLFragment:
    """Sortable leaderboard: one row per model (SPEC §6 rows), default order Overall-9 desc.

    ``prompts_href``: a URL template with ``{model_id}`` (the prompt explorer filtered to the
    group and the model): the coverage cell links to it.
    ``intervals``: ``{model_id: {"overall_9": [lo, hi], "rank": [lo, hi] or None}}`` from
    ``uncertainty.json`` (SPEC §8): adds the columns "<confidence> interval" and "Rank range"
    after Overall-9; ``ties``: ``{model_id: "T1"}`` tie-group badges in the rank-range cell.

    ``pending``: model_ids whose results are not in yet (config ``pending: true``): their rows
    carry a "pending" badge instead of the coverage one (they are never ranked).

    Columns: Rank, Model, Type, Overall-9, Overall-10 (paper-compatible), Coverage
    "n_scored/n_total (xx.x%)", Missing policy, then ``components`` (default the nine public
    ones), so that the figures every reader needs come before the wide component block.
    Rows with ``ranked`` false get class ``sg-unranked``, "–" as rank (sorted last) and an
    "unranked (coverage < 90%)" badge (threshold from ``min_coverage``). Headers carry a ``title`` definition and a "?"
    link to ``{methods_href}#{anchor}`` (:data:`METHOD_ANCHORS`); ``methods_href=None``
    drops the links. Every row is written; no paging unless ``page_length`` is given.
    """
    _check_id(table_id)
    threshold = f"{Decimal(repr(float(min_coverage))) * 100:f}".rstrip("0").rstrip(".") + "%"  # 0.9 → "90%"
    cols: list[tuple[str, str, bool]] = [
        ("rank", "Rank", True),
        ("model", "Model", False),
        ("type", "Type", False),
        ("overall_9", "Overall-9", True),
        ("gap", "Gap to next", True),
        *([("interval", f"{confidence} interval", True), ("rank_range", "Rank range", True)] if intervals else []),
        ("overall_10", "Overall-10 (paper-compatible)", True),
        ("coverage", "Coverage", True),
        ("missing_policy", "Missing policy", False),
        *[(c, COMPONENT_LABELS.get(c, c), True) for c in components],
    ]
    header = [
        _th(
            label,
            title=COLUMN_DEFINITIONS.get(key),
            href=_href(methods_href, METHOD_ANCHORS.get(key)),
            numeric=numeric,
            key=key,
            asc_first=key == "rank",
            group="sg-component" if key in components else None,
        )
        for key, label, numeric in cols
    ]
    ranked_rows = [r for r in rows if r.get("ranked") and not is_null(r.get("overall_9"))]
    ranked_rows.sort(key=lambda r: r.get("rank") or 0)
    gaps = {}
    for a, b in zip(ranked_rows, ranked_rows[1:]):
        gaps[a.get("model_id")] = float(Decimal(repr(float(a["overall_9"]))) - Decimal(repr(float(b["overall_9"]))))
    body = []
    for row in rows:
        ranked = row.get("ranked")
        unranked = ranked is False
        name = row.get("display_name", row.get("model_id"))
        model_cell = f"{_esc(name)}"
        if unranked and row.get("model_id") in pending:
            model_cell += ' <span class="sg-badge sg-unranked-badge" title="results not in yet (pending in the release config): never ranked">pending</span>'
        elif unranked:
            model_cell += (
                f' <span class="sg-badge sg-unranked-badge" title="{_esc(COLUMN_DEFINITIONS["rank"])}">'
                f"unranked (coverage &lt; {_esc(threshold)})</span>"
            )
        if row.get("model_id") is not None:
            model_cell += f'<span class="sg-model-id">{_esc(row["model_id"])}</span>'
        comps = row.get("components") or {}
        n_scored, n_total = row.get("n_scored"), row.get("n_total")
        if is_null(n_scored) or is_null(n_total):
            cov_td = _num_td(row.get("coverage"))
        else:
            cov_key = repr(float(row["coverage"])) if not is_null(row.get("coverage")) else (
                repr(int(n_scored) / int(n_total)) if int(n_total) else ""
            )
            cov_text = f"{int(n_scored)}/{int(n_total)} ({percent(int(n_scored), int(n_total))})"
            cov_inner = _esc(cov_text)
            if prompts_href and row.get("model_id") is not None:
                from urllib.parse import quote

                link = prompts_href.format(model_id=quote(str(row["model_id"])))
                cov_inner = f'<a href="{_esc(link)}" title="the prompts of this group and model">{cov_inner}</a>'
            cov_td = f'<td class="sg-num" data-order="{_esc(cov_key)}">{cov_inner}</td>'
        rank_td = (
            f'<td class="sg-num sg-na" data-order="" title="unranked: coverage below {_esc(threshold)}">–</td>'
            if unranked
            else _num_td(row.get("rank"))
        )
        cells = [
            rank_td,
            f'<td data-order="{_esc(name)}">{model_cell}</td>',
            _text_td(row.get("type")),
            _num_td(row.get("overall_9"), decimals),
            _num_td(gaps.get(row.get("model_id")), decimals, na="–"),
            *(_uncertainty_tds(intervals.get(row.get("model_id")) or {}, (ties or {}).get(row.get("model_id")), decimals) if intervals else []),
            _num_td(row.get("overall_10"), decimals),
            cov_td,
            _text_td(row.get("missing_policy")),
            *[_num_td(comps.get(c), decimals) for c in components],
        ]
        tr_cls = ' class="sg-unranked"' if unranked else ""
        mid = row.get("model_id")
        tr_id = f' data-model-id="{_esc(mid)}"' if mid is not None else ""
        body.append(f"<tr{tr_cls}{tr_id}>{''.join(cells)}</tr>")
    options = {"order": [[3, "desc"]], "autoWidth": False, **_paging_options(len(rows), page_length)}
    tools = (
        f'<div class="sg-table-tools" data-sg-for="{table_id}">'
        '<label>Type <select data-sg-filter-col="type"><option value="">all</option>'
        '<option value="Open">Open</option><option value="Commercial">Commercial</option></select></label> '
        '<button type="button" class="sg-toggle-components" data-sg-toggle="sg-component" aria-pressed="false">Hide the components</button>'
        "</div>"
    )
    return HTMLFragment(
        tools + "\n" + _table(table_id, header, body, options, caption, "sg-leaderboard"), f"leaderboard table {table_id}"
    )


def _uncertainty_tds(cell: Mapping[str, Any], tie: str | None, decimals: int | None) -> list[str]:
    """The interval and rank-range cells of one leaderboard row (N/A without a value)."""
    iv, rk = cell.get("overall_9"), cell.get("rank")
    if iv is None:
        iv_td = f'<td class="sg-num sg-na" data-order="">{NA}</td>'
    else:
        iv_td = f'<td class="sg-num sg-interval" data-order="{_esc(repr(float(iv[0])))}">{_esc(interval_text(iv, decimals))}</td>'
    if rk is None:
        rk_td = '<td class="sg-num sg-na" data-order="">–</td>'
    else:
        text = str(rk[0]) if rk[0] == rk[1] else f"{rk[0]}–{rk[1]}"
        badge = f' <span class="sg-badge sg-tie" title="cannot be separated from its neighbour in rank: tie group {_esc(tie)}">≈ {_esc(tie)}</span>' if tie else ""
        rk_td = f'<td class="sg-num" data-order="{rk[0]}">{_esc(text)}{badge}</td>'
    return [iv_td, rk_td]


# --------------------------------------------------------------------------- prompt explorer

#: URL parameters of the prompt explorer and the row field each one filters: a prompt is shown
#: when the field holds the parameter's value as one whole value (a tag, never a word of it).
EXPLORER_FILTERS = {"stratum": "stratum", "domain": "domains", "failure_mode": "failure_modes", "slice": "slices"}


def _row_values(r: Mapping[str, Any], models: Sequence[tuple[str, str]]) -> str:
    """A prompt's whole values for the explorer's URL filters: the row's ``data-sg-values``
    attribute (single-quoted) holding JSON ``{stratum: [search type, and SearchIntensive],
    domains, failure_modes, slices: [...], statuses: [status of each model, in column order]}``
    (read by ``searchgen-nb.js``; compared as whole strings)."""
    values = {
        "stratum": [r["stratum"]] + ([] if r["stratum"] == "NoSearch" else ["SearchIntensive"]),
        **{k: list(r[k]) for k in ("domains", "failure_modes", "slices")},
        "statuses": [r["statuses"][m] for m, _ in models],
    }
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "'" + text.replace("&", "&amp;").replace("<", "&lt;").replace("'", "&#x27;") + "'"


def prompt_table(
    rows: Sequence[Mapping[str, Any]],
    models: Sequence[tuple[str, str]],
    table_id: str,
    *,
    decimals: int | None = None,
    page_length: int = 50,
    status_short: Mapping[str, str] | None = None,
) -> HTMLFragment:
    """The prompt explorer's table: one row per prompt (``views.prompt_rows``), searchable, and
    filtered from the page's URL (``?domain=FAS&model=m&status=missing_evaluation``; see
    :data:`EXPLORER_FILTERS`) by the book's script. ``models``: ``(model_id, display name)``
    in column order. A model's cell shows its Overall-9, or its status when it has none; a
    hidden column holds ``model_id=status`` words for the status filter."""
    _check_id(table_id)
    short = dict(status_short or {})
    header = [
        _th("sample_id", title="The prompt's id.", href=None, numeric=False, key="sample_id"),
        _th("Stratum", title="Search type: NoSearch, VisualSearch or TextualSearch.", href=None, numeric=False, key="stratum"),
        _th("Domains", title="Domain tags (multi-label).", href=None, numeric=False, key="domains"),
        _th("Failure modes", title="Failure-mode tags (multi-label).", href=None, numeric=False, key="failure_modes"),
        _th("Slices", title="Published evaluation slices holding the prompt.", href=None, numeric=False, key="slices"),
        _th("Difficulty", title="Mean Overall-9 (0–100) of the models with a value on this prompt: low = hard.", href=None, numeric=True, key="difficulty"),
        _th("Spread", title="Highest minus lowest Overall-9 across models: high = the prompt tells models apart.", href=None, numeric=True, key="spread"),
        *[_th(name, title=f"{name} ({m}): Overall-9 on this prompt, or its status when it has none.", href=None, numeric=True, key=f"m:{m}") for m, name in models],
        '<th class="sg-text sg-hidden" data-sg-col="statuses">statuses</th>',
    ]
    body = []
    for r in rows:
        cells = [
            f'<td>{_esc(r["sample_id"])}</td>',
            f'<td data-search="{_esc(r["stratum"] + ("" if r["stratum"] == "NoSearch" else " SearchIntensive"))}">{_esc(r["stratum"])}</td>',
            f'<td>{_esc(" ".join(r["domains"]))}</td>',
            f'<td>{_esc(" ".join(r["failure_modes"]))}</td>',
            f'<td>{_esc(" ".join(r["slices"]))}</td>',
            _num_td(r["difficulty"], decimals),
            _num_td(r["spread"], decimals),
        ]
        for m, _ in models:
            v, st = r["scores"][m], r["statuses"][m]
            cells.append(_num_td(v, decimals) if v is not None else _num_td(None, na=short.get(st, NA)))
        words = " ".join(f"{m}={r['statuses'][m]}" for m, _ in models)
        cells.append(f"<td>{_esc(words)}</td>")
        body.append(f'<tr data-sg-values={_row_values(r, models)}>{"".join(cells)}</tr>')
    options = {"autoWidth": False, "order": [[0, "asc"]], "pageLength": page_length, "paging": True}
    note = f'<p class="sg-explorer-filter" id="{table_id}-filter" aria-live="polite"></p>'
    table = _table(table_id, header, body, options, None, "sg-explorer", extra_attrs=' data-sg-explorer="1"')
    return HTMLFragment(note + "\n" + table, f"prompt table {table_id}")


# --------------------------------------------------------------------------- generic

def data_table(
    df: Any,
    table_id: str,
    *,
    na: str = NA,
    decimals: int | Mapping[str, int] | None = None,
    titles: Mapping[str, str] | None = None,
    links: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    order: Sequence[tuple[str, str]] | None = None,
    caption: str | None = None,
    page_length: int | None = None,
    index: bool = False,
    row_links: Mapping[str, Sequence[str | None]] | None = None,
) -> HTMLFragment:
    """Any DataFrame (or list of dicts) as a sortable table with every row.

    A column is numeric when all its non-null values are numbers (bool excluded); numeric
    cells sort by value with null (shown as ``na``) last. ``decimals``: one int for every float
    column or ``{column: int}``; default shows floats as stored. ``titles``/``links``/``labels``
    give per-column header tooltips, help links and display names. ``order``: e.g.
    ``[("n", "desc")]`` (default: the row order given). ``index=True`` adds the index first.
    ``row_links``: ``{column: [href per row or None]}``: those cells' text becomes a link.
    """
    import pandas as pd

    _check_id(table_id)
    frame = df if isinstance(df, pd.DataFrame) else pd.DataFrame(list(df))
    if index:
        frame = frame.reset_index()
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        raise ValueError(f"duplicate column names: {columns}")
    raw_cols = list(frame.columns)
    records = [list(r) for r in frame.itertuples(index=False, name=None)]
    numeric = []
    for j, _ in enumerate(raw_cols):
        vals = [r[j] for r in records if not is_null(r[j])]
        numeric.append(bool(vals) and all(_is_number(v) for v in vals) or (not vals and _numeric_dtype(frame.iloc[:, j])))
    titles, links, labels = dict(titles or {}), dict(links or {}), dict(labels or {})
    header = [
        _th(labels.get(c, c), title=titles.get(c), href=links.get(c), numeric=numeric[j], key=c)
        for j, c in enumerate(columns)
    ]

    def dec(col: str) -> int | None:
        if isinstance(decimals, Mapping):
            return decimals.get(col)
        return decimals

    body = []
    row_links = dict(row_links or {})
    for i, r in enumerate(records):
        cells = []
        for j, c in enumerate(columns):
            v = r[j]
            td = _num_td(v, dec(c), na) if numeric[j] else _text_td(v, na)
            href = row_links[c][i] if c in row_links else None
            if href:
                head, _, rest = td.partition(">")
                td = f'{head}><a href="{_esc(href)}">{rest[: -len("</td>")]}</a></td>'
            cells.append(td)
        body.append(f"<tr>{''.join(cells)}</tr>")
    options: dict[str, Any] = {"autoWidth": False, **_paging_options(len(records), page_length)}
    if order:
        idx = {c: j for j, c in enumerate(columns)}
        options["order"] = [[idx[c], d] for c, d in order]
    else:
        options["order"] = []
    return HTMLFragment(_table(table_id, header, body, options, caption), f"data table {table_id}")


def _numeric_dtype(series: Any) -> bool:
    try:
        import pandas as pd

        return bool(pd.api.types.is_numeric_dtype(series)) and not pd.api.types.is_bool_dtype(series)
    except Exception:  # pragma: no cover
        return False
