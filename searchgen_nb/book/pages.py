"""Page sections of the book: each function returns what one notebook cell shows, so the
notebooks stay a parameters cell, a few calls and prose."""

from __future__ import annotations

import json
import math
from decimal import Decimal

from searchgen_nb.aggregate import groups_of
from searchgen_nb.book import charts, heatmaps, tables, texts, views, views_audit
from searchgen_nb.book.cards import TEXTS_SCRIPT, card_href, card_links, prompt_texts
from searchgen_nb.book.display import HTMLFragment, join
from searchgen_nb.book.fmt import STATUS_LABELS, esc, format_number
from searchgen_nb.book.page_parts import (
    EXPLORER,
    METHODS,
    TAG_HEADS,
    board_file,
    downloads,
    explorer_link,
    para,
    prose,
    safe_id,
    slice_filter,
    with_legend,
)
from searchgen_nb.book.tables import COLUMN_DEFINITIONS as DEFS
from searchgen_nb.book.tables import Head
from searchgen_nb.book.views import TAG_KINDS, Release
from searchgen_nb.constants import STATUSES
from searchgen_nb.declaration import OVERALL_9_COMPONENTS, GroupKind
from searchgen_nb.numeric import decimal_text


def banner(release: Release) -> HTMLFragment:
    """The synthetic-data banner (an empty fragment for a real release)."""
    return HTMLFragment(prose("banner.html.j2") if release.is_demo else "", "banner")


def slice_note(release: Release) -> HTMLFragment:
    """Which slice the page shows, and what the other slices are (read them below)."""
    names = release.slices
    return para(
        prose("slice_note.html.j2", only=names[0], output=release.output_slice, others=names[1:])
    )


def slice_sections(release: Release, render) -> HTMLFragment:
    """Per published slice but the full set, a collapsible section of ``render(slice view)``."""
    parts = []
    for name in release.slices[1:]:
        body = render(view := release.for_slice(name))
        body = join(body if isinstance(body, list) else [body], "")
        parts.append(
            f'<details class="sg-slice" id="slice-{esc(name)}"><summary>Slice '
            f"<code>{esc(name)}</code> · {len(view.records)} prompts</summary>\n"
            f"{body.html}\n</details>"
        )
    if not parts:
        return para("This release publishes no slice besides the full set.", label="slices")
    return HTMLFragment("\n".join(parts), "slices")


def leaderboard_view(release: Release, group: str, forest: bool = True) -> HTMLFragment:
    """One stratum group's sortable leaderboard, downloads and (``forest``) forest plot."""
    n, rows = next(
        ((n, rows) for g, n, rows in views.stratum_views(release) if g == group), (None, None)
    )
    if rows is None:
        raise KeyError(f"no stratum group {group!r}")
    intervals = views.group_intervals(release, "stratum", group)
    ties = views.tie_groups(rows, views.group_pairs(release, "stratum", group))
    conf, where = release.confidence, f"{group} · slice {release.slice_name}"
    table = tables.leaderboard_table(
        rows,
        f"leaderboard-{group.lower()}{release.id_suffix}",
        min_coverage=release.min_coverage,
        pending=release.pending,
        intervals=intervals,
        ties=ties,
        confidence=conf,
        caption=f"{group} · {n} prompts · {sum(r['ranked'] for r in rows)} of {len(rows)} models "
        f"ranked · slice {release.slice_name}",
        methods_href=METHODS,
        decimals=release.decimals,
        prompts_href=explorer_link(
            True, **({} if group == "All" else {"stratum": group}), **slice_filter(release)
        ),
    )
    parts = [table, downloads(board_file(release, "stratum"))]
    if forest and any((c or {}).get("overall_9") for c in intervals.values()):
        chart = charts.forest(
            rows,
            intervals,
            f"forest-{group.lower()}{release.id_suffix}",
            title=f"Overall-9 with {conf} intervals, {where}",
            ties=ties,
            confidence=conf,
            decimals=release.decimals,
            group=group,
        )
        parts.append(with_legend(chart, prose("forest_legend.html.j2", confidence=conf)))
    return join(parts, f"leaderboard {group}")


