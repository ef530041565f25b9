"""The synthetic demo release (searchgen_nb.demo), checked from the files it writes.

Every check here re-derives its figure from the written tree with its own code (the partition
rule, status classification, Overall-10), never from the generator's internals.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from paths import FIXTURES

from searchgen_nb import demo
from searchgen_nb.config import load_config, project_root
from searchgen_nb.declaration import COMPONENTS, GENERIC_RUBRIC

ROOT = project_root()
RESULT_FILE = "augmented_parsed_result_ffjudge_pp.json"
GENERIC = GENERIC_RUBRIC
REFS = ("visual_reference_evaluation", "text_reference_evaluation")

# Published v1.0 sizes, pinned here and checked against the published taxonomy
# (FIXTURES / taxonomy.json).
DOMAIN_COUNTS = {
    "ABS": 14, "ARC": 190, "ART": 258, "COM": 91, "CUL": 170, "EDU": 124, "FAS": 23, "FOO": 35,
    "GAM": 70, "HIS": 103, "INF": 31, "MED": 75, "MIL": 6, "MUS": 27, "OBJ": 38, "OTH": 6,
    "PEO": 90, "PSY": 4, "SCI": 148, "SPO": 59, "TEC": 106, "TXT": 117,
}  # fmt: skip
FAILURE_MODE_COUNTS = {
    "CCS": 534, "CS": 159, "CSV": 281, "DVZ": 118, "EIK": 419, "FHA": 273, "IRR": 30,
    "THG": 411, "TK-C": 38, "TK-R": 56, "VUA": 33, "VUR": 185,
}  # fmt: skip
PARTITION = {"NoSearch": 100, "SearchIntensive": 651, "VisualSearch": 387, "TextualSearch": 264}

# Real model names (v1.0 manifest plus other well-known generators) that must never appear.
KNOWN_REAL = {
    "dall", "midjourney", "stable", "sdxl", "ideogram", "firefly", "kolors", "hunyuan", "lumina",
    "pixart", "recraft", "aurora", "hidream", "cogview", "janus", "kandinsky", "playground",
    "dreamina", "omnigen", "flux", "gemini", "imagen", "qwen", "seedream", "bagel", "grok", "gpt",
}  # fmt: skip
GENERIC_NAME_WORDS = {"image", "imagine", "pro", "fast", "flash", "nano"}


# ---------------------------------------------------------------------------------------
# Independent readers of the written tree
# ---------------------------------------------------------------------------------------
def partition_of(prompt: dict) -> str:
    """The partition (data contract, § Prompt metadata and the partition), written out again."""
    if prompt["subset"] == "NoSearch":
        return "NoSearch"
    sid = prompt["sample_id"]
    return "TextualSearch" if "texthard" in sid or "text_rendering" in sid else "VisualSearch"


def classify(folder: Path) -> tuple[str, str | None, dict | None]:
    """(status, invalid reason, scores) of one prompt × model folder (data contract, § Status of
    a prompt × model pair)."""
    path = folder / RESULT_FILE
    if not path.exists():
        has_image = folder.is_dir() and any(folder.glob("*.png"))
        return ("missing_evaluation" if has_image else "missing_generation"), None, None
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return "invalid_evaluation", "not_json", None
    if not isinstance(obj, dict):
        return "invalid_evaluation", "not_object", None
    if obj.get("success") is not True:
        return "invalid_evaluation", "success_not_true", None
    scores = obj.get("scores")
    if not isinstance(scores, dict) or not scores:
        return "invalid_evaluation", "no_scores", None
    for value in scores.values():
        if isinstance(value, bool):
            return "invalid_evaluation", "boolean", None
        if not isinstance(value, (int, float)):
            return "invalid_evaluation", "non_numeric", None
        if math.isnan(value):
            return "invalid_evaluation", "nan", None
        if math.isinf(value):
            return "invalid_evaluation", "infinite", None
        if not 0 <= value <= 3:
            return "invalid_evaluation", "out_of_range", None
    keys_ok = all(k.startswith(("checklist:", "rubric:")) or k in REFS for k in scores)
    assert keys_ok, f"unexpected score key in {path}"
    return "scored", None, scores


def components(scores: dict) -> dict[str, Fraction | None]:
    """The 10 components of a scored result (data contract, § The ten components, Overall-9 and
    Overall-10)."""
    checklist = [Fraction(v) for k, v in scores.items() if k.startswith("checklist:")]
    adaptive = [
        Fraction(v)
        for k, v in scores.items()
        if k.startswith("rubric:") and k[len("rubric:") :] not in GENERIC
    ]
    out: dict[str, Fraction | None] = {
        "checklist": sum(checklist) / len(checklist) if checklist else None,
        "rubric_adaptive": sum(adaptive) / len(adaptive) if adaptive else None,
    }
    for dim in GENERIC:
        out[dim] = Fraction(scores[f"rubric:{dim}"]) if f"rubric:{dim}" in scores else None
    for ref in REFS:
        out[ref] = Fraction(scores[ref]) if ref in scores else None
    return out


def half_up_public(raw: Fraction) -> float:
    scaled = raw * 1000 / 3  # ×100/3, one decimal
    return float(Decimal(math.floor(scaled + Fraction(1, 2))) / 10)


# ---------------------------------------------------------------------------------------
# The session's demo (conftest.demo_tree, written once), read back for the whole module
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def release(demo_tree):
    """The demo as written: config, prompts and every pair's result file classified."""
    out = demo_tree.path
    config = yaml.safe_load((out / "release.yml").read_text(encoding="utf-8"))
    lines = (out / "prompts.jsonl").read_text(encoding="utf-8").splitlines()
    prompts = [json.loads(line) for line in lines]

    def pair(p, m):
        return classify(out / "results" / p["release_row"] / m["lane"] / m["source_id"])

    models = config["models"].items()
    results = {model_id: {p["sample_id"]: pair(p, m) for p in prompts} for model_id, m in models}
    summary = demo_tree.summary
    return {
        "out": out,
        "summary": summary,
        "config": config,
        "prompts": prompts,
        "results": results,
    }


