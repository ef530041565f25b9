"""Named evaluation slices: which prompts each holds (data contract, § Named evaluation
slices)."""

import json

import numpy as np

from searchgen_nb.config import SliceConfig
from searchgen_nb.errors import ConfigError, MetadataError
from searchgen_nb.partition import partition_counts
from searchgen_nb.untrusted import excerpt


def field_values(prompt: dict, field: str, scalars: bool = False) -> frozenset[str]:
    """The values of a prompt's slice ``field`` (a string, a list of strings, null/absent: none);
    ``scalars``: a breakdown's field, where a number or true/false is one value, its JSON text
    (data contract, § Breakdowns). :class:`MetadataError` naming the sample_id otherwise."""
    v = prompt.get(field)
    if scalars and (isinstance(v, (bool, int, float))):
        return frozenset([json.dumps(v)])
    values = [] if v is None else [v] if isinstance(v, str) else v
    if isinstance(values, list) and all(isinstance(x, str) for x in values):
        return frozenset(values)
    what, wanted = ("breakdown", ", a number, true, false") if scalars else ("slice", "")
    where = f"metadata: sample_id {prompt.get('sample_id')}: {what} field {field!r}"
    raise MetadataError(f"{where} is {excerpt(v, 80)}, not a string{wanted} or a list of strings")


def in_slice(values: frozenset[str], spec: SliceConfig) -> bool:
    """Whether a prompt with these field values belongs to the slice."""
    want = set(spec.include)
    return not want or (bool(values & want) if spec.match == "any" else want <= values)


def slice_specs(slices: dict[str, SliceConfig] | None, n_prompts: int) -> dict[str, SliceConfig]:
    """The published slices: the configured ones, ``full_<n_prompts>`` first when none has an
    empty ``include`` (every prompt), or alone without a ``slices`` block."""
    full = {f"full_{n_prompts}": SliceConfig(include=[], match="all", expected_rows=n_prompts)}
    if not slices:
        return full
    if any(not spec.include for spec in slices.values()):
        return dict(slices)
    if f"full_{n_prompts}" in slices:
        why = "is configured with include values; that name is kept for the slice of every prompt"
        raise MetadataError(f"slice full_{n_prompts} {why}")
    return {**full, **slices}


def slice_members(prompts: list[dict], specs: dict[str, SliceConfig]) -> dict[str, np.ndarray]:
    """``{slice: sorted prompt indices}`` for the prompts of a release table."""
    return {
        name: np.array(
            [
                i
                for i, p in enumerate(prompts)
                if not spec.include or in_slice(field_values(p, spec.field), spec)
            ],
            dtype=np.int64,
        )
        for name, spec in specs.items()
    }


def manifest_slices(
    specs: dict[str, SliceConfig], members: dict[str, np.ndarray], prompts: list[dict]
) -> dict:
    """The manifest's slice keys: ``evaluation_slices`` (``subset_field``: the one field of the
    value-selecting slices, else null), ``published_slices``, ``slice_partitions`` and
    ``output_slice`` (the v1.0-shaped files' slice: the first that holds every prompt)."""
    fields = {spec.field for spec in specs.values() if spec.include}
    named = {
        name: {
            "deduplicate_by": "release_row",
            "expected_rows": spec.expected_rows,
            "field": spec.field,
            "include_tags": list(spec.include),
            "match": spec.match,
        }
        for name, spec in specs.items()
    }
    return {
        "evaluation_slices": {
            "named": named,
            "subset_field": fields.pop() if len(fields) == 1 else None,
        },
        "output_slice": next(name for name, spec in specs.items() if not spec.include),
        "published_slices": list(specs),
        "slice_partitions": {
            name: partition_counts(prompts[i] for i in idx.tolist())
            for name, idx in members.items()
        },
    }


def refuse_empty(
    specs: dict[str, SliceConfig], members: dict[str, np.ndarray], config_path: str
) -> None:
    """:class:`ConfigError` naming the config and every slice whose ``include`` selects no
    prompt, unless its ``expected_rows`` is 0."""
    empty = [
        name
        for name, spec in specs.items()
        if len(members[name]) == 0 and spec.include and spec.expected_rows != 0
    ]
    if empty:
        said = "; ".join(
            f"slice {name}: field {specs[name].field} holds none of "
            f"{excerpt(specs[name].include, 80)}"
            for name in empty[:5]
        )
        raise ConfigError(
            f"config {config_path}: `slices`: no prompt is in {len(empty)} slice(s): "
            f"{said} (set expected_rows: 0 for a slice meant to be empty)"
        )


def refuse_unknown_fields(kinds, prompts: list[dict], config_path: str) -> None:
    """:class:`ConfigError` naming the config, the breakdown and its field when no prompt holds a
    value of it (data contract, § Breakdowns); ``kinds``: the breakdowns' group kinds."""
    for kind in kinds:
        field = kind.fields[0]
        if all(p.get(field) is None for p in prompts):
            raise ConfigError(
                f"config {config_path}: `breakdowns`: breakdown {kind.kind}: field {field!r} is "
                "absent or null in every prompt of the metadata: no prompt is in any of its groups"
            )
