"""The small release of the book tests (``conftest.fixture_release``): a null component, a
``<script>`` display name, a model without results, and a previous release to compare with."""

from __future__ import annotations

from factory import IMAGE, model, prompt, result

EVIL = '<script>alert("x")</script> Evil'
PROMPTS = [
    prompt("f01", domains=["ART"], failure_modes=["EIK"]),
    prompt("f02_texthard", domains=["ART", "HIS"], failure_modes=["THG"]),
    prompt("f03", subset="NoSearch", domains=["HIS"], failure_modes=["EIK"]),
    prompt("f04", domains=["SCI"], failure_modes=[]),
]
MODELS = {
    "good": model("Good Model", type_="Commercial"),
    "evil": model(EVIL, source_id="evil"),
    "empty": model(
        "Empty Model", "exclude", pending=True
    ),  # no results yet (pending): every value N/A
}
# no result has text_rendering → that component is N/A for every model
RESULTS = {
    **{
        ("good", p["sample_id"]): result(
            {"checklist:0": 3, "rubric:image_quality": 2.5, "visual_reference_evaluation": 2}
        )
        for p in PROMPTS
    },
    ("evil", "f01"): result({"checklist:0": 0, "rubric:image_quality": 0}),  # real zeros
    ("evil", "f02_texthard"): result({"checklist:0": 1.5}),
    ("evil", "f03"): IMAGE,
    ("evil", "f04"): result({"checklist:0": 2, "rubric:ai_naturalness": 1}),
}


# The previous release the fixture is compared with (data contract, § Changes between
# releases): Evil's f03 was scored (now only an image: scored → missing_evaluation) and Evil
# led Good (a rank swap).
PREVIOUS_RESULTS = {
    **{
        ("good", p["sample_id"]): result({"checklist:0": 1, "rubric:image_quality": 1})
        for p in PROMPTS
    },
    **{
        ("evil", p["sample_id"]): result({"checklist:0": 3, "rubric:image_quality": 3})
        for p in PROMPTS
    },
}
