"""The paper's own figures beside the release's (data contract, § The book): the Leaderboard
page's table of the paper's Overall-10 per model, the recomputed one and their difference."""

from __future__ import annotations

from searchgen_nb.book import tables
from searchgen_nb.book.display import HTMLFragment, join
from searchgen_nb.book.fmt import exact_diff
from searchgen_nb.book.page_parts import METHODS
from searchgen_nb.book.views import Release


def comparison(release: Release) -> HTMLFragment:
    """The paper's Overall-10 (``paper_table``, public 0–100, as written) beside the recomputed
    one and the difference (recomputed − paper, the decimals they print, exactly), a row per
    model in the overall leaderboard's order; a sentence when the release gives no paper table
    (data contract, § The book)."""
    paper = release.manifest["release_checks"]["paper_table"]
    if paper is None:
        return _note(
            "This release gives no paper table (<code>paper_table</code>): there is "
            "no figure of the paper to compare with."
        )
    rows = []
    for r in release.boards["overall"]:
        ours, theirs = r["overall_10"], paper.get(r["model_id"])
        diff = None if ours is None or theirs is None else exact_diff(ours, theirs)
        rows.append(
            {
                "Model": release.display_name(r["model_id"]),
                "model_id": r["model_id"],
                "Overall-10 (recomputed)": ours,
                "Overall-10 (paper)": theirs,
                "Difference": diff,
            }
        )
    note = _note(
        "The paper's own Overall-10 per model (<code>paper_table</code>) beside this "
        "release's, both on 0–100; difference = recomputed − paper. The release gate "
        "allows a difference of at most half a rounding unit "
        f'(<a href="{METHODS}#overall-10">Overall-10</a>).'
    )
    table = tables.data_table(
        rows,
        f"paper-overall-10{release.id_suffix}",
        decimals={"Overall-10 (recomputed)": release.decimals},
    )
    return join([note, table], "paper table")


def _note(html_text: str) -> HTMLFragment:
    return HTMLFragment(f'<p class="sg-note">{html_text}</p>', "paper")
