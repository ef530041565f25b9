"""Prompt × model records, the rows of ``prompt_scores.jsonl``: extracted from the result files
into a :class:`ReleaseTable`, and read back (data contract, § Per-prompt values; § Artifacts)."""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from searchgen_nb.config import ReleaseConfig
from searchgen_nb.constants import SCORED
from searchgen_nb.declaration import COMPONENTS, EXCLUDED_PUBLIC_COMPONENT, OVERALL_9_COMPONENTS
from searchgen_nb.errors import ConfigError, ResultIdentityError
from searchgen_nb.evidence import PairEvidenceStore
from searchgen_nb.extract import PairResult, classify_result, load_extractor
from searchgen_nb.files import read_lines
from searchgen_nb.numeric import means_with_extra
from searchgen_nb.prompts import Prompt, PromptSet
from searchgen_nb.table import STATUS_CODE, ReleaseTable


def read_records(folder: Path) -> list[dict]:
    """The records of a staged or published ``prompt_scores.jsonl``."""
    return [json.loads(line) for line in read_lines(Path(folder) / "prompt_scores.jsonl")]


def prompt_overalls(components: dict) -> tuple[float | None, float | None]:
    """``(overall_10_raw, overall_9_raw)`` of one scored pair (data contract, § Per-prompt
    values): exact means of the non-null values rounded once, None without a value."""
    nine = [v for c in OVERALL_9_COMPONENTS if (v := components[c]) is not None]
    return means_with_extra(nine, components[EXCLUDED_PUBLIC_COMPONENT])


def prompt_record(prompt: Prompt, index: int) -> dict:
    """The prompt part of a record (data contract, § Artifacts); ``prompt_index``: its place."""
    return {
        "sample_id": prompt.sample_id, "prompt_index": index, "release_row": prompt.release_row,
        "subset": prompt.subset, "stratum": prompt.stratum, "search_type": prompt.search_type,
        "domains": list(prompt.domains), "failure_modes": list(prompt.failure_modes),
        **prompt.optional, "models": {},
    }  # fmt: skip


@dataclass
class Extraction:
    """What extraction produced: the release table, warnings, input hash, extractor."""

    table: ReleaseTable
    warnings: list[dict]
    input_sha256: str
    n_files_read: int
    extractor: str
    evidence: PairEvidenceStore  # (model index, prompt index) -> the judge's answer


def result_paths(cfg: ReleaseConfig, prompts: list[Prompt]) -> dict[str, list[str]]:
    """``{model_id: [result file below results_root (relative, POSIX), one per prompt]}`` from
    ``result_path``; :class:`ConfigError` when one leaves ``results_root`` or two pairs would
    read one file (naming both)."""
    paths: dict[str, list[str]] = {model_id: [] for model_id in cfg.model_ids}
    owner: dict[str, tuple[str, str]] = {}
    clashes: list[str] = []
    for model_id, m in cfg.models.items():
        for prompt in prompts:
            rel = cfg.result_path.format(
                release_row=prompt.release_row,
                lane=m.lane,
                sample_id=prompt.sample_id,
                source_id=m.source_id,
            )
            norm = os.path.normpath(rel).replace(os.sep, "/")
            if os.path.isabs(norm) or norm == ".." or norm.startswith("../"):
                raise ConfigError(
                    f"config {cfg.config_path}: result_path gives {rel!r} for model "
                    f"{model_id}, sample_id {prompt.sample_id}: outside results_root"
                )
            paths[model_id].append(norm)
            first = owner.setdefault(norm, (prompt.sample_id, model_id))
            if first != (prompt.sample_id, model_id) and len(clashes) < 10:
                clashes.append(
                    f"{norm} is the result file of sample_id {first[0]} / model "
                    f"{first[1]} and of sample_id {prompt.sample_id} / model {model_id}"
                )
    if clashes:
        raise ConfigError(
            f"config {cfg.config_path}: two prompt × model pairs would read one "
            "result file (same release_row, or two models with the same source_id "
            "and lane): " + "; ".join(clashes)
        )
    return paths