def _no_tags(release: Release, kind: str) -> HTMLFragment | None:
    """A sentence instead of an empty chart or table when no prompt carries a tag of ``kind``."""
    return (
        None
        if release.boards[kind]
        else para(
            f"No prompt of this release carries a {kind.replace('_', '-')} tag.", "sg-note", "note"
        )
    )


def multilabel_note(release: Release, kind: str) -> HTMLFragment:
    """The multi-label note with this release's numbers (memberships never sum to the prompts)."""
    counts, n = views.tag_counts(release, kind), release.manifest["dataset"]["n_prompts"]
    word = kind.replace("_", "-")
    untagged = sum(1 for r in release.records if not r[TAG_KINDS[kind]])
    text = prose(
        "multilabel_note.html.j2",
        n_tags=len(counts),
        word=word,
        memberships=int(counts["Prompts"].sum()),
        n=n,
        untagged=untagged,
    )
    return para(text, "sg-note", "note")


def tag_heatmap(release: Release, kind: str) -> HTMLFragment:
    """Model × tag heatmaps of Overall-9, absolute and relative to each model's Overall-9; a
    breakdown's (``kind`` its name) by its groups."""
    if (empty := _no_tags(release, kind)) is not None:
        return empty
    df, word = views.tag_frame(release, kind), kind.replace("_", " ")
    noun = "tag" if kind in TAG_KINDS else "group"
    sizes = {t: rows[0]["n_total"] for t, rows in release.boards[kind].items() if rows}
    tags = sorted(sizes, key=lambda t: (-sizes[t], t))
    # inside a named slice only the whole slice is bootstrapped: its tag cells have no interval
    intervals = views.uncertainty_key(release, kind, tags[0]) is not None and bool(
        release.uncertainty and release.uncertainty["groups"]
    )
    width = views.wide_interval(release) if intervals else None
    data_id = f"heatmap-{kind}{release.id_suffix}"
    common = {
        "decimals": release.decimals,
        "tag_order": tags,
        "wide_interval": width,
        "tag_counts": sizes,
        "confidence": release.confidence,
        "data_id": data_id,
        "group_title": "Tag" if kind in TAG_KINDS else word.capitalize(),
        "overall": {r["model_id"]: r["overall_9"] for r in release.boards["overall"]},
        "href": EXPLORER
        + f"?{views.explorer_key(kind)}={{tag}}&model={{model_id}}"
        + ("" if release.is_full else "&slice=" + release.slice_name),
    }
    base = "all prompts" + ("" if release.is_full else f" of slice {release.slice_name}")
    absolute = heatmaps.heatmap(
        df,
        data_id,
        title=f"Overall-9 by {word} (0–100; grey = N/A)",
        subtitle="columns by prompt count, largest first; black outline = best of the column; "
        "click a cell for its prompts",
        **common,
    )
    relative = heatmaps.heatmap(
        df,
        f"heatmap-{kind}-relative{release.id_suffix}",
        title=f"Overall-9 by {word}, relative to each model's overall score",
        subtitle=f"{noun} score minus the model's Overall-9 on {base}: blue = a strength, red = a "
        "weak spot",
        relative=True,
        **common,
    )
    legend = prose(
        "heatmap_legend.html.j2",
        noun=noun,
        intervals=intervals,
        tags=kind in TAG_KINDS,
        width=None if width is None else decimal_text(width),
        confidence=release.confidence,
        slice_intervals=bool(release.uncertainty) and not release.is_full,
    )
    rel_legend = prose("heatmap_relative_legend.html.j2", base=base)
    return join(
        [
            with_legend(absolute, legend),
            with_legend(relative, rel_legend),
            downloads(board_file(release, kind)),
        ],
        f"{kind} heatmap",
    )


