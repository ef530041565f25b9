"""The gate's columns of ``prompt_scores.jsonl`` (:class:`Columns`), the prompts of a named
slice, and its own exact arithmetic (integers over a power-of-two denominator)."""

import json
import math
from array import array
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from searchgen_nb.constants import STATUSES, STRATUM_GROUPS
from searchgen_nb.declaration import BREAKDOWN, Declaration, GroupKind
from searchgen_nb.untrusted import excerpt

#: The group kinds the gate recomputes with its own code, as a manifest's ``declaration`` must
#: state them before its breakdowns: (kind, from, fields, groups, board, key in a slice's board,
#: uncertainty prefix).
BUILT_IN = (
    ("stratum", "partition", ("stratum", "search_type"), STRATUM_GROUPS,
     "leaderboard_by_stratum.json", "strata", "stratum:"),
    ("domain", "tags", ("domains",), None, "leaderboard_by_domain.json", "domains", "domain:"),
    ("failure_mode", "tags", ("failure_modes",), None, "leaderboard_by_failure_mode.json",
     "failure_modes", "failure_mode:"),
    ("slice", "slices", (), None, "leaderboard_by_slice.json", None, "slice:"),
)  # fmt: skip
#: A built-in kind's uncertainty prefix by its key in a slice's board.
PREFIX = {key: prefix for *_, key, prefix in BUILT_IN if key}
STATUS_CODE = {s: i for i, s in enumerate(STATUSES)}
UNKNOWN = 255
SCORED = STATUS_CODE["scored"]


