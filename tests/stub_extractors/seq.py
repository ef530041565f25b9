"""A configured ``module:function`` extractor returning a 10-value sequence (tests only)."""


def first_checklist_only(result):
    v = result["scores"].get("checklist:0")
    if v == 2.5:
        raise ValueError("refusing 2.5 on purpose")
    return [v] + [None] * 8 + [1.0]


def from_parsed(result):
    """The checklist from the judge's ``parsed`` answer: reads no ``scores``."""
    return {"checklist": result["parsed"]["c"]}


def float32_nan(result):
    """numpy's float32 values, NaN among them (not applicable)."""
    import numpy as np

    return [np.float32(result["parsed"]["c"])] + [np.float32("nan")] * 9


def out_of_range(result):
    return {"checklist": 7.0}


def dies(result):
    """A worker killed while it reads (as the kernel's out-of-memory killer would)."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