def tag_tables(release: Release, kind: str) -> HTMLFragment:
    """Per model (overall order), a collapsible table of each tag's Overall-9 and counts."""
    if (empty := _no_tags(release, kind)) is not None:
        return empty
    parts = []
    for r in release.boards["overall"]:
        m = r["model_id"]
        frame = views.model_tag_table(release, kind, m)
        links = [
            explorer_link(
                model_template=False,
                **{kind: tag.split(" · ")[0]},
                **slice_filter(release),
                model=m,
            )
            for tag in frame["Tag"]
        ]
        table = tables.data_table(
            frame,
            f"tags-{kind.replace('_', '-')}-{safe_id(m)}{release.id_suffix}",
            row_links={
                "Prompts": links,
                "Coverage %": [
                    f"{link}&status=not_scored" if s < t else None
                    for link, s, t in zip(links, frame["Scored"], frame["Prompts"])
                ],
            },
            decimals={**dict.fromkeys(frame.columns, release.decimals), "Coverage %": 2},
            heads=TAG_HEADS,
            order=[("Overall-9", "desc")],
        )
        rank = f"rank {r['rank']}" if r["ranked"] else "unranked"
        o9 = format_number(r["overall_9"], release.decimals)[0]
        parts.append(
            f'<details class="sg-model-tags"><summary><strong>{esc(r["display_name"])}'
            f"</strong> <code>{esc(m)}</code> · Overall-9 {o9} · {rank}</summary>"
            f"{table.html}</details>"
        )
    return HTMLFragment("\n".join(parts), f"{kind} tables")


def breakdown_sections(release: Release) -> list[HTMLFragment]:
    """Per breakdown of the manifest's declaration (data contract, § Breakdowns), in its order:
    a heading, its groups' prompt counts, the model × group heatmaps with the downloads (JSON
    and CSV) and a leaderboard per group with intervals, rank ranges and tie groups; one
    sentence when the release declares none."""
    if not release.breakdowns:
        return [
            para(
                "This release declares no breakdown (its config has no <code>breakdowns</code>).",
                "sg-note",
                "no breakdowns",
            )
        ]
    names = [k.kind for k in release.breakdowns]
    out = [
        para(
            "Breakdowns: "
            + " · ".join(f'<a href="#breakdown-{esc(n)}">by {esc(n)}</a>' for n in names),
            "sg-note",
            "navigation",
        )
    ]
    for kind in release.breakdowns:
        out += [_breakdown_head(release, kind), tag_heatmap(release, kind.kind)]
        out += [breakdown_board(release, kind, value) for value in release.boards[kind.kind]]
    return out


def _breakdown_head(release: Release, kind: GroupKind) -> HTMLFragment:
    """A breakdown's heading and what its groups hold (how many prompts have no value)."""
    name, field = kind.kind, kind.fields[0]
    sizes = [rows[0]["n_total"] for rows in release.boards[name].values() if rows]
    none = sum(1 for r in release.records if not groups_of(r, kind))
    n = len(release.records)
    text = prose(
        "breakdown_head.html.j2",
        name=name,
        field=field,
        n_groups=len(sizes),
        memberships=sum(sizes),
        n=n,
        without=none,
    )
    return HTMLFragment(text, f"breakdown {name}")


def breakdown_board(release: Release, kind: GroupKind, value: str) -> HTMLFragment:
    """The leaderboard of one group of a breakdown (its ``value``): intervals, rank ranges and
    tie groups from ``uncertainty.json``, Coverage linking the group's prompts in the explorer."""
    name, rows = kind.kind, release.boards[kind.kind][value]
    pairs = views.group_pairs(release, name, value)
    n = rows[0]["n_total"] if rows else 0
    return tables.leaderboard_table(
        rows,
        f"leaderboard-{name}-{safe_id(value)}",
        min_coverage=release.min_coverage,
        pending=release.pending,
        intervals=views.group_intervals(release, name, value),
        ties=views.tie_groups(rows, pairs),
        confidence=release.confidence,
        caption=f"{name} {value} · {n} prompts · {sum(r['ranked'] for r in rows)} of "
        f"{len(rows)} models ranked",
        methods_href=METHODS,
        prompts_href=explorer_link(True, **{views.explorer_key(name): value}),
    )


