"""Charts for the book: altair specs rendered as ``<div>`` + inline ``vegaEmbed(...)``.

Every chart output is plain ``text/html``: a ``<div id="sg-chart-NAME">`` and a ``<script>``
that calls ``vegaEmbed`` (from the vendored bundle, see :mod:`searchgen_nb.book.assets`) with the
Vega-Lite spec inlined. The element id comes from the caller's ``name``; the spec is dumped with
sorted keys; data are built as explicit records (no pandas dtype surprises, no 5,000-row data
transformer): the same input gives byte-identical HTML.

Null means "not applicable": it is never drawn as 0 and never dropped silently. Charts
carry explicit "N/A" marks (grey cells, "N/A" text) and the tooltips say "N/A". A real 0.0
is a value like any other.

LAYER_DATA: a layered chart whose layers all draw the same records is made without data;
:func:`embed` sets them as its top-level inline data after altair's ``to_dict``. That is the
spec altair writes for records shared by every layer (it lifts them to the top), without
altair copying the records out of each layer and converting them value by value: the demo's
chart notebooks run 20% faster, and its executed notebooks are byte for byte the same.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from decimal import Decimal
from urllib.parse import quote
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .display import HTMLFragment
from searchgen_nb.numeric import decimal_text, percent, scaled
from .fmt import NA, format_number, interval_text, is_null
from searchgen_nb.constants import (
    COMPONENT_LABELS,
    INVALID,
    MISSING_EVALUATION,
    MISSING_GENERATION,
    OVERALL_9_COMPONENTS,
    SCORED,
    STATUSES,
)

__all__ = [
    "NA",
    "chart_html",
    "chart_id",
    "component_bars",
    "coverage_bars",
    "dumps_script_json",
    "embed",
    "heatmap",
    "heatmap_records",
    "tag_label",
]

NA_COLOR = "#d4d4d4"
SCORE_SCHEME = "viridis"
#: vega-embed options: Vega-Lite mode (the spec's ``$schema`` URL is dropped so the page holds no
#: web address at all), SVG renderer (crisp, testable), default tooltip handler (vega-tooltip,
#: which HTML-escapes values), export actions only (no "Open in Vega Editor" link to the web).
EMBED_OPTIONS = {
    "mode": "vega-lite",
    "renderer": "svg",
    "tooltip": True,
    "actions": {"export": True, "source": False, "compiled": False, "editor": False},
}
STATUS_LABELS = {
    SCORED: "scored",
    INVALID: "invalid evaluation",
    MISSING_EVALUATION: "missing evaluation",
    MISSING_GENERATION: "missing generation",
}
STATUS_COLORS = {
    SCORED: "#4c78a8",
    INVALID: "#e45756",
    MISSING_EVALUATION: "#f58518",
    MISSING_GENERATION: "#b279a2",  # not grey: grey means N/A in the other charts
}

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")

#: Set to ``1`` to check every chart against the Vega-Lite schema while it is built (altair's
#: debug mode and ``to_dict(validate=True)``). Off by default: a chart's structure is fixed by
#: this module's code, the data a release puts in it are free-form to the schema, and the check
#: (jsonschema in pure Python over every inlined record) took about a quarter of the notebooks'
#: time. The tests switch it on for the chart unit tests and for the book tests' small release
#: (every kind of chart).
VALIDATE_ENV = "SEARCHGEN_VALIDATE_CHARTS"


def validating_specs() -> bool:
    """Whether charts are checked against the Vega-Lite schema (:data:`VALIDATE_ENV`)."""
    return os.environ.get(VALIDATE_ENV) == "1"


def _chart_builder(build):
    """Build the chart with altair's construction-time schema checks on or off as
    :func:`validating_specs` says (altair's own default is on)."""

    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        with _alt().utils.schemapi.debug_mode(validating_specs()):
            return build(*args, **kwargs)

    return wrapper


# --------------------------------------------------------------------------- embedding

def chart_id(name: str) -> str:
    """The fixed element id for a chart name (``[A-Za-z0-9][A-Za-z0-9_-]*``)."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(f"chart name must match {_NAME_RE.pattern!r}, got {name!r}")
    return f"sg-chart-{name}"


def dumps_script_json(obj: Any, *, record_lines: bool = False) -> str:
    """JSON safe to inline in a ``<script>`` element (and in JS source).

    Sorted keys, UTF-8 kept, no NaN/Infinity; ``<``, ``>``, ``&`` and the JS line separators
    U+2028/U+2029 are written as ``\\uXXXX`` escapes so data text such as ``</script>`` or
    ``<!--`` cannot end or alter the script element. Compact by default. ``record_lines``:
    indented, and every data record (an object inside a ``values`` list or a top-level
    ``datasets`` entry) on a line of its own — so that a committed notebook's diff shows a
    changed figure as one short line naming its model and group.
    """
    if not record_lines:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    else:
        tables: list[list] = []

        def lift(node: Any, key: str | None = None, top: bool = False) -> Any:
            if isinstance(node, list) and node and all(isinstance(r, dict) for r in node) and key is not None and (key == "values" or top):
                tables.append(node)
                return f"\u0000sg-records-{len(tables) - 1}\u0000"
            if isinstance(node, dict):
                return {k: lift(v, k, top=(key == "datasets")) for k, v in node.items()}
            if isinstance(node, list):
                return [lift(v) for v in node]
            return node

        text = json.dumps(lift(obj), sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False)
        for i, rows in enumerate(tables):
            body = ",\n".join(json.dumps(r, sort_keys=True, separators=(", ", ": "), ensure_ascii=False, allow_nan=False) for r in rows)
            text = text.replace(json.dumps(f"\u0000sg-records-{i}\u0000"), "[\n" + body + "\n]", 1)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def chart_html(spec: Mapping[str, Any], name: str, *, embed_options: Mapping[str, Any] | None = None) -> str:
    """The HTML of one chart: a div with a fixed id plus a vegaEmbed call with the spec inlined."""
    cid = chart_id(name)
    spec = {k: v for k, v in spec.items() if k != "$schema"}
    opts = dict(EMBED_OPTIONS if embed_options is None else embed_options)
    return (
        f'<div class="sg-chart" id="{cid}" data-sg-chart="{name}">'
        '<p class="sg-chart-fallback">Chart: needs the book\'s vendored vega bundle '
        "(open the built book).</p></div>\n"
        "<script>(function(){"
        f"var el=document.getElementById({json.dumps(cid)});"
        f"var spec={dumps_script_json(spec, record_lines=True)};\n"
        f"var opt={dumps_script_json(opts)};"
        # a dark page (the book's theme switch, or the system's preference in "auto") gets
        # vega's dark theme; read when the chart is drawn
        "function go(){if(!window.vegaEmbed){return;}"
        "var t=document.documentElement.dataset.theme;"
        'if(!t||t==="auto"){t=window.matchMedia&&window.matchMedia("(prefers-color-scheme: dark)").matches?"dark":"light";}'
        'if(t==="dark"){opt.theme="dark";}'
        'el.textContent="";'
        "window.vegaEmbed(el,spec,opt).then(function(){el.setAttribute(\"data-sg-rendered\",\"1\");})"
        '.catch(function(e){el.textContent="Chart error: "+e;});}'
        'if(window.vegaEmbed){go();}else{document.addEventListener("DOMContentLoaded",go);}'
        "})();</script>"
    )


def embed(chart: Any, name: str, *, embed_options: Mapping[str, Any] | None = None, values: list[dict] | None = None) -> HTMLFragment:
    """Turn an altair chart (or a Vega-Lite dict) into a text/html-only display object.

    ``values``: the records of a layered chart made without data, set as its inline data after
    altair's ``to_dict`` (LAYER_DATA; altair's placeholder for a chart without data removed)."""
    spec = chart if isinstance(chart, Mapping) else chart.to_dict(validate=validating_specs())
    if values is not None:
        spec = _with_layer_data(spec, values)
    return HTMLFragment(chart_html(spec, name, embed_options=embed_options), f"chart {chart_id(name)}")


def _with_layer_data(spec: Mapping[str, Any], values: list[dict]) -> dict:
    """``spec`` (a layered chart altair made without data) with ``values`` as its top-level
    inline data, as altair writes records shared by every layer; altair's ``empty`` dataset
    and each layer's reference to it removed. Raises ValueError for any other data in it."""
    spec = dict(spec)
    datasets = dict(spec.pop("datasets", {}))
    if datasets.pop("empty", [{}]) != [{}] or datasets or "data" in spec:
        raise ValueError("chart made without data has data of its own")
    layers = []
    for layer in spec.get("layer", []):
        layer = dict(layer)
        if layer.pop("data", {"name": "empty"}) != {"name": "empty"}:
            raise ValueError("a layer of a chart made without data has data of its own")
        layers.append(layer)
    return {**spec, "layer": layers, "data": {"values": values}}


