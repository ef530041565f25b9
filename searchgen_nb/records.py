"""Prompt × model records: the rows of ``prompt_scores.jsonl`` (SPEC §4, §6).

One record per prompt (sorted by sample_id) with every configured model under ``models``;
components stay unrounded on the raw 0–3 scale; null = not applicable.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
import os

import numpy as np
import posixpath
from dataclasses import dataclass

from tqdm import tqdm

from searchgen_nb.config import ReleaseConfig
from searchgen_nb.constants import COMPONENTS, EXCLUDED_PUBLIC_COMPONENT, OVERALL_9_COMPONENTS, SCORED
from searchgen_nb.errors import ConfigError, ResultIdentityError
from searchgen_nb.numeric import means_with_extra
from searchgen_nb.files import read_lines
from searchgen_nb.extract import PairResult, classify_result, load_extractor
from searchgen_nb.prompts import Prompt, PromptSet
from searchgen_nb.table import STATUS_CODE, ReleaseTable


def read_records(folder: Path) -> list[dict]:
    """The records of a staged or published ``prompt_scores.jsonl``."""
    return [json.loads(line) for line in read_lines(Path(folder) / "prompt_scores.jsonl")]


def prompt_overalls(components: dict) -> tuple[float | None, float | None]:
    """``(overall_10_raw, overall_9_raw)`` of one scored pair (SPEC §4).

    Each is the exact mean of the non-null values of its component set, rounded once to
    the nearest double; ``None`` when the set has no value (e.g. a prompt whose only
    component is text reference has Overall-10 but no Overall-9).
    """
    nine = [v for c in OVERALL_9_COMPONENTS if (v := components[c]) is not None]
    return means_with_extra(nine, components[EXCLUDED_PUBLIC_COMPONENT])


@dataclass
class Extraction:
    """What extraction produced: the release table (prompts sorted by sample_id), warnings,
    input hash, extractor."""

    table: ReleaseTable
    warnings: list[dict]
    input_sha256: str
    n_files_read: int
    extractor: str

    @property
    def records(self) -> list[dict]:
        """The records of ``prompt_scores.jsonl`` (built from the table; for small releases
        and tests — the pipeline streams :meth:`ReleaseTable.records` instead)."""
        return list(self.table.records())


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


def _plain_segment(value: str) -> bool:
    parts = value.split("/")
    return bool(value) and "\\" not in value and not value.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def _needs_path_check(cfg: ReleaseConfig, model_id: str) -> bool:
    """False when every path this model's template can give is already normal and inside
    ``results_root`` (plain template, plain lane and source_id; release_row and sample_id
    are checked when the metadata is read), so :func:`result_file`'s check can be skipped."""
    m = cfg.models[model_id]
    template = cfg.result_path
    plain_template = posixpath.normpath(template) == template and _plain_segment(template)
    return not (plain_template and _plain_segment(m.lane) and _plain_segment(m.source_id))


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


_NULL = float("nan")


def pair_values(pair: PairResult) -> tuple[float, ...] | None:
    """The twelve raw values of a scored pair (:data:`~searchgen_nb.table.VALUE_COLUMNS`:
    ten components, Overall-10, Overall-9; NaN = null), None for any other status."""
    if pair.status != SCORED:
        return None
    o10, o9 = prompt_overalls(pair.components)
    return (*(_NULL if (v := pair.components[c]) is None else v for c in COMPONENTS), _NULL if o10 is None else o10, _NULL if o9 is None else o9)


#: Below this many prompt × model pairs extraction stays in one process (measured: starting
#: worker processes costs more than it saves on the demo's 9,763 pairs).
PARALLEL_MIN_PAIRS = 30000

# The job a worker process shares, set once by :func:`_init_worker` (or in-process).
_JOB: dict = {}


