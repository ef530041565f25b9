"""Rendering layer: vendored assets, charts (vegaEmbed HTML) and sortable tables.

Pins: N/A vs 0.0 in tables and chart data, escaping of ``<script>`` in tables and inlined
specs, fixed ids and byte-identical output, sort keys, unranked flag, heatmap tooltip fields.
The last test opens a page built from these fragments from ``file://`` in headless Chromium
(marked ``browser``; as in ``tests/browser.py``, a missing Chromium skips it outside CI and fails
it in CI).
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from searchgen_nb.book import assets, charts, fmt, heatmaps, sphinx_ext, tables
from searchgen_nb.declaration import COMPONENTS, OVERALL_9_COMPONENTS

ROOT = Path(__file__).resolve().parents[1]
EVIL = "</script><script>alert('x')</script><!-- & \u2028"


# --------------------------------------------------------------------------- fixtures


def _row(model_id, name, overall_9, *, rank, ranked=True, n_scored=751, n_total=751, **comp_over):
    comps = {c: 50.0 for c in COMPONENTS}
    comps.update(comp_over)
    return {
        "model_id": model_id,
        "display_name": name,
        "type": "Open",
        "missing_policy": "zero_fill",
        "n_total": n_total,
        "n_scored": n_scored,
        "n_included": n_total,
        "coverage": round(n_scored / n_total, 4),
        "overall_9": overall_9,
        "overall_10": None if overall_9 is None else overall_9 - 1,
        "components": comps,
        "component_counts": {c: n_total for c in COMPONENTS},
        "rank": rank,
        "ranked": ranked,
    }


@pytest.fixture()
def rows():
    return [
        _row("aurora_xl", "Aurora-XL", 72.2, rank=1, text_rendering=None),
        _row("zero_model", "Zero", 0.0, rank=2, checklist=0.0),
        _row("evil", EVIL, None, rank=None, ranked=False, n_scored=300),
    ]


class _Cells(HTMLParser):
    """Collects th/td of every table: attrs and text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, dict] = {}
        self._table = None
        self._cell = None
        self._row = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = {"attrs": a, "head": [], "rows": []}
            self.tables[a.get("id")] = self._table
        elif tag == "tr" and self._table is not None:
            self._row = {"attrs": a, "cells": []}
        elif tag in ("td", "th") and self._row is not None:
            self._cell = {"tag": tag, "attrs": a, "text": "", "links": []}
        elif tag == "a" and self._cell is not None:
            self._cell["links"].append(a.get("href"))
        elif tag == "script":
            raise AssertionError("script element inside a table")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row["cells"].append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row["cells"] and self._row["cells"][0]["tag"] == "th":
                self._table["head"] = self._row["cells"]
            else:
                self._table["rows"].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data


def parse_table(fragment) -> dict:
    p = _Cells()
    p.feed(fragment.html)
    (table,) = p.tables.values()
    return table


def spec_of(fragment) -> dict:
    m = re.search(r"var spec=(.*?);\nvar opt=", fragment.html, re.S)
    assert m, "no inlined spec"
    return json.loads(m.group(1))


def layer_values(spec) -> list[dict]:
    """Inline data of a chart (top-level or per layer; altair may move it to ``datasets``),
    not the heatmaps' tag labels (a lookup's dataset)."""
    out = []
    for ds in (spec.get("datasets") or {}).values():
        out.extend(r for r in ds if set(r) != {"tag", "tag_label"})
    for layer in [spec, *spec.get("layer", [])]:
        data = layer.get("data") or {}
        out.extend(data.get("values") or [])
    return out


def drawn_texts(fragment) -> list[str]:
    """The texts a chart draws (vega's SVG rendering of its spec, HTML entities decoded)."""
    import html

    import vl_convert

    svg = vl_convert.vegalite_to_svg(spec_of(fragment))
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


# --------------------------------------------------------------------------- assets


@pytest.fixture(scope="module")
def vendor(tmp_path_factory):
    dest = tmp_path_factory.mktemp("vendor")
    names = assets.write_vendor_assets(dest)
    return dest, names