def compare(release: Release, group: str, models: list[str] | None) -> list[HTMLFragment]:
    """``models`` (default: the top three; ids or display names, any case) on the nine
    components in ``group`` (a code or name, any case); ValueError listing the valid values."""
    chosen = views.resolve_models(release, list(models)) if models else views.top_models(release, 3)
    try:
        group = views.resolve_group(release, group)
    except ValueError:
        if release.is_full:
            raise
        # a group of the release (else this raises, naming the valid ones) without slice prompts
        named = views.resolve_group(release.for_slice(release.output_slice), group)
        return [
            para(
                f"No prompt of slice <code>{esc(release.slice_name)}</code> is in group "
                f"<code>{esc(named)}</code>.",
                label="group",
            )
        ]
    label, rows = views.group_rows(release, group)
    by_id = {r["model_id"]: r for r in rows}
    if missing := [m for m in chosen if m not in by_id]:
        raise KeyError(
            f"unknown model_id(s) {', '.join(missing)} (valid: {', '.join(release.model_order)})"
        )
    ids = f"{safe_id(group)}{release.id_suffix}"
    chart = charts.component_bars(
        [r for r in rows if r["model_id"] in chosen],
        f"compare-{ids}",
        models=chosen,
        title=f"Nine components, {label}",
        decimals=release.decimals,
        group=group,
    )
    table = tables.leaderboard_table(
        [by_id[m] for m in chosen],
        f"compare-table-{ids}",
        min_coverage=release.min_coverage,
        pending=release.pending,
        methods_href=METHODS,
        decimals=release.decimals,
    )
    head = HTMLFragment(
        f"<p>Group: <strong>{esc(label)}</strong> · "
        f"{rows[0]['n_total'] if rows else 0} prompts.</p>",
        "group",
    )
    return [
        head,
        with_legend(chart, prose("compare_legend.html.j2")),
        table,
    ]


def compare_picker(release: Release) -> HTMLFragment:
    """Any models on the nine components in any group, picked in the built page."""
    groups = [
        (g, rows) for g, rows in release.boards["stratum"].items() if rows and rows[0]["n_total"]
    ]
    groups += [
        (views.group_label(kind, t), rows)
        for kind in TAG_KINDS
        for t, rows in release.boards[kind].items()
    ]
    records = [
        {
            "group": label,
            "model": r["display_name"],
            "v": [r["components"][c] for c in OVERALL_9_COMPONENTS],
        }
        for m in dict.fromkeys(r["model_id"] for _, rows in groups for r in rows)
        for label, rows in groups
        for r in rows
        if r["model_id"] == m
    ]  # model-major
    names = [r["display_name"] for r in release.boards["overall"]]
    chart = heatmaps.compare_picker(
        records,
        [g for g, _ in groups],
        names,
        f"compare-picker{release.id_suffix}",
        decimals=release.decimals,
        title="Compare any models, in any group",
    )
    return with_legend(chart, prose("compare_picker_legend.html.j2"))


def pairwise(release: Release, group: str) -> list[HTMLFragment]:
    """Every pair of ranked models of ``group``: a matrix of Δ Overall-9, a table of Δ and p."""
    if not (u := release.uncertainty) or not u.get("groups"):
        return [para("This release has no uncertainty section (<code>n_bootstrap: 0</code>).")]
    group = views.resolve_group(release, group)
    pairs, lead = views.group_pairs(release, "stratum", group), []
    if not pairs and group != "All":
        where = "All and the strata" if release.is_full else "the whole slice (All)"
        lead = [
            para(
                f"Pairwise tests are computed for the ranked models of {where}; group "
                f"<code>{esc(group)}</code> has none, so this section shows All."
            )
        ]
        group, pairs = "All", views.group_pairs(release, "stratum", "All")
    if not pairs:
        return [*lead, para("Fewer than two ranked models: no pair to test.")]
    ids, k, b = f"{safe_id(group)}{release.id_suffix}", len(pairs), u["n_bootstrap"]
    chart = heatmaps.pairwise_heatmap(
        pairs,
        release.names,
        f"pairs-{ids}",
        confidence=release.confidence,
        title=f"Δ Overall-9 between ranked models, {group} · slice {release.slice_name}",
        decimals=release.decimals,
        group=group,
    )
    alpha = 1 - Decimal(repr(float(u["confidence"])))  # as written: 0.05, not 0.0500000000000000x
    floor = 2 * k / alpha - 1
    note = prose(
        "pairwise_note.html.j2",
        k=k,
        b=f"{b:,}",
        seed=u["seed"],
        alpha=decimal_text(alpha),
        smallest=decimal_text(2 / (b + 1)),
        floor=f"{math.ceil(floor):,}" if b < floor else None,
    )
    table = tables.data_table(
        views.pairs_frame(release, "stratum", group),
        f"pairs-table-{ids}",
        decimals={"p": 4, "Holm p": 4, "Δ Overall-9": release.decimals},
        page_length=20,
    )
    return [*lead, HTMLFragment(note, "pairs note"), chart, table, downloads("uncertainty.json")]


