"""Prompt metadata: read the JSONL, check every line, derive the partition (data contract,
§ Prompt metadata and the partition)."""

import functools
import hashlib
import json
import posixpath
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from searchgen_nb.errors import MetadataError
from searchgen_nb.evidence import prompt_text
from searchgen_nb.files import DATASET_MAX, read_bytes
from searchgen_nb.partition import partition
from searchgen_nb.untrusted import (
    excerpt,
    hidden_char,
    js_reserved,
    printable,
    strict_loads,
    strings,
)

TAG_FIELDS = ("domains", "failure_modes")
#: Bounds (data contract, § Prompt metadata and the partition): the longest sample_id and
#: release_row folder name in bytes of UTF-8 (it names result files: at most 255 bytes), the
#: most tags per tag field, the longest tag, subset name or optional text in characters.
NAME_MAX, TAGS_MAX, TEXT_MAX = 128, 1_000, 256
TEXT_FIELDS = ("difficulty", "language", "generation_task_type")
OPTIONAL_FIELDS = (*TEXT_FIELDS, "is_miniset", "eval_slices")
#: What a record says of its prompt besides the optional fields.
RECORD_FIELDS = ("sample_id", "release_row", "subset", "stratum", "search_type", *TAG_FIELDS)


@dataclass(frozen=True)
class Prompt:
    """One benchmark prompt. ``line`` is the 1-based metadata line (for messages only)."""

    sample_id: str
    release_row: str
    subset: object
    stratum: str
    search_type: str
    domains: tuple[str, ...]
    failure_modes: tuple[str, ...]
    optional: dict = field(default_factory=dict)
    line: int = 0
    #: ``{"text", "checklist"}`` for the evidence (:func:`~searchgen_nb.evidence.prompt_text`)
    texts: dict = field(default_factory=dict)


@dataclass
class PromptSet:
    """All prompts, sorted by sample_id, plus the warnings raised while reading them."""

    prompts: list[Prompt]
    warnings: list[dict]
    canonical_sha256: str


def _fail(path: Path, line: int, sample_id: object, what: str) -> MetadataError:
    sid = f" (sample_id {excerpt(repr(sample_id), 80)})" if sample_id is not None else ""
    return MetadataError(f"metadata {path.name} line {line}{sid}: {what}")


def _release_row(value: object, fail) -> str:
    """The line's release_row, normalised: a printable relative path below results_root."""
    if not isinstance(value, str):
        raise fail(f"release_row must be a string, got {type(value).__name__}")
    if any(not c.isprintable() for c in value):
        raise fail("release_row holds a control or other non-printable character")
    norm = posixpath.normpath(value.replace("\\", "/"))
    if value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":"):
        why = "is an absolute path"
    elif norm == ".." or norm.startswith("../"):
        why = "climbs out of results_root ('..')"
    elif norm in ("", "."):
        why = "is empty"
    elif (
        max(len(name.encode("utf-8")) for name in norm.split("/")) > NAME_MAX
        or len(norm.encode("utf-8")) > 1024
    ):
        why = (
            f"is too long for a path below results_root (at most {NAME_MAX} bytes of UTF-8 "
            "per folder name, 1024 in all)"
        )
    else:
        return norm
    raise fail(f"release_row {value!r} {why}")


def read_prompts(path: str | Path, fields: tuple[str, ...] = ()) -> PromptSet:
    """Prompt metadata JSONL as a :class:`PromptSet` sorted by sample_id (data contract,
    § Prompt metadata and the partition); :class:`MetadataError` naming the line otherwise.
    ``fields``: the breakdowns' fields, kept with the optional fields (§ Breakdowns)."""
    path = Path(path)
    try:
        data = read_bytes(path, DATASET_MAX)
    except FileNotFoundError:
        raise MetadataError(f"metadata: file not found: {path}") from None
    except OSError as exc:  # not a regular file, over the bound, a loop of links, …
        raise MetadataError(f"metadata {path}: cannot read: {exc.strerror or exc}") from None
    prompts: dict[str, Prompt] = {}
    lines: dict[str, bytes] = {}  # sample_id -> the line as read, canonical (sorted keys)
    warnings: list[dict] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            row = _row(path, lineno, raw)
            prompt = _prompt(row, path, lineno, prompts, warnings, fields)
            prompts[prompt.sample_id] = prompt
            lines[prompt.sample_id] = json.dumps(row, sort_keys=True, ensure_ascii=False).encode()
    ordered = [prompts[k] for k in sorted(prompts)]
    warnings.sort(key=lambda w: (w["sample_id"], w["message"]))
    return PromptSet(ordered, warnings, canonical_hash(lines))


