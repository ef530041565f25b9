"""Page sections of the book: each function returns the display objects one notebook cell shows.

Both tag pages (domains, failure modes) and the audit page are composed here so the
notebooks stay a parameters cell, a few calls and prose.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal

from searchgen_nb.book import charts, tables, views
from searchgen_nb.book.display import HTMLFragment
from searchgen_nb.constants import COMPONENT_LABELS, OVERALL_9_COMPONENTS
from searchgen_nb.numeric import decimal_text
from searchgen_nb.book.views import Release

#: The Methods page as seen from an executed notebook (book/notebooks/NN.html → book/methods.html).
METHODS = "../methods.html"
#: The book's root as seen from an executed notebook (its downloads are in <root>/downloads/).
ROOT = "../../"


def downloads(*names: str) -> HTMLFragment:
    """A "Download: …" line linking the given artifacts (and their CSVs) in the built book."""
    from searchgen_nb.book.downloads import CSV_FILES, links_html

    files = [f for n in names for f in ([CSV_FILES[n]] if n in CSV_FILES else []) + [n]]
    return fragment(links_html(files, ROOT), "downloads")

_COMPONENT_TITLES = {COMPONENT_LABELS[c]: tables.COLUMN_DEFINITIONS[c] for c in OVERALL_9_COMPONENTS}
_TAG_TITLES = {
    "Overall-9": tables.COLUMN_DEFINITIONS["overall_9"],
    "Prompts": "Prompts carrying this tag (n_total). Tags overlap: a prompt counts in every tag it has.",
    "Scored": "Prompts of this tag the model has a scored evaluation for (n_scored).",
    "Coverage %": "Scored prompts of this tag / prompts of this tag, in percent.",
    **_COMPONENT_TITLES,
}
_TAG_LINKS = {
    "Overall-9": f"{METHODS}#overall-9",
    "Coverage %": f"{METHODS}#coverage",
    "Prompts": f"{METHODS}#multi-label",
    "Scored": f"{METHODS}#status",
    **{COMPONENT_LABELS[c]: f"{METHODS}#component-{c.replace('_', '-')}" for c in OVERALL_9_COMPONENTS},
}


def fragment(html_text: str, label: str = "html") -> HTMLFragment:
    """Wrap ready HTML (already escaped) as a display object."""
    return HTMLFragment(html_text, label)


def banner(release: Release) -> HTMLFragment:
    """The synthetic-data banner (an empty fragment for a real release)."""
    return fragment(views.banner_html(release), "banner")


def multilabel_note(release: Release, kind: str) -> HTMLFragment:
    """The multi-label note with this release's numbers (memberships never sum to the prompt count)."""
    counts = views.tag_counts(release, kind)
    n = release.manifest["dataset"]["n_prompts"]
    word = "domain" if kind == "domain" else "failure-mode"
    untagged = sum(1 for r in release.records if not r["domains" if kind == "domain" else "failure_modes"])
    return fragment(
        f'<p class="sg-note"><strong>Multi-label.</strong> The {len(counts)} {word} tags carry '
        f"{int(counts['Prompts'].sum())} prompt memberships for {n} prompts ({untagged} prompts have no {word} tag): "
        "a prompt counts once in every tag it has, so the per-tag prompt counts overlap and never sum to "
        f"{n}. Each row shows its own prompt count and coverage.</p>",
        "note",
    )


def with_legend(chart: HTMLFragment, text: str) -> HTMLFragment:
    """A chart followed by its legend note (already-escaped HTML with links to Methods)."""
    return fragment(f'{chart.html}\n<p class="sg-chart-legend">{text}</p>', chart.label)


def _heatmap_legend(intervals: bool) -> str:
    """The heatmap's legend note; ``intervals``: the tooltips carry bootstrap intervals."""
    tip = (f'Tooltip: value, its <a href="{METHODS}#uncertainty">bootstrap interval</a>, prompts in the tag and the model\'s '
           if intervals else "Tooltip: value, prompts in the tag and the model's ")
    return (
        f'Colour: <a href="{METHODS}#overall-9">Overall-9</a> on the 0–100 scale, models in leaderboard order. '
        f'Grey “N/A”: no included prompt of that tag has a value (<a href="{METHODS}#null">not applicable, not 0</a>). '
        f'{tip}<a href="{METHODS}#coverage">coverage</a> there. '
        f'Tags overlap (<a href="{METHODS}#multi-label">multi-label</a>).'
    )


