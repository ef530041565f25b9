"""A configured ``module:function`` extractor returning a 10-value sequence (tests only)."""


def first_checklist_only(result):
    v = result["scores"].get("checklist:0")
    if v == 2.5:
        raise ValueError("refusing 2.5 on purpose")
    return [v] + [None] * 8 + [1.0]


def out_of_range(result):
    return {"checklist": 7.0}
