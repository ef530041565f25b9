"""A deterministic, synthetic SearchGen-Bench release in the real file formats.

The book must build and the release gate must pass without the real benchmark data, so
this module makes a stand-in release that looks, to the pipeline, exactly like a real one:

* ``prompts.jsonl`` — 751 prompt-metadata lines, written in a shuffled (but fixed) order;
* ``results/`` — one evaluator result per prompt × model in the canonical layout
  ``{release_row}/{lane}/{source_id}/augmented_parsed_result_ffjudge_pp.json``, in the
  judge's parsed-result format (``success``, ``error``, ``parsed``, flat ``scores`` …), with
  a tiny ``image.png`` next to every result whose generation exists;
* ``paper_table.json`` — ``{model_id: Overall-10}`` on the 0–100 scale, recomputed here by
  independent code, as the paper's own table would be;
* ``release.yml`` — the release config that ties it together (data origin
  ``synthetic-demo``) with an ``expected`` block that locks every count.

What is real and what is invented
---------------------------------
Sizes are the published v1.0 ones (``searchgen_nb/data/taxonomy.json``, a copy of
``tests/fixtures/reference/taxonomy.json``, and ``tests/fixtures/reference/published/v1.0``):
751 prompts split NoSearch 100 / SearchIntensive 651 / VisualSearch 387 / TextualSearch 264,
and every domain and failure-mode tag used by exactly as many prompts as in v1.0. Component
applicability (text rendering on ~65% of prompts, physical plausibility and visual reference
on ~80%), coverage levels (several models complete, most between 95% and 99.9%, one near 62%)
and the spread of Overall-9 (~13 to ~75) follow v1.0 too.

Everything else is invented: the prompt ids, the tag assignment (random, with a mild affinity
such as ``TXT`` and ``THG`` to text-heavy prompts), the 13 models (fictional names, no real
model is named anywhere) and every score. Scores are drawn as "model skill + prompt
difficulty + tag shift + component bias + model's component offset + noise", clamped to 0–3
and rounded to the judge's 0.5 steps. Each model has a profile (``PROFILES``): strengths and
weaknesses per component (so sorting the leaderboard by a component reorders it), how much
knowledge-heavy failure modes hurt it, and one weak domain. A prompt's tag shift sums the
effects of its tags for that model (knowledge tags hard, scaled by the model's knowledge; text
tags following its text rendering; food and art easy, medicine, science and history hard),
centred per model: a model's per-tag scores span 10–30 points, with best and worst tags
that differ between models.

The release also exercises every status of SPEC §3 and the edge cases the pipeline must
survive: broken result files of nine kinds (``INVALID_KINDS``), folders with an image but no
result, missing folders, a NoSearch prompt whose id contains ``texthard`` (it must stay
NoSearch), generic rubric dimensions that a judge dropped for one model only, and one result
whose only component is the text reference (it has an Overall-10 but no Overall-9).

Determinism
-----------
Every random choice comes from a ``random.Random`` seeded with a string (hashed with SHA-512
by ``random``, so ``PYTHONHASHSEED`` plays no part), one stream per concern and per model, so
that editing one model leaves the others' data unchanged. Noise is a sum of uniforms (no
platform maths library on the score path), iteration is always over sorted ids or the
roster tuple, and JSON is written with sorted keys. Two runs give byte-identical trees.
Building everything in memory (:func:`build_demo`) takes about a second; writing the ~18,800
files (9,400 results, 9,400 images) is then bound by the file system's speed, and
regenerating an unchanged demo rewrites nothing.

Usage: ``write_demo(project_root() / "data/demo")``, or ``searchgen-nb demo --out data/demo``.
The fictional models and their profiles are data: ``roster.json`` beside this module.
``releases/demo.yml`` is :func:`demo_config_text` with paths into ``data/demo``.
"""

from __future__ import annotations

import json
import math
import os
import posixpath
import random
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from searchgen_nb.config import project_root
from searchgen_nb.constants import COMPONENTS, DEFAULT_RESULT_PATH, GENERIC_RUBRIC

# ---------------------------------------------------------------------------------------
# The model roster. All names are fictional. ``skill`` is the judge's mean raw score (0–3)
# for the model on a medium prompt before clamping and before its profile (``PROFILES``);
# the three counts are how many of the 751 prompts end in each non-scored status (SPEC §3);
# the rest are scored.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoModel:
    """One fictional model of the demo release and the shape of its (synthetic) results."""

    model_id: str
    display_name: str
    type: str  # "Open" or "Commercial"
    source_id: str  # folder name in the result layout
    missing_policy: str  # "zero_fill" or "exclude"
    skill: float
    n_invalid: int = 0
    n_missing_evaluation: int = 0
    n_missing_generation: int = 0

    @property
    def n_scored(self) -> int:
        return N_PROMPTS - self.n_invalid - self.n_missing_evaluation - self.n_missing_generation


N_PROMPTS = 751

def _roster_data() -> list[dict]:
    """The models of ``roster.json`` (package data beside this module)."""
    from importlib import resources

    return json.loads(resources.files("searchgen_nb.demo").joinpath("roster.json").read_text(encoding="utf-8"))["models"]


#: ``roster.json``'s models, read once: the roster and the profiles below both come from it.
_ROSTER_DATA = _roster_data()


#: Display order for ties = this order (``roster.json``). Two models use ``exclude`` (as two did in v1.0).
ROSTER: tuple[DemoModel, ...] = tuple(
    DemoModel(m["model_id"], m["display_name"], m["type"], m["source_id"], m["missing_policy"], m["skill"],
              m["statuses"]["invalid_evaluation"], m["statuses"]["missing_evaluation"], m["statuses"]["missing_generation"])
    for m in _ROSTER_DATA
)

#: The (model, prompt) result whose only component is the text reference: this model, on the
#: first TextualSearch prompt (by sample_id) where the text reference applies.
TEXT_REFERENCE_ONLY_MODEL = "halcyon_draw"

