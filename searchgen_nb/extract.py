"""Reading evaluation results: status of every prompt × model pair and its 10 components.

SPEC §2 (components of the built-in extractor) and §3 (status). The extractor is pluggable
(``extractor: module:function`` in the config, or ToolGen's ``extract_10comp`` when
``TOOLGEN_ROOT`` is set); whatever it returns is checked here the same way.

Extractor contract
------------------
``fn(result: dict) -> Mapping[str, float | None] | Sequence[float | None]``

* ``result`` is the parsed JSON object of one result file whose ``success`` is true.
* Return the 10 components, either as a mapping keyed by the names in
  :data:`searchgen_nb.constants.COMPONENTS` (a key left out is ``null``), or as a sequence of
  exactly 10 values in that order.
* ``None`` (or, from ToolGen's code, a float NaN) means *not applicable* → ``null``.
* Raise ``ValueError`` for an unusable result; it becomes ``invalid_evaluation`` with the
  message as its reason. Anything else it raises (``SystemExit`` too; Ctrl-C still stops the
  command) does the same. Any returned value that is not a finite number in [0, 3] also
  makes the pair ``invalid_evaluation``.
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from searchgen_nb.constants import (
    BUILTIN_EXTRACTOR,
    COMPONENTS,
    GENERIC_RUBRIC,
    INVALID,
    MISSING_EVALUATION,
    MISSING_GENERATION,
    SCORED,
    TOOLGEN_EXTRACTOR,
)
from searchgen_nb.errors import ExtractorError
from searchgen_nb.files import RESULT_MAX, read_file
from searchgen_nb.numeric import mean_raw
from searchgen_nb.untrusted import DuplicateKey, no_duplicate_keys, printable

Components = dict  # component name -> float | None (raw 0–3)
Extractor = Callable[[dict], object]


class InvalidResult(ValueError):
    """A result file that exists but cannot be scored (→ ``invalid_evaluation``)."""


def _check_value(key: str, v: object) -> float:
    """A score value as float, or :class:`InvalidResult` (non-numeric, NaN/Infinity, outside 0–3)."""
    t = type(v)
    if (t is float or t is int) and 0 <= v <= 3:  # fast path; NaN and ±inf fail the comparison
        return float(v)
    if t is bool or not isinstance(v, (int, float)):
        raise InvalidResult(f"score {key!r} is not a number: {json.dumps(v)[:80]}")
    if not math.isfinite(v):
        raise InvalidResult(f"score {key!r} is not finite: {v}")
    raise InvalidResult(f"score {key!r} is outside 0–3: {v}")


_REFERENCE_KEYS = frozenset(("visual_reference_evaluation", "text_reference_evaluation"))
_GENERIC = frozenset(GENERIC_RUBRIC)


# score key -> (kind, component): "c" checklist item, "a" adaptive rubric, "x" a copied
# component, "u" unknown. Keys repeat across thousands of files, so classify each once
# (measured on a demo result file with 11 keys: 2.3 µs with the cache, 4.9 µs without).
_KEY_KINDS: dict[str, tuple[str, str | None]] = {}


def _key_kind(key: str) -> tuple[str, str | None]:
    kind = _KEY_KINDS.get(key)
    if kind is None:
        if key.startswith("checklist:"):
            kind = ("c", None)
        elif key.startswith("rubric:"):
            kind = ("x", key[7:]) if key[7:] in _GENERIC else ("a", None)
        elif key in _REFERENCE_KEYS:
            kind = ("x", key)
        else:
            kind = ("u", None)
        if len(_KEY_KINDS) < 100_000:
            _KEY_KINDS[key] = kind
    return kind


def _components_and_unknown(scores: object) -> tuple[Components, list[str]]:
    """Built-in extraction of a ``scores`` map plus the keys that carry no component."""
    if not isinstance(scores, dict):
        raise InvalidResult(f"'scores' is not an object: {json.dumps(scores)[:80]}")
    checklist: list[float] = []
    adaptive: list[float] = []
    unknown: list[str] = []
    out: Components = dict.fromkeys(COMPONENTS)
    for key, v in scores.items():
        t = type(v)
        if not ((t is float or t is int) and 0 <= v <= 3):
            v = _check_value(key, v)  # raises with the reason
        kind, comp = _KEY_KINDS.get(key) or _key_kind(key)
        if kind == "c":
            checklist.append(v)
        elif kind == "x":
            out[comp] = float(v)
        elif kind == "a":
            adaptive.append(v)
        else:
            unknown.append(key)
    out["checklist"] = mean_raw(checklist)
    out["rubric_adaptive"] = mean_raw(adaptive)
    return out, unknown


def extract_components(result: dict) -> Components:
    """Built-in extractor (SPEC §2): the 10 raw 0–3 components of one parsed result.

    ``checklist`` = mean of all ``checklist:*``; ``rubric_adaptive`` = mean of the ``rubric:*``
    keys that are not one of the six generic dimensions; the six generic rubric dimensions,
    ``visual_reference_evaluation`` and ``text_reference_evaluation`` are copied. A component
    with no key is ``None``. Other keys carry no component. Raises :class:`InvalidResult`
    when ``scores`` is not an object or holds a value that is not a finite number in [0, 3].
    """
    return _components_and_unknown(result.get("scores"))[0]


def _is_known_score_key(key: str) -> bool:
    return key.startswith(("checklist:", "rubric:")) or key in _REFERENCE_KEYS


_ALIASES = {
    "visual_reference": "visual_reference_evaluation",
    "text_reference": "text_reference_evaluation",
    "adaptive_rubric": "rubric_adaptive",
    "rubric": "rubric_adaptive",
}


def adapt_components(out: object) -> Components:
    """Normalise an extractor's return value to the 10-component mapping (contract above).

    Raises :class:`InvalidResult` for an unknown key, a wrong-length sequence, or a value
    that is not a finite number in [0, 3] (``None``/NaN are accepted as not applicable).
    """
    if isinstance(out, Mapping):
        items = {}
        for k, v in out.items():
            name = _ALIASES.get(k, k)
            if name not in COMPONENTS:
                raise InvalidResult(f"extractor returned unknown component {k!r}")
            items[name] = v
    elif isinstance(out, Sequence) and not isinstance(out, (str, bytes)):
        if len(out) != len(COMPONENTS):
            raise InvalidResult(f"extractor returned {len(out)} values, expected {len(COMPONENTS)}")
        items = dict(zip(COMPONENTS, out))
    else:
        raise InvalidResult(f"extractor returned {type(out).__name__}, expected a mapping or a sequence")
    comps: Components = {}
    for c in COMPONENTS:
        v = items.get(c)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            comps[c] = None
        else:
            if hasattr(v, "item") and not isinstance(v, (int, float)):  # numpy scalar
                v = v.item()
            comps[c] = _check_value(c, v)
    return comps


def load_extractor(spec: str | None) -> tuple[str, Extractor]:
    """Import an extractor given as ``module:function`` (None → built-in).

    For ToolGen's extractor (:data:`TOOLGEN_EXTRACTOR`), ``$TOOLGEN_ROOT`` is put first on
    ``sys.path``. Returns ``(spec, callable)``; raises :class:`ExtractorError`.
    """
    if spec is None or spec == BUILTIN_EXTRACTOR:
        return BUILTIN_EXTRACTOR, extract_components
    module_name, _, func_name = spec.partition(":")
    if spec == TOOLGEN_EXTRACTOR:
        root = os.environ.get("TOOLGEN_ROOT")
        if not root or not os.path.isdir(root):
            raise ExtractorError(f"extractor {spec}: TOOLGEN_ROOT={root!r} is not a folder")
        if root not in sys.path:
            sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
        fn = getattr(module, func_name, None)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - any import failure, SystemExit too
        why = f"cannot import {module_name}: {_text(exc)}"
        raise ExtractorError(f"extractor {spec}: {why}") from None
    if not callable(fn):
        raise ExtractorError(f"extractor {spec}: {module_name} has no callable {func_name!r}")
    return spec, fn


@dataclass
class PairResult:
    """Outcome for one prompt × model pair (SPEC §3): status, components, reason, warnings.

    ``file_id`` is the ``(st_dev, st_ino)`` of the file read (two pairs reading one file —
    a symlink, a hard link — are refused by the caller); ``identity_error`` says how the
    file's own ``sample_id`` / ``generator_name`` contradicts the pair it was read for.
    """

    status: str
    components: Components
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    file_sha256: str | None = None
    file_id: tuple[int, int] | None = None
    identity_error: str | None = None


_NULLS: Components = dict.fromkeys(COMPONENTS)
#: One decoder for every result file (``json.loads`` with a hook builds a new one per call).
_DECODER = json.JSONDecoder(object_pairs_hook=no_duplicate_keys)


def _reason(text: str, limit: int = 300) -> str:
    """A pair's reason as published: bounded, lone surrogates escaped."""
    return printable(text if len(text) <= limit else text[: limit - 1] + "…")