def test_vendor_assets_names_and_globals(vendor):
    dest, names = vendor
    assert names == list(assets.VENDOR_JS) + list(assets.VENDOR_CSS)
    for n in names:
        assert (dest / n).is_file() and (dest / n).stat().st_size > 0
    vega = (dest / "vega-embed.bundle.js").read_text(encoding="utf-8")
    assert vega.rstrip().endswith("})();")
    assert "window.vegaEmbed=" in vega
    assert "vg-tooltip" in vega  # vega-tooltip (vega-embed's default tooltip handler) is bundled
    dt = (dest / "datatables.bundle.js").read_text(encoding="utf-8")
    assert "window.SearchgenDataTables={" in dt
    assert not re.search(r"\bexport\s*\{", dt)  # classic script: no ES module syntax left
    assert "import.meta" not in dt
    glue = (dest / "searchgen-nb.js").read_text(encoding="utf-8")
    assert "window.SearchgenDataTables" in glue and "sg-num-na" in glue
    for n in names:  # nothing is fetched from the web by our own files' URLs
        text = (dest / n).read_text(encoding="utf-8")
        assert not re.search(r"""(?:src|href)\s*=\s*["']https?://""", text), n


def test_vendor_assets_byte_identical_rerun(vendor, tmp_path):
    dest, names = vendor
    again = assets.write_vendor_assets(tmp_path / "v2")
    assert again == names
    for n in [*names, assets.PROVENANCE_FILE]:
        assert (dest / n).read_bytes() == (tmp_path / "v2" / n).read_bytes(), n


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_vendor_js_is_valid_classic_script(vendor):
    dest, names = vendor
    for n in names:
        if n.endswith(".js"):
            r = subprocess.run(["node", "--check", str(dest / n)], capture_output=True, text=True)
            assert r.returncode == 0, (n, r.stderr[-500:])


def test_vendor_refuses_static_folder(tmp_path):
    with pytest.raises(ValueError):
        assets.write_vendor_assets(tmp_path / "_static")


def test_book_config_loads_the_vendor_assets_in_order():
    import yaml

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "_config.yml").read_text())
    sphinx = config["sphinx"]["config"]
    assert sphinx["html_js_files"] == list(assets.VENDOR_JS)
    assert sphinx["html_css_files"] == list(assets.VENDOR_CSS)


def test_page_guard_dedupes_and_flags_web_assets(caplog):
    from sphinx.builders.html._assets import _JavaScript

    thebe = "const THEBE_JS_URL = 1;"
    files = [
        _JavaScript("_static/a.js"),
        _JavaScript("", body=thebe),
        _JavaScript(None, body=thebe),  # same script, added after builder init
        _JavaScript("https://cdn.example.org/mathjax.js"),
    ]
    ctx = {"script_files": files, "css_files": []}
    with caplog.at_level("WARNING"):
        sphinx_ext._page_assets_guard(None, "page", "page.html", ctx, None)
    assert [f.filename for f in ctx["script_files"]] == [
        "_static/a.js",
        "",
        "https://cdn.example.org/mathjax.js",
    ]
    assert "cdn.example.org" in caplog.text and "_static/a.js" not in caplog.text


def test_fragment_is_html_only():
    f = charts.component_bars([_row("a", "A", 1.0, rank=1)], "one")
    bundle = f._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    assert bundle["text/plain"] == "<chart sg-chart-one>" == repr(f)  # no memory address


# --------------------------------------------------------------------------- charts


def test_dumps_script_json_is_script_safe():
    text = charts.dumps_script_json({"name": EVIL, "b": 1})
    for bad in ("<", ">", "&", "\u2028"):
        assert bad not in text
    assert json.loads(text) == {"name": EVIL, "b": 1}
    assert text.index('"b"') < text.index('"name"')  # sorted keys
    with pytest.raises(ValueError):
        charts.dumps_script_json({"x": math.nan})


@pytest.mark.parametrize("bad", ["", "has space", "a/b", "<x>", "-lead", None])
def test_chart_id_rejects_bad_names(bad):
    with pytest.raises(ValueError):
        charts.chart_id(bad)


