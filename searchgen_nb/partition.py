"""The two-level search partition of a prompt (data contract, § Prompt metadata and the
partition)."""

from searchgen_nb.constants import PARTITION_KEYS


def partition(subset: object, sample_id: str) -> tuple[str, str]:
    """``(stratum, search_type)``: a ``subset`` that is or holds ``NoSearch``; else
    ``texthard`` or ``text_rendering`` in the sample_id is TextualSearch, else VisualSearch."""
    if subset == "NoSearch" or (isinstance(subset, list) and "NoSearch" in subset):
        return "NoSearch", "NoSearch"
    if "texthard" in sample_id or "text_rendering" in sample_id:
        return "SearchIntensive", "TextualSearch"
    return "SearchIntensive", "VisualSearch"


def partition_counts(prompts) -> dict[str, int]:
    """Prompts per stratum and search type of records' prompt parts: the manifest's
    ``partition`` and ``slice_partitions`` (data contract, § Artifacts)."""
    counts = dict.fromkeys(PARTITION_KEYS, 0)
    for p in prompts:
        counts[p["stratum"]] += 1
        if p["search_type"] != p["stratum"]:
            counts[p["search_type"]] += 1
    return counts
