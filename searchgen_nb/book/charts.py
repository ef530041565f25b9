"""Charts of the book: Vega-Lite specs made with altair, shown as a ``<div>`` + ``vegaEmbed``.

Every chart is plain ``text/html``: a ``<div id="sg-chart-NAME">`` and a ``<script>`` calling
``vegaEmbed`` (the vendored bundle, :mod:`searchgen_nb.book.assets`) with the spec inlined, keys
sorted, records built explicitly: the same input gives byte-identical HTML. Null means "not
applicable": a grey cell or an "N/A" mark, "N/A" in the tooltip; never 0, never dropped.

A layered chart whose layers draw the same records is made without data; :func:`embed` sets
them as its top-level inline data after altair's ``to_dict`` — the spec altair writes for
records shared by every layer, without altair converting the records value by value.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import altair as alt

from searchgen_nb.constants import COMPONENT_LABELS, OVERALL_9_COMPONENTS, SCORED, STATUSES
from searchgen_nb.numeric import decimal_text, percent, scaled

from .display import HTMLFragment
from .fmt import NA, STATUS_LABELS, exact_diff, format_number, interval_text, is_null, rank_text
from .fmt import number, pct_label, share_text

NA_COLOR = "#d4d4d4"
#: vega-embed options: Vega-Lite mode (the ``$schema`` URL is dropped: no web address in the
#: page), SVG renderer, vega-tooltip (it escapes values), export actions only (no editor link).
EMBED_OPTIONS = {
    "mode": "vega-lite",
    "renderer": "svg",
    "tooltip": True,
    "actions": {"export": True, "source": False, "compiled": False, "editor": False},
}
STATUS_COLORS = {
    SCORED: "#4c78a8",
    "invalid_evaluation": "#e45756",
    "missing_evaluation": "#f58518",
    "missing_generation": "#b279a2",  # not grey: grey means N/A in the other charts
}
#: ``1``: check every chart against the Vega-Lite schema while it is built (slow; the tests
#: switch it on, a release leaves it off: a chart's structure is fixed by this module).
VALIDATE_ENV = "SEARCHGEN_VALIDATE_CHARTS"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def validating_specs() -> bool:
    """Whether charts are checked against the Vega-Lite schema (:data:`VALIDATE_ENV`)."""
    return os.environ.get(VALIDATE_ENV) == "1"


def _chart_builder(build):
    """Build with altair's construction-time schema checks as :func:`validating_specs` says."""

    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        with alt.utils.schemapi.debug_mode(validating_specs()):
            return build(*args, **kwargs)

    return wrapper


# --------------------------------------------------------------------------- embedding

