"""What the book's notebooks show, as plain data: release loading and table/chart frames.

Notebooks stay thin: they call these functions and hand the frames to
:mod:`searchgen_nb.book.tables` and :mod:`searchgen_nb.book.charts`. Values are public 0–100 figures
read from the aggregate files (never recomputed here); ``None`` stays ``None`` (N/A).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path

import pandas as pd
import yaml

from searchgen_nb.numeric import percent, scaled
from searchgen_nb.book.fmt import NA, interval_text
from searchgen_nb.config import ReleaseConfig, find_config, load_config
from searchgen_nb.changes import score_changed
from searchgen_nb.errors import ConfigError
from searchgen_nb.constants import (
    COMPONENT_LABELS,
    INVALID,
    MANIFEST,
    OVERALL_9_COMPONENTS,
    STATUSES,
    STRATUM_GROUPS,
    CHANGES,
    UNCERTAINTY,
    VALIDATION_REPORT,
)

BOARD_FILES = {
    "overall": "leaderboard_overall.json",
    "stratum": "leaderboard_by_stratum.json",
    "domain": "leaderboard_by_domain.json",
    "failure_mode": "leaderboard_by_failure_mode.json",
    "slice": "leaderboard_by_slice.json",
}


def taxonomy() -> dict[str, dict[str, str]]:
    """Tag names: ``{"domains": {code: name}, "failure_modes": {code: name}}`` (SearchGen-Bench taxonomy)."""
    data = json.loads(resources.files("searchgen_nb").joinpath("data/taxonomy.json").read_text(encoding="utf-8"))
    return {kind: {code: v["name"] for code, v in data[kind].items()} for kind in ("domains", "failure_modes")}


def open_config(release_config: str | None, given: dict | None = None) -> ReleaseConfig:
    """Load the release config a notebook was given (``release_config`` parameter).

    ``given``: the notebook's variables (``globals()``); when papermill injected keys of a
    release YAML (``-f other.yml``), each one that is also a key of the loaded config must
    have the same value there — a notebook runs the release its parameters describe, never
    another one. Raises :class:`ConfigError` naming the missing parameter or the key that
    differs (SPEC §1.1).
    """
    if not release_config:
        raise ConfigError(
            "notebook parameter `release_config` is not set: run with `-p release_config releases/NAME.yml`, "
            "or `-f` a release YAML that holds its own path under `release_config`"
        )
    path = find_config(release_config)
    cfg = load_config(path)
    if given:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))  # already checked by load_config
        for key in sorted(set(ReleaseConfig.model_fields) & set(given) - {"release_config", "config_path"}):
            if given[key] != raw.get(key, given):
                raise ConfigError(
                    f"notebook parameter `{key}` differs from `{key}` in {release_config} (the file named by "
                    "`release_config`): the parameters describe another release; give that release's own path as `release_config`"
                )
    return cfg


@dataclass
class Release:
    """A staged or published artifact folder, read lazily; ``slice`` None = the slice of every
    prompt (the manifest's ``output_slice``), else one named evaluation slice (SPEC §9)."""

    folder: Path
    slice: str | None = None

    @cached_property
    def manifest(self) -> dict:
        return json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))

    @cached_property
    def boards(self) -> dict[str, object]:
        if self.slice is None or self.slice == self.output_slice:
            return {k: json.loads((self.folder / f).read_text(encoding="utf-8")) for k, f in BOARD_FILES.items()}
        by_slice = json.loads((self.folder / BOARD_FILES["slice"]).read_text(encoding="utf-8"))
        if self.slice not in by_slice:
            raise KeyError(f"no slice {self.slice!r} in this release (slices: {', '.join(by_slice)})")
        b = by_slice[self.slice]
        return {"overall": b["overall"], "stratum": b["strata"], "domain": b["domains"], "failure_mode": b["failure_modes"], "slice": by_slice}

    @cached_property
    def all_records(self) -> list[dict]:
        """Every record of ``prompt_scores.jsonl`` (read once, shared by the slice views)."""
        from searchgen_nb.pipeline import read_records

        return read_records(self.folder)

    def in_slice(self, name: str):
        """``record -> bool``: whether a record's prompt is in the published slice ``name``."""
        if name == self.output_slice:
            return lambda r: True
        from searchgen_nb.config import SliceConfig
        from searchgen_nb.slices import field_values, in_slice

        spec = self.manifest["evaluation_slices"]["named"][name]
        cfg = SliceConfig(field=spec.get("field", "subset"), include=spec["include_tags"], match=spec["match"])
        return lambda r: in_slice(field_values(r, cfg.field), cfg)

    @cached_property
    def records(self) -> list[dict]:
        """The records of ``prompt_scores.jsonl`` (of this slice's prompts)."""
        if self.slice is None or self.slice == self.output_slice:
            return self.all_records
        keep = self.in_slice(self.slice)
        return [r for r in self.all_records if keep(r)]

    @property
    def output_slice(self) -> str:
        """The slice of every prompt (what the v1.0-shaped files show)."""
        return self.manifest.get("output_slice") or f"full_{self.manifest['dataset']['n_prompts']}"

    @property
    def slice_name(self) -> str:
        """The slice this view shows."""
        return self.slice or self.output_slice

    @property
    def slices(self) -> list[str]:
        """The published slices, in order (the first holds every prompt)."""
        return list(self.manifest.get("published_slices") or [self.output_slice])

    @property
    def id_suffix(self) -> str:
        """Appended to every table and chart id of a page, so one page can show several slices."""
        return "" if self.slice_name == self.output_slice else "-" + self.slice_name.replace(".", "-").lower()

    def for_slice(self, name: str) -> "Release":
        """The same release seen through one named slice (its boards, its records)."""
        view = Release(self.folder, None if name == self.output_slice else name)
        view.__dict__["manifest"] = self.manifest
        view.__dict__["all_records"] = self.all_records  # one read of prompt_scores.jsonl for every slice
        return view

    @cached_property
    def changes(self) -> dict | None:
        """``changes.json`` (SPEC §10), or None when the folder has none."""
        p = self.folder / CHANGES
        return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None

    @cached_property
    def uncertainty(self) -> dict | None:
        """``uncertainty.json`` (SPEC §8), or None when the folder has none."""
        p = self.folder / UNCERTAINTY
        return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None

    @cached_property
    def validation_report(self) -> dict | None:
        p = self.folder / VALIDATION_REPORT
        return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None

    @property
    def is_demo(self) -> bool:
        return self.manifest.get("data_origin") == "synthetic-demo"

    @property
    def decimals(self) -> int:
        """The release's ``rounding_decimals``: places of every published 0–100 value."""
        return self.manifest["scoring"]["public_rounding_decimals"]

    @property
    def min_coverage(self) -> float:
        return self.manifest["scoring"]["min_ranking_coverage"]

    @property
    def pending(self) -> frozenset[str]:
        """Models whose results are not in yet (``pending: true`` in the config): never ranked."""
        return frozenset(m for m, meta in self.manifest["models"].items() if meta.get("pending") is True)

    @property
    def model_order(self) -> list[str]:
        return self.manifest["model_order"]

    def display_name(self, model_id: str) -> str:
        return self.manifest["models"][model_id]["display_name"]