def _no_tags(release: Release, kind: str) -> HTMLFragment | None:
    """A plain sentence instead of an empty chart or table when no prompt carries a tag of ``kind``."""
    if release.boards[kind]:
        return None
    word = "domain" if kind == "domain" else "failure-mode"
    return fragment(f'<p class="sg-note">No prompt of this release carries a {word} tag.</p>', "note")


def tag_heatmap(release: Release, kind: str) -> HTMLFragment:
    """Two model × tag heatmaps of Overall-9 — absolute (best of each column outlined) and
    relative to each model's overall score (its strengths and weak spots) — columns ordered by
    prompt count; tooltips with value, interval, prompts and coverage; each cell links to the
    prompt explorer filtered to the cell's prompts."""
    if (empty := _no_tags(release, kind)) is not None:
        return empty
    df = views.tag_frame(release, kind)
    order = [r["model_id"] for r in release.boards["overall"]]
    sizes = {t: rows[0]["n_total"] for t, rows in release.boards[kind].items() if rows}
    tag_order = sorted(sizes, key=lambda t: (-sizes[t], t))
    link = EXPLORER + "?" + kind + "={tag}&model={model_id}"
    if release.slice_name != release.output_slice:
        link += "&slice=" + release.slice_name
    # inside a named slice only the whole slice is bootstrapped (SPEC §9): its tag cells have no interval
    intervals = views.uncertainty_key(release, kind, tag_order[0]) is not None and bool((release.uncertainty or {}).get("groups"))
    width = views.wide_interval(release) if intervals else None
    common = dict(
        tag_names=views.taxonomy()[views.tag_kind(kind)], model_order=order, tag_order=tag_order,
        cell_size=46 if len(tag_order) <= 12 else 40 if len(tag_order) <= 18 else 36,  # 22 domains fit a 960 px page
        decimals=release.decimals,
        wide_interval=width, confidence=views.confidence_label(release), href=link,
    )
    word = kind.replace("_", " ")
    base = "all prompts" if release.slice_name == release.output_slice else f"all prompts of slice {release.slice_name}"
    chart = charts.heatmap(df, f"heatmap-{kind}{release.id_suffix}", title=f"Overall-9 by {word} (0–100; grey = N/A)",
                           subtitle="columns by prompt count, largest first; black outline = best of the column; click a cell for its prompts", **common)
    overall = {r["model_id"]: r["overall_9"] for r in release.boards["overall"]}
    relative = charts.heatmap(df, f"heatmap-{kind}-relative{release.id_suffix}", title=f"Overall-9 by {word}, relative to each model's overall score",
                              subtitle=f"tag score minus the model's Overall-9 on {base}: blue = a strength, red = a weak spot", relative_to=overall, **common)
    legend = _heatmap_legend(intervals)
    board_file = f"leaderboard_by_{kind}.json" if release.slice_name == release.output_slice else "leaderboard_by_slice.json"
    if width is not None:
        legend += (f' Dashed outline: low confidence, the {views.confidence_label(release)} interval is wider than '
                   f'{decimal_text(width)} points (a tag with few prompts).')
    elif release.uncertainty and release.slice_name != release.output_slice:
        legend += " Intervals: computed for every prompt of the release only (see the figures above the slice sections)."
    rel_legend = (f"The same cells against each model's own Overall-9 on {base} (exact differences of published values): "
                  "colour shows where a model does better or worse than its average, whatever its rank.")
    return fragment(with_legend(chart, legend).html + "\n" + with_legend(relative, rel_legend).html + "\n" + downloads(board_file).html, f"{kind} heatmap")