def _init_worker(job: dict) -> None:
    """Process-pool initializer: the job arrives pickled once per worker (no fork, no globals
    inherited from a notebook kernel's threads)."""
    _JOB.clear()
    _JOB.update(job, extractor=load_extractor(job["extractor_spec"])[1])


@dataclass
class _Chunk:
    """Pairs of one model for prompts ``start:stop``, as compact arrays (cheap to pickle from
    a worker and to merge by slices): status codes, the twelve values of the scored pairs,
    sha256 digests and file ids of the files read, and the rare per-pair messages as
    ``(offset, error, warnings, identity error)``."""

    codes: np.ndarray
    scored: np.ndarray
    values: np.ndarray
    read: np.ndarray
    digests: bytes
    file_ids: np.ndarray
    notes: list


def _extract_pairs(task: tuple[int, int, int]) -> _Chunk:
    """Classify the pairs of model index ``k`` for prompts ``start:stop`` (see :class:`_Chunk`)."""
    k, start, stop = task
    prompts, extractor, root, globs = (_JOB[x] for x in ("prompts", "extractor", "root", "globs"))
    rels, generators = _JOB["paths"][k], _JOB["generators"][k]
    join = os.path.join
    codes, scored_rows, scored_at, read_at, fids, notes = [], [], [], [], [], []
    digests = bytearray()
    for j, i in enumerate(range(start, stop)):
        sample_id, release_row = prompts[i]
        pair = classify_result(join(root, rels[i]), extractor, globs, _sha256, ((sample_id, release_row), generators))
        codes.append(STATUS_CODE[pair.status])
        vals = pair_values(pair)
        if vals is not None:
            scored_rows.append(vals)
            scored_at.append(j)
        if pair.file_sha256 is not None:
            read_at.append(j)
            digests += pair.file_sha256
            fids.append(pair.file_id)
        if pair.error is not None or pair.warnings or pair.identity_error:
            notes.append((j, pair.error, pair.warnings, pair.identity_error))
    return _Chunk(
        np.array(codes, dtype=np.int8),
        np.array(scored_at, dtype=np.int64),
        # + 0.0: a score read as -0.0 is 0.0 (one number, one text)
        np.array(scored_rows, dtype=np.float64).reshape(len(scored_rows), 12) + 0.0,
        np.array(read_at, dtype=np.int64),
        bytes(digests),
        np.array(fids, dtype=np.uint64).reshape(len(fids), 2),
        notes,
    )


def _can_start_workers() -> bool:
    """forkserver workers re-import ``__main__`` from its file: impossible for a script read
    from stdin (``python - <<EOF``), whose ``__file__`` names no file. Stay in one process then."""
    import sys

    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return main_file is None or os.path.exists(main_file)


def result_paths(cfg: ReleaseConfig, prompts: list[Prompt]) -> dict[str, list[str]]:
    """``{model_id: [result file below results_root, one per prompt]}`` (SPEC §1.1 ``result_path``).

    Raises :class:`ConfigError` when a path leaves ``results_root`` or when two pairs would
    read the same file (two prompts with one ``release_row``, two models with one
    ``source_id`` and ``lane``, a template without ``{sample_id}``/``{release_row}``): one
    result is never counted for two pairs. Names both pairs.
    """
    paths: dict[str, list[str]] = {}
    owner: dict[str, tuple[str, str]] = {}
    clashes: list[str] = []
    for model_id in cfg.model_ids:
        m = cfg.models[model_id]
        fmt = cfg.result_path.format
        checked = _needs_path_check(cfg, model_id)
        rels = []
        for prompt in prompts:
            rel = result_file(cfg, prompt, model_id) if checked else fmt(
                release_row=prompt.release_row, sample_id=prompt.sample_id, lane=m.lane, source_id=m.source_id
            )
            first = owner.setdefault(rel, (prompt.sample_id, model_id))
            if first != (prompt.sample_id, model_id) and len(clashes) < 10:
                clashes.append(f"{rel} is the result file of sample_id {first[0]} / model {first[1]} and of sample_id {prompt.sample_id} / model {model_id}")
            rels.append(rel)
        paths[model_id] = rels
    if clashes:
        raise ConfigError(
            f"config {cfg.config_path}: two prompt × model pairs would read one result file "
            "(same release_row, or two models with the same source_id and lane): " + "; ".join(clashes)
        )
    return paths