# ---------------------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_prompt_lines_have_the_metadata_fields(release):
    prompts = release["prompts"]
    assert len(prompts) == 751
    keys = {
        "sample_id",
        "release_row",
        "subset",
        "domains",
        "failure_modes",
        "difficulty",
        "language",
        "generation_task_type",
        "is_miniset",
        "eval_slices",
        "user_prompt",
        "checklist",
    }  # fmt: skip  (the last two: the prompt evidence)
    assert all(set(p) == keys for p in prompts)
    assert all(p["user_prompt"].startswith("[synthetic demo] ") and p["checklist"] for p in prompts)
    ids = [p["sample_id"] for p in prompts]
    assert len(set(ids)) == 751
    assert all(re.fullmatch(r"sgb_[a-z_]+_\d{4}", sid) for sid in ids)
    assert all(p["release_row"] == f"evalset_rows/{p['sample_id']}" for p in prompts)
    assert ids != sorted(ids), "lines must be shuffled so that order-invariance is exercised"
    assert {p["subset"] for p in prompts} == {"NoSearch", "SearchIntensive"}
    assert {p["difficulty"] for p in prompts} == {"easy", "medium", "hard"}
    languages = Counter(p["language"] for p in prompts)
    assert set(languages) == {"en", "zh"} and 0 < languages["zh"] < 50
    assert 3 <= len({p["generation_task_type"] for p in prompts}) <= 8
    assert Counter(p["is_miniset"] for p in prompts)[True] == 75
    # Every line is sorted-keys JSON.
    for line in (release["out"] / "prompts.jsonl").read_text(encoding="utf-8").splitlines():
        assert line == json.dumps(json.loads(line), sort_keys=True)


