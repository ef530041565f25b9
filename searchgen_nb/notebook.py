"""The first call of every notebook (data contract, § The book): open the release config, run
the notebook's stage (01–03) or check that the staging folder holds what its page reads
(04–11), show the release's banner and return the release the page's calls read."""

from __future__ import annotations

from pathlib import Path

from IPython.display import display

from searchgen_nb import pipeline
from searchgen_nb.book import pages, views


def open_page(
    release_config: str | None,
    staging: str | Path,
    given: dict | None = None,
    runs: str | None = None,
    reads: str = "aggregate",
) -> views.Release:
    """The staged release after the stage the notebook ``runs`` (``extract``, ``aggregate``,
    ``validate``; None: a page), its banner shown. ``given``: the notebook's variables, each
    one the config also has held to the YAML's value (``ConfigError``); ``reads``: the last
    stage a page reads (``ReleaseError`` naming the notebook to run first). A stage raises as
    it does on its own (``ValidationFailed`` for the gate); ``ValueError`` for a ``runs`` or
    ``reads`` that is not a stage."""
    if runs not in (None, *pipeline.STAGES) or reads not in pipeline.STAGES:
        raise ValueError(f"open_page: runs={runs!r}, reads={reads!r}: not stages of a release")
    cfg = views.open_config(release_config, given=given)
    if runs == "extract":
        folder = pipeline.resolve_work_path(staging)
        pipeline.extract_stage(cfg, folder, progress=False)
    elif runs == "aggregate":
        folder = pipeline.ensure_staged(cfg, staging, upto="extract")
        pipeline.aggregate_stage(cfg, folder)
    elif runs == "validate":
        folder = pipeline.ensure_staged(cfg, staging)
        pipeline.gate(cfg, folder)
    else:
        folder = pipeline.ensure_staged(cfg, staging, upto=reads)
    release = views.Release(folder)
    display(pages.banner(release))
    return release
