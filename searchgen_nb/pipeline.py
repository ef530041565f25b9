"""The data release: extract → aggregate → validate in a staging folder → promote. The stages
(:data:`STAGES`): ``searchgen-nb data`` (:func:`run_data`) runs them in order, a release's
notebooks 01–03 one each. Nothing here re-states a rule: it sequences the modules owning them."""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from searchgen_nb.aggregate import ModelMeta, leaderboards
from searchgen_nb.artifacts import dumps, write_jsonl, write_text
from searchgen_nb.bounds import preflight
from searchgen_nb.changes import compare, first_release
from searchgen_nb.config import ReleaseConfig, project_root, work_root
from searchgen_nb.constants import (
    ARTIFACTS,
    CHANGES,
    MANIFEST,
    UNCERTAINTY,
    VALIDATION_REPORT,
    ZERO_FILL,
)
from searchgen_nb.errors import ReleaseError, ReleaseInterrupted, ValidationFailed
from searchgen_nb.evidence import EVIDENCE, PREVIEWS, texts_sha256, write_evidence
from searchgen_nb.gate.checks import Report, validate_folder
from searchgen_nb.manifest import build_manifest
from searchgen_nb.prompts import read_prompts
from searchgen_nb.publish import check_data_out, held_signals, promote, staging_dir, step
from searchgen_nb.published import Published, check_previous
from searchgen_nb.records import Extraction, extract_records, read_records
from searchgen_nb.schemas import schema_dir
from searchgen_nb.slices import manifest_slices, slice_members, slice_specs
from searchgen_nb.table import ReleaseTable
from searchgen_nb.thumbs import Thumbnails, cache_folder, check_cache, make_thumbnails
from searchgen_nb.uncertainty import uncertainty


def aggregate_table(cfg: ReleaseConfig, table: ReleaseTable) -> dict[str, object]:
    """The four leaderboard artifacts of a release table (its models in any order)."""
    metas = [
        ModelMeta(
            m, cfg.models[m].display_name, cfg.models[m].type, cfg.policy(m), cfg.models[m].pending
        )
        for m in table.model_ids
    ]
    members = slice_members(table.prompts, slice_specs(cfg.slices, table.n_prompts))
    return leaderboards(
        table,
        metas,
        cfg.scoring.min_ranking_coverage,
        cfg.scoring.rounding_decimals,
        list(cfg.model_ids),
        members,
        cfg.declaration(),
    )


@dataclass
class DataRelease:
    """What :func:`run_data` produced; ``timings``: ``{stage: {"wall_s", "cpu_s"}}``."""

    out_dir: Path
    report: Report
    extraction: Extraction
    timings: dict = field(default_factory=dict)


def _clock() -> tuple[float, float]:
    """Wall seconds and CPU seconds of this process and its finished children."""
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return time.perf_counter(), me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@contextmanager
def _stage(timings: dict, name: str):
    """Time the block into ``timings[name]``; an ``OSError`` in it becomes a failure naming the
    stage and the path."""
    wall, cpu = _clock()
    try:
        with step(f"data, stage {name}"):
            yield
    finally:
        wall2, cpu2 = _clock()
        timings[name] = {"wall_s": round(wall2 - wall, 4), "cpu_s": round(cpu2 - cpu, 4)}


