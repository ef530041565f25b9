"""Prompt × model records, the rows of ``prompt_scores.jsonl``: extracted from the result files
into a :class:`ReleaseTable`, and read back (data contract, § Per-prompt values; § Artifacts)."""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from searchgen_nb.config import ReleaseConfig
from searchgen_nb.constants import MISSING_GENERATION, SCORED
from searchgen_nb.declaration import COMPONENTS, EXCLUDED_PUBLIC_COMPONENT, OVERALL_9_COMPONENTS
from searchgen_nb.errors import ConfigError, ResultIdentityError
from searchgen_nb.evidence import PairEvidenceStore, pack_answer
from searchgen_nb.extract import Extractor, PairResult, classify_result, load_extractor
from searchgen_nb.files import image_name, inside, read_lines
from searchgen_nb.numeric import means_with_extra
from searchgen_nb.prompts import Prompt, PromptSet
from searchgen_nb.table import STATUS_CODE, VALUE_COLUMNS, ReleaseTable
from searchgen_nb.workers import cores, fork_map


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
    #: (model index, prompt index) -> the pair's image below results_root (POSIX) and whether
    #: it is inside results_root (links followed); None when not looked for (thumbnails off)
    images: dict[tuple[int, int], tuple[str, bool]] | None = None


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


class _Chunk:
    """The pairs ``start`` to ``stop - 1`` (model-major: ``k * prompts + i``) as read, compactly
    (a worker returns it whole): per pair its status code, values, whether its file was read,
    that file's sha256 (32 bytes each) and ``(st_dev, st_ino)``, its judge's answer pickled
    (``lengths``: bytes of each in ``answers``, 0 for none); ``notes``: ``(pair, kind, text)``
    with kind ``error``, ``identity`` or ``warning``, in order."""

    def __init__(self, start: int, stop: int) -> None:
        n = stop - start
        self.start, self.status = start, np.zeros(n, dtype=np.int8)
        self.values = np.full((n, len(VALUE_COLUMNS)), np.nan)
        self.read, self.sha = np.zeros(n, dtype=bool), bytearray(32 * n)
        self.ids, self.lengths = np.zeros((n, 2), dtype=np.uint64), np.zeros(n, dtype=np.int64)
        self.answers, self.notes = bytearray(), list[tuple[int, str, str]]()
        self.images = list[tuple[int, str, bool]]()  # (pair, image's name, inside results_root)

    def add(self, j: int, pair: PairResult) -> None:
        """Pair ``start + j``."""
        self.status[j] = STATUS_CODE[pair.status]
        if pair.status == SCORED:  # ten components, Overall-10, Overall-9; NaN = null, -0.0 is 0.0
            comps = pair.components
            values = (*(comps[c] for c in COMPONENTS), *prompt_overalls(comps))
            self.values[j] = [float("nan") if v is None else v + 0.0 for v in values]
        if pair.file_sha256 is not None and pair.file_id is not None:  # read: both are set
            self.read[j], self.ids[j] = True, pair.file_id
            self.sha[32 * j : 32 * j + 32] = pair.file_sha256
        if pair.evidence:
            answer = pack_answer(pair.evidence)
            self.lengths[j] = len(answer)
            self.answers += answer
        pair_at = self.start + j
        if pair.error is not None:
            self.notes.append((pair_at, "error", pair.error))
        if pair.identity_error:
            self.notes.append((pair_at, "identity", pair.identity_error))
        self.notes += [(pair_at, "warning", w) for w in pair.warnings]


@dataclass
class _Job:
    """What reading a pair needs: the extractor, ``generation_glob``, per model its result
    files (absolute) and names, per prompt its ``(sample_id, release_row)``; ``root``: the
    results' root when each pair's image is looked for too (thumbnails on), else None."""

    extractor: Extractor
    globs: list[str]
    paths: list[list[str]]
    names: list[frozenset[str]]
    ids: list[tuple[str, str]]
    root: str | None

    def read(self, span: tuple[int, int]) -> _Chunk:
        """The pairs of ``span`` (``(start, stop)``, model-major)."""
        start, stop = span
        out, n, known = _Chunk(start, stop), len(self.ids), dict[str, str]()
        for j in range(stop - start):
            k, i = divmod(start + j, n)
            path, identity = self.paths[k][i], (self.ids[i], self.names[k])
            pair = classify_result(path, self.extractor, self.globs, identity)
            out.add(j, pair)
            if self.root is not None and pair.status != MISSING_GENERATION:
                folder = os.path.dirname(path)
                if (name := image_name(folder, self.globs)) is not None:
                    within = inside(os.path.join(folder, name), self.root, known)
                    out.images.append((start + j, name, within))
        return out


_JOB: _Job | None = None  # a worker's


def _start_worker(job: _Job) -> None:
    global _JOB
    _JOB = job


def _read_span(span: tuple[int, int]) -> _Chunk:
    assert _JOB is not None
    return _JOB.read(span)


#: Pairs per piece of work: at least CHUNK_MIN (fewer pairs are read in this process), at most
#: CHUNK_MAX, about four pieces per core in between.
CHUNK_MIN, CHUNK_MAX = 512, 2048


