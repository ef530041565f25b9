"""Reading one result file: its pair's status and ten components (data contract, § The ten
components, Overall-9 and Overall-10; § Status of a prompt × model pair). The extractor is
pluggable (``extractor: module:function``, or ToolGen's); its return value is checked here."""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from searchgen_nb.constants import (
    BUILTIN_EXTRACTOR,
    INVALID,
    MISSING_EVALUATION,
    MISSING_GENERATION,
    SCORED,
    TOOLGEN_EXTRACTOR,
)
from searchgen_nb.declaration import COMPONENTS, GENERIC_RUBRIC
from searchgen_nb.errors import ExtractorError
from searchgen_nb.evidence import agrees, pair_evidence
from searchgen_nb.files import RESULT_MAX, find_image, read_file
from searchgen_nb.numeric import mean_raw
from searchgen_nb.untrusted import DuplicateKey, StrictDecoder, printable

Components = dict  # component name -> float | None (raw 0–3)
Extractor = Callable[[dict], object]


class InvalidResult(ValueError):
    """A result file that exists but cannot be scored (→ ``invalid_evaluation``)."""


def _check_value(key: str, v: object) -> float:
    """A score value as float, or :class:`InvalidResult` (not a finite number in 0–3)."""
    t = type(v)
    if (t is float or t is int) and isinstance(v, (int, float)) and 0 <= v <= 3:  # the common case
        return float(v)
    if t is bool or not isinstance(v, (int, float)):
        raise InvalidResult(f"score {key!r} is not a number: {_shown(v)}")
    if t is not float and t is not int:  # a subclass (numpy's float64): its plain value
        try:
            v = float(v) if isinstance(v, float) else int(v)
        except Exception as exc:  # an extractor's own number type failing
            why = f"{type(exc).__name__}: {_text(exc)}"
            raise InvalidResult(
                f"score {key!r}: a {t.__name__} that cannot be read ({why})"
            ) from exc
    if isinstance(v, float) and not math.isfinite(v):
        raise InvalidResult(f"score {key!r} is not finite: {v}")
    if 0 <= v <= 3:
        return float(v)
    raise InvalidResult(f"score {key!r} is outside 0–3: {_shown(v)}")


def _shown(v: object) -> str:
    """A value for a reason: its JSON, else its repr (a list holding itself, an object)."""
    try:
        text = json.dumps(v)
    except (ValueError, TypeError, RecursionError):
        try:
            text = repr(v)
        except Exception:
            text = f"<{type(v).__name__}>"
    return text if len(text) <= 80 else text[:79] + "…"


_COPIED = {
    "visual_reference_evaluation",
    "text_reference_evaluation",
    *(f"rubric:{c}" for c in GENERIC_RUBRIC),
}


def _components_and_unknown(scores: object) -> tuple[Components, list[str]]:
    """The built-in extractor's components of a ``scores`` map, and its keys that carry none."""
    if not isinstance(scores, dict):
        raise InvalidResult(f"'scores' is not an object: {json.dumps(scores)[:80]}")
    out: Components = dict.fromkeys(COMPONENTS)
    checklist, adaptive, unknown = [], [], []
    for key, v in scores.items():
        v = _check_value(key, v)
        if key.startswith("checklist:"):
            checklist.append(v)
        elif key in _COPIED:
            out[key.removeprefix("rubric:")] = v
        elif key.startswith("rubric:"):
            adaptive.append(v)
        else:
            unknown.append(key)
    out["checklist"], out["rubric_adaptive"] = mean_raw(checklist), mean_raw(adaptive)
    return out, unknown


def extract_components(result: dict) -> Components:
    """The built-in extractor: the ten raw 0–3 components of one parsed result (data contract,
    § The ten components, Overall-9 and Overall-10); :class:`InvalidResult` for a bad value."""
    return _components_and_unknown(result.get("scores"))[0]


_ALIASES = {
    "visual_reference": "visual_reference_evaluation",
    "rubric": "rubric_adaptive",
    "text_reference": "text_reference_evaluation",
    "adaptive_rubric": "rubric_adaptive",
}


def adapt_components(out: object) -> Components:
    """An extractor's return value as the ten components (None, NaN: not applicable);
    :class:`InvalidResult` for an unknown name, not ten values, or a value not in 0–3."""
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
        why = f"{type(out).__name__}, expected a mapping or a sequence"
        raise InvalidResult(f"extractor returned {why}")
    comps: Components = dict.fromkeys(COMPONENTS)
    for c in COMPONENTS:
        v = items.get(c)
        if (item := getattr(v, "item", None)) is not None and not isinstance(v, (int, float)):
            v = item()  # a numpy scalar (float32 too): its plain value, NaN included
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            comps[c] = _check_value(c, v)
    return comps


def load_extractor(spec: str | None) -> tuple[str, Extractor]:
    """``(spec, callable)`` of an extractor given as ``module:function`` (None: built-in;
    ToolGen's is imported from ``$TOOLGEN_ROOT``); else :class:`ExtractorError`."""
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
    except BaseException as exc:  # any import failure, SystemExit too
        why = f"cannot import {module_name}: {_text(exc)}"
        raise ExtractorError(f"extractor {spec}: {why}") from None
    if not callable(fn):
        raise ExtractorError(f"extractor {spec}: {module_name} has no callable {func_name!r}")
    return spec, fn


