"""Prompt × model records, the rows of ``prompt_scores.jsonl``: extracted from the result files
into a :class:`ReleaseTable`, and read back (data contract, § Per-prompt values; § Artifacts).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from searchgen_nb.config import ReleaseConfig
from searchgen_nb.constants import (
    COMPONENTS,
    EXCLUDED_PUBLIC_COMPONENT,
    OVERALL_9_COMPONENTS,
    SCORED,
)
from searchgen_nb.errors import ConfigError, ResultIdentityError
from searchgen_nb.extract import PairResult, classify_result, load_extractor
from searchgen_nb.files import read_lines
from searchgen_nb.numeric import means_with_extra
from searchgen_nb.prompts import Prompt, PromptSet
from searchgen_nb.table import STATUS_CODE, ReleaseTable

#: Below this many prompt × model pairs extraction stays in one process (measured: starting
#: worker processes costs more than it saves on the demo's 9,763 pairs).
PARALLEL_MIN_PAIRS = 30000
_NULL = float("nan")
# The job a worker process shares, set once by :func:`_init_worker` (or in-process).
_JOB: dict = {}


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


def pair_values(pair: PairResult) -> tuple[float, ...] | None:
    """The twelve raw values of a scored pair (ten components, Overall-10, Overall-9; NaN =
    null), None for any other status."""
    if pair.status != SCORED:
        return None
    values = (*(pair.components[c] for c in COMPONENTS), *prompt_overalls(pair.components))
    return tuple(_NULL if v is None else v for v in values)


@dataclass
class Extraction:
    """What extraction produced: the release table, warnings, input hash, extractor."""

    table: ReleaseTable
    warnings: list[dict]
    input_sha256: str
    n_files_read: int
    extractor: str
    #: ``(model index, prompt index) ->`` the judge's answer (:mod:`searchgen_nb.evidence`)
    evidence: dict = field(default_factory=dict)

    @property
    def records(self) -> list[dict]:
        """The records of ``prompt_scores.jsonl`` (the pipeline streams the table's instead)."""
        return list(self.table.records())


# ---- where each pair's result file is -----------------------------------------------------


def result_file(cfg: ReleaseConfig, prompt: Prompt, model_id: str) -> str:
    """A pair's result file below ``results_root`` (relative, POSIX) from ``result_path``;
    :class:`ConfigError` when the template leads outside ``results_root``."""
    rel = _format(cfg, prompt, model_id)
    norm = os.path.normpath(rel).replace(os.sep, "/")
    if os.path.isabs(norm) or norm == ".." or norm.startswith("../"):
        raise ConfigError(
            f"config {cfg.config_path}: result_path gives {rel!r} for model {model_id}, "
            f"sample_id {prompt.sample_id}: outside results_root"
        )
    return norm


def _format(cfg: ReleaseConfig, prompt: Prompt, model_id: str) -> str:
    m = cfg.models[model_id]
    return cfg.result_path.format(
        release_row=prompt.release_row,
        sample_id=prompt.sample_id,
        lane=m.lane,
        source_id=m.source_id,
    )


def _plain(value: str) -> bool:
    parts = value.split("/")
    return (
        bool(value)
        and "\\" not in value
        and not value.startswith("/")
        and all(p not in ("", ".", "..") for p in parts)
    )


def _needs_path_check(cfg: ReleaseConfig, model_id: str) -> bool:
    """False when every path of this model is already normal and inside ``results_root``
    (plain template, lane and source_id; sample_id and release_row are checked on reading)."""
    m, template = cfg.models[model_id], cfg.result_path
    plain = posixpath.normpath(template) == template and _plain(template)
    return not (plain and _plain(m.lane) and _plain(m.source_id))


def result_paths(cfg: ReleaseConfig, prompts: list[Prompt]) -> dict[str, list[str]]:
    """``{model_id: [result file below results_root, one per prompt]}``; :class:`ConfigError`
    when a path leaves ``results_root`` or two pairs would read one file (naming both)."""
    paths: dict[str, list[str]] = {}
    owner: dict[str, tuple[str, str]] = {}
    clashes: list[str] = []
    for model_id in cfg.model_ids:
        path = result_file if _needs_path_check(cfg, model_id) else _format
        paths[model_id] = [path(cfg, prompt, model_id) for prompt in prompts]
        for prompt, rel in zip(prompts, paths[model_id]):
            first = owner.setdefault(rel, (prompt.sample_id, model_id))
            if first != (prompt.sample_id, model_id) and len(clashes) < 10:
                clashes.append(
                    f"{rel} is the result file of sample_id {first[0]} / model {first[1]} and of "
                    f"sample_id {prompt.sample_id} / model {model_id}"
                )
    if clashes:
        raise ConfigError(
            f"config {cfg.config_path}: two prompt × model pairs would read one result file "
            "(same release_row, or two models with the same source_id and lane): "
            + "; ".join(clashes)
        )
    return paths


# ---- reading every result file, in one process or several ---------------------------------


def _init_worker(job: dict) -> None:
    """Process-pool initializer: the job arrives pickled once per worker."""
    _JOB.clear()
    _JOB.update(job, extractor=load_extractor(job["extractor_spec"])[1])


@dataclass
class _Chunk:
    """The pairs of one model for prompts ``start:stop``, as compact arrays: status codes, the
    twelve values of the scored pairs, sha256 digests and file ids of the files read, and the
    rare per-pair messages as ``(offset, error, warnings, identity error)``."""

    codes: np.ndarray
    scored: np.ndarray
    values: np.ndarray
    read: np.ndarray
    digests: bytes
    file_ids: np.ndarray
    notes: list
    evidence: list  # (offset, the judge's answer) of the scored pairs that have one


def _extract_pairs(task: tuple[int, int, int]) -> _Chunk:
    """Classify the pairs of model index ``k`` for prompts ``start:stop``."""
    k, start, stop = task
    prompts, extractor, root, globs = (_JOB[x] for x in ("prompts", "extractor", "root", "globs"))
    rels, generators = _JOB["paths"][k], _JOB["generators"][k]
    codes, scored_rows, scored_at, read_at, fids, notes, evidence = [], [], [], [], [], [], []
    digests = bytearray()
    for j, i in enumerate(range(start, stop)):
        identity = (prompts[i], generators)
        pair = classify_result(os.path.join(root, rels[i]), extractor, globs, _sha256, identity)
        codes.append(STATUS_CODE[pair.status])
        if (vals := pair_values(pair)) is not None:
            scored_rows.append(vals)
            scored_at.append(j)
        if pair.file_sha256 is not None:
            read_at.append(j)
            digests += pair.file_sha256
            fids.append(pair.file_id)
        if pair.evidence:
            evidence.append((j, pair.evidence))
        if pair.error is not None or pair.warnings or pair.identity_error:
            notes.append((j, pair.error, pair.warnings, pair.identity_error))
    values = np.array(scored_rows, dtype=np.float64).reshape(len(scored_rows), 12)
    return _Chunk(
        np.array(codes, dtype=np.int8), np.array(scored_at, dtype=np.int64),
        values + 0.0,  # a score read as -0.0 is 0.0 (one number, one text)
        np.array(read_at, dtype=np.int64), bytes(digests),
        np.array(fids, dtype=np.uint64).reshape(len(fids), 2), notes, evidence,
    )  # fmt: skip


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _can_start_workers() -> bool:
    """forkserver workers re-import ``__main__`` from its file: impossible for a script read
    from stdin, whose ``__file__`` names no file. Stay in one process then."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return main_file is None or os.path.exists(main_file)


@contextlib.contextmanager
def _chunks(job: dict, extractor, tasks: list, workers: int):
    """The :class:`_Chunk` of every task, in task order, from ``workers`` processes."""
    pool = None
    try:
        if workers > 1:
            import multiprocessing

            # forkserver: workers start from a clean process, never a fork of a notebook
            # kernel with threads; the job is pickled once per worker by the initializer
            context = multiprocessing.get_context("forkserver")
            pool = context.Pool(workers, initializer=_init_worker, initargs=(job,))
            yield pool.imap(_extract_pairs, tasks)
        else:
            _JOB.clear()
            _JOB.update(job, extractor=extractor)
            yield map(_extract_pairs, tasks)
    finally:
        _JOB.clear()
        if pool is not None:
            pool.terminate()
            pool.join()


class _Collected:
    """What the chunks add up to: the table's statuses, values and errors; per pair whether a
    file was read, its sha256 and ``(st_dev, st_ino)``; the warnings and identity problems."""

    def __init__(self, table: ReleaseTable, prompt_set: PromptSet) -> None:
        self.table, self.prompts, self.paths = table, prompt_set.prompts, table.result_files
        shape = table.status.shape
        self.was_read = np.zeros(shape, dtype=bool)
        self.digests = np.zeros((*shape, 32), dtype=np.uint8)
        self.file_ids = np.zeros((*shape, 2), dtype=np.uint64)
        self.warnings, self.problems = list(prompt_set.warnings), []
        self.evidence: dict = {}

    def add(self, task: tuple[int, int, int], chunk: _Chunk) -> None:
        k, start, stop = task
        self.table.status[k, start:stop] = chunk.codes
        self.table.values[k, start + chunk.scored] = chunk.values
        at = start + chunk.read
        self.was_read[k, at] = True
        self.digests[k, at] = np.frombuffer(chunk.digests, dtype=np.uint8).reshape(-1, 32)
        self.file_ids[k, at] = chunk.file_ids
        self.evidence.update(((k, start + j), ev) for j, ev in chunk.evidence)
        for j, error, pair_warnings, contradiction in chunk.notes:
            i, m = start + j, self.table.model_ids[k]
            if error is not None:
                self.table.errors[(k, i)] = error
            if contradiction:
                self.problems.append(f"{self._pair(k, i)}: {contradiction}")
            sid, rel = self.prompts[i].sample_id, self.paths[k][i]
            self.warnings += [
                {
                    "check": "result_warning",
                    "sample_id": sid,
                    "model_id": m,
                    "file": rel,
                    "message": w,
                }
                for w in pair_warnings
            ]

    def _pair(self, k: int, i: int) -> str:
        sid, m = self.prompts[i].sample_id, self.table.model_ids[k]
        return f"{self.paths[k][i]} (sample_id {sid}, model {m})"

    def same_file_problems(self) -> list[str]:
        """One message per pair whose file (by st_dev, st_ino) an earlier pair (model-major
        order) already read: a symlink or hard link would count one result twice."""
        k_idx, i_idx = np.nonzero(self.was_read)  # model-major order
        _, first, inverse = np.unique(
            self.file_ids[k_idx, i_idx], axis=0, return_index=True, return_inverse=True
        )
        first = first[inverse.reshape(-1)]
        return [
            f"{self._pair(k_idx[pos], i_idx[pos])} is the same file as "
            f"{self._pair(k_idx[first[pos]], i_idx[first[pos]])}: a symlink or hard link would "
            "count one result twice"
            for pos in np.nonzero(first != np.arange(len(first)))[0]
        ]

    def input_sha256(self) -> str:
        """sha256 over ``<file sha256>  <path>`` lines of every file read, sorted by path."""
        h = hashlib.sha256()
        read = sorted((self.paths[k][i], k, i) for k, i in zip(*np.nonzero(self.was_read)))
        for rel, k, i in read:
            h.update(f"{self.digests[k, i].tobytes().hex()}  {rel}\n".encode())
        return h.hexdigest()


def _refuse(cfg: ReleaseConfig, got: _Collected) -> None:
    """Raise when a file cannot be counted for its pair, or a model has no file at all."""
    problems = sorted(got.problems + got.same_file_problems())
    if problems:
        more = f" … and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ResultIdentityError(
            f"results_root {cfg.results_root}: {len(problems)} result file(s) cannot be counted "
            "for the pair they were read for:\n  - " + "\n  - ".join(problems[:20]) + more
        )
    n_read = got.was_read.sum(axis=1)
    where = f"config {cfg.config_path}"
    if not n_read.any():
        example = got.paths[0][0] if got.prompts else "—"
        raise ConfigError(
            f"{where}: results_root {cfg.results_root} holds no result file for any model "
            f"(looked for result_path {cfg.result_path!r}, e.g. {example})"
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
            f"{where}: no result file at all for model(s) {named}: a wrong source_id or lane? "
            "Mark a model whose results are not in yet with `pending: true`."
        )


def extract_records(
    cfg: ReleaseConfig,
    prompt_set: PromptSet,
    progress: bool | None = None,
    workers: int | None = None,
) -> Extraction:
    """Classify and extract every configured model's result for every prompt (data contract,
    § Result files; § Status of a prompt × model pair). ``progress``: None shows a bar only on
    a terminal; ``workers``: processes reading results (the output does not depend on it).

    Configuration problems raise :class:`ConfigError` / ``ExtractorError``, one file counted
    for two pairs or contradicting its pair :class:`ResultIdentityError`; a bad result file is
    an ``invalid_evaluation`` record."""
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
    n, n_pairs = len(prompts), len(prompts) * len(model_ids)
    if workers is None:
        many = n_pairs >= PARALLEL_MIN_PAIRS and _can_start_workers()
        workers = min(os.cpu_count() or 1, len(model_ids)) if many else 1
    job = {
        "prompts": [(p.sample_id, p.release_row) for p in prompts],
        "extractor_spec": cfg.extractor_spec(), "root": str(root),
        "globs": list(cfg.generation_glob), "paths": table.result_files,
        "generators": [frozenset(g for g in (m.source_id, model_id, m.generator_name) if g)
                       for model_id, m in zip(model_ids, models)],
    }  # fmt: skip
    step = max(1, -(-n // 4)) if workers > 1 else max(n, 1)  # a few tasks per model balance
    tasks = [(k, i, min(i + step, n)) for k in range(len(model_ids)) for i in range(0, n, step)]
    got = _Collected(table, prompt_set)
    show = None if progress is None else not progress
    with tqdm(total=n_pairs, desc="reading results", unit="file", disable=show) as bar:
        with _chunks(job, extractor, tasks, workers) as chunks:
            for task, chunk in zip(tasks, chunks):
                got.add(task, chunk)
                bar.update(task[2] - task[1])
    _refuse(cfg, got)
    got.warnings.sort(
        key=lambda w: (w.get("sample_id", ""), w.get("model_id", ""), w["check"], w["message"])
    )
    return Extraction(table, got.warnings, got.input_sha256(), int(got.was_read.sum()), spec,
                      got.evidence)