# --------------------------------------------------------------------------- values

def _number(value: Any) -> float | None:
    """A finite float, or None for null / NaN (never 0)."""
    if is_null(value):
        return None
    if isinstance(value, bool):
        raise TypeError(f"boolean is not a score: {value!r}")
    x = float(value)
    if math.isinf(x):
        raise ValueError(f"infinite value: {value!r}")
    return x


def _fmt(value: float | None, decimals: int) -> str:
    """A published value with the release's ``rounding_decimals`` as the tables write it
    (:func:`~searchgen_nb.book.fmt.format_number`: N/A for null, U+2212 for a negative)."""
    return format_number(None if value is None else float(value), decimals)[0]


def _plain(value: float | None) -> str:
    """The stored value, shortest round-trip form without exponent (72.25 stays "72.25")."""
    return NA if value is None else decimal_text(value)


_UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def _label(text: Any) -> str:
    """Data text used as a chart label: control characters and U+2028/U+2029 become spaces.

    Vega-Lite compiles custom sort orders into Vega expressions with the labels as string
    literals; a raw U+2028 there is a parse error ("Unexpected token ILLEGAL") and the chart
    does not render at all.
    """
    return _UNSAFE_CHARS.sub(" ", str(text))


def tag_label(code: str, name: str | None) -> str:
    """``"ART · Art & Design"`` (just the code when the name is unknown)."""
    return _label(f"{code} · {name}" if name else str(code))


