"""The display object every notebook cell of the book emits: a fragment of HTML."""

from __future__ import annotations


class HTMLFragment:
    """A notebook display object that only emits ``text/html`` (plus a fixed plain-text label).

    Deterministic: no memory addresses in ``repr``, no random ids, no extra mime types (in
    particular no ``application/vnd.vegalite...`` bundle pointing at a CDN).
    """

    def __init__(self, html_text: str, label: str) -> None:
        self.html = html_text
        self.label = label

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html, "text/plain": f"<{self.label}>"}

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<{self.label}>"

    def __str__(self) -> str:
        return self.html

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HTMLFragment) and (self.html, self.label) == (other.html, other.label)

    def __hash__(self) -> int:
        return hash((self.html, self.label))
