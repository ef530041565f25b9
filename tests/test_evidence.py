"""Prompt evidence (data contract, § Prompt evidence and thumbnails): the collector, the
thumbnails and their bounds, the gate's ``evidence`` check, and the book's prompt card."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import re
from pathlib import Path

import pytest
from factory import make_release, model, prompt, result
from PIL import Image

from searchgen_nb import evidence
from searchgen_nb.config import load_config
from searchgen_nb.errors import ReleaseError
from searchgen_nb.extract import classify_result, extract_components
from searchgen_nb.gate.checks import validate_folder
from searchgen_nb.pipeline import run_data
from searchgen_nb.prompts import read_prompts

PARSED = {
    "checklist_scores": [
        {"item": "a red\u202e kite", "score": 3},
        {"item": "b", "score": 1},
        "c as text",
        {"item": "x" * 400, "score": "N/A"},
    ],
    "rubric_scores": {
        "image_quality": {"score": 2.5},
        "text_rendering": {"score": ""},
        "landmark_accuracy": {"score": 1},
    },
}
SCORES = {
    "checklist:0": 3,
    "checklist:1": 1,
    "rubric:image_quality": 2.5,
    "rubric:landmark_accuracy": 1,
}


def test_pair_evidence_reads_the_judges_parsed_answer():
    got = evidence.pair_evidence({"parsed": PARSED})
    assert got["checklist"][:3] == [
        {"item": "a red\\u202e kite", "score": 3.0},
        {"item": "b", "score": 1.0},
        {"item": "c as text", "score": None},
    ]
    assert (
        len(got["checklist"][3]["item"]) == evidence.ITEM_MAX
        and got["checklist"][3]["score"] is None
    )
    assert got["rubric"] == {"image_quality": 2.5, "text_rendering": None, "landmark_accuracy": 1.0}
    assert evidence.pair_evidence({"scores": {}}) is None
    assert evidence.pair_evidence({"parsed": "not an object"}) is None


def test_the_judges_reasons_are_kept_bounded_in_their_escaped_form():
    parsed = {
        "checklist_scores": [
            {"item": "a", "score": 2, "reason": "half\nof it"},
            {"item": "b", "score": 1, "reason": 7},
        ],
        "rubric_scores": {
            "image_quality": {"score": 2.5, "reason": "\x1b" * 600},
            "text_rendering": {"score": ""},
        },
        "visual_reference_evaluation": {"score": 1, "reason": "no tower"},
        "text_reference_evaluation": "not an object",
    }
    got = evidence.pair_evidence({"parsed": parsed})
    assert got["checklist"] == [
        {"item": "a", "score": 2.0, "reason": "half\\nof it"},
        {"item": "b", "score": 1.0},
    ]  # a reason that is no string: none
    long = got["rubric_reasons"]["image_quality"]  # 600 ESC, 2,400 characters escaped
    assert long == "\\x1b" * 249 + "…"  # whole escapes within REASON_MAX (1,000), never cut
    assert set(got["rubric_reasons"]) == {"image_quality"}
    assert got["reference_reasons"] == {"visual_reference_evaluation": "no tower"}
    assert evidence.clip("ab\u200bcd", 5) == "ab…" and evidence.clip("abcd", 4) == "abcd"


def test_an_empty_reason_is_a_reason_and_a_score_outside_0_to_3_none():
    parsed = {
        "checklist_scores": [{"item": "a", "score": 3.5, "reason": ""}, "b", 7],
        "rubric_scores": {"image_quality": {"score": True, "reason": ""}, "x" * 70: 2},
        "visual_reference_evaluation": {"reason": ""},
    }
    got = evidence.pair_evidence({"parsed": parsed})
    assert got["checklist"] == [
        {"item": "a", "score": None, "reason": ""},
        {"item": "b", "score": None},
        {"item": "", "score": None},
    ]
    assert got["rubric"] == {"image_quality": None, "x" * 63 + "…": 2.0}
    assert got["rubric_reasons"] == {"image_quality": ""}
    assert got["reference_reasons"] == {"visual_reference_evaluation": ""}


@pytest.mark.parametrize(
    "parsed,kept", [(PARSED, True), ({**PARSED, "rubric_scores": {"image_quality": 1}}, False)]
)
def test_a_judges_answer_that_contradicts_the_scores_is_a_warning(tmp_path, parsed, kept):
    path = tmp_path / "r.json"
    parsed = {**parsed, "checklist_scores": PARSED["checklist_scores"][:2]}  # mean 2.0 = checklist
    path.write_text(json.dumps({"success": True, "parsed": parsed, "scores": SCORES}))
    pair = classify_result(str(path), extract_components, ["*.png"])
    assert pair.status == "scored" and pair.components["checklist"] == 2.0
    assert (pair.evidence is not None) is kept
    assert any("disagrees with its scores" in w for w in pair.warnings) is not kept


def test_prompt_text_from_user_prompt_or_prompt(tmp_path):
    lines = [
        {
            "sample_id": "a",
            "user_prompt": "Draw\nit",
            "prompt": "ignored",
            "checklist": ["one", {"question": "two"}, 3],
        },
        {"bench_id": "b", "prompt": "p" * 3000},
        {"sample_id": "c", "user_prompt": 7},
    ]
    (tmp_path / "m.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    got = {p.sample_id: p.texts for p in read_prompts(tmp_path / "m.jsonl").prompts}
    assert got["a"] == {"text": "Draw\\nit", "checklist": ["one", "two", ""]}
    assert len(got["b"]["text"]) == evidence.TEXT_MAX and got["b"]["text"].endswith("…")
    assert got["c"] == {"text": None, "checklist": []}


def _png(size, noise=False) -> bytes:
    im = Image.new("RGB", size, (200, 40, 40))
    if noise:
        rng = random.Random(1)
        im.putdata(
            [
                (rng.randrange(256), rng.randrange(256), rng.randrange(256))
                for _ in range(size[0] * size[1])
            ]
        )
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def test_preview_is_bounded_and_keeps_a_small_image_small():
    big = evidence.preview(_png((1024, 1024), noise=True))  # noise: the worst case for WebP
    with Image.open(io.BytesIO(big)) as im:
        assert im.format == "WEBP" and im.size == (evidence.PREVIEW_PX, evidence.PREVIEW_PX)
    assert len(big) <= evidence.PREVIEW_BYTES
    with Image.open(io.BytesIO(evidence.preview(_png((90, 60))))) as im:
        assert im.size == (90, 60)  # never enlarged


def test_the_preview_shows_what_the_judge_was_given_not_what_a_browser_shows():
    clear = Image.new("RGBA", (600, 600), (0, 0, 0, 0))
    clear.paste((220, 30, 30, 255), (200, 200, 400, 400))
    buf = io.BytesIO()
    clear.save(buf, "PNG")
    with Image.open(io.BytesIO(evidence.preview(buf.getvalue()))) as im:
        corner, middle = im.convert("RGB").getpixel((5, 5)), im.convert("RGB").getpixel((256, 256))
    assert max(corner) < 16 and middle[0] > 180  # transparency dropped: black, not white
    exif = Image.Exif()
    exif[0x0112] = 6  # EXIF orientation: turn 90° to show
    buf = io.BytesIO()
    Image.new("RGB", (800, 400), "white").save(buf, "JPEG", exif=exif.tobytes())
    with Image.open(io.BytesIO(evidence.preview(buf.getvalue()))) as im:
        assert im.size == (512, 256)  # as stored: the orientation is not applied


def test_thumbnail_is_bounded_and_a_bad_image_is_refused():
    thumb = evidence.thumbnail(_png((900, 600), noise=True))
    assert len(thumb) <= evidence.THUMB_BYTES
    with Image.open(io.BytesIO(thumb)) as im:
        assert im.format == "WEBP" and max(im.size) == evidence.THUMB_PX
    bomb = io.BytesIO()
    Image.new("1", (10_000, 6_000)).save(bomb, "PNG")  # 60 M pixels, a few KB
    for data, why in (
        (b"\x89PNG\r\n\x1a\nbroken", "not a readable image"),
        (bomb.getvalue(), "pixels, at most"),
    ):
        with pytest.raises(evidence.ThumbnailError, match=why):
            evidence.thumbnail(data)


def _release(tmp_path: Path, added: bool = False, **config) -> Path:
    """Two prompts × two models: b has nothing on p1, and its image on p2 is broken; ``added``:
    a third model c, scored on p1 with an image of its own."""
    prompts = [
        prompt("p1", user_prompt="A kite", checklist=["a red kite", "b"]),
        prompt("p2", prompt="Old field"),
    ]
    good = result(SCORES, parsed={**PARSED, "checklist_scores": PARSED["checklist_scores"][:2]})
    models = {
        "a": model("Model A"),
        "b": model("Model B"),
        **({"c": model("Model C")} if added else {}),
    }
    pairs = {
        ("a", "p1"): good,
        ("a", "p2"): good,
        ("b", "p2"): good,
        **({("c", "p1"): good} if added else {}),
    }
    cfg = make_release(tmp_path / "src", prompts, models, pairs, **config)
    root = tmp_path / "src" / "results" / "rows"
    (root / "p1" / "none" / "model-a" / "image.png").write_bytes(_png((400, 300)))
    (root / "p2" / "none" / "model-b" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\nbroken")
    if added:
        (root / "p1" / "none" / "model-c" / "image.png").write_bytes(_png((90, 90), noise=True))
    return cfg


def _lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "prompt_evidence.jsonl").open()]


def _thumbs(out: Path) -> list[str]:
    return sorted(os.listdir(out / "thumbs"))


def test_release_publishes_evidence_and_thumbnails(tmp_path):
    out = run_data(load_config(_release(tmp_path)), tmp_path / "data", progress=False).out_dir
    p1, p2 = _lines(out)
    assert (p1["text"], p1["checklist"], p2["text"]) == ("A kite", ["a red kite", "b"], "Old field")
    assert set(p1["models"]) == {"a"}  # b has no pair on p1 (missing_generation)
    assert p1["models"]["a"]["checklist"][0] == {"item": "a red\\u202e kite", "score": 3.0}
    thumb = (out / p1["models"]["a"]["thumbnail"]).read_bytes()
    assert p1["models"]["a"]["thumbnail"] == f"thumbs/{hashlib.sha256(thumb).hexdigest()[:32]}.webp"
    assert len(thumb) <= evidence.THUMB_BYTES and "thumbnail" not in p2["models"]["b"]
    preview = (out / p1["models"]["a"]["preview"]).read_bytes()
    assert (
        p1["models"]["a"]["preview"] == f"previews/{hashlib.sha256(preview).hexdigest()[:32]}.webp"
    )
    with Image.open(io.BytesIO(preview)) as im:
        assert im.size == (400, 300)  # within 512 px: as it is
    assert "preview" not in p2["models"]["b"] and "image" not in p1["models"]["a"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["thumbnails"]["n_files"] == 2 and manifest["thumbnails"]["enabled"] is True
    sizes = [f.stat().st_size for f in (out / "previews").iterdir()]
    assert manifest["previews"] == {
        "enabled": True,
        "n_files": 2,
        "bytes": sum(sizes),
        "sha256": manifest["previews"]["sha256"],
        "max_bytes": 131_072,
        "max_px": 512,
    }
    (warning,) = [w for w in manifest["extraction"]["warnings"] if w["check"] == "thumbnail"]
    assert warning["file"] == "rows/p2/none/model-b/image.png" and warning["model_id"] == "b"
    assert warning["message"] == "image skipped: not a readable image (UnidentifiedImageError)"
    again = run_data(
        load_config(tmp_path / "src/release.yml"), out, progress=False
    )  # ours: replaced
    assert again.report.passed
    (out / "thumbs" / "notes.txt").write_text("mine")
    with pytest.raises(ReleaseError, match="thumbs/notes.txt"):
        run_data(load_config(tmp_path / "src/release.yml"), out, progress=False)


def test_the_card_shows_a_pair_without_a_score_as_the_tables_do(tmp_path):
    from searchgen_nb.book import fmt
    from searchgen_nb.book.cards import card_data
    from searchgen_nb.book.views import Release

    out = run_data(load_config(_release(tmp_path)), tmp_path / "data", progress=False).out_dir
    p1 = card_data(Release(out))[0]
    assert p1["models"]["a"]["counts"] is None  # scored: its numbers are shown
    counts = p1["models"]["b"]["counts"]  # missing_generation under zero_fill
    assert counts == [
        "0 · no image",
        "missing generation · counts 0 (missing policy zero_fill)",
        "sg-zero",
        "counts 0 (missing policy zero_fill)",
    ]
    cell = fmt.pair_cell(None, "missing_generation", "zero_fill")
    assert [cell.text, cell.title, cell.cls] == counts[:3]
    excluded = fmt.unscored_cell("invalid_evaluation", "exclude", "=bad")
    shown = fmt.pair_cell(None, "invalid_evaluation", "exclude", 1, "=bad")
    assert excluded[3] == "excluded: left out of every mean (missing policy exclude)"
    assert shown.title == excluded[1] + "; sorts last" and shown.text == excluded[0]


def test_an_image_linked_outside_results_root_gets_no_thumbnail(tmp_path):
    """As a result file, the image must lie below results_root: a link to a file elsewhere
    (here the user's own photo) is not published, and a warning names it."""
    cfg = _release(tmp_path)
    image = tmp_path / "src" / "results" / "rows" / "p1" / "none" / "model-a" / "image.png"
    image.rename(tmp_path / "private.png")
    image.symlink_to(tmp_path / "private.png")
    out = run_data(load_config(cfg), tmp_path / "data", progress=False).out_dir
    assert "thumbnail" not in _lines(out)[0]["models"]["a"]
    private = hashlib.sha256(evidence.thumbnail((tmp_path / "private.png").read_bytes()))
    assert f"{private.hexdigest()[:32]}.webp" not in _thumbs(out)
    manifest = json.loads((out / "manifest.json").read_text())
    said = {
        w["file"]: w["message"]
        for w in manifest["extraction"]["warnings"]
        if w["check"] == "thumbnail"
    }
    assert said["rows/p1/none/model-a/image.png"] == (
        "image skipped: a link to a file outside results_root"
    )


def test_an_added_model_renames_no_thumbnail(tmp_path):
    """A thumbnail is named by its content: a model added to a release renames nothing and
    changes no other model's entry."""
    first = run_data(load_config(_release(tmp_path / "1")), tmp_path / "d1", progress=False).out_dir
    cfg = load_config(_release(tmp_path / "2", added=True))
    second = run_data(cfg, tmp_path / "d2", progress=False).out_dir
    assert len(_thumbs(first)) == 2 and set(_thumbs(first)) < set(_thumbs(second))
    assert [
        {**p, "models": {m: e for m, e in p["models"].items() if m != "c"}} for p in _lines(second)
    ] == _lines(first)


def test_thumbnails_can_be_turned_off(tmp_path):
    out = run_data(
        load_config(_release(tmp_path, evidence={"thumbnails": False})),
        tmp_path / "d",
        progress=False,
    ).out_dir
    thumbs = json.loads((out / "manifest.json").read_text())["thumbnails"]
    assert thumbs["enabled"] is False and thumbs["n_files"] == 0
    assert not (out / "thumbs").exists() and not (out / "previews").exists()
    assert "thumbnail" not in (out / "prompt_evidence.jsonl").read_text()
    assert "preview" not in (out / "prompt_evidence.jsonl").read_text()


def test_image_base_url_names_each_image_below_the_results(tmp_path):
    url = "https://images.example.org/searchgen/"
    out = run_data(
        load_config(_release(tmp_path, evidence={"image_base_url": url})),
        tmp_path / "d",
        progress=False,
    ).out_dir
    assert _lines(out)[0]["models"]["a"]["image"] == "rows/p1/none/model-a/image.png"
    assert json.loads((out / "manifest.json").read_text())["previews"]["image_base_url"] == url
    from searchgen_nb.errors import ConfigError

    with pytest.raises(ConfigError, match="image_base_url"):
        load_config(_release(tmp_path / "bad", evidence={"image_base_url": "javascript:alert(1)"}))


def _edit(out: Path, change) -> None:
    lines = _lines(out)
    change(lines, out)
    path = out / "prompt_evidence.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["artifact_sha256"]["prompt_evidence.jsonl"] = hashlib.sha256(
        path.read_bytes()
    ).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest))