def _records(data: Any) -> list[dict]:
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        return [dict(r) for r in data.to_dict(orient="records")]
    return [dict(r) for r in data]


def _unique_labels(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """model_id -> display label; duplicate display names get their model_id appended."""
    clean = [(mid, _label(disp)) for mid, disp in pairs]
    counts: dict[str, int] = {}
    for _, disp in clean:
        counts[disp] = counts.get(disp, 0) + 1
    return {mid: (disp if counts[disp] == 1 else f"{disp} ({_label(mid)})") for mid, disp in clean}


def _ordered_models(records: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for r in records:
        mid = str(r.get("model_id", r.get("display_name")))
        if mid not in seen:
            seen[mid] = str(r.get("display_name", mid))
    return list(seen.items())


def _alt():
    import altair as alt

    return alt


# --------------------------------------------------------------------------- heatmap

def heatmap_records(
    by_tag: Mapping[str, Sequence[Mapping[str, Any]]],
    tag_names: Mapping[str, str] | None = None,
    value: str = "overall_9",
) -> list[dict]:
    """Flatten ``{tag: [leaderboard rows]}`` (``leaderboard_by_domain.json``) into heatmap input.

    One record per model × tag, with ``model_id, display_name, tag, tag_name, <value>,
    n_total, n_scored, coverage``. Tags in sorted order, models in the order first seen.
    """
    tag_names = tag_names or {}
    out = []
    for tag in sorted(by_tag):
        for row in by_tag[tag]:
            out.append(
                {
                    "model_id": row.get("model_id"),
                    "display_name": row.get("display_name", row.get("model_id")),
                    "tag": tag,
                    "tag_name": tag_names.get(tag),
                    value: row.get(value),
                    "n_total": row.get("n_total"),
                    "n_scored": row.get("n_scored"),
                    "coverage": row.get("coverage"),
                }
            )
    return out


@_chart_builder
def heatmap(
    df: Any,
    name: str,
    *,
    value: str = "overall_9",
    value_title: str = "Overall-9",
    tag_names: Mapping[str, str] | None = None,
    title: str | None = None,
    model_order: Sequence[str] | None = None,
    tag_order: Sequence[str] | None = None,
    show_values: bool = True,
    cell_size: int = 24,
    decimals: int = 1,
    wide_interval: float | None = None,
    confidence: str = "95%",
    relative_to: Mapping[str, float | None] | None = None,
    href: str | None = None,
    subtitle: str | None = None,
) -> HTMLFragment:
    """Model × tag heatmap of a 0–100 score (default Overall-9); cell labels show the
    published value with ``decimals`` places (the release's ``rounding_decimals``), 11 px.

    ``relative_to``: ``{model_id: the model's overall score}`` — the cells then show the tag's
    value minus it (diverging colours centred on 0: a model's strengths and weak spots, not its
    overall rank); the tooltip keeps the absolute value. The best value of each column is
    outlined in black (absolute view). ``href``: a URL template with ``{tag}`` and
    ``{model_id}`` (e.g. the prompt explorer filtered to the cell's prompts); a cell is then a
    link.

    With an ``interval`` column (``[lo, hi]`` or None, SPEC §8) the tooltip gives each cell's
    bootstrap interval, and a cell whose interval is wider than ``wide_interval`` points gets
    a dashed outline (low confidence).

    ``df``: a DataFrame or records with columns ``model_id`` (or ``display_name``),
    ``display_name``, ``tag``, ``value`` (default ``overall_9``), ``n_total``, and optionally
    ``n_scored``, ``coverage``, ``tag_name``; see :func:`heatmap_records`. ``model_order`` /
    ``tag_order`` list model_ids / tag codes (default: order of first appearance / sorted).

    Null values are drawn as grey cells labelled "N/A" (tooltip "N/A"); 0.0 is coloured as 0
    on a fixed 0–100 scale. Tooltips: model, tag, value, prompts (n_total), scored, coverage.
    """
    alt = _alt()
    recs = _records(df)
    tag_names = dict(tag_names or {})
    models = _ordered_models(recs)
    labels = _unique_labels(models)
    if model_order is not None:
        known = dict(models)
        missing = [m for m in model_order if m not in known]
        if missing:
            raise ValueError(f"model_order names unknown models: {missing}")
        models = [(m, known[m]) for m in model_order] + [(m, d) for m, d in models if m not in set(model_order)]
    tags = list(tag_order) if tag_order is not None else sorted({str(r["tag"]) for r in recs})
    seen_pairs: set[tuple[str, str]] = set()
    values = []
    for r in recs:
        mid = str(r.get("model_id", r.get("display_name")))
        tag = str(r["tag"])
        if (mid, tag) in seen_pairs:
            raise ValueError(f"duplicate heatmap cell: model {mid!r}, tag {tag!r}")
        seen_pairs.add((mid, tag))
        v = _number(r.get(value))
        n_total = r.get("n_total")
        n_scored = r.get("n_scored")
        cov = _number(r.get("coverage"))
        tname = r.get("tag_name") if not is_null(r.get("tag_name")) else tag_names.get(tag)
        iv = r.get("interval")
        iv = None if iv is None or (not isinstance(iv, (list, tuple)) and is_null(iv)) else iv
        if not is_null(n_total) and not is_null(n_scored):
            cov_text = f"{percent(int(n_scored), int(n_total))} ({int(n_scored)}/{int(n_total)})"
        elif cov is not None:
            cov_text = f"{decimal_text(scaled(cov, 100), 2)}%"
        else:
            cov_text = NA
        values.append(
            {
                "model": labels[mid],
                "model_id": mid,
                "tag": tag,
                "tag_label": tag_label(tag, tname),
                "value": v,
                "value_text": _fmt(v, decimals),
                "value_tip": _plain(v),
                "is_na": v is None,
                "n_total": NA if is_null(n_total) else int(n_total),
                "coverage_text": cov_text,
                "interval_text": interval_text(iv, decimals),
                "wide": bool(iv is not None and wide_interval is not None and float(iv[1]) - float(iv[0]) > wide_interval),
            }
        )
        if href is not None:
            values[-1]["href"] = href.format(tag=quote(tag), model_id=quote(mid))
    if relative_to is not None:
        for v in values:
            base_v = relative_to.get(v["model_id"])
            if v["value"] is None or base_v is None:
                v["shown"], v["shown_text"] = None, NA
            else:  # exact decimal difference of two published values
                d = float(Decimal(repr(v["value"])) - Decimal(repr(float(base_v))))
                v["shown"], v["shown_text"] = d, ("+" if d > 0 else "") + _fmt(d, decimals)
    best: dict[str, float] = {}
    for v in values:
        if v["value"] is not None:
            best[v["tag"]] = max(best.get(v["tag"], v["value"]), v["value"])
    for v in values:
        v["best"] = v["value"] is not None and v["value"] == best.get(v["tag"])
    tag_labels = {}
    for rec in values:
        tag_labels.setdefault(rec["tag"], rec["tag_label"])
    # A model × tag pair without a row is shown as N/A too, never left as a silent hole.
    for mid, _ in models:
        for tag in tags:
            if (mid, tag) not in seen_pairs:
                values.append(
                    {
                        "model": labels[mid],
                        "model_id": mid,
                        "tag": tag,
                        "tag_label": tag_labels.get(tag, tag_label(tag, tag_names.get(tag))),
                        "value": None,
                        "value_text": NA,
                        "value_tip": NA,
                        "is_na": True,
                        "n_total": NA,
                        "coverage_text": NA,
                        "interval_text": NA,
                        "wide": False,
                        "best": False,
                        **({"shown": None, "shown_text": NA} if relative_to is not None else {}),
                    }
                )
    # Model-major records: one model's cells sit together, so a committed notebook's diff of a
    # change to one model is one hunk (the chart sorts its axes itself).
    model_pos = {m: i for i, (m, _) in enumerate(models)}
    tag_pos = {t: i for i, t in enumerate(tags)}
    values.sort(key=lambda v: (model_pos.get(v["model_id"], len(model_pos)), tag_pos.get(v["tag"], len(tag_pos)), v["tag"]))
    x_sort = [tag_labels.get(t, tag_label(t, tag_names.get(t))) for t in tags]
    y_sort = [labels.get(m, d) for m, d in models]

    # Bottom axis, labels at -45°: they extend down-left, so the chart never grows to the right.
    x = alt.X("tag_label:N", title=None, sort=x_sort, axis=alt.Axis(labelAngle=-45, labelLimit=220, orient="bottom", labelFontSize=11))
    y = alt.Y("model:N", title=None, sort=y_sort, axis=alt.Axis(labelLimit=260, labelFontSize=11))
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("tag_label:N", title="Tag"),
        alt.Tooltip("value_tip:N", title=value_title),
        # no interval line where none was computed (a slice's tags): "N/A" would read as "not applicable"
        *([alt.Tooltip("interval_text:N", title=f"{confidence} interval")] if any(r.get("interval") is not None for r in recs) else []),
        alt.Tooltip("n_total:N", title="Prompts (n_total)"),
        alt.Tooltip("coverage_text:N", title="Coverage (scored)"),
    ]
    base = alt.Chart()  # no data: embed sets the layer's (LAYER_DATA)
    na_cells = base.transform_filter("datum.is_na").mark_rect(color=NA_COLOR, stroke="white", strokeWidth=1).encode(
        x=x, y=y, tooltip=tooltip
    )
    legend = alt.Legend(orient="top", direction="horizontal", gradientLength=200, titleOrient="left")
    if relative_to is not None:
        span = max([abs(v["shown"]) for v in values if v.get("shown") is not None], default=1.0) or 1.0
        colour = alt.Color("shown:Q", title=f"{value_title} − the model's overall",
                           scale=alt.Scale(scheme="redblue", domain=[-span, span]), legend=legend)
        tooltip.insert(3, alt.Tooltip("shown_text:N", title="vs the model's overall"))
    else:
        colour = alt.Color("value:Q", title=value_title, scale=alt.Scale(scheme=SCORE_SCHEME, domain=[0, 100], clamp=True), legend=legend)
    extra = {"href": alt.Href("href:N")} if href is not None else {}
    cells = base.transform_filter("!datum.is_na").mark_rect(stroke="white", strokeWidth=1, cursor="pointer" if href else "default").encode(
        x=x, y=y, color=colour, tooltip=tooltip, **extra,
    )
    layers = [cells, na_cells]
    if relative_to is None and any(v["best"] for v in values):
        layers.append(
            base.transform_filter("datum.best").mark_rect(filled=False, stroke="#000000", strokeWidth=2.5)
            .encode(x=x, y=y, tooltip=tooltip, **extra)
        )
    if any(v["wide"] for v in values):
        layers.append(
            base.transform_filter("datum.wide").mark_rect(filled=False, stroke="#111111", strokeWidth=1.5, strokeDash=[3, 2])
            .encode(x=x, y=y, tooltip=tooltip)
        )
    if show_values:
        if relative_to is not None:
            text_colour = alt.condition(f"datum.shown !== null && abs(datum.shown) > {0.6 * span!r}", alt.value("white"), alt.value("black"))
        else:
            text_colour = alt.condition("datum.value === null || datum.value >= 60", alt.value("black"), alt.value("white"))
        layers.append(
            base.mark_text(fontSize=11).encode(
                x=x,
                y=y,
                text="shown_text:N" if relative_to is not None else "value_text:N",
                color=text_colour,
                tooltip=tooltip,
                **extra,
            )
        )
    chart = alt.layer(*layers).properties(
        width=max(cell_size * len(x_sort), 120),
        height=max(cell_size * len(y_sort), 60),
        title=alt.Title(
            title or f"{value_title} by model and tag",
            subtitle=subtitle or f"0–100; grey cells labelled {NA} = not applicable (no value), not 0",
            anchor="start",
        ),
    )
    return embed(chart, name, values=values)


# --------------------------------------------------------------------------- component bars

@_chart_builder
def component_bars(
    rows: Any,
    name: str,
    *,
    models: Sequence[str] | None = None,
    components: Sequence[str] = OVERALL_9_COMPONENTS,
    title: str | None = None,
    show_values: bool = True,
    width: int = 640,
    height: int = 260,
    decimals: int = 1,
) -> HTMLFragment:
    """Grouped bars: a few models (``models`` = model_ids, default all rows) on the components;
    labels with ``decimals`` places (the release's ``rounding_decimals``).

    ``rows``: leaderboard rows (dicts with ``model_id, display_name, components{...}``) or a
    DataFrame of them. A null component is not drawn as a bar: an "N/A" label stands at its
    place (and in the tooltip); a 0.0 gets a zero-height bar labelled "0.0".
    """
    alt = _alt()
    recs = _records(rows)
    by_id = {str(r["model_id"]): r for r in recs}
    order = list(models) if models is not None else [str(r["model_id"]) for r in recs]
    missing = [m for m in order if m not in by_id]
    if missing:
        raise ValueError(f"unknown model_ids: {missing}")
    labels = _unique_labels([(m, str(by_id[m].get("display_name", m))) for m in order])
    comp_labels = [COMPONENT_LABELS.get(c, c) for c in components]
    values = []
    for m in order:
        comps = by_id[m].get("components") or {}
        counts = by_id[m].get("component_counts") or {}
        for c in components:
            v = _number(comps.get(c))
            n = counts.get(c)
            values.append(
                {
                    "model": labels[m],
                    "model_id": m,
                    "component": COMPONENT_LABELS.get(c, c),
                    "value": v,
                    "value_text": _fmt(v, decimals),
                    "value_tip": _plain(v),
                    "is_na": v is None,
                    "n_values": NA if is_null(n) else int(n),
                }
            )
    model_labels = [labels[m] for m in order]
    x = alt.X("component:N", title=None, sort=comp_labels, axis=alt.Axis(labelAngle=-30, labelLimit=200))
    x_off = alt.XOffset("model:N", sort=model_labels)
    color = alt.Color("model:N", title="Model", sort=model_labels, legend=alt.Legend(orient="bottom", columns=3))
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("component:N", title="Component"),
        alt.Tooltip("value_tip:N", title="Score (0–100)"),
        alt.Tooltip("n_values:N", title="Prompts with a value"),
    ]
    y = alt.Y("value:Q", title="Score (0–100)", scale=alt.Scale(domain=[0, 100]))
    base = alt.Chart()  # no data: embed sets the layer's (LAYER_DATA)
    bars = base.transform_filter("!datum.is_na").mark_bar().encode(x=x, xOffset=x_off, y=y, color=color, tooltip=tooltip)
    na_marks = (
        base.transform_filter("datum.is_na")
        .mark_text(angle=270, align="left", baseline="middle", dx=3, fontSize=10, fontWeight="bold", color="#555555")
        .encode(x=x, xOffset=x_off, y=alt.datum(0), text="value_text:N", tooltip=tooltip)
    )
    layers = [bars, na_marks]
    if show_values:
        layers.append(
            base.transform_filter("!datum.is_na")
            .mark_text(angle=270, align="left", baseline="middle", dx=3, fontSize=8, color="#333333")
            .encode(x=x, xOffset=x_off, y=y, text="value_text:N", tooltip=tooltip)
        )
    chart = alt.layer(*layers).properties(
        width=width,
        height=height,
        title=alt.Title(
            title or "Components (0–100)",
            subtitle=f"{NA} = component not applicable to any included prompt (no bar), not 0",
            anchor="start",
        ),
    )
    return embed(chart, name, values=values)