def _text(exc: BaseException) -> str:
    """``str(exc)``, also for an exception whose ``__str__`` fails (an extractor's own class)."""
    try:
        return str(exc)
    except Exception:  # noqa: BLE001
        return f"<{type(exc).__name__} that cannot be shown as text>"


def _image_present(folder: str, globs: Sequence[str]) -> bool:
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    pats = [g.lower() for g in globs]
    return any(fnmatch.fnmatchcase(n.lower(), p) for n in names for p in pats)


def _identity(result: dict, identity: tuple[Collection[str], Collection[str]] | None) -> str | None:
    """How the result's own ``sample_id``/``bench_id``/``generator_name`` contradicts the pair, or None.

    A result identifies itself by these optional fields; when present, ``sample_id`` and
    ``bench_id`` must be the pair's sample_id (or its release_row) and ``generator_name`` one of
    the model's names (source_id, model_id, or its configured ``generator_name``).
    """
    if identity is None:
        return None
    ids, generators = identity
    for key in ("sample_id", "bench_id"):
        v = result.get(key)
        if v is not None and v not in ids:
            return f"the file's {key} is {printable(str(v))[:80]!r}, not this prompt's"
    g = result.get("generator_name")
    if g is not None and g not in generators:
        return f"the file's generator_name is {printable(str(g))[:80]!r}, not this model's ({', '.join(sorted(generators))})"
    return None


