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
from searchgen_nb.pipeline import run_data
from searchgen_nb.prompts import read_prompts
from searchgen_nb.validate import validate_folder

PARSED = {
    "checklist_scores": [{"item": "a red\u202e kite", "score": 3}, {"item": "b", "score": 1},
                         "c as text", {"item": "x" * 400, "score": "N/A"}],
    "rubric_scores": {"image_quality": {"score": 2.5}, "text_rendering": {"score": ""},
                      "landmark_accuracy": {"score": 1}},
}
SCORES = {"checklist:0": 3, "checklist:1": 1, "rubric:image_quality": 2.5,
          "rubric:landmark_accuracy": 1}


def test_pair_evidence_reads_the_judges_parsed_answer():
    got = evidence.pair_evidence({"parsed": PARSED})
    assert got["checklist"][:3] == [{"item": "a red\\u202e kite", "score": 3.0},
                                    {"item": "b", "score": 1.0}, {"item": "c as text", "score": None}]
    assert len(got["checklist"][3]["item"]) == evidence.ITEM_MAX and got["checklist"][3]["score"] is None
    assert got["rubric"] == {"image_quality": 2.5, "text_rendering": None, "landmark_accuracy": 1.0}
    assert evidence.pair_evidence({"scores": {}}) is None
    assert evidence.pair_evidence({"parsed": "not an object"}) is None


@pytest.mark.parametrize("parsed,kept", [(PARSED, True),
                                         ({**PARSED, "rubric_scores": {"image_quality": 1}}, False)])
def test_a_judges_answer_that_contradicts_the_scores_is_a_warning(tmp_path, parsed, kept):
    path = tmp_path / "r.json"
    parsed = {**parsed, "checklist_scores": PARSED["checklist_scores"][:2]}  # mean 2.0 = checklist
    path.write_text(json.dumps({"success": True, "parsed": parsed, "scores": SCORES}))
    pair = classify_result(str(path), extract_components, ["*.png"])
    assert pair.status == "scored" and pair.components["checklist"] == 2.0
    assert (pair.evidence is not None) is kept
    assert any("disagrees with its scores" in w for w in pair.warnings) is not kept