def _heat_records():
    return [
        {
            "model_id": "m1",
            "display_name": "Model One",
            "tag": "ART",
            "overall_9": None,
            "n_total": 258,
            "n_scored": 250,
            "coverage": 0.969,
        },
        {
            "model_id": "m1",
            "display_name": "Model One",
            "tag": "ABS",
            "overall_9": 0.0,
            "n_total": 14,
            "n_scored": 14,
            "coverage": 1.0,
        },
        {
            "model_id": "m2",
            "display_name": EVIL,
            "tag": "ART",
            "overall_9": 55.25,
            "n_total": 258,
            "n_scored": 200,
            "coverage": 0.7752,
        },
        # (m2, ABS) missing on purpose
    ]


def test_heatmap_cell_links_made_in_the_chart():
    recs = [
        *_heat_records(),
        {"model_id": "m 3", "display_name": "M3", "tag": "A&B", "overall_9": 9.0},
    ]
    f = heatmaps.heatmap(recs, "links", href="p.html?domain={tag}&model={model_id}")
    spec = spec_of(f)
    lookups = [r for ds in spec["datasets"].values() for r in ds]
    assert {"tag": "A&B", "tag_q": "A%26B"} in lookups and {
        "model_id": "m 3",
        "model_id_q": "m%203",
    } in lookups
    assert not any("href" in v for v in layer_values(spec))  # no data line repeats a link
    assert "9.0" in drawn_texts(f)  # drawn: the link's expression is one Vega knows


def test_chart_labels_follow_rounding_decimals():
    """Labels show the release's rounding_decimals (a 2-decimal release shows 55.25 and 0.00,
    not 55.3 and 0.0); bars the same."""
    texts = drawn_texts(heatmaps.heatmap(_heat_records(), "heat2", decimals=2))
    assert {"55.25", "0.00"} <= set(texts) and "55.3" not in texts
    row = {
        "model_id": "m",
        "display_name": "M",
        "components": {"checklist": 72.5},
        "component_counts": {"checklist": 3},
    }
    bars = drawn_texts(charts.component_bars([row], "bars2", components=["checklist"], decimals=2))
    assert "72.50" in bars and "72.5" not in bars


def test_heatmap_na_zero_tooltips_labels():
    names = {"ART": "Art & Design", "ABS": "Abstract"}
    f = heatmaps.heatmap([dict(r, tag_name=names[r["tag"]]) for r in _heat_records()], "heat")
    spec = spec_of(f)
    vals = {(v["model_id"], v["tag"]): v for v in layer_values(spec)}
    assert len(vals) == 4  # the missing pair is filled, not a silent hole
    na = vals[("m1", "ART")]
    assert na["value"] is None and na["n_total"] == 258 and na["n_scored"] == 250
    zero = vals[("m1", "ABS")]
    assert zero["value"] == 0.0
    hole = vals[("m2", "ABS")]
    assert hole["value"] is None and hole["n_total"] is None
    # raw text in the data (vega draws it as text); only U+2028 (breaks vega expressions) -> space
    assert vals[("m2", "ART")]["model"] == EVIL.replace("\u2028", " ")
    # each cell's data line holds its values and their texts (figure_text); no Vega format rounds
    texts = drawn_texts(f)
    assert sorted(texts[:4]) == ["0.0", "55.3", "N/A", "N/A"]  # zero is 0.0, null N/A; 1 decimal
    assert {"ABS · Abstract", "ART · Art & Design"} <= set(texts)
    assert (na["value_text"], na["coverage_text"]) == ("N/A", "96.9% (250/258)")
    assert (zero["value_text"], hole["coverage_text"]) == ("0.0", "N/A")
    assert "format(" not in json.dumps(spec)

    colored, grey = spec["layer"][0], spec["layer"][1]
    assert colored["transform"][-1] == {"filter": "!datum.is_na"}
    assert colored["encoding"]["color"]["scale"]["domain"] == [
        0,
        100,
    ]  # 0.0 is the low end, not "missing"
    assert (
        grey["transform"][-1] == {"filter": "datum.is_na"}
        and grey["mark"]["color"] == charts.NA_COLOR
    )
    tips = {t["title"]: t["field"] for t in colored["encoding"]["tooltip"]}
    assert tips == {  # no interval was computed for these cells: no interval line
        "Model": "model",
        "Tag": "tag_label",
        "Overall-9": "value_text",
        "Prompts (n_total)": "n_text",
        "Coverage (scored)": "coverage_text",
    }
    assert grey["encoding"]["tooltip"] == colored["encoding"]["tooltip"]
    with_iv = [
        dict(r, interval=[50.0, 60.04]) if r["overall_9"] == 55.25 else r for r in _heat_records()
    ]
    iv_spec = spec_of(heatmaps.heatmap(with_iv, "heat-iv"))
    assert [t["title"] for t in iv_spec["layer"][0]["encoding"]["tooltip"]][3] == "95% interval"
    assert {(v["model_id"], v["tag"]): (v["lo"], v["hi"]) for v in layer_values(iv_spec)}[
        ("m2", "ART")
    ] == (50.0, 60.0)
    assert spec["layer"][0]["encoding"]["x"]["sort"] == ["ABS · Abstract", "ART · Art & Design"]


