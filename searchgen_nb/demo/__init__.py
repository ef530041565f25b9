"""A deterministic, synthetic SearchGen-Bench release in the real file formats.

The book must build and the release gate must pass without the real benchmark data, so this
module writes a stand-in release that looks, to the pipeline, exactly like a real one:
``prompts.jsonl`` (751 prompt lines in a shuffled, fixed order), ``results/`` (one judge result
per prompt × model in the canonical layout, a 1×1 ``image.png`` beside every generation that
exists), ``paper_table.json`` (``{model_id: Overall-10}`` on the 0–100 scale, recomputed here)
and ``release.yml`` (data origin ``synthetic-demo``, an ``expected`` block locking every count).

Sizes and tag counts are the published v1.0 ones (``searchgen_nb/data/taxonomy.json``); prompt
ids, tag assignment, the 13 fictional models and every score are invented. The tuned numbers
are data beside this module, each section explained by its ``about``: ``roster.json`` (the
models and their profiles) and ``profile.json`` (prompt set, score model, tag effects, broken
result files, the changed release, the config's fixed parts). The release exercises every
status (data contract, § 5. Status of a prompt × model pair) and the edge cases the pipeline
must survive: nine kinds of broken result file, images without a result, missing folders,
NoSearch ids containing ``texthard``, dropped generic dimensions and one result whose only
component is the text reference.

Determinism: every random choice comes from a ``random.Random`` seeded with a string (no hash
seed involved), one stream per concern and per model, so editing one model leaves the others'
data unchanged; noise is a sum of uniforms (no platform maths library on the score path);
iteration is over sorted ids or the roster order; JSON has sorted keys. Two runs give
byte-identical trees, and regenerating an unchanged demo rewrites nothing.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import posixpath
import random
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path

import yaml

from searchgen_nb.config import project_root
from searchgen_nb.constants import COMPONENTS, DEFAULT_RESULT_PATH, GENERIC_RUBRIC


def _package_json(package: str, name: str) -> dict:
    return json.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))


PROFILE = _package_json("searchgen_nb.demo", "profile.json")
PROMPTS, SCORES, TAGS, CHANGED = (PROFILE[k] for k in ("prompts", "scores", "tags", "changed"))
N_PROMPTS = PROMPTS["n_prompts"]
LANE = PROFILE["lane"]
RESULT_FILE = posixpath.basename(DEFAULT_RESULT_PATH)
IMAGE_FILE = "image.png"
PNG_BYTES = bytes.fromhex(PROFILE["image_png_hex"])
INVALID_KINDS = PROFILE["results"]["invalid_kinds"]
STATUSES = ("scored", "invalid_evaluation", "missing_evaluation", "missing_generation")
#: ``n_prompts_v1.0`` of every domain and failure-mode tag of the shipped taxonomy.
TAG_COUNTS = {
    kind: {t: e["n_prompts_v1.0"] for t, e in sorted(entries.items())}
    for kind, entries in _package_json("searchgen_nb", "data/taxonomy.json").items()
    if kind in ("domains", "failure_modes")
}
TAG_EFFECT = {**TAGS["domain_effect"], **TAGS["failure_mode_effect"]}
KNOWLEDGE, TEXT, IMAGINATIVE, LOOKS = (
    frozenset(TAGS[k]) for k in ("knowledge_tags", "text_tags", "imaginative_tags", "looks_components")
)
META_KEYS = ("sample_id", "subset", "domains", "failure_modes", "difficulty", "language",
             "generation_task_type", "is_miniset", "eval_slices")  # fmt: skip


@dataclass
class DemoModel:
    """One fictional model of ``roster.json``: who it is, its skill, status counts and profile."""

    model_id: str
    display_name: str
    type: str  # "Open" or "Commercial"
    source_id: str
    missing_policy: str
    skill: float
    statuses: dict[str, int]  # non-scored status -> number of prompts
    profile: dict  # offsets (per component), knowledge, weak_domain

    @property
    def n_scored(self) -> int:
        return N_PROMPTS - sum(self.statuses.values())

    @property
    def text_skill(self) -> float:
        """Text rendering relative to the field: the offset, the open models' penalty included."""
        penalty = SCORES["open_text_rendering_penalty"] if self.type == "Open" else 0.0
        return self.profile["offsets"].get("text_rendering", 0.0) + penalty

    @cached_property
    def bias(self) -> dict[str, float]:
        """Raw shift per component: the field's bias plus the model's offset (and penalty)."""
        out = {}
        for component, bias in SCORES["component_bias"].items():
            out[component] = bias + self.profile["offsets"].get(component, 0.0)
            if component == "text_rendering" and self.type == "Open":
                out[component] += SCORES["open_text_rendering_penalty"]
        return out


