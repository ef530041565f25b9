"""The book's one formatting module: how a published number, a null and a missing value are
shown (N/A is never 0 or blank). Number text itself comes from :mod:`searchgen_nb.numeric`
(decimal half-up of the stored value)."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

from searchgen_nb.numeric import decimal_text

#: What a null (not applicable) value shows.
NA = "N/A"


def esc(value: Any) -> str:
    """HTML-escaped text of a value (quotes too)."""
    return html.escape(str(value), quote=True)


def is_null(value: Any) -> bool:
    """True for None, NaN and pandas NA/NaT scalars: shown as N/A, never as 0 or blank."""
    if value is None:
        return True
    if isinstance(value, (str, bytes, bool, Mapping, list, tuple, dict)):
        return False
    try:
        import pandas as pd

        result = pd.isna(value)
    except Exception:  # pragma: no cover
        return False
    return result is True or (getattr(result, "shape", None) == () and bool(result))


def is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    try:
        import numpy as np

        return isinstance(value, np.number) and not isinstance(value, np.bool_)
    except Exception:  # pragma: no cover
        return False


def format_number(value: Any, decimals: int | None = None, na: str = NA) -> tuple[str, str]:
    """(display text, sort key) of a number; null/NaN -> (``na``, "").

    ``decimals=None`` shows the value as stored (shortest round-trip form, never exponent
    notation: 72.2 -> "72.2", 0.0 -> "0.0", 70 -> "70"); an int stays an int. With ``decimals``
    the stored decimal value is rounded half-up (72.25 -> "72.3" at 1 decimal). A negative
    number shows U+2212 (−1.8), its sort key the plain float.
    """
    if is_null(value):
        return na, ""
    if not is_number(value):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, float) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") == "f"):
        x = float(value)
        if math.isinf(x):
            raise ValueError(f"infinite value: {value!r}")
        return _minus(decimal_text(x, decimals)), repr(x)
    n = int(value)
    return _minus(str(n)), str(n)


def _minus(text: str) -> str:
    """A negative number shown with the minus sign (U+2212), as the change summaries write it;
    the sort key keeps the plain number."""
    return "\u2212" + text[1:] if text.startswith("-") else text


def interval_text(interval: Any, decimals: int | None) -> str:
    """``"74.1–77.0"``: an interval's ends as :func:`format_number` writes them (a negative end
    with U+2212), joined by an en dash; N/A when there is no interval."""
    if interval is None:
        return NA
    lo, hi = (format_number(float(v), decimals)[0] for v in interval)
    return f"{lo}–{hi}"