def test_duplicate_display_names_stay_apart():
    recs = [
        {
            "model_id": "a",
            "display_name": "Same",
            "tag": "T",
            "overall_9": 1.0,
            "n_total": 1,
            "n_scored": 1,
        },
        {
            "model_id": "b",
            "display_name": "Same",
            "tag": "T",
            "overall_9": 2.0,
            "n_total": 1,
            "n_scored": 1,
        },
    ]
    vals = layer_values(spec_of(heatmaps.heatmap(recs, "dups")))
    assert sorted(v["model"] for v in vals) == ["Same (a)", "Same (b)"]


def test_heatmap_rejects_duplicate_cells():
    recs = _heat_records()
    with pytest.raises(ValueError):
        heatmaps.heatmap(recs + [recs[0]], "dup")


def test_chart_html_escapes_script_and_is_offline():
    f = heatmaps.heatmap(_heat_records(), "heat")
    h = f.html
    assert h.count("<script") == 1 and h.count("</script>") == 1 and h.endswith("</script>")
    assert "<!--" not in h and "\u2028" not in h
    assert "http://" not in h and "https://" not in h  # no $schema URL, no CDN
    assert 'id="sg-chart-heat"' in h and "vegaEmbed" in h
    assert "application/vnd.vegalite" not in h
    opt = json.loads(re.search(r"var opt=(.*?);\nfunction go", h).group(1))
    assert opt["tooltip"] is True and opt["actions"]["editor"] is False


def test_component_bars_null_is_na_and_zero_is_bar(rows):
    f = charts.component_bars(rows, "comp", models=["aurora_xl", "zero_model"], group="NoSearch")
    spec = spec_of(f)
    vals = {v["model_id"]: v for v in layer_values(spec)}  # a line per model, naming its group
    assert list(vals) == ["aurora_xl", "zero_model"] and {v["group"] for v in vals.values()} == {
        "NoSearch"
    }
    comps = {c: i for i, c in enumerate(OVERALL_9_COMPONENTS)}  # values in component order
    assert vals["aurora_xl"]["v"][comps["text_rendering"]] is None
    assert vals["zero_model"]["v"][comps["checklist"]] == 0.0
    assert "value_text" not in vals["aurora_xl"] and len(vals["aurora_xl"]["n"]) == len(
        OVERALL_9_COMPONENTS
    )
    bars, na_layer = spec["layer"][0], spec["layer"][1]
    assert bars["mark"]["type"] == "bar" and bars["transform"][-1] == {
        "filter": "datum.value !== null"
    }
    assert na_layer["mark"]["type"] == "text" and na_layer["transform"][-1] == {
        "filter": "datum.value === null"
    }
    texts = drawn_texts(f)
    assert "N/A" in texts and "0.0" in texts  # N/A drawn in place of a bar; a zero is a bar
    assert "Text Reference" not in texts  # nine public by default
    with pytest.raises(ValueError):
        charts.component_bars(rows, "comp", models=["nope"])


def test_coverage_bars_breakdown():
    df = pd.DataFrame(
        [
            {
                "model_id": "a",
                "display_name": "A",
                "scored": 719,
                "invalid_evaluation": 10,
                "missing_evaluation": 12,
                "missing_generation": 10,
            },
            {
                "model_id": "b",
                "display_name": EVIL,
                "scored": 0,
                "invalid_evaluation": 0,
                "missing_evaluation": 0,
                "missing_generation": 5,
            },
        ]
    )
    f = charts.coverage_bars(df, "cov")
    vals = {v["model_id"]: v for v in layer_values(spec_of(f)) if "c" in v}  # a line per model
    assert vals["a"]["c"] == [719, 10, 12, 10] and vals["a"]["group"] == "All"  # status order
    texts = drawn_texts(f)  # shares and labels made in the chart, half-up
    assert "95.7% (719/751)" in texts and "0.0% (0/5)" in texts
    with pytest.raises(ValueError):
        charts.coverage_bars(df.drop(columns=["missing_generation"]), "cov")