def tag_tables(release: Release, kind: str) -> HTMLFragment:
    """One collapsible table per model (overall order): each tag's Overall-9, prompts, scored,
    coverage and its nine components."""
    if (empty := _no_tags(release, kind)) is not None:
        return empty
    parts = []
    for r in release.boards["overall"]:
        m = r["model_id"]
        frame = views.model_tag_table(release, kind, m)
        slice_part = _slice_filter(release)
        table = tables.data_table(
            frame,
            f"tags-{kind.replace('_', '-')}-{_safe_id(m)}{release.id_suffix}",
            row_links={"Prompts": [explorer_link(**{kind: code}, **slice_part, model=m) for code in frame["Tag"].str.split(" · ").str[0]]},
            decimals={"Coverage %": 2},
            titles=_TAG_TITLES,
            links=_TAG_LINKS,
            order=[("Overall-9", "desc")],
        )
        rank = f"rank {r['rank']}" if r["ranked"] else "unranked"
        o9 = "N/A" if r["overall_9"] is None else decimal_text(r["overall_9"], release.decimals)
        parts.append(
            f"<details class=\"sg-model-tags\"><summary><strong>{views.escape(r['display_name'])}</strong> "
            f"<code>{views.escape(m)}</code> · Overall-9 {o9} · {rank}</summary>{table.html}</details>"
        )
    return fragment("\n".join(parts), f"{kind} tables")


def _safe_id(model_id: str) -> str:
    import hashlib
    import re

    clean = re.sub(r"[^A-Za-z0-9_-]", "-", model_id)
    return clean if clean == model_id else f"{clean}-{hashlib.sha1(model_id.encode()).hexdigest()[:6]}"


def compare(release: Release, group: str, models: list[str] | None) -> list[HTMLFragment]:
    """Comparison of ``models`` (default: top three overall; ids or display names, any case)
    on the nine components in ``group`` (a code or name, any case). Raises ``ValueError`` with
    one line listing the valid values for anything else."""
    chosen = views.resolve_models(release, list(models)) if models else views.top_models(release, 3)
    try:
        group = views.resolve_group(release, group)
    except ValueError:
        if release.slice_name == release.output_slice:
            raise
        # a slice section: a group of the release (else this raises, naming the valid ones)
        # that no prompt of the slice belongs to
        named = views.resolve_group(release.for_slice(release.output_slice), group)
        return [fragment(f'<p class="sg-slice-note">No prompt of slice <code>{views.escape(release.slice_name)}</code> '
                         f"is in group <code>{views.escape(named)}</code>.</p>", "group")]
    label, rows = views.group_rows(release, group)
    chosen_rows = [r for r in rows if r["model_id"] in chosen]
    missing = [m for m in chosen if m not in {r["model_id"] for r in rows}]
    if missing:
        raise KeyError(f"unknown model_id(s) {', '.join(missing)} (valid: {', '.join(release.model_order)})")
    chart = with_legend(
        charts.component_bars(chosen_rows, f"compare-{_safe_id(group)}{release.id_suffix}", models=chosen, title=f"Nine components, {label}", decimals=release.decimals),
        f'Bars: each <a href="{METHODS}#components">component</a> on the 0–100 scale, prompt-macro over the '
        f'group under each model\'s <a href="{METHODS}#missing-policy">missing policy</a>. '
        f'“N/A” instead of a bar: the component applies to none of the included prompts (<a href="{METHODS}#null">not 0</a>).',
    )
    table = tables.leaderboard_table(
        sorted(chosen_rows, key=lambda r: chosen.index(r["model_id"])), f"compare-table-{_safe_id(group)}{release.id_suffix}", min_coverage=release.min_coverage, methods_href=METHODS,
        pending=release.pending,
    )
    head = fragment(f"<p>Group: <strong>{views.escape(label)}</strong> · {rows[0]['n_total'] if rows else 0} prompts.</p>", "group")
    return [head, chart, table]