@pytest.mark.slow
def test_partition_through_the_rule(release):
    counts = Counter(partition_of(p) for p in release["prompts"])
    counts["SearchIntensive"] = counts["VisualSearch"] + counts["TextualSearch"]
    assert dict(counts) == PARTITION
    assert release["summary"]["partition"] == PARTITION
    assert release["config"]["expected"]["partition"] == PARTITION
    # Ids that contain "texthard" but are NoSearch must stay NoSearch; both textual stems occur.
    nosearch_texthard = [
        p for p in release["prompts"] if p["subset"] == "NoSearch" and "texthard" in p["sample_id"]
    ]
    assert nosearch_texthard and all(partition_of(p) == "NoSearch" for p in nosearch_texthard)
    textual = [p["sample_id"] for p in release["prompts"] if partition_of(p) == "TextualSearch"]
    assert any("text_rendering" in s for s in textual) and any("texthard" in s for s in textual)


@pytest.mark.slow
def test_tag_counts_equal_the_published_taxonomy(release):
    prompts = release["prompts"]
    for p in prompts:
        assert 1 <= len(p["domains"]) and len(set(p["domains"])) == len(p["domains"])
        assert len(set(p["failure_modes"])) == len(p["failure_modes"])
    assert Counter(t for p in prompts for t in p["domains"]) == DOMAIN_COUNTS
    assert Counter(t for p in prompts for t in p["failure_modes"]) == FAILURE_MODE_COUNTS


def test_pinned_sizes_are_the_published_taxonomy():
    published = (FIXTURES / "taxonomy.json").read_bytes()
    tax = json.loads(published)
    assert {k: v["n_prompts_v1.0"] for k, v in tax["domains"].items()} == DOMAIN_COUNTS
    assert {k: v["n_prompts_v1.0"] for k, v in tax["failure_modes"].items()} == FAILURE_MODE_COUNTS
    assert {k: v for k, v in tax["partition_v1.0"].items() if k != "All"} == PARTITION
    # The copy the package ships (and the demo generator reads) is the published file itself.
    assert (ROOT / "searchgen_nb" / "data" / "taxonomy.json").read_bytes() == published


def test_demo_data_names_only_real_components_tags_and_models():
    """profile.json and roster.json (the demo's tuned numbers) name only what exists."""
    profile, domains, modes = demo.PROFILE, set(DOMAIN_COUNTS), set(FAILURE_MODE_COUNTS)
    prompts, tags = profile["prompts"], profile["tags"]
    assert set(tags["domain_effect"]) == set(prompts["adaptive_by_domain"]) == domains
    assert set(tags["failure_mode_effect"]) == modes
    named = {*prompts["tag_affinity"], *tags["knowledge_tags"], *tags["text_tags"]}
    assert named | set(tags["imaginative_tags"]) <= domains | modes
    assert tuple(profile["scores"]["component_bias"]) == COMPONENTS
    used = {*prompts["applicability"], *tags["looks_components"], *profile["scores"]["droppable"]}
    assert used <= set(COMPONENTS)
    assert set(prompts["task_type_weights"]) == {kind for kind, *_ in prompts["kinds"]}
    assert sum(n for *_, n in prompts["kinds"]) == sum(prompts["difficulty_counts"].values()) == 751
    for m in demo.ROSTER:
        assert set(m["profile"]["offsets"]) <= set(COMPONENTS), m["model_id"]
        assert m["profile"]["weak_domain"] in domains, m["model_id"]
        assert set(m["statuses"]) == set(demo.STATUSES) - {"scored"}, m["model_id"]
    changed = profile["changed"]
    named = {profile["results"]["text_reference_only_model"], changed["lower"]["model"]}
    named.add(changed["lost"]["model"])
    assert named <= {m["model_id"] for m in demo.ROSTER} and changed["lower"]["domain"] in domains


# ---------------------------------------------------------------------------------------
# Models and results
# ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_no_real_model_names(release):
    names = set(KNOWN_REAL)
    manifest = FIXTURES / "published" / "v1.0" / "manifest.json"
    published_models = json.loads(manifest.read_text(encoding="utf-8"))["models"]
    assert len(published_models) == 13
    for model_id, m in published_models.items():
        for text in (model_id, m["display_name"], m["source_id"]):
            names |= {
                w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3
            } - GENERIC_NAME_WORDS
    assert {
        "gemini",
        "banana",
        "seedream",
        "klein",
        "qwen",
        "grok",
        "xai",
        "bagel",
        "jimeng",
    } <= names
    for model_id, m in release["config"]["models"].items():
        for text in (model_id, m["display_name"], m["source_id"]):
            hits = [n for n in names if n in text.lower()]
            assert not hits, f"{text!r} contains a real model name {hits}"


