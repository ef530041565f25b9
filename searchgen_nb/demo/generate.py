"""The demo's data in memory: prompts, judge results, images, the paper table and the release
config, all drawn from seeded random streams (see the package docstring)."""

from __future__ import annotations

import itertools
import json
import math
import posixpath
import random
from dataclasses import dataclass, field
from importlib import resources

import yaml

from searchgen_nb.constants import DEFAULT_RESULT_PATH, STATUSES
from searchgen_nb.declaration import GENERIC_RUBRIC
from searchgen_nb.demo.evidence import image_png, initials, judge_reason, prompt_evidence


def _package_json(package: str, name: str) -> dict:
    return json.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))


PROFILE = _package_json("searchgen_nb.demo", "profile.json")
PROMPTS, SCORES, TAGS, CHANGED = (PROFILE[k] for k in ("prompts", "scores", "tags", "changed"))
N_PROMPTS, LANE = PROMPTS["n_prompts"], PROFILE["lane"]
RESULT_FILE = posixpath.basename(DEFAULT_RESULT_PATH)
PNG_BYTES = bytes.fromhex(PROFILE["image_png_hex"])
REFS = ("visual_reference_evaluation", "text_reference_evaluation")
_TAXONOMY = _package_json("searchgen_nb", "data/taxonomy.json")
#: ``n_prompts_v1.0`` of every domain and failure-mode tag of the shipped taxonomy.
TAG_COUNTS = {
    kind: {t: e["n_prompts_v1.0"] for t, e in sorted(_TAXONOMY[kind].items())}
    for kind in ("domains", "failure_modes")
}
DOMAIN_NAMES = {t: e["name"] for t, e in _TAXONOMY["domains"].items()}
KNOWLEDGE, TEXT, IMAGINATIVE, LOOKS = (
    frozenset(TAGS[k])
    for k in ("knowledge_tags", "text_tags", "imaginative_tags", "looks_components")
)
#: The judge's side of a prompt, left out of its metadata line.
_JUDGE_SIDE = ("kind", "n_checklist", "adaptive", "applicable", "effect")


def _roster() -> tuple[dict, ...]:
    """``roster.json``'s models with ``n_scored``, ``text_skill`` (text rendering relative to
    the field: open models lose a penalty) and ``bias`` (raw shift per component)."""
    models = _package_json("searchgen_nb.demo", "roster.json")["models"]
    for m in models:
        offsets = m["profile"]["offsets"]
        penalty = SCORES["open_text_rendering_penalty"] if m["type"] == "Open" else 0.0
        m["n_scored"] = N_PROMPTS - sum(m["statuses"].values())
        m["text_skill"] = offsets.get("text_rendering", 0.0) + penalty
        m["bias"] = {c: b + offsets.get(c, 0.0) for c, b in SCORES["component_bias"].items()}
        m["bias"]["text_rendering"] += penalty
    return tuple(models)


ROSTER = _roster()


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
    n_checklist: int = 3  # this and below: the judge's side, the same for every model
    adaptive: tuple[str, ...] = ()
    applicable: frozenset[str] = frozenset()
    effect: float = 0.0
    user_prompt: str = ""  # and checklist: the evidence (searchgen_nb.demo.evidence)
    checklist: tuple[str, ...] = ()

    @property
    def partition(self) -> str:
        """Stratum or search type by the partition rule (from the id, never the kind)."""
        if self.subset == "NoSearch":
            return "NoSearch"
        textual = "texthard" in self.sample_id or "text_rendering" in self.sample_id
        return "TextualSearch" if textual else "VisualSearch"

    def metadata(self) -> dict:
        meta = {k: v for k, v in vars(self).items() if k not in _JUDGE_SIDE}
        return {"release_row": f"evalset_rows/{self.sample_id}", **meta}


def _rng(*parts: str) -> random.Random:
    """An independent random stream for one concern (seeded by string: no hash seed involved)."""
    return random.Random(":".join((PROFILE["seed"],) + parts))