def extract_stage(
    cfg: ReleaseConfig,
    folder: Path,
    progress: bool | None = None,
    cache: str | Path | None = None,
    timings: dict | None = None,
) -> Extraction:
    """Stage 1 (notebook 01): write ``prompt_scores.jsonl``, the evidence, the schemas and the
    manifest into ``folder``; ``cache``: the thumbnail cache (default ``$SEARCHGEN_THUMB_CACHE``,
    else none); ``timings``: :class:`DataRelease`'s. Raises ``MetadataError`` / ``ConfigError`` /
    ``ExtractorError``, ``ReleaseError`` for a cache that is not the tool's; bad result files
    become ``invalid_evaluation`` records."""
    folder, timings = Path(folder), {} if timings is None else timings
    cache = cache_folder(cache)
    check_cache(cache, {**_read_only(cfg), "staging folder": Path(os.path.realpath(folder))})
    previous_release(cfg)  # a wrong previous_release stops the release before any work
    folder.mkdir(parents=True, exist_ok=True)
    prompt_set = read_prompts(
        cfg.dataset_path, tuple(k.fields[0] for k in cfg.declaration().breakdowns)
    )
    preflight(cfg, prompt_set)  # an empty slice or too much work stops here, before any result
    extraction = extract_records(cfg, prompt_set, progress)
    table = extraction.table
    sha = {"prompt_scores.jsonl": write_jsonl(folder / "prompt_scores.jsonl", table.records())}
    with _stage(timings, "thumbnails"):
        on = cfg.evidence.thumbnails
        made = make_thumbnails(cfg, table, extraction.images, folder, cache) if on else Thumbnails()
    texts = {p.sample_id: p.texts for p in prompt_set.prompts}  # the metadata read once
    sha[EVIDENCE] = write_evidence(texts, table, extraction.evidence, folder, made.paths)
    extraction.evidence.close()  # written: the judge's texts need no room past this point
    extraction.warnings += made.warnings  # an image without a thumbnail: named, never a failure
    manifest = build_manifest(cfg, extraction, prompt_set.canonical_sha256, sha)
    manifest["thumbnails"] = made.summary(on)
    url = cfg.evidence.image_base_url
    manifest["previews"] = made.summary(on, PREVIEWS) | ({"image_base_url": url} if url else {})
    manifest["dataset"]["texts_sha256"] = texts_sha256(
        [{"sample_id": p["sample_id"], **texts[p["sample_id"]]} for p in table.prompts]
    )
    # the schemas are published beside the artifacts (data contract, § Artifacts)
    (folder / "schemas").mkdir(exist_ok=True)
    for src in sorted(schema_dir().glob("*.schema.json")):
        write_text(folder / "schemas" / src.name, src.read_text(encoding="utf-8"))
    specs = slice_specs(cfg.slices, table.n_prompts)
    manifest.update(manifest_slices(specs, slice_members(table.prompts, specs), table.prompts))
    write_text(folder / MANIFEST, dumps(manifest))
    return extraction


def read_table(cfg: ReleaseConfig, folder: Path) -> ReleaseTable:
    """The release table of a staged ``prompt_scores.jsonl`` (models in config order)."""
    return ReleaseTable.from_records(read_records(folder), list(cfg.model_ids))


def aggregate_stage(
    cfg: ReleaseConfig, folder: Path, table: ReleaseTable | None = None, timings: dict | None = None
) -> dict[str, object]:
    """Stage 2 (notebook 02): write the leaderboards, ``uncertainty.json`` (data contract,
    § Uncertainty) and ``changes.json``, their sha256 in the manifest; returns the boards.
    ``table``: the extraction's, else the staged records'; ``timings``: :class:`DataRelease`'s."""
    folder, timings = Path(folder), {} if timings is None else timings
    with _stage(timings, "aggregate"):
        table = table if table is not None else read_table(cfg, folder)
        boards = aggregate_table(cfg, table)
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        sha = manifest["artifact_sha256"]
        for name, data in boards.items():
            sha[name] = write_text(folder / name, dumps(data))
    with _stage(timings, "uncertainty"):
        members = slice_members(table.prompts, slice_specs(cfg.slices, table.n_prompts))
        zero_fill = {m: cfg.policy(m) == ZERO_FILL for m in cfg.model_ids}
        doc = uncertainty(
            table,
            zero_fill,
            boards,
            members,
            cfg.uncertainty,
            cfg.scoring.rounding_decimals,
            cfg.declaration(),
        )
        sha[UNCERTAINTY] = write_text(folder / UNCERTAINTY, dumps(doc))
    with _stage(timings, "changes"):
        prev = previous_release(cfg)
        staged = Published(folder, parsed={MANIFEST: manifest})  # its hashes not all in yet
        doc = first_release() if prev is None else compare(prev, staged)
        sha[CHANGES] = write_text(folder / CHANGES, dumps(doc))
    write_text(folder / MANIFEST, dumps(manifest))
    return boards


def previous_release(cfg: ReleaseConfig) -> Published | None:
    """The release in the config's ``previous_release`` folder, checked; raises
    :class:`ConfigError` naming the key when it is not a readable published release (data
    contract, § Changes between releases)."""
    path = cfg.previous_release_path
    where = f"config {cfg.config_path}: previous_release {cfg.previous_release}"
    return None if path is None else check_previous(path, where, cfg.benchmark, cfg.data_origin)


