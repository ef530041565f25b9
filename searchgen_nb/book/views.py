"""What the book's notebooks show, as plain data: the release read lazily, and the frames
:mod:`~searchgen_nb.book.pages` hands to the tables and charts. Values are the published 0–100
figures read from the aggregate files, never recomputed; ``None`` stays ``None`` (N/A)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Any, TypeVar

import pandas as pd
import yaml

from searchgen_nb.aggregate import groups_of
from searchgen_nb.book import texts
from searchgen_nb.book.fmt import exact_diff, interval_text, pct_label
from searchgen_nb.config import ReleaseConfig, SliceConfig, find_config, load_config
from searchgen_nb.constants import (
    CHANGES,
    OVERALL_BOARD,
    STRATUM_GROUPS,
    UNCERTAINTY,
    VALIDATION_REPORT,
)
from searchgen_nb.declaration import (
    BENCHMARK,
    BREAKDOWN,
    COMPONENT_LABELS,
    OVERALL_9_COMPONENTS,
    PARTITION,
    SLICES,
    TAGS,
    Declaration,
    GroupKind,
)
from searchgen_nb.errors import ConfigError
from searchgen_nb.numeric import scaled
from searchgen_nb.published import Published, bootstrap_settings
from searchgen_nb.records import read_records
from searchgen_nb.slices import field_values, in_slice

#: The board files the book reads: overall and the package's declared group kinds.
BOARD_FILES = {"overall": OVERALL_BOARD, **{k.kind: k.board for k in BENCHMARK.group_kinds}}
#: The tag kinds, each with its field (its taxonomy key).
TAG_KINDS = {k.kind: k.fields[0] for k in BENCHMARK.group_kinds if k.source == TAGS}
#: The facts the Extraction page shows (by name, never by position).
EXTRACTION_FACTS = (
    "Dataset",
    "Dataset sha256 (canonical)",
    "Result files read",
    "Results sha256",
    "Result path",
    "Extractor",
)


@functools.cache
def taxonomy() -> dict[str, dict[str, str]]:
    """Tag names: ``{"domains": {code: name}, "failure_modes": {code: name}}``."""
    path = resources.files("searchgen_nb").joinpath("data/taxonomy.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    return {key: {code: v["name"] for code, v in data[key].items()} for key in TAG_KINDS.values()}


@dataclass(frozen=True)
class TagColumn:
    """How the prompt explorer (a column, its URL filter ``key``) and the prompt card (a row of
    tags) show a prompt's groups of one declared ``kind``: ``values``, their key in
    :meth:`Release.prompt_tags` and in a row's filter values; ``label`` and ``title``, the
    heading and its tooltip (``book/templates/prompt_tags.yaml``; a breakdown: its name)."""

    kind: GroupKind
    key: str
    values: str
    label: str
    title: str


def tag_columns(declaration: Declaration) -> tuple[TagColumn, ...]:
    """A :class:`TagColumn` per group kind of ``declaration``, in its order: a declared kind's
    values are keyed by its field (the slices, which read none, by ``slices``), a breakdown's by
    its filter key ``by_<name>``."""
    heads = texts.mapping("prompt_tags.yaml")
    out = []
    for k in declaration.group_kinds:
        key = explorer_key(k.kind)
        if k.source == BREAKDOWN:
            title = (
                f"Breakdown {k.kind}: the prompt's value of its field {k.fields[0]} (a list: each)."
            )
            out.append(TagColumn(k, key, key, k.kind, title))
        else:
            head = heads.get(k.kind, {"label": k.label, "title": ""})
            out.append(TagColumn(k, key, (*k.fields, SLICES)[0], head["label"], head["title"]))
    return tuple(out)


def explorer_filters(columns: Sequence[TagColumn]) -> dict:
    """The prompt explorer's URL filters, which the book's script reads from its table:
    ``{"filters": {filter key: key of a row's values}, "lists": [keys whose column shows a
    list]}``: every column's but the partition's, which shows one group."""
    return {
        "filters": {c.key: c.values for c in columns},
        "lists": [c.values for c in columns if c.kind.source != PARTITION],
    }


def explorer_key(kind: str) -> str:
    """The prompt explorer's URL filter of a group kind (its row value and column too): a
    built-in kind's name (``domain``), a breakdown's ``by_<name>``, so that no breakdown name
    is taken for another parameter of the explorer (``model``, ``status``)."""
    return kind if kind in BOARD_FILES else f"by_{kind}"


def tag_name(kind: str, code: str) -> str:
    """The name of a tag of ``kind`` (``domain``, ``failure_mode``); its code when unknown."""
    return taxonomy()[TAG_KINDS[kind]].get(code, code)


def open_config(release_config: str | None, given: dict | None = None) -> ReleaseConfig:
    """The release config a notebook was given; each key of ``given`` (its variables) that the
    config also has must hold the same value as the YAML. ConfigError names the parameter."""
    if not release_config:
        raise ConfigError(
            "notebook parameter `release_config` is not set: run with `-p release_config "
            "releases/NAME.yml`, or `-f` a release YAML that holds its own path under "
            "`release_config`"
        )
    path = find_config(release_config)
    cfg = load_config(path)
    given = given or {}
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) if given else {}
    keys = set(ReleaseConfig.model_fields) & set(given) - {"release_config", "config_path"}
    if differ := sorted(k for k in keys if given[k] != raw.get(k, given)):
        raise ConfigError(
            f"notebook parameter `{differ[0]}` differs from `{differ[0]}` in {release_config} (the "
            "file named by `release_config`): the parameters describe another release; "
            "give that release's own path as `release_config`"
        )
    return cfg


@dataclass
class Release(Published):
    """A staged or published artifact folder as the book sees it, read by :class:`Published`;
    ``slice`` None = the slice of every prompt (the manifest's ``output_slice``), else one named
    evaluation slice."""

    slice: str | None = None

    changes = property(lambda self: self.document(CHANGES, optional=True))
    uncertainty = property(lambda self: self.document(UNCERTAINTY, optional=True))
    validation_report = property(lambda self: self.document(VALIDATION_REPORT, optional=True))
    output_slice = property(lambda self: self.manifest["output_slice"])
    slice_name = property(lambda self: self.slice or self.output_slice)
    is_full = property(lambda self: self.slice_name == self.output_slice)
    #: The published slices, in order (the first holds every prompt).
    slices = property(lambda self: list(self.manifest["published_slices"]))
    is_demo = property(lambda self: self.manifest["data_origin"] == "synthetic-demo")
    #: Places of every published 0–100 value.
    decimals = property(lambda self: self.manifest["scoring"]["public_rounding_decimals"])
    min_coverage = property(lambda self: self.manifest["scoring"]["min_ranking_coverage"])
    model_order = property(lambda self: self.manifest["model_order"])
    names = property(lambda self: {m: self.display_name(m) for m in self.manifest["models"]})
    policies = property(
        lambda self: {m: v["missing_policy"] for m, v in self.manifest["models"].items()}
    )
    #: Models whose results are not in yet: never ranked.
    pending = property(
        lambda self: frozenset(
            m for m, meta in self.manifest["models"].items() if meta["pending"] is True
        )
    )
    #: "95%" for the bootstrap's confidence 0.95.
    confidence = property(lambda self: pct_label(bootstrap_settings(self.manifest).confidence))
    #: Appended to every table and chart id of a page, so one page can show several slices.
    id_suffix = property(
        lambda self: "" if self.is_full else "-" + self.slice_name.replace(".", "-").lower()
    )

    def display_name(self, model_id: str) -> str:
        return self.manifest["models"][model_id]["display_name"]

    @cached_property
    def tag_columns(self) -> tuple[TagColumn, ...]:
        """The :func:`tag_columns` of the manifest's declaration."""
        return tag_columns(self.declaration)

    @cached_property
    def slice_tests(self) -> dict[str, Any]:
        """``name -> (record -> bool)`` of each published slice (:meth:`in_slice`)."""
        return {name: self.in_slice(name) for name in self.slices}

    def prompt_tags(self, record: dict) -> dict[str, list[str]]:
        """A prompt's groups of each kind by :attr:`TagColumn.values`: the published slices
        holding it, else :func:`~searchgen_nb.aggregate.groups_of` (the partition's finest
        first)."""
        return {
            c.values: [n for n, test in self.slice_tests.items() if test(record)]
            if c.kind.source == SLICES
            else groups_of(record, c.kind)
            for c in self.tag_columns
        }

    @cached_property
    def breakdowns(self) -> tuple[GroupKind, ...]:
        """The breakdowns of the manifest's declaration, in its order (data contract,
        § Breakdowns): boards of the slice of every prompt only."""
        return self.declaration.breakdowns

    @cached_property
    def boards(self) -> dict[str, Any]:
        """The leaderboards of this view: ``overall``, ``stratum``, ``domain``, ``failure_mode``
        and (the slice of every prompt only) each breakdown's, by its name."""
        if self.is_full:
            files = {**BOARD_FILES, **{k.kind: k.board for k in self.breakdowns}}
            return {k: self.document(f) for k, f in files.items()}
        by_slice = self.document(BOARD_FILES["slice"])
        if self.slice not in by_slice:
            raise KeyError(
                f"no slice {self.slice!r} in this release (slices: {', '.join(by_slice)})"
            )
        b = by_slice[self.slice]
        return {
            "overall": b["overall"],
            "stratum": b["strata"],
            "domain": b["domains"],
            "failure_mode": b["failure_modes"],
            "slice": by_slice,
        }

    #: Every record of ``prompt_scores.jsonl`` (read once, shared by the slice views).
    all_records = cached_property(lambda self: read_records(self.folder))

    @cached_property
    def records(self) -> list[dict]:
        """The records of this view's prompts."""
        keep = self.in_slice(self.slice_name)
        return self.all_records if self.is_full else [r for r in self.all_records if keep(r)]

    def in_slice(self, name: str):
        """``record -> bool``: whether a record's prompt is in the published slice ``name``."""
        if name == self.output_slice:
            return lambda r: True
        spec = self.manifest["evaluation_slices"]["named"][name]
        cfg = SliceConfig(
            field=spec.get("field", "subset"), include=spec["include_tags"], match=spec["match"]
        )
        return lambda r: in_slice(field_values(r, cfg.field), cfg)

    def for_slice(self, name: str) -> Release:
        """The same release seen through one named slice (its boards, its records)."""
        view = Release(self.folder, slice=None if name == self.output_slice else name)
        view.parsed = self.parsed  # every file read once
        view.__dict__.update(manifest=self.manifest, all_records=self.all_records)
        return view


def stratum_views(release: Release) -> list[tuple[str, int, list[dict]]]:
    """``[(group, n_prompts, rows)]`` for All and the strata; ``n_prompts`` from the rows."""
    by = release.boards["stratum"]
    return [(g, by[g][0]["n_total"] if by.get(g) else 0, by.get(g, [])) for g in STRATUM_GROUPS]


def tag_frame(release: Release, kind: str) -> pd.DataFrame:
    """One row per model × tag (models in overall order): model_id, display_name, tag,
    tag_name, overall_9, n_total, n_scored, coverage, interval, the nine components."""
    pos = {r["model_id"]: i for i, r in enumerate(release.boards["overall"])}
    unranked = {r["model_id"]: " (unranked)" for r in release.boards["overall"] if not r["ranked"]}
    rows = []
    for tag, board in release.boards[kind].items():
        intervals = group_intervals(release, kind, tag)
        rows += [
            {
                "model_id": r["model_id"],
                "display_name": r["display_name"] + unranked.get(r["model_id"], ""),
                "tag": tag,
                "tag_name": tag_name(kind, tag) if kind in TAG_KINDS else None,
                **{k: r[k] for k in ("overall_9", "n_total", "n_scored", "coverage")},
                "interval": (intervals.get(r["model_id"]) or {}).get("overall_9"),
                **{c: r["components"][c] for c in OVERALL_9_COMPONENTS},
            }
            for r in board
        ]
    rows.sort(key=lambda r: pos.get(r["model_id"], len(pos)))  # model-major (stable: tag order)
    return pd.DataFrame(rows, dtype=object)


def tag_counts(release: Release, kind: str) -> pd.DataFrame:
    """Prompts per tag (``n_total``), with the multi-label total for the note under the table."""
    rows = [
        (f"{t} · {tag_name(kind, t)}", board[0]["n_total"])
        for t, board in release.boards[kind].items()
        if board
    ]
    return pd.DataFrame(rows, columns=["Tag", "Prompts"])  # no tag of this kind: no rows


def model_tag_table(release: Release, kind: str, model_id: str) -> pd.DataFrame:
    """One model's row per tag: Overall-9, prompts, scored, coverage, the nine components."""
    df = tag_frame(release, kind)
    df = df[df["model_id"] == model_id]
    return pd.DataFrame(
        {
            "Tag": [f"{t} · {n}" for t, n in zip(df["tag"], df["tag_name"])],
            "Overall-9": df["overall_9"].tolist(),
            "Prompts": df["n_total"].tolist(),
            "Scored": df["n_scored"].tolist(),
            "Coverage %": [scaled(c, 100) for c in df["coverage"]],
            **{COMPONENT_LABELS[c]: df[c].tolist() for c in OVERALL_9_COMPONENTS},
        },
        dtype=object,
    )


def top_models(release: Release, k: int = 3) -> list[str]:
    """The first ``k`` model_ids of the overall leaderboard (ranked first)."""
    return [r["model_id"] for r in release.boards["overall"][:k]]


def resolve_models(release: Release, wanted: list) -> list[str]:
    """Model ids from what a reader typed: ids or display names, any case (an id like ``007``
    stays text). ValueError with one line listing the valid values."""
    by_key: dict[str, str] = {}
    for m in release.model_order:
        by_key.setdefault(m.casefold(), m)
        by_key.setdefault(release.display_name(m).casefold(), m)
    if bad := [w for w in wanted if str(w).strip().casefold() not in by_key]:
        valid = ", ".join(f"{m} ({release.display_name(m)})" for m in release.model_order)
        raise ValueError(
            f"compare_models: {str(bad[0])!r} is not a model of this release; "
            f"valid (id or display name, any case): {valid}"
        )
    return list(dict.fromkeys(by_key[str(w).strip().casefold()] for w in wanted))


def _group_kinds(release: Release) -> dict[str, str]:
    """``{group: kind}``: All and the strata, the domains, the failure modes (first wins)."""
    out: dict[str, str] = {}
    for kind in ("stratum", *TAG_KINDS):
        for g in release.boards[kind]:
            out.setdefault(g, kind)
    return out


def resolve_group(release: Release, group) -> str:
    """The group name from what a reader typed: All, a stratum or search type, a tag code or
    name, any case. ValueError with one line listing the valid values."""
    kinds = _group_kinds(release)
    names: dict[str, str] = {}
    for g, kind in kinds.items():
        names.setdefault(g.casefold(), g)
        if kind != "stratum":
            names.setdefault(tag_name(kind, g).casefold(), g)
    if (key := str(group).strip().casefold()) not in names:
        raise ValueError(
            f"compare_group: {str(group)!r} is not a group of this release; "
            f"valid (code or name, any case): {', '.join(kinds)}"
        )
    return names[key]


def group_label(kind: str, name: str) -> str:
    """ "all prompts", "stratum NoSearch", "search type VisualSearch", "domain FAS · Fashion"."""
    if kind != "stratum":
        return f"{kind.replace('_', ' ')} {name} · {tag_name(kind, name)}"
    if name == "All":
        return "all prompts"
    return f"{'stratum' if name in ('NoSearch', 'SearchIntensive') else 'search type'} {name}"


def group_rows(release: Release, group: str) -> tuple[str, list[dict]]:
    """``(label, rows)`` of a named group; KeyError listing the valid names."""
    kinds = _group_kinds(release)
    if group not in kinds:
        raise KeyError(
            f"group {group!r} is not a stratum, domain or failure mode of this "
            f"release (valid: {', '.join(kinds)})"
        )
    return group_label(kinds[group], group), release.boards[kinds[group]][group]


def group_sizes(release: Release) -> pd.DataFrame:
    """Every aggregate group: kind, group (with tag name), prompts (n_total), models ranked."""
    return pd.DataFrame(
        [
            {
                "Kind": kind.replace("_", " "),
                "Group": g if kind == "stratum" else f"{g} · {tag_name(kind, g)}",
                "Prompts": board[0]["n_total"] if board else 0,
                "Ranked models": sum(r["ranked"] for r in board),
                "Models": len(board),
            }
            for kind in ("stratum", *TAG_KINDS)
            for g, board in release.boards[kind].items()
        ]
    )


def uncertainty_key(release: Release, kind: str, name: str) -> str | None:
    """The ``uncertainty.json`` key of a group of ``kind`` (``stratum``: All and the strata), or
    None without one: inside a named slice only the slice is bootstrapped (``slice:<name>``)."""
    if not release.is_full:
        return f"slice:{release.slice_name}" if (kind, name) == ("stratum", "All") else None
    if kind == "stratum":
        return "all:All" if name == "All" else f"stratum:{name}"
    return f"{kind}:{name}"


def group_intervals(release: Release, kind: str, name: str) -> dict[str, dict]:
    """``{model_id: {overall_9, overall_10, rank, n_valid}}`` of a group ({} without one)."""
    key = uncertainty_key(release, kind, name)
    return release.uncertainty["groups"].get(key, {}) if release.uncertainty else {}


def group_pairs(release: Release, kind: str, name: str) -> list[dict]:
    """The pairwise tests of a group (ranked groups only), in published rank order."""
    key = uncertainty_key(release, kind, name)
    return release.uncertainty["pairs"].get(key, []) if release.uncertainty else []


_Row = TypeVar("_Row", bound=Mapping[str, Any])


def in_rank_order(rows: Iterable[_Row]) -> list[_Row]:
    """Leaderboard rows in the contract's order (§ Coverage and ranking): the ranked by rank
    (equal published Overall-9 already ordered by model_id), then the others as given."""
    return sorted(rows, key=lambda r: (0, r["rank"]) if r.get("ranked") else (1, 0))


def rank_gaps(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """``{model_id: published Overall-9 minus the next rank's}`` (exact decimal; 0.0 when tied);
    none for the last ranked, the unranked, or a next rank not in ``rows``."""
    by_rank = {r["rank"]: r for r in rows if r.get("ranked")}
    return {
        r["model_id"]: exact_diff(r["overall_9"], by_rank[k + 1]["overall_9"])
        for k, r in by_rank.items()
        if k + 1 in by_rank
    }


def tie_groups(rows: list[dict], pairs: list[dict]) -> dict[str, str]:
    """``{model_id: "T1"}``: maximal runs of ranked models, adjacent in rank order, that are
    not separable (Holm-adjusted p above α), numbered from the top; others get no label."""
    sep = {(p["a"], p["b"]): p["separable"] for p in pairs}
    ranked = [r["model_id"] for r in rows if r.get("ranked")]
    out: dict[str, str] = {}
    for a, b in zip(ranked, ranked[1:]):
        if sep.get((a, b)) is False:
            out.setdefault(a, f"T{len(set(out.values())) + 1}")
            out[b] = out[a]
    return out


def wide_interval(release: Release) -> float | None:
    """The config's ``uncertainty.low_confidence_width`` (public points): a wider interval is
    low-confidence; None without an uncertainty section."""
    if not release.uncertainty or not release.uncertainty["groups"]:
        return None
    config = release.manifest["config"].get("uncertainty") or {}
    return float(config.get("low_confidence_width", 20.0))


def pairs_frame(release: Release, kind: str, name: str) -> pd.DataFrame:
    """One row per pair of ranked models of a group: A, B, Δ Overall-9 (published), its
    interval, p, Holm-adjusted p and whether the two are separable at the release's α."""
    names, iv = release.names, f"{release.confidence} interval of Δ"
    return pd.DataFrame(
        [
            (
                names.get(p["a"], p["a"]),
                names.get(p["b"], p["b"]),
                p["diff"],
                interval_text(p["ci"], release.decimals),
                p["p"],
                p["p_holm"],
                "yes" if p["separable"] else "no",
            )
            for p in group_pairs(release, kind, name)
        ],
        columns=["A", "B", "Δ Overall-9", iv, "p", "Holm p", "Separable"],
        dtype=object,
    )


def manifest_summary(release: Release, fields: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Key facts of the manifest as a two-column table (hashes, versions, config); ``fields``:
    only those facts, in that order (KeyError naming an unknown one)."""
    m = release.manifest
    ds, sc, sw = m["dataset"], m["scoring"], m["software"]
    facts = {
        "Benchmark": m["benchmark"],
        "Data origin": m["data_origin"],
        "Schema version": m["schema_version"],
        "Dataset": f"{ds['filename']} ({ds['n_prompts']} prompts)",
        "Dataset sha256 (canonical)": ds["sha256"],
        "Result files read": m["extraction"]["n_result_files_read"],
        "Results sha256": m["inputs"]["results_sha256"],
        "Result path": m["inputs"]["result_path"],
        "Extractor": m["extraction"]["extractor"],
        "Source commit": m["source_commit"],
        "searchgen-nb": f"{sw['searchgen_nb']} (commit {sw['pipeline_commit']})",
        "Python": sw["python"],
        "Missing policy default": sc["missing_policy_default"],
        "Policy exceptions": ", ".join(sc["missing_policy_exceptions"]) or "none",
        "Min ranking coverage": sc["min_ranking_coverage"],
        "Rounding": f"{sc['public_rounding_decimals']} decimal(s), {sc['rounding']}",
        **{f"sha256 {name}": sha for name, sha in sorted(m["artifact_sha256"].items())},
    }
    if unknown := [f for f in fields or () if f not in facts]:
        raise KeyError(f"manifest_summary: unknown fact(s) {unknown} (known: {', '.join(facts)})")
    rows = [(f, facts[f]) for f in fields] if fields is not None else list(facts.items())
    return pd.DataFrame(rows, columns=["Field", "Value"], dtype=object)