def test_charts_deterministic_in_process(rows):
    a = charts.component_bars(rows, "same").html
    b = charts.component_bars(copy.deepcopy(rows), "same").html
    assert a == b
    assert (
        heatmaps.heatmap(_heat_records(), "h").html == heatmaps.heatmap(_heat_records(), "h").html
    )


_SNIPPET = """
import hashlib, sys
sys.path.insert(0, {root!r})
from searchgen_nb.book import heatmaps, tables
recs = [{{"model_id": "m", "display_name": "M", "tag": "ART", "overall_9": None,
          "n_total": 3, "n_scored": 1, "coverage": 0.3333}},
        {{"model_id": "n", "display_name": "N", "tag": "ART", "overall_9": 0.0,
          "n_total": 3, "n_scored": 3, "coverage": 1.0}}]
out = heatmaps.heatmap(recs, "h").html + tables.data_table(recs, "t").html
print(hashlib.sha256(out.encode()).hexdigest())
"""


def test_output_byte_identical_across_processes():
    digests = set()
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run(
            [sys.executable, "-c", _SNIPPET.format(root=str(ROOT))],
            capture_output=True,
            text=True,
            env=env,
        )
        assert r.returncode == 0, r.stderr
        digests.add(r.stdout.strip())
    assert len(digests) == 1


# --------------------------------------------------------------------------- tables


def test_format_number():
    assert fmt.format_number(None) == ("N/A", "")
    assert fmt.format_number(math.nan) == ("N/A", "")
    assert fmt.format_number(pd.NA) == ("N/A", "")
    assert fmt.format_number(0.0) == ("0.0", "0.0")
    assert fmt.format_number(70.0) == ("70.0", "70.0")
    assert fmt.format_number(72.25) == ("72.25", "72.25")
    assert fmt.format_number(72.25, 1) == ("72.3", "72.25")  # half-up on the decimal value
    assert fmt.format_number(0.00001) == ("0.00001", "1e-05")
    assert fmt.format_number(7) == ("7", "7")
    with pytest.raises(TypeError):
        fmt.format_number(True)


def test_leaderboard_columns_headers_links(rows):
    t = parse_table(tables.leaderboard_table(rows, "lb", methods_href="methods.html"))
    keys = [c["attrs"]["data-sg-col"] for c in t["head"]]
    assert keys == [
        "rank",
        "model",
        "type",
        "overall_9",
        "gap",
        "overall_10",
        "coverage",
        "missing_policy",
        *OVERALL_9_COMPONENTS,
    ]
    head = {c["attrs"]["data-sg-col"]: c for c in t["head"]}
    assert all(
        "sg-component" in head[c]["attrs"]["class"].split() for c in OVERALL_9_COMPONENTS
    )  # one group to hide
    assert (
        "sg-component" not in head["overall_9"]["attrs"]["class"]
        and "sg-component" not in head["coverage"]["attrs"]["class"]
    )
    assert "Overall-10 (paper-compatible)" in head["overall_10"]["text"]
    assert head["overall_9"]["links"] == ["methods.html#overall-9"]
    assert "nine public components" in head["overall_9"]["attrs"]["title"]
    assert all(c["attrs"].get("title") for c in t["head"])
    assert "sg-num" in head["overall_9"]["attrs"]["class"].split()
    assert "sg-num" not in head["model"]["attrs"]["class"].split()
    t2 = parse_table(tables.leaderboard_table(rows, "lb", methods_href=None))
    assert all(not c["links"] for c in t2["head"])
    opts = json.loads(t["attrs"]["data-sg-options"])
    assert opts["order"] == [] and opts["paging"] is False


