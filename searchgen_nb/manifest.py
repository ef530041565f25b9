"""The release manifest (data contract, § Artifacts): the models with their missing policy,
the ``scoring`` block, the optional paper table of the release checks, and the software and
commits that made the release."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

from searchgen_nb import __version__
from searchgen_nb.artifacts import generated_at
from searchgen_nb.config import PROJECT_ENV, ReleaseConfig, project_root
from searchgen_nb.constants import ARTIFACTS, SCHEMA_VERSION
from searchgen_nb.declaration import (
    COMPONENTS,
    EXCLUDED_PUBLIC_COMPONENT,
    OVERALL_9_COMPONENTS,
    SCALE_PUBLIC,
    SCALE_RAW,
)
from searchgen_nb.errors import ConfigError
from searchgen_nb.files import CONFIG_MAX, read_bytes
from searchgen_nb.partition import partition_counts
from searchgen_nb.records import Extraction
from searchgen_nb.untrusted import excerpt, strict_loads


def load_paper_table(cfg: ReleaseConfig) -> dict | None:
    """``{model_id: overall_10}`` (public 0–100, finite JSON numbers, compared as the decimal
    they print: data contract, § The release gate) from the config's ``paper_table``, or None.
    Raises :class:`ConfigError` naming the file and the model for anything else."""
    path = cfg.paper_table_path
    if path is None:
        return None

    where = f"config {cfg.config_path}: paper_table {cfg.paper_table}"
    try:
        text = read_bytes(path, CONFIG_MAX).decode("utf-8")  # a regular file, bounded
        table = strict_loads(text)
    except FileNotFoundError:
        raise ConfigError(
            f"config {cfg.config_path}: paper_table file not found: {cfg.paper_table}"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except RecursionError:
        raise ConfigError(f"{where} is not valid JSON: nested too deeply") from None
    except ValueError as exc:  # bad JSON or UTF-8, NaN/Infinity, huge ints, duplicates
        raise ConfigError(f"{where} is not valid JSON: {excerpt(str(exc), 200)}") from None
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a JSON object {{model_id: Overall-10}}")
    for model_id, v in table.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 100:
            raise ConfigError(
                f"{where}: model {excerpt(model_id, 60)}: {excerpt(v)} is not an "
                "Overall-10 in 0–100"
            )
    return table


def _git_commit(folder: Path) -> str | None:
    """The HEAD commit of the git checkout at ``folder``, or None."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def build_manifest(
    cfg: ReleaseConfig, extraction: Extraction, dataset_sha256: str, artifact_sha: dict
) -> dict:
    """The release manifest (data contract, § Artifacts) with the release's declaration (§ The
    declaration of the benchmark); ``pipeline_commit``: the release's
    ``--project`` (``$SEARCHGEN_PROJECT``), else this package's checkout."""
    policies = {m: cfg.policy(m) for m in cfg.model_ids}
    default = cfg.scoring.missing_policy_default
    toolgen, project = os.environ.get("TOOLGEN_ROOT"), os.environ.get(PROJECT_ENV)
    table, declaration = extraction.table, cfg.declaration()
    return {
        "artifacts": [*ARTIFACTS, *(k.board for k in declaration.breakdowns)],
        "artifact_sha256": artifact_sha,
        "benchmark": cfg.benchmark,
        "data_origin": cfg.data_origin,
        "declaration": declaration.as_dict(),
        "dataset": {
            "filename": cfg.dataset_path.name,
            "n_prompts": table.n_prompts,
            "sha256": dataset_sha256,
            "sha256_of": "the metadata as read: every line as "
            "sorted-key JSON, one per prompt, sorted by sample_id",
        },
        "extraction": {
            "extractor": extraction.extractor,
            "n_result_files_read": extraction.n_files_read,
            "status_counts": table.status_counts(),
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
        "partition": partition_counts(table.prompts),
        "release_checks": {
            "paper_table": load_paper_table(cfg),
            "expected": cfg.expected.model_dump(mode="json") if cfg.expected else None,
        },
        "schema_version": SCHEMA_VERSION,
        "scoring": {
            "aggregation": "prompt-macro",
            "excluded_public_component": EXCLUDED_PUBLIC_COMPONENT,
            # ≤ 15 significant digits: the JSON number reads back as the same decimal
            "min_ranking_coverage": float(cfg.scoring.min_ranking_coverage),
            "missing_policy_default": default,
            "missing_policies": policies,
            "missing_policy_exceptions": sorted(m for m, p in policies.items() if p != default),
            "overall_10_components": list(COMPONENTS),
            "overall_9_components": list(OVERALL_9_COMPONENTS),
            "primary_metric": "overall_9",
            "public_rounding_decimals": cfg.scoring.rounding_decimals,
            "rounding": "public = raw mean × 100 / 3, rounded half-up on the exact value",
            "scale_public": list(SCALE_PUBLIC),
            "scale_raw": list(SCALE_RAW),
            "source": os.path.basename(cfg.result_path),
        },
        "software": {
            "python": ".".join(platform.python_version_tuple()[:2]),
            "searchgen_nb": __version__,
            "pipeline_commit": _git_commit(Path(project or project_root())),
        },
        "source_commit": _git_commit(Path(toolgen)) if toolgen else None,
        "config": cfg.public_dict(),
    }