def exact_numerators(values: list[float]) -> tuple[list[int], int]:
    """Finite doubles as integers over one common power-of-two denominator: ``(nums, den)``."""
    ratios = [v.as_integer_ratio() for v in values]
    den = max((d for _, d in ratios), default=1)
    return [n * (den // d) for n, d in ratios], den


def half_up(x: Fraction, decimals: int) -> float:
    """``x`` half-up to ``decimals`` decimals, halves away from zero for negatives."""
    units = math.floor(abs(x) * 10**decimals + Fraction(1, 2))
    return float(Fraction(units if x >= 0 else -units, 10**decimals))


def nan_row(comps10: Sequence[str]) -> list[float]:
    """A row of :func:`entry_row`'s width (the manifest's components, Overall-10, Overall-9),
    every value NaN."""
    return [math.nan] * (len(comps10) + 2)


def entry_row(e: dict, comps10: list[str]) -> tuple[int, list[float]]:
    """A schema-conforming entry's status code and raw values: the manifest's components in its
    ``overall_10_components`` order, Overall-10, Overall-9 (NaN = null)."""
    code = STATUS_CODE.get(e["status"], UNKNOWN)
    if code != SCORED:
        return code, nan_row(comps10)
    comps = e["components_raw_0to3"]
    raw = (*(comps[c] for c in comps10), e["overall_10_raw"], e["overall_9_raw"])
    return code, [math.nan if v is None else float(v) for v in raw]


class Columns:
    """Per prompt its sample_id, partition, tags and slice and breakdown fields; per model and
    prompt a status code, the raw values of :func:`entry_row` (``column``: where Overall-10
    and Overall-9 are, after the ``n_components``), the result file and the reason (``error``) —
    never the records."""

    def __init__(
        self, models: list[str], comps10: Sequence[str], slice_fields: Sequence[str] = ()
    ) -> None:
        self.models = models
        self.n_components = n = len(comps10)
        self.column = {"overall_10": n, "overall_9": n + 1}
        self.slice_fields = list(slice_fields)
        self.field_values: list[tuple] = []  # per prompt, the values of each slice field
        self.sample_ids: list = []
        self.prompts: list[tuple] = []  # (stratum, search_type, domains, failure_modes)
        self.files: list[list] = [[] for _ in models]  # result_file per model and prompt
        self.errors: list[list] = [[] for _ in models]  # error (the reason) per model and prompt
        self._status = [bytearray() for _ in models]
        self._values = [array("d") for _ in models]

    def add_prompt(self, r: dict) -> None:
        self.sample_ids.append(r.get("sample_id"))
        self.field_values.append(tuple(r.get(f) for f in self.slice_fields))
        tags = [r.get(f) for f in ("domains", "failure_modes")]
        tags = [tuple(t) if isinstance(t, list) else () for t in tags]
        self.prompts.append((r.get("stratum"), r.get("search_type"), *tags))

    def add_entry(self, k: int, status: int, values: list[float], result_file, error=None) -> None:
        self._status[k].append(status)
        self._values[k].extend(values)
        self.files[k].append(result_file)
        self.errors[k].append(error)

    def finish(self) -> None:
        """Freeze into arrays, prompts sorted by sample_id (the reconstruction's own order)."""
        n, m = len(self.sample_ids), len(self.models)
        order = sorted(range(n), key=lambda i: str(self.sample_ids[i]))
        status = np.frombuffer(b"".join(self._status), dtype=np.uint8)
        values = np.frombuffer(b"".join(a.tobytes() for a in self._values), dtype=np.float64)
        self.status = status.reshape(m, n)[:, order]
        self.values = values.reshape(m, n, self.n_components + 2)[:, order]
        self.sample_ids = [self.sample_ids[i] for i in order]
        self.prompts = [self.prompts[i] for i in order]
        self.field_values = [self.field_values[i] for i in order]
        self.files = [[f[i] for i in order] for f in self.files]
        self.errors = [[e[i] for i in order] for e in self.errors]
        del self._status, self._values

    @classmethod
    def from_records(cls, manifest: dict, records: list[dict]) -> "Columns":
        """Columns of records already in memory (tests; the gate streams the file)."""
        comps10 = manifest["scoring"]["overall_10_components"]
        cols = cls(list(manifest["model_order"]), comps10, slice_fields(manifest))
        for r in records:
            cols.add_prompt(r)
            for k, m in enumerate(cols.models):
                e = r["models"][m]
                cols.add_entry(k, *entry_row(e, comps10), e.get("result_file"), e.get("error"))
        cols.finish()
        return cols


def slice_fields(manifest: dict) -> list[str]:
    """The prompt fields the gate keeps: the value-selecting slices' and the breakdowns'."""
    named = (manifest.get("evaluation_slices") or {}).get("named") or {}
    fields = {s.get("field", "subset") for s in named.values() if s.get("include_tags")}
    return sorted(fields | {k.fields[0] for k in breakdowns(manifest)})


def manifest_declaration(manifest: Any) -> Declaration:
    """The manifest's ``declaration`` as the gate can recompute it (data contract, § The release
    gate): ``ValueError`` without one (a folder published before manifests carried one), with
    one that does not read, or with kinds :func:`declared_kinds_problem` names."""
    if isinstance(manifest, dict) and "declaration" not in manifest:
        raise ValueError(
            "no declaration: a folder published before manifests carried one is checked by the "
            "version that made it (its manifest's pipeline_commit)"
        )
    try:
        declaration = Declaration.from_dict(manifest["declaration"])
        problem = declared_kinds_problem(declaration)
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as exc:
        raise ValueError(f"no readable declaration ({type(exc).__name__}: {exc})") from None
    if problem:
        raise ValueError(f"declaration: {problem}")
    return declaration


def breakdowns(manifest: dict) -> tuple[GroupKind, ...]:
    """The breakdowns of the manifest's ``declaration`` (data contract, § Breakdowns):
    :func:`manifest_declaration`'s ``ValueError`` without a readable one."""
    return manifest_declaration(manifest).breakdowns


def declared_kinds_problem(declaration: Declaration) -> str | None:
    """What in a manifest's declaration the gate cannot recompute: built-in kinds other than
    :data:`BUILT_IN`, or a breakdown whose board, prefix or field is not its own."""
    built = [
        (k.kind, k.source, k.fields, k.groups, k.board, k.slice_key, k.uncertainty_prefix)
        for k in declaration.group_kinds
        if k.source != BREAKDOWN
    ]
    if tuple(built) != BUILT_IN:
        return "its group kinds before the breakdowns are not the built-in ones"
    for k in declaration.breakdowns:
        own = (f"leaderboard_by_{k.kind}.json", None, f"{k.kind}:", None, 1)
        if (k.board, k.slice_key, k.uncertainty_prefix, k.groups, len(k.fields)) != own or any(
            k.kind == b[0] or k.kind in ("all", "overall") for b in BUILT_IN
        ):
            return f"breakdown {excerpt(k.kind, 60)} is not declared as a breakdown is"
    return None


def breakdown_prompts(cols: Columns, field: str) -> dict[str, list[int]]:
    """``{value: prompt indices}`` of a breakdown by ``field``, values sorted: a string is one
    value, a number or a boolean its JSON text, a list of strings each of its strings; null,
    absent or anything else: no group."""
    j = cols.slice_fields.index(field)
    groups: dict[str, list[int]] = {}
    for i, values in enumerate(cols.field_values):
        v = values[j]
        if isinstance(v, (bool, int, float)):
            v = json.dumps(v)
        have = {v} if isinstance(v, str) else set(v) if isinstance(v, list) else set()
        for value in have:
            groups.setdefault(value, []).append(i)
    return dict(sorted(groups.items()))


def slice_prompts(cols: Columns, spec: dict) -> list[int]:
    """Prompt indices (sample_id order) of one slice (data contract, § Named evaluation slices):
    those whose ``field`` (a string or a list of strings) holds any / all of ``include_tags``."""
    tags = set(spec["include_tags"])
    if not tags:
        return list(range(len(cols.sample_ids)))
    j = cols.slice_fields.index(spec.get("field", "subset"))
    out = []
    for i, values in enumerate(cols.field_values):
        v = values[j]
        have = {v} if isinstance(v, str) else set(v) if isinstance(v, list) else set()
        if (tags & have) if spec["match"] == "any" else (tags <= have):
            out.append(i)
    return out


def tag_groups(cols: Columns, members) -> dict[tuple[str, str], list[int]]:
    """``{(kind, group): prompt indices}`` of ``members`` in the leaderboards' order: ``strata``
    (every stratum group, even empty), then ``domains`` and ``failure_modes`` (tags sorted)."""
    groups: dict[tuple[str, str], list[int]] = {("strata", g): [] for g in STRATUM_GROUPS}
    for kind, j in (("domains", 2), ("failure_modes", 3)):
        tags = sorted({t for i in members for t in cols.prompts[i][j]})
        groups.update({(kind, t): [] for t in tags})
    for i in members:
        stratum, search_type, domains, failure_modes = cols.prompts[i]
        keys = {("strata", "All"), ("strata", stratum), ("strata", search_type)}
        keys |= {("domains", t) for t in domains} | {("failure_modes", t) for t in failure_modes}
        for key in keys:
            groups[key].append(i)
    return groups
