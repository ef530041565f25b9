"""The two-level search partition of a prompt (SPEC §1.2, exactly the design document's rule)."""

from __future__ import annotations


def partition(subset: object, sample_id: str) -> tuple[str, str]:
    """Return ``(stratum, search_type)`` for a prompt.

    Rule order matters (SPEC §1.2): ``subset == "NoSearch"`` wins, so a NoSearch prompt
    whose id contains ``texthard`` stays NoSearch; otherwise ``texthard`` or
    ``text_rendering`` in the sample_id → TextualSearch; else VisualSearch. A ``subset``
    that is a list of strings (the v1.1 metadata may carry slice tags in it, SPEC §9) is
    NoSearch when it holds ``"NoSearch"``.
    """
    if subset == "NoSearch" or (isinstance(subset, list) and "NoSearch" in subset):
        return "NoSearch", "NoSearch"
    if "texthard" in sample_id or "text_rendering" in sample_id:
        return "SearchIntensive", "TextualSearch"
    return "SearchIntensive", "VisualSearch"


def partition_counts(prompts) -> dict[str, int]:
    """Prompts per stratum and search type (``NoSearch``, ``SearchIntensive``, ``VisualSearch``,
    ``TextualSearch``) of records' prompt parts (``stratum``, ``search_type``): the manifest's
    ``partition`` and, per slice, its ``slice_partitions`` (SPEC §6, §9)."""
    counts = dict.fromkeys(("NoSearch", "SearchIntensive", "VisualSearch", "TextualSearch"), 0)
    for p in prompts:
        counts[p["stratum"]] += 1
        if p["search_type"] != p["stratum"]:
            counts[p["search_type"]] += 1
    return counts