class _Collected:
    """The pairs read so far: the table's statuses, values and errors; per pair read (model-major
    order) its file's sha256 and ``(st_dev, st_ino)``; the warnings and identity problems."""

    def __init__(self, table: ReleaseTable, prompt_set: PromptSet) -> None:
        self.table, self.prompts, self.paths = table, prompt_set.prompts, table.result_files
        self.read: dict[tuple[int, int], tuple[bytes, tuple[int, int]]] = {}
        self.warnings = list(prompt_set.warnings)
        self.problems: list[str] = []
        self.evidence = PairEvidenceStore((table.n_models, table.n_prompts))

    def add(self, k: int, i: int, pair: PairResult) -> None:
        """Pair ``(model index k, prompt index i)``."""
        self.table.status[k, i] = STATUS_CODE[pair.status]
        if pair.status == SCORED:  # ten components, Overall-10, Overall-9; NaN = null, -0.0 is 0.0
            comps = pair.components
            values = (*(comps[c] for c in COMPONENTS), *prompt_overalls(comps))
            self.table.values[k, i] = [float("nan") if v is None else v + 0.0 for v in values]
        if pair.file_sha256 is not None and pair.file_id is not None:  # read: both are set
            self.read[k, i] = pair.file_sha256, pair.file_id
        if pair.evidence:
            self.evidence.add((k, i), pair.evidence)
        if pair.error is not None:
            self.table.errors[(k, i)] = pair.error
        if pair.identity_error:
            self.problems.append(f"{self._pair(k, i)}: {pair.identity_error}")
        self.warnings += [{"check": "result_warning", "sample_id": self.prompts[i].sample_id,
                           "model_id": self.table.model_ids[k], "file": self.paths[k][i],
                           "message": w} for w in pair.warnings]  # fmt: skip

    def _pair(self, k: int, i: int) -> str:
        sid, m = self.prompts[i].sample_id, self.table.model_ids[k]
        return f"{self.paths[k][i]} (sample_id {sid}, model {m})"

    def same_file_problems(self) -> list[str]:
        """One message per pair whose file (by st_dev, st_ino) an earlier pair (model-major
        order) already read: a symlink or hard link would count one result twice."""
        first: dict[tuple[int, int], tuple[int, int]] = {}
        return [
            f"{self._pair(*pair)} is the same file as {self._pair(*first[file_id])}: a "
            "symlink or hard link would count one result twice"
            for pair, (_, file_id) in self.read.items()
            if first.setdefault(file_id, pair) != pair
        ]

    def input_sha256(self) -> str:
        """sha256 over ``<file sha256>  <path>`` lines of every file read, sorted by path."""
        h = hashlib.sha256()
        for rel, sha in sorted((self.paths[k][i], sha) for (k, i), (sha, _) in self.read.items()):
            h.update(f"{sha.hex()}  {rel}\n".encode())
        return h.hexdigest()


def _refuse(cfg: ReleaseConfig, got: _Collected) -> None:
    """Raise when a file cannot be counted for its pair, or a model has no file at all."""
    problems = sorted(got.problems + got.same_file_problems())
    if problems:
        more = f" … and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ResultIdentityError(
            f"results_root {cfg.results_root}: {len(problems)} result "
            "file(s) cannot be counted for the pair they were read for:\n"
            "  - " + "\n  - ".join(problems[:20]) + more
        )
    n_read = Counter(k for k, _ in got.read)
    where = f"config {cfg.config_path}"
    if not got.read:
        example = got.paths[0][0] if got.prompts else "—"
        raise ConfigError(
            f"{where}: results_root {cfg.results_root} holds no result file for "
            f"any model (looked for result_path {cfg.result_path!r}, e.g. {example})"
        )
    absent = [
        (m, k) for k, m in enumerate(cfg.model_ids) if n_read[k] == 0 and not cfg.models[m].pending
    ]
    if absent:
        named = ", ".join(
            f"{m} (source_id {cfg.models[m].source_id}, lane {cfg.models[m].lane}; "
            f"e.g. {got.paths[k][0]})"
            for m, k in absent
        )
        raise ConfigError(
            f"{where}: no result file at all for model(s) {named}: a wrong "
            "source_id or lane? Mark a model whose results are not in yet with "
            "`pending: true`."
        )


def extract_records(
    cfg: ReleaseConfig, prompt_set: PromptSet, progress: bool | None = None
) -> Extraction:
    """Every configured model's result for every prompt (data contract, § Status of a prompt ×
    model pair); ``progress`` None: a bar only on a terminal. :class:`ConfigError`,
    ``ExtractorError``, :class:`ResultIdentityError`; a bad file is an ``invalid_evaluation``."""
    spec, extractor = load_extractor(cfg.extractor_spec())
    prompts, model_ids = prompt_set.prompts, cfg.model_ids
    paths = result_paths(cfg, prompts)
    root = cfg.results_root_path
    if not root.is_dir():
        why = f"is not a folder ({root} does not exist)"
        raise ConfigError(f"config {cfg.config_path}: results_root {cfg.results_root} {why}")
    models = [cfg.models[m] for m in model_ids]
    table = ReleaseTable.empty(
        [prompt_record(p, i) for i, p in enumerate(prompts)], model_ids,
        [m.lane for m in models], [m.source_id for m in models], [paths[m] for m in model_ids],
    )  # fmt: skip
    got, globs = _Collected(table, prompt_set), list(cfg.generation_glob)
    show, n_pairs = None if progress is None else not progress, len(prompts) * len(models)
    with tqdm(total=n_pairs, desc="reading results", unit="file", disable=show) as bar:
        for k, (model_id, m) in enumerate(zip(model_ids, models)):
            names = frozenset(g for g in (m.source_id, model_id, m.generator_name) if g)
            for i, p in enumerate(prompts):
                path = os.path.join(root, paths[model_id][i])
                identity = ((p.sample_id, p.release_row), names)
                got.add(k, i, classify_result(path, extractor, globs, identity))
            bar.update(len(prompts))
    _refuse(cfg, got)
    got.warnings.sort(
        key=lambda w: (w.get("sample_id", ""), w.get("model_id", ""), w["check"], w["message"])
    )
    return Extraction(table, got.warnings, got.input_sha256(), len(got.read), spec, got.evidence)