_STATUS_TITLES = texts.mapping("status_titles.yaml")
_STATUS_HEADS = {
    "display_name": Head("Model"),
    **{
        s: Head(STATUS_LABELS[s].capitalize(), _STATUS_TITLES[s], f"{METHODS}#status")
        for s in STATUSES
    },
    "prompts": Head("Prompts"),
    "coverage": Head("Coverage", DEFS["coverage"], f"{METHODS}#coverage"),
    "missing_policy": Head("Missing policy", DEFS["missing_policy"], f"{METHODS}#missing-policy"),
}


def status_table(release: Release, table_id: str) -> HTMLFragment:
    """Status counts per model with coverage and policy; headers explain and link to Methods."""
    return tables.data_table(views_audit.status_frame(release), table_id, heads=_STATUS_HEADS)


def audit_status(release: Release) -> list[HTMLFragment]:
    """Status counts per model as a chart (with the ranking threshold) and a table."""
    chart = charts.coverage_bars(
        views_audit.status_frame(release),
        "coverage-status",
        min_coverage=release.min_coverage,
        title="Status of every prompt × model pair",
        decimals=release.decimals,
    )
    return [
        with_legend(chart, prose("status_legend.html.j2")),
        status_table(release, "status-counts"),
        downloads("prompt_scores.jsonl"),
    ]


def audit_invalid(release: Release) -> HTMLFragment:
    """Every invalid evaluation with model, sample_id, file and reason."""
    df = views_audit.invalid_frame(release)
    return (
        HTMLFragment("<p>No invalid evaluation in this release.</p>")
        if df.empty
        else (
            tables.data_table(df, "invalid-evaluations", page_length=25, row_links=card_links(df))
        )
    )


def audit_warnings(release: Release) -> HTMLFragment:
    """Every extraction warning (duplicate tags, ignored score keys, …)."""
    df = views_audit.warnings_frame(release)
    return (
        HTMLFragment("<p>No warning was raised during extraction.</p>")
        if df.empty
        else (tables.data_table(df, "extraction-warnings", page_length=25))
    )


def audit_validation(report: dict) -> list[HTMLFragment]:
    """The validation report: verdict line, its named warnings, then one row per check."""
    verdict = "every release check passed" if report["passed"] else "RELEASE CHECKS FAILED"
    head = para(f"<strong>Validation: {verdict}.</strong>", "sg-verdict", "verdict")
    warned = [
        para(
            f"<strong>Warning {esc(w['name'])}:</strong> {esc(w['message'])}",
            "sg-warning",
            "warning",
        )
        for w in report.get("warnings", [])
    ]
    checks = tables.data_table(views_audit.validation_frame(report), "validation-report")
    return [head, *warned, checks]


def audit_manifest(release: Release) -> list[HTMLFragment]:
    """Manifest summary and the whole manifest but its time (data contract, § The book)."""
    shown = {k: v for k, v in release.manifest.items() if k != "generated_at"}
    full = json.dumps(shown, indent=2, sort_keys=True, ensure_ascii=False)
    raw = HTMLFragment(
        "<details><summary>manifest.json (but <code>generated_at</code>, in the "
        f"download)</summary><pre>{esc(full)}</pre></details>",
        "manifest",
    )
    return [
        tables.data_table(views.manifest_summary(release), "manifest-summary"),
        raw,
        downloads("manifest.json", "validation_report.json"),
    ]


