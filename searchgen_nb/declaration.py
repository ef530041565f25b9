"""The declaration of the benchmark (data contract, § The declaration of the benchmark): its
components, the kinds of prompt groups with their board files, and the public scale, read once
from ``data/benchmark.yaml``; a release's ``breakdowns`` add kinds. Written into the manifest
(:meth:`Declaration.as_dict`), read back by the release gate (:meth:`Declaration.from_dict`): it
imports nothing of the package."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from importlib import resources

import yaml

#: ``from`` of a kind a release config adds (``breakdowns``): one prompt metadata field.
BREAKDOWN = "breakdown"
#: ``from`` of the declared kinds: the partition of the prompts (the strata and search types), a
#: multi-label list field (one group per tag), the config's named slices.
PARTITION, TAGS, SLICES = "partition", "tags", "slices"
#: A breakdown's name: a safe id, also its board's file name part and its uncertainty prefix.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,63}")
#: A breakdown's board file, ``leaderboard_by_<name>.json``.
BOARD_PATTERN = re.compile(r"leaderboard_by_[a-z][a-z0-9_]{0,63}\.json")


@dataclass(frozen=True)
class Component:
    """One component: ``id``, ``label``, a one-sentence ``definition``, whether Overall-9 uses it
    and ``rubric`` (``"generic"``: a generic rubric dimension, else None)."""

    id: str
    label: str
    definition: str
    overall_9: bool
    rubric: str | None


@dataclass(frozen=True)
class GroupKind:
    """A kind of prompt group: ``source`` (``partition``, ``tags``, ``slices`` or
    :data:`BREAKDOWN`), the prompt ``fields`` it reads, its fixed ``groups`` (None: one per value
    found), its ``board`` file, its key in a slice's board (None: none) and its
    ``uncertainty_prefix``."""

    kind: str
    label: str
    source: str
    fields: tuple[str, ...]
    groups: tuple[str, ...] | None
    board: str
    slice_key: str | None
    uncertainty_prefix: str

    def as_dict(self) -> dict:
        """As declared (``from`` for ``source``), lists for tuples."""
        return {
            "kind": self.kind,
            "label": self.label,
            "from": self.source,
            "fields": list(self.fields),
            "groups": None if self.groups is None else list(self.groups),
            "board": self.board,
            "slice_key": self.slice_key,
            "uncertainty_prefix": self.uncertainty_prefix,
        }

    @classmethod
    def from_dict(cls, d: dict) -> GroupKind:
        groups = d["groups"]
        return cls(
            d["kind"],
            d["label"],
            d["from"],
            tuple(d["fields"]),
            None if groups is None else tuple(groups),
            d["board"],
            d["slice_key"],
            d["uncertainty_prefix"],
        )


def breakdown_kind(name: str, field: str) -> GroupKind:
    """The kind of breakdown ``name`` by the prompt metadata ``field``: its groups the field's
    values, its board ``leaderboard_by_<name>.json``, its uncertainty groups ``<name>:<value>``."""
    return GroupKind(name, name, BREAKDOWN, (field,), None, f"leaderboard_by_{name}.json", None,
                     f"{name}:")  # fmt: skip


@dataclass(frozen=True)
class Declaration:
    """The benchmark: ``components`` in the contract's order, ``group_kinds`` in the boards'
    order, the raw and public scale ``(low, high)`` and the default rounding decimals."""

    components: tuple[Component, ...]
    group_kinds: tuple[GroupKind, ...]
    scale_raw: tuple[int, int]
    scale_public: tuple[int, int]
    rounding_decimals: int

    component_ids = property(lambda self: tuple(c.id for c in self.components))
    overall_9 = property(lambda self: tuple(c.id for c in self.components if c.overall_9))
    generic_rubric = property(
        lambda self: tuple(c.id for c in self.components if c.rubric == "generic")
    )
    labels = property(lambda self: {c.id: c.label for c in self.components})
    boards = property(lambda self: tuple(k.board for k in self.group_kinds))

    @property
    def breakdowns(self) -> tuple[GroupKind, ...]:
        """The kinds a release config added, in its order."""
        return tuple(k for k in self.group_kinds if k.source == BREAKDOWN)

    @property
    def whole(self) -> tuple[str, str]:
        """``(kind, group)`` of the group holding every prompt: the partition's first group
        (``stratum``, ``All``)."""
        first = self.group_kinds[0]
        return first.kind, first.groups[0] if first.groups else ""

    def reserved(self) -> frozenset[str]:
        """Names no breakdown may take: the declared kinds', ``all`` and ``overall``."""
        return frozenset({k.kind for k in self.group_kinds} | {"all", "overall"})

    def with_breakdowns(self, fields: dict[str, str]) -> Declaration:
        """This declaration with a kind per breakdown ``{name: field}`` (in the given order)."""
        added = tuple(breakdown_kind(name, field) for name, field in fields.items())
        return replace(self, group_kinds=self.group_kinds + added)

    def as_dict(self) -> dict:
        """The manifest's ``declaration``."""
        return {
            "components": [
                {
                    "id": c.id,
                    "label": c.label,
                    "definition": c.definition,
                    "overall_9": c.overall_9,
                    "rubric": c.rubric,
                }
                for c in self.components
            ],  # fmt: skip
            "group_kinds": [k.as_dict() for k in self.group_kinds],
            "public_scale": {
                "raw": list(self.scale_raw),
                "public": list(self.scale_public),
                "rounding_decimals": self.rounding_decimals,
            },
        }

    @classmethod
    def from_dict(cls, d: dict) -> Declaration:
        """A declaration as :meth:`as_dict` writes it (``KeyError``/``TypeError`` otherwise)."""
        scale = d["public_scale"]
        return cls(
            tuple(Component(**c) for c in d["components"]),
            tuple(GroupKind.from_dict(k) for k in d["group_kinds"]),
            (scale["raw"][0], scale["raw"][1]),
            (scale["public"][0], scale["public"][1]),
            scale["rounding_decimals"],
        )


def _read() -> Declaration:
    text = resources.files("searchgen_nb.data").joinpath("benchmark.yaml").read_text("utf-8")
    return Declaration.from_dict(yaml.safe_load(text))


#: The package's declaration (``searchgen_nb/data/benchmark.yaml``).
BENCHMARK = _read()


def declared(manifest: dict) -> Declaration:
    """A manifest's ``declaration`` (:meth:`Declaration.from_dict`); the package's for a release
    published before manifests held one. The release gate reads the manifest's only."""
    found = manifest.get("declaration")
    return BENCHMARK if found is None else Declaration.from_dict(found)


#: The ten components in the contract's order (§ The ten components, Overall-9 and Overall-10).
COMPONENTS = BENCHMARK.component_ids
#: The nine public components of Overall-9, and the one Overall-9 leaves out.
OVERALL_9_COMPONENTS = BENCHMARK.overall_9
(EXCLUDED_PUBLIC_COMPONENT,) = (c for c in COMPONENTS if c not in OVERALL_9_COMPONENTS)
#: The six generic rubric dimensions; every other ``rubric:*`` key is adaptive.
GENERIC_RUBRIC = BENCHMARK.generic_rubric
COMPONENT_LABELS = BENCHMARK.labels
SCALE_RAW, SCALE_PUBLIC = BENCHMARK.scale_raw, BENCHMARK.scale_public
