"""Prompt × model records, the rows of ``prompt_scores.jsonl``: extracted from the result files
into a :class:`ReleaseTable`, and read back (data contract, § Per-prompt values; § Artifacts)."""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from searchgen_nb.config import ReleaseConfig
from searchgen_nb.constants import MISSING_GENERATION, SCORED
from searchgen_nb.declaration import COMPONENTS, EXCLUDED_PUBLIC_COMPONENT, OVERALL_9_COMPONENTS
from searchgen_nb.errors import ConfigError, ResultIdentityError
from searchgen_nb.evidence import PairEvidenceStore
from searchgen_nb.extract import Extractor, PairResult, classify_result, load_extractor
from searchgen_nb.files import image_name, read_lines
from searchgen_nb.numeric import means_with_extra
from searchgen_nb.prompts import Prompt, PromptSet
from searchgen_nb.table import STATUS_CODE, VALUE_COLUMNS, ReleaseTable
from searchgen_nb.thumbs import leaves_root
from searchgen_nb.workers import on_workers


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
    #: (model index, prompt index) -> the pair's generated image below results_root (POSIX),
    #: the first file of its result's folder that generation_glob matches, and whether it links
    #: out of results_root (found only when thumbnails are made)
    images: dict[tuple[int, int], tuple[str, bool]]


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
        self.images: dict[tuple[int, int], tuple[str, bool]] = {}

    def add(self, block: PairBlock) -> None:
        """A worker's block of pairs."""
        k, start, n = block.k, block.start, len(block.status)
        self.table.status[k, start : start + n] = block.status
        self.table.values[k, start : start + n] = block.values
        for j, read in block.read.items():
            self.read[k, start + j] = read
        for j, packed in block.evidence.items():
            self.evidence.add((k, start + j), packed)
        self.images.update(((k, start + j), image) for j, image in block.images.items())
        for j, (error, warnings, identity_error) in block.notes.items():
            i = start + j
            if error is not None:
                self.table.errors[(k, i)] = error
            if identity_error:
                self.problems.append(f"{self._pair(k, i)}: {identity_error}")
            self.warnings += [{"check": "result_warning", "sample_id": self.prompts[i].sample_id,
                               "model_id": self.table.model_ids[k], "file": self.paths[k][i],
                               "message": w} for w in warnings]  # fmt: skip

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


#: Pairs a worker reads per task: blocks of one model's prompts.
BLOCK = 256


@dataclass
class _Reader:
    """What a worker needs to read a block of pairs (inherited from the command, never sent)."""

    root: str
    paths: list[list[str]]  # [model index][prompt index] -> the result file below root
    prompt_ids: list[tuple[str, str]]  # per prompt: its sample_id and release_row
    model_names: list[frozenset[str]]  # per model: the generator names its files may give
    extractor: Extractor
    globs: list[str]
    images: bool  # whether to find each pair's generated image

    def read(self, k: int, i: int, known: dict[str, str]) -> tuple[PairResult, tuple | None]:
        """Pair ``(model index k, prompt index i)`` and its image, if any: its path below the
        root and whether it :func:`~searchgen_nb.thumbs.leaves_root` (``known``: its cache)."""
        rel = self.paths[k][i]
        identity = self.prompt_ids[i], self.model_names[k]
        pair = classify_result(os.path.join(self.root, rel), self.extractor, self.globs, identity)
        if not self.images or pair.status == MISSING_GENERATION:
            return pair, None
        folder = posixpath.dirname(rel)
        name = image_name(os.path.join(self.root, folder), self.globs)
        if name is None:
            return pair, None
        image = f"{folder}/{name}" if folder else name
        return pair, (image, leaves_root(os.path.join(self.root, image), self.root, known))


_READER: _Reader | None = None  # a worker's


def _start_reader(reader: _Reader) -> None:
    global _READER
    _READER = reader