ROSTER = tuple(
    DemoModel(**{k: v for k, v in m.items() if k in DemoModel.__dataclass_fields__})
    for m in _package_json("searchgen_nb.demo", "roster.json")["models"]
)


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
        """Stratum or search type by the partition rule (from the id, never the kind)."""
        if self.subset == "NoSearch":
            return "NoSearch"
        textual = "texthard" in self.sample_id or "text_rendering" in self.sample_id
        return "TextualSearch" if textual else "VisualSearch"

    def metadata(self) -> dict:
        return {"release_row": self.release_row, **{k: getattr(self, k) for k in META_KEYS}}


def _rng(*parts: str) -> random.Random:
    """An independent random stream for one concern (seeded by string: no hash seed involved)."""
    return random.Random(":".join((PROFILE["seed"],) + parts))


def _weighted_sample(rng: random.Random, pool: list, weights: list[float], k: int) -> list:
    """``k`` distinct members of ``pool`` drawn without replacement by ``weights``
    (Efraimidis–Spirakis keys ``u ** (1 / w)``), in pool order."""
    if k > len(pool):
        raise RuntimeError(f"demo: cannot place a tag on {k} prompts, only {len(pool)} candidates")
    keyed = [(rng.random() ** (1.0 / w), -i) for i, w in enumerate(weights)]
    order = sorted(range(len(pool)), key=lambda i: keyed[i], reverse=True)
    return [pool[i] for i in sorted(order[:k])]