def changes(release: Release) -> list[HTMLFragment]:
    """The "What changed" page: the ``searchgen-nb diff`` summary and tables of what changed."""
    from markdown_it import MarkdownIt

    from searchgen_nb.changes_markdown import markdown

    ch, dec = release.changes, release.decimals
    if ch is None or ch.get("first_release"):
        return [para(prose("first_release.html.j2"), "sg-first-release", "first release")]
    text = markdown(ch, release.names, policies=release.policies, decimals=dec)
    text = text.split("\n### ")[0]
    text, prev = text.replace("## What changed\n", "", 1), ch.get("previous") or {}
    out = [
        HTMLFragment(
            prose(
                "changes_previous.html.j2",
                n_prompts=str(prev.get("n_prompts")),
                sha=str(prev.get("results_sha256"))[:12],
            )
            + "\n"
            + MarkdownIt("commonmark", {"html": False}).render(text),
            "changes summary",
        ),
        downloads("changes.json"),
    ]
    sections = [
        (
            prose("changes_ranks_head.html.j2"),
            views_audit.rank_moves_frame(release),
            "changes-ranks",
            dec,
            None,
        ),
        (
            prose("changes_scores_head.html.j2"),
            views_audit.score_changes_frame(release),
            "changes-scores",
            {"Overall-9 before": dec, "Overall-9 after": dec, "Δ": dec},
            25,
        ),
        (
            prose("changes_pairs_head.html.j2"),
            views_audit.status_changes_frame(release),
            "changes-pairs",
            None,
            25,
        ),
    ]
    for head, frame, table_id, decimals, page_length in sections:
        if len(frame):
            out += [
                HTMLFragment(head, "h"),
                tables.data_table(
                    frame,
                    table_id,
                    decimals=decimals,
                    page_length=page_length,
                    row_links=card_links(frame),
                ),
            ]
    return out


def prompt_explorer(release: Release) -> list[HTMLFragment]:
    """The prompt explorer (filtered from the URL), then the hardest and most discriminating."""
    texts, rows = prompt_texts(release), views_audit.prompt_rows(release)
    rows = [{**r, "text": texts.get(r["sample_id"])} for r in rows]
    models = [(r["model_id"], release.names[r["model_id"]]) for r in release.boards["overall"]]
    scored = [r for r in rows if r["difficulty"] is not None]
    lists = [
        (
            "Hardest prompts",
            "hardest-prompts",
            "The ten prompts with the lowest mean Overall-9 across models.",
            sorted(scored, key=lambda r: (r["difficulty"], r["sample_id"])),
        ),
        (
            "Most discriminating prompts",
            "discriminating-prompts",
            "The ten prompts whose Overall-9 differs most between the best and the worst model.",
            sorted(scored, key=lambda r: (-(r["spread"] or 0), r["sample_id"])),
        ),
    ]
    out = [
        para(prose("explorer_legend.html.j2"), "sg-note", "legend"),
        tables.prompt_table(
            rows,
            models,
            "prompt-explorer",
            release.tag_columns,
            decimals=release.decimals,
            policies=release.policies,
        ),
        HTMLFragment(TEXTS_SCRIPT, "prompt texts"),  # the search covers them (cards.py)
        downloads("prompt_scores.jsonl"),
    ]
    for title, table_id, what, picked in lists:
        frame = [
            {
                "sample_id": r["sample_id"],
                "Stratum": r["tags"]["stratum"][0],
                "Domains": " ".join(r["tags"]["domains"]),
                "Mean Overall-9": r["difficulty"],
                "Spread": r["spread"],
            }
            for r in picked[:10]
        ]
        body = tables.data_table(
            frame,
            table_id,
            decimals=release.decimals,
            row_links={"sample_id": [card_href(f["sample_id"]) for f in frame]},
        )
        out.append(HTMLFragment(f"<h3>{esc(title)}</h3><p>{what}</p>\n{body.html}", table_id))
    return out