SEED = "searchgen-bench-synthetic-demo/1"
LANE = "none"
RESULT_FILE = posixpath.basename(DEFAULT_RESULT_PATH)
IMAGE_FILE = "image.png"

# ---------------------------------------------------------------------------------------
# Prompt set: partition sizes and tag counts of the published v1.0 release.
# ---------------------------------------------------------------------------------------

#: Prompt kinds, their id stem, subset and count. Textual prompts use both stems of the rule
#: (``texthard``, ``text_rendering``); the four ``nosearch_text`` ids contain ``texthard`` but
#: their subset is NoSearch, so the partition rule must keep them NoSearch.
PROMPT_KINDS: tuple[tuple[str, str, str, int], ...] = (
    # kind            id stem           subset             count
    ("nosearch",      "nosearch",       "NoSearch",          96),
    ("nosearch_text", "texthard",       "NoSearch",           4),
    ("textual",       "texthard",       "SearchIntensive",  150),
    ("textual",       "text_rendering", "SearchIntensive",  114),
    ("visual",        "vis",            "SearchIntensive",  387),
)  # fmt: skip
#: What the partition rule must produce from the prompts above (SPEC §1.2).
EXPECTED_PARTITION = {"NoSearch": 100, "SearchIntensive": 651, "VisualSearch": 387, "TextualSearch": 264}

def _v1_0_counts(kind: str) -> dict[str, int]:
    """``n_prompts_v1.0`` of every tag of ``kind`` from the shipped SearchGen-Bench taxonomy."""
    from importlib import resources

    data = json.loads(resources.files("searchgen_nb").joinpath("data/taxonomy.json").read_text(encoding="utf-8"))
    return {code: entry["n_prompts_v1.0"] for code, entry in sorted(data[kind].items())}


#: ``n_prompts_v1.0`` of every domain / failure-mode tag (searchgen_nb/data/taxonomy.json).
DOMAIN_COUNTS = _v1_0_counts("domains")
FAILURE_MODE_COUNTS = _v1_0_counts("failure_modes")
MAX_DOMAINS_PER_PROMPT = 4
MAX_FAILURE_MODES_PER_PROMPT = 6

#: Sampling weight of a tag on a prompt kind (default 1): text tags lean to text prompts,
#: knowledge tags away from NoSearch prompts.
TAG_AFFINITY: dict[str, dict[str, float]] = {
    "TXT": {"textual": 4, "nosearch_text": 4},
    "INF": {"textual": 2},
    "EDU": {"textual": 2},
    "ARC": {"visual": 2},
    "HIS": {"visual": 2},
    "ABS": {"nosearch": 4},
    "THG": {"textual": 8, "nosearch_text": 8},
    "DVZ": {"textual": 3},
    "VUR": {"textual": 2},
    "VUA": {"nosearch": 3},
    "EIK": {"nosearch": 0.25},
    "FHA": {"nosearch": 0.25},
    "TK-C": {"nosearch": 0.1, "nosearch_text": 0.1},
    "TK-R": {"nosearch": 0.1, "nosearch_text": 0.1},
}

#: Exact numbers of prompts per difficulty, Chinese-language prompts, and miniset members
#: per partition (10% of each, rounded).
DIFFICULTY_COUNTS = {"easy": 225, "medium": 338, "hard": 188}
N_CHINESE = 24
MINISET_COUNTS = {"NoSearch": 10, "VisualSearch": 39, "TextualSearch": 26}
#: The published v1.1 slices (``slice_partitions`` of its manifest): test-mini and its easy and
#: hard halves per search type. As published, easy ∪ hard is not exactly test-mini (TextualSearch
#: 37 + 37 of 73, VisualSearch 50 + 50 of 101): the demo's hard half takes one TextualSearch
#: prompt from outside test-mini and leaves one VisualSearch test-mini prompt in neither half.
TESTMINI_COUNTS = {"NoSearch": 26, "TextualSearch": 73, "VisualSearch": 101}
HALF_COUNTS = {"NoSearch": 13, "TextualSearch": 37, "VisualSearch": 50}
DEMO_SLICES = {"testmini": 200, "testmini_easy": 100, "testmini_hard": 100}
TASK_TYPE_WEIGHTS = {
    "nosearch": {"photo": 40, "illustration": 45, "poster": 10, "diagram": 5},
    "nosearch_text": {"poster": 60, "infographic": 20, "diagram": 20},
    "textual": {"poster": 35, "infographic": 30, "diagram": 20, "illustration": 15},
    "visual": {"photo": 50, "illustration": 35, "poster": 10, "infographic": 5},
}

#: Probability that a component applies to a prompt, by prompt kind (checklist, the adaptive
#: rubric and the other four generic dimensions always apply).
APPLICABILITY = {
    "text_rendering": {"nosearch": 0.45, "nosearch_text": 0.95, "textual": 0.95, "visual": 0.50},
    "physical_plausibility": {"nosearch": 0.85, "nosearch_text": 0.70, "textual": 0.68, "visual": 0.85},
    "visual_reference_evaluation": {"nosearch": 0.55, "nosearch_text": 0.50, "textual": 0.70, "visual": 0.92},
    "text_reference_evaluation": {"nosearch": 0.10, "nosearch_text": 0.50, "textual": 0.75, "visual": 0.25},
}
#: Adaptive rubric dimension a prompt's domain brings (its first one or two domains).
ADAPTIVE_BY_DOMAIN = {
    "ABS": "concept_expression", "ARC": "landmark_accuracy", "ART": "style_consistency",
    "COM": "brand_fidelity", "CUL": "cultural_authenticity", "EDU": "diagram_correctness",
    "FAS": "garment_accuracy", "FOO": "dish_authenticity", "GAM": "character_fidelity",
    "HIS": "historical_accuracy", "INF": "data_accuracy", "MED": "anatomical_accuracy",
    "MIL": "equipment_accuracy", "MUS": "instrument_accuracy", "OBJ": "object_accuracy",
    "OTH": "style_consistency", "PEO": "likeness_accuracy", "PSY": "concept_expression",
    "SCI": "scientific_accuracy", "SPO": "sports_accuracy", "TEC": "device_accuracy",
    "TXT": "typography_accuracy",
}  # fmt: skip