def _chunks(job: _Job, n_pairs: int) -> Iterator[_Chunk]:
    """Every pair read, in pieces in model-major order: on a worker process per core when there
    are two pieces or more, else here."""
    n_cores = cores()
    size = max(CHUNK_MIN, min(CHUNK_MAX, n_pairs // (4 * n_cores)))
    spans = [(a, min(a + size, n_pairs)) for a in range(0, n_pairs, size)]
    if n_cores < 2 or len(spans) < 2:
        return map(job.read, spans)
    why = (
        "extract: a worker process ended before its result files were read "
        "(killed, or out of memory?); nothing was published"
    )
    return fork_map(_read_span, spans, why, _start_worker, (job,))


class _Collected:
    """The pairs read so far: the table's statuses, values and errors; per pair (model-major)
    whether its file was read, its sha256 and ``(st_dev, st_ino)``; warnings, identity problems."""

    def __init__(self, table: ReleaseTable, prompt_set: PromptSet) -> None:
        self.table, self.prompts, self.paths = table, prompt_set.prompts, table.result_files
        n = table.n_models * table.n_prompts
        self.read, self.sha = np.zeros(n, dtype=bool), bytearray(32 * n)
        self.ids = np.zeros((n, 2), dtype=np.uint64)
        self.warnings = list(prompt_set.warnings)
        self.problems: list[str] = []
        self.evidence = PairEvidenceStore((table.n_models, table.n_prompts))
        self.images: dict[tuple[int, int], tuple[str, bool]] = {}

    def add(self, chunk: _Chunk) -> None:
        """A chunk of pairs, the chunks in model-major order."""
        start, stop = chunk.start, chunk.start + len(chunk.status)
        ks, ps = np.divmod(np.arange(start, stop), self.table.n_prompts)
        self.table.status[ks, ps] = chunk.status
        scored = chunk.status == STATUS_CODE[SCORED]
        self.table.values[ks[scored], ps[scored]] = chunk.values[scored]
        self.read[start:stop], self.ids[start:stop] = chunk.read, chunk.ids
        self.sha[32 * start : 32 * stop] = chunk.sha
        self.evidence.extend(start, chunk.lengths, chunk.answers)
        for at, name, within in chunk.images:
            k, i = divmod(at, self.table.n_prompts)
            folder = posixpath.dirname(self.paths[k][i])
            self.images[k, i] = (f"{folder}/{name}" if folder else name), within
        for at, kind, text in chunk.notes:
            k, i = divmod(at, self.table.n_prompts)
            if kind == "error":
                self.table.errors[(k, i)] = text
            elif kind == "identity":
                self.problems.append(f"{self._pair(k, i)}: {text}")
            else:
                self.warnings.append({"check": "result_warning",
                                      "sample_id": self.prompts[i].sample_id,
                                      "model_id": self.table.model_ids[k],
                                      "file": self.paths[k][i], "message": text})  # fmt: skip

    def _pair(self, k: int, i: int) -> str:
        sid, m = self.prompts[i].sample_id, self.table.model_ids[k]
        return f"{self.paths[k][i]} (sample_id {sid}, model {m})"

    def n_read(self) -> np.ndarray:
        """Files read per model."""
        return self.read.reshape(self.table.n_models, -1).sum(axis=1)

    def same_file_problems(self) -> list[str]:
        """One message per pair whose file (by st_dev, st_ino) an earlier pair (model-major
        order) already read: a symlink or hard link would count one result twice."""
        first: dict[tuple[int, int], int] = {}
        read = np.flatnonzero(self.read)
        n = self.table.n_prompts
        return [
            f"{self._pair(*divmod(j, n))} is the same file as "
            f"{self._pair(*divmod(first[file_id], n))}: a "
            "symlink or hard link would count one result twice"
            for j, file_id in zip(read.tolist(), map(tuple, self.ids[read].tolist()))
            if first.setdefault(file_id, j) != j
        ]

    def input_sha256(self) -> str:
        """sha256 over ``<file sha256>  <path>`` lines of every file read, sorted by path."""
        h, n = hashlib.sha256(), self.table.n_prompts
        files = sorted(
            (self.paths[j // n][j % n], self.sha[32 * j : 32 * j + 32].hex())
            for j in np.flatnonzero(self.read).tolist()
        )
        for rel, sha in files:
            h.update(f"{sha}  {rel}\n".encode())
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
    n_read = got.n_read()
    where = f"config {cfg.config_path}"
    if not n_read.any():
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
    got, root = _Collected(table, prompt_set), str(root)
    job = _Job(
        extractor, list(cfg.generation_glob),
        [[os.path.join(root, rel) for rel in paths[m]] for m in model_ids],
        [frozenset(g for g in (m.source_id, mid, m.generator_name) if g)
         for mid, m in zip(model_ids, models)],
        [(p.sample_id, p.release_row) for p in prompts],
        root if cfg.evidence.thumbnails else None,
    )  # fmt: skip
    show, n_pairs = None if progress is None else not progress, len(prompts) * len(models)
    with tqdm(total=n_pairs, desc="reading results", unit="file", disable=show) as bar:
        for chunk in _chunks(job, n_pairs):
            got.add(chunk)
            bar.update(len(chunk.status))
    _refuse(cfg, got)
    got.warnings.sort(
        key=lambda w: (w.get("sample_id", ""), w.get("model_id", ""), w["check"], w["message"])
    )
    return Extraction(
        table, got.warnings, got.input_sha256(), int(got.read.sum()), spec, got.evidence
    )
