"""Heatmaps of the book: the model × tag heatmap of Overall-9 and the pairwise heatmap of the
bootstrap differences, made and embedded as every chart (:mod:`searchgen_nb.book.charts`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import altair as alt

from searchgen_nb.numeric import decimal_text, scaled

from .charts import NA_COLOR, _chart_builder, _label, _layered, _mid, _model_labels, _plain
from .charts import _records, _score, _tips
from .display import HTMLFragment
from .fmt import NA, exact_diff, format_number, interval_text, is_null, number, share_text


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