@dataclass
class PairResult:
    """One pair's status, components, reason, warnings; the sha256 and ``(st_dev, st_ino)`` of
    the file read, and how its own ``sample_id`` / ``generator_name`` contradicts the pair."""

    status: str
    components: Components = field(default_factory=lambda: dict.fromkeys(COMPONENTS))
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    file_sha256: bytes | None = None
    file_id: tuple[int, int] | None = None
    identity_error: str | None = None
    evidence: dict | None = None  # the judge's answer (searchgen_nb.evidence.pair_evidence)


_DECODER = StrictDecoder()  # NaN, Infinity or a repeated key anywhere: not valid JSON


def _reason(text: str, limit: int = 300) -> str:
    """A pair's reason as published: bounded, lone surrogates escaped."""
    return printable(text if len(text) <= limit else text[: limit - 1] + "…")


def _text(exc: BaseException) -> str:
    """``str(exc)``, also for an exception whose ``__str__`` fails (an extractor's own class)."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} that cannot be shown as text>"


def _identity(result: dict, identity: tuple[Collection[str], Collection[str]] | None) -> str | None:
    """How the result's own optional ``sample_id``/``bench_id`` (the pair's sample_id or
    release_row) or ``generator_name`` (one of the model's names) contradicts the pair."""
    if identity is None:
        return None
    ids, generators = identity
    for key in ("sample_id", "bench_id"):
        v = result.get(key)
        if v is not None and v not in ids:
            return f"the file's {key} is {printable(str(v))[:80]!r}, not this prompt's"
    g = result.get("generator_name")
    if g is not None and g not in generators:
        names = ", ".join(sorted(generators))
        shown = printable(str(g))[:80]
        return f"the file's generator_name is {shown!r}, not this model's ({names})"
    return None


def classify_result(
    path: str,
    extractor: Extractor,
    generation_glob: Sequence[str],
    identity: tuple[Collection[str], Collection[str]] | None = None,
) -> PairResult:
    """One pair from its result file (data contract, § Status of a prompt × model pair);
    ``identity``: ``(sample ids, generator names)`` accepted. A bad file is
    ``invalid_evaluation`` with its reason, never an exception."""
    try:
        data, st = read_file(path, RESULT_MAX)
    except FileNotFoundError:
        image = find_image(os.path.dirname(path), generation_glob) is not None
        return PairResult(MISSING_EVALUATION if image else MISSING_GENERATION)
    except OSError as exc:
        return PairResult(INVALID, error=f"cannot read file: {exc.strerror}")
    read: dict[str, Any] = {
        "file_sha256": hashlib.sha256(data).digest(),
        "file_id": (st.st_dev, st.st_ino),
    }
    try:
        result = _DECODER.decode(data.decode(json.detect_encoding(data), "surrogatepass"))
    except DuplicateKey as exc:
        return PairResult(INVALID, error=f"not valid JSON: {exc}", **read)
    except (ValueError, RecursionError) as exc:  # not JSON, not Unicode, too many digits
        why = "nested too deeply" if isinstance(exc, RecursionError) else printable(str(exc))[:200]
        return PairResult(INVALID, error=f"not valid JSON: {why}", **read)
    if not isinstance(result, dict):
        why = f"not a JSON object (got {type(result).__name__})"
        return PairResult(INVALID, error=why, **read)
    read["identity_error"] = _identity(result, identity)
    if result.get("success") is not True:
        why = f"success is {json.dumps(result.get('success'))[:40]}"
        err = result.get("error")
        return PairResult(INVALID, error=_reason(f"{why}: {err}" if err else why), **read)
    scores = result.get("scores")  # every value checked whichever extractor is used
    try:
        if extractor is extract_components:
            comps, unknown = _components_and_unknown(scores)
        else:
            unknown = _components_and_unknown(scores)[1]
            comps = adapt_components(extractor(result))
    except ValueError as exc:  # InvalidResult, or an extractor's documented ValueError
        return PairResult(INVALID, error=_reason(_text(exc)), **read)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a pluggable extractor failing, SystemExit too
        why = f"extractor raised {type(exc).__name__}" + (f": {_text(exc)}" if _text(exc) else "")
        return PairResult(INVALID, error=_reason(why), **read)
    ignored = f"score key(s) with no component ignored: {', '.join(sorted(unknown))}"
    warnings = [printable(ignored)] if unknown else []
    if not any(v is not None for v in comps.values()):
        why = "no usable score (no component present)"
        return PairResult(INVALID, error=why, warnings=warnings, **read)
    evidence = pair_evidence(result)
    if evidence and not agrees(evidence, comps):
        warnings.append("the judge's parsed answer disagrees with its scores: not shown")
        evidence = None
    return PairResult(SCORED, comps, None, warnings, evidence=evidence, **read)
