"""The book's prose and HTML fragments: Jinja2 templates shipped in ``book/templates/``
(package data), rendered with the values a page section passes."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import jinja2
import yaml
from markupsafe import Markup

from searchgen_nb.book.fmt import esc


def _source(name: str) -> str:
    return resources.files("searchgen_nb.book").joinpath("templates", name).read_text("utf-8")


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(_source),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


def _safe(value: Any) -> Any:
    """Text escaped as everywhere in the book (:func:`fmt.esc`, quotes too); Markup as is."""
    if isinstance(value, Markup) or not isinstance(value, (str, list, tuple)):
        return value
    if isinstance(value, str):
        return Markup(esc(value))
    return [_safe(v) for v in value]


def render(template: str, /, **values: Any) -> str:
    """The template ``template`` (e.g. ``banner.html.j2``) filled with ``values``: text is
    HTML-escaped, :class:`markupsafe.Markup` and callables returning it are inserted as they
    are; the template's final newline is dropped. Raises ``jinja2.UndefinedError`` when the
    template uses a value not passed."""
    return _environment().get_template(template).render({k: _safe(v) for k, v in values.items()})


def mapping(name: str) -> dict[str, Any]:
    """The texts of the YAML file ``name`` of ``book/templates/`` (key → plain text, or a
    mapping of texts)."""
    return yaml.safe_load(_source(name))