ZERO = "thumbs/" + "0" * 32 + ".webp"


@pytest.mark.parametrize(
    "change,said",
    [
        (
            lambda d, _: d[0]["models"]["a"]["checklist"][1].update(score=3),
            "line 1: sample_id p1, model a: checklist items average 3.0",
        ),
        (
            lambda d, _: d[0]["models"]["a"]["checklist"][1].update(score=7),
            "line 1, sample_id p1, model a /models/a/checklist/1/score: 7 is greater than",
        ),
        (
            lambda d, _: d[0]["models"].update(b={"rubric": {}}),
            "line 1: sample_id p1, model b: the judge's scores of a pair that is not scored",
        ),
        (
            lambda d, _: d[0]["models"].update(b={"rubric_reasons": {"x": "y"}}),
            "line 1: sample_id p1, model b: the judge's reasons of a pair that is not scored",
        ),
        (
            lambda d, _: d[0]["models"]["a"].pop("preview"),
            "line 1: sample_id p1, model a: a thumbnail without its preview",
        ),
        (
            lambda d, _: d[0]["models"]["a"]["checklist"][0].update(reason="r" * 1001),
            "/models/a/checklist/0/reason",
        ),
        (
            lambda d, out: (out / d[0]["models"]["a"]["preview"]).write_bytes(b"x"),
            "preview previews/",
        ),
        (lambda d, _: d.pop(), "1 lines, prompt_scores.jsonl has 2 prompts"),
        (lambda d, _: d.reverse(), "line 1: sample_id p2 is not prompt 1 of prompt_scores.jsonl"),
        (
            lambda d, _: d[1]["models"]["a"].update(thumbnail=ZERO),
            f"thumbnail {ZERO}: No such file",
        ),
        (
            lambda d, out: (out / ZERO).write_bytes(b"x"),
            f"thumbs/ holds 1 file(s) prompt_evidence.jsonl does not name, e.g. {ZERO}",
        ),
        (
            lambda d, out: (out / d[0]["models"]["a"]["thumbnail"]).write_bytes(b"x"),
            "its name is not its sha256's first 32 hex digits",
        ),
    ],
)
def test_gate_refuses_an_edited_evidence_file(tmp_path, change, said):
    out = run_data(load_config(_release(tmp_path)), tmp_path / "data", progress=False).out_dir
    _edit(out, change)
    report = validate_folder(out)
    check = report.checks["evidence"]
    assert not check["passed"] and said in check["failures"][0]["message"], check
    assert [n for n, c in report.checks.items() if not c["passed"]] == ["evidence"]