def key(cell) -> str:
    """A cell's sort key as the book's sort reads it: its data-order, else the number its text
    starts with ("" for none: N/A, sorted last)."""
    lead = re.match(r"\s*[+-]?(\d+\.?\d*|\.\d+)", cell["text"])
    return cell["attrs"].get("data-order", lead.group(0) if lead else "")


def test_leaderboard_na_zero_sort_keys(rows):
    t = parse_table(tables.leaderboard_table(rows, "lb"))
    keys = [c["attrs"]["data-sg-col"] for c in t["head"]]
    by_model = {r["attrs"]["data-model-id"]: dict(zip(keys, r["cells"])) for r in t["rows"]}
    a, z, e = by_model["aurora_xl"], by_model["zero_model"], by_model["evil"]
    assert (a["overall_9"]["text"], key(a["overall_9"])) == ("72.2", "72.2")
    assert (a["text_rendering"]["text"], key(a["text_rendering"])) == ("N/A", "")
    assert "sg-na" in a["text_rendering"]["attrs"]["class"]
    assert (z["overall_9"]["text"], key(z["overall_9"])) == ("0.0", "0.0")
    assert (z["checklist"]["text"], key(z["checklist"])) == ("0.0", "0.0")
    assert (e["overall_9"]["text"], key(e["overall_9"])) == ("N/A", "")
    assert (e["rank"]["text"], key(e["rank"])) == ("–", "")  # unranked: no rank, sorted last
    assert e["coverage"]["text"] == "300/751 (39.9%)" and key(e["coverage"]) == "0.3995"
    numeric = ["sg-num" in h["attrs"]["class"].split() for h in t["head"]]  # the header says
    for r in t["rows"]:  # every numeric cell has a sort key, N/A never blank / nan / 0
        for c, num in zip(r["cells"], numeric, strict=True):
            assert c["text"].strip() not in ("", "nan", "NaN", "None")
            assert "sg-num" not in (c["attrs"].get("class") or "")
            if num and key(c):
                float(key(c))


def test_leaderboard_unranked_flag_and_escaping(rows):
    f = tables.leaderboard_table(rows, "lb", min_coverage=0.9)
    assert "<script>alert" not in f.html and "</script><script>" not in f.html
    assert "&lt;/script&gt;&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in f.html
    t = parse_table(f)
    evil = next(r for r in t["rows"] if r["attrs"]["data-model-id"] == "evil")
    assert evil["attrs"]["class"] == "sg-unranked"
    assert "unranked (coverage < 90%)" in evil["cells"][1]["text"]
    assert EVIL in evil["cells"][1]["text"]  # shown as literal text
    assert key(evil["cells"][1]) == EVIL
    ranked = [r for r in t["rows"] if r["attrs"]["data-model-id"] != "evil"]
    assert all("class" not in r["attrs"] for r in ranked)
    assert "unranked" not in "".join(c["text"] for r in ranked for c in r["cells"])
    assert "coverage &lt; 85%" in tables.leaderboard_table(rows, "lb", min_coverage=0.85).html


def test_leaderboard_deterministic_and_every_row(rows):
    many = [_row(f"m{i:04d}", f"M{i}", float(i % 97), rank=i + 1) for i in range(1500)]
    f = tables.leaderboard_table(many, "big")
    assert len(parse_table(f)["rows"]) == 1500  # no downsampling
    assert tables.leaderboard_table(many, "big").html == f.html
    assert 'id="big"' in f.html and 'id="big-wrap"' in f.html
    for bad in ("", "1abc", "a b", 'x"y', None):
        with pytest.raises(ValueError):
            tables.leaderboard_table(rows, bad)


def test_data_table_na_zero_escape_order():
    df = pd.DataFrame(
        {
            "model": ["A", EVIL, None],
            "n": [3, 0, 7],
            "share": [0.0, math.nan, 0.5],
            "note": [pd.NA, "<b>x</b>", "ok"],
        }
    )
    f = tables.data_table(
        df,
        "dt",
        order=[("n", "desc")],
        heads={"n": tables.Head("Prompts", "count")},
        decimals={"share": 2},
    )
    assert "<b>x</b>" not in f.html and "&lt;b&gt;x&lt;/b&gt;" in f.html
    t = parse_table(f)
    head = {c["attrs"]["data-sg-col"]: c for c in t["head"]}
    assert head["n"]["text"] == "Prompts" and head["n"]["attrs"]["title"] == "count"
    assert "sg-num" in head["n"]["attrs"]["class"] and "sg-num" in head["share"]["attrs"]["class"]
    assert "sg-num" not in head["note"]["attrs"]["class"]
    cells = [[(c["text"], key(c)) for c in r["cells"]] for r in t["rows"]]
    assert cells[0] == [("A", ""), ("3", "3"), ("0.00", "0.00"), ("N/A", "")]  # sorts as 0
    assert cells[1] == [(EVIL, ""), ("0", "0"), ("N/A", ""), ("<b>x</b>", "")]
    assert cells[2][0] == ("N/A", "")
    assert json.loads(t["attrs"]["data-sg-options"])["order"] == [[1, "desc"]]


