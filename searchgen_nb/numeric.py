"""Exact means of raw 0–3 scores, the public 0–100 half-up rounding (scalar and vectorised)
and the text of every number the book shows. Means are exact over the stored doubles, only the
result is rounded (data contract, § Public scale and rounding)."""

import math
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any

import numpy as np

_U = 2.0**-53  # unit roundoff of float64


def mean_raw(values: Iterable[float]) -> float | None:
    """Mean of raw 0–3 values, exact then rounded once to the nearest double; None when empty
    (data contract, § Per-prompt values)."""
    vals = list(values)
    if not vals:
        return None
    total = sum(vals)
    if math.fsum([*vals, -total]) == 0:  # the float sum is exact: one correctly rounded division
        return total / len(vals)
    return float(exact_mean(vals, len(vals)))  # a Fraction's float is correctly rounded


def means_with_extra(base: list[float], extra: float | None) -> tuple[float | None, float | None]:
    """``(mean_raw(base + [extra]), mean_raw(base))`` (``extra`` None = absent): a prompt's
    Overall-10 (nine public components plus the text reference) and Overall-9, raw 0–3."""
    nine = mean_raw(base)
    return (nine if extra is None else mean_raw([*base, extra])), nine


def to_public(raw_mean: Fraction, decimals: int) -> float:
    """Public 0–100 value of an exact raw 0–3 mean: ``raw × 100 / 3`` half-up (81.25 → 81.3)."""
    if raw_mean < 0:
        raise ValueError(f"raw mean {raw_mean} is below the 0–3 scale")
    return float(Decimal(half_up_units(raw_mean, decimals)).scaleb(-decimals))


def round_coverage(n_scored: int, n_total: int) -> float:
    """Coverage ``n_scored / n_total`` half-up to 4 decimals, 0.0 when n_total is 0 (data
    contract, § Coverage and ranking)."""
    return coverage_values(np.asarray(n_scored), np.asarray(n_total))


def public_units(sums, counts, n_terms, decimals: int, settle):
    """Half-up ``mean × 100 / 3`` in int64 units of ``10**-decimals`` (-1 where ``counts`` is 0) of
    float sums of ``n_terms`` terms; a cell within its error bound ``(k+8)·2u·value`` of a boundary
    gets ``settle(index) -> int``, its exact units. ValueError for ``decimals`` outside 0–15."""
    if not 0 <= decimals <= 15:
        raise ValueError(f"rounding_decimals {decimals} outside 0–15")
    sums, counts, n_terms = (np.asarray(a, dtype=np.float64) for a in (sums, counts, n_terms))
    has = counts > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = sums / np.where(has, counts, 1.0) * 100.0 / 3.0 * float(10**decimals)
    q = np.where(has, q, 0.0)
    tol = q * (n_terms + 8.0) * (2 * _U)
    units = np.floor(q + 0.5).astype(np.int64)
    for index in zip(*np.nonzero(has & (np.abs(q - np.floor(q) - 0.5) <= tol))):
        units[index] = settle(index)
    units[~has] = -1
    return units


def public_values(units, decimals: int) -> list:
    """Nested lists of ``units / 10**decimals`` as :func:`to_public` gives it (-1: NaN)."""
    return np.where(units >= 0, units.astype(np.float64) / float(10**decimals), np.nan).tolist()


def coverage_values(n_scored, n_total) -> Any:
    """:func:`round_coverage` of arrays of whole counts as nested lists (a float for 0-d
    arrays), in exact integers."""
    units = (2 * n_scored * 10**4 + n_total) // np.maximum(2 * n_total, 1)
    units = np.where(n_total > 0, units, 0.0)
    return (units / 10**4).tolist()


def half_up_units(raw_mean: Fraction, decimals: int) -> int:
    """Exact half-up units of ``10**-decimals`` of the public value of an exact raw mean."""
    return (raw_mean * 100 * 10**decimals / 3 + Fraction(1, 2)).__floor__()


def exact_mean(values: Iterable[float], count: int) -> Fraction:
    """``sum(values) / count`` as an exact rational (zero-filled prompts add to ``count`` only)."""
    ratios = [v.as_integer_ratio() for v in values]  # every double: an int over a power of 2
    if not ratios:
        return Fraction(0)
    shift = max(d for _, d in ratios).bit_length() - 1
    return Fraction(sum(n << (shift - d.bit_length() + 1) for n, d in ratios), count << shift)


def decimal_text(value: float | Decimal) -> str:
    """Text of a stored number that is no figure of the results (a setting, a p-value), never
    in exponent notation: its shortest form with a decimal (70.0 → "70.0", 0.05 → "0.05")."""
    text = f"{Decimal(repr(float(value))):f}"
    return text if "." in text else text + ".0"


#: Places of a raw 0–3 value where one is shown (a prompt × model's Overall-9 that changed).
RAW_DECIMALS = 4


def figure_text(
    value: float | Fraction | None,
    decimals: int,
    *,
    sign: bool = False,
    na: str = "N/A",
    minus: str = "\u2212",
) -> str:
    """The text of every figure shown (data contract, § Public scale and rounding): a public
    0–100 value, an interval's end, a difference, a percentage (a :class:`Fraction`: exact) or
    a raw 0–3 value, half-up to exactly ``decimals`` places of the decimal a float prints
    (72.25 → "72.3", 72.5 → "72.50" at 2); a minus as U+2212 (−1.8; a CSV's: ``minus="-"``),
    "+" before a positive value if ``sign``; ``na`` for None."""
    if value is None:
        return na
    if isinstance(value, Fraction):
        d = Decimal((value * 10**decimals + Fraction(1, 2)).__floor__()).scaleb(-decimals)
    else:
        places = Decimal(1).scaleb(-decimals)
        d = Decimal(repr(float(value))).quantize(places, rounding=ROUND_HALF_UP)
    text = f"{d:f}"
    return ("+" + text if sign and d > 0 else text).replace("-", minus)


def scaled(value: float | Decimal, factor: int) -> float:
    """``value × factor`` as the decimal it prints (a coverage 0.9567 → 95.67 exactly)."""
    return float(Decimal(repr(float(value))) * factor)