def _assign_tags(rng: random.Random, prompts: list[DemoPrompt], kind: str) -> None:
    """Give every tag of ``kind`` exactly its v1.0 count of prompts; every prompt first gets one
    primary domain (tags share those slots in proportion to their counts)."""
    counts, cap = TAG_COUNTS[kind], PROMPTS["max_tags_per_prompt"][kind]
    tags = sorted(counts, key=lambda t: (-counts[t], t))
    held: dict[str, list[str]] = {p.sample_id: [] for p in prompts}

    def place(tag: str, pool: list[DemoPrompt], k: int) -> None:
        """``k`` prompts of ``pool`` by affinity, without replacement (Efraimidis–Spirakis)."""
        if k > len(pool):
            raise RuntimeError(f"demo: cannot place {tag} on {k} prompts, only {len(pool)} fit")
        weights = [float(PROMPTS["tag_affinity"].get(tag, {}).get(p.kind, 1)) for p in pool]
        keyed = [(rng.random() ** (1.0 / w), -i) for i, w in enumerate(weights)]
        for i in sorted(sorted(range(len(pool)), key=keyed.__getitem__, reverse=True)[:k]):
            held[pool[i].sample_id].append(tag)

    primary = {t: 0 for t in tags}
    if kind == "domains":
        primary = {t: max(1, counts[t] * len(prompts) // sum(counts.values())) for t in tags}
        for t in tags[: len(prompts) - sum(primary.values())]:  # the rounding remainder
            primary[t] += 1
        for t in tags:
            place(t, [p for p in prompts if not held[p.sample_id]], primary[t])
    for t in tags:
        pool = [p for p in prompts if t not in held[p.sample_id] and len(held[p.sample_id]) < cap]
        place(t, pool, counts[t] - primary[t])
    for p in prompts:
        setattr(p, kind, held[p.sample_id])


def _assign_slices(rng: random.Random, prompts: list[DemoPrompt]) -> None:
    """``eval_slices``: test-mini and its easy and hard halves with the published counts."""
    tags: dict[str, list[str]] = {p.sample_id: [] for p in prompts}
    for part, n in PROMPTS["testmini_counts"].items():
        pool = [p for p in prompts if p.partition == part]
        mini, half = rng.sample(pool, n), PROMPTS["half_counts"][part]
        easy, hard = mini[:half], mini[half:][:half]
        if len(hard) < half:
            hard += rng.sample([p for p in pool if p not in mini], half - len(hard))
        for name, chosen in (("testmini", mini), ("testmini_easy", easy), ("testmini_hard", hard)):
            for p in chosen:
                tags[p.sample_id].append(name)
    for p in prompts:
        p.eval_slices = tuple(sorted(tags[p.sample_id]))


def build_prompts() -> list[DemoPrompt]:
    """The 751 demo prompts in ``sample_id`` order (the file order is shuffled separately)."""
    kinds = [(kind, stem, subset) for kind, stem, subset, n in PROMPTS["kinds"] for _ in range(n)]
    _rng("prompts").shuffle(kinds)
    prompts = [DemoPrompt(f"sgb_{s}_{i:04d}", k, sub) for i, (k, s, sub) in enumerate(kinds, 1)]
    for kind in TAG_COUNTS:
        _assign_tags(_rng(kind), prompts, kind)
    meta = _rng("metadata")
    difficulties = [d for d, n in PROMPTS["difficulty_counts"].items() for _ in range(n)]
    meta.shuffle(difficulties)
    chinese = {p.sample_id for p in meta.sample(prompts, PROMPTS["n_chinese"])}
    miniset: set[str] = set()
    for part, n in PROMPTS["miniset_counts"].items():
        pool = [p for p in prompts if p.partition == part]
        miniset |= {p.sample_id for p in meta.sample(pool, n)}
    for p, difficulty in zip(prompts, difficulties):
        p.difficulty, p.language = difficulty, "zh" if p.sample_id in chinese else "en"
        p.is_miniset, w = p.sample_id in miniset, PROMPTS["task_type_weights"][p.kind]
        p.generation_task_type = meta.choices(list(w), weights=list(w.values()))[0]
    _assign_slices(_rng("slices"), prompts)
    judge = _rng("applicability")
    for p in prompts:
        p.n_checklist = judge.randint(*PROMPTS["checklist_items"])
        p.adaptive = tuple(dict.fromkeys(PROMPTS["adaptive_by_domain"][d] for d in p.domains[:2]))
        p.applicable = frozenset(c for c, by_kind in PROMPTS["applicability"].items()
                                 if judge.random() < by_kind[p.kind])  # fmt: skip
        p.effect = (judge.random() * 2 - 1) * SCORES["prompt_effect_spread"]
        p.user_prompt, p.checklist = prompt_evidence(
            PROFILE["seed"],
            p.sample_id,
            p.kind,
            p.generation_task_type,
            DOMAIN_NAMES[p.domains[0]],
            p.n_checklist,
        )
    return prompts


def _tag_shifts(model: dict, prompts: list[DemoPrompt]) -> dict[str, float]:
    """``sample_id -> raw shift`` of ``model`` from each prompt's tags (``profile.json``,
    ``tags``), centred on the model's mean so tags move scores between prompts only."""
    jitter, profile = _rng("tag_profile", model["model_id"]), model["profile"]
    effect: dict[str, float] = {}
    for tag, base in {**TAGS["domain_effect"], **TAGS["failure_mode_effect"]}.items():
        if tag in KNOWLEDGE:
            base *= profile["knowledge"]
        if tag in TEXT:
            base += TAGS["text_tag_dependence"] * model["text_skill"]
        if tag in IMAGINATIVE:
            composition = profile["offsets"].get("composition_and_aesthetics", 0.0)
            base += TAGS["imaginative_tag_dependence"] * composition
        if tag == profile["weak_domain"]:
            base += TAGS["weak_domain_shift"]
        effect[tag] = base + (jitter.random() * 2 - 1) * TAGS["tag_jitter"]
    raw = {p.sample_id: sum(effect[t] for t in p.domains) + sum(effect[t] for t in p.failure_modes)
           for p in prompts}  # fmt: skip
    centre = sum(raw.values()) / len(raw)
    return {sid: v - centre for sid, v in raw.items()}


def _judge_scores(rng: random.Random, model: dict, p: DemoPrompt, shift: float) -> dict:
    """The flat ``scores`` of one judge answer. Every component is drawn, applicable or not, so
    the stream depends only on the prompt, never on statuses."""
    base = model["skill"] + SCORES["difficulty_shift"][p.difficulty] + p.effect
    noise, bias, looks = SCORES["noise_scale"], model["bias"], TAGS["looks_tag_weight"]

    def draw(component: str) -> float:
        x = base + bias[component] + (looks if component in LOOKS else 1.0) * shift
        x += (rng.random() + rng.random() + rng.random() - 1.5) * noise
        return min(3.0, max(0.0, math.floor(x * 2 + 0.5) / 2))  # 0.5 steps, half-up

    scores = {f"checklist:{i}": draw("checklist") for i in range(p.n_checklist)}
    drawn = [(f"rubric:{d}", d) for d in GENERIC_RUBRIC]
    drawn += [(f"rubric:{d}", "rubric_adaptive") for d in p.adaptive] + [(r, r) for r in REFS]
    for key, component in drawn:
        value = draw(component)
        if component in p.applicable or component not in PROMPTS["applicability"]:
            scores[key] = value
    dropped = rng.random() < SCORES["dropped_dimension_rate"]
    which = rng.choice(SCORES["droppable"])
    if dropped:
        del scores[f"rubric:{which}"]
    return scores


def _result(model: dict, p: DemoPrompt, scores: dict[str, float], named: bool = True) -> dict:
    """A successful parsed result in the judge's format (not-applicable rubric scores ``""``)
    with the judge's reasons; checklist items by their text, or (not ``named``: the text a
    broken result file is made from) ``item <i>`` and no reasons."""

    def num(v: float | None) -> int | float | str:
        return "" if v is None else int(v) if v == int(v) else v

    checklist = sorted((int(k[10:]), v) for k, v in scores.items() if k.startswith("checklist:"))
    items = [(p.checklist[i] if named else f"item {i}", v) for i, v in checklist]
    parsed: dict = {
        "checklist_scores": [{"item": item, "score": num(v)} for item, v in items],
        "rubric_scores": {d: {"score": num(scores.get(f"rubric:{d}"))}
                          for d in GENERIC_RUBRIC + p.adaptive},
        **{r: {"applicable": r in scores, "score": num(scores.get(r, 0.0))} for r in REFS},
    }  # fmt: skip
    if named:  # the judge's reasons, agreeing with its scores
        for (item, v), entry in zip(items, parsed["checklist_scores"]):
            entry["reason"] = judge_reason(v, item)
        for d, entry in parsed["rubric_scores"].items():
            entry["reason"] = judge_reason(scores.get(f"rubric:{d}"), d.replace("_", " "))
        for r in REFS:
            parsed[r]["reason"] = judge_reason(scores.get(r), r.replace("_", " "))
    return {
        "success": True,
        "skipped": False,
        "error": None,
        "parsed": parsed,
        "scores": scores,
        "bench_id": p.sample_id,
        "sample_id": p.sample_id,
        "generator_name": model["source_id"],
        "attached_visual_reference_image_count": 0,
    }


def dump_line(obj: object) -> str:
    """One JSON document on one line, keys sorted."""
    return json.dumps(obj, sort_keys=True) + "\n"


def _broken_result_text(kind: str, good: dict) -> str:
    """The text of a result file that exists but cannot be scored (``results.invalid_kinds``)."""
    sid, first = good["sample_id"], min(good["scores"])  # a checklist item: every answer has one
    if kind == "not_json":
        return dump_line(good)[: len(dump_line(good)) // 2]  # a write that was cut off
    if kind in ("json_array", "empty_scores"):
        return dump_line([good] if kind == "json_array" else {**good, "scores": {}})
    if kind == "success_false":
        error = "ValueError: checklist_scores[0].score: score must be in [0, 3], got 4.0"
        return dump_line({"success": False, "error": error, "bench_id": sid, "sample_id": sid})
    bad = {"nan_score": float("nan"), "infinite_score": float("inf"), "string_score": "2.5",
           "boolean_score": True, "out_of_range_score": 4.0}[kind]  # fmt: skip
    return dump_line({**good, "scores": {**good["scores"], first: bad}})  # NaN, Infinity: bare


def _status_plan(prompts: list[DemoPrompt], model: dict, protected: str | None) -> dict:
    """``sample_id -> status`` of every prompt of ``model`` (exact counts per status)."""
    pool = [p.sample_id for p in prompts if p.sample_id != protected]
    order = [s for s in reversed(STATUSES[1:]) for _ in range(model["statuses"][s])]
    plan = dict.fromkeys((p.sample_id for p in prompts), "scored")
    plan.update(zip(_rng("status", model["model_id"]).sample(pool, len(order)), order))
    return plan


def paper_overall_10(model: dict, scored: list[dict[str, float]]) -> float:
    """The paper table's Overall-10 (public 0–100) of ``model`` under its policy, by the
    package's own extractor and rounding (no scoring rule here)."""
    from searchgen_nb.extract import extract_components
    from searchgen_nb.numeric import exact_mean, to_public
    from searchgen_nb.records import prompt_overalls

    per_prompt = [prompt_overalls(extract_components({"scores": s}))[0] for s in scored]
    n = N_PROMPTS if model["missing_policy"] == "zero_fill" else len(scored)
    return to_public(exact_mean([v for v in per_prompt if v is not None], n), 1)


def demo_config_text(
    base: str = "",
    release_config: str | None = None,
    n_scored: dict[str, int] | None = None,
    previous_release: str | None = None,
    lost_results: dict[str, list[str]] | None = None,
) -> str:
    """The release config (YAML) with data paths below ``base`` ("" beside the data); with
    ``release_config`` (its path from the project root), ``n_scored`` (the coverage lock,
    default: the roster's), ``previous_release`` and the acknowledged ``lost_results`` when
    given."""
    cfg: dict = {} if release_config is None else {"release_config": release_config}
    cfg |= {
        "benchmark": "SearchGen-Bench",
        "data_origin": "synthetic-demo",
        "dataset": posixpath.join(base, "prompts.jsonl"),
        "results_root": posixpath.join(base, "results"),
        "result_path": DEFAULT_RESULT_PATH,
        "paper_table": posixpath.join(base, "paper_table.json"),
    }
    cfg |= {"previous_release": previous_release} if previous_release else {}
    cfg["scoring"] = dict(PROFILE["config"]["scoring"])
    cfg["models"] = {m["model_id"]: {**{k: m[k] for k in ("display_name", "type", "source_id")},
                                     "lane": LANE, "missing_policy": m["missing_policy"]}
                     for m in ROSTER}  # fmt: skip
    slices = {f"full_{N_PROMPTS}": {"include": [], "match": "all", "expected_rows": N_PROMPTS}}
    for name, n in PROFILE["config"]["slices"].items():
        slices[name] = {
            "field": "eval_slices",
            "include": [name],
            "match": "any",
            "expected_rows": n,
        }
    lock = {m["model_id"]: (n_scored or {}).get(m["model_id"], m["n_scored"]) for m in ROSTER}
    expected = {
        "n_prompts": N_PROMPTS,
        "partition": dict(PROMPTS["expected_partition"]),
        "n_scored": lock,
    } | ({"lost_results": lost_results} if lost_results else {})
    breakdowns = PROFILE["config"]["breakdowns"]
    body = yaml.safe_dump(cfg | {"slices": slices, "breakdowns": breakdowns, "expected": expected},
                          sort_keys=False, allow_unicode=True, width=120)  # fmt: skip
    return "\n".join(PROFILE["config"]["header"]) + "\n" + body


def committed_config_text() -> str:
    """The text of ``releases/demo.yml``: the demo config reading from ``data/demo``."""
    return demo_config_text("../data/demo", "releases/demo.yml")


def _changed_pairs(prompts: list[DemoPrompt], plans: dict[str, dict]) -> tuple[list, list]:
    """``(lowered, lost)`` sample_ids of the changed release (``profile.json``, ``changed``)."""
    lower, lost = CHANGED["lower"], CHANGED["lost"]
    dom, s1, s2 = lower["domain"], plans[lower["model"]], plans[lost["model"]]
    lowered = [p.sample_id for p in prompts if dom in p.domains and s1[p.sample_id] == "scored"]
    gone = [p.sample_id for p in prompts if dom not in p.domains and p.partition == "NoSearch"
            and s2[p.sample_id] == "scored"]  # fmt: skip
    return lowered[: lower["n"]], gone[: lost["n"]]


def _first_plans(prompts: list[DemoPrompt]) -> tuple[dict[str, dict], str, str]:
    """The first release's statuses ``{model_id: {sample_id: status}}``, the one prompt and
    model whose result holds only the text reference."""
    only = PROFILE["results"]["text_reference_only_model"]
    special = next(p.sample_id for p in prompts
                   if p.partition == "TextualSearch" and REFS[1] in p.applicable)  # fmt: skip
    plans = {m["model_id"]: _status_plan(prompts, m, special if m["model_id"] == only else None)
             for m in ROSTER}  # fmt: skip
    return plans, special, only


def lost_in_changed() -> dict[str, list[str]]:
    """``{model_id: [sample_id]}``: the results the changed release loses against the first
    (``profile.json``, ``changed``), which its config acknowledges in ``expected``."""
    prompts = build_prompts()
    return {CHANGED["lost"]["model"]: sorted(_changed_pairs(prompts, _first_plans(prompts)[0])[1])}


def build_demo(changed: bool = False) -> tuple[list[DemoPrompt], dict, dict, dict]:
    """``(prompts in file order, result files, statuses, paper table)`` in memory;
    ``changed``: the second release (``profile.json``, ``changed``)."""
    prompts = build_prompts()
    plans, special, only = _first_plans(prompts)
    lowered, lost = _changed_pairs(prompts, plans) if changed else ([], [])
    plans[CHANGED["lost"]["model"]].update(dict.fromkeys(lost, "missing_evaluation"))
    lower, files, paper_table = CHANGED["lower"], {}, {}
    invalid = itertools.cycle(PROFILE["results"]["invalid_kinds"])
    for m in ROSTER:
        rng, shifts, scored = _rng("scores", m["model_id"]), _tag_shifts(m, prompts), []
        hue, label = ROSTER.index(m) / len(ROSTER), initials(m["display_name"])
        for p in prompts:
            scores = _judge_scores(rng, m, p, shifts[p.sample_id])  # drawn whatever the status
            if p.sample_id == special and m["model_id"] == only:
                scores = {REFS[1]: scores[REFS[1]]}
            if p.sample_id in lowered and m["model_id"] == lower["model"]:
                scores = {k: max(0.0, v - lower["by"]) for k, v in scores.items()}
            status = plans[m["model_id"]][p.sample_id]
            folder = result_folder(p, m)
            if status != "missing_generation":
                files[f"{folder}/image.png"] = image_png(hue, label, p.partition[:3].upper())
            if status == "scored":
                scored.append(scores)
                files[f"{folder}/{RESULT_FILE}"] = dump_line(_result(m, p, scores)).encode("utf-8")
            elif status == "invalid_evaluation":
                text = _broken_result_text(next(invalid), _result(m, p, scores, named=False))
                files[f"{folder}/{RESULT_FILE}"] = text.encode("utf-8")
        paper_table[m["model_id"]] = paper_overall_10(m, scored)
    _rng("line_order").shuffle(prompts)
    return prompts, files, plans, paper_table


def result_folder(p: DemoPrompt, m: dict) -> str:
    """The folder of one prompt × model pair below ``results/`` (image and result file)."""
    return f"evalset_rows/{p.sample_id}/{LANE}/{m['source_id']}"