@pytest.mark.slow
def test_roster_policies_types_and_coverage(release):
    models = release["config"]["models"]
    assert len(models) == 13
    assert sorted(m["missing_policy"] for m in models.values()).count("exclude") == 2
    assert {m["missing_policy"] for m in models.values()} == {"zero_fill", "exclude"}
    assert {m["type"] for m in models.values()} == {"Open", "Commercial"}
    assert len({m["source_id"] for m in models.values()}) == 13
    coverage = {
        mid: sum(s[0] == "scored" for s in by_prompt.values()) / 751
        for mid, by_prompt in release["results"].items()
    }
    assert sum(c == 1 for c in coverage.values()) >= 3
    assert sum(0.95 <= c < 1 for c in coverage.values()) >= 6
    assert sum(0.60 <= c <= 0.65 for c in coverage.values()) == 1
    assert all(c >= 0.95 or 0.60 <= c <= 0.65 for c in coverage.values())


@pytest.mark.slow
def test_every_status_and_every_broken_file_kind(release):
    statuses = Counter(
        s[0] for by_prompt in release["results"].values() for s in by_prompt.values()
    )
    assert set(statuses) == {
        "scored",
        "invalid_evaluation",
        "missing_evaluation",
        "missing_generation",
    }
    reasons = {
        s[1] for by_prompt in release["results"].values() for s in by_prompt.values() if s[1]
    }
    assert reasons == {"not_json", "not_object", "success_not_true", "no_scores", "boolean",
                       "non_numeric", "nan", "infinite", "out_of_range"}  # fmt: skip
    # NaN and Infinity are written as the bare JSON-extension tokens.
    texts = [p.read_text(encoding="utf-8") for p in (release["out"] / "results").rglob(RESULT_FILE)]
    assert any(re.search(r": NaN[,}]", t) for t in texts) and any(
        re.search(r": Infinity[,}]", t) for t in texts
    )
    failed = [json.loads(t) for t in texts if t.startswith('{"') and '"success": false' in t]
    assert failed and all(isinstance(f["error"], str) and f["error"] for f in failed)


@pytest.mark.slow
def test_images_exist_exactly_where_a_generation_exists(release):
    out, config = release["out"], release["config"]
    for model_id, by_prompt in release["results"].items():
        source = config["models"][model_id]["source_id"]
        for sid, (status, _, _) in by_prompt.items():
            folder = out / "results" / "evalset_rows" / sid / "none" / source
            if status == "missing_generation":
                assert not folder.exists()
            else:
                png = (folder / "image.png").read_bytes()
                assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) < 400


@pytest.mark.slow
def test_scored_results_have_the_evaluator_format(release):
    out, config = release["out"], release["config"]
    for model_id, by_prompt in release["results"].items():
        source = config["models"][model_id]["source_id"]
        for sid, (status, _, scores) in list(by_prompt.items())[:60]:
            if status != "scored":
                continue
            obj = json.loads(
                (out / "results" / "evalset_rows" / sid / "none" / source / RESULT_FILE).read_text()
            )
            assert obj["success"] is True and obj["skipped"] is False and obj["error"] is None
            assert obj["sample_id"] == sid and obj["generator_name"] == source
            parsed = obj["parsed"]
            items = [i["score"] for i in parsed["checklist_scores"]]
            assert items == [scores[f"checklist:{i}"] for i in range(len(items))]
            for dim, v in parsed["rubric_scores"].items():
                assert (v["score"] == "") == (f"rubric:{dim}" not in scores)
                if v["score"] != "":
                    assert v["score"] == scores[f"rubric:{dim}"]
            for ref in REFS:
                assert parsed[ref]["applicable"] == (ref in scores)