def classify_result(path: str, extractor: Extractor, generation_glob: Sequence[str], digest, identity: tuple[Collection[str], Collection[str]] | None = None) -> PairResult:
    """Status and components of one pair from its result file (SPEC §3).

    ``digest(bytes) -> str`` hashes every file that is read (for the manifest's input hash).
    ``identity``: ``(accepted sample ids, accepted generator names)`` checked against the
    file's own fields (see :func:`_identity`). Never raises for a bad result: a problem of the
    file becomes ``invalid_evaluation`` with its reason (also pathological JSON: nesting too
    deep, integers too long, duplicate keys); an identity contradiction is returned in
    ``identity_error`` for the caller to refuse.
    """
    try:
        data, st = read_file(path, RESULT_MAX)
    except FileNotFoundError:
        folder = os.path.dirname(path)
        status = MISSING_EVALUATION if _image_present(folder, generation_glob) else MISSING_GENERATION
        return PairResult(status, dict(_NULLS))
    except OSError as exc:
        return PairResult(INVALID, dict(_NULLS), f"cannot read file: {exc.strerror}")
    sha = digest(data)
    fid = (st.st_dev, st.st_ino)
    try:
        result = _DECODER.decode(data.decode(json.detect_encoding(data), "surrogatepass"))  # = json.loads(data, …)
    except DuplicateKey as exc:
        return PairResult(INVALID, dict(_NULLS), f"not valid JSON: {exc}", file_sha256=sha, file_id=fid)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits
        reason = "nested too deeply" if isinstance(exc, RecursionError) else printable(str(exc))[:200]
        return PairResult(INVALID, dict(_NULLS), f"not valid JSON: {reason}", file_sha256=sha, file_id=fid)
    if not isinstance(result, dict):
        return PairResult(INVALID, dict(_NULLS), f"not a JSON object (got {type(result).__name__})", file_sha256=sha, file_id=fid)
    contradiction = _identity(result, identity)
    if result.get("success") is not True:
        err = result.get("error")
        why = f"success is {json.dumps(result.get('success'))[:40]}"
        reason = _reason(f"{why}: {err}" if err else why)
        return PairResult(INVALID, dict(_NULLS), reason, file_sha256=sha, file_id=fid, identity_error=contradiction)
    warnings: list[str] = []
    try:
        if extractor is extract_components:
            comps, unknown = _components_and_unknown(result.get("scores"))
        else:
            scores = result.get("scores")
            unknown = []
            if isinstance(scores, dict):  # SPEC §3: every value of the file is checked
                for key in scores:
                    _check_value(key, scores[key])
                unknown = [k for k in scores if not _is_known_score_key(k)]
            comps = adapt_components(extractor(result))
        if unknown:
            warnings.append(printable(f"score key(s) with no component ignored: {', '.join(sorted(unknown))}"))
    except ValueError as exc:  # InvalidResult, or an extractor's documented ValueError
        why = _reason(_text(exc))
        return PairResult(INVALID, dict(_NULLS), why, warnings, sha, fid, contradiction)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a pluggable extractor failing, SystemExit too
        why = f"extractor raised {type(exc).__name__}" + (f": {_text(exc)}" if _text(exc) else "")
        return PairResult(INVALID, dict(_NULLS), _reason(why), warnings, sha, fid, contradiction)
    if not any(v is not None for v in comps.values()):
        return PairResult(INVALID, dict(_NULLS), "no usable score (no component present)", warnings, sha, fid, contradiction)
    return PairResult(SCORED, comps, None, warnings, sha, fid, contradiction)