# ---------------------------------------------------------------------------------------
# Score model (raw 0–3 scale): skill + difficulty + prompt effect + tag shift + component
# bias + the model's component offset + noise.
# ---------------------------------------------------------------------------------------
DIFFICULTY_SHIFT = {"easy": 0.35, "medium": 0.0, "hard": -0.40}
COMPONENT_BIAS = {
    "checklist": 0.0,
    "rubric_adaptive": -0.10,
    "prompt_faithfulness": 0.0,
    "image_quality": 0.15,
    "text_rendering": -0.20,
    "ai_naturalness": -0.25,
    "composition_and_aesthetics": 0.30,
    "physical_plausibility": 0.15,
    "visual_reference_evaluation": -0.15,
    "text_reference_evaluation": -0.65,
}
OPEN_TEXT_RENDERING_PENALTY = -0.30
PROMPT_EFFECT_SPREAD = 0.30  # shared by every model: some prompts are simply harder
NOISE_SCALE = 1.1  # noise = (sum of 3 uniforms − 1.5) × this: standard deviation 0.55
#: Chance that the judge drops one always-applicable generic dimension for one model.
DROPPED_DIMENSION_RATE = 0.002
DROPPABLE = ("image_quality", "ai_naturalness", "composition_and_aesthetics")


# ---------------------------------------------------------------------------------------
# Model profiles: per-component strengths and per-tag sensitivity (raw 0–3 scale).
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DemoProfile:
    """What makes one fictional model more than a single skill number.

    ``offsets``: raw shift per component (0.1 raw ≈ 3.3 points on the 0–100 scale), so that
    sorting the leaderboard by a component reorders the models. ``knowledge``: multiplier
    on the difficulty of the knowledge tags (``KNOWLEDGE_TAGS``): below 1 for models that
    search or know many entities, above 1 for small open models. ``weak_domain``: a domain
    the model is clearly bad at (``WEAK_DOMAIN_SHIFT``). How well a model does on the text
    tags follows its text rendering (``TEXT_TAG_DEPENDENCE``).
    """

    offsets: dict[str, float]
    knowledge: float = 1.0
    weak_domain: str | None = None

    def text_skill(self, model: DemoModel) -> float:
        """The model's text rendering relative to the field (its offset, open penalty included)."""
        penalty = OPEN_TEXT_RENDERING_PENALTY if model.type == "Open" else 0.0
        return self.offsets.get("text_rendering", 0.0) + penalty


#: One profile per roster model (same keys, same order), from ``roster.json``.
PROFILES: dict[str, DemoProfile] = {
    m["model_id"]: DemoProfile(dict(m["profile"]["offsets"]), m["profile"]["knowledge"], m["profile"]["weak_domain"]) for m in _ROSTER_DATA
}

#: Raw shift every model gets on a prompt per tag it carries (before ``knowledge``, the text
#: dependence and the per-model jitter). Food and art are easy, medicine, science and history
#: hard; temporal and entity knowledge are the hardest failure modes.
DOMAIN_EFFECT = {
    "ABS": 0.10, "ARC": 0.0, "ART": 0.30, "COM": 0.05, "CUL": -0.10, "EDU": -0.10, "FAS": 0.20, "FOO": 0.35,
    "GAM": 0.05, "HIS": -0.30, "INF": -0.15, "MED": -0.30, "MIL": -0.15, "MUS": 0.10, "OBJ": 0.20, "OTH": 0.0,
    "PEO": -0.05, "PSY": 0.0, "SCI": -0.30, "SPO": 0.10, "TEC": -0.05, "TXT": -0.10,
}  # fmt: skip
FAILURE_MODE_EFFECT = {
    "CCS": -0.10, "CS": -0.30, "CSV": -0.05, "DVZ": -0.15, "EIK": -0.30, "FHA": -0.30, "IRR": -0.20,
    "THG": -0.10, "TK-C": -0.50, "TK-R": -0.55, "VUA": -0.10, "VUR": -0.05,
}  # fmt: skip
#: Tags whose effect is multiplied by the model's ``knowledge``.
KNOWLEDGE_TAGS = frozenset({"CS", "EIK", "FHA", "TK-C", "TK-R"})
#: Tags on which a model gains ``TEXT_TAG_DEPENDENCE`` × its text skill (text in the image).
TEXT_TAGS = frozenset({"THG", "TXT", "DVZ"})
TEXT_TAG_DEPENDENCE = 1.0
#: Tags on which a model gains ``IMAGINATIVE_TAG_DEPENDENCE`` × its composition offset (open-ended
#: requests reward imagination and punish literal models).
IMAGINATIVE_TAGS = frozenset({"ABS", "CSV", "VUA"})
IMAGINATIVE_TAG_DEPENDENCE = 0.8
WEAK_DOMAIN_SHIFT = -0.40
#: Each model's effect of each tag is jittered by a uniform draw in ±this.
TAG_JITTER = 0.10
#: Tags are about content: they shift content components fully, how the image looks less.
LOOKS_COMPONENTS = frozenset({"image_quality", "ai_naturalness", "composition_and_aesthetics", "physical_plausibility"})
LOOKS_TAG_WEIGHT = 0.5

#: Broken result files (status ``invalid_evaluation``), cycled over all invalid pairs.
INVALID_KINDS = (
    "not_json",
    "json_array",
    "success_false",
    "nan_score",
    "infinite_score",
    "string_score",
    "boolean_score",
    "out_of_range_score",
    "empty_scores",
)

#: A valid 1×1 grey PNG (67 bytes): the stand-in for every generated image.
PNG_BYTES = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b55"
    "0000000a4944415478da6368000000820081da4508"
    "3b0000000049454e44ae426082"
)