@dataclass
class PairBlock:
    """What a worker read of model ``k``'s prompts from ``start`` on: their status codes and
    value rows (:data:`~searchgen_nb.table.VALUE_COLUMNS`, NaN = null); by place in the block,
    the sha256 and ``(st_dev, st_ino)`` of each file read, the judge's answer packed
    (:meth:`PairEvidenceStore.pack`), the generated image, and ``(error, warnings, identity
    error)`` of each pair that has one."""

    k: int
    start: int
    status: np.ndarray
    values: np.ndarray
    read: dict[int, tuple[bytes, tuple[int, int]]] = field(default_factory=dict)
    evidence: dict[int, bytes] = field(default_factory=dict)
    images: dict[int, tuple[str, bool]] = field(default_factory=dict)
    notes: dict[int, tuple[str | None, list[str], str | None]] = field(default_factory=dict)


def pair_values(components: dict) -> list[float]:
    """A scored pair's row of the table: its ten components, Overall-10, Overall-9 (raw 0–3;
    NaN = null, -0.0 as 0.0)."""
    values = (*(components[c] for c in COMPONENTS), *prompt_overalls(components))
    return [float("nan") if v is None else v + 0.0 for v in values]


def _read_block(where: tuple[int, int, int]) -> PairBlock:
    """In a worker: the pairs of model ``k``, prompts ``start`` to ``stop``."""
    k, start, stop = where
    assert _READER is not None
    n, known = stop - start, dict[str, str]()
    block = PairBlock(k, start, np.empty(n, np.int8), np.full((n, len(VALUE_COLUMNS)), np.nan))
    for j in range(n):
        pair, image = _READER.read(k, start + j, known)
        block.status[j] = STATUS_CODE[pair.status]
        if pair.status == SCORED:
            block.values[j] = pair_values(pair.components)
        if pair.file_sha256 is not None and pair.file_id is not None:  # read: both are set
            block.read[j] = pair.file_sha256, pair.file_id
        if pair.evidence:
            block.evidence[j] = PairEvidenceStore.pack(pair.evidence)
        if image is not None:
            block.images[j] = image
        if pair.error is not None or pair.warnings or pair.identity_error:
            block.notes[j] = pair.error, pair.warnings, pair.identity_error
    return block


def extract_records(
    cfg: ReleaseConfig, prompt_set: PromptSet, progress: bool | None = None
) -> Extraction:
    """Every configured model's result for every prompt (data contract, § Status of a prompt ×
    model pair), read on a worker process per core; ``progress`` None: a bar only on a terminal.
    :class:`ConfigError`, ``ExtractorError``, :class:`ResultIdentityError`; a bad file is an
    ``invalid_evaluation``."""
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
    got = _Collected(table, prompt_set)
    reader = _Reader(
        str(root),
        table.result_files,
        [(p.sample_id, p.release_row) for p in prompts],
        [
            frozenset(filter(None, (m.source_id, mid, m.generator_name)))
            for mid, m in zip(model_ids, models)
        ],
        extractor,
        list(cfg.generation_glob),
        cfg.evidence.thumbnails,
    )
    blocks = [
        (k, start, min(start + BLOCK, len(prompts)))
        for k in range(len(models))
        for start in range(0, len(prompts), BLOCK)
    ]
    show = None if progress is None else not progress
    lost = (
        "extract: a worker process ended before its result files were read (killed, or out of "
        "memory?); nothing was published"
    )
    n_pairs = len(prompts) * len(models)
    with tqdm(total=n_pairs, desc="reading results", unit="file", disable=show) as bar:
        with on_workers(_read_block, blocks, lost, _start_reader, (reader,)) as done:
            for block in done:
                got.add(block)
                bar.update(len(block.status))
    _refuse(cfg, got)
    got.warnings.sort(
        key=lambda w: (w.get("sample_id", ""), w.get("model_id", ""), w["check"], w["message"])
    )
    return Extraction(
        table, got.warnings, got.input_sha256(), len(got.read), spec, got.evidence, got.images
    )