@pytest.mark.slow
def test_a_release_that_adds_nothing_publishes_the_same_evidence(demo_tree, demo_data, tmp_path):
    again = run_data(
        load_config(demo_tree.path / "release.yml"), tmp_path / "d", progress=False
    ).out_dir
    assert (again / "prompt_evidence.jsonl").read_bytes() == (
        demo_data / "prompt_evidence.jsonl"
    ).read_bytes()
    assert _thumbs(again) == _thumbs(demo_data) and len(_thumbs(again)) == 39  # distinct images


@pytest.mark.slow
def test_a_changed_score_changes_exactly_the_lines_of_its_prompt(demo_data, changed_data):
    def changed(name: str) -> set[str]:
        pairs = zip((demo_data / name).open(), (changed_data / name).open(), strict=True)
        return {json.loads(a)["sample_id"] for a, b in pairs if a != b}

    assert changed("prompt_evidence.jsonl") == changed("prompt_scores.jsonl")
    assert len(changed("prompt_evidence.jsonl")) == 7  # 5 lowered, 2 lost (profile.json, changed)
    assert _thumbs(demo_data) == _thumbs(changed_data)


# ---- the book's prompt card (the demo release) -------------------------------------------


def _card(browser, html: Path, query: str, width: int = 1400):
    from browser import Page

    pg = Page(
        browser, html / "book" / "prompt_card.html", query, viewport={"width": width, "height": 900}
    )
    warnings: list[str] = []
    pg.page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    pg.page.wait_for_selector(".sg-card-models", timeout=15000)
    return pg, warnings