# ---------------------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------------------
@dataclass
class DemoPrompt:
    """One synthetic prompt: its metadata line plus what the judge evaluates on it."""

    sample_id: str
    kind: str
    subset: str
    domains: list[str] = field(default_factory=list)
    failure_modes: list[str] = field(default_factory=list)
    difficulty: str = "medium"
    language: str = "en"
    generation_task_type: str = "photo"
    is_miniset: bool = False
    eval_slices: tuple[str, ...] = ()
    # Judge-side properties (the same for every model).
    n_checklist: int = 3
    adaptive: tuple[str, ...] = ()
    applicable: frozenset[str] = frozenset()
    effect: float = 0.0

    @property
    def release_row(self) -> str:
        return f"evalset_rows/{self.sample_id}"

    @property
    def partition(self) -> str:
        """Stratum or search type under the SPEC §1.2 rule (from the id, never the kind)."""
        if self.subset == "NoSearch":
            return "NoSearch"
        return "TextualSearch" if "texthard" in self.sample_id or "text_rendering" in self.sample_id else "VisualSearch"

    def metadata(self) -> dict:
        return {
            "sample_id": self.sample_id,
            "release_row": self.release_row,
            "subset": self.subset,
            "domains": self.domains,
            "failure_modes": self.failure_modes,
            "difficulty": self.difficulty,
            "language": self.language,
            "generation_task_type": self.generation_task_type,
            "is_miniset": self.is_miniset,
            "eval_slices": list(self.eval_slices),
        }


def _rng(*parts: str) -> random.Random:
    """An independent random stream for one concern (seeded by string: no hash seed involved)."""
    return random.Random(":".join((SEED,) + parts))


def _noise(rng: random.Random) -> float:
    """Zero-mean, bell-shaped noise built from uniforms only (standard deviation 0.5 × NOISE_SCALE)."""
    return (rng.random() + rng.random() + rng.random() - 1.5) * NOISE_SCALE


def _weighted_sample(
    rng: random.Random, candidates: list[DemoPrompt], weights: list[float], k: int
) -> list[DemoPrompt]:
    """``k`` distinct candidates, drawn without replacement proportionally to ``weights``.

    Efraimidis–Spirakis keys ``u ** (1 / w)``; ties (impossible in practice) fall to list order.
    """
    if k > len(candidates):
        raise RuntimeError(f"demo: cannot place a tag on {k} prompts, only {len(candidates)} candidates")
    keyed = [(rng.random() ** (1.0 / w), -i) for i, w in enumerate(weights)]
    order = sorted(range(len(candidates)), key=lambda i: keyed[i], reverse=True)
    return [candidates[i] for i in sorted(order[:k])]