def _assign_tags(rng: random.Random, prompts: list[DemoPrompt], kind: str) -> None:
    """Give every tag of ``kind`` exactly its v1.0 count of distinct prompts; every prompt
    first gets one primary domain (tags share the slots in proportion to their counts)."""
    counts, cap = TAG_COUNTS[kind], PROMPTS["max_tags_per_prompt"][kind]
    tags = sorted(counts, key=lambda t: (-counts[t], t))
    held: dict[str, list[str]] = {p.sample_id: [] for p in prompts}

    def place(tag: str, pool: list[DemoPrompt], k: int) -> None:
        weights = [float(PROMPTS["tag_affinity"].get(tag, {}).get(p.kind, 1)) for p in pool]
        for p in _weighted_sample(rng, pool, weights, k):
            held[p.sample_id].append(tag)

    primary = {t: 0 for t in tags}
    if kind == "domains":
        total = sum(counts.values())
        primary = {t: max(1, counts[t] * len(prompts) // total) for t in tags}
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
        mini = rng.sample(pool, n)
        half = PROMPTS["half_counts"][part]
        easy, hard = mini[:half], mini[half:][:half]
        hard += rng.sample([p for p in pool if p not in mini], half - len(hard)) if half > len(hard) else []
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
        miniset |= {p.sample_id for p in meta.sample([p for p in prompts if p.partition == part], n)}
    for p, difficulty in zip(prompts, difficulties):
        p.difficulty = difficulty
        p.language = "zh" if p.sample_id in chinese else "en"
        p.is_miniset = p.sample_id in miniset
        w = PROMPTS["task_type_weights"][p.kind]
        p.generation_task_type = meta.choices(list(w), weights=list(w.values()))[0]
    _assign_slices(_rng("slices"), prompts)
    judge, spread = _rng("applicability"), SCORES["prompt_effect_spread"]
    for p in prompts:
        p.n_checklist = judge.randint(*PROMPTS["checklist_items"])
        p.adaptive = tuple(dict.fromkeys(PROMPTS["adaptive_by_domain"][d] for d in p.domains[:2]))
        p.applicable = frozenset(
            c for c, by_kind in PROMPTS["applicability"].items() if judge.random() < by_kind[p.kind]
        )
        p.effect = (judge.random() * 2 - 1) * spread
    return prompts


def _tag_shifts(model: DemoModel, prompts: list[DemoPrompt]) -> dict[str, float]:
    """``sample_id -> raw shift`` of ``model`` from each prompt's tags (``profile.json``,
    ``tags``), centred on the model's mean so tags move scores between prompts only."""
    jitter, profile = _rng("tag_profile", model.model_id), model.profile
    effect: dict[str, float] = {}
    for tag, base in TAG_EFFECT.items():
        if tag in KNOWLEDGE:
            base *= profile["knowledge"]
        if tag in TEXT:
            base += TAGS["text_tag_dependence"] * model.text_skill
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


def _judge_scores(rng: random.Random, model: DemoModel, p: DemoPrompt, shift: float) -> dict:
    """The flat ``scores`` map of one well-formed judge answer. Every component is drawn,
    applicable or not, so the stream depends only on the prompt, never on statuses."""
    base = model.skill + SCORES["difficulty_shift"][p.difficulty] + p.effect
    noise, bias, looks = SCORES["noise_scale"], model.bias, TAGS["looks_tag_weight"]

    def draw(component: str) -> float:
        x = base + bias[component] + (looks if component in LOOKS else 1.0) * shift
        x += (rng.random() + rng.random() + rng.random() - 1.5) * noise
        return min(3.0, max(0.0, math.floor(x * 2 + 0.5) / 2))  # 0.5 steps, half-up

    scores = {f"checklist:{i}": draw("checklist") for i in range(p.n_checklist)}
    for dim in GENERIC_RUBRIC:
        value = draw(dim)
        if dim in p.applicable or dim not in ("text_rendering", "physical_plausibility"):
            scores[f"rubric:{dim}"] = value
    for dim in p.adaptive:
        scores[f"rubric:{dim}"] = draw("rubric_adaptive")
    for ref in ("visual_reference_evaluation", "text_reference_evaluation"):
        value = draw(ref)
        if ref in p.applicable:
            scores[ref] = value
    dropped = rng.random() < SCORES["dropped_dimension_rate"]
    which = rng.choice(SCORES["droppable"])
    if dropped:
        del scores[f"rubric:{which}"]
    return scores


def _result(model: DemoModel, p: DemoPrompt, scores: dict[str, float]) -> dict:
    """A successful parsed result in the judge's format (not-applicable rubric scores ``""``)."""

    def num(v: float) -> int | float:
        return int(v) if v == int(v) else v

    checklist = sorted((int(k[10:]), v) for k, v in scores.items() if k.startswith("checklist:"))
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
    return {
        "success": True, "skipped": False, "error": None, "parsed": parsed, "scores": scores,
        "bench_id": p.sample_id, "sample_id": p.sample_id, "generator_name": model.source_id,
        "attached_visual_reference_image_count": 0,
    }  # fmt: skip


def _dump(obj: object) -> str:
    """One JSON document on one line (json's fast C encoder only runs without indentation)."""
    return json.dumps(obj, sort_keys=True) + "\n"


def _broken_result_text(kind: str, good: dict) -> str:
    """The text of a result file that exists but cannot be scored (one of ``INVALID_KINDS``)."""
    sid = good["sample_id"]
    if kind == "not_json":
        return _dump(good)[: len(_dump(good)) // 2]  # a write that was cut off
    if kind == "json_array":
        return _dump([good])
    if kind == "success_false":
        error = "ValueError: checklist_scores[0].score: score must be in [0, 3], got 4.0"
        return _dump({"success": False, "error": error, "bench_id": sid, "sample_id": sid})
    if kind == "empty_scores":
        return _dump({**good, "scores": {}})
    bad = {"nan_score": float("nan"), "infinite_score": float("inf"), "string_score": "2.5",
           "boolean_score": True, "out_of_range_score": 4.0}[kind]  # fmt: skip
    first = min(good["scores"])  # a checklist item: every well-formed answer has one
    return _dump({**good, "scores": {**good["scores"], first: bad}})  # NaN/Infinity bare tokens


def _status_plan(prompts: list[DemoPrompt], model: DemoModel, protected: str | None) -> dict:
    """``sample_id -> status`` of every prompt of ``model`` (exact counts per status)."""
    pool = [p.sample_id for p in prompts if p.sample_id != protected]
    order = [s for s in reversed(STATUSES[1:]) for _ in range(model.statuses[s])]
    plan = dict.fromkeys((p.sample_id for p in prompts), "scored")
    plan.update(zip(_rng("status", model.model_id).sample(pool, len(order)), order))
    return plan


def paper_overall_10(model: DemoModel, scored: list[dict[str, float]]) -> float:
    """The paper table's Overall-10 (0–100) of ``model`` under its policy, through the
    package's own extractor, per-prompt means and exact rounding (no scoring rule here)."""
    from searchgen_nb.extract import extract_components
    from searchgen_nb.numeric import exact_mean, to_public
    from searchgen_nb.records import prompt_overalls

    per_prompt = [prompt_overalls(extract_components({"scores": s}))[0] for s in scored]
    n = N_PROMPTS if model.missing_policy == "zero_fill" else len(scored)
    return to_public(exact_mean([v for v in per_prompt if v is not None], n), 1)


def demo_config_text(base: str = "", release_config: str | None = None,
                     n_scored: dict[str, int] | None = None,
                     previous_release: str | None = None) -> str:
    """The demo's release config (YAML) with data paths below ``base`` ("" beside the data,
    ``"../data/demo"`` for ``releases/demo.yml``); ``release_config``: the config's own path
    from the project root (None: no key); ``n_scored`` overrides the coverage lock."""
    at = (lambda name: posixpath.join(base, name)) if base else (lambda name: name)
    cfg: dict = {} if release_config is None else {"release_config": release_config}
    cfg.update({
        "benchmark": "SearchGen-Bench", "data_origin": "synthetic-demo",
        "dataset": at("prompts.jsonl"), "results_root": at("results"),
        "result_path": DEFAULT_RESULT_PATH, "paper_table": at("paper_table.json"),
    })  # fmt: skip
    if previous_release:
        cfg["previous_release"] = previous_release
    cfg["scoring"] = dict(PROFILE["config"]["scoring"])
    cfg["models"] = {m.model_id: {"display_name": m.display_name, "type": m.type,
                                  "source_id": m.source_id, "lane": LANE,
                                  "missing_policy": m.missing_policy} for m in ROSTER}  # fmt: skip
    slices = {f"full_{N_PROMPTS}": {"include": [], "match": "all", "expected_rows": N_PROMPTS}}
    for name, n in PROFILE["config"]["slices"].items():
        slices[name] = {"field": "eval_slices", "include": [name], "match": "any", "expected_rows": n}
    cfg["slices"] = slices
    n_scored = {m.model_id: (n_scored or {}).get(m.model_id, m.n_scored) for m in ROSTER}
    cfg["expected"] = {"n_prompts": N_PROMPTS, "partition": dict(PROMPTS["expected_partition"]),
                       "n_scored": n_scored}  # fmt: skip
    body = yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True, width=120)
    return "\n".join(PROFILE["config"]["header"]) + "\n" + body


def committed_config_text() -> str:
    """The text of ``releases/demo.yml``: the demo config reading from ``data/demo``."""
    return demo_config_text("../data/demo", "releases/demo.yml")


def _check_profiles() -> None:
    """Profiles and tag effects name real components and tags."""
    problems = [f"{m.model_id}: unknown component {c!r}" for m in ROSTER
                for c in m.profile["offsets"] if c not in COMPONENTS]  # fmt: skip
    problems += [f"{m.model_id}: unknown weak domain {m.profile['weak_domain']!r}" for m in ROSTER
                 if m.profile["weak_domain"] not in (None, *TAG_COUNTS["domains"])]  # fmt: skip
    if set(TAGS["domain_effect"]) != set(TAG_COUNTS["domains"]) or set(
        TAGS["failure_mode_effect"]
    ) != set(TAG_COUNTS["failure_modes"]):
        problems.append("domain_effect / failure_mode_effect must cover exactly the taxonomy's tags")
    if problems:
        raise RuntimeError("demo: " + "; ".join(problems))


def changed_pairs(prompts: list[DemoPrompt], plans: dict[str, dict[str, str]]) -> tuple[list, list]:
    """``(lowered, lost)`` sample_ids of the changed demo (``profile.json``, ``changed``)."""
    lower, lost = CHANGED["lower"], CHANGED["lost"]
    dom, s1, s2 = lower["domain"], plans[lower["model"]], plans[lost["model"]]
    lowered = [p.sample_id for p in prompts if dom in p.domains and s1[p.sample_id] == "scored"]
    gone = [p.sample_id for p in prompts if dom not in p.domains and p.partition == "NoSearch"
            and s2[p.sample_id] == "scored"]  # fmt: skip
    return lowered[: lower["n"]], gone[: lost["n"]]


@dataclass
class DemoRelease:
    """The whole demo in memory: what :func:`write_demo` puts on disk."""

    prompts: list[DemoPrompt]  # sample_id order
    line_order: list[DemoPrompt]  # the (shuffled) order of prompts.jsonl
    files: dict[str, bytes]  # path below results/ -> content
    statuses: dict[str, dict[str, str]]  # model_id -> sample_id -> status
    paper_table: dict[str, float]  # model_id -> Overall-10 on the 0–100 scale


def build_demo(changed: bool = False) -> DemoRelease:
    """Generate every prompt, result and the paper table in memory (no file is written);
    ``changed``: the second release (``profile.json``, ``changed``)."""
    _check_profiles()
    prompts = build_prompts()
    line_order = list(prompts)
    _rng("line_order").shuffle(line_order)
    special = next(p.sample_id for p in prompts if p.partition == "TextualSearch"
                   and "text_reference_evaluation" in p.applicable)  # fmt: skip
    only_model = PROFILE["results"]["text_reference_only_model"]
    plans = {m.model_id: _status_plan(prompts, m, special if m.model_id == only_model else None)
             for m in ROSTER}  # fmt: skip
    lowered, lost = changed_pairs(prompts, plans) if changed else ([], [])
    plans[CHANGED["lost"]["model"]].update(dict.fromkeys(lost, "missing_evaluation"))
    files: dict[str, bytes] = {}
    invalid = itertools.cycle(INVALID_KINDS)
    paper_table = {}
    for m in ROSTER:
        rng, shifts, scored = _rng("scores", m.model_id), _tag_shifts(m, prompts), []
        for p in prompts:
            scores = _judge_scores(rng, m, p, shifts[p.sample_id])  # drawn whatever the status
            if p.sample_id == special and m.model_id == only_model:
                scores = {"text_reference_evaluation": scores["text_reference_evaluation"]}
            if p.sample_id in lowered and m.model_id == CHANGED["lower"]["model"]:
                scores = {k: max(0.0, v - CHANGED["lower"]["by"]) for k, v in scores.items()}
            status, folder = plans[m.model_id][p.sample_id], f"{p.release_row}/{LANE}/{m.source_id}"
            if status != "missing_generation":
                files[f"{folder}/{IMAGE_FILE}"] = PNG_BYTES
            if status == "scored":
                scored.append(scores)
                files[f"{folder}/{RESULT_FILE}"] = _dump(_result(m, p, scores)).encode("utf-8")
            elif status == "invalid_evaluation":
                text = _broken_result_text(next(invalid), _result(m, p, scores))
                files[f"{folder}/{RESULT_FILE}"] = text.encode("utf-8")
        paper_table[m.model_id] = paper_overall_10(m, scored)
    return DemoRelease(prompts, line_order, files, plans, paper_table)


def _check_target(out_dir: Path) -> None:
    """Refuse a non-empty ``out_dir`` that holds no previous demo (never touch real data)."""
    if out_dir.is_dir() and any(out_dir.iterdir()):
        marker = out_dir / "release.yml"
        text = marker.read_text(encoding="utf-8") if marker.is_file() else ""
        if "data_origin: synthetic-demo" not in text:
            raise FileExistsError(
                f"demo: {out_dir} is not empty and holds no synthetic demo; refusing to overwrite it"
            )


def _sync_tree(root: Path, files: dict[str, bytes]) -> int:
    """Make ``root`` hold exactly ``files`` (relative POSIX path -> bytes); return files written.
    Stale files and the folders they leave empty go; a file with the right bytes stays."""
    existing: set[str] = set()
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
    written, made = 0, set()
    for rel in sorted(files):  # prompt-major: one folder's files are written together
        path = root / rel
        if rel in existing and path.read_bytes() == files[rel]:
            continue
        if (folder := rel.rpartition("/")[0]) not in made:
            (root / folder).mkdir(parents=True, exist_ok=True)
            made.add(folder)
        path.write_bytes(files[rel])
        written += 1
    return written


def write_demo(out_dir: Path, changed: bool = False, previous: Path | None = None) -> dict:
    """Write the demo release into ``out_dir`` (brought up to date if it holds a previous demo,
    refused with FileExistsError if it holds anything else) and return a summary.

    ``changed``: the second, changed release (its coverage lock counts the lost results);
    ``previous``: the first release's published data folder, written into ``release.yml`` as
    ``previous_release``. ``release_config`` is set when ``out_dir`` lies inside the project.
    Summary: ``n_prompts``, ``partition``, ``n_files``, ``n_result_files_written`` and, per
    model, ``n_scored``, ``statuses`` (count per status) and ``overall_10``.
    """
    out_dir = Path(out_dir).resolve()
    _check_target(out_dir)
    demo = build_demo(changed)
    out_dir.mkdir(parents=True, exist_ok=True)

    def write(name: str, text: str) -> None:
        (out_dir / name).write_text(text, encoding="utf-8", newline="\n")

    write("prompts.jsonl", "".join(_dump(p.metadata()) for p in demo.line_order))
    n_written = _sync_tree(out_dir / "results", demo.files)
    write("paper_table.json", json.dumps(demo.paper_table, indent=2, sort_keys=True) + "\n")
    root, config = project_root().resolve(), out_dir / "release.yml"
    rel_config = Path(os.path.relpath(config, root)).as_posix() if config.is_relative_to(root) else None
    prev = None if previous is None else Path(os.path.relpath(Path(previous).resolve(), out_dir))
    prev_text = None if prev is None else prev.as_posix()
    counts = {m.model_id: {s: list(demo.statuses[m.model_id].values()).count(s) for s in STATUSES}
              for m in ROSTER}  # fmt: skip
    n_scored = {mid: c["scored"] for mid, c in counts.items()}
    write("release.yml", demo_config_text("", rel_config, n_scored, prev_text))
    partition = {k: sum(p.partition == k for p in demo.prompts) for k in PROMPTS["expected_partition"]}
    partition["SearchIntensive"] = len(demo.prompts) - partition["NoSearch"]
    return {
        "n_prompts": len(demo.prompts), "partition": partition, "n_files": len(demo.files) + 3,
        "n_result_files_written": n_written,
        "models": {mid: {"n_scored": c["scored"], "statuses": c, "overall_10": demo.paper_table[mid]}
                   for mid, c in counts.items()},
    }  # fmt: skip