@pytest.mark.slow
def test_scores_are_half_steps_and_applicability_is_realistic(release):
    prompts = {p["sample_id"]: p for p in release["prompts"]}
    for by_prompt in release["results"].values():
        for status, _, scores in by_prompt.values():
            if status == "scored":
                assert all(v * 2 == int(v * 2) and 0 <= v <= 3 for v in scores.values())
    # Applicability is a property of the prompt: judge it on a complete model.
    complete = next(
        m for m, bp in release["results"].items() if all(s[0] == "scored" for s in bp.values())
    )
    sc = {sid: s[2] for sid, s in release["results"][complete].items()}
    share = {key: sum(key in s for s in sc.values()) / 751 for key in
             ("rubric:text_rendering", "rubric:physical_plausibility", *REFS)}  # fmt: skip
    assert 0.60 <= share["rubric:text_rendering"] <= 0.70
    assert 0.75 <= share["rubric:physical_plausibility"] <= 0.85
    assert 0.75 <= share["visual_reference_evaluation"] <= 0.85
    assert 0.35 <= share["text_reference_evaluation"] <= 0.50

    def text_ref_share(part):
        ids = [sid for sid, p in prompts.items() if partition_of(p) == part]
        return sum("text_reference_evaluation" in sc[sid] for sid in ids) / len(ids)

    assert text_ref_share("TextualSearch") > text_ref_share("VisualSearch")
    # Every scored result has one or two adaptive rubric dimensions (except the text-only one).
    adaptive = Counter(
        sum(k.startswith("rubric:") and k[7:] not in GENERIC for k in s) for s in sc.values()
    )
    assert set(adaptive) <= {0, 1, 2} and adaptive[0] <= 1
    # Component applicability agrees across models for almost every prompt.
    for sid in list(prompts)[:100]:
        seen = {
            frozenset(
                k
                for k in s[2]
                if k in ("rubric:text_rendering", "rubric:physical_plausibility", *REFS)
            )
            for by_prompt in release["results"].values()
            if (s := by_prompt[sid])[0] == "scored" and len(s[2]) > 1
        }
        assert len(seen) <= 1, sid


@pytest.mark.slow
def test_one_result_has_only_the_text_reference(release):
    only = [
        (m, sid)
        for m, by_prompt in release["results"].items()
        for sid, (status, _, scores) in by_prompt.items()
        if status == "scored" and set(scores) == {"text_reference_evaluation"}
    ]
    assert len(only) >= 1


@pytest.mark.slow
def test_coverage_lock_equals_the_scored_files(release):
    counted = {
        m: sum(s[0] == "scored" for s in bp.values()) for m, bp in release["results"].items()
    }
    assert release["config"]["expected"]["n_scored"] == counted
    assert release["config"]["expected"]["n_prompts"] == 751
    for model_id, s in release["summary"]["models"].items():
        assert s["n_scored"] == counted[model_id]
        counted_statuses = Counter(st[0] for st in release["results"][model_id].values())
        assert {k: v for k, v in s["statuses"].items() if v} == dict(counted_statuses)
        assert sum(s["statuses"].values()) == 751


@pytest.mark.slow
def test_paper_table_recomputed(release):
    table = json.loads((release["out"] / "paper_table.json").read_text(encoding="utf-8"))
    assert list(table) == sorted(release["config"]["models"])
    for model_id, m in release["config"]["models"].items():
        per_prompt = []
        for status, _, scores in release["results"][model_id].values():
            if status == "scored":
                values = [v for v in components(scores).values() if v is not None]
                per_prompt.append(sum(values) / len(values))
            elif m["missing_policy"] == "zero_fill":
                per_prompt.append(Fraction(0))
        assert table[model_id] == half_up_public(sum(per_prompt) / len(per_prompt)), model_id
    values = list(table.values())
    assert len(set(values)) == len(values), "distinct quality levels"
    assert min(values) < 20 and max(values) > 70