def _row(path: Path, lineno: int, raw: bytes) -> dict:
    """One line as a JSON object that can be published as UTF-8."""
    try:
        row = strict_loads(raw)
    except RecursionError:
        raise _fail(path, lineno, None, "not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # not JSON or UTF-8, NaN/Infinity, too many digits, a repeated key
        raise _fail(path, lineno, None, f"not valid JSON ({excerpt(str(exc), 200)})") from None
    if not isinstance(row, dict):
        raise _fail(path, lineno, None, f"expected a JSON object, got {type(row).__name__}")
    for where, s in strings(row):
        if printable(s) != s:  # a lone surrogate: UTF-8 cannot carry it
            why = f"{where} holds a lone surrogate ({excerpt(s, 60)}): not valid Unicode"
            raise _fail(path, lineno, row.get("sample_id", row.get("bench_id")), why)
    return row


def _prompt(
    row: dict, path: Path, lineno: int, seen: dict, warnings: list, fields: tuple[str, ...] = ()
) -> Prompt:
    """The prompt of one line; its duplicate tags dropped and reported in ``warnings``."""
    sid = _sample_id(row, path, lineno, seen)
    fail = functools.partial(_fail, path, lineno, sid)
    release_row = _release_row(row.get("release_row", sid), fail)
    subset = row.get("subset")
    if not (subset is None or isinstance(subset, str) or _strings(subset)):
        raise fail(f"subset must be a string or a list of strings, got {type(subset).__name__}")
    if isinstance(subset, list):
        _tags(subset, "subset", fail, strict=False)
    elif subset is not None:
        _text(subset, "subset", fail)
    tags = {name: _tags(row.get(name), name, fail) for name in TAG_FIELDS}
    for name, value in tags.items():
        if dups := sorted(t for t, n in Counter(value).items() if n > 1):
            said = f"{name}: duplicate tag(s) {excerpt(', '.join(dups), 200)} dropped"
            warnings.append(
                {"check": "duplicate_tag", "sample_id": sid, "line": lineno, "message": said}
            )
    stratum, search_type = partition(subset, sid)
    domains, failure_modes = (tuple(dict.fromkeys(tags[name])) for name in TAG_FIELDS)
    return Prompt(
        sid,
        release_row,
        subset,
        stratum,
        search_type,
        domains,
        failure_modes,
        optional=_optional(row, fail) | _breakdown_fields(row, fields, fail),
        line=lineno,
        texts=prompt_text(row),
    )


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _sample_id(row: dict, path: Path, lineno: int, seen: dict) -> str:
    """The line's sample_id (or its alias bench_id): a new, printable file name."""
    sid, alias = row.get("sample_id"), row.get("bench_id")
    if sid is None:
        sid = alias
    elif alias is not None and alias != sid:
        raise _fail(path, lineno, sid, f"sample_id and its alias bench_id differ ({alias!r})")
    if not isinstance(sid, str) or not sid:
        why = "sample_id (or bench_id) must be a non-empty string"
    elif "/" in sid or "\\" in sid or sid in (".", ".."):
        why = "sample_id must not contain path separators"
    elif any(not c.isprintable() for c in sid):
        why = "sample_id holds a control or other non-printable character"
    elif (n := len(sid.encode("utf-8"))) > NAME_MAX:
        why = (
            f"sample_id is {n} bytes long in UTF-8, at most {NAME_MAX} (it names result"
            " folders and files)"
        )
    elif reserved := js_reserved(sid):
        why = f"sample_id {reserved}"
    elif sid in seen:
        why = f"duplicate sample_id (first on line {seen[sid].line})"
    else:
        return sid
    raise _fail(path, lineno, sid, why)


def _optional(row: dict, fail) -> dict:
    """The optional fields of one line, checked: ``is_miniset`` a boolean or null; the others
    (a slice may select on them) a bounded string, a list of bounded strings, or null."""
    optional = {k: row.get(k) for k in OPTIONAL_FIELDS}
    if not (optional["is_miniset"] is None or isinstance(optional["is_miniset"], bool)):
        raise fail(f"is_miniset must be true, false or null, got {_kind(optional['is_miniset'])}")
    for name in (*TEXT_FIELDS, "eval_slices"):
        value = optional[name]
        if isinstance(value, list):
            _tags(value, name, fail, strict=name == "eval_slices")
        elif value is not None:
            _text(value, name, fail)
    return optional


def _breakdown_fields(row: dict, fields: tuple[str, ...], fail) -> dict:
    """The breakdown fields a record does not carry anyway, checked: a bounded string, a
    number, true or false, a list of bounded strings, or null (data contract, § Breakdowns)."""
    out = {}
    for name in (f for f in fields if f not in RECORD_FIELDS and f not in OPTIONAL_FIELDS):
        value = out[name] = row.get(name)
        if isinstance(value, list):
            _tags(value, name, fail)
        elif isinstance(value, str):
            _text(value, name, fail)
        elif value is not None and not isinstance(value, (bool, int, float)):
            raise fail(
                f"breakdown field {name!r} must be a string, a number, true, false, a list of "
                f"strings or null, got {_kind(value)}"
            )
    for name in fields:  # each value names a group the book shows, as a tag does
        value = row.get(name)
        for v in [value] if isinstance(value, str) else value if _strings(value) else []:
            hidden = hidden_char(v, strict=True)
            if why := f"holds {hidden}" if hidden else js_reserved(v):
                raise fail(f"breakdown field {name!r}: value {excerpt(v, 60)} {why}")
    return out


def _kind(value: object) -> str:
    """What a value is, in a few words, whatever its size."""
    if isinstance(value, str):
        return f"a string of {len(value):,} characters"
    if isinstance(value, (list, dict)):
        return f"a {'list' if isinstance(value, list) else 'object'} of {len(value):,} items"
    return excerpt(json.dumps(value), 40)


def _text(value: object, name: str, fail) -> None:
    """A text field: a string of at most :data:`TEXT_MAX` characters."""
    if not isinstance(value, str) or len(value) > TEXT_MAX:
        raise fail(
            f"{name} must be a string of at most {TEXT_MAX} characters, a list of such "
            f"strings or null, got {_kind(value)}"
        )


def _tags(value: object, name: str, fail, strict: bool = True) -> list[str]:
    """A tag field: a list of bounded strings with no invisible character (``strict``; null or
    absent: [])."""
    value = [] if value is None else value
    if not _strings(value):
        raise fail(f"{name} must be a list of strings, got {excerpt(json.dumps(value), 80)}")
    if len(value) > TAGS_MAX:
        raise fail(f"{name} lists {len(value):,} tags, at most {TAGS_MAX:,}")
    for t in value:
        if len(t) > TEXT_MAX:
            raise fail(f"{name}: tag {excerpt(t, 60)} is {len(t):,} characters, at most {TEXT_MAX}")
        if strict and (why := hidden_char(t, strict=True)):
            raise fail(f"{name}: tag {excerpt(t, 60)} holds {why}")
        if strict and (why := js_reserved(t)):
            raise fail(f"{name}: tag {why}")
    return value


def canonical_hash(lines: dict[str, bytes]) -> str:
    """sha256 of the metadata as read (``lines``: ``sample_id ->`` its line, every field, as
    sorted-key JSON), the lines sorted by sample_id: line order changes no artifact, any field
    does (data contract, § Prompt metadata and the partition; § Artifacts)."""
    h = hashlib.sha256()
    for sid in sorted(lines):
        h.update(lines[sid] + b"\n")
    return h.hexdigest()