def chart_id(name: str) -> str:
    """The fixed element id for a chart name (``[A-Za-z0-9][A-Za-z0-9_-]*``)."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(f"chart name must match {_NAME_RE.pattern!r}, got {name!r}")
    return f"sg-chart-{name}"


def _json(obj: Any, **kw) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False, **kw)


def dumps_script_json(obj: Any, *, record_lines: bool = False) -> str:
    """JSON safe inside a ``<script>``: sorted keys, no NaN, ``< > &`` U+2028/9 as ``\\uXXXX``.

    Compact; ``record_lines``: indented, every data record (in a ``values`` list or a
    ``datasets`` entry) on a line of its own, so a diff shows a changed figure as one line."""
    if not record_lines:
        text = _json(obj, separators=(",", ":"))
    else:
        tables: list[list] = []

        def lift(node: Any, key: str | None = None, top: bool = False) -> Any:
            if (isinstance(node, list) and node and all(isinstance(r, dict) for r in node)
                    and key is not None and (key == "values" or top)):
                tables.append(node)
                return f"\u0000sg-records-{len(tables) - 1}\u0000"
            if isinstance(node, dict):
                return {k: lift(v, k, top=(key == "datasets")) for k, v in node.items()}
            return [lift(v) for v in node] if isinstance(node, list) else node

        text = _json(lift(obj), indent=1)
        for i, rows in enumerate(tables):
            body = ",\n".join(_json(r, separators=(", ", ": ")) for r in rows)
            text = text.replace(json.dumps(f"\u0000sg-records-{i}\u0000"), f"[\n{body}\n]", 1)
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def chart_html(spec: Mapping[str, Any], name: str) -> str:
    """One chart: a div with a fixed id plus a vegaEmbed call with the spec inlined; a dark
    page (the theme switch, or the system's preference in "auto") gets vega's dark theme."""
    cid = chart_id(name)
    spec = {k: v for k, v in spec.items() if k != "$schema"}
    return (
        f'<div class="sg-chart" id="{cid}" data-sg-chart="{name}">'
        '<p class="sg-chart-fallback">Chart: needs the book\'s vendored vega bundle '
        "(open the built book).</p></div>\n"
        "<script>(function(){"
        f"var el=document.getElementById({json.dumps(cid)});"
        f"var spec={dumps_script_json(spec, record_lines=True)};\n"
        f"var opt={dumps_script_json(EMBED_OPTIONS)};"
        "function go(){if(!window.vegaEmbed){return;}"
        "var t=document.documentElement.dataset.theme;"
        'if(!t||t==="auto"){t=window.matchMedia&&'
        'window.matchMedia("(prefers-color-scheme: dark)").matches?"dark":"light";}'
        'if(t==="dark"){opt.theme="dark";}'
        'el.textContent="";'
        'window.vegaEmbed(el,spec,opt).then(function(){el.setAttribute("data-sg-rendered","1");})'
        '.catch(function(e){el.textContent="Chart error: "+e;});}'
        'if(window.vegaEmbed){go();}else{document.addEventListener("DOMContentLoaded",go);}'
        "})();</script>"
    )


def embed(chart: Any, name: str, *, values: list[dict] | None = None) -> HTMLFragment:
    """An altair chart (or a Vega-Lite dict) as a text/html-only display object; ``values``:
    the records of a layered chart made without data, set after ``to_dict``."""
    spec = chart if isinstance(chart, Mapping) else chart.to_dict(validate=validating_specs())
    if values is not None:
        spec = _with_layer_data(spec, values)
    return HTMLFragment(chart_html(spec, name), f"chart {chart_id(name)}")


def _with_layer_data(spec: Mapping[str, Any], values: list[dict]) -> dict:
    """``spec`` (layers made without data) with ``values`` as its top-level inline data,
    altair's ``empty`` placeholder gone; ValueError for any other data in it."""
    spec = dict(spec)
    datasets = dict(spec.pop("datasets", {}))
    if datasets.pop("empty", [{}]) != [{}] or datasets or "data" in spec:
        raise ValueError("chart made without data has data of its own")
    layers = [dict(layer) for layer in spec.get("layer", [])]
    if any(layer.pop("data", {"name": "empty"}) != {"name": "empty"} for layer in layers):
        raise ValueError("a layer of a chart made without data has data of its own")
    return {**spec, "layer": layers, "data": {"values": values}}


def _layered(name, layers, title, subtitle, values=None, params=(), **size) -> HTMLFragment:
    """The layers as one chart with its title block (``values``: see :func:`embed`)."""
    chart = alt.layer(*layers).add_params(*params) if params else alt.layer(*layers)
    title = alt.Title(title, subtitle=subtitle, anchor="start")
    return embed(chart.properties(**size, title=title), name, values=values)


# --------------------------------------------------------------------------- values

def _plain(value: float | None) -> str:
    """The stored value, shortest round-trip form without exponent (72.25 stays "72.25")."""
    return NA if value is None else decimal_text(value)


def _score(value: float | None, decimals: int) -> dict:
    """A score's record fields: the value, its label and tooltip texts, whether it is N/A."""
    text = format_number(value, decimals)[0]
    return {"value": value, "value_text": text, "value_tip": _plain(value), "is_na": value is None}


def _label(text: Any) -> str:
    """Data text as a chart label: control characters and U+2028/9 become spaces (Vega-Lite
    puts sort labels into expressions, where a raw U+2028 stops the chart)."""
    return _UNSAFE_CHARS.sub(" ", str(text))


def _mid(r: Mapping[str, Any]) -> str:
    return str(r.get("model_id", r.get("display_name")))


def _records(data: Any) -> list[dict]:
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        data = data.to_dict(orient="records")
    return [dict(r) for r in data]


def _model_labels(records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """model_id -> label, in first-seen order; a duplicate display name gets its model_id."""
    names: dict[str, str] = {}
    for r in records:
        names.setdefault(_mid(r), _label(r.get("display_name", _mid(r))))
    counts = Counter(names.values())
    return {m: d if counts[d] == 1 else f"{d} ({_label(m)})" for m, d in names.items()}


def _tips(*fields: str) -> list:
    """Tooltips from ``"field:type", "Title", …`` pairs."""
    return [alt.Tooltip(f, title=t) for f, t in zip(fields[::2], fields[1::2])]


def _white_if(test: str) -> Any:
    return alt.condition(test, alt.value("white"), alt.value("black"))


def _span(values: Sequence[float]) -> float:
    return max(map(abs, values), default=1.0) or 1.0


def _redblue(field: str, title: str, span: float, legend: Any) -> Any:
    scale = alt.Scale(scheme="redblue", domain=[-span, span])
    return alt.Color(field, title=title, scale=scale, legend=legend)


# --------------------------------------------------------------------------- heatmap

def _heat_cell(r: Mapping[str, Any], decimals: int, wide_interval: float | None) -> dict:
    """A heatmap cell's fields from a record (``{}``: a model × tag pair without one: N/A)."""
    v, n_total, n_scored = number(r.get("overall_9")), r.get("n_total"), r.get("n_scored")
    iv, cov = None if is_null(r.get("interval")) else r["interval"], number(r.get("coverage"))
    if not is_null(n_total) and not is_null(n_scored):
        cov_text = share_text(int(n_scored), int(n_total))
    else:
        cov_text = NA if cov is None else f"{decimal_text(scaled(cov, 100), 2)}%"
    wide = iv is not None and wide_interval is not None and iv[1] - iv[0] > wide_interval
    return {**_score(v, decimals), "n_total": NA if is_null(n_total) else int(n_total),
            "coverage_text": cov_text, "interval_text": interval_text(iv, decimals), "wide": wide}


def _heat_cells(recs, tags, decimals, wide_interval, href) -> tuple[list[dict], dict, list]:
    """(cells model-major — a model's cells together: one hunk in a diff —, model labels, tag
    labels in ``tags`` order); a model × tag pair without a record is an N/A cell."""
    labels, cells, tag_labels = _model_labels(recs), {}, {}
    for r in recs:
        m, t = _mid(r), str(r["tag"])
        if (m, t) in cells:
            raise ValueError(f"duplicate heatmap cell: model {m!r}, tag {t!r}")
        name = None if is_null(r.get("tag_name")) else r["tag_name"]
        tag_labels.setdefault(t, _label(f"{t} · {name}" if name else t))
        cells[m, t] = _heat_cell(r, decimals, wide_interval)
        if href is not None:
            cells[m, t]["href"] = href.format(tag=quote(t), model_id=quote(m))
    axis = [tag_labels.setdefault(t, _label(t)) for t in tags]
    extra = sorted({t for _, t in cells} - set(tags))  # tags left out of ``tags``: at the end
    out = [{**(cells.get((m, t)) or _heat_cell({}, decimals, None)), "model": labels[m],
            "model_id": m, "tag": t, "tag_label": tag_labels[t]}
           for m in labels for t in [*tags, *extra] if t in tags or (m, t) in cells]
    return out, labels, axis


def _mark_best_and_relative(cells: list[dict], relative_to, decimals: int) -> None:
    """``best``: the best value of its column; with ``relative_to``, ``shown``: the value minus
    the model's overall (the exact difference of two published values)."""
    best: dict[str, float] = {}
    for c in cells:
        if c["value"] is not None:
            best[c["tag"]] = max(best.get(c["tag"], c["value"]), c["value"])
    for c in cells:
        c["best"] = c["value"] is not None and c["value"] == best.get(c["tag"])
        if relative_to is not None:
            base = relative_to.get(c["model_id"])
            d = None if c["value"] is None or base is None else exact_diff(c["value"], base)
            sign = "+" if d is not None and d > 0 else ""
            c["shown"], c["shown_text"] = d, sign + format_number(d, decimals)[0]


def _heat_colours(cells: list[dict], relative: bool) -> tuple:
    """(cell colour, label field, label colour): 0–100, or around 0 for a ``relative`` view."""
    legend = alt.Legend(orient="top", direction="horizontal", gradientLength=200,
                        titleOrient="left")
    if relative:
        span = _span([c["shown"] for c in cells if c["shown"] is not None])
        colour = _redblue("shown:Q", "Overall-9 − the model's overall", span, legend)
        return colour, "shown_text:N", _white_if(
            f"datum.shown !== null && abs(datum.shown) > {0.6 * span!r}")
    scale = alt.Scale(scheme="viridis", domain=[0, 100], clamp=True)
    return (alt.Color("value:Q", title="Overall-9", scale=scale, legend=legend), "value_text:N",
            alt.condition("datum.value === null || datum.value >= 60",
                          alt.value("black"), alt.value("white")))


@_chart_builder
def heatmap(df: Any, name: str, *, title: str | None = None, subtitle: str | None = None,
            decimals: int = 1, tag_order: Sequence[str] | None = None,
            relative_to: Mapping[str, float | None] | None = None, href: str | None = None,
            wide_interval: float | None = None, confidence: str = "95%") -> HTMLFragment:
    """Model × tag heatmap of Overall-9 (0–100); labels with ``decimals`` places, N/A cells grey.

    ``df``: records (or a DataFrame) with ``model_id``, ``display_name``, ``tag``, ``overall_9``,
    ``n_total``, ``n_scored``, and optionally ``tag_name``, ``coverage``, ``interval``; models in
    first-seen order, tags in ``tag_order`` (default sorted). The best value of each column is
    outlined. ``relative_to`` (``{model_id: overall}``): cells show the value minus the model's
    overall, diverging colours. ``href``: a template with ``{tag}`` and ``{model_id}`` making
    each cell a link. A cell whose interval is wider than ``wide_interval`` gets a dashed
    outline; ``confidence`` names the intervals in the tooltip."""
    recs = _records(df)
    tags = list(tag_order) if tag_order is not None else sorted({str(r["tag"]) for r in recs})
    cells, labels, x_sort = _heat_cells(recs, tags, decimals, wide_interval, href)
    _mark_best_and_relative(cells, relative_to, decimals)
    axis = alt.Axis(labelAngle=-45, labelLimit=220, orient="bottom", labelFontSize=11)
    x = alt.X("tag_label:N", title=None, sort=x_sort, axis=axis)  # labels extend down-left
    y = alt.Y("model:N", title=None, sort=list(labels.values()),
              axis=alt.Axis(labelLimit=260, labelFontSize=11))
    tooltip = _tips("model:N", "Model", "tag_label:N", "Tag", "value_tip:N", "Overall-9")
    if any(c["interval_text"] != NA for c in cells):  # none computed (a slice's tags): no line
        tooltip += _tips("interval_text:N", f"{confidence} interval")
    tooltip += _tips("n_total:N", "Prompts (n_total)", "coverage_text:N", "Coverage (scored)")
    na_tips = list(tooltip)
    if relative_to is not None:
        tooltip.insert(3, alt.Tooltip("shown_text:N", title="vs the model's overall"))
    colour, text, text_colour = _heat_colours(cells, relative_to is not None)
    enc = {"x": x, "y": y, "tooltip": tooltip}
    link = {"href": alt.Href("href:N")} if href is not None else {}
    base = alt.Chart()  # no data: embed sets the layers' (module docstring)
    layers = [
        base.transform_filter("!datum.is_na").mark_rect(
            stroke="white", strokeWidth=1, cursor="pointer" if href else "default",
        ).encode(color=colour, **enc, **link),
        base.transform_filter("datum.is_na").mark_rect(  # (no relative value in the tooltip)
            color=NA_COLOR, stroke="white", strokeWidth=1).encode(**{**enc, "tooltip": na_tips}),
    ]
    if relative_to is None and any(c["best"] for c in cells):
        layers.append(base.transform_filter("datum.best").mark_rect(
            filled=False, stroke="#000000", strokeWidth=2.5).encode(**enc, **link))
    if any(c["wide"] for c in cells):
        layers.append(base.transform_filter("datum.wide").mark_rect(
            filled=False, stroke="#111111", strokeWidth=1.5, strokeDash=[3, 2]).encode(**enc))
    layers.append(base.mark_text(fontSize=11).encode(text=text, color=text_colour, **enc, **link))
    cell = 46 if len(tags) <= 12 else 40 if len(tags) <= 18 else 36  # 22 tags fit a 960 px page
    subtitle = subtitle or f"0–100; grey cells labelled {NA} = not applicable (no value), not 0"
    return _layered(name, layers, title or "Overall-9 by model and tag", subtitle, cells,
                    width=max(cell * len(x_sort), 120), height=max(cell * len(labels), 60))


# --------------------------------------------------------------------------- component bars

@_chart_builder
def component_bars(rows: Any, name: str, *, models: Sequence[str] | None = None,
                   components: Sequence[str] = OVERALL_9_COMPONENTS, title: str | None = None,
                   decimals: int = 1) -> HTMLFragment:
    """Grouped bars of ``models`` (model_ids, default every row) on the ``components``.

    ``rows``: leaderboard rows (``model_id``, ``display_name``, ``components``). A null
    component draws no bar but an "N/A" label in its place; 0.0 is a zero-height bar."""
    by_id = {str(r["model_id"]): r for r in _records(rows)}
    order = list(models) if models is not None else list(by_id)
    missing = [m for m in order if m not in by_id]
    if missing:
        raise ValueError(f"unknown model_ids: {missing}")
    labels = _model_labels([{**by_id[m], "model_id": m} for m in order])
    values = []
    for m in order:
        comps, counts = by_id[m].get("components") or {}, by_id[m].get("component_counts") or {}
        for c in components:
            n = counts.get(c)
            score = _score(number(comps.get(c)), decimals)
            values.append({"model": labels[m], "model_id": m, **score,
                           "component": COMPONENT_LABELS.get(c, c),
                           "n_values": NA if is_null(n) else int(n)})
    sort = list(labels.values())
    x = alt.X("component:N", title=None, sort=[COMPONENT_LABELS.get(c, c) for c in components],
              axis=alt.Axis(labelAngle=-30, labelLimit=200))
    y = alt.Y("value:Q", title="Score (0–100)", scale=alt.Scale(domain=[0, 100]))
    enc = {"x": x, "xOffset": alt.XOffset("model:N", sort=sort), "tooltip": _tips(
        "model:N", "Model", "component:N", "Component", "value_tip:N", "Score (0–100)",
        "n_values:N", "Prompts with a value")}
    colour = alt.Color("model:N", title="Model", sort=sort,
                       legend=alt.Legend(orient="bottom", columns=3))
    label = {"angle": 270, "align": "left", "baseline": "middle", "dx": 3}
    bars = alt.Chart().transform_filter("!datum.is_na")  # no data: embed sets the layers'
    layers = [
        bars.mark_bar().encode(y=y, color=colour, **enc),
        alt.Chart().transform_filter("datum.is_na").mark_text(
            **label, fontSize=10, fontWeight="bold", color="#555555",
        ).encode(y=alt.datum(0), text="value_text:N", **enc),
        bars.mark_text(**label, fontSize=8, color="#333333").encode(
            y=y, text="value_text:N", **enc),
    ]
    subtitle = f"{NA} = component not applicable to any included prompt (no bar), not 0"
    return _layered(name, layers, title or "Components (0–100)", subtitle, values,
                    width=640, height=260)


# --------------------------------------------------------------------------- uncertainty

@_chart_builder
def forest(rows: Sequence[Mapping[str, Any]], intervals: Mapping[str, Mapping[str, Any]],
           name: str, *, title: str, ties: Mapping[str, str] | None = None,
           confidence: str = "95%", decimals: int = 1) -> HTMLFragment:
    """Per model (``rows`` order) the published Overall-9 as a point and its bootstrap interval
    (``intervals[model_id]["overall_9"]``) as a line; unranked models faint. Tooltip: the
    score, the interval, the rank range and the tie group (``ties``)."""
    ties = ties or {}
    labels = _model_labels(rows)
    values = []
    for r in rows:
        m, v = str(r["model_id"]), number(r.get("overall_9"))
        cell = intervals.get(m) or {}
        iv, rk = cell.get("overall_9"), cell.get("rank")
        if v is None:
            continue
        rank = "unranked" if not r.get("ranked") else "–" if rk is None else rank_text(rk)
        values.append({
            "model": labels[m], "value": v, "value_text": format_number(v, decimals)[0],
            "lo": None if iv is None else float(iv[0]), "hi": None if iv is None else float(iv[1]),
            "interval_text": interval_text(iv, decimals), "tie": ties.get(m, "–"),
            "rank_text": rank, "ranked": bool(r.get("ranked")),
        })
    lows = [v["lo"] for v in values if v["lo"] is not None] + [v["value"] for v in values]
    highs = [v["hi"] for v in values if v["hi"] is not None] + [v["value"] for v in values]
    domain = [max(0.0, 5 * math.floor(min(lows, default=0) / 5) - 5),
              min(100.0, 5 * math.ceil(max(highs, default=100) / 5) + 5)]
    y = alt.Y("model:N", title=None, sort=[v["model"] for v in values],
              axis=alt.Axis(labelLimit=260))
    scale = alt.Scale(domain=domain, zero=False, nice=False)
    tooltip = _tips("model:N", "Model", "value_text:N", "Overall-9",
                    "interval_text:N", f"{confidence} interval", "rank_text:N", "Rank range",
                    "tie:N", "Tie group")
    base = alt.Chart()  # no data: embed sets the layers'
    layers = [
        base.transform_filter("datum.lo !== null").mark_rule(strokeWidth=2, color="#4c78a8").encode(
            x=alt.X("lo:Q", title="Overall-9 (0–100)", scale=scale), x2="hi:Q", y=y,
            tooltip=tooltip),
        base.mark_point(filled=True, size=60, color="#1f3b5c").encode(
            x=alt.X("value:Q", scale=scale), y=y, tooltip=tooltip,
            opacity=alt.condition("datum.ranked", alt.value(1.0), alt.value(0.35))),
    ]
    subtitle = (f"point = published Overall-9; line = {confidence} bootstrap interval "
                "(prompt sampling); faint = unranked")
    return _layered(name, layers, title, subtitle, values,
                    width=560, height=max(22 * len(values), 60))


@_chart_builder
def pairwise_heatmap(pairs: Sequence[Mapping[str, Any]], display_names: Mapping[str, str],
                     name: str, *, title: str, confidence: str = "95%",
                     decimals: int = 1) -> HTMLFragment:
    """Ranked models × ranked models (rank order): the cell of row a, column b is
    Overall-9(a) − Overall-9(b) (``pairs`` of ``uncertainty.json``, both directions); pairs
    that cannot be separated (Holm-adjusted p above α) pale with "≈"."""
    order = list(dict.fromkeys(m for p in pairs for m in (p["a"], p["b"])))
    labels = _model_labels([{"model_id": m, "display_name": display_names.get(m, m)}
                            for m in order])
    values = []
    for p in pairs:
        ci = p["ci"]
        for a, b, sign in ((p["a"], p["b"], 1), (p["b"], p["a"], -1)):
            d = sign * float(p["diff"]) + 0.0
            values.append({
                "row": labels[a], "col": labels[b], "diff": d,
                "text": ("" if p["separable"] else "≈") + format_number(d, decimals)[0],
                "interval_text": interval_text(
                    None if ci is None else ci if sign == 1 else [-ci[1], -ci[0]], decimals),
                "p": _plain(p["p"]), "p_holm": _plain(p["p_holm"]), "sep": bool(p["separable"]),
                "separable": "yes" if p["separable"] else "no (tie)",
            })
    sort = list(labels.values())
    pos = {label: i for i, label in enumerate(sort)}
    values.sort(key=lambda v: (pos[v["row"]], pos[v["col"]]))  # row-major: a model's pairs together
    span = _span([v["diff"] for v in values])
    enc = {
        "x": alt.X("col:N", title="minus (column)", sort=sort,
                   axis=alt.Axis(labelAngle=-40, labelLimit=200, orient="top")),
        "y": alt.Y("row:N", title="Model (row)", sort=sort, axis=alt.Axis(labelLimit=220)),
        "tooltip": _tips("row:N", "Model", "col:N", "minus", "text:N", "Δ Overall-9",
                         "interval_text:N", f"{confidence} interval of Δ", "p:N", "p",
                         "p_holm:N", "Holm-adjusted p", "separable:N", "Separable"),
    }
    legend = alt.Legend(orient="bottom", direction="horizontal", gradientLength=200)
    base = alt.Chart()  # no data: embed sets the layers'
    layers = [
        base.mark_rect(stroke="white", strokeWidth=1).encode(
            color=_redblue("diff:Q", "Δ Overall-9", span, legend),
            opacity=alt.condition("datum.sep", alt.value(1.0), alt.value(0.3)), **enc),
        base.mark_text(fontSize=11).encode(
            text="text:N", color=_white_if(f"abs(datum.diff) > {0.6 * span!r}"),
            **enc),
    ]
    subtitle = ("row minus column, public 0–100 scale; pale with ≈ = not separable "
                "(Holm-adjusted p above α)")
    return _layered(name, layers, title, subtitle, values,
                    width=40 * len(order), height=40 * len(order))


# --------------------------------------------------------------------------- compare any models

@_chart_builder
def compare_picker(records: Sequence[Mapping[str, Any]], groups: Sequence[str],
                   models: Sequence[str], name: str, *, title: str) -> HTMLFragment:
    """Components of any models in any group, chosen in the page: a menu picks the group, the
    legend the models (the first three shown). ``records``: one per group × model × component
    with ``group``, ``model`` (display name), ``component``, ``value`` and ``value_text``."""
    group_pick = alt.param(name="group_pick", value=groups[0],
                           bind=alt.binding_select(options=list(groups), name="Group "))
    model_pick = alt.selection_point(name="model_pick", fields=["model"], bind="legend",
                                     value=[{"model": m} for m in models[:3]])
    comp_order = list(dict.fromkeys(r["component"] for r in records))
    scale = alt.Scale(domain=list(models))
    legend = alt.Legend(orient="bottom", columns=4, symbolLimit=0, symbolOpacity=1)  # full swatches
    # the records stay on the base chart: on the layer, altair names the picker's view otherwise
    base = alt.Chart(alt.Data(values=list(records))).transform_filter("datum.group === group_pick")
    picker = base.mark_point(opacity=0).encode(
        x=alt.X("component:N", sort=comp_order, title=None),
        color=alt.Color("model:N", title="Models (click; shift-click to add)", scale=scale,
                        legend=legend),
    ).add_params(model_pick)
    axis = alt.Axis(labelAngle=-30, labelLimit=200, labelFontSize=11)
    bars = base.transform_filter(model_pick).transform_filter("datum.value !== null")
    bars = bars.mark_bar().encode(
        x=alt.X("component:N", sort=comp_order, title=None, axis=axis),
        xOffset=alt.XOffset("model:N", sort=list(models)),
        y=alt.Y("value:Q", title="Score (0–100)", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("model:N", scale=scale, legend=None),
        tooltip=_tips("model:N", "Model", "component:N", "Component", "value_text:N",
                      "Score (0–100)"),
    )
    subtitle = (f"pick models in the legend and a group in the menu below the chart; {NA} "
                "components draw no bar")
    return _layered(name, [picker, bars], title, subtitle, params=[group_pick],
                    width=680, height=280)


# --------------------------------------------------------------------------- coverage

@_chart_builder
def coverage_bars(df: Any, name: str, *, min_coverage: float | None = 0.9,
                  title: str | None = None) -> HTMLFragment:
    """Per model, its prompts by status as 100 % stacked bars labelled with its coverage
    ("95.7% (719/751)"); a dashed rule at ``min_coverage`` (the ranking threshold) if given.
    ``df``: per model ``model_id``, ``display_name`` and a count per status."""
    recs = _records(df)
    labels = _model_labels(recs)
    values, ends = [], []
    for r in recs:
        mid = _mid(r)
        missing = [s for s in STATUSES if s not in r or is_null(r[s])]
        if missing:
            raise ValueError(f"coverage_bars: model {mid!r} has no count for status {missing[0]!r}")
        counts = {s: int(r[s]) for s in STATUSES}
        total = sum(counts.values())
        cov = share_text(counts[SCORED], total)
        values += [{"model": labels[mid], "model_id": mid, "status": STATUS_LABELS[s],
                    "status_order": i, "count": counts[s], "n_total": total, "coverage_text": cov,
                    "share": (counts[s] / total * 100) if total else 0.0,
                    "share_text": percent(counts[s], total)}
                   for i, s in enumerate(STATUSES)]
        ends.append({"model": labels[mid], "coverage_text": cov, "end": 100.0})
    y = alt.Y("model:N", title=None, sort=list(labels.values()), axis=alt.Axis(labelLimit=260))
    names = [STATUS_LABELS[s] for s in STATUSES]
    scale = alt.Scale(domain=names, range=[STATUS_COLORS[s] for s in STATUSES])
    layers = [
        alt.Chart(alt.Data(values=values)).mark_bar(size=18).encode(
            x=alt.X("share:Q", title="Share of prompts (%)", stack="zero",
                    scale=alt.Scale(domain=[0, 100])),
            y=y, order=alt.Order("status_order:Q", sort="ascending"),
            color=alt.Color("status:N", title="Status", sort=names, scale=scale,
                            legend=alt.Legend(orient="bottom")),
            tooltip=_tips("model:N", "Model", "status:N", "Status", "count:Q", "Prompts",
                          "share_text:N", "Share of prompts", "coverage_text:N",
                          "Coverage (scored)")),
        alt.Chart(alt.Data(values=ends)).mark_text(align="left", dx=4, fontSize=10).encode(
            x=alt.X("end:Q"), y=y, text="coverage_text:N"),
    ]
    subtitle = "stacked: " + " / ".join(names)
    if min_coverage is not None:
        layers.append(alt.Chart(alt.Data(values=[{"threshold": float(min_coverage) * 100}]))
                      .mark_rule(strokeDash=[4, 3], color="#333333").encode(
                          x="threshold:Q", tooltip=_tips("threshold:Q", "Ranking threshold (%)")))
        subtitle += f"; dashed line = ranking threshold {pct_label(min_coverage)}"
    return _layered(name, layers, title or "Coverage by model", subtitle,
                    width=480, height=alt.Step(26))
