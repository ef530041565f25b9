"""Heatmaps of the book — model × tag Overall-9 and the pairwise bootstrap differences — and
the compare picker, made and embedded as every chart (:mod:`searchgen_nb.book.charts`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import altair as alt

from searchgen_nb.declaration import OVERALL_9_COMPONENTS
from searchgen_nb.numeric import decimal_text, figure_text

from .charts import (
    NA_COLOR,
    axis_label,
    chart_json,
    chart_records,
    component_rows,
    component_texts,
    count_value,
    data_block,
    interval_ends,
    layered_chart,
    model_labels,
    row_model,
    tooltips,
    unchecked,
)
from .display import HTMLFragment
from .fmt import NA, exact_diff, interval_text, is_null, number, share_text


def _white_if(test: str) -> Any:
    return alt.ColorValue(**alt.condition(test, alt.value("white"), alt.value("black")))


def _lookup(chart: Any, field: str, rows: list[dict], fields: list[str]) -> Any:
    """``chart`` with ``fields`` looked up by ``field`` in ``rows`` (once in the spec)."""
    return chart.transform_lookup(
        lookup=field, from_=alt.LookupData(alt.InlineData(values=rows), field, fields)
    )


_NONE = object()  # no overall given: a cell has no relative text


def _heat_cell(r: Mapping[str, Any], decimals: int, overall: Any = _NONE) -> dict:
    """A cell's values and their texts from its record (``{}``: N/A); with the model's
    ``overall`` (a mapping's value, or absent), also the text of the value minus it."""
    value, n_total, n_scored = (
        number(r.get("overall_9")),
        count_value(r.get("n_total")),
        count_value(r.get("n_scored")),
    )
    if value is None or overall is _NONE or is_null(overall):
        shown = None
    else:
        shown = exact_diff(value, overall)
    iv = None if is_null(r.get("interval")) else r.get("interval")
    return {
        "value": value,
        "value_text": figure_text(value, decimals),
        **interval_ends(iv, decimals),
        "interval_text": interval_text(iv, decimals),
        "n_total": n_total,
        "n_scored": n_scored,
        "coverage_text": share_text(n_scored, n_total, decimals),
        **({} if overall is _NONE else {"shown_text": figure_text(shown, decimals, sign=True)}),
    }


def _heat_cells(recs, tags, decimals, counts, overall) -> tuple[list[dict], dict, dict]:
    """(cells model-major — a model's cells together: one hunk in a diff —, model labels, tag
    → label with "(n=…)" from ``counts``): ``tags`` first, other tags sorted after them (only
    where a record has them); a model × tag pair without a record is an N/A cell."""
    labels, cells = model_labels(recs), {}
    names: dict[str, str | None] = {}

    def base(m: str) -> Any:
        return _NONE if overall is None else overall.get(m)

    for r in recs:
        m, t = row_model(r), str(r["tag"])
        if (m, t) in cells:
            raise ValueError(f"duplicate heatmap cell: model {m!r}, tag {t!r}")
        names.setdefault(t, None if is_null(r.get("tag_name")) else r["tag_name"])
        cells[m, t] = _heat_cell(r, decimals, base(m))
    every = [*tags, *sorted(set(names) - set(tags))]
    tag_labels = {
        t: axis_label(
            (f"{t} · {names[t]}" if names.get(t) else f"{t}")
            + (f" (n={counts[t]})" if counts and t in counts else "")
        )
        for t in every
    }
    out = [
        {
            **(cells.get((m, t)) or _heat_cell({}, decimals, base(m))),
            "model": labels[m],
            "model_id": m,
            "tag": t,
        }
        for m in labels
        for t in every
        if t in tags or (m, t) in cells
    ]
    return out, labels, tag_labels


def _with_links(base: Any, template: str, models: Sequence[str], tags: Sequence[str]) -> Any:
    """``base`` with each cell's ``href``: ``template`` with its ``{tag}`` and ``{model_id}``,
    URL-quoted once per tag and model in the spec (no cell's data line repeats the link)."""
    for field, keys in (("tag", tags), ("model_id", models)):
        base = _lookup(
            base, field, [{field: k, f"{field}_q": quote(k)} for k in keys], [f"{field}_q"]
        )
    parts = re.split(r"(\{tag\}|\{model_id\})", template)
    return base.transform_calculate(
        href=" + ".join(
            f"datum.{p[1:-1]}_q" if p in ("{tag}", "{model_id}") else chart_json(p)
            for p in parts
            if p
        )
    )


def _heat_chart(wide: float | None, relative: bool, tag_labels: Mapping[str, str]) -> tuple:
    """(the base chart every layer derives from, cell colour, label field, label colour): the
    best of each column (outlined) on 0–100 or, ``relative``, the value minus the model's
    overall (its record without a tag) around 0; a cell's texts and flags; tag labels."""
    base = alt.Chart()  # no data: embed sets the layers'
    legend = alt.Legend(
        orient="top", direction="horizontal", gradientLength=200, titleOrient="left"
    )
    if relative:
        base = base.transform_joinaggregate(base="max(overall)", groupby=["model_id"])
    base = base.transform_filter("datum.tag !== null")  # not a model's overall line
    if relative:
        base = base.transform_calculate(
            shown="datum.value === null || datum.base === null ? null : datum.value - datum.base"
        )
        base = base.transform_calculate(abs_shown="abs(datum.shown)")
        base = base.transform_joinaggregate(span="max(abs_shown)")
        colour = alt.Color(
            "shown:Q",
            title="Overall-9 − the model's overall",
            legend=legend,
            scale=alt.Scale(scheme="redblue", domainMid=0),
        )
        text = (
            alt.Text("shown_text:N"),
            _white_if("datum.shown !== null && abs(datum.shown) > 0.6 * datum.span"),
        )
    else:
        base = base.transform_joinaggregate(top="max(value)", groupby=["tag"]).transform_calculate(
            best="datum.value !== null && datum.value === datum.top"
        )
        colour = alt.Color(
            "value:Q",
            title="Overall-9",
            legend=legend,
            scale=alt.Scale(scheme="viridis", domain=[0, 100], clamp=True),
        )
        text = (
            alt.Text("value_text:N"),
            alt.ColorValue(
                **alt.condition(
                    "datum.value === null || datum.value >= 60",
                    alt.value("black"),
                    alt.value("white"),
                )
            ),
        )
    base = base.transform_calculate(
        is_na="datum.value === null",
        n_text=f"datum.n_total === null ? '{NA}' : '' + datum.n_total",
        wide="false" if wide is None else f"datum.lo !== null && datum.hi - datum.lo > {wide!r}",
    )
    base = _lookup(
        base,
        "tag",
        [
            {"tag": t, "tag_label": label}  # a tag's label: one line each
            for t, label in tag_labels.items()
        ],
        ["tag_label"],
    )
    return base, colour, *text


@unchecked
def heatmap(
    df: Any,
    name: str,
    *,
    title: str | None = None,
    subtitle: str | None = None,
    decimals: int = 1,
    tag_order: Sequence[str] | None = None,
    overall: Mapping[str, float | None] | None = None,
    relative: bool = False,
    href: str | None = None,
    wide_interval: float | None = None,
    confidence: str = "95%",
    tag_counts: Mapping[str, int] | None = None,
    data_id: str | None = None,
    group_title: str = "Tag",
) -> HTMLFragment:
    """Model × tag heatmap of Overall-9 (0–100, N/A grey; ValueError for a duplicate cell) from
    records (``model_id``, ``display_name``, ``tag``, ``overall_9``, ``n_total``, ``n_scored``);
    ``relative``: minus ``overall``; ``data_id``: a page data block; ``href``: {tag}, {model_id};
    ``group_title``: what the tooltip calls a column."""
    recs = chart_records(df)
    tags = list(tag_order) if tag_order is not None else sorted({str(r["tag"]) for r in recs})
    side = 46 if len(tags) <= 12 else 40 if len(tags) <= 18 else 36  # px: 22 tags fit 960 px
    cells, labels, tag_labels = _heat_cells(recs, tags, decimals, tag_counts, overall)
    cells = [
        {"group": "All", "model_id": m, "overall": overall.get(m), "tag": None}  # its base
        for m in labels
        if overall is not None
    ] + cells
    axis = alt.Axis(labelAngle=-45, labelLimit=320, orient="bottom", labelFontSize=11)
    x = alt.X("tag_label:N", title=None, sort=list(tag_labels.values()), axis=axis)
    y = alt.Y(
        "model:N",
        title=None,
        sort=list(labels.values()),
        axis=alt.Axis(labelLimit=260, labelFontSize=11),
    )
    tooltip = tooltips("model:N", "Model", "tag_label:N", group_title, "value_text:N", "Overall-9")
    if any(c.get("lo") is not None for c in cells):  # none computed (a slice's tags): no line
        tooltip += tooltips("interval_text:N", f"{confidence} interval")
    tooltip += tooltips("n_text:N", "Prompts (n_total)", "coverage_text:N", "Coverage (scored)")
    na_tips = list(tooltip)
    if relative:
        tooltip.insert(3, alt.Tooltip("shown_text:N", title="vs the model's overall"))
    enc, link = {"x": x, "y": y, "tooltip": tooltip}, {"href": alt.Href("href:N")} if href else {}
    base, colour, text, text_colour = _heat_chart(wide_interval, relative, tag_labels)
    base = _with_links(base, href, list(labels), list(tag_labels)) if href else base
    layers = [
        base.transform_filter("!datum.is_na")
        .mark_rect(
            stroke="white",
            strokeWidth=1,
            cursor="pointer" if href else "default",
        )
        .encode(color=colour, **enc, **link),
        base.transform_filter("datum.is_na")
        .mark_rect(  # (no relative value in the tooltip)
            color=NA_COLOR, stroke="white", strokeWidth=1
        )
        .encode(**{**enc, "tooltip": na_tips}),
    ]
    if not relative:
        layers.append(
            base.transform_filter("datum.best")
            .mark_rect(filled=False, stroke="#000000", strokeWidth=2.5)
            .encode(**enc, **link)
        )
    if wide_interval is not None:
        layers.append(
            base.transform_filter("datum.wide")
            .mark_rect(filled=False, stroke="#111111", strokeWidth=1.5, strokeDash=[3, 2])
            .encode(**enc)
        )
    layers.append(base.mark_text(fontSize=11).encode(text=text, color=text_colour, **enc, **link))
    subtitle = subtitle or f"0–100; grey cells labelled {NA} = not applicable (no value), not 0"
    chart = layered_chart(
        name,
        layers,
        title or "Overall-9 by model and tag",
        subtitle,
        None if data_id else cells,
        data_id=data_id,
        width=max(side * len(tag_labels), 120),
        height=max(side * len(labels), 60),
    )
    block = "" if data_id is None or relative else data_block(data_id, cells)
    return HTMLFragment(block + chart.html, chart.label)


#: The fields a pair's two cells (a−b, b−a) flatten into.
_FLAT = ["row", "col", "s", "text", "interval_text"]


def _pair_texts(p: Mapping[str, Any], decimals: int) -> dict:
    """The texts of a pair's Δ (≈ before it when not separable) and its interval, for the
    cell a−b then b−a (the negation of each)."""
    tie = "" if p["separable"] else "≈"
    diff, ci = float(p["diff"]), p["ci"]
    flip = None if ci is None else [-float(ci[1]) + 0.0, -float(ci[0]) + 0.0]
    return {
        "t": [tie + figure_text(d, decimals) for d in (diff, -diff + 0.0)],
        "it": [interval_text(ci, decimals), interval_text(flip, decimals)],
    }


@unchecked
def pairwise_heatmap(
    pairs: Sequence[Mapping[str, Any]],
    display_names: Mapping[str, str],
    name: str,
    *,
    title: str,
    confidence: str = "95%",
    decimals: int = 1,
    group: str = "All",
) -> HTMLFragment:
    """Ranked models × ranked models (rank order): row a, column b is Overall-9(a) −
    Overall-9(b); pairs that cannot be separated (Holm-adjusted p above α) pale with "≈". A
    record per pair of ``uncertainty.json`` (naming the ``group``); the chart mirrors it."""
    order = list(dict.fromkeys(m for p in pairs for m in (p["a"], p["b"])))
    labels = model_labels([{"model_id": m, "display_name": display_names.get(m, m)} for m in order])
    values: list[dict[str, Any]] = [
        {
            "a": labels[p["a"]],
            "b": labels[p["b"]],
            "group": group,  # v: Δ, lo, hi; t, it: the texts of Δ and its interval, a−b and b−a
            "v": [float(p["diff"]), *([None] * 2 if p["ci"] is None else map(float, p["ci"]))],
            **_pair_texts(p, decimals),
            "p": [NA if p[k] is None else decimal_text(p[k]) for k in ("p", "p_holm")],
            "sep": bool(p["separable"]),
        }
        for p in pairs
    ]
    sort = list(labels.values())
    span = max((abs(v["v"][0]) for v in values), default=1.0) or 1.0
    base = (
        alt.Chart()
        .transform_calculate(  # no data: embed sets the layers'
            diff="datum.v[0]",
            p_text="datum.p[0]",
            p_holm="datum.p[1]",
            row="[datum.a, datum.b]",
            col="[datum.b, datum.a]",
            s="[1, -1]",
        )
        .transform_flatten(["row", "col", "s", "t", "it"], as_=list(_FLAT))
        .transform_calculate(
            d="datum.s * datum.diff + 0", separable="datum.sep ? 'yes' : 'no (tie)'"
        )
    )
    enc = {
        "x": alt.X(
            "col:N",
            title="minus (column)",
            sort=sort,
            axis=alt.Axis(labelAngle=-40, labelLimit=200, orient="top"),
        ),
        "y": alt.Y("row:N", title="Model (row)", sort=sort, axis=alt.Axis(labelLimit=220)),
        "tooltip": tooltips(
            "row:N",
            "Model",
            "col:N",
            "minus",
            "text:N",
            "Δ Overall-9",
            "interval_text:N",
            f"{confidence} interval of Δ",
            "p_text:N",
            "p",
            "p_holm:N",
            "Holm-adjusted p",
            "separable:N",
            "Separable",
        ),
    }
    legend = alt.Legend(orient="bottom", direction="horizontal", gradientLength=200)
    colour = alt.Color(
        "d:Q",
        title="Δ Overall-9",
        legend=legend,
        scale=alt.Scale(scheme="redblue", domain=[-span, span]),
    )
    layers = [
        base.mark_rect(stroke="white", strokeWidth=1).encode(
            color=colour,
            opacity=alt.OpacityValue(**alt.condition("datum.sep", alt.value(1.0), alt.value(0.3))),
            **enc,
        ),
        base.mark_text(fontSize=11).encode(
            text=alt.Text("text:N"), color=_white_if(f"abs(datum.d) > {0.6 * span!r}"), **enc
        ),
    ]
    subtitle = (
        "row minus column, public 0–100 scale; pale with ≈ = not separable "
        "(Holm-adjusted p above α)"
    )
    return layered_chart(
        name, layers, title, subtitle, values, width=40 * len(order), height=40 * len(order)
    )


@unchecked
def compare_picker(
    rows: Sequence[Mapping[str, Any]],
    groups: Sequence[str],
    models: Sequence[str],
    name: str,
    *,
    title: str,
    decimals: int = 1,
) -> HTMLFragment:
    """Components of models picked on the legend (first three shown) in a group picked from a
    menu; ``rows``: per group × model ``group``, ``model`` (name), nine values ``v`` (null: N/A),
    each record given their texts ``t`` at ``decimals`` places."""
    rows = [{**r, "t": component_texts(r["v"], decimals)} for r in rows]
    group_pick = alt.param(
        name="group_pick",
        value=groups[0],
        bind=alt.binding_select(options=list(groups), name="Group "),
    )
    model_pick = alt.selection_point(
        name="model_pick",
        fields=["model"],
        bind="legend",
        toggle="true",
        value=[{"model": m} for m in models[:3]],
    )
    colour = alt.Color(
        "model:N",
        title="Models (tap to add or remove)",
        scale=alt.Scale(domain=list(models)),
        legend=alt.Legend(orient="bottom", columns=3, symbolLimit=0, symbolOpacity=1),
    )  # full swatches
    # the records stay on the base chart: on the layer, altair names the picker's view otherwise
    base = alt.Chart(alt.Data(values=list(rows))).transform_filter("datum.group === group_pick")
    base, x, y = component_rows(base, OVERALL_9_COMPONENTS, labelFontSize=11)
    picker = base.mark_point(opacity=0).encode(x=x, color=colour).add_params(model_pick)
    picker = picker.properties(name="picker")  # a fixed view name, not a hash of the data
    bars = base.transform_filter(model_pick).transform_filter("datum.value !== null")
    bars = bars.mark_bar().encode(
        x=x,
        xOffset=alt.XOffset("model:N", sort=list(models)),
        y=y,
        color=colour,  # the picker's legend, the same (two legends' settings would conflict)
        tooltip=tooltips(
            "model:N", "Model", "component:N", "Component", "value_text:N", "Score (0–100)"
        ),
    )
    subtitle = (
        f"tap models in the legend and pick a group in the menu below the chart; {NA} "
        "components draw no bar"
    )
    return layered_chart(
        name, [picker, bars], title, subtitle, params=[group_pick], width=680, height=280
    )
