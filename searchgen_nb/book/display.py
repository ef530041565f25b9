"""The display object every notebook cell of the book emits: a fragment of HTML."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True, repr=False)
class HTMLFragment:
    """A notebook display object emitting only ``text/html`` (plus a fixed plain-text label):
    no memory address, no random id, no ``application/vnd.vegalite...`` bundle (a CDN)."""

    html: str
    label: str = "html"

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html, "text/plain": repr(self)}

    def _repr_html_(self) -> str:
        return self.html

    __str__ = _repr_html_

    def __repr__(self) -> str:
        return f"<{self.label}>"


def join(parts: list[HTMLFragment], label: str) -> HTMLFragment:
    """The fragments one after the other, a line apart."""
    return HTMLFragment("\n".join(p.html for p in parts), label)


def wrapped(html: str, width: int = 240) -> str:
    """HTML text broken between words into lines of about ``width`` characters (a diff shows
    the changed line); for text whose attribute values hold no space."""
    return textwrap.fill(html, width, break_long_words=False, break_on_hyphens=False)
