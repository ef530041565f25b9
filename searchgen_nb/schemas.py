"""JSON Schemas (draft 2020-12) of the published artifacts in ``searchgen_nb/schemas/``, and a
folder check against them (data contract, § Artifacts). Every ``$ref`` resolves offline: the
``$id`` URLs are names, never fetched. The arithmetic stays with the release gate."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from functools import cache
from itertools import islice
from pathlib import Path

import jsonschema
import jsonschema_rs
import referencing
import referencing.exceptions
from referencing.jsonschema import DRAFT202012

from searchgen_nb.constants import (
    ARTIFACTS,
    MANIFEST,
    SCHEMA_VERSION,  # noqa: F401 - re-exported
    VALIDATION_REPORT,
)
from searchgen_nb.declaration import BOARD_PATTERN
from searchgen_nb.files import ARTIFACT_MAX, read_bytes, read_lines
from searchgen_nb.untrusted import excerpt, strict_loads

#: Artifact file name → its schema file (``prompt_scores.jsonl`` → the schema of ONE line);
#: ``prompt_evidence.jsonl`` has its own check (:mod:`searchgen_nb.gate.evidence`).
SCHEMA_FILES = {
    n: n.replace(".jsonl", ".line.json").replace(".json", ".schema.json")
    for n in (*ARTIFACTS, MANIFEST, VALIDATION_REPORT)
    if n != "prompt_evidence.jsonl"
}
#: The schema of every breakdown's board (``leaderboard_by_<name>.json``: data contract,
#: § Breakdowns).
BREAKDOWN_SCHEMA = "leaderboard_by_breakdown.schema.json"
#: Problems listed per file by :func:`check_folder` (one more entry then gives the rest's count).
MAX_LISTED = 50


def schema_dir() -> Path:
    """The folder holding the ``*.schema.json`` files (``searchgen_nb/schemas/``)."""
    return Path(__file__).with_name("schemas")


def _read(name: str) -> dict:
    return json.loads((schema_dir() / name).read_text(encoding="utf-8"))


def load_schemas() -> dict[str, dict]:
    """Every artifact schema (fresh dicts), keyed by the artifact's file name."""
    return {artifact: _read(file) for artifact, file in SCHEMA_FILES.items()}


@cache
def _every_schema() -> list[dict]:
    return [_read(file) for file in ("definitions.schema.json", *SCHEMA_FILES.values())]


@cache
def registry() -> referencing.Registry:
    """Every schema under its ``$id``; with no ``retrieve``, a reference outside the folder
    raises ``Unresolvable`` instead of going to the network."""
    resources = [(s["$id"], DRAFT202012.create_resource(s)) for s in _every_schema()]
    return referencing.Registry().with_resources(resources)


def _schema(artifact_name: str) -> dict:
    if artifact_name not in SCHEMA_FILES and BOARD_PATTERN.fullmatch(artifact_name):
        return _read(BREAKDOWN_SCHEMA)
    if artifact_name not in SCHEMA_FILES:
        known = ", ".join(SCHEMA_FILES)
        raise KeyError(f"no schema for artifact {artifact_name!r} (known: {known})")
    return _read(SCHEMA_FILES[artifact_name])


@cache
def validator_for(artifact_name: str) -> jsonschema.Draft202012Validator:
    """The validator of one artifact (``format`` an annotation only; ``KeyError`` for a name
    not in :data:`SCHEMA_FILES` nor a breakdown's board)."""
    schema = _schema(artifact_name)
    return jsonschema.Draft202012Validator(schema, registry=registry(), format_checker=None)


@cache
def fast_validator_for(artifact_name: str):
    """The same schema compiled by ``jsonschema-rs``: it decides ~70× faster (0.07 vs 4.6 ms a
    demo line); :func:`validator_for` explains the rare invalid document."""
    resources = jsonschema_rs.Registry([(s["$id"], s) for s in _every_schema()])
    return jsonschema_rs.Draft202012Validator(_schema(artifact_name), registry=resources)