# --------------------------------------------------------------------------- uncertainty

@_chart_builder
def forest(
    rows: Sequence[Mapping[str, Any]],
    intervals: Mapping[str, Mapping[str, Any]],
    name: str,
    *,
    title: str,
    ties: Mapping[str, str] | None = None,
    confidence: str = "95%",
    decimals: int = 1,
    row_height: int = 22,
    width: int = 560,
) -> HTMLFragment:
    """Forest plot: per model (``rows`` order, leaderboard rows) the published Overall-9 as a
    point and its bootstrap interval (``intervals[model_id]["overall_9"]``) as a line, 0–100.

    Models without an interval show the point alone; unranked models are drawn hollow. The
    tooltip gives Overall-9, the interval, the rank range and the tie group (``ties``)."""
    alt = _alt()
    ties = ties or {}
    labels = _unique_labels([(str(r["model_id"]), str(r.get("display_name", r["model_id"]))) for r in rows])
    values = []
    for r in rows:
        m = str(r["model_id"])
        cell = intervals.get(m) or {}
        iv, rk = cell.get("overall_9"), cell.get("rank")
        v = _number(r.get("overall_9"))
        if v is None:
            continue
        values.append({
            "model": labels[m],
            "value": v,
            "value_text": _fmt(v, decimals),
            "lo": None if iv is None else float(iv[0]),
            "hi": None if iv is None else float(iv[1]),
            "interval_text": interval_text(iv, decimals),
            "rank_text": "unranked" if not r.get("ranked") else "–" if rk is None else (str(rk[0]) if rk[0] == rk[1] else f"{rk[0]}–{rk[1]}"),
            "tie": ties.get(m, "–"),
            "ranked": bool(r.get("ranked")),
        })
    order = [v["model"] for v in values]
    lows = [v["lo"] for v in values if v["lo"] is not None] + [v["value"] for v in values]
    highs = [v["hi"] for v in values if v["hi"] is not None] + [v["value"] for v in values]
    domain = [max(0.0, 5 * math.floor(min(lows, default=0) / 5) - 5), min(100.0, 5 * math.ceil(max(highs, default=100) / 5) + 5)]
    y = alt.Y("model:N", title=None, sort=order, axis=alt.Axis(labelLimit=260))
    x_scale = alt.Scale(domain=domain, zero=False, nice=False)
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("value_text:N", title="Overall-9"),
        alt.Tooltip("interval_text:N", title=f"{confidence} interval"),
        alt.Tooltip("rank_text:N", title="Rank range"),
        alt.Tooltip("tie:N", title="Tie group"),
    ]
    base = alt.Chart()  # no data: embed sets the layer's (LAYER_DATA)
    lines = base.transform_filter("datum.lo !== null").mark_rule(strokeWidth=2, color="#4c78a8").encode(
        x=alt.X("lo:Q", title="Overall-9 (0–100)", scale=x_scale), x2="hi:Q", y=y, tooltip=tooltip
    )
    points = base.mark_point(filled=True, size=60, color="#1f3b5c").encode(
        x=alt.X("value:Q", scale=x_scale), y=y, tooltip=tooltip,
        opacity=alt.condition("datum.ranked", alt.value(1.0), alt.value(0.35)),
    )
    chart = alt.layer(lines, points).properties(
        width=width,
        height=max(row_height * len(values), 60),
        title=alt.Title(title, subtitle=f"point = published Overall-9; line = {confidence} bootstrap interval (prompt sampling); faint = unranked", anchor="start"),
    )
    return embed(chart, name, values=values)


