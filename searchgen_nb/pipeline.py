"""The data release: extract → aggregate → write to staging → validate → promote.

The three stages (:data:`STAGES`) are :func:`extract_stage`, :func:`aggregate_stage` and
:func:`gate`: ``searchgen-nb data`` (:func:`run_data`) runs them in order, and in a release the
notebooks 01–03 run one each, in the same order. Nothing here re-states a rule, it only
sequences the modules that own them.
"""

from __future__ import annotations

import json
import os
import platform
import random
import resource
import shutil
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from searchgen_nb import __version__
from searchgen_nb.aggregate import ModelMeta, leaderboards
from searchgen_nb.artifacts import (
    dumps, generated_at, held_signals, promote, staging_dir, write_jsonl, write_text,
)
from searchgen_nb.bounds import preflight
from searchgen_nb.changes import compare, first_release
from searchgen_nb.published import Published, check_previous
from searchgen_nb.config import PROJECT_ENV, ReleaseConfig, project_root, work_root
from searchgen_nb.constants import (
    ARTIFACTS,
    COMPONENTS,
    EXCLUDED_PUBLIC_COMPONENT,
    MANIFEST,
    OVERALL_9_COMPONENTS,
    SCALE_PUBLIC,
    SCALE_RAW,
    SCHEMA_VERSION,
    CHANGES,
    UNCERTAINTY,
    VALIDATION_REPORT,
    ZERO_FILL,
)
from searchgen_nb.errors import ConfigError, ReleaseError, ReleaseInterrupted, ValidationFailed
from searchgen_nb.files import CONFIG_MAX, read_bytes
from searchgen_nb.prompts import read_prompts
from searchgen_nb.publish import check_data_out, step
from searchgen_nb.records import Extraction, extract_records, read_records
from searchgen_nb.schemas import schema_dir
from searchgen_nb.partition import partition_counts
from searchgen_nb.slices import manifest_slices, slice_members, slice_specs
from searchgen_nb.table import ReleaseTable
from searchgen_nb.uncertainty import uncertainty
from searchgen_nb.untrusted import excerpt, no_duplicate_keys
from searchgen_nb.validate import Report, validate_folder


def model_metas(cfg: ReleaseConfig) -> list[ModelMeta]:
    """Models in config order with their effective missing policy."""
    return [ModelMeta(m, cfg.models[m].display_name, cfg.models[m].type, cfg.policy(m),
                      cfg.models[m].pending) for m in cfg.model_ids]


def aggregate_table(cfg: ReleaseConfig, table: ReleaseTable) -> dict[str, object]:
    """The four leaderboard artifacts of a release table (see :func:`aggregate.leaderboards`);
    the table's models may be in any order."""
    metas = {m.model_id: m for m in model_metas(cfg)}
    members = slice_members(table.prompts, slice_specs(cfg.slices, table.n_prompts))
    return leaderboards(
        table, [metas[m] for m in table.model_ids], cfg.scoring.min_ranking_coverage,
        cfg.scoring.rounding_decimals, list(cfg.model_ids), members,
    )


def load_paper_table(cfg: ReleaseConfig) -> dict | None:
    """``{model_id: overall_10}`` (public 0–100) from the config's ``paper_table`` file, or None.

    Every value must be a finite JSON number in [0, 100]; the gate compares it as the decimal
    it prints (its shortest repr; data contract, § The release gate). Raises
    :class:`ConfigError` naming the file and the model for NaN/Infinity, a non-number, a
    duplicate model_id, or a file that is not a JSON object.
    """
    path = cfg.paper_table_path
    if path is None:
        return None

    def reject(token: str):
        raise ValueError(f"{token} is not a number")

    where = f"config {cfg.config_path}: paper_table {cfg.paper_table}"
    try:
        text = read_bytes(path, CONFIG_MAX).decode("utf-8")  # a regular file, bounded
        table = json.loads(text, parse_constant=reject, object_pairs_hook=no_duplicate_keys)
    except FileNotFoundError:
        raise ConfigError(f"config {cfg.config_path}: paper_table file not found: "
                          f"{cfg.paper_table}") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror or exc}") from None
    # JSONDecodeError, UnicodeDecodeError, NaN, huge ints, duplicates
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{where} is not valid JSON: {excerpt(str(exc), 200)}") from None
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a JSON object {{model_id: Overall-10}}")
    for model_id, v in table.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 100:
            raise ConfigError(f"{where}: model {excerpt(model_id, 60)}: {excerpt(v)} is not an "
                              "Overall-10 in 0–100")
    return table