# ---------------------------------------------------------------------------------------
# Model profiles: components and tags must not all tell the same story
# ---------------------------------------------------------------------------------------
PUBLIC = (
    "checklist",
    "rubric_adaptive",
    *GENERIC,
    "visual_reference_evaluation",
)  # Overall-9's nine
KNOWLEDGE_TAGS = ("CS", "EIK", "FHA", "TK-C", "TK-R")
TEXT_TAGS = ("THG", "TXT", "DVZ")
MIN_TAG_PROMPTS = 20  # smaller tags are left out of the spread checks: their means are noisy


def group_means(release, model_id: str, sample_ids) -> dict[str, float | None]:
    """Overall-9 and every component on 0–100 over ``sample_ids`` (data contract, § Aggregation
    over a group of prompts: the policy decides whether a non-scored prompt counts 0 or is left
    out; a null value is left out)."""
    zero_fill = release["config"]["models"][model_id]["missing_policy"] == "zero_fill"
    by_prompt = release["results"][model_id]
    known = release.setdefault(
        "components", {}
    )  # a prompt's components and Overall-9, made once per process
    values: dict[str, list[Fraction]] = {k: [] for k in ("overall_9", *PUBLIC)}
    n_zero = 0
    for sid in sample_ids:
        status, _, scores = by_prompt[sid]
        if status != "scored":
            n_zero += zero_fill
            continue
        if (model_id, sid) not in known:
            comps = components(scores)
            public = [comps[c] for c in PUBLIC if comps[c] is not None]
            known[(model_id, sid)] = comps, sum(public) / len(public) if public else None
        comps, overall_9 = known[(model_id, sid)]
        if overall_9 is not None:
            values["overall_9"].append(overall_9)
        for c in PUBLIC:
            if comps[c] is not None:
                values[c].append(comps[c])
    return {
        k: float(sum(v) / (len(v) + n_zero) * 100 / 3) if v or n_zero else None
        for k, v in values.items()
    }


def order_of(values: dict[str, float]) -> list[str]:
    return sorted(values, key=lambda m: (-values[m], m))


def spearman(a: dict[str, float], b: dict[str, float]) -> float:
    ra = {m: i for i, m in enumerate(order_of(a))}
    rb = {m: i for i, m in enumerate(order_of(b))}
    n = len(a)
    return 1 - 6 * sum((ra[m] - rb[m]) ** 2 for m in a) / (n * (n * n - 1))


@pytest.fixture(scope="module")
def overall(release):
    ids = [p["sample_id"] for p in release["prompts"]]
    return {m: group_means(release, m, ids) for m in release["config"]["models"]}


@pytest.fixture(scope="module")
def by_tag(release):
    """``{kind: {model: {tag: Overall-9}}}`` over tags with at least MIN_TAG_PROMPTS prompts."""
    out = {}
    for kind, counts in (("domains", DOMAIN_COUNTS), ("failure_modes", FAILURE_MODE_COUNTS)):
        tags = [t for t, n in counts.items() if n >= MIN_TAG_PROMPTS]
        members = {t: [p["sample_id"] for p in release["prompts"] if t in p[kind]] for t in tags}
        out[kind] = {
            m: {t: group_means(release, m, ids)["overall_9"] for t, ids in members.items()}
            for m in release["config"]["models"]
        }
    return out


@pytest.mark.slow
def test_components_rank_the_models_differently(overall):
    """Sorting the leaderboard by a component must reorder it: models have strengths."""
    o9 = {m: v["overall_9"] for m, v in overall.items()}
    top3 = order_of(o9)[:3]
    other_top3, low_rho = [], []
    for c in PUBLIC:
        values = {m: v[c] for m, v in overall.items()}
        if order_of(values)[:3] != top3:
            other_top3.append(c)
        if spearman(values, o9) < 0.95:
            low_rho.append(c)
    assert len(other_top3) >= 5, other_top3
    assert len(low_rho) >= 4, low_rho
    # Strengths are per model, not one lucky model: most models stand two or more places
    # away from their Overall-9 rank on some component.
    o9_rank = {m: i for i, m in enumerate(order_of(o9))}
    ranks = {
        c: {m: i for i, m in enumerate(order_of({m: v[c] for m, v in overall.items()}))}
        for c in PUBLIC
    }
    moved = [m for m in o9 if max(abs(ranks[c][m] - o9_rank[m]) for c in PUBLIC) >= 2]
    assert len(moved) >= 8, moved
    # And the gaps are sizeable: some component is ≥ 10 points above the field's mean for it.
    for c in (
        "text_rendering",
        "composition_and_aesthetics",
        "ai_naturalness",
        "visual_reference_evaluation",
    ):
        values = {
            m: v[c] - v["overall_9"] for m, v in overall.items()
        }  # component relative to the model
        assert max(values.values()) - min(values.values()) >= 15, (c, values)


