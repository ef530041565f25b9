"""Charts of the book: altair Vega-Lite specs inlined, keys sorted, in a ``<div>`` drawn by the
vendored ``vegaEmbed`` (same input, same bytes). Null means "not applicable": a grey cell or an
"N/A" mark and tooltip; never 0, never dropped."""

from __future__ import annotations

import functools
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

import altair as alt

from searchgen_nb.constants import SCORED, STATUSES
from searchgen_nb.declaration import COMPONENT_LABELS, OVERALL_9_COMPONENTS
from searchgen_nb.numeric import figure_text

from .display import HTMLFragment
from .fmt import (
    NA,
    STATUS_LABELS,
    interval_text,
    is_null,
    number,
    pct_label,
    percent_text,
    rank_text,
    share_text,
)

NA_COLOR = "#d4d4d4"
#: vega-embed options: Vega-Lite (no ``$schema`` URL in the page), SVG, vega-tooltip (it
#: escapes values), export actions only (no editor link).
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
    "missing_generation": "#b279a2",
}  # not grey: grey means N/A in the other charts
#: ``1``: check every chart against the Vega-Lite schema (slow; the tests switch it on).
VALIDATE_ENV = "SEARCHGEN_VALIDATE_CHARTS"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
P = ParamSpec("P")
R = TypeVar("R")
_SCRIPT_ESCAPES = {ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}


def validating_specs() -> bool:
    """Whether charts are checked against the Vega-Lite schema (:data:`VALIDATE_ENV`)."""
    return os.environ.get(VALIDATE_ENV) == "1"


def unchecked(build: Callable[P, R]) -> Callable[P, R]:
    """``build`` with altair's check of each object as it is made (a Vega-Lite schema walk per
    channel, mark and layer) only while charts are checked (:func:`validating_specs`): a
    chart is the same either way, and :func:`embed` then checks the whole spec."""

    @functools.wraps(build)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with alt.utils.schemapi.debug_mode(validating_specs()):
            return build(*args, **kwargs)

    return wrapper


