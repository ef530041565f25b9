"""The two-level search partition of a prompt (SPEC §1.2, exactly the design document's rule)."""

from __future__ import annotations


def partition(subset: object, sample_id: str) -> tuple[str, str]:
    """Return ``(stratum, search_type)`` for a prompt.

    Rule order matters (SPEC §1.2): ``subset == "NoSearch"`` wins, so a NoSearch prompt
    whose id contains ``texthard`` stays NoSearch; otherwise ``texthard`` or
    ``text_rendering`` in the sample_id → TextualSearch; else VisualSearch.
    """
    if subset == "NoSearch":
        return "NoSearch", "NoSearch"
    if "texthard" in sample_id or "text_rendering" in sample_id:
        return "SearchIntensive", "TextualSearch"
    return "SearchIntensive", "VisualSearch"