def _git_commit(folder: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"],
                             capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def pipeline_commit() -> str | None:
    """The git commit of the code that made the release: the project folder a release runs its
    notebooks from (``--project``, passed in ``$SEARCHGEN_PROJECT``), else the checkout this
    package runs from; None outside a git checkout (e.g. ``data`` from a non-editable install)."""
    return _git_commit(Path(os.environ.get(PROJECT_ENV) or project_root()))


def _scoring(cfg: ReleaseConfig, policies: dict[str, str]) -> dict:
    """The manifest's ``scoring`` block: how the release aggregates, rounds and ranks."""
    default = cfg.scoring.missing_policy_default
    return {
        "aggregation": "prompt-macro",
        "excluded_public_component": EXCLUDED_PUBLIC_COMPONENT,
        # ≤ 15 significant digits: the JSON number reads back as the same decimal
        "min_ranking_coverage": float(cfg.scoring.min_ranking_coverage),
        "missing_policy_default": default,
        "missing_policy_exceptions": sorted(m for m, p in policies.items() if p != default),
        "missing_policies": policies,
        "overall_10_components": list(COMPONENTS),
        "overall_9_components": list(OVERALL_9_COMPONENTS),
        "primary_metric": "overall_9",
        "public_rounding_decimals": cfg.scoring.rounding_decimals,
        "rounding": "public = raw mean × 100 / 3, rounded half-up on the exact value",
        "scale_public": list(SCALE_PUBLIC),
        "scale_raw": list(SCALE_RAW),
        "source": os.path.basename(cfg.result_path),
    }


def build_manifest(cfg: ReleaseConfig, extraction: Extraction, n_prompts: int,
                   dataset_sha256: str, partition: dict, artifact_sha: dict) -> dict:
    """The release manifest (data contract, § Artifacts): published v1.0 keys plus hashes,
    policies and checks."""
    policies = {m: cfg.policy(m) for m in cfg.model_ids}
    toolgen = os.environ.get("TOOLGEN_ROOT")
    return {
        "artifacts": list(ARTIFACTS),
        "artifact_sha256": artifact_sha,
        "benchmark": cfg.benchmark,
        "data_origin": cfg.data_origin,
        "dataset": {
            "filename": cfg.dataset_path.name,
            "n_prompts": n_prompts,
            "sha256": dataset_sha256,
            "sha256_of": "canonical metadata: one sorted-key JSON line per prompt, "
                         "sorted by sample_id",
        },
        "extraction": {
            "extractor": extraction.extractor,
            "n_result_files_read": extraction.n_files_read,
            "status_counts": extraction.table.status_counts(),
            "warnings": extraction.warnings,
        },
        "generated_at": generated_at(),
        "inputs": {
            "generation_glob": list(cfg.generation_glob),
            "result_path": cfg.result_path,
            "results_sha256": extraction.input_sha256,
            "results_sha256_of": "sha256 over the sorted lines '<sha256 of file>  "
                                 "<path below results_root>' of every result file read",
        },
        "model_order": cfg.model_ids,
        "models": {
            m: {
                "display_name": c.display_name,
                "lane": c.lane,
                "missing_policy": policies[m],
                "pending": c.pending,
                "source_id": c.source_id,
                "type": c.type,
            }
            for m, c in cfg.models.items()
        },
        "partition": partition,
        "release_checks": {
            "expected": cfg.expected.model_dump(mode="json") if cfg.expected else None,
            "paper_table": load_paper_table(cfg),
        },
        "schema_version": SCHEMA_VERSION,
        "scoring": _scoring(cfg, policies),
        "software": {"python": ".".join(platform.python_version_tuple()[:2]),
                     "searchgen_nb": __version__, "pipeline_commit": pipeline_commit()},
        "source_commit": _git_commit(Path(toolgen)) if toolgen else None,
        "config": cfg.public_dict(),
    }


@dataclass
class DataRelease:
    """What :func:`run_data` produced: where, the validation report, the extraction, and
    per-stage ``timings`` ``{stage: {"wall_s", "cpu_s"}}`` (CPU includes worker processes)."""

    out_dir: Path
    report: Report
    extraction: Extraction
    timings: dict = field(default_factory=dict)


class _Stopwatch:
    """Wall and CPU seconds (this process and its finished children) per stage."""

    def __init__(self) -> None:
        self.stages: dict[str, dict[str, float]] = {}

    @staticmethod
    def _now() -> tuple[float, float]:
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.perf_counter(), me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    @contextmanager
    def stage(self, name: str):
        """Time the block; an ``OSError`` in it becomes a failure naming the stage and path."""
        wall, cpu = self._now()
        try:
            with step(f"data, stage {name}"):
                yield
        finally:
            wall2, cpu2 = self._now()
            self.stages[name] = {"wall_s": round(wall2 - wall, 4), "cpu_s": round(cpu2 - cpu, 4)}


def extract_stage(cfg: ReleaseConfig, folder: Path, progress: bool | None = None) -> Extraction:
    """Stage 1 (notebook 01): write ``prompt_scores.jsonl`` and the manifest into ``folder``.

    Raises ``MetadataError`` / ``ConfigError`` / ``ExtractorError`` on bad metadata or config;
    bad result files become ``invalid_evaluation`` records.
    """
    folder = Path(folder)
    previous_release(cfg)  # a wrong previous_release stops the release before any work
    folder.mkdir(parents=True, exist_ok=True)
    prompt_set = read_prompts(cfg.dataset_path)
    preflight(cfg, prompt_set)  # an empty slice or too much work stops here, before any result
    extraction = extract_records(cfg, prompt_set, progress)
    table = extraction.table
    sha = {"prompt_scores.jsonl": write_jsonl(folder / "prompt_scores.jsonl", table.records())}
    manifest = build_manifest(cfg, extraction, table.n_prompts, prompt_set.canonical_sha256,
                              partition_counts(table.prompts), sha)
    publish_schemas(folder)
    specs = slice_specs(cfg.slices, table.n_prompts)
    manifest.update(manifest_slices(specs, slice_members(table.prompts, specs), table.prompts))
    write_text(folder / MANIFEST, dumps(manifest))
    return extraction


def publish_schemas(folder: Path) -> None:
    """Copy the JSON Schemas of the artifacts into ``folder/schemas/`` (published beside the
    artifacts, so that another front end can validate what it loads; data contract,
    § Artifacts)."""
    target = Path(folder) / "schemas"
    target.mkdir(exist_ok=True)
    for src in sorted(schema_dir().glob("*.schema.json")):
        write_text(target / src.name, src.read_text(encoding="utf-8"))


def read_table(cfg: ReleaseConfig, folder: Path) -> ReleaseTable:
    """The release table of a staged ``prompt_scores.jsonl`` (models in config order)."""
    return ReleaseTable.from_records(read_records(folder), list(cfg.model_ids))


def uncertainty_table(cfg: ReleaseConfig, table: ReleaseTable, boards: dict) -> dict:
    """``uncertainty.json`` of a release table and its leaderboards (data contract,
    § Uncertainty: the stratified prompt bootstrap; see
    :func:`searchgen_nb.uncertainty.uncertainty`)."""
    members = slice_members(table.prompts, slice_specs(cfg.slices, table.n_prompts))
    zero_fill = {m: cfg.policy(m) == ZERO_FILL for m in cfg.model_ids}
    return uncertainty(table, zero_fill, boards, members, cfg.uncertainty,
                       cfg.scoring.rounding_decimals)


def aggregate_stage(cfg: ReleaseConfig, folder: Path, table: ReleaseTable | None = None,
                    watch: _Stopwatch | None = None) -> dict[str, object]:
    """Stage 2 (notebook 02): aggregate the release into the leaderboard files and
    ``uncertainty.json``, and record their sha256 in the manifest. Returns the boards.

    ``table``: the extraction's table when it is at hand (``searchgen-nb data``); else the
    staged ``prompt_scores.jsonl`` is read back (notebook 02). ``watch`` times the stages
    ``aggregate``, ``uncertainty`` and ``changes``."""
    folder = Path(folder)
    watch = watch or _Stopwatch()
    with watch.stage("aggregate"):
        table = table if table is not None else read_table(cfg, folder)
        boards = aggregate_table(cfg, table)
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        for name, data in boards.items():
            manifest["artifact_sha256"][name] = write_text(folder / name, dumps(data))
    with watch.stage("uncertainty"):
        doc = uncertainty_table(cfg, table, boards)
        manifest["artifact_sha256"][UNCERTAINTY] = write_text(folder / UNCERTAINTY, dumps(doc))
    write_text(folder / MANIFEST, dumps(manifest))
    with watch.stage("changes"):
        doc = changes_stage(cfg, folder)
        manifest["artifact_sha256"][CHANGES] = write_text(folder / CHANGES, dumps(doc))
    write_text(folder / MANIFEST, dumps(manifest))
    return boards


def previous_release(cfg: ReleaseConfig) -> Published | None:
    """The release in the config's ``previous_release`` folder, read and checked once; raises
    :class:`ConfigError` naming the key when it is not a readable published release (data
    contract, § Changes between releases)."""
    path = cfg.previous_release_path
    where = f"config {cfg.config_path}: previous_release {cfg.previous_release}"
    return None if path is None else check_previous(path, where, cfg.benchmark, cfg.data_origin)


def changes_stage(cfg: ReleaseConfig, folder: Path) -> dict:
    """``changes.json`` of the release staged in ``folder``: compared with the config's
    ``previous_release``, or the first-release document without one (data contract,
    § Changes between releases)."""
    prev = previous_release(cfg)
    return first_release() if prev is None else compare(prev, folder)


def gate(cfg: ReleaseConfig, folder: Path, table: ReleaseTable | None = None) -> Report:
    """Run the release checks on a staged folder, write ``validation_report.json`` there.

    The validator reconstructs everything from the staged files with its own code; its
    order check also runs this pipeline's aggregation on the release table with prompts and
    models permuted (``table``: the extraction's, else read from the staged records).
    Raises :class:`ValidationFailed` naming every failed check (with model, group,
    sample_id, file).
    """

    def permuted_aggregate():
        t = table if table is not None else read_table(cfg, folder)
        rng = random.Random(7)
        prompts, models = list(range(t.n_prompts)), list(range(t.n_models))
        rng.shuffle(prompts)
        rng.shuffle(models)
        return aggregate_table(cfg, t.permuted(prompts, models))

    report = validate_folder(folder, aggregate=permuted_aggregate)
    write_text(folder / VALIDATION_REPORT, dumps(report.as_dict()))
    if not report.passed:
        raise ValidationFailed("release checks failed:\n" + report.summary(), report.as_dict())
    return report


def resolve_work_path(path: str | Path) -> Path:
    """A notebook parameter path: absolute as given, else relative to the work root (the
    release's output root during ``searchgen-nb release``, else the project root; never the cwd)."""
    p = Path(path)
    return p if p.is_absolute() else work_root() / p


#: The stages of a data release in run order, each with the notebook that runs it in the book
#: (its audit part) and the files it adds to the staging folder. ``searchgen-nb data``
#: (:func:`run_data`) runs the same stage functions in the same order.
STAGES = {
    "extract": ("01_extract.ipynb", ("prompt_scores.jsonl", MANIFEST)),
    "aggregate": ("02_aggregate.ipynb", tuple(a for a in ARTIFACTS if a != "prompt_scores.jsonl")),
    "validate": ("03_validate.ipynb", (VALIDATION_REPORT,)),
}


def ensure_staged(cfg: ReleaseConfig, staging: str | Path, upto: str = "aggregate") -> Path:
    """The staging folder (:func:`resolve_work_path`) once it holds what the stages up to
    ``upto`` (:data:`STAGES`) wrote for ``cfg``. A notebook never runs an earlier stage itself:
    raises :class:`ReleaseError` naming the notebook to run first (or ``searchgen-nb data``)
    when a file is missing or the folder was made from another config."""
    folder = resolve_work_path(staging)
    how = ("with the same release_config and staging, or give `staging` a folder that "
           "`searchgen-nb data CONFIG --out DIR` wrote")
    for name, (notebook, files) in STAGES.items():
        missing = next((f for f in files if not (folder / f).is_file()), None)
        if missing:
            raise ReleaseError(f"staging folder {folder} holds no {missing}: run {notebook} "
                               f"first {how}")
        if name == upto:
            break
    made_from = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("config")
    if made_from != cfg.public_dict():
        raise ReleaseError(f"staging folder {folder} was made from another config than "
                           f"{cfg.config_path}: run {STAGES['extract'][0]} first {how}")
    return folder


def inputs(cfg: ReleaseConfig) -> dict[str, Path]:
    """What a release reads, by name (resolved): config, dataset, results_root, the optional
    previous_release and paper_table, and the project; never written (data contract,
    § Publication)."""
    named = {
        "config": Path(cfg.config_path),
        "dataset": cfg.dataset_path,
        "results_root": cfg.results_root_path,
        "previous_release": cfg.previous_release_path,
        "paper_table": cfg.paper_table_path,
        "project": project_root(),
    }
    return {name: Path(os.path.realpath(path)) for name, path in named.items() if path is not None}


def run_data(cfg: ReleaseConfig, out_dir: str | Path, progress: bool | None = None) -> DataRelease:
    """Build, validate and publish the data artifacts of a release into ``out_dir`` atomically.

    ``out_dir`` is checked first (:func:`publish.check_data_out`: only an empty folder or a
    data release this command wrote is replaced, never an input or a published version).
    Everything is written to a staging folder beside ``out_dir``; only when every check
    passes does it replace ``out_dir`` in one step. On any failure or interruption ``out_dir``
    is left byte-for-byte as it was and the staging folder is removed; a file-system error
    names the stage and the path.
    """
    out_dir = Path(os.path.realpath(out_dir))  # a loop of links: named below, no crash
    check_data_out(out_dir, inputs(cfg))
    with step("data, staging"):
        staging = staging_dir(out_dir)
    watch = _Stopwatch()
    published = False
    try:
        with watch.stage("extract"):
            extraction = extract_stage(cfg, staging, progress)
        aggregate_stage(cfg, staging, extraction.table, watch)
        with watch.stage("validate"):
            report = gate(cfg, staging, extraction.table)
        with watch.stage("publish"), held_signals():
            check_data_out(out_dir, inputs(cfg), again=True)  # what appeared meanwhile
            promote(staging, out_dir)
            published = True
    except KeyboardInterrupt:
        shutil.rmtree(staging, ignore_errors=True)
        if published:
            raise ReleaseInterrupted(f"interrupted after {out_dir} was published") from None
        raise ReleaseInterrupted(f"interrupted; nothing was published, {out_dir} is as it was") \
            from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return DataRelease(out_dir, report, extraction, watch.stages)
