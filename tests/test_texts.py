"""The book's templates: values escaped as everywhere in the book, a missing value an error,
the templates shipped in the wheel."""

import zipfile

import jinja2
import pytest
from markupsafe import Markup

from searchgen_nb.book import texts
from searchgen_nb.book.page_parts import prose
from searchgen_nb.book.tables import COLUMN_DEFINITIONS


def test_text_values_are_escaped_quotes_too_and_markup_is_kept():
    html = texts.render(
        "breakdown_head.html.j2",
        name='a"b<c',
        field="it's",
        n_groups=2,
        memberships=3,
        n=4,
        without=Markup("<b>1</b>"),
        link=lambda a, t: t,
    )
    assert html.startswith('<h2 id="breakdown-a&quot;b&lt;c">By a&quot;b&lt;c</h2>\n')
    assert "<code>it&#x27;s</code>" in html  # fmt.esc's entities, not markupsafe's &#39;
    assert "(<b>1</b> prompts have no value)" in html


def test_a_value_the_template_uses_but_is_not_passed_is_an_error():
    with pytest.raises(jinja2.UndefinedError, match="noun"):
        prose("heatmap_legend.html.j2")


def test_methods_links_and_the_final_newline():
    html = prose("compare_picker_legend.html.j2")
    assert html.endswith('(<a href="../methods.html#components">0–100</a>).')
    assert prose("slice_note.html.j2", only="all", output="all", others=[]) == (
        "Every figure on this page covers the slice <code>all</code>: every prompt of the release."
    )


def test_column_definitions_come_from_the_yaml_file():
    assert COLUMN_DEFINITIONS["coverage"] == (
        "Scored prompts / prompts in the group (n_scored/n_total)."
    )
    assert "component" not in COLUMN_DEFINITIONS


def test_the_wheel_ships_the_templates(wheel):
    wheel, src = wheel
    shipped = {p.name for p in (src / "searchgen_nb" / "book" / "templates").iterdir()}
    with zipfile.ZipFile(wheel) as zf:
        names = {n.rsplit("/", 1)[-1] for n in zf.namelist() if "/book/templates/" in n}
    assert {"banner.html.j2", "column_definitions.yaml"} <= shipped == names