def gate(cfg: ReleaseConfig, folder: Path, table: ReleaseTable | None = None) -> Report:
    """Run the release checks on a staged folder and write ``validation_report.json`` there.
    The order check aggregates ``table`` (else the staged records) with prompts and models
    permuted; ``lost_results`` reads the config's previous release. Raises
    :class:`ValidationFailed` naming every failed check."""

    def permuted_aggregate():
        t = table if table is not None else read_table(cfg, folder)
        rng = random.Random(7)
        prompts, models = list(range(t.n_prompts)), list(range(t.n_models))
        rng.shuffle(prompts)
        rng.shuffle(models)
        return aggregate_table(cfg, t.permuted(prompts, models))

    report = validate_folder(
        folder, aggregate=permuted_aggregate, previous=cfg.previous_release_path, staged=True
    )
    write_text(folder / VALIDATION_REPORT, dumps(report.as_dict()))
    if not report.passed:
        raise ValidationFailed("release checks failed:\n" + report.summary())
    return report


def resolve_work_path(path: str | Path) -> Path:
    """A notebook parameter path: absolute as given, else below the work root (never the cwd)."""
    p = Path(path)
    return p if p.is_absolute() else work_root() / p


#: The stages in run order, each with the notebook that runs it and the files it stages.
STAGES = {
    "extract": ("01_extract.ipynb", ("prompt_scores.jsonl", EVIDENCE, MANIFEST)),
    "aggregate": (
        "02_aggregate.ipynb",
        tuple(a for a in ARTIFACTS if a not in ("prompt_scores.jsonl", EVIDENCE)),
    ),
    "validate": ("03_validate.ipynb", (VALIDATION_REPORT,)),
}


def ensure_staged(cfg: ReleaseConfig, staging: str | Path, upto: str = "aggregate") -> Path:
    """The staging folder (:func:`resolve_work_path`) once it holds what the stages up to
    ``upto`` wrote for ``cfg``; else :class:`ReleaseError` naming the notebook to run first."""
    folder = resolve_work_path(staging)
    how = (
        "with the same release_config and staging, or give `staging` a folder that "
        "`searchgen-nb data CONFIG --out DIR` wrote"
    )
    for name, (notebook, files) in STAGES.items():
        missing = next((f for f in files if not (folder / f).is_file()), None)
        if missing:
            raise ReleaseError(
                f"staging folder {folder} holds no {missing}: run {notebook} first {how}"
            )
        if name == upto:
            break
    made_from = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("config")
    if made_from != cfg.public_dict():
        raise ReleaseError(
            f"staging folder {folder} was made from another config than "
            f"{cfg.config_path}: run {STAGES['extract'][0]} first {how}"
        )
    return folder


def inputs(cfg: ReleaseConfig) -> dict[str, Path]:
    """What a release reads and never writes, by name, resolved (data contract, § Publication)."""
    named = {
        "config": Path(cfg.config_path),
        "dataset": cfg.dataset_path,
        "results_root": cfg.results_root_path,
        "previous_release": cfg.previous_release_path,
        "paper_table": cfg.paper_table_path,
        "project": project_root(),
    }
    return {name: Path(os.path.realpath(path)) for name, path in named.items() if path is not None}


def _read_only(cfg: ReleaseConfig) -> dict[str, Path]:
    """The inputs no thumbnail cache may be in or around (the project may hold ``build/``)."""
    return {name: path for name, path in inputs(cfg).items() if name != "project"}


def run_data(
    cfg: ReleaseConfig,
    out_dir: str | Path,
    progress: bool | None = None,
    cache: str | Path | None = None,
) -> DataRelease:
    """Build, validate and publish a release's data into ``out_dir`` (checked first: see
    :func:`publish.check_data_out`) through a staging folder beside it, in one step once every
    check passes; on any failure or interruption ``out_dir`` is left as it was. ``cache``: the
    thumbnail cache folder (:func:`extract_stage`)."""
    out_dir = Path(os.path.realpath(out_dir))  # a loop of links: named below, no crash
    check_data_out(out_dir, inputs(cfg))
    check_cache(cache_folder(cache), {**_read_only(cfg), "--out folder": out_dir})
    with step("data, staging"):
        staging = staging_dir(out_dir)
    timings: dict[str, dict[str, float]] = {}
    published = False
    try:
        with _stage(timings, "extract"):
            extraction = extract_stage(cfg, staging, progress, cache, timings)
        aggregate_stage(cfg, staging, extraction.table, timings)
        with _stage(timings, "validate"):
            report = gate(cfg, staging, extraction.table)
        with _stage(timings, "publish"), held_signals():
            check_data_out(out_dir, inputs(cfg), again=True)  # what appeared meanwhile
            promote(staging, out_dir)
            published = True
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if not isinstance(exc, KeyboardInterrupt):
            raise
        left = (
            f" after {out_dir} was published"
            if published
            else f"; nothing was published, {out_dir} is as it was"
        )
        raise ReleaseInterrupted(f"interrupted{left}") from None
    return DataRelease(out_dir, report, extraction, timings)