def extract_records(cfg: ReleaseConfig, prompt_set: PromptSet, progress: bool | None = None, workers: int | None = None) -> Extraction:
    """Classify and extract every configured model's result for every prompt (SPEC §2–4).

    Returns records sorted by sample_id with the models of the config. ``progress``: None
    shows a bar only on a terminal. ``workers``: processes reading results (default: one
    per core for releases of at least :data:`PARALLEL_MIN_PAIRS` pairs; results are merged
    in config order, so the output does not depend on it).

    Raises :class:`ConfigError` / ``ExtractorError`` for configuration problems — among them
    a ``results_root`` that is missing or holds no result file, a model without any result
    file (unless ``pending: true``), two pairs sharing one path — and
    :class:`ResultIdentityError` when one file is read for two pairs (symlink, hard link) or
    a file's own sample_id / generator_name contradicts its pair. Problems of a single
    result file become ``invalid_evaluation`` records.
    """
    spec, extractor = load_extractor(cfg.extractor_spec())
    paths = result_paths(cfg, prompt_set.prompts)
    root = cfg.results_root_path
    if not root.is_dir():
        raise ConfigError(f"config {cfg.config_path}: results_root {cfg.results_root} is not a folder ({root} does not exist)")
    model_ids = list(cfg.model_ids)
    models = [cfg.models[m] for m in model_ids]
    table = ReleaseTable.empty(
        [prompt_record(p, i) for i, p in enumerate(prompt_set.prompts)], model_ids,
        [m.lane for m in models], [m.source_id for m in models], [paths[m] for m in model_ids],
    )
    warnings = list(prompt_set.warnings)
    problems: list[str] = []
    n = len(prompt_set.prompts)
    # per pair, compactly: the sha256 of the file read and its (st_dev, st_ino)
    digests = np.zeros((len(model_ids), n, 32), dtype=np.uint8)
    file_ids = np.zeros((len(model_ids), n, 2), dtype=np.uint64)
    was_read = np.zeros((len(model_ids), n), dtype=bool)
    n_pairs = n * len(model_ids)
    if workers is None:
        workers = min(os.cpu_count() or 1, len(model_ids)) if n_pairs >= PARALLEL_MIN_PAIRS and _can_start_workers() else 1
    job = {
        "prompts": [(p.sample_id, p.release_row) for p in prompt_set.prompts],
        "extractor_spec": cfg.extractor_spec(),
        "root": str(root),
        "globs": list(cfg.generation_glob),
        "paths": [paths[m] for m in model_ids],
        "generators": [frozenset(g for g in (m.source_id, model_id, m.generator_name) if g) for model_id, m in zip(model_ids, models)],
    }
    bar = tqdm(total=n_pairs, desc="reading results", unit="file", disable=(None if progress is None else not progress))
    pool = None
    try:
        step = max(1, -(-n // 4)) if workers > 1 else max(n, 1)  # a few tasks per model balance the workers
        tasks = [(k, start, min(start + step, n)) for k in range(len(model_ids)) for start in range(0, n, step)]
        if workers > 1:
            import multiprocessing

            # forkserver: workers start from a clean process, never a fork of a notebook
            # kernel with threads; the job is pickled once per worker by the initializer
            pool = multiprocessing.get_context("forkserver").Pool(workers, initializer=_init_worker, initargs=(job,))
            results = pool.imap(_extract_pairs, tasks)
        else:
            _JOB.clear()
            _JOB.update(job, extractor=extractor)
            results = map(_extract_pairs, tasks)
        status, values, errors = table.status, table.values, table.errors
        for (k, start, stop), chunk in zip(tasks, results):
            model_id, rels = model_ids[k], paths[model_ids[k]]
            status[k, start:stop] = chunk.codes
            values[k, start + chunk.scored] = chunk.values
            was_read[k, start + chunk.read] = True
            digests[k, start + chunk.read] = np.frombuffer(chunk.digests, dtype=np.uint8).reshape(-1, 32)
            file_ids[k, start + chunk.read] = chunk.file_ids
            for j, error, pair_warnings, contradiction in chunk.notes:
                i = start + j
                if error is not None:
                    errors[(k, i)] = error
                if contradiction:
                    problems.append(f"{rels[i]} (sample_id {prompt_set.prompts[i].sample_id}, model {model_id}): {contradiction}")
                for w in pair_warnings:
                    warnings.append({"check": "result_warning", "sample_id": prompt_set.prompts[i].sample_id, "model_id": model_id, "file": rels[i], "message": w})
            bar.update(stop - start)
    finally:
        bar.close()
        _JOB.clear()
        if pool is not None:
            pool.terminate()
            pool.join()
    problems += _same_file_problems(file_ids, was_read, model_ids, prompt_set.prompts, paths)
    if problems:
        problems.sort()
        more = f" … and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ResultIdentityError(
            f"results_root {cfg.results_root}: {len(problems)} result file(s) cannot be counted for the pair they were read for:\n  - "
            + "\n  - ".join(problems[:20]) + more
        )
    n_read = was_read.sum(axis=1)
    if not n_read.any():
        raise ConfigError(
            f"config {cfg.config_path}: results_root {cfg.results_root} holds no result file for any model "
            f"(looked for result_path {cfg.result_path!r}, e.g. {paths[cfg.model_ids[0]][0] if n else '—'})"
        )
    absent = [m for k, m in enumerate(model_ids) if n_read[k] == 0 and not cfg.models[m].pending]
    if absent:
        raise ConfigError(
            f"config {cfg.config_path}: no result file at all for model(s) "
            + ", ".join(f"{m} (source_id {cfg.models[m].source_id}, lane {cfg.models[m].lane}; e.g. {paths[m][0]})" for m in absent)
            + ": a wrong source_id or lane? Mark a model whose results are not in yet with `pending: true`."
        )
    h = hashlib.sha256()
    for rel, k, i in sorted((paths[model_ids[k]][i], k, i) for k, i in zip(*np.nonzero(was_read))):
        h.update(f"{digests[k, i].tobytes().hex()}  {rel}\n".encode())
    warnings.sort(key=lambda w: (w.get("sample_id", ""), w.get("model_id", ""), w["check"], w["message"]))
    return Extraction(table, warnings, h.hexdigest(), int(n_read.sum()), spec)


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _same_file_problems(file_ids: np.ndarray, was_read: np.ndarray, model_ids: list[str], prompts: list[Prompt], paths: dict[str, list[str]]) -> list[str]:
    """One message per pair whose file (by st_dev, st_ino) an earlier pair (model-major order)
    already read: a symlink or hard link would count one result twice."""
    k_idx, i_idx = np.nonzero(was_read)  # model-major order
    ids = file_ids[k_idx, i_idx]
    _, first_pos, inverse = np.unique(ids, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    out = []
    for pos in np.nonzero(first_pos[inverse] != np.arange(len(ids)))[0]:
        k, i = int(k_idx[pos]), int(i_idx[pos])
        k0, i0 = int(k_idx[first_pos[inverse[pos]]]), int(i_idx[first_pos[inverse[pos]]])
        m, m0 = model_ids[k], model_ids[k0]
        out.append(
            f"{paths[m][i]} (sample_id {prompts[i].sample_id}, model {m}) is the same file as {paths[m0][i0]} "
            f"(sample_id {prompts[i0].sample_id}, model {m0}): a symlink or hard link would count one result twice"
        )
    return out
