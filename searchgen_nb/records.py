"""Prompt × model records: the rows of ``prompt_scores.jsonl`` (SPEC §4, §6).

One record per prompt (sorted by sample_id) with every configured model under ``models``;
components stay unrounded on the raw 0–3 scale; null = not applicable.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from tqdm import tqdm

from searchgen_nb.config import ReleaseConfig
from searchgen_nb.constants import COMPONENTS, OVERALL_9_COMPONENTS, SCORED, STATUSES
from searchgen_nb.errors import ConfigError
from searchgen_nb.exact import mean_raw
from searchgen_nb.extract import PairResult, classify_result, load_extractor
from searchgen_nb.prompts import Prompt, PromptSet


def prompt_overalls(components: dict) -> tuple[float | None, float | None]:
    """``(overall_10_raw, overall_9_raw)`` of one scored pair (SPEC §4).

    Each is the exact mean of the non-null values of its component set, rounded once to
    the nearest double; ``None`` when the set has no value (e.g. a prompt whose only
    component is text reference has Overall-10 but no Overall-9).
    """
    o10 = mean_raw(v for c in COMPONENTS if (v := components[c]) is not None)
    o9 = mean_raw(v for c in OVERALL_9_COMPONENTS if (v := components[c]) is not None)
    return o10, o9


@dataclass
class Extraction:
    """What extraction produced: records (sorted by sample_id), warnings, input hash, extractor."""

    records: list[dict]
    warnings: list[dict]
    input_sha256: str
    n_files_read: int
    extractor: str


def result_file(cfg: ReleaseConfig, prompt: Prompt, model_id: str) -> str:
    """Path of a pair's result file below ``results_root`` (relative, POSIX), from ``result_path``.

    Raises :class:`ConfigError` when the template yields a path outside ``results_root``.
    """
    m = cfg.models[model_id]
    rel = cfg.result_path.format(
        release_row=prompt.release_row, sample_id=prompt.sample_id, lane=m.lane, source_id=m.source_id
    )
    norm = os.path.normpath(rel).replace(os.sep, "/")
    if os.path.isabs(norm) or norm == ".." or norm.startswith("../"):
        raise ConfigError(
            f"config {cfg.config_path}: result_path gives {rel!r} for model {model_id}, "
            f"sample_id {prompt.sample_id}: outside results_root"
        )
    return norm


def prompt_record(prompt: Prompt, index: int) -> dict:
    """The prompt part of a record (SPEC §4 of the design document); ``prompt_index`` = sorted position."""
    return {
        "sample_id": prompt.sample_id,
        "prompt_index": index,
        "release_row": prompt.release_row,
        "subset": prompt.subset,
        "stratum": prompt.stratum,
        "search_type": prompt.search_type,
        "domains": list(prompt.domains),
        "failure_modes": list(prompt.failure_modes),
        **prompt.optional,
        "models": {},
    }


def model_entry(cfg: ReleaseConfig, model_id: str, rel_path: str, pair: PairResult) -> dict:
    """The per-model part of a record: status, lane, components, overalls, reason and file."""
    scored = pair.status == SCORED
    o10, o9 = prompt_overalls(pair.components) if scored else (None, None)
    return {
        "status": pair.status,
        "lane": cfg.models[model_id].lane,
        "source_id": cfg.models[model_id].source_id,
        "result_file": rel_path,
        "error": pair.error,
        "components_raw_0to3": {c: pair.components[c] for c in COMPONENTS},
        "overall_10_raw": o10,
        "overall_9_raw": o9,
    }


def extract_records(cfg: ReleaseConfig, prompt_set: PromptSet, progress: bool | None = None) -> Extraction:
    """Classify and extract every configured model's result for every prompt (SPEC §2–4).

    Returns records sorted by sample_id with the models of the config. ``progress``: None
    shows a bar only on a terminal. Raises :class:`ConfigError` / ``ExtractorError`` for
    configuration problems; result-file problems become ``invalid_evaluation`` records.
    """
    spec, extractor = load_extractor(cfg.extractor_spec())
    root = str(cfg.results_root_path)
    globs = list(cfg.generation_glob)
    records = [prompt_record(p, i) for i, p in enumerate(prompt_set.prompts)]
    warnings = list(prompt_set.warnings)
    hashed: list[tuple[str, str]] = []
    total = len(records) * len(cfg.models)
    bar = tqdm(total=total, desc="reading results", unit="file", disable=(None if progress is None else not progress))
    try:
        for model_id in cfg.models:
            for prompt, record in zip(prompt_set.prompts, records):
                rel = result_file(cfg, prompt, model_id)
                pair = classify_result(os.path.join(root, rel), extractor, globs, _sha256)
                if pair.file_sha256 is not None:
                    hashed.append((rel, pair.file_sha256))
                for w in pair.warnings:
                    warnings.append(
                        {"check": "result_warning", "sample_id": prompt.sample_id, "model_id": model_id, "file": rel, "message": w}
                    )
                record["models"][model_id] = model_entry(cfg, model_id, rel, pair)
                bar.update()
    finally:
        bar.close()
    h = hashlib.sha256()
    for rel, sha in sorted(set(hashed)):
        h.update(f"{sha}  {rel}\n".encode())
    warnings.sort(key=lambda w: (w.get("sample_id", ""), w.get("model_id", ""), w["check"], w["message"]))
    return Extraction(records, warnings, h.hexdigest(), len(set(hashed)), spec)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def status_counts(records: list[dict], model_ids: list[str]) -> dict[str, dict[str, int]]:
    """``{model_id: {status: count}}`` over all records, every status present (0 when none)."""
    out = {m: dict.fromkeys(STATUSES, 0) for m in model_ids}
    for r in records:
        for m in model_ids:
            out[m][r["models"][m]["status"]] += 1
    return out
