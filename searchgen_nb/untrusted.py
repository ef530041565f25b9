"""Reading untrusted input: bounded excerpts for messages, text safe to publish, strict JSON.

One home for the helpers that config, prompt metadata, result files and the paper table
share (the independent validator keeps its own, on purpose: it must not share code with
what it checks).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator


def excerpt(value: object, limit: int = 80, newlines: bool = False) -> str:
    """A bounded, printable excerpt of a value for an error message (never the whole input).

    Control characters and lone surrogates are written as escapes (``\\x00``, ``\\ud835``);
    ``newlines`` keeps line breaks (for multi-line parser messages)."""
    text = value if isinstance(value, str) else repr(value)
    text = "".join(c if c.isprintable() or (newlines and c == "\n") else c.encode("unicode_escape").decode("ascii") for c in text[: limit * 2])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable(text: str) -> str:
    """``text`` with what UTF-8 cannot carry (lone surrogates from ``\\ud835`` escapes)
    written as backslash escapes, so that a judge's message can be published as it was."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def is_surrogate(c: str) -> bool:
    """A lone UTF-16 surrogate (what a ``\\ud835`` JSON escape gives): not valid Unicode text."""
    return 0xD800 <= ord(c) <= 0xDFFF


def strings(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a parsed JSON/YAML value, keys included, with where it sits:
    ``("models.m.source_id", "…")`` for a value, ``("key 'x' of models", "x")`` for a key."""
    if isinstance(value, str):
        yield path or "value", value
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                yield f"key {excerpt(k, 40)} of {path or 'the top level'}", k
            yield from strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from strings(v, f"{path}[{i}]")


class DuplicateKey(ValueError):
    """A JSON object holds the same key twice (the last one would silently win)."""


def no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    """``object_pairs_hook`` for :func:`json.loads` that refuses a repeated key (naming it)."""
    d = dict(pairs)
    if len(d) < len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise DuplicateKey(f"duplicate key {printable(k)[:80]!r} in one JSON object")
            seen.add(k)
    return d


def reject_constant(token: str):
    """``parse_constant`` for :func:`json.loads`: NaN, Infinity and -Infinity are not JSON."""
    raise ValueError(f"non-standard JSON constant {token}")


def finite_float(token: str) -> float:
    """``parse_float`` for :func:`json.loads`: a number too large for a double (``1e999``) would
    read as Infinity, which is not JSON data either."""
    value = float(token)
    if value in (math.inf, -math.inf):
        raise ValueError(f"number {excerpt(token, 40)} is out of range (it would read as Infinity)")
    return value


def strict_loads(text: str | bytes) -> object:
    """:func:`json.loads` refusing NaN/Infinity (:func:`reject_constant`), numbers that overflow
    to Infinity (:func:`finite_float`) and a repeated key (:func:`no_duplicate_keys`); raises
    ``ValueError`` (``DuplicateKey`` for a repeated key)."""
    return json.loads(text, parse_constant=reject_constant, parse_float=finite_float, object_pairs_hook=no_duplicate_keys)
