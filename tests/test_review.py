"""A release reviewable in minutes: its change summary (``CHANGES.md``, published beside the
artifacts: data contract, § Changes between releases) names what changed and nothing else, and
the executed notebooks record no folder the release ran from."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from test_changes import LOST, LOWERED

from searchgen_nb.book.release import CHANGES, write_change_summary
from searchgen_nb.book.views import Release


@pytest.mark.slow
def test_first_release_publishes_its_summary(demo_release):
    text = (demo_release / "public" / "data" / CHANGES).read_text(encoding="utf-8")
    assert text == (
        "## What changed\n\nThis is the first release: there is no previous release "
        "to compare with.\n"
    )
    for nb in (demo_release / "book" / "notebooks").glob("*.ipynb"):
        params = json.loads(nb.read_text(encoding="utf-8"))["metadata"]["papermill"]["parameters"]
        assert params["release_config"] == "release.yml", nb.name  # its name, not its folder


@pytest.mark.slow
def test_summary_names_the_changed_models_and_pairs_only(changed_data, tmp_path):
    """One model lower on 5 prompts, two results of another lost: the summary names those two
    models, the two that moved in rank with them, those 5 prompts and those 2 results, and no
    other model or prompt."""
    folder = shutil.copytree(changed_data, tmp_path / "data")
    write_change_summary(Release(folder))
    text = (folder / CHANGES).read_text(encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    named = {
        m
        for m, meta in manifest["models"].items()
        if re.search(rf"\b{m}\b|{re.escape(meta['display_name'])}", text)
    }
    assert named == {
        "halcyon_draw",
        "pixelwright_2",
        "tessellate_3",
        "marrowleaf",
    }  # the last two: moved in rank only
    assert set(re.findall(r"sgb_[a-z_]+_\d{4}", text)) == set(LOWERED + LOST)
    assert (
        "2 results scored → missing evaluation (counts 0)" in text
        and "5 scored prompts changed" in text
    )


@pytest.mark.slow
def test_chart_records_name_model_and_group(demo_release):
    """Each chart-data line (one record) of Leaderboard and Compare names its group (the line
    length is test_book's ``test_committed_outputs_diff_line_by_line``)."""
    for path in sorted((demo_release / "book" / "notebooks").glob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        records = [
            line
            for line in text.splitlines()
            if line.lstrip().startswith('"{\\"')
            and ('\\"rank_text\\"' in line or '\\"sep\\"' in line)
        ]  # forest, pairs
        assert all('\\"group\\": ' in r for r in records), path.name
