"""How the book writes a value: numbers, null (N/A: never 0 or blank), intervals, shares,
statuses. The text of a figure comes from :func:`searchgen_nb.numeric.figure_text`, the one rule
(data contract, § Public scale and rounding); charts and the page script show these strings."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from searchgen_nb.changes_markdown import counts_as
from searchgen_nb.constants import STATUSES
from searchgen_nb.numeric import decimal_text, figure_text, scaled

#: What a null (not applicable) value shows.
NA = "N/A"
#: The statuses of a prompt × model pair, as charts and headers name them.
STATUS_LABELS = {s: s.replace("_", " ") for s in STATUSES}
#: Short status words of the prompt explorer's cells (a scored pair shows its Overall-9).
STATUS_SHORT = {
    "invalid_evaluation": "invalid",
    "missing_evaluation": "no eval",
    "missing_generation": "no image",
}


class Shown(NamedTuple):
    """A table cell as shown: text, sort key ("" sorts last both ways), tooltip, class."""

    text: str
    key: str
    title: str = ""
    cls: str = ""


def unscored_cell(status: str, policy: str | None, reason: str | None = None) -> list[str]:
    """``[text, title, class, how it counts]`` of a pair that is not scored, in every table and
    on the prompt card (data contract, § Aggregation over a group of prompts): its status in
    short with "0 · " (``zero_fill``) or " · excluded" (``exclude``); the status in full, the
    reason and how it counts on hover."""
    how, short = counts_as(status, policy), STATUS_SHORT.get(status, status)
    title = STATUS_LABELS.get(status, status) + (f": {reason}" if reason else "")
    if how == "0":
        note = "counts 0 (missing policy zero_fill)"
        return [f"0 · {short}", f"{title} · {note}", "sg-zero", note]
    if how == "excluded":
        note = "excluded: left out of every mean (missing policy exclude)"
        return [f"{short} · excluded", f"{title} · {note}", "sg-excluded", note]
    return [short, title, "sg-na", ""]


def pair_cell(
    value: Any,
    status: str,
    policy: str | None,
    decimals: int | None = None,
    reason: str | None = None,
) -> Shown:
    """A pair's Overall-9 as it counts: its value (N/A if scored without one), else
    :func:`unscored_cell`, sorting as 0 (``zero_fill``) or last (``exclude``)."""
    if status == "scored":
        text, key = format_number(value, decimals)
        title = "" if key else "scored, but not applicable: no component of the set has a value"
        return Shown(text, key, title, "" if key else "sg-na")
    text, title, cls, _ = unscored_cell(status, policy, reason)
    key = "0" if cls == "sg-zero" else ""
    return Shown(text, key, title + ("; sorts last" if cls == "sg-excluded" else ""), cls)


def esc(value: Any) -> str:
    """HTML-escaped text of a value (quotes too)."""
    return html.escape(str(value), quote=True)


def is_null(value: Any) -> bool:
    """True for None, NaN and pandas NA/NaT scalars: shown as N/A, never as 0 or blank."""
    if isinstance(value, (str, bytes, bool, Mapping, list, tuple)):
        return False
    result = pd.isna(value)
    return getattr(result, "shape", ()) == () and bool(result)


def is_number(value: Any) -> bool:
    """An int or float (numpy's too), never a bool."""
    return isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))


def number(value: Any) -> float | None:
    """A finite float, or None for null / NaN (never 0); TypeError for a bool, ValueError for
    an infinite value."""
    if isinstance(value, bool):
        raise TypeError(f"boolean is not a number: {value!r}")
    if is_null(value):
        return None
    if math.isinf(x := float(value)):
        raise ValueError(f"infinite value: {value!r}")
    return x


def format_number(value: Any, decimals: int | None = None, na: str = NA) -> tuple[str, str]:
    """(display text, sort key) of a number; null/NaN -> (``na``, ""). ``decimals=None``: as
    stored (72.2 -> "72.2", 70 -> "70"); else half-up (72.25 -> "72.3" at 1). A minus shows as
    U+2212 (−1.8), the sort key the plain number. TypeError for a non-number."""
    if is_null(value):
        return na, ""
    if not is_number(value):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, (float, np.floating)):
        x = number(value)
        assert x is not None  # not null: returned above
        text, key = decimal_text(x) if decimals is None else figure_text(x, decimals), repr(x)
    else:
        text = key = str(int(value))
    return ("\u2212" + text[1:] if text.startswith("-") else text), key


def interval_text(interval: Any, decimals: int | None) -> str:
    """``"74.1–77.0"``: the ends as :func:`format_number` writes them; N/A without interval."""
    if interval is None:
        return NA
    lo, hi = (format_number(float(v), decimals)[0] for v in interval)
    return f"{lo}–{hi}"


def rank_text(rank: Any) -> str:
    """A rank range: ``"3"`` or ``"2–4"``."""
    return str(rank[0]) if rank[0] == rank[1] else f"{rank[0]}–{rank[1]}"


def exact_diff(a: float, b: float) -> float:
    """``a − b`` of two published values as the decimals they print (72.2 − 70.1 = 2.1)."""
    return float(Decimal(repr(float(a))) - Decimal(repr(float(b))))


def pct_label(fraction: float | Decimal) -> str:
    """A fraction of a setting as a percent label: 0.9 → "90%", 0.95 → "95%"."""
    return f"{scaled(fraction, 100):g}%"


def percent_text(part: int, total: int, decimals: int) -> str:
    """``"95.7%"``: ``part/total`` of two counts as a percentage, exactly, at ``decimals``
    places (:func:`~searchgen_nb.numeric.figure_text`); N/A for 0/0."""
    return figure_text(Fraction(100 * int(part), int(total)), decimals) + "%" if total else NA


def coverage_text(scored: int, total: int, decimals: int) -> str:
    """``"719/751 (95.7%)"``: scored prompts of a group, as the tables write it."""
    return f"{scored}/{total} ({percent_text(scored, total, decimals)})"


def share_text(part: Any, total: Any, decimals: int) -> str:
    """``"96.1% (248/258)"`` as a chart shows a share; ``"N/A (0/0)"``; N/A without counts."""
    if is_null(part) or is_null(total):
        return NA
    return f"{percent_text(part, total, decimals)} ({int(part)}/{int(total)})"
