"""Page sections of the book's audit, What-changed and prompt pages: status counts, invalid
evaluations, warnings, the validation report, the manifest, the changes since the previous
release and the prompt explorer."""

from __future__ import annotations

import json

from searchgen_nb.book import charts, tables, views, views_audit
from searchgen_nb.book.cards import TEXTS_SCRIPT, card_href, card_links
from searchgen_nb.book.display import HTMLFragment
from searchgen_nb.book.fmt import STATUS_LABELS, esc
from searchgen_nb.book.page_parts import METHODS, _a, _p, downloads, with_legend
from searchgen_nb.book.tables import COLUMN_DEFINITIONS as DEFS
from searchgen_nb.book.tables import Head
from searchgen_nb.book.views import Release
from searchgen_nb.constants import STATUSES

_STATUS_TITLES = {
    "scored": "Result parsed, success true, every value a finite number in 0–3.",
    "invalid_evaluation": "Result file present but unusable (reason listed below).",
    "missing_evaluation": "No result file, but a generated image exists.",
    "missing_generation": "Neither a result file nor a generated image.",
}
_STATUS_HEADS = {
    "display_name": Head("Model"),
    **{s: Head(STATUS_LABELS[s].capitalize(), _STATUS_TITLES[s], f"{METHODS}#status")
       for s in STATUSES},
    "prompts": Head("Prompts"),
    "coverage": Head("Coverage", DEFS["coverage"], f"{METHODS}#coverage"),
    "missing_policy": Head("Missing policy", DEFS["missing_policy"], f"{METHODS}#missing-policy"),
}


def status_table(release: Release, table_id: str) -> HTMLFragment:
    """Status counts per model with coverage and policy; headers explain and link to Methods."""
    return tables.data_table(views_audit.status_frame(release), table_id, heads=_STATUS_HEADS)


# ---- tags --------------------------------------------------------------------------------


# ---- audit, changes, prompts ---------------------------------------------------------------

def audit_status(release: Release) -> list[HTMLFragment]:
    """Status counts per model as a chart (with the ranking threshold) and a table."""
    chart = charts.coverage_bars(views_audit.status_frame(release), "coverage-status",
                                 min_coverage=release.min_coverage,
                                 title="Status of every prompt × model pair")
    legend = (f"Segments: the four {_a('status', 'statuses')}; label: "
              f"{_a('coverage', 'coverage')}; dashed line: the coverage needed to be "
              f"{_a('ranking', 'ranked')}.")
    return [with_legend(chart, legend), status_table(release, "status-counts"),
            downloads("prompt_scores.jsonl")]


def audit_invalid(release: Release) -> HTMLFragment:
    """Every invalid evaluation with model, sample_id, file and reason."""
    df = views_audit.invalid_frame(release)
    if df.empty:
        return HTMLFragment("<p>No invalid evaluation in this release.</p>")
    return tables.data_table(df, "invalid-evaluations", page_length=25, row_links=card_links(df))


def audit_warnings(release: Release) -> HTMLFragment:
    """Every extraction warning (duplicate tags, ignored score keys, …)."""
    df = views_audit.warnings_frame(release)
    if df.empty:
        return HTMLFragment("<p>No warning was raised during extraction.</p>")
    return tables.data_table(df, "extraction-warnings", page_length=25)


def audit_validation(report: dict) -> list[HTMLFragment]:
    """The validation report: verdict line plus one row per check."""
    verdict = "every release check passed" if report["passed"] else "RELEASE CHECKS FAILED"
    head = _p(f"<strong>Validation: {verdict}.</strong>", "sg-verdict", "verdict")
    return [head, tables.data_table(views_audit.validation_frame(report), "validation-report")]


def audit_manifest(release: Release) -> list[HTMLFragment]:
    """Manifest summary table and the full manifest (collapsed, escaped JSON)."""
    full = json.dumps(release.manifest, indent=2, sort_keys=True, ensure_ascii=False)
    raw = HTMLFragment(f"<details><summary>Full manifest.json</summary><pre>{esc(full)}</pre>"
                       "</details>", "manifest")
    return [tables.data_table(views.manifest_summary(release), "manifest-summary"), raw,
            downloads("manifest.json", "validation_report.json")]


