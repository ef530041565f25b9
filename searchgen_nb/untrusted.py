"""Reading untrusted input: bounded excerpts for messages, text safe to publish, strict JSON
and YAML."""

import json
import math
import re
import unicodedata
from collections.abc import Iterator
from decimal import Decimal

import yaml


def shown(text: object, newlines: bool = False) -> str:
    """``text`` on one line in visible characters: every other one escaped (``\\n``, ``\\u200b``),
    line breaks kept with ``newlines``."""
    whole = str(text)
    if whole.isprintable():
        return whole
    return "".join(
        c
        if c.isprintable() or (newlines and c == "\n")
        else c.encode("unicode_escape").decode("ascii")
        for c in whole
    )


def excerpt(value: object, limit: int = 80, newlines: bool = False) -> str:
    """A bounded excerpt of a value for a message, :func:`shown` (``repr`` of a non-string)."""
    text = shown((value if isinstance(value, str) else repr(value))[: limit * 2], newlines)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable(text: str) -> str:
    """``text`` with what UTF-8 cannot carry (lone surrogates) written as backslash escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def no_ansi(text: str) -> str:
    """``text`` without terminal colour and cursor escapes (a tool's coloured output)."""
    return _ANSI.sub("", text)


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
    out = dict(pairs)
    if len(out) == len(pairs):  # no key repeated: the common case, decided in C
        return out
    seen: set[str] = set()
    for k, _ in pairs:
        if k in seen:
            raise DuplicateKey(f"duplicate key {printable(k)[:80]!r} in one JSON object")
        seen.add(k)
    return out


def _constant(token: str):
    raise ValueError(f"non-standard JSON constant {token}")


def _finite(token: str) -> float:
    if (value := float(token)) in (math.inf, -math.inf):
        raise ValueError(f"number {excerpt(token, 40)} is out of range (it would read as Infinity)")
    return value


def strict_loads(text: str | bytes, hook=no_duplicate_keys) -> object:
    """:func:`json.loads` refusing NaN/Infinity, numbers that overflow to Infinity and (``hook``:
    what makes each object) a repeated key; ``ValueError`` (``DuplicateKey``: a repeated key)."""
    return json.loads(text, cls=StrictDecoder, object_pairs_hook=hook)


class StrictDecoder(json.JSONDecoder):
    """A decoder that refuses what :func:`strict_loads` refuses (its ``decode``: a ``str``)."""

    def __init__(self, *, object_pairs_hook=no_duplicate_keys, **kwargs) -> None:
        super().__init__(
            object_pairs_hook=object_pairs_hook,
            parse_constant=_constant,
            parse_float=_finite,
            **kwargs,
        )


class ConfigLoader(yaml.SafeLoader):
    """A YAML loader for configs: floats read as :class:`Decimal` (the number written), a
    duplicate key refused (naming both lines), anchors and aliases refused (no alias bomb)."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            why = "anchors and aliases (& and *) are not allowed in a release config"
            raise yaml.composer.ComposerError(None, None, why, event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value if isinstance(node, yaml.MappingNode) else ():
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: let PyYAML report it
                continue
            if first is not None:
                why = f"duplicate key {excerpt(key)!s} (first on line {first.line + 1})"
                raise yaml.constructor.ConstructorError(None, None, why, key_node.start_mark)
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)

    # the stub's float: a config's numbers are read exactly, as Decimal
    def construct_yaml_float(self, node) -> Decimal:  # type: ignore[override]
        text = self.construct_scalar(node).replace("_", "").strip().lower()
        if text in (".nan", ".inf", "+.inf", "-.inf") or ":" in text:
            return Decimal(repr(super().construct_yaml_float(node)))
        return Decimal(text)


ConfigLoader.add_constructor("tag:yaml.org,2002:float", ConfigLoader.construct_yaml_float)

#: Bidirectional embeddings, overrides and isolates: they reorder the text around them.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Unicode categories that never show as themselves on one line, and what they are.
_HIDDEN = {
    "Cc": "a control character",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
    "Cs": "a lone surrogate",
}


def hidden_char(text: str, strict: bool = False) -> str | None:
    """The first character of ``text`` that does not show as itself on one line (a control, a
    line or paragraph separator, a lone surrogate, a bidirectional control; ``strict``: any
    non-printable one) as ``what (U+XXXX)``, or None."""
    for c in text:
        cat = unicodedata.category(c)
        if c in _BIDI:
            return f"a bidirectional control (U+{ord(c):04X})"
        if cat in _HIDDEN or (strict and not c.isprintable()):
            return f"{_HIDDEN.get(cat, 'an invisible or non-printable character')} (U+{ord(c):04X})"
    return None


#: The names every JavaScript object already has (``Object.prototype``'s): as a model id, a
#: display name, a ``sample_id``, a tag or a slice name the book's scripts and charts would read
#: the object's own member instead of the data (data contract, § Release config).
JS_RESERVED = frozenset(
    {
        "__proto__",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
    }
)


def js_reserved(text: str) -> str | None:
    """Why ``text`` cannot name anything the book shows (one of :data:`JS_RESERVED`), or None."""
    if text in JS_RESERVED:
        return (
            f"is {text!r}, a name every JavaScript object already has (the book's scripts "
            "would read it as their own)"
        )
    return None


def twins(names: list[str]) -> list[tuple[str, str]]:
    """Pairs of entries of ``names`` (in order) that look the same to a reader: the same NFC
    form without format characters (``Cf``)."""
    first: dict[str, str] = {}
    out = []
    for n in names:
        k = unicodedata.normalize("NFC", "".join(c for c in n if unicodedata.category(c) != "Cf"))
        if k in first:
            out.append((first[k], n))
        else:
            first[k] = n
    return out


#: What GitHub turns into a mention, a reference or a link (``@name``, ``#1``, ``GH-1``, URLs).
_LINKY = re.compile(r"@\w|#\d|\bgh-\d|://|www\.", re.IGNORECASE)
#: A run of 7–40 hex digits holding a digit and a letter: GitHub links it as a commit.
_COMMIT = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", re.IGNORECASE)


def md_text(text: object, table: bool = False) -> str:
    """Text safe in GitHub Markdown prose and ``table`` cells: one line (:func:`shown`), inline
    markup characters escaped (``_`` not between two letters or digits, ``$`` and ``:`` too), a
    word GitHub would link (mention, reference, URL, commit) as a code span."""
    words = re.split(r"(\s+)", str(text))
    return "".join(
        md_code(w, table) if _LINKY.search(w) or _COMMIT.search(w) else _md_prose(w) for w in words
    )


def _md_prose(text: str) -> str:
    text = re.sub(r"([\\|*`<>\[\]~&$:])", r"\\\1", text)
    return shown(re.sub(r"(?<![^\W_])_|_(?![^\W_])", r"\\_", text))


def md_code(text: object, table: bool = False) -> str:
    """A Markdown code span of ``text`` on one line whatever its backticks (``|`` escaped in a
    ``table`` cell)."""
    t = shown(text).replace("|", "\\|") if table else shown(text)
    fence = "`" * (max((len(r) for r in re.findall("`+", t)), default=0) + 1)
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def csv_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a string a formula could start (``= + - @``, tab,
    carriage return) gets a leading ``'``."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