@_chart_builder
def pairwise_heatmap(
    pairs: Sequence[Mapping[str, Any]],
    display_names: Mapping[str, str],
    name: str,
    *,
    title: str,
    confidence: str = "95%",
    decimals: int = 1,
    cell_size: int = 40,
) -> HTMLFragment:
    """Matrix of the ranked models of a group (rows and columns in rank order): the cell of
    row a, column b is Overall-9(a) − Overall-9(b) (``pairs`` of ``uncertainty.json``, both
    directions), coloured by the difference; pairs that cannot be separated (Holm-adjusted p
    above α) are drawn pale with "≈". Tooltip: Δ, its interval, p and Holm-adjusted p."""
    alt = _alt()
    order: list[str] = []
    for p in pairs:
        for m in (p["a"], p["b"]):
            if m not in order:
                order.append(m)
    labels = _unique_labels([(m, display_names.get(m, m)) for m in order])
    values = []
    for p in pairs:
        for a, b, sign in ((p["a"], p["b"], 1), (p["b"], p["a"], -1)):
            ci = p["ci"]
            lo_hi = interval_text(None if ci is None else ci if sign == 1 else [-ci[1], -ci[0]], decimals)
            d = sign * float(p["diff"]) + 0.0
            values.append({
                "row": labels[a], "col": labels[b], "diff": d,
                "text": ("≈" if not p["separable"] else "") + _fmt(d, decimals),
                "interval_text": lo_hi, "p": _plain(p["p"]), "p_holm": _plain(p["p_holm"]),
                "separable": "yes" if p["separable"] else "no (tie)",
                "sep": bool(p["separable"]),
            })
    sort = [labels[m] for m in order]
    pos = {labels[m]: i for i, m in enumerate(order)}
    values.sort(key=lambda v: (pos[v["row"]], pos[v["col"]]))  # row-major: one model's pairs together
    span = max([abs(v["diff"]) for v in values], default=1.0) or 1.0
    x = alt.X("col:N", title="minus (column)", sort=sort, axis=alt.Axis(labelAngle=-40, labelLimit=200, orient="top"))
    y = alt.Y("row:N", title="Model (row)", sort=sort, axis=alt.Axis(labelLimit=220))
    tooltip = [
        alt.Tooltip("row:N", title="Model"), alt.Tooltip("col:N", title="minus"),
        alt.Tooltip("text:N", title="Δ Overall-9"), alt.Tooltip("interval_text:N", title=f"{confidence} interval of Δ"),
        alt.Tooltip("p:N", title="p"), alt.Tooltip("p_holm:N", title="Holm-adjusted p"), alt.Tooltip("separable:N", title="Separable"),
    ]
    base = alt.Chart()  # no data: embed sets the layer's (LAYER_DATA)
    cells = base.mark_rect(stroke="white", strokeWidth=1).encode(
        x=x, y=y, tooltip=tooltip,
        color=alt.Color("diff:Q", title="Δ Overall-9", scale=alt.Scale(scheme="redblue", domain=[-span, span]),
                        legend=alt.Legend(orient="bottom", direction="horizontal", gradientLength=200)),
        opacity=alt.condition("datum.sep", alt.value(1.0), alt.value(0.3)),
    )
    text = base.mark_text(fontSize=11).encode(
        x=x, y=y, text="text:N", tooltip=tooltip,
        color=alt.condition(f"abs(datum.diff) > {0.6 * span!r}", alt.value("white"), alt.value("black")),
    )
    chart = alt.layer(cells, text).properties(
        width=cell_size * len(order), height=cell_size * len(order),
        title=alt.Title(title, subtitle="row minus column, public 0–100 scale; pale with ≈ = not separable (Holm-adjusted p above α)", anchor="start"),
    )
    return embed(chart, name, values=values)