def json_pointer(path) -> str:
    """RFC 6901 pointer of a path of keys / indices (``""`` is the document itself)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


#: The bounds of a schema that a value can pass by being too long, and what they count.
_BOUNDS = {"maxLength": "characters", "maxItems": "items", "maxProperties": "keys"}


def error_text(error: jsonschema.ValidationError) -> str:
    """What a schema error says; a value over a length bound as ``too long: N characters, at most
    L`` (before any excerpt of the value, so that a bounded message keeps it)."""
    unit = _BOUNDS.get(str(error.validator))
    if unit is None or not isinstance(error.instance, (str, list, dict)):
        return error.message
    key = "a key " if "propertyNames" in error.relative_schema_path else ""
    return (
        f"{key}too long: {len(error.instance):,} {unit}, at most {error.validator_value:,}"
        f" ({excerpt(error.instance, 60)})"
    )


def _leaf(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """The most specific error of an ``anyOf``/``oneOf`` failure (its own message otherwise)."""
    if error.context:
        best = jsonschema.exceptions.best_match(error.context)
        if best is not None and len(best.absolute_path) >= len(error.absolute_path):
            return _leaf(best)
    return error


def _problem(file: str, line: int | None, pointer: str, text: str) -> dict:
    where = f"{file} line {line}" if line is not None else file
    message = " ".join(f"{where} {pointer or '(top level)'}: {text}".split())
    message = message if len(message) <= 200 else message[:199] + "…"
    return {"file": file, "line": line, "path": pointer, "message": message}


def _parse(data: bytes, empty: str | None = None) -> tuple[object, str | None]:
    """``(document, None)`` or ``(None, why it is not strict UTF-8 JSON)``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8: {exc}"
    if empty and not text.strip():
        return None, empty
    try:
        return strict_loads(text), None
    except RecursionError:
        return None, "not strict JSON: nested too deeply"
    except ValueError as exc:
        return None, f"not strict JSON: {exc}"


def check_document(artifact_name: str, doc: object, line: int | None = None) -> list[dict]:
    """Problems of one parsed document (or line) against its artifact's schema, as
    :func:`check_folder` words them; ``[]`` when it conforms."""
    if fast_validator_for(artifact_name).is_valid(doc):
        return []
    errors = sorted(
        validator_for(artifact_name).iter_errors(doc),
        key=lambda e: (json_pointer(e.absolute_path), e.message),
    )
    found = [
        _problem(artifact_name, line, json_pointer(leaf.absolute_path), error_text(leaf))
        for leaf in map(_leaf, errors)
    ]
    why = "jsonschema-rs rejects this document, jsonschema accepts it: report this disagreement"
    return found or [_problem(artifact_name, line, "", why)]


def _check_file(path: Path, name: str) -> list[dict]:
    """The problems of one artifact file (a JSONL file streamed); ``OSError`` when unreadable."""
    docs: Iterator[tuple[int | None, object, str | None]]
    if name.endswith(".jsonl"):
        docs = ((n, *_parse(raw, "empty line")) for n, raw in enumerate(read_lines(path), start=1))
    else:
        docs = iter([(None, *_parse(read_bytes(path, ARTIFACT_MAX)))])
    found = (
        p
        for line, doc, why in docs
        for p in ([_problem(name, line, "", why)] if why else check_document(name, doc, line))
    )
    listed = list(islice(found, MAX_LISTED))
    n = len(listed) + sum(1 for _ in found)
    if n > len(listed):
        message = f"{name}: {n - len(listed)} more problem(s) not listed ({n} in all)"
        listed.append({"file": name, "line": None, "path": "", "message": message})
    return listed


def check_folder(folder: str | Path, skip: tuple[str, ...] = ()) -> list[dict]:
    """Problems of every artifact in ``folder`` (but ``skip``): ``{"file", "line" (JSONL), "path"
    (JSON pointer), "message"}``; an unreadable or non-JSON file gives one at path "", at most
    :data:`MAX_LISTED` per file; ``NotADirectoryError`` when ``folder`` is not a folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder} is not a folder")
    problems: list[dict] = []
    boards = sorted(n for n in os.listdir(folder) if BOARD_PATTERN.fullmatch(n))
    for name in dict.fromkeys([*SCHEMA_FILES, *boards]):
        if os.path.lexists(folder / name) and name not in skip:
            try:
                problems += _check_file(folder / name, name)
            except OSError as exc:  # not a regular file, over its bound, a loop of links, …
                problems.append(_problem(name, None, "", f"cannot read: {exc.strerror or exc}"))
    return problems
