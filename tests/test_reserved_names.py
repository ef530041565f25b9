"""Names every JavaScript object already has (``__proto__``, ``constructor``, …) cannot name what
the book shows: a model id, display name, slice name, ``sample_id`` or tag so named is refused
at the door, by name; a rubric dimension of a result file so named shows on the prompt card."""

from __future__ import annotations

import json

import pytest
from browser import Page
from factory import make_release, model, prompt, result

from searchgen_nb.book.cards import write_card_assets
from searchgen_nb.config import load_config
from searchgen_nb.errors import ConfigError, MetadataError
from searchgen_nb.pipeline import run_data
from searchgen_nb.untrusted import JS_RESERVED

PROMPTS = [prompt("p1"), prompt("p2", subset="NoSearch")]
SCORES = {"checklist:0": 2, "rubric:__proto__": 1, "rubric:constructor": 3}


def _release(tmp_path, prompts=PROMPTS, models=None, **config):
    models = models or {"a": model("A")}
    results = {(m, p["sample_id"]): result(SCORES) for m in models for p in prompts}
    return make_release(tmp_path / "src", prompts, models, results, **config)


@pytest.mark.parametrize("name", ["__proto__", "constructor", "toString", "hasOwnProperty"])
@pytest.mark.parametrize("where", ["model id", "display name", "slice name"])
def test_reserved_name_in_the_config_is_refused_naming_the_key(tmp_path, name, where):
    models = {
        "model id": {name: model("A", source_id="a")},
        "display name": {"a": model(name)},
        "slice name": {"a": model("A")},
    }[where]
    slices = {name: {"field": "subset", "include": ["NoSearch"]}} if where == "slice name" else None
    cfg = _release(tmp_path, models=models, **({"slices": slices} if slices else {}))
    with pytest.raises(ConfigError) as exc:
        load_config(cfg)
    key = {
        "model id": f"models.{name}",
        "display name": "models.a.display_name",
        "slice name": f"slices.{name}",
    }[where]
    assert f"`{key}`: is {name!r}, a name every JavaScript object already has" in str(exc.value)


@pytest.mark.parametrize("name", ["__proto__", "constructor", "valueOf"])
@pytest.mark.parametrize("field", ["sample_id", "domains", "failure_modes", "eval_slices"])
def test_reserved_name_in_the_metadata_is_refused_naming_the_line(tmp_path, name, field):
    second = (
        prompt(name, subset="NoSearch")
        if field == "sample_id"
        else prompt("p2", subset="NoSearch", **{field: ["OK", name]})
    )
    cfg = _release(tmp_path, prompts=[PROMPTS[0], second])
    with pytest.raises(MetadataError) as exc:
        run_data(load_config(cfg), tmp_path / "out", progress=False)
    message = str(exc.value)
    assert "prompts.jsonl" in message and "line 2" in message
    assert f"is {name!r}, a name every JavaScript object already has" in message
    assert (field + ":") in message or field == "sample_id"
    assert not (tmp_path / "out").exists()


@pytest.mark.browser
def test_every_member_of_a_plain_object_is_reserved(browser, tmp_path):
    """The list is exactly what a plain JavaScript object answers to without owning it."""
    pg = Page(browser, _blank(tmp_path))
    members = pg.page.evaluate("() => Object.getOwnPropertyNames(Object.prototype)")
    assert set(members) == JS_RESERVED


def _blank(tmp_path):
    path = tmp_path / "blank.html"
    path.write_text("<!doctype html><title>blank</title>", encoding="utf-8")
    return path


@pytest.mark.browser
def test_rubric_dimensions_named_like_object_members_show_on_the_card(browser, tmp_path):
    """A result file's rubric dimensions ``__proto__`` and ``constructor`` are the judge's
    data: the card lists both with their scores (a plain object would drop ``__proto__``)."""
    parsed = {"rubric_scores": {"__proto__": 1, "constructor": 3}}
    models = {"a": model("A")}
    results = {("a", p["sample_id"]): result(SCORES, parsed=parsed) for p in PROMPTS}
    cfg = make_release(tmp_path / "src", PROMPTS, models, results)
    run_data(load_config(cfg), tmp_path / "data", progress=False)
    evidence = [
        json.loads(line)
        for line in (tmp_path / "data" / "prompt_evidence.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    assert evidence[0]["models"]["a"]["rubric"] == {"__proto__": 1, "constructor": 3}
    book = tmp_path / "book"
    write_card_assets(tmp_path / "data", book / "evidence")
    (book / "searchgen-nb.js").write_bytes(_script())
    page = book / "card" / "prompt_card.html"
    page.parent.mkdir()
    page.write_text(
        '<!doctype html><title>card</title><div id="sg-card" data-sg-base="../evidence/"></div>'
        '<script src="../evidence/index.js"></script><script src="../searchgen-nb.js"></script>',
        encoding="utf-8",
    )
    pg = Page(browser, page, query="id=p1")
    pg.page.wait_for_selector("table.sg-card-rubric")
    rows = pg.page.evaluate(
        "() => [...document.querySelectorAll('table.sg-card-rubric tbody tr')]"
        ".map(tr => [...tr.cells].map(td => td.textContent))"
    )
    assert rows == [["  proto  ", "1.0"], ["constructor", "3.0"]]
    assert pg.errors == []


def _script() -> bytes:
    from importlib.resources import files

    return files("searchgen_nb.book").joinpath("static/searchgen-nb.js").read_bytes()