def test_prompt_text_from_user_prompt_or_prompt(tmp_path):
    lines = [{"sample_id": "a", "user_prompt": "Draw\nit", "prompt": "ignored",
              "checklist": ["one", {"question": "two"}, 3]},
             {"bench_id": "b", "prompt": "p" * 3000}, {"sample_id": "c", "user_prompt": 7}]
    (tmp_path / "m.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    got = {p.sample_id: p.texts for p in read_prompts(tmp_path / "m.jsonl").prompts}
    assert got["a"] == {"text": "Draw\\nit", "checklist": ["one", "two", ""]}
    assert len(got["b"]["text"]) == evidence.TEXT_MAX and got["b"]["text"].endswith("…")
    assert got["c"] == {"text": None, "checklist": []}


def _png(size, noise=False) -> bytes:
    im = Image.new("RGB", size, (200, 40, 40))
    if noise:
        rng = random.Random(1)
        im.putdata([(rng.randrange(256), rng.randrange(256), rng.randrange(256))
                    for _ in range(size[0] * size[1])])
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def test_thumbnail_is_bounded_and_a_bad_image_is_refused():
    thumb = evidence.thumbnail(_png((900, 600), noise=True))
    assert len(thumb) <= evidence.THUMB_BYTES
    with Image.open(io.BytesIO(thumb)) as im:
        assert im.format == "WEBP" and max(im.size) == evidence.THUMB_PX
    bomb = io.BytesIO()
    Image.new("1", (10_000, 6_000)).save(bomb, "PNG")  # 60 M pixels, a few KB
    for data, why in ((b"\x89PNG\r\n\x1a\nbroken", "not a readable image"),
                      (bomb.getvalue(), "pixels, at most")):
        with pytest.raises(evidence.ThumbnailError, match=why):
            evidence.thumbnail(data)


def _release(tmp_path: Path, added: bool = False, **config) -> Path:
    """Two prompts × two models: b has nothing on p1, and its image on p2 is broken; ``added``:
    a third model c, scored on p1 with an image of its own."""
    prompts = [prompt("p1", user_prompt="A kite", checklist=["a red kite", "b"]),
               prompt("p2", prompt="Old field")]
    good = result(SCORES, parsed={**PARSED, "checklist_scores": PARSED["checklist_scores"][:2]})
    models = {"a": model("Model A"), "b": model("Model B"), **({"c": model("Model C")} if added else {})}
    pairs = {("a", "p1"): good, ("a", "p2"): good, ("b", "p2"): good, **({("c", "p1"): good} if added else {})}
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
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["thumbnails"]["n_files"] == 2 and manifest["thumbnails"]["enabled"] is True
    warning, = [w for w in manifest["extraction"]["warnings"] if w["check"] == "thumbnail"]
    assert warning["file"] == "rows/p2/none/model-b/image.png" and warning["model_id"] == "b"
    assert warning["message"] == "image skipped: not a readable image (UnidentifiedImageError)"
    again = run_data(load_config(tmp_path / "src/release.yml"), out, progress=False)  # ours: replaced
    assert again.report.passed
    (out / "thumbs" / "notes.txt").write_text("mine")
    with pytest.raises(ReleaseError, match="thumbs/notes.txt"):
        run_data(load_config(tmp_path / "src/release.yml"), out, progress=False)


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
    said = {w["file"]: w["message"] for w in manifest["extraction"]["warnings"]
            if w["check"] == "thumbnail"}
    assert said["rows/p1/none/model-a/image.png"] == (
        "image skipped: a link to a file outside results_root")


def test_an_added_model_renames_no_thumbnail(tmp_path):
    """A thumbnail is named by its content: a model added to a release renames nothing and
    changes no other model's entry."""
    first = run_data(load_config(_release(tmp_path / "1")), tmp_path / "d1", progress=False).out_dir
    cfg = load_config(_release(tmp_path / "2", added=True))
    second = run_data(cfg, tmp_path / "d2", progress=False).out_dir
    assert len(_thumbs(first)) == 2 and set(_thumbs(first)) < set(_thumbs(second))
    assert [{**p, "models": {m: e for m, e in p["models"].items() if m != "c"}}
            for p in _lines(second)] == _lines(first)


def test_thumbnails_can_be_turned_off(tmp_path):
    out = run_data(load_config(_release(tmp_path, evidence={"thumbnails": False})), tmp_path / "d",
                   progress=False).out_dir
    thumbs = json.loads((out / "manifest.json").read_text())["thumbnails"]
    assert thumbs["enabled"] is False and thumbs["n_files"] == 0
    assert not (out / "thumbs").exists()
    assert "thumbnail" not in (out / "prompt_evidence.jsonl").read_text()


def _edit(out: Path, change) -> None:
    lines = _lines(out)
    change(lines, out)
    path = out / "prompt_evidence.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["artifact_sha256"]["prompt_evidence.jsonl"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest))


ZERO = "thumbs/" + "0" * 32 + ".webp"


@pytest.mark.parametrize("change,said", [
    (lambda d, _: d[0]["models"]["a"]["checklist"][1].update(score=3), "line 1: sample_id p1, model a: checklist items average 3.0"),
    (lambda d, _: d[0]["models"]["a"]["checklist"][1].update(score=7), "line 1, sample_id p1, model a /models/a/checklist/1/score: 7 is greater than"),
    (lambda d, _: d[0]["models"].update(b={"rubric": {}}), "line 1: sample_id p1, model b: the judge's scores of a pair that is not scored"),
    (lambda d, _: d.pop(), "1 lines, prompt_scores.jsonl has 2 prompts"),
    (lambda d, _: d.reverse(), "line 1: sample_id p2 is not prompt 1 of prompt_scores.jsonl"),
    (lambda d, _: d[1]["models"]["a"].update(thumbnail=ZERO), f"thumbnail {ZERO}: No such file"),
    (lambda d, out: (out / ZERO).write_bytes(b"x"), f"thumbs/ holds 1 file(s) prompt_evidence.jsonl does not name, e.g. {ZERO}"),
    (lambda d, out: (out / d[0]["models"]["a"]["thumbnail"]).write_bytes(b"x"), "its name is not its sha256's first 32 hex digits"),
])
def test_gate_refuses_an_edited_evidence_file(tmp_path, change, said):
    out = run_data(load_config(_release(tmp_path)), tmp_path / "data", progress=False).out_dir
    _edit(out, change)
    report = validate_folder(out)
    check = report.checks["evidence"]
    assert not check["passed"] and said in check["failures"][0]["message"], check
    assert [n for n, c in report.checks.items() if not c["passed"]] == ["evidence"]


@pytest.mark.slow
def test_a_release_that_adds_nothing_publishes_the_same_evidence(demo_tree, demo_data, tmp_path):
    again = run_data(load_config(demo_tree.path / "release.yml"), tmp_path / "d", progress=False).out_dir
    assert (again / "prompt_evidence.jsonl").read_bytes() == (demo_data / "prompt_evidence.jsonl").read_bytes()
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

    pg = Page(browser, html / "book" / "prompt_card.html", query, viewport={"width": width, "height": 900})
    warnings: list[str] = []
    pg.page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    pg.page.wait_for_selector(".sg-card-models", timeout=15000)
    return pg, warnings


@pytest.mark.slow
@pytest.mark.browser
def test_prompt_card_in_browser(browser, demo_release):
    html = demo_release / "_build" / "html"
    records = {r["sample_id"]: r for r in map(json.loads, (demo_release / "public/data/prompt_scores.jsonl").open())}
    prompts = _lines(demo_release / "public/data")
    ev = next(p for p in prompts if '"' in p["text"]
              and all(m["status"] == "scored" for m in records[p["sample_id"]]["models"].values()))
    rec, word = records[ev["sample_id"]], ev["text"].split('"')[1]  # an invented word
    pg, warnings = _card(browser, html, f"id={rec['sample_id']}")
    card = pg.page.locator("#sg-card")
    assert ev["text"].startswith("[synthetic demo]") and ev["text"] in card.inner_text()
    row = pg.page.locator("table.sg-card-checklist tbody tr").first
    cells = row.locator("td").all_inner_texts()
    assert cells[0] == ev["checklist"][0] and len(cells) == 1 + len(rec["models"])
    assert all(re.fullmatch(r"[0-3]\.[05]", c) for c in cells[1:]), cells
    heads = pg.page.locator("table.sg-card-models thead th").all_inner_texts()
    assert heads[5:] == ["Checklist", "Rubric Adaptive", "Prompt Faithfulness", "Image Quality",
                         "Text Rendering", "AI Naturalness", "Composition & Aesthetics",
                         "Physical Plausibility", "Visual Reference", "Text Reference"]
    assert pg.page.evaluate("() => [...document.querySelectorAll('.sg-card-thumb img')].every(i => i.complete && i.naturalWidth > 0)")
    assert pg.page.locator(".sg-card-thumb img").count() == len(rec["models"])
    thumbs = json.loads((demo_release / "public/data/manifest.json").read_text())["thumbnails"]
    said = f"{thumbs['n_files']} files, {-(-thumbs['bytes'] // 1000)} KB in all"  # the demo's: 39, 21 KB
    assert said in pg.page.locator(".sg-card-weight").inner_text()
    assert pg.errors == [] and pg.external == [] and warnings == []
    # a pair without a score names its status and how it counts (a zero_fill model)
    lost = next(r for r in records.values() if r["models"]["dimlight_mini"]["status"] != "scored")
    pg, _ = _card(browser, html, f"id={lost['sample_id']}")
    status = pg.page.locator("table.sg-card-models tbody tr").last.locator("td").nth(2).inner_text()
    assert "counts 0 (missing policy zero_fill)" in status and "missing" in status, status
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
    # the explorer's search covers the prompt text
    other = Page(browser, html / "book/notebooks/10_prompts.html")
    other.page.wait_for_selector("#prompt-explorer[data-sg-ready]")
    other.page.locator("#prompt-explorer_wrapper .dt-search input").fill(word)
    other.page.wait_for_timeout(300)
    assert rec["sample_id"] in other.page.locator("#prompt-explorer tbody").inner_text()