@pytest.mark.slow
@pytest.mark.browser
def test_prompt_card_in_browser(browser, demo_release):
    html = demo_release / "_build" / "html"
    records = {
        r["sample_id"]: r
        for r in map(json.loads, (demo_release / "public/data/prompt_scores.jsonl").open())
    }
    prompts = _lines(demo_release / "public/data")
    ev = next(
        p
        for p in prompts
        if '"' in p["text"]
        and all(m["status"] == "scored" for m in records[p["sample_id"]]["models"].values())
    )
    rec, word = records[ev["sample_id"]], ev["text"].split('"')[1]  # an invented word
    pg, warnings = _card(browser, html, f"id={rec['sample_id']}")
    card = pg.page.locator("#sg-card")
    assert ev["text"].startswith("[synthetic demo]") and ev["text"] in card.inner_text()
    row = pg.page.locator("table.sg-card-checklist tbody tr").first
    cells = row.locator("td").all_inner_texts()
    assert cells[0] == ev["checklist"][0] and len(cells) == 1 + len(rec["models"])
    assert all(re.fullmatch(r"[0-3]\.[05]", c) for c in cells[1:]), cells
    heads = pg.page.locator("table.sg-card-models thead th").all_inner_texts()
    assert heads[5:] == [
        "Checklist",
        "Rubric Adaptive",
        "Prompt Faithfulness",
        "Image Quality",
        "Text Rendering",
        "AI Naturalness",
        "Composition & Aesthetics",
        "Physical Plausibility",
        "Visual Reference",
        "Text Reference",
    ]
    assert pg.page.evaluate(
        "() => [...document.querySelectorAll('.sg-card-thumb img')].every(i => i.complete && "
        "i.naturalWidth > 0)"
    )
    assert pg.page.locator(".sg-card-thumb img").count() == len(rec["models"])
    thumbs = json.loads((demo_release / "public/data/manifest.json").read_text())["thumbnails"]
    # the demo's: 39 files, 21 KB
    said = f"{thumbs['n_files']} files, {-(-thumbs['bytes'] // 1000)} KB in all"
    assert said in pg.page.locator(".sg-card-weight").inner_text()
    # each model's preview, side by side, and the judge's reasons beside its scores
    figures = pg.page.locator(".sg-card-gallery figure")
    assert figures.count() == len(rec["models"])
    assert pg.page.evaluate(
        "() => [...document.querySelectorAll('.sg-card-figure img')].every(i => i.complete && "
        "i.naturalWidth > 0)"
    )
    first = next(iter(pg.page.evaluate("() => window.SGEvidence.index.models")))[0]
    item = ev["models"][first]["checklist"][0]
    met = (
        "Fully"
        if item["score"] == 3
        else "Mostly"
        if item["score"] >= 2
        else "Partly"
        if item["score"] >= 1
        else "Not"
    )
    assert item["reason"] == f"[synthetic demo] {met} met ({item['score']:g}/3): {item['item']}."
    pg.page.locator(".sg-card-thumb a").first.click()  # the thumbnail opens the model's figure
    reasons = figures.first.locator("details.sg-card-reasons")
    assert reasons.get_attribute("open") is not None
    row = reasons.locator("tbody tr").first.locator("td").all_inner_texts()
    assert row == [item["item"], f"{item['score']:.1f}", item["reason"]]
    assert pg.errors == [] and pg.external == [] and warnings == []
    # a pair without a score names its status and how it counts, in every cell (zero_fill)
    lost = next(
        r
        for r in records.values()
        if r["models"]["dimlight_mini"]["status"] == "missing_generation"
    )
    pg, _ = _card(browser, html, f"id={lost['sample_id']}")
    cells = pg.page.locator("table.sg-card-models tbody tr").last.locator("td").all_inner_texts()
    assert "counts 0 (missing policy zero_fill)" in cells[2] and "missing" in cells[2], cells
    assert cells[3:] == ["0 · no image"] * 12 and "N/A" not in cells
    # … and under exclude
    out = next(
        r
        for r in records.values()
        if r["models"]["glintframe_pro"]["status"] == "invalid_evaluation"
    )
    pg, _ = _card(browser, html, f"id={out['sample_id']}")
    names = pg.page.locator("table.sg-card-models tbody tr td:first-child").all_inner_texts()
    row = pg.page.locator("table.sg-card-models tbody tr").nth(names.index("Glintframe Pro"))
    cells = row.locator("td").all_inner_texts()
    assert cells[3:] == ["invalid · excluded"] * 12, cells
    assert "invalid evaluation: " in row.locator("td").nth(3).get_attribute("title")
    # a heatmap cell's list (the explorer filtered to a domain) links to cards of that domain
    tag = rec["domains"][0]
    from browser import Page

    lst = Page(browser, html / "book/notebooks/10_prompts.html", f"domain={tag}&model=marrowleaf")
    lst.page.wait_for_selector("#prompt-explorer[data-sg-ready]")
    lst.page.locator("#prompt-explorer tbody a").first.click()
    lst.page.wait_for_selector(".sg-card-models", timeout=15000)
    assert f"tag={tag}" in lst.page.url
    assert "this prompt is one of them" in lst.page.locator(".sg-card-from").inner_text()
    assert lst.page.locator(".sg-card-this").first.inner_text() == tag and lst.errors == []
    # the explorer shows each prompt's text on one line, and its search covers it
    other = Page(browser, html / "book/notebooks/10_prompts.html")
    other.page.wait_for_selector("#prompt-explorer[data-sg-ready]")
    head = other.page.locator("#prompt-explorer thead th").all_inner_texts()
    assert head[:2] == ["sample_id", "Prompt"]
    top = other.page.locator("#prompt-explorer tbody tr").first.locator("td").all_inner_texts()
    text = next(p["text"] for p in prompts if p["sample_id"] == top[0])
    assert top[1] == (text if len(text) <= 60 else text[:59] + "…") and top[1].startswith(
        "[synthetic demo] "
    )
    other.page.locator("#prompt-explorer_wrapper .dt-search input").fill(word)
    other.page.wait_for_timeout(300)
    assert rec["sample_id"] in other.page.locator("#prompt-explorer tbody").inner_text()