def changes(release: Release) -> list[HTMLFragment]:
    """The "What changed" page: the headline facts (the Markdown of ``searchgen-nb diff``),
    rank movements, score changes with the paired interval of each model's change, and every
    prompt × model whose status or score changed."""
    from markdown_it import MarkdownIt

    from searchgen_nb.changes_markdown import markdown

    ch, dec = release.changes, release.decimals
    if ch is None or ch.get("first_release"):
        return [_p("This is the first release: there is no previous release to compare with. A "
                   "release config names one with <code>previous_release</code>.",
                   "sg-first-release", "first release")]
    text = markdown(ch, release.names, policies=release.policies).split("\n### ")[0]
    text = text.replace("## What changed\n", "", 1)
    prev = ch.get("previous") or {}
    out = [HTMLFragment(
        '<p class="sg-previous">Compared with the release generated '
        f"{esc(prev.get('generated_at'))} ({prev.get('n_prompts')} prompts).</p>\n"
        + MarkdownIt("commonmark", {"html": False}).render(text), "changes summary"),
        downloads("changes.json")]
    sections = [
        ("<h3>Rank movements</h3>", views_audit.rank_moves_frame(release), "changes-ranks", dec,
         None),
        ("<h3>Score changes</h3><p>Largest first. The interval of a change is computed for All on "
         "the prompts common to both releases "
         f"({_a('changes', 'paired bootstrap')}).</p>", views_audit.score_changes_frame(release),
         "changes-scores", {"Overall-9 before": dec, "Overall-9 after": dec, "Δ": dec}, 25),
        ("<h3>Prompts behind the changes</h3><p>Every prompt × model whose status or raw (0–3) "
         "Overall-9 changed; raw values to four decimals (exact in <code>changes.json</code>). "
         f"A result without a score counts 0 or is excluded, by the model's "
         f"{_a('missing-policy', 'missing policy')}.</p>",
         views_audit.status_changes_frame(release), "changes-pairs", None, 25),
    ]
    for head, frame, table_id, decimals, page_length in sections:
        if len(frame):
            out += [HTMLFragment(head, "h"),
                    tables.data_table(frame, table_id, decimals=decimals, page_length=page_length,
                                      row_links=card_links(frame))]
    return out


_EXPLORER_LEGEND = (
    "A model without a score on a prompt shows why: <em>no image</em> (missing generation), "
    "<em>no eval</em> (missing evaluation) or <em>invalid</em> (invalid evaluation; the reason "
    f"on hover).\nBy its {_a('missing-policy', 'missing policy')} it counts "
    "<strong>0</strong> (“0 · no image”, <code>zero_fill</code>: sorted as 0) or is "
    "<em>excluded</em> (<code>exclude</code>: left out of its means, sorted last both ways). "
    f"N/A: scored, but {_a('null', 'not applicable')}.")


def prompt_explorer(release: Release) -> list[HTMLFragment]:
    """The prompt explorer: every prompt with its stratum, tags, slices, difficulty, spread and
    each model's Overall-9 or status; filtered from the URL (links from the heatmaps and
    tables), searchable and sortable; then the hardest and the most discriminating prompts."""
    rows = views_audit.prompt_rows(release)
    models = [(r["model_id"], release.names[r["model_id"]]) for r in release.boards["overall"]]
    scored = [r for r in rows if r["difficulty"] is not None]
    lists = [
        ("Hardest prompts", "hardest-prompts",
         "The ten prompts with the lowest mean Overall-9 across models.",
         sorted(scored, key=lambda r: (r["difficulty"], r["sample_id"]))),
        ("Most discriminating prompts", "discriminating-prompts",
         "The ten prompts whose Overall-9 differs most between the best and the worst model.",
         sorted(scored, key=lambda r: (-(r["spread"] or 0), r["sample_id"]))),
    ]
    out = [_p(_EXPLORER_LEGEND, "sg-note", "legend"),
           tables.prompt_table(rows, models, "prompt-explorer", decimals=release.decimals,
                               policies=release.policies),
           HTMLFragment(TEXTS_SCRIPT, "prompt texts"),  # the search covers them (cards.py)
           downloads("prompt_scores.jsonl")]
    for title, table_id, what, picked in lists:
        frame = [{"sample_id": r["sample_id"], "Stratum": r["stratum"],
                  "Domains": " ".join(r["domains"]), "Difficulty": r["difficulty"],
                  "Spread": r["spread"]} for r in picked[:10]]
        body = tables.data_table(frame, table_id, decimals=release.decimals,
                                 row_links={"sample_id": [card_href(f["sample_id"])
                                                          for f in frame]})
        out.append(HTMLFragment(f"<h3>{esc(title)}</h3><p>{what}</p>\n{body.html}", table_id))
    return out