def banner_html(release: Release) -> str:
    """The synthetic-data banner (empty string for a real release)."""
    if not release.is_demo:
        return ""
    return (
        '<div class="sg-demo-banner" role="note"><strong>Synthetic demo data.</strong> '
        "Every model and number on this page is generated by <code>searchgen_nb.demo</code> "
        "to the real formats and sizes; none of it is a real SearchGen-Bench result.</div>"
    )


def stratum_views(release: Release) -> list[tuple[str, int, list[dict]]]:
    """``[(group, n_prompts, rows)]`` for All, NoSearch, SearchIntensive, VisualSearch, TextualSearch.

    ``n_prompts`` comes from the rows' ``n_total`` (the data), never typed in.
    """
    by = release.boards["stratum"]
    out = []
    for g in STRATUM_GROUPS:
        rows = by.get(g, [])
        out.append((g, rows[0]["n_total"] if rows else 0, rows))
    return out


def tag_kind(kind: str) -> str:
    """``domain`` → ``domains`` key of the taxonomy; ``failure_mode`` → ``failure_modes``."""
    return {"domain": "domains", "failure_mode": "failure_modes"}[kind]


def tag_frame(release: Release, kind: str) -> pd.DataFrame:
    """Long frame, one row per model × tag: model_id, display_name, tag, tag_name, overall_9,
    n_total, n_scored, coverage, and the nine public components (None = N/A)."""
    names = taxonomy()[tag_kind(kind)]
    unranked = {r["model_id"] for r in release.boards["overall"] if not r["ranked"]}
    rows = []
    for tag, board in release.boards[kind].items():
        intervals = group_intervals(release, kind, tag)
        for r in board:
            rows.append(
                {
                    "model_id": r["model_id"],
                    "display_name": r["display_name"] + (" (unranked)" if r["model_id"] in unranked else ""),
                    "tag": tag,
                    "tag_name": names.get(tag, tag),
                    "overall_9": r["overall_9"],
                    "n_total": r["n_total"],
                    "n_scored": r["n_scored"],
                    "coverage": r["coverage"],
                    "interval": (intervals.get(r["model_id"]) or {}).get("overall_9"),
                    **{c: r["components"][c] for c in OVERALL_9_COMPONENTS},
                }
            )
    return pd.DataFrame(rows, dtype=object)