# --------------------------------------------------------------------------- compare any models

@_chart_builder
def compare_picker(
    records: Sequence[Mapping[str, Any]],
    groups: Sequence[str],
    models: Sequence[str],
    name: str,
    *,
    initial_models: Sequence[str],
    title: str,
    width: int = 680,
    height: int = 280,
) -> HTMLFragment:
    """Components of any models in any group, chosen in the page: a drop-down picks the group,
    the legend picks the models (click one, shift-click to add). ``records``: one per group ×
    model × component with ``group``, ``model`` (display name), ``component``, ``value``
    (public 0–100, None = N/A) and ``value_text``; everything is precomputed, nothing reruns."""
    alt = _alt()
    group_pick = alt.param(name="group_pick", value=groups[0], bind=alt.binding_select(options=list(groups), name="Group "))
    model_pick = alt.selection_point(name="model_pick", fields=["model"], bind="legend", value=[{"model": m} for m in initial_models])
    comp_order = list(dict.fromkeys(r["component"] for r in records))
    colour = alt.Color("model:N", title="Models (click; shift-click to add)", scale=alt.Scale(domain=list(models)),
                       legend=alt.Legend(orient="bottom", columns=4, symbolLimit=0, symbolOpacity=1))  # the picked models: full swatches (not the invisible picker mark's opacity)
    # (the records stay on the base chart: with them on the layer, altair names the picker's
    # view differently, a needless change in every committed Compare notebook)
    base = alt.Chart(alt.Data(values=list(records))).transform_filter("datum.group === group_pick")
    picker = base.mark_point(opacity=0).encode(x=alt.X("component:N", sort=comp_order, title=None), color=colour).add_params(model_pick)
    tooltip = [alt.Tooltip("model:N", title="Model"), alt.Tooltip("component:N", title="Component"), alt.Tooltip("value_text:N", title="Score (0–100)")]
    bars = (
        base.transform_filter(model_pick).transform_filter("datum.value !== null")
        .mark_bar()
        .encode(
            x=alt.X("component:N", sort=comp_order, title=None, axis=alt.Axis(labelAngle=-30, labelLimit=200, labelFontSize=11)),
            xOffset=alt.XOffset("model:N", sort=list(models)),
            y=alt.Y("value:Q", title="Score (0–100)", scale=alt.Scale(domain=[0, 100])),
            color=alt.Color("model:N", scale=alt.Scale(domain=list(models)), legend=None),
            tooltip=tooltip,
        )
    )
    chart = alt.layer(picker, bars).add_params(group_pick).properties(
        width=width, height=height,
        title=alt.Title(title, subtitle=f"pick models in the legend and a group in the menu below the chart; {NA} components draw no bar", anchor="start"),
    )
    return embed(chart, name)