_STATUS_TITLES = {
    "scored": "Result parsed, success true, every value a finite number in 0–3.",
    "invalid_evaluation": "Result file present but unusable (reason listed below).",
    "missing_evaluation": "No result file, but a generated image exists.",
    "missing_generation": "Neither a result file nor a generated image.",
    "coverage": tables.COLUMN_DEFINITIONS["coverage"],
    "missing_policy": tables.COLUMN_DEFINITIONS["missing_policy"],
}
_STATUS_LABELS = {
    "display_name": "Model",
    "scored": "Scored",
    "invalid_evaluation": "Invalid evaluation",
    "missing_evaluation": "Missing evaluation",
    "missing_generation": "Missing generation",
    "prompts": "Prompts",
    "coverage": "Coverage",
    "missing_policy": "Missing policy",
}


def status_table(release: Release, table_id: str) -> HTMLFragment:
    """Status counts per model with coverage and policy; headers explain and link to Methods."""
    return tables.data_table(
        views.status_frame(release),
        table_id,
        titles=_STATUS_TITLES,
        labels=_STATUS_LABELS,
        links={**{s: f"{METHODS}#status" for s in _STATUS_TITLES}, "coverage": f"{METHODS}#coverage", "missing_policy": f"{METHODS}#missing-policy"},
    )


def audit_status(release: Release) -> list[HTMLFragment]:
    """Status counts per model as a chart (with the ranking threshold) and a table."""
    chart = with_legend(
        charts.coverage_bars(views.status_frame(release), "coverage-status", min_coverage=release.min_coverage, title="Status of every prompt × model pair"),
        f'Segments: the four <a href="{METHODS}#status">statuses</a>; label: <a href="{METHODS}#coverage">coverage</a>; '
        f'dashed line: the coverage needed to be <a href="{METHODS}#ranking">ranked</a>.',
    )
    return [chart, status_table(release, "status-counts"), downloads("prompt_scores.jsonl")]


def audit_invalid(release: Release) -> HTMLFragment:
    """Every invalid evaluation with model, sample_id, file and reason."""
    df = views.invalid_frame(release)
    if df.empty:
        return fragment("<p>No invalid evaluation in this release.</p>")
    return tables.data_table(df, "invalid-evaluations", page_length=25)


def audit_warnings(release: Release) -> HTMLFragment:
    """Every extraction warning (duplicate tags, ignored score keys, …)."""
    df = views.warnings_frame(release)
    if df.empty:
        return fragment("<p>No warning was raised during extraction.</p>")
    return tables.data_table(df, "extraction-warnings", page_length=25)


def audit_validation(report: dict) -> list[HTMLFragment]:
    """The validation report: verdict line plus one row per check."""
    verdict = "every release check passed" if report["passed"] else "RELEASE CHECKS FAILED"
    head = fragment(f'<p class="sg-verdict"><strong>Validation: {verdict}.</strong></p>', "verdict")
    return [head, tables.data_table(views.validation_frame(report), "validation-report")]


def audit_manifest(release: Release) -> list[HTMLFragment]:
    """Manifest summary table and the full manifest (collapsed, escaped JSON)."""
    table = tables.data_table(views.manifest_summary(release), "manifest-summary")
    full = json.dumps(release.manifest, indent=2, sort_keys=True, ensure_ascii=False)
    raw = fragment(f"<details><summary>Full manifest.json</summary><pre>{views.escape(full)}</pre></details>", "manifest")
    return [table, raw, downloads("manifest.json", "validation_report.json")]


def slice_note(release: Release) -> HTMLFragment:
    """Which slice the page shows, and what the other slices are (read them below)."""
    names = release.slices
    if len(names) == 1:
        return fragment(f'<p class="sg-slice-note">Every figure on this page covers the slice <code>{views.escape(names[0])}</code>: every prompt of the release.</p>')
    others = ", ".join(f"<code>{views.escape(n)}</code>" for n in names[1:])
    return fragment(
        f'<p class="sg-slice-note">Figures above the slice sections cover <code>{views.escape(release.output_slice)}</code>, every prompt. '
        f'The release also publishes the <a href="{METHODS}#slices">evaluation slices</a> {others}; each has its own section at the end of the page, '
        "computed inside the slice with its own coverage and ranks.</p>"
    )