def tag_counts(release: Release, kind: str) -> pd.DataFrame:
    """Prompts per tag (``n_total``), with the multi-label total for the note under the table."""
    names = taxonomy()[tag_kind(kind)]
    return pd.DataFrame(
        [{"Tag": f"{t} · {names.get(t, t)}", "Prompts": board[0]["n_total"]} for t, board in release.boards[kind].items() if board],
        columns=["Tag", "Prompts"],  # a release whose prompts carry no tag of this kind: no rows, same columns
    )


def model_tag_table(release: Release, kind: str, model_id: str) -> pd.DataFrame:
    """Per-model table: one row per tag with Overall-9, prompts, scored, coverage and the nine components."""
    df = tag_frame(release, kind)
    df = df[df["model_id"] == model_id]
    out = pd.DataFrame(
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
    return out


def top_models(release: Release, k: int = 3) -> list[str]:
    """The first ``k`` model_ids of the overall leaderboard (ranked first)."""
    return [r["model_id"] for r in release.boards["overall"][:k]]


def resolve_models(release: Release, wanted: list) -> list[str]:
    """Model ids from what a reader typed: ids or display names, any case (an id like ``007``
    stays text). Raises ``ValueError`` with one line listing the valid values."""
    by_key: dict[str, str] = {}
    for m in release.model_order:
        by_key.setdefault(m.casefold(), m)
        by_key.setdefault(release.display_name(m).casefold(), m)
    out = []
    for item in wanted:
        key = str(item).strip().casefold()
        if key not in by_key:
            valid = ", ".join(f"{m} ({release.display_name(m)})" for m in release.model_order)
            raise ValueError(f"compare_models: {str(item)!r} is not a model of this release; valid (id or display name, any case): {valid}")
        out.append(by_key[key])
    return list(dict.fromkeys(out))


def resolve_group(release: Release, group) -> str:
    """The group name from what a reader typed: All, a stratum or search type, a domain or
    failure-mode code or its name, any case. Raises ``ValueError`` with one line listing the
    valid values."""
    tax = taxonomy()
    names: dict[str, str] = {}
    for g in release.boards["stratum"]:
        names.setdefault(g.casefold(), g)
    for kind in ("domain", "failure_mode"):
        for tag in release.boards[kind]:
            names.setdefault(tag.casefold(), tag)
            names.setdefault(tax[tag_kind(kind)].get(tag, tag).casefold(), tag)
    key = str(group).strip().casefold()
    if key not in names:
        valid = ", ".join([*release.boards["stratum"], *release.boards["domain"], *release.boards["failure_mode"]])
        raise ValueError(f"compare_group: {str(group)!r} is not a group of this release; valid (code or name, any case): {valid}")
    return names[key]


def group_rows(release: Release, group: str) -> tuple[str, list[dict]]:
    """Rows of a named group: ``All``/a stratum, else a domain tag, else a failure-mode tag.

    Returns ``(label, rows)``; raises ``KeyError`` listing the valid names.
    """
    if group == "All":
        return "all prompts", release.boards["stratum"][group]
    if group in release.boards["stratum"]:
        kind = "stratum" if group in ("NoSearch", "SearchIntensive") else "search type"
        return f"{kind} {group}", release.boards["stratum"][group]
    tax = taxonomy()
    for kind in ("domain", "failure_mode"):
        if group in release.boards[kind]:
            label = tax[tag_kind(kind)].get(group, group)
            return f"{kind.replace('_', ' ')} {group} · {label}", release.boards[kind][group]
    valid = [*release.boards["stratum"], *release.boards["domain"], *release.boards["failure_mode"]]
    raise KeyError(f"group {group!r} is not a stratum, domain or failure mode of this release (valid: {', '.join(valid)})")


# ---- uncertainty (SPEC §8) ------------------------------------------------------------------


def uncertainty_key(release: Release, kind: str, name: str) -> str | None:
    """The ``uncertainty.json`` key of a group as this view shows it (``kind``: ``stratum``
    — All and the strata —, ``domain`` or ``failure_mode``), or None when the file has no such
    group: inside a named slice only the whole slice is bootstrapped (``slice:<name>``)."""
    if release.slice_name != release.output_slice:
        return f"slice:{release.slice_name}" if (kind, name) == ("stratum", "All") else None
    if kind == "stratum":
        return "all:All" if name == "All" else f"stratum:{name}"
    return f"{kind}:{name}"


def group_intervals(release: Release, kind: str, name: str) -> dict[str, dict]:
    """``{model_id: {overall_9, overall_10, rank, n_valid}}`` of a group ({} when the release
    has no uncertainty section or the view has no interval for the group)."""
    u, key = release.uncertainty, uncertainty_key(release, kind, name)
    return {} if u is None or key is None else u["groups"].get(key, {})


def group_pairs(release: Release, kind: str, name: str) -> list[dict]:
    """The pairwise tests of a group (ranked groups only), in published rank order."""
    u, key = release.uncertainty, uncertainty_key(release, kind, name)
    return [] if u is None or key is None else u["pairs"].get(key, [])


def tie_groups(rows: list[dict], pairs: list[dict]) -> dict[str, str]:
    """``{model_id: "T1"}`` for ranked models that cannot be separated from a neighbour in rank
    order (Holm-adjusted p above α): maximal runs of adjacent non-separable pairs, numbered
    from the top. Models separable from both neighbours get no label."""
    sep = {(p["a"], p["b"]): p["separable"] for p in pairs}
    ranked = [r["model_id"] for r in rows if r.get("ranked")]
    out: dict[str, str] = {}
    n = 0
    for a, b in zip(ranked, ranked[1:]):
        if sep.get((a, b)) is False:
            if a not in out:
                n += 1
                out[a] = f"T{n}"
            out[b] = out[a]
    return out


def wide_interval(release: Release) -> float | None:
    """The config's ``uncertainty.low_confidence_width`` (public points): a cell whose interval
    is wider is marked low-confidence; None without an uncertainty section."""
    if not (release.uncertainty or {}).get("groups"):
        return None
    return float(((release.manifest.get("config") or {}).get("uncertainty") or {}).get("low_confidence_width", 20.0))


def confidence_label(release: Release) -> str:
    """"95%" for confidence 0.95 (the decimal written in the config)."""
    c = (release.uncertainty or {}).get("confidence", 0.95)
    return f"{scaled(c, 100):g}%"


def pairs_frame(release: Release, kind: str, name: str) -> pd.DataFrame:
    """One row per pair of ranked models of a group: A, B, Δ Overall-9 (published), its
    interval, p, Holm-adjusted p and whether the two are separable at the release's α."""
    names = {m: meta["display_name"] for m, meta in release.manifest["models"].items()}
    conf = confidence_label(release)
    return pd.DataFrame(
        [
            {
                "A": names.get(p["a"], p["a"]),
                "B": names.get(p["b"], p["b"]),
                "Δ Overall-9": p["diff"],
                f"{conf} interval of Δ": interval_text(p["ci"], release.decimals),
                "p": p["p"],
                "Holm p": p["p_holm"],
                "Separable": "yes" if p["separable"] else "no",
            }
            for p in group_pairs(release, kind, name)
        ],
        columns=["A", "B", "Δ Overall-9", f"{conf} interval of Δ", "p", "Holm p", "Separable"],
        dtype=object,
    )


# ---- changes since the previous release (SPEC §10) -----------------------------------------


def group_label(key: str) -> str:
    """``domain:FAS`` → "domain FAS · Fashion"; ``all:All`` → "All"; strata and slices by name."""
    kind, _, name = key.partition(":")
    if kind == "all":
        return "All"
    if kind in ("domain", "failure_mode"):
        return f"{kind.replace('_', ' ')} {name} · {taxonomy()[tag_kind(kind)].get(name, name)}"
    return name if kind == "stratum" else f"slice {name}"


def rank_moves_frame(release: Release) -> pd.DataFrame:
    """Every group × model whose rank changed: Group, Model, rank before, after, and an arrow."""
    rows = []
    names = {m: meta["display_name"] for m, meta in release.manifest["models"].items()}
    for key, cells in (release.changes or {}).get("groups", {}).items():
        for m, c in cells.items():
            b, a = c["rank_before"], c["rank_after"]
            if b != a:
                arrow = "↑" if b is not None and a is not None and a < b else "↓" if b is not None and a is not None else "•"
                rows.append({"Group": group_label(key), "Model": names.get(m, m), "Rank before": b, "Rank after": a, "Move": arrow,
                             "Overall-9 before": c["overall_9_before"], "Overall-9 after": c["overall_9_after"]})
    return pd.DataFrame(rows, columns=["Group", "Model", "Move", "Rank before", "Rank after", "Overall-9 before", "Overall-9 after"], dtype=object)


def score_changes_frame(release: Release) -> pd.DataFrame:
    """Every group × model whose Overall-9 changed, largest change first: Group, Model,
    before, after, Δ, and for group All the paired bootstrap interval of the change."""
    ch = release.changes or {}
    boot = (ch.get("paired_bootstrap") or {}).get("models", {})
    names = {m: meta["display_name"] for m, meta in release.manifest["models"].items()}
    conf = confidence_label(release)
    rows = []
    for key, cells in ch.get("groups", {}).items():
        for m, c in cells.items():
            if score_changed(c):
                ci = (boot.get(m) or {}).get("ci") if key == "all:All" else None
                rows.append({"Group": group_label(key), "Model": names.get(m, m), "Overall-9 before": c["overall_9_before"],
                             "Overall-9 after": c["overall_9_after"], "Δ": c["delta"],
                             f"{conf} interval of Δ (paired, common prompts)": interval_text(ci, release.decimals) if ci else "–"})
    rows.sort(key=lambda r: (-abs(r["Δ"] or 0), r["Group"], r["Model"]))
    return pd.DataFrame(rows, columns=["Group", "Model", "Overall-9 before", "Overall-9 after", "Δ", f"{conf} interval of Δ (paired, common prompts)"], dtype=object)


def status_changes_frame(release: Release) -> pd.DataFrame:
    """Every prompt × model whose status or raw Overall-9 changed."""
    names = {m: meta["display_name"] for m, meta in release.manifest["models"].items()}
    return pd.DataFrame(
        [{"Model": names.get(p["model_id"], p["model_id"]), "sample_id": p["sample_id"], "Status before": p["status_before"],
          "Status after": p["status_after"], "Raw Overall-9 before": p["overall_9_before"], "Raw Overall-9 after": p["overall_9_after"]}
         for p in (release.changes or {}).get("pairs", [])],
        columns=["Model", "sample_id", "Status before", "Status after", "Raw Overall-9 before", "Raw Overall-9 after"], dtype=object,
    )


# ---- the prompt explorer ---------------------------------------------------------------------

#: Short status words of the explorer's cells (a scored pair shows its Overall-9).
STATUS_SHORT = {"invalid_evaluation": "invalid", "missing_evaluation": "no eval", "missing_generation": "no image"}


def prompt_rows(release: Release) -> list[dict]:
    """One dict per prompt of this view (sample_id order): ``sample_id``, ``stratum`` (its
    search type), ``domains``, ``failure_modes``, ``slices`` (the published slices holding it),
    ``difficulty`` (mean public Overall-9 across the models with a value), ``spread`` (highest
    minus lowest), and per model ``scores[model_id]`` (public Overall-9, None = no value) and
    ``statuses[model_id]``. Public values are half-up to the release's decimals (SPEC §5)."""
    from fractions import Fraction

    from searchgen_nb.numeric import to_public

    tests = {name: release.in_slice(name) for name in release.slices}
    out = []
    dec = release.decimals
    for r in release.records:
        scores, statuses, raws = {}, {}, []
        for m in release.model_order:
            e = r["models"][m]
            statuses[m] = e["status"]
            raw = e["overall_9_raw"] if e["status"] == "scored" else None
            scores[m] = None if raw is None else to_public(Fraction(raw), dec)
            if raw is not None:
                raws.append(Fraction(raw))
        mean = to_public(sum(raws, Fraction(0)) / len(raws), dec) if raws else None
        spread = None if not raws else to_public(max(raws) - min(raws), dec)
        out.append({
            "sample_id": r["sample_id"], "stratum": r["search_type"], "domains": list(r["domains"]),
            "failure_modes": list(r["failure_modes"]), "slices": [n for n, test in tests.items() if test(r)],
            "difficulty": mean, "spread": spread, "scores": scores, "statuses": statuses,
        })
    return out


def compare_frame(release: Release, group: str, models: list[str]) -> pd.DataFrame:
    """Long frame for the comparison chart: model × component with its 0–100 value (None = N/A)."""
    _, rows = group_rows(release, group)
    by = {r["model_id"]: r for r in rows}
    unknown = [m for m in models if m not in by]
    if unknown:
        raise KeyError(f"unknown model_id(s) {', '.join(unknown)} (valid: {', '.join(release.model_order)})")
    out = []
    for m in models:
        r = by[m]
        for c in OVERALL_9_COMPONENTS:
            out.append(
                {
                    "model_id": m,
                    "display_name": r["display_name"],
                    "component": c,
                    "component_label": COMPONENT_LABELS[c],
                    "value": r["components"][c],
                    "count": r["component_counts"][c],
                }
            )
    return pd.DataFrame(out, dtype=object)


def status_frame(release: Release) -> pd.DataFrame:
    """Per model (config order): display_name, model_id, the four status counts, prompts,
    coverage text and missing policy (from the manifest)."""
    m = release.manifest
    n = m["dataset"]["n_prompts"]
    rows = []
    for model_id in release.model_order:
        counts = m["extraction"]["status_counts"][model_id]
        rows.append(
            {
                "display_name": release.display_name(model_id),
                "model_id": model_id,
                **{s: counts[s] for s in STATUSES},  # SPEC order, not the manifest's sorted keys
                "prompts": n,
                "coverage": f"{counts['scored']}/{n} ({percent(counts['scored'], n)})" if n else NA,
                "missing_policy": m["models"][model_id]["missing_policy"],
            }
        )
    return pd.DataFrame(rows)


def invalid_frame(release: Release) -> pd.DataFrame:
    """Every ``invalid_evaluation`` pair: model, sample_id, file (below results_root), reason."""
    rows = [
        {"Model": release.display_name(m), "model_id": m, "sample_id": r["sample_id"], "Reason": e["error"], "File": e["result_file"]}
        for r in release.records
        for m, e in sorted(r["models"].items())
        if e["status"] == INVALID
    ]
    rows.sort(key=lambda x: (x["model_id"], x["sample_id"]))
    return pd.DataFrame(rows, columns=["Model", "model_id", "sample_id", "Reason", "File"])


def warnings_frame(release: Release) -> pd.DataFrame:
    """Every extraction warning recorded in the manifest."""
    cols = ["check", "model_id", "sample_id", "line", "file", "message"]
    return pd.DataFrame([{c: w.get(c) for c in cols} for w in release.manifest["extraction"]["warnings"]], columns=cols, dtype=object)


def validation_frame(report: dict) -> pd.DataFrame:
    """One row per release check: number, name, result, problems, first problem / why skipped."""
    from searchgen_nb.validate import CHECK_DESCRIPTIONS

    rows = []
    for i, c in enumerate(report["checks"], start=1):
        result = "PASS" if c["passed"] else "FAIL"
        if c["passed"] and c.get("skipped"):
            result = "PASS (not applicable)"
        first = c["failures"][0]["message"] if c["failures"] else (c.get("skipped") or "–")
        rows.append(
            {"#": i, "Check": c["name"], "What it checks": CHECK_DESCRIPTIONS.get(c["name"], ""), "Result": result, "Problems": c["n_failures"], "First problem / note": first}
        )
    return pd.DataFrame(rows)


#: The facts the Extraction page shows (by name, never by position).
EXTRACTION_FACTS = ("Dataset", "Dataset sha256 (canonical)", "Result files read", "Results sha256", "Result path", "Extractor")


def manifest_summary(release: Release, fields: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Key facts of the manifest as a two-column table (hashes, versions, config); ``fields``:
    only those facts, in that order (KeyError naming an unknown one)."""
    m = release.manifest
    facts = [
        ("Benchmark", m["benchmark"]),
        ("Data origin", m["data_origin"]),
        ("Schema version", m["schema_version"]),
        ("Generated at (SOURCE_DATE_EPOCH when set)", m["generated_at"]),
        ("Dataset", f"{m['dataset']['filename']} ({m['dataset']['n_prompts']} prompts)"),
        ("Dataset sha256 (canonical)", m["dataset"]["sha256"]),
        ("Result files read", m["extraction"]["n_result_files_read"]),
        ("Results sha256", m["inputs"]["results_sha256"]),
        ("Result path", m["inputs"]["result_path"]),
        ("Extractor", m["extraction"]["extractor"]),
        ("Source commit", m["source_commit"]),
        ("searchgen-nb", f"{m['software']['searchgen_nb']} (commit {m['software']['pipeline_commit']})"),
        ("Python", m["software"]["python"]),
        ("Missing policy default", m["scoring"]["missing_policy_default"]),
        ("Policy exceptions", ", ".join(m["scoring"]["missing_policy_exceptions"]) or "none"),
        ("Min ranking coverage", m["scoring"]["min_ranking_coverage"]),
        ("Rounding", f"{m['scoring']['public_rounding_decimals']} decimal(s), {m['scoring']['rounding']}"),
    ]
    facts += [(f"sha256 {name}", sha) for name, sha in sorted(m["artifact_sha256"].items())]
    if fields is not None:
        by_name = dict(facts)
        unknown = [f for f in fields if f not in by_name]
        if unknown:
            raise KeyError(f"manifest_summary: unknown fact(s) {unknown} (known: {', '.join(by_name)})")
        facts = [(f, by_name[f]) for f in fields]
    return pd.DataFrame(facts, columns=["Field", "Value"], dtype=object)


def escape(text: object) -> str:
    """HTML-escape text from the data for prose built in a notebook."""
    return html.escape(str(text), quote=True)


def group_sizes(release: Release) -> pd.DataFrame:
    """Every aggregate group: kind, group (with tag name), prompts (n_total), models ranked."""
    tax = taxonomy()
    rows = []
    for kind in ("stratum", "domain", "failure_mode"):
        for g, board in release.boards[kind].items():
            name = g if kind == "stratum" else f"{g} · {tax[tag_kind(kind)].get(g, g)}"
            rows.append(
                {
                    "Kind": kind.replace("_", " "),
                    "Group": name,
                    "Prompts": board[0]["n_total"] if board else 0,
                    "Ranked models": sum(r["ranked"] for r in board),
                    "Models": len(board),
                }
            )
    return pd.DataFrame(rows)
