"""Stand-in for ToolGen's ``paper_materials/recompute_tables.py`` (tests only).

Mimics the real function's shape as the adapter expects it: one parsed result in, ten
component values out, NaN for not applicable (numpy-style), raising on unusable input.
"""

import math

ORDER = [
    "checklist",
    "rubric_adaptive",
    "prompt_faithfulness",
    "image_quality",
    "text_rendering",
    "ai_naturalness",
    "composition_and_aesthetics",
    "physical_plausibility",
    "visual_reference",
    "text_reference",
]


def extract_10comp(result):
    scores = result["scores"]
    if "boom" in scores:
        raise KeyError("boom")
    checklist = [v for k, v in scores.items() if k.startswith("checklist:")]
    out = {name: math.nan for name in ORDER}
    if checklist:
        out["checklist"] = sum(checklist) / len(checklist)
    # ToolGen doubles the visual reference weight in this stand-in so the test can tell
    # which extractor ran.
    if "visual_reference_evaluation" in scores:
        out["visual_reference"] = min(3.0, scores["visual_reference_evaluation"] * 2)
    if "text_reference_evaluation" in scores:
        out["text_reference"] = scores["text_reference_evaluation"]
    return out
