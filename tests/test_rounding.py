"""Display rounding: every figure the book, its CSVs and ``CHANGES.md`` show has the release's
``rounding_decimals`` places, all written by ``numeric.figure_text``."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from book_fixture import MODELS, PREVIOUS_RESULTS, PROMPTS, RESULTS
from conftest import TEST_EPOCH
from factory import make_release

from searchgen_nb.book.release import run_release
from searchgen_nb.config import load_config
from searchgen_nb.numeric import figure_text
from searchgen_nb.pipeline import run_data

#: A number with a decimal point, its places captured (U+2212 is a minus).
NUMBER = re.compile(r"(?<![\w.])[\u2212+-]?\d+\.(\d+)(?![\w.])")
_TD = re.compile(r"<td[^>]*>(.*?)</td>", re.S)
_TAG = re.compile(r"<[^>]+>")
#: Tables of words and settings, not figures (the checks' descriptions, the manifest's keys).
_PROSE = re.compile(r'<table id="(?:validation-report|manifest-summary)".*?</table>', re.S)
_JSON_BLOCK = re.compile(r'<script type="application/json" id="[^"]+">(.*?)</script>', re.S)
_VEGA_EMBED = re.compile(r"var spec=(.*?);\nvar opt=", re.S)
_SHARD = re.compile(r"\(window\.SGEvidence=window\.SGEvidence\|\|\{\}\)\[[^\]]+\]=(.*);\n$", re.S)


def places(texts) -> set[int]:
    """The decimal places of every number with a decimal point in ``texts``."""
    return {len(m[1]) for t in texts for m in NUMBER.finditer(t)}


def strings(node) -> list[str]:
    """Every string value of a JSON document (keys left out)."""
    if isinstance(node, dict):
        return [s for v in node.values() for s in strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in strings(v)]
    return [node] if isinstance(node, str) else []


def records(spec: dict) -> list:
    """A chart's data records (a data block's, its own and its layers'), not its expressions."""
    layers = [spec, *spec.get("layer", [])]
    return [
        *(spec.get("datasets") or {}).values(),
        *((layer.get("data") or {}).get("values") or [] for layer in layers),
        spec.get("values") or [],  # a page's data block
    ]


def test_figure_text_is_the_rule():
    assert figure_text(72.25, 1) == "72.3" and figure_text(72.5, 2) == "72.50"
    assert figure_text(-1.75, 1) == "\u22121.8" and figure_text(-1.75, 1, minus="-") == "-1.8"
    assert figure_text(0.0, 2, sign=True) == "0.00" and figure_text(2.5, 1, sign=True) == "+2.5"
    assert figure_text(Fraction(71900, 751), 1) == "95.7"  # a share: exact, half-up
    assert figure_text(Fraction(1, 8), 2) == "0.13" and figure_text(None, 2) == "N/A"
    assert figure_text(1.65625, 4) == "1.6563" and figure_text(72.3, 0) == "72"


@pytest.fixture(scope="module")
def two_decimals(tmp_path_factory) -> Path:
    """The book tests' release and its previous one, both at ``rounding_decimals: 2``: the
    output root of the later one."""
    folder = tmp_path_factory.mktemp("rounding")
    kw = {"scoring": {"min_ranking_coverage": 0.5, "rounding_decimals": 2}}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", TEST_EPOCH)
        prev = make_release(folder / "prev", PROMPTS, MODELS, PREVIOUS_RESULTS, **kw)
        run_data(load_config(prev), folder / "prev-data", progress=False)
        kw.update(previous_release="../prev-data", expected={"lost_results": {"evil": ["f03"]}})
        cfg = make_release(folder / "src", PROMPTS, MODELS, RESULTS, **kw)
        run_release(cfg, log=lambda m: None, output_root=folder / "site")
    return folder / "site"


@pytest.mark.slow
def test_two_decimals_everywhere(two_decimals):
    """With ``rounding_decimals: 2`` no figure shows one decimal: the results pages' table
    cells and chart texts, the card's data, the leaderboard and pairwise CSVs and CHANGES.md
    (raw 0–3 values show four places, p-values four: never one)."""
    book = two_decimals / "_build" / "html"
    pages = sorted((book / "book" / "notebooks").glob("*.html"))
    cells, chart_texts = [], []
    for page in pages[3:]:  # the results and audit pages, not the three stages'
        text = page.read_text(encoding="utf-8")
        cells += [html.unescape(_TAG.sub("", c)) for c in _TD.findall(_PROSE.sub("", text))]
        for block in _JSON_BLOCK.findall(text) + _VEGA_EMBED.findall(text):
            chart_texts += strings(records(json.loads(block)))
    card = [
        s
        for shard in sorted((book / "evidence").glob("shard-*.js"))
        for s in strings(json.loads(_SHARD.match(shard.read_text(encoding="utf-8"))[1]))
    ]
    figure_csvs = [
        *(book / "downloads").glob("leaderboard_*.csv"),
        book / "downloads" / "pairwise_tests.csv",
    ]
    csv_cells = [
        value
        for path in figure_csvs
        for row in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))
        for key, value in row.items()
        if key not in ("coverage", "p", "p_holm")  # shares of 1 and p at four places
    ]
    changes = (two_decimals / "public" / "data" / "CHANGES.md").read_text(encoding="utf-8")
    for name, texts in [
        ("table cells", cells),
        ("chart texts", chart_texts),
        ("card", card),
        ("CSVs", csv_cells),
        ("CHANGES.md", changes.split("\n### Prompt × model changes")[:1]),
    ]:
        assert 2 in places(texts), name  # the figures are there
        assert 1 not in places(texts), (name, [t for t in texts if 1 in places([t])][:5])