def slice_sections(release: Release, render) -> HTMLFragment:
    """One collapsible section per published slice other than the full set (SPEC §9), each
    ``render(view)`` (an :class:`HTMLFragment` or a list of them) of the release seen through
    that slice (``Release.for_slice``)."""
    parts = []
    for name in release.slices[1:]:
        view = release.for_slice(name)
        n = len(view.records)
        body = render(view)
        html_text = "\n".join(f.html for f in (body if isinstance(body, list) else [body]))
        parts.append(
            f'<details class="sg-slice" id="slice-{views.escape(name)}"><summary>Slice <code>{views.escape(name)}</code> · {n} prompts</summary>\n{html_text}\n</details>'
        )
    return fragment("\n".join(parts) or '<p class="sg-slice-note">This release publishes no slice besides the full set.</p>', "slices")


def leaderboard_view(release: Release, group: str, forest: bool = True) -> HTMLFragment:
    """The sortable leaderboard of one stratum group, captioned with its prompt count (from the
    data), with each model's bootstrap interval, rank range and tie group when the release
    has them (SPEC §8), followed by the group's forest plot (``forest``)."""
    for g, n, rows in views.stratum_views(release):
        if g == group:
            intervals = views.group_intervals(release, "stratum", group)
            ties = views.tie_groups(rows, views.group_pairs(release, "stratum", group))
            conf = views.confidence_label(release)
            table = tables.leaderboard_table(
                rows,
                f"leaderboard-{group.lower()}{release.id_suffix}",
                min_coverage=release.min_coverage,
                methods_href=METHODS,
                pending=release.pending,
                caption=f"{group} · {n} prompts · {sum(r['ranked'] for r in rows)} of {len(rows)} models ranked · slice {release.slice_name}",
                intervals=intervals,
                ties=ties,
                confidence=conf,
                prompts_href=explorer_link(True, **({} if group == "All" else {"stratum": group}), **_slice_filter(release)),
            )
            board_file = "leaderboard_by_stratum.json" if release.slice_name == release.output_slice else "leaderboard_by_slice.json"
            table = fragment(table.html + "\n" + downloads(board_file).html, f"leaderboard {group}")
            if not forest or not any((c or {}).get("overall_9") for c in intervals.values()):
                return table
            plot = with_legend(
                charts.forest(rows, intervals, f"forest-{group.lower()}{release.id_suffix}", title=f"Overall-9 with {conf} intervals, {group} · slice {release.slice_name}",
                              ties=ties, confidence=conf, decimals=release.decimals),
                f'Line: the <a href="{METHODS}#uncertainty">{conf} bootstrap interval</a> — the range of Overall-9 over resampled prompt sets; '
                "it says how much the score depends on which prompts were drawn, not how noisy the judge is. "
                "Overlapping lines do not by themselves mean a tie: the tie groups (≈ T1, …) come from the paired tests on the Compare page.",
            )
            return fragment(table.html + "\n" + plot.html, f"leaderboard {group}")
    raise KeyError(f"no stratum group {group!r}")