def _assign_tags(
    rng: random.Random, prompts: list[DemoPrompt], counts: dict[str, int], attr: str, *, at_least_one: bool, cap: int
) -> None:
    """Give every tag exactly ``counts[tag]`` distinct prompts (multi-label, no duplicates).

    With ``at_least_one`` every prompt first gets one primary tag (tags share the 751 primary
    slots in proportion to their counts), then each tag tops up its remaining prompts.
    """
    tags = sorted(counts, key=lambda t: (-counts[t], t))
    held: dict[str, list[str]] = {p.sample_id: [] for p in prompts}

    def weight(tag: str, p: DemoPrompt) -> float:
        return float(TAG_AFFINITY.get(tag, {}).get(p.kind, 1))

    def place(tag: str, pool: list[DemoPrompt], k: int) -> None:
        for p in _weighted_sample(rng, pool, [weight(tag, p) for p in pool], k):
            held[p.sample_id].append(tag)

    if at_least_one:
        total = sum(counts.values())
        primary = {t: max(1, counts[t] * len(prompts) // total) for t in tags}
        shortfall = len(prompts) - sum(primary.values())
        for t in tags[:shortfall]:  # largest tags take the rounding remainder
            primary[t] += 1
        for t in tags:
            place(t, [p for p in prompts if not held[p.sample_id]], primary[t])
    else:
        primary = {t: 0 for t in tags}
    for t in tags:
        pool = [p for p in prompts if t not in held[p.sample_id] and len(held[p.sample_id]) < cap]
        place(t, pool, counts[t] - primary[t])
    for p in prompts:
        setattr(p, attr, held[p.sample_id])


def _exact_choice(rng: random.Random, prompts: list[DemoPrompt], k: int) -> set[str]:
    """Sample ids of ``k`` prompts chosen uniformly."""
    return {p.sample_id for p in rng.sample(prompts, k)}


def _assign_slices(rng: random.Random, prompts: list[DemoPrompt]) -> None:
    """``eval_slices`` of every prompt: test-mini and its halves with the published v1.1
    stratum counts (:data:`TESTMINI_COUNTS`, :data:`HALF_COUNTS`)."""
    tags: dict[str, list[str]] = {p.sample_id: [] for p in prompts}
    for part, n in TESTMINI_COUNTS.items():
        pool = [p for p in prompts if p.partition == part]
        mini = rng.sample(pool, n)
        half = HALF_COUNTS[part]
        easy, rest = mini[:half], mini[half:]
        hard = rest[:half] if len(rest) >= half else rest + rng.sample([p for p in pool if p not in mini], half - len(rest))
        for name, chosen in (("testmini", mini), ("testmini_easy", easy), ("testmini_hard", hard)):
            for p in chosen:
                tags[p.sample_id].append(name)
    for p in prompts:
        p.eval_slices = tuple(sorted(tags[p.sample_id]))


def build_prompts() -> list[DemoPrompt]:
    """The 751 demo prompts in ``sample_id`` order (the file order is shuffled separately)."""
    rng = _rng("prompts")
    kinds = [(kind, stem, subset) for kind, stem, subset, n in PROMPT_KINDS for _ in range(n)]
    rng.shuffle(kinds)
    prompts = [DemoPrompt(f"sgb_{stem}_{i:04d}", kind, subset) for i, (kind, stem, subset) in enumerate(kinds, 1)]

    _assign_tags(_rng("domains"), prompts, DOMAIN_COUNTS, "domains", at_least_one=True, cap=MAX_DOMAINS_PER_PROMPT)
    _assign_tags(
        _rng("failure_modes"), prompts, FAILURE_MODE_COUNTS, "failure_modes",
        at_least_one=False, cap=MAX_FAILURE_MODES_PER_PROMPT,
    )  # fmt: skip

    meta = _rng("metadata")
    difficulties = [d for d, n in DIFFICULTY_COUNTS.items() for _ in range(n)]
    meta.shuffle(difficulties)
    chinese = _exact_choice(meta, prompts, N_CHINESE)
    miniset: set[str] = set()
    for part, n in MINISET_COUNTS.items():
        miniset |= _exact_choice(meta, [p for p in prompts if p.partition == part], n)
    for p, difficulty in zip(prompts, difficulties):
        p.difficulty = difficulty
        p.language = "zh" if p.sample_id in chinese else "en"
        p.is_miniset = p.sample_id in miniset
        w = TASK_TYPE_WEIGHTS[p.kind]
        p.generation_task_type = meta.choices(list(w), weights=list(w.values()))[0]

    _assign_slices(_rng("slices"), prompts)
    judge = _rng("applicability")
    for p in prompts:
        p.n_checklist = judge.randint(2, 6)
        p.adaptive = tuple(dict.fromkeys(ADAPTIVE_BY_DOMAIN[d] for d in p.domains[:2]))
        p.applicable = frozenset(c for c, by_kind in APPLICABILITY.items() if judge.random() < by_kind[p.kind])
        p.effect = (judge.random() * 2 - 1) * PROMPT_EFFECT_SPREAD
    return prompts


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------
def _half_steps(x: float) -> float:
    """Round to the judge's 0.5 steps (half-up) and clamp to [0, 3]."""
    return min(3.0, max(0.0, math.floor(x * 2 + 0.5) / 2))


def _tag_shifts(model: DemoModel, prompts: list[DemoPrompt]) -> dict[str, float]:
    """``sample_id -> raw shift`` of ``model`` from the tags of each prompt.

    A prompt's shift is the sum of the model's effects of the tags it carries: the shared
    ``DOMAIN_EFFECT``/``FAILURE_MODE_EFFECT``, knowledge tags scaled by the profile's
    ``knowledge``, text tags moved by the model's text skill, its weak domain, and a
    per-model jitter (its own random stream). Shifts are centred on the model's mean over all
    prompts, so tags move scores between prompts, not the model's overall level.
    """
    profile = PROFILES[model.model_id]
    jitter = _rng("tag_profile", model.model_id)
    effect: dict[str, float] = {}
    for tag, base in list(DOMAIN_EFFECT.items()) + list(FAILURE_MODE_EFFECT.items()):
        if tag in KNOWLEDGE_TAGS:
            base *= profile.knowledge
        if tag in TEXT_TAGS:
            base += TEXT_TAG_DEPENDENCE * profile.text_skill(model)
        if tag in IMAGINATIVE_TAGS:
            base += IMAGINATIVE_TAG_DEPENDENCE * profile.offsets.get("composition_and_aesthetics", 0.0)
        if tag == profile.weak_domain:
            base += WEAK_DOMAIN_SHIFT
        effect[tag] = base + (jitter.random() * 2 - 1) * TAG_JITTER
    raw = {p.sample_id: sum(effect[t] for t in p.domains) + sum(effect[t] for t in p.failure_modes) for p in prompts}
    centre = sum(raw.values()) / len(raw)
    return {sid: v - centre for sid, v in raw.items()}


def _judge_scores(rng: random.Random, model: DemoModel, p: DemoPrompt, shift: float = 0.0) -> dict[str, float]:
    """The flat ``scores`` map of one well-formed judge answer (``shift``: from :func:`_tag_shifts`).

    Every component is drawn, applicable or not, so the random stream depends only on the
    prompt (see :func:`build_demo`: scores are drawn for every prompt whatever its status).
    """
    base = model.skill + DIFFICULTY_SHIFT[p.difficulty] + p.effect
    offsets = PROFILES[model.model_id].offsets

    def draw(component: str) -> float:
        bias = COMPONENT_BIAS[component] + offsets.get(component, 0.0)
        if component == "text_rendering" and model.type == "Open":
            bias += OPEN_TEXT_RENDERING_PENALTY
        weight = LOOKS_TAG_WEIGHT if component in LOOKS_COMPONENTS else 1.0
        return _half_steps(base + bias + weight * shift + _noise(rng))

    scores: dict[str, float] = {}
    for i in range(p.n_checklist):
        scores[f"checklist:{i}"] = draw("checklist")
    for dim in GENERIC_RUBRIC:
        value = draw(dim)
        if dim in ("text_rendering", "physical_plausibility") and dim not in p.applicable:
            continue
        scores[f"rubric:{dim}"] = value
    for dim in p.adaptive:
        scores[f"rubric:{dim}"] = draw("rubric_adaptive")
    for ref in ("visual_reference_evaluation", "text_reference_evaluation"):
        value = draw(ref)
        if ref in p.applicable:
            scores[ref] = value
    dropped = rng.random() < DROPPED_DIMENSION_RATE
    which = rng.choice(DROPPABLE)
    if dropped:
        del scores[f"rubric:{which}"]
    return scores


def _parsed(scores: dict[str, float], p: DemoPrompt) -> dict:
    """A judge answer consistent with ``scores`` (not-applicable rubric scores are ``""``)."""

    def num(v: float) -> int | float:
        return int(v) if v == int(v) else v

    checklist = sorted((int(k.split(":", 1)[1]), v) for k, v in scores.items() if k.startswith("checklist:"))
    rubric = {}
    for dim in GENERIC_RUBRIC + p.adaptive:
        v = scores.get(f"rubric:{dim}")
        rubric[dim] = {"score": "" if v is None else num(v)}
    parsed: dict = {
        "checklist_scores": [{"item": f"item {i}", "score": num(v)} for i, v in checklist],
        "rubric_scores": rubric,
    }
    for ref in ("visual_reference_evaluation", "text_reference_evaluation"):
        parsed[ref] = {"applicable": ref in scores, "score": num(scores.get(ref, 0.0))}
    return parsed


def _result(model: DemoModel, p: DemoPrompt, scores: dict[str, float]) -> dict:
    """A successful parsed result in the evaluator's format."""
    return {
        "success": True,
        "skipped": False,
        "error": None,
        "parsed": _parsed(scores, p),
        "scores": scores,
        "bench_id": p.sample_id,
        "sample_id": p.sample_id,
        "generator_name": model.source_id,
        "attached_visual_reference_image_count": 0,
    }


def _dump(obj: object) -> str:
    """One JSON document on one line (json's fast C encoder only runs without indentation)."""
    return json.dumps(obj, sort_keys=True) + "\n"


def _broken_result_text(kind: str, good: dict) -> str:
    """The text of a result file that exists but cannot be scored (one of ``INVALID_KINDS``)."""
    first = min(good["scores"])  # a checklist item: every well-formed answer has one
    if kind == "not_json":
        text = _dump(good)
        return text[: len(text) // 2]  # a write that was cut off
    if kind == "json_array":
        return _dump([good])
    if kind == "success_false":
        return _dump({
            "success": False,
            "error": "ValueError: checklist_scores[0].score: score must be in [0, 3], got 4.0",
            "bench_id": good["sample_id"],
            "sample_id": good["sample_id"],
        })  # fmt: skip
    if kind == "empty_scores":
        return _dump({**good, "scores": {}})
    bad = {"nan_score": float("nan"), "infinite_score": float("inf"), "string_score": "2.5",
           "boolean_score": True, "out_of_range_score": 4.0}[kind]  # fmt: skip
    return _dump({**good, "scores": {**good["scores"], first: bad}})  # NaN/Infinity as bare tokens


def _status_plan(prompts: list[DemoPrompt], model: DemoModel, protected: str | None) -> dict[str, str]:
    """``sample_id -> status`` for every non-scored prompt of ``model`` (exact counts)."""
    rng = _rng("status", model.model_id)
    pool = [p.sample_id for p in prompts if p.sample_id != protected]
    picked = rng.sample(pool, model.n_missing_generation + model.n_missing_evaluation + model.n_invalid)
    plan = {}
    for i, sid in enumerate(picked):
        if i < model.n_missing_generation:
            plan[sid] = "missing_generation"
        elif i < model.n_missing_generation + model.n_missing_evaluation:
            plan[sid] = "missing_evaluation"
        else:
            plan[sid] = "invalid_evaluation"
    return plan


def text_reference_only_prompt(prompts: list[DemoPrompt]) -> DemoPrompt:
    """The prompt on which ``TEXT_REFERENCE_ONLY_MODEL``'s result has only the text reference."""
    return next(p for p in prompts if p.partition == "TextualSearch" and "text_reference_evaluation" in p.applicable)


# ---------------------------------------------------------------------------------------
# The paper table (independent exact recomputation, SPEC §2/§4/§5 for Overall-10)
# ---------------------------------------------------------------------------------------
def paper_overall_10(model: DemoModel, scored: list[dict[str, float]]) -> float:
    """The paper table's Overall-10 (0–100) of ``model`` over all prompts under its policy:
    each scored result through the package's own extractor and per-prompt means
    (:func:`searchgen_nb.extract.extract_components`, :func:`searchgen_nb.records.prompt_overalls`),
    then the exact group mean rounded half-up (:mod:`searchgen_nb.numeric`) — the demo keeps
    no scoring rule of its own."""
    from searchgen_nb.extract import extract_components
    from searchgen_nb.numeric import exact_mean, to_public
    from searchgen_nb.records import prompt_overalls

    per_prompt = [prompt_overalls(extract_components({"scores": s}))[0] for s in scored]
    n = N_PROMPTS if model.missing_policy == "zero_fill" else len(scored)
    return to_public(exact_mean([v for v in per_prompt if v is not None], n), 1)


# ---------------------------------------------------------------------------------------
# The release config
# ---------------------------------------------------------------------------------------
def demo_config_text(base: str = "", release_config: str | None = None, n_scored: dict[str, int] | None = None,
                     previous_release: str | None = None) -> str:
    """The demo's release config (YAML text, written by the YAML library), with data paths
    below ``base``.

    ``base`` is the data folder relative to the config file ("" when they sit together,
    ``"../data/demo"`` for ``releases/demo.yml``); ``release_config`` is the config's own
    path from the project root, or None to leave the key out; ``n_scored`` overrides the
    coverage lock (the changed demo); ``previous_release`` is written when given. Depends only
    on the roster, so the committed ``releases/demo.yml`` can be checked against it without
    generating data.
    """

    def at(name: str) -> str:
        return posixpath.join(base, name) if base else name

    cfg: dict = {}
    if release_config is not None:
        cfg["release_config"] = release_config
    cfg.update({
        "benchmark": "SearchGen-Bench",
        "data_origin": "synthetic-demo",
        "dataset": at("prompts.jsonl"),
        "results_root": at("results"),
        "result_path": DEFAULT_RESULT_PATH,
        "paper_table": at("paper_table.json"),
    })
    if previous_release:
        cfg["previous_release"] = previous_release
    cfg["scoring"] = {"missing_policy_default": "zero_fill", "min_ranking_coverage": 0.9, "rounding_decimals": 1}
    cfg["models"] = {
        m.model_id: {"display_name": m.display_name, "type": m.type, "source_id": m.source_id, "lane": LANE, "missing_policy": m.missing_policy}
        for m in ROSTER
    }
    cfg["slices"] = {f"full_{N_PROMPTS}": {"include": [], "match": "all", "expected_rows": N_PROMPTS}}
    for name, n in DEMO_SLICES.items():
        cfg["slices"][name] = {"field": "eval_slices", "include": [name], "match": "any", "expected_rows": n}
    cfg["expected"] = {
        "n_prompts": N_PROMPTS,
        "partition": dict(EXPECTED_PARTITION),
        "n_scored": {m.model_id: (n_scored or {}).get(m.model_id, m.n_scored) for m in ROSTER},
    }
    header = [
        "# Synthetic SearchGen-Bench demo release written by searchgen_nb.demo; do not edit by hand.",
        "# Data: `searchgen-nb demo --out data/demo`; this file: `searchgen-nb demo --print-config`.",
        "# Every model name and score in it is invented. Models: display order for ties; slices: the",
        "# published v1.1 evaluation slices; expected.n_scored: the coverage lock (scored count per model).",
    ]
    return "\n".join(header) + "\n" + yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True, width=120)


def committed_config_text() -> str:
    """The text of ``releases/demo.yml``: the demo config reading from ``data/demo``."""
    return demo_config_text("../data/demo", "releases/demo.yml")


# ---------------------------------------------------------------------------------------
# The whole release in memory
# ---------------------------------------------------------------------------------------
@dataclass
class DemoRelease:
    """The whole demo in memory: what :func:`write_demo` puts on disk."""

    prompts: list[DemoPrompt]  # sample_id order
    line_order: list[DemoPrompt]  # the (shuffled) order of prompts.jsonl
    files: dict[str, bytes]  # path below results/ -> content
    statuses: dict[str, dict[str, str]]  # model_id -> sample_id -> status
    paper_table: dict[str, float]  # model_id -> Overall-10 on the 0–100 scale

    def prompts_jsonl(self) -> str:
        return "".join(json.dumps(p.metadata(), sort_keys=True) + "\n" for p in self.line_order)

    def partition(self) -> dict[str, int]:
        counts = {k: 0 for k in EXPECTED_PARTITION}
        for p in self.prompts:
            counts[p.partition] += 1
            if p.partition != "NoSearch":
                counts["SearchIntensive"] += 1
        return counts


def _check_profiles() -> None:
    """Every roster model has a profile, and profiles and tag effects name real components and tags."""
    problems = []
    if list(PROFILES) != [m.model_id for m in ROSTER]:
        problems.append("PROFILES must list the roster models in roster order")
    for model_id, profile in PROFILES.items():
        problems += [f"{model_id}: unknown component {c!r}" for c in profile.offsets if c not in COMPONENTS]
        if profile.weak_domain is not None and profile.weak_domain not in DOMAIN_COUNTS:
            problems.append(f"{model_id}: unknown weak domain {profile.weak_domain!r}")
    if set(DOMAIN_EFFECT) != set(DOMAIN_COUNTS) or set(FAILURE_MODE_EFFECT) != set(FAILURE_MODE_COUNTS):
        problems.append("DOMAIN_EFFECT / FAILURE_MODE_EFFECT must cover exactly the taxonomy's tags")
    if problems:
        raise RuntimeError("demo: " + "; ".join(problems))


#: The second, changed demo release (``searchgen-nb demo --changed``; SPEC §10): a judge re-run
#: scores one model lower on a few prompts of one domain (every score −0.25, floor 0), and two
#: NoSearch results of another model are lost (their images stay: missing_evaluation).
CHANGED_LOWER = ("halcyon_draw", "FAS", 5, 0.25)
CHANGED_LOST = ("pixelwright_2", 2)


def changed_pairs(prompts: list[DemoPrompt], statuses: dict[str, dict[str, str]]) -> tuple[list[str], list[str]]:
    """``(lowered, lost)`` sample_ids of the changed demo: the first scored prompts (sample_id
    order) of :data:`CHANGED_LOWER`'s model in its domain, and the first scored NoSearch
    prompts of :data:`CHANGED_LOST`'s model outside that domain."""
    (m1, dom, k1, _), (m2, k2) = CHANGED_LOWER, CHANGED_LOST
    lowered = [p.sample_id for p in prompts if dom in p.domains and statuses[m1][p.sample_id] == "scored"][:k1]
    lost = [p.sample_id for p in prompts if dom not in p.domains and p.partition == "NoSearch" and statuses[m2][p.sample_id] == "scored"][:k2]
    return lowered, lost


def build_demo(changed: bool = False) -> DemoRelease:
    """Generate every prompt, result and the paper table in memory (no file is written);
    ``changed``: the second release of :data:`CHANGED_LOWER` / :data:`CHANGED_LOST`."""
    _check_profiles()
    prompts = build_prompts()
    line_order = list(prompts)
    _rng("line_order").shuffle(line_order)
    special = text_reference_only_prompt(prompts)
    files: dict[str, bytes] = {}
    statuses: dict[str, dict[str, str]] = {}
    paper_table: dict[str, float] = {}
    invalid_seen = 0
    plans = {m.model_id: _status_plan(prompts, m, special.sample_id if m.model_id == TEXT_REFERENCE_ONLY_MODEL else None) for m in ROSTER}
    lowered, lost = changed_pairs(prompts, {m: {p.sample_id: plan.get(p.sample_id, "scored") for p in prompts} for m, plan in plans.items()}) if changed else ([], [])
    for m in ROSTER:
        protected = special.sample_id if m.model_id == TEXT_REFERENCE_ONLY_MODEL else None
        plan = dict(plans[m.model_id])
        if m.model_id == CHANGED_LOST[0]:
            plan.update(dict.fromkeys(lost, "missing_evaluation"))
        rng = _rng("scores", m.model_id)
        shifts = _tag_shifts(m, prompts)
        scored: list[dict[str, float]] = []
        statuses[m.model_id] = {}
        for p in prompts:
            # Drawn for every prompt: statuses never shift scores.
            scores = _judge_scores(rng, m, p, shifts[p.sample_id])
            if p.sample_id == protected:
                scores = {"text_reference_evaluation": scores["text_reference_evaluation"]}
            if m.model_id == CHANGED_LOWER[0] and p.sample_id in lowered:
                scores = {k: max(0.0, v - CHANGED_LOWER[3]) for k, v in scores.items()}
            status = statuses[m.model_id][p.sample_id] = plan.get(p.sample_id, "scored")
            if status == "missing_generation":
                continue
            folder = f"{p.release_row}/{LANE}/{m.source_id}"
            files[f"{folder}/{IMAGE_FILE}"] = PNG_BYTES
            if status == "missing_evaluation":
                continue
            good = _result(m, p, scores)
            if status == "scored":
                text = _dump(good)
                scored.append(scores)
            else:
                text = _broken_result_text(INVALID_KINDS[invalid_seen % len(INVALID_KINDS)], good)
                invalid_seen += 1
            files[f"{folder}/{RESULT_FILE}"] = text.encode("utf-8")
        assert len(scored) == m.n_scored - (len(lost) if m.model_id == CHANGED_LOST[0] else 0), (m.model_id, len(scored))
        paper_table[m.model_id] = paper_overall_10(m, scored)
    return DemoRelease(prompts, line_order, files, statuses, paper_table)


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------
def _check_target(out_dir: Path) -> None:
    """Refuse a non-empty ``out_dir`` that does not hold a previous demo (never touch real data)."""
    if out_dir.is_dir() and any(out_dir.iterdir()):
        marker = out_dir / "release.yml"
        if not (marker.is_file() and "data_origin: synthetic-demo" in marker.read_text(encoding="utf-8")):
            raise FileExistsError(f"demo: {out_dir} is not empty and holds no synthetic demo; refusing to overwrite it")


def _sync_tree(root: Path, files: dict[str, bytes]) -> int:
    """Make ``root`` hold exactly ``files`` (relative POSIX path -> bytes); return files written.

    Stale files and the folders they leave empty are removed; a file that already holds the
    right bytes is left alone, so regenerating an unchanged demo costs reads, not writes.
    """
    existing: set[str] = set()
    if root.is_dir():
        for dirpath, _, filenames in os.walk(root, topdown=False):  # children before parents
            rel_dir = Path(dirpath).relative_to(root).as_posix()
            for name in filenames:
                rel = name if rel_dir == "." else f"{rel_dir}/{name}"
                if rel in files:
                    existing.add(rel)
                else:
                    os.unlink(os.path.join(dirpath, name))
            if rel_dir != "." and not os.listdir(dirpath):
                os.rmdir(dirpath)
    written = 0
    made: set[str] = set()
    for rel in sorted(files):  # prompt-major: one folder's files are written together
        path = root / rel
        if rel in existing and path.read_bytes() == files[rel]:
            continue
        folder = rel.rpartition("/")[0]
        if folder not in made:
            (root / folder).mkdir(parents=True, exist_ok=True)
            made.add(folder)
        path.write_bytes(files[rel])
        written += 1
    return written


def write_demo(out_dir: Path, changed: bool = False, previous: Path | None = None) -> dict:
    """Write the synthetic demo release into ``out_dir`` and return a summary.

    ``changed``: the second, changed release instead (:data:`CHANGED_LOWER`,
    :data:`CHANGED_LOST`; its coverage lock counts the lost results); ``previous``: the
    published data folder of the first release, written into ``release.yml`` as
    ``previous_release`` (relative to ``out_dir``) so that the release reports what changed.

    Files: ``prompts.jsonl``, ``results/…``, ``paper_table.json`` and ``release.yml`` (its
    ``release_config`` key is set when ``out_dir`` lies inside the project). A previous demo in
    ``out_dir`` is brought up to date (stale result files removed, unchanged ones not
    rewritten); a non-empty folder holding anything else is refused (FileExistsError).

    Summary: ``n_prompts``, ``partition`` (counts by the SPEC §1.2 rule), ``n_files`` (in the
    release), ``n_result_files_written`` (below ``results/`` by this call) and, per model,
    ``n_scored``, ``statuses`` (count per status) and ``overall_10`` (the paper table).
    """
    out_dir = Path(out_dir).resolve()
    _check_target(out_dir)
    demo = build_demo(changed)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "prompts.jsonl").write_text(demo.prompts_jsonl(), encoding="utf-8", newline="\n")
    n_written = _sync_tree(out_dir / "results", demo.files)
    table = json.dumps(demo.paper_table, indent=2, sort_keys=True) + "\n"
    (out_dir / "paper_table.json").write_text(table, encoding="utf-8", newline="\n")
    root = project_root().resolve()
    config_path = out_dir / "release.yml"
    rel_config = Path(os.path.relpath(config_path, root)).as_posix() if config_path.is_relative_to(root) else None
    n_scored = {m.model_id: sum(s == "scored" for s in demo.statuses[m.model_id].values()) for m in ROSTER}
    prev = None if previous is None else Path(os.path.relpath(Path(previous).resolve(), out_dir)).as_posix()
    config_path.write_text(demo_config_text("", rel_config, n_scored=n_scored, previous_release=prev), encoding="utf-8", newline="\n")

    models = {}
    for m in ROSTER:
        counts = {s: 0 for s in ("scored", "invalid_evaluation", "missing_evaluation", "missing_generation")}
        for status in demo.statuses[m.model_id].values():
            counts[status] += 1
        models[m.model_id] = {
            "n_scored": counts["scored"],
            "statuses": counts,
            "overall_10": demo.paper_table[m.model_id],
        }
    return {
        "n_prompts": len(demo.prompts),
        "partition": demo.partition(),
        "n_files": len(demo.files) + 3,
        "n_result_files_written": n_written,
        "models": models,
    }