@pytest.mark.slow
def test_overall_levels_keep_the_v1_0_spread(overall):
    o9 = sorted(v["overall_9"] for v in overall.values())
    assert 10 <= o9[0] <= 20 and 70 <= o9[-1] <= 80
    assert len({round(v, 1) for v in o9}) == len(o9)


@pytest.mark.slow
def test_per_tag_scores_vary_by_tag(by_tag):
    """Per-tag Overall-9 is not a flat band per model: a typical model's tags span many points."""
    for kind, minimum in (("domains", 10), ("failure_modes", 12)):
        spreads = sorted(max(v.values()) - min(v.values()) for v in by_tag[kind].values())
        assert spreads[len(spreads) // 2] >= minimum, (kind, spreads)
        assert sum(s >= minimum for s in spreads) >= 9, (kind, spreads)


@pytest.mark.slow
def test_knowledge_tags_are_hard_and_easy_domains_easy(by_tag):
    for m, tags in by_tag["failure_modes"].items():
        knowledge = sum(tags[t] for t in KNOWLEDGE_TAGS) / len(KNOWLEDGE_TAGS)
        rest = [v for t, v in tags.items() if t not in KNOWLEDGE_TAGS]
        assert knowledge < sum(rest) / len(rest), m
        assert min(tags, key=tags.get) in ("TK-R", "TK-C"), (m, tags)
    easier = 0
    for tags in by_tag["domains"].values():
        easy = (tags["FOO"] + tags["ART"]) / 2
        hard = (tags["MED"] + tags["SCI"] + tags["HIS"]) / 3
        easier += easy > hard + 5
    assert easier >= 10


@pytest.mark.slow
def test_tag_effects_depend_on_the_model(overall, by_tag):
    """Best and worst tags differ between models; text tags follow text rendering; knowledge
    gaps differ in size (search-grounded models lose less on knowledge tags)."""
    for kind, n_best, n_worst in (("domains", 4, 4), ("failure_modes", 3, 2)):
        best = {max(v, key=v.get) for v in by_tag[kind].values()}
        worst = {min(v, key=v.get) for v in by_tag[kind].values()}
        assert len(best) >= n_best and len(worst) >= n_worst, (kind, best, worst)
    # The model order is not the same on every tag (the columns of the heatmap differ), and
    # on the text tags it moves clearly.
    o9 = {m: v["overall_9"] for m, v in overall.items()}
    rho = {
        t: spearman({m: v[t] for m, v in by_tag[kind].items()}, o9)
        for kind in ("domains", "failure_modes")
        for t in next(iter(by_tag[kind].values()))
    }
    assert sum(r < 1 for r in rho.values()) >= 2 * len(rho) // 3, rho
    assert all(rho[t] < 0.95 for t in ("TXT", "DVZ")), rho
    # Text tags relative to the model's own level rise with its text rendering.
    models = sorted(overall)
    fm, dom = by_tag["failure_modes"], by_tag["domains"]
    text_gain = {
        m: (fm[m]["THG"] + fm[m]["DVZ"] + dom[m]["TXT"]) / 3 - overall[m]["overall_9"]
        for m in models
    }
    tr_rel = {m: overall[m]["text_rendering"] - overall[m]["overall_9"] for m in models}
    assert spearman(text_gain, tr_rel) >= 0.7, (text_gain, tr_rel)
    # The knowledge gap (other failure modes minus knowledge ones) differs between models.
    gaps = {}
    for m, tags in by_tag["failure_modes"].items():
        knowledge = sum(tags[t] for t in KNOWLEDGE_TAGS) / len(KNOWLEDGE_TAGS)
        rest = [v for t, v in tags.items() if t not in KNOWLEDGE_TAGS]
        gaps[m] = sum(rest) / len(rest) - knowledge
    assert max(gaps.values()) - min(gaps.values()) >= 6, gaps


@pytest.mark.slow
def test_release_config_validates(release):
    out = release["out"]
    text = (out / "release.yml").read_text(encoding="utf-8")
    assert text == demo.demo_config_text("", None)
    assert "release_config" not in release["config"]  # written outside the project
    cfg = load_config(out / "release.yml")
    assert cfg.data_origin == "synthetic-demo"
    assert cfg.dataset_path == out.resolve() / "prompts.jsonl"
    assert cfg.results_root_path.is_dir() and cfg.paper_table_path.is_file()
    assert (
        cfg.result_path
        == "{release_row}/{lane}/{source_id}/augmented_parsed_result_ffjudge_pp.json"
    )
    assert [m for m in cfg.models if cfg.policy(m) == "exclude"] == [
        m for m, v in release["config"]["models"].items() if v["missing_policy"] == "exclude"
    ]


def test_committed_release_config_is_what_the_code_produces():
    committed = ROOT / "releases" / "demo.yml"
    assert committed.read_text(encoding="utf-8") == demo.committed_config_text()
    cfg = load_config(committed)
    assert cfg.release_config == "releases/demo.yml"
    assert cfg.dataset == "../data/demo/prompts.jsonl"
    assert cfg.results_root == "../data/demo/results"
    assert cfg.paper_table == "../data/demo/paper_table.json"
    assert cfg.dataset_path == ROOT / "data" / "demo" / "prompts.jsonl"
    inside = demo.demo_config_text("", "data/demo/release.yml")
    assert yaml.safe_load(inside)["release_config"] == "data/demo/release.yml"


# A second run in another process (another hash seed, cwd and install) writing the very same
# bytes: tests/test_standalone.py, which also releases that demo and compares the book.


def test_refuses_to_overwrite_a_folder_that_is_not_a_demo(tmp_path):
    (tmp_path / "keep.txt").write_text("real data")
    with pytest.raises(FileExistsError):
        demo.write_demo(tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "real data"


def test_regenerating_in_place_syncs_the_result_tree(tmp_path):
    """A previous demo is brought up to date: stale files the demo writes and their folders go,
    right ones stay; any other file stops it before a change, named."""
    (tmp_path / "gone" / "none").mkdir(parents=True)
    (tmp_path / "gone" / "none" / RESULT_FILE).write_bytes(b"stale")
    (tmp_path / "row").mkdir()
    (tmp_path / "row" / "same.json").write_bytes(b"1")
    (tmp_path / "row" / "changed.json").write_bytes(b"old")
    (tmp_path / "row" / "notes.txt").write_bytes(b"mine")
    os.utime(tmp_path / "row" / "same.json", (0, 0))
    files = {"row/same.json": b"1", "row/changed.json": b"2", "new/none/image.png": b"3"}
    known = {*files, f"gone/none/{RESULT_FILE}"}

    def tree():
        return {
            p.relative_to(tmp_path).as_posix(): p.read_bytes()
            for p in tmp_path.rglob("*")
            if p.is_file()
        }

    before = tree()
    with pytest.raises(FileExistsError, match=r"1 file\(s\) the demo does not write, such as row/"):
        demo._sync_tree(tmp_path, files, known)
    assert tree() == before
    (tmp_path / "row" / "notes.txt").unlink()
    assert demo._sync_tree(tmp_path, files, known) == 2
    assert not (tmp_path / "gone").exists()
    assert tree() == files
    assert (tmp_path / "row" / "same.json").stat().st_mtime == 0  # not rewritten