def pairwise(release: Release, group: str) -> list[HTMLFragment]:
    """Every pair of ranked models of ``group`` (All or a stratum; in a slice view, All = the
    whole slice): a matrix of Δ Overall-9 marking pairs that cannot be separated, and a
    sortable table with Δ, its interval, p and Holm-adjusted p (SPEC §8)."""
    if release.uncertainty is None or not release.uncertainty.get("groups"):
        return [fragment('<p class="sg-slice-note">This release has no uncertainty section (<code>n_bootstrap: 0</code>).</p>')]
    group = views.resolve_group(release, group)
    pairs = views.group_pairs(release, "stratum", group)
    lead: list[HTMLFragment] = []
    if not pairs and group != "All":
        where = "All and the strata" if release.slice_name == release.output_slice else "the whole slice (All)"
        lead = [fragment(f'<p class="sg-slice-note">Pairwise tests are computed for the ranked models of {where}; '
                         f"group <code>{views.escape(group)}</code> has none, so this section shows All.</p>")]
        group, pairs = "All", views.group_pairs(release, "stratum", "All")
    if not pairs:
        return [*lead, fragment('<p class="sg-slice-note">Fewer than two ranked models: no pair to test.</p>')]
    u = release.uncertainty
    conf = views.confidence_label(release)
    names = {m: meta["display_name"] for m, meta in release.manifest["models"].items()}
    chart = charts.pairwise_heatmap(pairs, names, f"pairs-{_safe_id(group)}{release.id_suffix}",
                                    title=f"Δ Overall-9 between ranked models, {group} · slice {release.slice_name}",
                                    confidence=conf, decimals=release.decimals)
    k = len(pairs)
    alpha = 1 - Decimal(repr(float(u["confidence"])))  # as written: 1 − 0.95 is 0.05, not 0.050000000000000044
    note = (f'<p>{k} pairs; p-values from {u["n_bootstrap"]:,} bootstrap replicates (seed {u["seed"]}), '
            f'<a href="{METHODS}#uncertainty">Holm-adjusted</a> across the {k} pairs of the group; separable = adjusted p ≤ {decimal_text(alpha)}. '
            "Not separable does not mean equal: the prompts do not tell the two apart at this level.</p>")
    floor = 2 * k / alpha - 1
    if u["n_bootstrap"] < floor:
        note += (f'<p class="sg-warning">With {u["n_bootstrap"]:,} replicates the smallest possible p is 2/(B + 1) = '
                 f'{decimal_text(2 / (u["n_bootstrap"] + 1))}: Holm cannot separate every pair of {k} unless B ≥ 2K/α − 1 ≈ {math.ceil(floor):,}.</p>')
    table = tables.data_table(views.pairs_frame(release, "stratum", group), f"pairs-table-{_safe_id(group)}{release.id_suffix}",
                              decimals={"p": 4, "Holm p": 4, "Δ Overall-9": release.decimals}, page_length=20)
    return [*lead, fragment(note, "pairs note"), chart, table, downloads("uncertainty.json")]


def changes(release: Release) -> list[HTMLFragment]:
    """The "What changed" page (SPEC §10): the headline facts (the Markdown of
    ``searchgen-nb diff``), then rank movements, score changes with the paired interval of
    each model's change, and every prompt × model whose status or score changed."""
    from markdown_it import MarkdownIt

    from searchgen_nb.changes import markdown

    ch = release.changes
    if ch is None or ch.get("first_release"):
        return [fragment('<p class="sg-first-release">This is the first release: there is no previous release to compare with. '
                         "A release config names one with <code>previous_release</code>.</p>", "first release")]
    names = {m: meta["display_name"] for m, meta in release.manifest["models"].items()}
    text = markdown(ch, names).split("\n### ")[0].replace("## What changed\n", "", 1)
    prev = ch.get("previous") or {}
    head = fragment(
        f'<p class="sg-previous">Compared with the release generated {views.escape(prev.get("generated_at"))} '
        f"({prev.get('n_prompts')} prompts).</p>\n" + MarkdownIt("commonmark", {"html": False}).render(text), "changes summary")
    out = [head, downloads("changes.json")]
    moves = views.rank_moves_frame(release)
    if len(moves):
        out.append(fragment("<h3>Rank movements</h3>", "h"))
        out.append(tables.data_table(moves, "changes-ranks", decimals=release.decimals))
    scores = views.score_changes_frame(release)
    if len(scores):
        out.append(fragment("<h3>Score changes</h3><p>Largest first. The interval of a change is computed for All on the prompts "
                            f'common to both releases (<a href="{METHODS}#changes">paired bootstrap</a>).</p>', "h"))
        out.append(tables.data_table(scores, "changes-scores", decimals={"Overall-9 before": release.decimals, "Overall-9 after": release.decimals, "Δ": release.decimals}, page_length=25))
    pairs = views.status_changes_frame(release)
    if len(pairs):
        out.append(fragment("<h3>Prompts behind the changes</h3><p>Every prompt × model whose status or raw (0–3) Overall-9 changed; "
                            "raw values to four decimals (exact in <code>changes.json</code>).</p>", "h"))
        out.append(tables.data_table(pairs, "changes-pairs", decimals={"Raw Overall-9 before": 4, "Raw Overall-9 after": 4}, page_length=25))
    return out


