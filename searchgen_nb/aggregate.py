"""Prompt-macro aggregation into the four leaderboard artifacts (SPEC §5–6).

Input: the records of ``prompt_scores.jsonl`` (raw 0–3, null = not applicable) and the
models' metadata. Output rows are on the public 0–100 scale, rounded half-up. All means
are exact over the stored doubles (``searchgen_nb.exact``), so no figure depends on the
order of prompts or models.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from searchgen_nb.constants import COMPONENTS, EXCLUDE, PARTITION_KEYS, SCORED, STATUSES, ZERO_FILL
from searchgen_nb.exact import exact_sum, round_coverage, to_public


@dataclass(frozen=True)
class ModelMeta:
    """What a leaderboard row shows about a model besides its numbers."""

    model_id: str
    display_name: str
    type: str
    missing_policy: str
    pending: bool = False  # results not in yet on purpose: listed, never ranked


def groups_of(records: list[dict]) -> dict[str, dict[str, list[dict]]]:
    """Prompt groups (SPEC §5): ``{"stratum": {All, NoSearch, ...}, "domain": {tag: ...}, "failure_mode": {...}}``.

    Strata appear even when empty (n_total 0); tags are those present in the metadata,
    sorted. A prompt is in every tag it carries (multi-label).
    """
    strata: dict[str, list[dict]] = {"All": list(records), **{k: [] for k in PARTITION_KEYS}}
    domains: dict[str, list[dict]] = {}
    modes: dict[str, list[dict]] = {}
    for r in records:
        strata[r["stratum"]].append(r)
        if r["search_type"] != r["stratum"]:
            strata[r["search_type"]].append(r)
        for t in r["domains"]:
            domains.setdefault(t, []).append(r)
        for t in r["failure_modes"]:
            modes.setdefault(t, []).append(r)
    return {
        "stratum": strata,
        "domain": {t: domains[t] for t in sorted(domains)},
        "failure_mode": {t: modes[t] for t in sorted(modes)},
    }


def _public_mean(total: Decimal, n: int, decimals: int) -> float | None:
    return None if n == 0 else to_public(Fraction(total) / n, decimals)


def group_row(model: ModelMeta, group: list[dict], decimals: int) -> dict:
    """One leaderboard row: ``model`` over the prompts of ``group`` (SPEC §5).

    Policy ``exclude``: included = scored prompts. ``zero_fill``: included = every prompt,
    a non-scored one counting 0 for both overalls and every component. A scored prompt's
    null value is left out of that mean; ``component_counts[c]`` = values in the mean.
    """
    m = model.model_id
    entries = [r["models"][m] for r in group]
    scored = [e for e in entries if e["status"] == SCORED]
    n_total, n_scored = len(entries), len(scored)
    n_zero = n_total - n_scored if model.missing_policy == ZERO_FILL else 0

    def values(key):
        return [v for e in scored if (v := key(e)) is not None]

    def summarize(key):
        vals = values(key)
        n = len(vals) + n_zero
        return _public_mean(exact_sum(vals), n, decimals), n

    o9, _ = summarize(lambda e: e["overall_9_raw"])
    o10, _ = summarize(lambda e: e["overall_10_raw"])
    components, counts = {}, {}
    for c in COMPONENTS:
        components[c], counts[c] = summarize(lambda e, c=c: e["components_raw_0to3"][c])
    status_counts = dict.fromkeys(STATUSES, 0)
    for e in entries:
        status_counts[e["status"]] += 1
    return {
        "model_id": m,
        "display_name": model.display_name,
        "type": model.type,
        "missing_policy": model.missing_policy,
        "n_total": n_total,
        "n_scored": n_scored,
        "n_included": n_scored if model.missing_policy == EXCLUDE else n_total,
        "coverage": round_coverage(n_scored, n_total),
        "overall_9": o9,
        "overall_10": o10,
        "components": components,
        "component_counts": counts,
        "status_counts": status_counts,
        "rank": None,
        "ranked": False,
    }


def _covered(row: dict, min_ranking_coverage: Decimal) -> bool:
    """Exact ``n_scored / n_total >= min_ranking_coverage`` (not the 4-decimal coverage).

    ``min_ranking_coverage`` is the decimal written in the config (``Decimal('0.9')`` = 9/10),
    so 9 of 10 prompts meets 0.9 (SPEC §5–6; a binary 0.9 is slightly above 9/10)."""
    t = min_ranking_coverage
    threshold = Fraction(repr(t)) if isinstance(t, float) else Fraction(t)  # a float as the decimal it prints
    return row["n_total"] > 0 and Fraction(row["n_scored"], row["n_total"]) >= threshold


def rank_rows(rows: list[dict], model_order: list[str], min_ranking_coverage: Decimal, pending: frozenset[str] = frozenset()) -> list[dict]:
    """Assign ``rank``/``ranked`` and sort (SPEC §6).

    Ranked rows (coverage ≥ ``min_ranking_coverage``, an Overall-9, and the model not
    ``pending`` in the config) are ordered by the
    published Overall-9 descending, ties broken by model_id, and numbered from 1. Unranked
    rows follow (rank null), by Overall-9 descending (N/A last), ties in config order.
    """
    pos = {m: i for i, m in enumerate(model_order)}
    ranked = sorted(
        (r for r in rows if r["overall_9"] is not None and r["model_id"] not in pending and _covered(r, min_ranking_coverage)),
        key=lambda r: (-r["overall_9"], r["model_id"]),
    )
    ranked_ids = {r["model_id"] for r in ranked}
    unranked = sorted(
        (r for r in rows if r["model_id"] not in ranked_ids),
        key=lambda r: (r["overall_9"] is None, -(r["overall_9"] or 0.0), pos[r["model_id"]]),
    )
    for i, r in enumerate(ranked, start=1):
        r["rank"], r["ranked"] = i, True
    for r in unranked:
        r["rank"], r["ranked"] = None, False
    return ranked + unranked


def leaderboards(
    records: list[dict], models: list[ModelMeta], min_ranking_coverage: Decimal, decimals: int
) -> dict[str, object]:
    """The four leaderboard artifacts, keyed by file name (SPEC §6).

    ``models`` in config order (display order for ties). Returns
    ``{"leaderboard_overall.json": [rows], "leaderboard_by_stratum.json": {group: [rows]},
    "leaderboard_by_domain.json": {tag: [rows]}, "leaderboard_by_failure_mode.json": {tag: [rows]}}``.
    """
    order = [m.model_id for m in models]
    pending = frozenset(m.model_id for m in models if m.pending)
    groups = groups_of(records)

    def board(prompts: list[dict]) -> list[dict]:
        return rank_rows([group_row(m, prompts, decimals) for m in models], order, min_ranking_coverage, pending)

    by_stratum = {g: board(p) for g, p in groups["stratum"].items()}
    return {
        "leaderboard_overall.json": by_stratum["All"],
        "leaderboard_by_stratum.json": by_stratum,
        "leaderboard_by_domain.json": {t: board(p) for t, p in groups["domain"].items()},
        "leaderboard_by_failure_mode.json": {t: board(p) for t, p in groups["failure_mode"].items()},
    }
