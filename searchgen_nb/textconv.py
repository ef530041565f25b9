"""``searchgen-nb textconv FILE``: a published JSON or JSONL artifact as short lines that
``git diff`` can compare (data contract, § Publication, Reviewing a release's data): a line per
prompt × model pair of ``prompt_scores.jsonl``, else a line per value small enough to be one,
each naming what it is; no line over :data:`WIDTH` characters."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from searchgen_nb.declaration import COMPONENTS
from searchgen_nb.errors import SearchGenError
from searchgen_nb.files import ARTIFACT_MAX, read_bytes, read_lines
from searchgen_nb.untrusted import excerpt, shown, strict_loads

#: The longest line printed; a longer one goes on in continuation lines.
WIDTH = 300
#: Keys that name a row of a list (``rows[model_id=m]``), in this order.
ROW_KEYS = ("kind", "group", "slice", "model_id", "sample_id", "a", "b", "check", "name")
#: A pair of ``prompt_scores.jsonl``'s fields that its line shows by name.
_PAIR_SHOWN = ("status", "overall_9_raw", "overall_10_raw", "components_raw_0to3", "result_file")


class TextconvError(SearchGenError):
    """A file that is not a JSON or JSONL artifact (names the file and line)."""


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _wrap(head: str, body: str) -> Iterator[str]:
    """``head body`` in visible characters, cut into lines of at most :data:`WIDTH`, each
    continuation naming ``head`` and where it goes on."""
    head, body = shown(head), shown(body)
    line = f"{head} {body}" if head else body
    if len(line) <= WIDTH:
        yield line
        return
    name = excerpt(head, 100)
    step = WIDTH - len(name) - 16
    yield line[:WIDTH]
    for at in range(WIDTH, len(line), step):
        yield f"{name} …[{at}:] {line[at : at + step]}"


def _label(i: int, value: object) -> str:
    """A list item's name: its identifying keys (``model_id=m``), else its index."""
    if isinstance(value, dict):
        keys = [f"{k}={v}" for k in ROW_KEYS if isinstance(v := value.get(k), (str, int))]
        if keys:
            return ",".join(keys)
    return str(i)


def flatten(path: str, value: object) -> Iterator[str]:
    """``path = value`` when that fits a line, else a line per key or item (recursively)."""
    text = _json(value)
    if len(path) + len(text) + 3 <= WIDTH or not isinstance(value, (dict, list)) or not value:
        yield from _wrap(f"{path} =" if path else "", text)
    elif isinstance(value, dict):
        for k in sorted(value):
            yield from flatten(f"{path}.{k}" if path else k, value[k])
    else:
        for i, item in enumerate(value):
            yield from flatten(f"{path}[{_label(i, item)}]", item)


def _number(v: object) -> str:
    return "null" if v is None else _json(v)


def pair_line(sid: str, model: str, pair: dict) -> Iterator[str]:
    """One pair of ``prompt_scores.jsonl`` on one line: status, raw Overall-9 and -10 and the
    raw components in the contract's order (left out when all are null), the result file, then
    every other field by name (``source_id`` and ``lane`` only when the result file's path does
    not show them, ``error`` when not null)."""
    comps = pair.get("components_raw_0to3") or {}
    values = [
        pair.get("overall_9_raw"),
        pair.get("overall_10_raw"),
        *(comps.get(c) for c in COMPONENTS),
    ]
    shown_: list[object] = [pair.get("status")]
    if any(v is not None for v in values):  # a pair without a score shows no nulls
        shown_ += [
            f"o9={_number(values[0])}",
            f"o10={_number(values[1])}",
            "[" + " ".join(map(_number, values[2:])) + "]",
        ]
    file = pair.get("result_file")
    rest = [f"file={file}"] if file is not None else []
    for k in sorted(set(pair) - set(_PAIR_SHOWN)):
        v = pair[k]
        if k in ("source_id", "lane") and isinstance(v, str) and isinstance(file, str):
            if f"/{v}/" in f"/{file}/":
                continue
        if k == "error" and v is None:
            continue
        rest.append(f"{k}={v if isinstance(v, str) else _json(v)}")
    yield from _wrap(f"{sid} {model}:", " ".join(map(str, shown_ + rest)))


def _record_lines(n: int, doc: object) -> Iterator[str]:
    """One line of a JSONL artifact: named by its ``sample_id`` (else ``line N``); the pairs of
    ``prompt_scores.jsonl`` one line each."""
    if not isinstance(doc, dict):
        yield from flatten(f"line {n}", doc)
        return
    sid = doc.get("sample_id")
    name = sid if isinstance(sid, str) else f"line {n}"
    models = doc.get("models")
    if not isinstance(models, dict) or not all(
        isinstance(p, dict) and "components_raw_0to3" in p for p in models.values()
    ):
        yield from flatten(name, doc)
        return
    yield from flatten(name, {k: v for k, v in doc.items() if k != "models"})
    for m in sorted(models):
        yield from pair_line(name, m, models[m])


def textconv(path: str | Path) -> Iterator[str]:
    """The lines of a ``.jsonl`` (per line) or ``.json`` artifact; raises
    :class:`TextconvError` naming the file (and line) that is not strict JSON."""
    path = Path(path)
    try:
        if path.suffix == ".jsonl":
            for n, raw in enumerate(read_lines(path), start=1):
                if raw.strip():
                    yield from _record_lines(n, _parse(raw, path, n))
        else:
            yield from flatten("", _parse(read_bytes(path, ARTIFACT_MAX), path, None))
    except OSError as exc:
        raise TextconvError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _parse(raw: bytes, path: Path, line: int | None) -> object:
    try:
        return strict_loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        where = f"{path}" + (f" line {line}" if line else "")
        raise TextconvError(f"{where}: not strict JSON: {excerpt(str(exc), 200)}") from None