#: The prompt explorer as seen from another executed notebook.
EXPLORER = "10_prompts.html"


def _slice_filter(release: Release) -> dict[str, str]:
    """The explorer's slice filter of a slice view ({} for the full set)."""
    return {} if release.slice_name == release.output_slice else {"slice": release.slice_name}


def explorer_link(model_template: bool = False, **filters: str) -> str:
    """URL of the prompt explorer filtered to a group's prompts (``domain=FAS``, ``model=…``);
    ``model_template``: end with ``model={model_id}``, a template a table fills per row."""
    from urllib.parse import urlencode

    query = "&".join(q for q in (urlencode(filters), "model={model_id}" if model_template else "") if q)
    return EXPLORER + ("?" + query if query else "")


def prompt_explorer(release: Release) -> list[HTMLFragment]:
    """The prompt explorer: every prompt with its strata, tags, slices, difficulty, spread
    and each model's Overall-9 or status; filtered from the URL (links from the heatmaps and
    tables), searchable and sortable; then the hardest and the most discriminating prompts."""
    rows = views.prompt_rows(release)
    models = [(m, release.display_name(m)) for m in [r["model_id"] for r in release.boards["overall"]]]
    table = tables.prompt_table(rows, models, "prompt-explorer", decimals=release.decimals, status_short=views.STATUS_SHORT)
    scored = [r for r in rows if r["difficulty"] is not None]

    def short_list(title: str, picked: list[dict], table_id: str, what: str) -> HTMLFragment:
        frame = [{"sample_id": r["sample_id"], "Stratum": r["stratum"], "Domains": " ".join(r["domains"]),
                  "Difficulty": r["difficulty"], "Spread": r["spread"]} for r in picked]
        body = tables.data_table(frame, table_id, decimals=release.decimals)
        return fragment(f"<h3>{views.escape(title)}</h3><p>{what}</p>\n{body.html}", table_id)

    hardest = sorted(scored, key=lambda r: (r["difficulty"], r["sample_id"]))[:10]
    spread = sorted(scored, key=lambda r: (-(r["spread"] or 0), r["sample_id"]))[:10]
    return [
        table,
        downloads("prompt_scores.jsonl"),
        short_list("Hardest prompts", hardest, "hardest-prompts", "The ten prompts with the lowest mean Overall-9 across models."),
        short_list("Most discriminating prompts", spread, "discriminating-prompts",
                   "The ten prompts whose Overall-9 differs most between the best and the worst model."),
    ]


def compare_picker(release: Release) -> HTMLFragment:
    """Any models on the nine components in any group, picked in the built page (SPEC §6
    rows of every group precomputed: All, strata, search types, domain and failure-mode tags)."""
    tax = views.taxonomy()
    groups: list[tuple[str, list[dict]]] = [(g, rows) for g, rows in release.boards["stratum"].items() if rows and rows[0]["n_total"]]
    for kind in ("domain", "failure_mode"):
        names = tax[views.tag_kind(kind)]
        groups += [(f"{kind.replace('_', ' ')} {t} · {names.get(t, t)}", rows) for t, rows in release.boards[kind].items()]
    models = [r["display_name"] for r in release.boards["overall"]]
    records = []
    for label, rows in groups:
        for r in rows:
            for c in OVERALL_9_COMPONENTS:
                v = r["components"][c]
                records.append({"group": label, "model": r["display_name"], "component": COMPONENT_LABELS[c], "value": v,
                                "value_text": "N/A" if v is None else decimal_text(v, release.decimals)})
    chart = charts.compare_picker(records, [g for g, _ in groups], models, f"compare-picker{release.id_suffix}",
                                  initial_models=models[:3], title="Compare any models, in any group")
    return with_legend(chart, "Every group and model of the release is in the page: nothing is recomputed when you choose. "
                       f'Values are the published components (<a href="{METHODS}#components">0–100</a>).')