def test_data_table_every_row_and_records_input():
    big = pd.DataFrame({"i": range(20000), "x": [i / 3 for i in range(20000)]})
    t = parse_table(tables.data_table(big, "big", page_length=25))
    assert len(t["rows"]) == 20000
    assert json.loads(t["attrs"]["data-sg-options"])["pageLength"] == 25
    t2 = parse_table(tables.data_table([{"a": 1, "b": None}], "recs"))
    assert [(c["text"]) for c in t2["rows"][0]["cells"]] == ["1", "N/A"]


# --------------------------------------------------------------------------- browser


@pytest.mark.browser
def test_page_from_file_url_in_chromium(vendor, tmp_path, rows, browser):
    from browser import CHARTS_DRAWN, Page

    dest, names = vendor
    site = tmp_path / "site"
    shutil.copytree(dest, site / "_static")
    head = "".join(f'<script src="_static/{n}"></script>' for n in names if n.endswith(".js"))
    head += "".join(
        f'<link rel="stylesheet" href="_static/{n}">' for n in names if n.endswith(".css")
    )
    body = "".join(
        f.html
        for f in (
            tables.leaderboard_table(rows, "lb"),
            heatmaps.heatmap(_heat_records(), "heat"),
            charts.component_bars(rows, "comp"),
        )
    )
    page_html = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'>{head}</head><body>{body}</body></html>"
    )
    (site / "index.html").write_text(page_html, encoding="utf-8")
    pg = Page(browser, site / "index.html")  # the book tests' browser and flags
    page = pg.page
    page.wait_for_function(
        "document.querySelectorAll('[data-sg-rendered]').length === 2", timeout=20000
    )
    page.wait_for_function("document.querySelector('#lb[data-sg-ready]') !== null", timeout=20000)
    assert page.evaluate(CHARTS_DRAWN)
    # a table is laid out only once DataTables has made it (hidden before: searchgen-nb.css),
    # and only where the script runs (without it, a table shows as it is)
    assert page.locator("#lb").is_visible()
    page.evaluate(
        "document.body.insertAdjacentHTML('beforeend', '<table class=\"sg-table\" "
        'id="late"><tr><td>1</td></tr></table>\')'
    )
    assert not page.locator("#late").is_visible()
    page.evaluate("document.documentElement.classList.remove('sg-tables-js')")
    assert page.locator("#late").is_visible()

    def col(key):
        return page.eval_on_selector_all(
            "#lb tbody tr",
            f"""rows => rows.map(r => {{
                const ths = [...document.querySelectorAll('#lb thead th')];
                const i = ths.findIndex(t => t.dataset.sgCol === '{key}');
                return r.children[i].textContent.trim(); }})""",
        )

    assert col("overall_9") == ["72.2", "0.0", "N/A"]  # default: the rows' own (rank) order
    th = page.locator("#lb thead th[data-sg-col='overall_9']")
    sorted_as = (
        "document.querySelector('#lb thead th[data-sg-col=overall_9]')"
        ".getAttribute('aria-sort') === '{}'"
    )
    th.click(position={"x": 3, "y": 3})  # a number sorts highest first
    page.wait_for_function(sorted_as.format("descending"))
    assert col("overall_9") == ["72.2", "0.0", "N/A"]
    th.click(position={"x": 3, "y": 3})
    page.wait_for_function(sorted_as.format("ascending"))
    assert col("overall_9") == ["0.0", "72.2", "N/A"]  # ascending: N/A still last
    assert EVIL.split("<!--")[0] in page.locator("#lb tbody").inner_text()
    assert (pg.errors, pg.dialogs, pg.external) == ([], [], [])