def chart_id(name: str) -> str:
    """The fixed element id for a chart name; ValueError unless ``[A-Za-z0-9][A-Za-z0-9_-]*``."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(f"chart name must match {_NAME_RE.pattern!r}, got {name!r}")
    return f"sg-chart-{name}"


def _data_id(data_id: str) -> str:
    """The element id of a :func:`data_block` (its name checked as :func:`chart_id` does)."""
    return "sg-data-" + chart_id(data_id).removeprefix("sg-chart-")


def chart_json(obj: Any, **kw) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False, **kw)


def dumps_script_json(obj: Any, *, record_lines: bool = False) -> str:
    """JSON safe inside a ``<script>``: sorted keys, no NaN (ValueError), ``< > &`` U+2028/9 as
    ``\\uXXXX``. Compact; ``record_lines``: indented, every data record (in a ``values`` list or
    a ``datasets`` entry) on a line of its own, so a diff shows a changed figure as one line."""
    tables: list[str] = []

    def lift(node: Any, key: str | None = None, top: bool = False) -> Any:
        if isinstance(node, dict):
            return {k: lift(v, k, key == "datasets") for k, v in node.items()}
        if not isinstance(node, list):
            return node
        if node and (key == "values" or top) and all(isinstance(r, dict) for r in node):
            tables.append(",\n".join(chart_json(r, separators=(", ", ": ")) for r in node))
            return f"\u0000sg-records-{len(tables) - 1}\u0000"
        return [lift(v) for v in node]

    text = (
        chart_json(lift(obj), indent=1) if record_lines else chart_json(obj, separators=(",", ":"))
    )
    for i, body in enumerate(tables):
        text = text.replace(json.dumps(f"\u0000sg-records-{i}\u0000"), f"[\n{body}\n]", 1)
    return text.translate(_SCRIPT_ESCAPES)


def data_block(data_id: str, values: list[dict]) -> str:
    """Records a page's charts share, once: a JSON ``<script>`` (a record a line) that a chart
    embedded with the same ``data_id`` (a chart name's rule) reads as its data."""
    return (
        f'<script type="application/json" id="{_data_id(data_id)}">'
        f"{dumps_script_json({'values': values}, record_lines=True)}</script>\n"
    )


# Draws the chart once vega is loaded, in vega's dark theme on a dark page (the theme switch, or
# the system's preference in "auto"); a chart wider than its frame (a phone) scrolls, and says so.
_EMBED_JS = (
    "function go(){if(!window.vegaEmbed){return;}var t=document.documentElement.dataset.theme;"
    'if(!t||t==="auto"){t=window.matchMedia&&window.matchMedia("(prefers-color-scheme: dark)")'
    '.matches?"dark":"light";}if(t==="dark"){opt.theme="dark";}el.textContent="";\n'
    'window.vegaEmbed(el,spec,opt).then(function(){el.setAttribute("data-sg-rendered","1");'
    'el.classList.toggle("sg-scrolls",el.scrollWidth>el.clientWidth+1);}).catch(function(e){'
    'el.textContent="Chart error: "+e;});}if(window.vegaEmbed){go();}'
    'else{document.addEventListener("DOMContentLoaded",go);}})();</script>'
)


def embed(
    chart: Any, name: str, *, values: list[dict] | None = None, data_id: str | None = None
) -> HTMLFragment:
    """An altair chart (or a Vega-Lite dict) as a div with a fixed id and a vegaEmbed call with
    the spec inlined; ``values``: the records of a layered chart made without data, set after
    ``to_dict`` — or, with ``data_id``, read from that :func:`data_block` of the page."""
    spec = chart if isinstance(chart, Mapping) else chart.to_dict(validate=validating_specs())
    if values is not None or data_id is not None:
        spec = _with_layer_data(spec, values or [])
    spec = {k: v for k, v in spec.items() if k != "$schema" and (k != "data" or data_id is None)}
    cid = chart_id(name)
    shared = (
        ""
        if data_id is None
        # the page's data_block; chart_id checks the name
        else (
            f"spec.data=JSON.parse(document.getElementById('{_data_id(data_id)}').textContent);\n"
        )
    )
    return HTMLFragment(
        f'<div class="sg-chart" id="{cid}" data-sg-chart="{name}">'
        '<p class="sg-chart-fallback">Chart: needs the book\'s vendored vega '
        "bundle (open the built book).</p></div>\n<script>(function(){"
        f"var el=document.getElementById({json.dumps(cid)});"
        f"var spec={dumps_script_json(spec, record_lines=True)};\n"
        f"var opt={dumps_script_json(EMBED_OPTIONS)};\n{shared}{_EMBED_JS}",
        f"chart {cid}",
    )


def _with_layer_data(spec: Mapping[str, Any], values: list[dict]) -> dict:
    """``spec`` (layers made without data) with ``values`` as its top-level inline data,
    altair's ``empty`` placeholder gone (other named datasets stay: a lookup's); ValueError
    for any other data in it."""
    spec = dict(spec)
    datasets = dict(spec.pop("datasets", {}))
    if datasets.pop("empty", [{}]) != [{}] or "data" in spec:
        raise ValueError("chart made without data has data of its own")
    layers = [dict(layer) for layer in spec.get("layer", [])]
    if any(layer.pop("data", {"name": "empty"}) != {"name": "empty"} for layer in layers):
        raise ValueError("a layer of a chart made without data has data of its own")
    return {
        **spec,
        "layer": layers,
        "data": {"values": values},
        **({"datasets": datasets} if datasets else {}),
    }


def layered_chart(name, layers, title, subtitle, values=None, params=(), data_id=None, **size):
    """The layers as one chart with its title block (``values``, ``data_id``: see embed)."""
    title = alt.Title(title, subtitle=subtitle, anchor="start")
    chart = alt.layer(*layers, **size, title=title)  # not .properties(): no check per property
    chart = chart.add_params(*params) if params else chart
    return embed(chart, name, values=values, data_id=data_id)


def interval_ends(interval: Any, decimals: int) -> dict:
    """An interval's ``lo`` and ``hi`` as :func:`~searchgen_nb.book.fmt.interval_text` writes
    them (so the chart draws what its text says); None without an interval."""
    none = is_null(interval)
    return {
        k: None if none else float(figure_text(float(interval[i]), decimals, minus="-"))
        for i, k in enumerate(("lo", "hi"))
    }


def count_value(value: Any) -> int | None:
    return None if is_null(value) else int(value)


def axis_label(text: Any) -> str:
    """Data text as a chart label: control characters and U+2028/9 become spaces (Vega-Lite
    puts sort labels into expressions, where a raw U+2028 stops the chart)."""
    return _UNSAFE_CHARS.sub(" ", str(text))


def row_model(r: Mapping[str, Any]) -> str:
    return str(r.get("model_id", r.get("display_name")))


def chart_records(data: Any) -> list[dict]:
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        data = data.to_dict(orient="records")
    return [dict(r) for r in data]


def model_labels(records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """model_id -> label, in first-seen order; a duplicate display name gets its model_id."""
    names: dict[str, str] = {}
    for r in records:
        names.setdefault(row_model(r), axis_label(r.get("display_name", row_model(r))))
    counts = Counter(names.values())
    return {m: d if counts[d] == 1 else f"{d} ({axis_label(m)})" for m, d in names.items()}


def tooltips(*fields: str) -> list:
    """Tooltips from ``"field:type", "Title", …`` pairs."""
    return [alt.Tooltip(f, title=t) for f, t in zip(fields[::2], fields[1::2])]


def component_rows(chart: Any, components: Sequence[str], *counts: str, **axis: Any) -> tuple:
    """(``chart`` with a row per component — labels once in the spec — from a record's values
    ``v``, their texts ``t`` (as ``value_text``) and ``counts`` (as ``n_values``); x: the
    components in order, with ``axis`` settings; y: the score 0–100)."""
    names = [COMPONENT_LABELS.get(c, c) for c in components]
    chart = chart.transform_calculate(component=chart_json(names)).transform_flatten(
        ["component", "v", "t", *counts],
        as_=["component", "value", "value_text", "n_values"][: 3 + len(counts)],
    )
    return (
        chart,
        alt.X(
            "component:N",
            title=None,
            sort=names,
            axis=alt.Axis(labelAngle=-30, labelLimit=200, **axis),
        ),
        alt.Y("value:Q", title="Score (0–100)", scale=alt.Scale(domain=[0, 100])),
    )


def component_texts(values: Sequence[float | None], decimals: int) -> list[str]:
    """The texts of a record's component values ``v`` (its ``t``): figures, N/A for null."""
    return [figure_text(v, decimals) for v in values]


@unchecked
def component_bars(
    rows: Any,
    name: str,
    *,
    models: Sequence[str] | None = None,
    components: Sequence[str] = OVERALL_9_COMPONENTS,
    title: str | None = None,
    decimals: int = 1,
    group: str = "All",
) -> HTMLFragment:
    """Grouped bars of ``models`` (model_ids, default every row; ValueError for an unknown one)
    on the ``components`` from leaderboard rows: "N/A" instead of a bar for null, a zero-height
    bar for 0.0. A record per model: ``group``, values ``v``, prompt counts ``n``."""
    by_id = {str(r["model_id"]): r for r in chart_records(rows)}
    order = list(models) if models is not None else list(by_id)
    if missing := [m for m in order if m not in by_id]:
        raise ValueError(f"unknown model_ids: {missing}")
    labels = model_labels([{**by_id[m], "model_id": m} for m in order])
    values = []
    for m in order:
        v = [number((by_id[m].get("components") or {}).get(c)) for c in components]
        values.append(
            {
                "model": labels[m],
                "model_id": m,
                "group": group,
                "v": v,
                "t": component_texts(v, decimals),
                "n": [
                    count_value((by_id[m].get("component_counts") or {}).get(c)) for c in components
                ],
            }
        )
    base, x, y = component_rows(alt.Chart(), components, "n")  # no data: see embed
    enc = {
        "x": x,
        "xOffset": alt.XOffset("model:N", sort=list(labels.values())),
        "tooltip": tooltips(
            "model:N",
            "Model",
            "component:N",
            "Component",
            "value_text:N",
            "Score (0–100)",
            "n_tip:N",
            "Prompts with a value",
        ),
    }
    colour = alt.Color(
        "model:N",
        title="Model",
        sort=list(labels.values()),
        legend=alt.Legend(orient="bottom", columns=3),
    )
    label = {"angle": 270, "align": "left", "baseline": "middle", "dx": 3}
    base = base.transform_calculate(n_tip=f"isValid(datum.n_values) ? '' + datum.n_values : '{NA}'")
    bars = base.transform_filter("datum.value !== null")
    layers = [
        bars.mark_bar().encode(y=y, color=colour, **enc),
        base.transform_filter("datum.value === null")
        .mark_text(
            **label,
            fontSize=10,
            fontWeight="bold",
            color="#555555",
        )
        .encode(y=alt.datum(0), text=alt.Text("value_text:N"), **enc),
        bars.mark_text(**label, fontSize=8, color="#333333").encode(
            y=y, text=alt.Text("value_text:N"), **enc
        ),
    ]
    subtitle = f"{NA} = component not applicable to any included prompt (no bar), not 0"
    return layered_chart(
        name, layers, title or "Components (0–100)", subtitle, values, width=640, height=260
    )


@unchecked
def forest(
    rows: Sequence[Mapping[str, Any]],
    intervals: Mapping[str, Mapping[str, Any]],
    name: str,
    *,
    title: str,
    ties: Mapping[str, str] | None = None,
    confidence: str = "95%",
    decimals: int = 1,
    group: str = "All",
) -> HTMLFragment:
    """Per model (``rows`` order) the published Overall-9 as a point and its bootstrap interval
    (``intervals[model_id]["overall_9"]``) as a line; unranked models faint. Tooltip: score,
    interval, rank range, tie group (``ties``). Each record names its ``group``."""
    ties, labels, values = ties or {}, model_labels(rows), []
    for r in rows:
        m, v = str(r["model_id"]), number(r.get("overall_9"))
        cell = intervals.get(m) or {}
        if v is None:
            continue
        rk = cell.get("rank")
        rank = "unranked" if not r.get("ranked") else "–" if rk is None else rank_text(rk)
        values.append(
            {
                "model": labels[m],
                "group": group,
                "value": v,
                "value_text": figure_text(v, decimals),
                "rank_text": rank,
                **interval_ends(cell.get("overall_9"), decimals),
                "interval_text": interval_text(cell.get("overall_9"), decimals),
                **({"tie": ties[m]} if m in ties else {}),
            }
        )  # none: "–", in the spec
    y = alt.Y(
        "model:N", title=None, sort=[v["model"] for v in values], axis=alt.Axis(labelLimit=130)
    )  # a phone's width keeps room for the plot
    scale = alt.Scale(zero=False, nice=True, padding=8)  # from the data: no figure in the spec
    tooltip = tooltips(
        "model:N",
        "Model",
        "value_text:N",
        "Overall-9",
        "interval_text:N",
        f"{confidence} interval",
        "rank_text:N",
        "Rank range",
        "tie_text:N",
        "Tie group",
    )
    base = alt.Chart().transform_calculate(tie_text="datum.tie || '–'")  # data: see embed
    layers = [
        base.transform_filter("datum.lo !== null")
        .mark_rule(strokeWidth=2, color="#4c78a8")
        .encode(
            x=alt.X("lo:Q", title="Overall-9 (0–100)", scale=scale),
            x2=alt.X2("hi:Q"),
            y=y,
            tooltip=tooltip,
        ),
        base.mark_point(filled=True, size=60, color="#1f3b5c").encode(
            x=alt.X("value:Q", scale=scale),
            y=y,
            tooltip=tooltip,
            opacity=alt.OpacityValue(
                **alt.condition("datum.rank_text !== 'unranked'", alt.value(1), alt.value(0.35))
            ),
        ),
    ]
    subtitle = [
        "point = published Overall-9; faint = unranked",  # short lines: a phone's width
        f"line = {confidence} bootstrap interval (prompt sampling)",
    ]
    return layered_chart(
        name,
        layers,
        title.split(", ", 1),
        subtitle,
        values,  # the frame's width
        width="container",
        height=max(22 * len(values), 60),
    )


@unchecked
def coverage_bars(
    df: Any,
    name: str,
    *,
    min_coverage: float = 0.9,
    title: str | None = None,
    decimals: int = 1,
) -> HTMLFragment:
    """Per model, its prompts by status as 100 % stacked bars labelled with its coverage
    ("95.7% (719/751)", shares at ``decimals`` places); a dashed rule at ``min_coverage`` (the
    ranking threshold). ``df``: per model ``model_id``, ``display_name`` and a count per status
    (ValueError without one)."""
    recs, values = chart_records(df), []
    labels = model_labels(recs)
    for r in recs:
        mid = row_model(r)
        if missing := [s for s in STATUSES if s not in r or is_null(r[s])]:
            raise ValueError(f"coverage_bars: model {mid!r} has no count for status {missing[0]!r}")
        c = [int(r[s]) for s in STATUSES]
        values.append(
            {
                "group": "All",
                "model": labels[mid],
                "model_id": mid,
                "c": c,
                "n_scored": c[STATUSES.index(SCORED)],
                "n_total": sum(c),
                "coverage_text": share_text(c[STATUSES.index(SCORED)], sum(c), decimals),
                "shares": [percent_text(n, sum(c), decimals) for n in c],
            }
        )
    y = alt.Y("model:N", title=None, sort=list(labels.values()), axis=alt.Axis(labelLimit=260))
    names = [STATUS_LABELS[s] for s in STATUSES]
    scale = alt.Scale(domain=names, range=[STATUS_COLORS[s] for s in STATUSES])
    base = alt.Chart(alt.Data(values=values))
    bars = (
        base.transform_flatten(["c", "shares"], as_=["count", "share_text"])
        .transform_window(i="row_number()", groupby=["model_id"])
        .transform_calculate(
            status=f"{json.dumps(names)}[datum.i - 1]",
            share="datum.n_total ? datum.count * 100 / datum.n_total : 0",
        )
    )
    threshold = alt.Data(values=[{"threshold": float(min_coverage) * 100}])
    layers = [
        bars.mark_bar(size=18).encode(
            x=alt.X(
                "share:Q",
                title="Share of prompts (%)",
                stack="zero",
                scale=alt.Scale(domain=[0, 100]),
            ),
            y=y,
            order=alt.Order("i:Q", sort="ascending"),
            color=alt.Color(
                "status:N",
                title="Status",
                sort=names,
                scale=scale,
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=tooltips(
                "model:N",
                "Model",
                "status:N",
                "Status",
                "count:Q",
                "Prompts",
                "share_text:N",
                "Share of prompts",
                "coverage_text:N",
                "Coverage (scored)",
            ),
        ),
        base.transform_calculate(end="100")
        .mark_text(align="left", dx=4, fontSize=10)
        .encode(x=alt.X("end:Q"), y=y, text=alt.Text("coverage_text:N")),
        alt.Chart(threshold)
        .mark_rule(strokeDash=[4, 3], color="#333333")
        .encode(x=alt.X("threshold:Q"), tooltip=tooltips("threshold:Q", "Ranking threshold (%)")),
    ]
    subtitle = (
        f"stacked: {' / '.join(names)}; dashed line = ranking threshold {pct_label(min_coverage)}"
    )
    return layered_chart(
        name, layers, title or "Coverage by model", subtitle, width=480, height=alt.Step(26)
    )