@pytest.mark.slow
@pytest.mark.browser
def test_search_from_disk_opens_a_prompts_card(browser, demo_release):
    """The book's search works from disk without a console error, and a sample_id searched opens
    its card."""
    from browser import Page

    html = demo_release / "_build" / "html"
    pg = Page(browser, html / "search.html", "q=leaderboard")
    pg.page.wait_for_selector("#search-results ul.search li", timeout=15000)
    assert "Leaderboard" in pg.page.locator("#search-results").inner_text()
    pg.page.wait_for_timeout(300)
    assert (pg.errors, pg.external) == ([], [])
    card = Page(browser, html / "search.html", "q=sgb_vis_0284")
    card.page.wait_for_url("**/book/prompt_card.html?id=sgb_vis_0284")
    card.page.wait_for_selector(".sg-card-models", timeout=15000)
    assert card.page.locator(".sg-card-id").inner_text() == "sgb_vis_0284" and card.errors == []


def test_the_demo_judges_reasons_agree_with_its_scores():
    from searchgen_nb.demo.evidence import judge_reason

    assert (
        judge_reason(3.0, "The text is spelled as given")
        == "[synthetic demo] Fully met (3/3): The text is spelled as given."
    )
    assert judge_reason(1.5, "x").startswith("[synthetic demo] Partly met (1.5/3)")
    assert judge_reason(0.5, "x").startswith("[synthetic demo] Not met (0.5/3)")
    assert judge_reason(None, "text rendering").startswith("[synthetic demo] Not applicable")


def test_the_thumbnail_warnings_come_by_prompt_then_model(tmp_path):
    """The warnings of images that give no thumbnail are listed prompt by prompt, each
    prompt's in the models' order, however the result files were read."""
    cfg = _release(tmp_path, added=True)
    root = tmp_path / "src" / "results" / "rows"
    for folder in ("p1/none/model-c", "p2/none/model-a"):
        (root / folder / "image.png").write_bytes(b"\x89PNG\r\n\x1a\nbroken")
    out = run_data(load_config(cfg), tmp_path / "data", progress=False).out_dir
    manifest = json.loads((out / "manifest.json").read_text())
    said = [
        (w["sample_id"], w["model_id"])
        for w in manifest["extraction"]["warnings"]
        if w["check"] == "thumbnail"
    ]
    assert said == [("p1", "c"), ("p2", "a"), ("p2", "b")]