def test_leaderboard_gap_to_next(rows):
    t = parse_table(tables.leaderboard_table(rows, "lb"))
    keys = [c["attrs"]["data-sg-col"] for c in t["head"]]
    cells = [dict(zip(keys, r["cells"])) for r in t["rows"]]
    ranked = sorted((r for r in rows if r["ranked"]), key=lambda r: r["rank"])
    by_model = {r["model_id"]: c for r, c in zip(rows, cells)}
    for a, b in zip(ranked, ranked[1:]):
        want = Decimal(repr(a["overall_9"])) - Decimal(repr(b["overall_9"]))
        assert Decimal(key(by_model[a["model_id"]]["gap"])) == want
    assert by_model[ranked[-1]["model_id"]]["gap"]["text"] == "–"


def test_schema_check_of_charts_is_a_switch(monkeypatch):
    """The tests build every chart with altair's Vega-Lite schema check (conftest); a release
    skips it, and the chart is the same either way."""
    import altair as alt

    assert charts.validating_specs()
    checked = heatmaps.heatmap(_heat_records(), "heat").html
    with alt.utils.schemapi.debug_mode(False):  # altair would refuse it while building
        bad = alt.Chart(alt.Data(values=[{"a": 1}]), width="wide").mark_point().encode(x="a:Q")
    with pytest.raises(alt.utils.schemapi.SchemaValidationError):
        charts.embed(bad, "bad")
    monkeypatch.delenv(charts.VALIDATE_ENV)
    assert not charts.validating_specs()
    assert heatmaps.heatmap(_heat_records(), "heat").html == checked
    assert alt.utils.schemapi.DEBUG_MODE  # altair's own setting is left as it was
    assert 'width":"wide"' in charts.embed(bad, "bad").html.replace(
        " ", ""
    )  # unchecked: passed through


def test_a_page_length_outside_the_menu_joins_it():
    """A table paged by 20 offers 20 among the entries-per-page choices (DataTables' menu is
    10/25/50/100: the box showed no choice); a length of the menu leaves the menu as it is."""
    recs = [{"x": i} for i in range(30)]
    assert (
        "&quot;lengthMenu&quot;:[10,20,25,50,100]"
        in tables.data_table(recs, "p20", page_length=20).html
    )
    html = tables.data_table(recs, "p25", page_length=25).html
    assert "&quot;pageLength&quot;:25" in html and "lengthMenu" not in html


def test_negative_numbers_show_the_minus_sign():
    """Δ columns write −1.8 as the change summaries do; sorting keeps the plain number."""
    assert fmt.format_number(-1.75, 1) == ("\u22121.8", "-1.75")
    assert fmt.format_number(-3) == ("\u22123", "-3")
    assert fmt.format_number(0.0, 1) == ("0.0", "0.0") and fmt.format_number(2.5) == ("2.5", "2.5")


def test_layered_chart_gets_its_records_after_to_dict():
    """A layered chart made without data gets its records as top-level inline data after
    altair's to_dict (charts' LAYER_DATA): the spec altair writes for records shared by every
    layer, its placeholder dataset gone; a chart that has data of its own is refused."""
    import altair as alt

    values = [{"model": "a", "value": 1.5}, {"model": "b", "value": None}]
    base = alt.Chart().encode(x="value:Q", y="model:N")
    made = alt.layer(base.mark_point(), base.mark_text(text="x")).to_dict()
    on_every_layer = alt.Chart(alt.Data(values=values)).encode(
        x="value:Q", y="model:N"
    )  # as the charts were made
    shared = alt.layer(on_every_layer.mark_point(), on_every_layer.mark_text(text="x")).to_dict()
    assert shared["data"] == {"values": values} and all(
        "data" not in layer for layer in shared["layer"]
    )
    assert charts._with_layer_data(made, values) == shared
    with pytest.raises(ValueError, match="has data of its own"):
        charts._with_layer_data(shared, values)
    with pytest.raises(
        ValueError, match="a layer of a chart made without data has data of its own"
    ):
        charts._with_layer_data(
            {**made, "layer": [{**made["layer"][0], "data": {"values": values}}]}, values
        )