# --------------------------------------------------------------------------- coverage

@_chart_builder
def coverage_bars(
    df: Any,
    name: str,
    *,
    min_coverage: float | None = 0.9,
    title: str | None = None,
    width: int = 480,
    bar_size: int = 18,
) -> HTMLFragment:
    """Per-model status breakdown as 100 % stacked horizontal bars, labelled with coverage.

    ``df``: one row per model with ``model_id``, ``display_name`` and a count column per
    status (``scored``, ``invalid_evaluation``, ``missing_evaluation``,
    ``missing_generation``). Coverage = scored / total, shown as "95.7% (719/751)" at the end
    of each bar; a dashed rule marks ``min_coverage`` (the ranking threshold) if given.
    """
    alt = _alt()
    recs = _records(df)
    models = _ordered_models(recs)
    labels = _unique_labels(models)
    values, ends = [], []
    for r in recs:
        mid = str(r.get("model_id", r.get("display_name")))
        counts = {}
        for s in STATUSES:
            if s not in r or is_null(r[s]):
                raise ValueError(f"coverage_bars: model {mid!r} has no count for status {s!r}")
            counts[s] = int(r[s])
        total = sum(counts.values())
        cov = f"{percent(counts[SCORED], total)} ({counts[SCORED]}/{total})"
        for i, s in enumerate(STATUSES):
            values.append(
                {
                    "model": labels[mid],
                    "model_id": mid,
                    "status": STATUS_LABELS[s],
                    "status_order": i,
                    "count": counts[s],
                    "share": (counts[s] / total * 100) if total else 0.0,
                    "share_text": percent(counts[s], total),
                    "n_total": total,
                    "coverage_text": cov,
                }
            )
        ends.append({"model": labels[mid], "coverage_text": cov, "end": 100.0})
    y_sort = [labels[m] for m, _ in models]
    y = alt.Y("model:N", title=None, sort=y_sort, axis=alt.Axis(labelLimit=260))
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("status:N", title="Status"),
        alt.Tooltip("count:Q", title="Prompts"),
        alt.Tooltip("share_text:N", title="Share of prompts"),
        alt.Tooltip("coverage_text:N", title="Coverage (scored)"),
    ]
    status_names = [STATUS_LABELS[s] for s in STATUSES]
    bars = (
        alt.Chart(alt.Data(values=values))
        .mark_bar(size=bar_size)
        .encode(
            x=alt.X("share:Q", title="Share of prompts (%)", stack="zero", scale=alt.Scale(domain=[0, 100])),
            y=y,
            color=alt.Color(
                "status:N",
                title="Status",
                sort=status_names,
                scale=alt.Scale(domain=status_names, range=[STATUS_COLORS[s] for s in STATUSES]),
                legend=alt.Legend(orient="bottom"),
            ),
            order=alt.Order("status_order:Q", sort="ascending"),
            tooltip=tooltip,
        )
    )
    labels_layer = (
        alt.Chart(alt.Data(values=ends))
        .mark_text(align="left", dx=4, fontSize=10)
        .encode(x=alt.X("end:Q"), y=y, text="coverage_text:N")
    )
    layers = [bars, labels_layer]
    if min_coverage is not None:
        layers.append(
            alt.Chart(alt.Data(values=[{"threshold": float(min_coverage) * 100}]))
            .mark_rule(strokeDash=[4, 3], color="#333333")
            .encode(x="threshold:Q", tooltip=[alt.Tooltip("threshold:Q", title="Ranking threshold (%)")])
        )
    chart = alt.layer(*layers).properties(
        width=width,
        height=alt.Step(bar_size + 8),
        title=alt.Title(
            title or "Coverage by model",
            subtitle=(
                "stacked: scored / invalid evaluation / missing evaluation / missing generation"
                + (f"; dashed line = ranking threshold {float(min_coverage) * 100:g}%" if min_coverage is not None else "")
            ),
            anchor="start",
        ),
    )
    return embed(chart, name)
