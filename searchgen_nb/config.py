"""Release configuration (SPEC §1.1): load, validate, resolve paths from the config's folder.

The same YAML file is the papermill parameters file of every notebook
(``papermill notebooks/NN.ipynb out.ipynb -f releases/demo.yml``); its optional key
``release_config`` holds the file's own path from the project root so that a notebook run
that way can find it (papermill injects the keys, not the file name).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from searchgen_nb.constants import (
    DEFAULT_GENERATION_GLOB,
    DEFAULT_RESULT_PATH,
    PARTITION_KEYS,
)
from searchgen_nb.errors import ConfigError

_STRICT = ConfigDict(extra="forbid", strict=True)


class ModelConfig(BaseModel):
    """One configured model (SPEC §1.1 ``models``)."""

    model_config = _STRICT
    display_name: str = Field(min_length=1)
    type: Literal["Open", "Commercial"]
    source_id: str = Field(min_length=1)
    lane: str = "none"
    missing_policy: Literal["zero_fill", "exclude"] | None = None


class ScoringConfig(BaseModel):
    """``scoring`` block (SPEC §1.1)."""

    model_config = _STRICT
    missing_policy_default: Literal["zero_fill", "exclude"] = "zero_fill"
    min_ranking_coverage: float = Field(default=0.9, ge=0, le=1)
    rounding_decimals: int = Field(default=1, ge=0, le=6)

    @field_validator("min_ranking_coverage", mode="before")
    @classmethod
    def _int_ok(cls, v):
        return float(v) if isinstance(v, int) and not isinstance(v, bool) else v


class ExpectedConfig(BaseModel):
    """``expected`` block: release expectations checked by the release gate (SPEC §1.1, §7)."""

    model_config = _STRICT
    n_prompts: int | None = Field(default=None, ge=0)
    partition: dict[Literal["NoSearch", "SearchIntensive", "VisualSearch", "TextualSearch"], int] | None = None
    n_scored: dict[str, int] | None = None


class ReleaseConfig(BaseModel):
    """A release config with every path resolved to an absolute path.

    ``config_path`` is the YAML file; ``project_root`` the repository the book lives in.
    Raised errors: :class:`ConfigError` naming the file and the key.
    """

    model_config = _STRICT
    benchmark: str = Field(min_length=1)
    dataset: str
    results_root: str
    result_path: str = DEFAULT_RESULT_PATH
    generation_glob: list[str] = Field(default_factory=lambda: list(DEFAULT_GENERATION_GLOB))
    models: dict[str, ModelConfig] = Field(min_length=1)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    extractor: str | None = None
    paper_table: str | None = None
    expected: ExpectedConfig | None = None
    data_origin: Literal["release", "synthetic-demo"] = "release"
    release_config: str | None = None
    # Filled in by load_config, never from the YAML.
    config_path: str = ""

    @field_validator("result_path")
    @classmethod
    def _template_fields(cls, v: str) -> str:
        import string

        allowed = {"release_row", "sample_id", "lane", "source_id"}
        for _, field, _, _ in string.Formatter().parse(v):
            if field is not None and field not in allowed:
                raise ValueError(f"unknown field {{{field}}} (allowed: {', '.join(sorted(allowed))})")
        return v

    @field_validator("extractor")
    @classmethod
    def _module_function(cls, v: str | None) -> str | None:
        if v is not None and (v.count(":") != 1 or not all(v.split(":"))):
            raise ValueError("must be 'module:function'")
        return v

    # ---- derived values -------------------------------------------------------------
    @property
    def base_dir(self) -> Path:
        return Path(self.config_path).parent

    def resolve(self, rel: str) -> Path:
        """A config path made absolute against the config file's folder (never the cwd).

        ``${VAR}`` is taken from the environment (e.g. ``${TOOLGEN_ROOT}/final_20k_release_v2``);
        raises :class:`ConfigError` naming the variable when it is not set.
        """
        expanded = os.path.expandvars(rel)
        if "$" in expanded:
            missing = sorted(set(re.findall(r"\$\{?(\w+)", expanded)))
            raise ConfigError(f"config {self.config_path}: path {rel!r} uses ${{{', '.join(missing)}}}, which is not set in the environment")
        return (self.base_dir / expanded).resolve()

    @property
    def dataset_path(self) -> Path:
        return self.resolve(self.dataset)

    @property
    def results_root_path(self) -> Path:
        return self.resolve(self.results_root)

    @property
    def paper_table_path(self) -> Path | None:
        return self.resolve(self.paper_table) if self.paper_table else None

    def policy(self, model_id: str) -> str:
        """The missing policy of a model: its own, else ``scoring.missing_policy_default``."""
        return self.models[model_id].missing_policy or self.scoring.missing_policy_default

    @property
    def model_ids(self) -> list[str]:
        """Model ids in config order (the display order for ties)."""
        return list(self.models)

    def extractor_spec(self) -> str | None:
        """The extractor to use: ``TOOLGEN_ROOT`` wins (SPEC §1.1), then the config, else built-in."""
        from searchgen_nb.constants import TOOLGEN_EXTRACTOR

        if os.environ.get("TOOLGEN_ROOT"):
            return TOOLGEN_EXTRACTOR
        return self.extractor

    def public_dict(self) -> dict:
        """The config as recorded in the manifest: paths as written, no absolute paths."""
        d = self.model_dump(mode="json", exclude={"config_path", "release_config"})
        d["models"] = {m: {**v, "missing_policy": self.policy(m)} for m, v in d["models"].items()}
        return d


def _format_pydantic(err: ValidationError) -> list[str]:
    out = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"])
        msg = e["msg"]
        if e["type"] == "missing":
            msg = "required key is missing"
        elif e["type"] == "extra_forbidden":
            msg = "unknown key"
        out.append(f"`{loc}`: {msg} (got {e.get('input')!r})" if e["type"] != "missing" else f"`{loc}`: {msg}")
    return out


def load_config(path: str | os.PathLike) -> ReleaseConfig:
    """Read and validate a release config (SPEC §1.1).

    Paths in the file are relative to the file's folder. Raises :class:`ConfigError` that
    names the file and every offending key (missing, wrong type, unknown policy, …).
    """
    p = Path(path).resolve()
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config: file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {path}: not valid YAML: {exc}") from None
    return config_from_dict(raw, p)


def config_from_dict(raw: object, config_path: Path) -> ReleaseConfig:
    """Validate an already-parsed config mapping; ``config_path`` anchors relative paths."""
    if not isinstance(raw, dict):
        raise ConfigError(f"config {config_path}: top level must be a mapping, got {type(raw).__name__}")
    try:
        cfg = ReleaseConfig.model_validate({**raw, "config_path": str(config_path)})
    except ValidationError as exc:
        lines = _format_pydantic(exc)
        raise ConfigError(f"config {config_path}: " + "; ".join(lines)) from None
    if cfg.expected and cfg.expected.n_scored:
        unknown = sorted(set(cfg.expected.n_scored) - set(cfg.models))
        if unknown:
            raise ConfigError(f"config {config_path}: `expected.n_scored` names unknown model(s): {', '.join(unknown)}")
    return cfg


def project_root() -> Path:
    """The repository root (the folder holding ``searchgen_nb/``), independent of the cwd."""
    return Path(__file__).resolve().parent.parent


def find_config(release_config: str | os.PathLike) -> Path:
    """Locate a config given as absolute, cwd-relative or project-root-relative path."""
    p = Path(release_config)
    if p.is_absolute() or p.exists():
        return p.resolve()
    q = project_root() / p
    if q.exists():
        return q.resolve()
    raise ConfigError(f"config: file not found: {release_config} (looked in the cwd and in {project_root()})")


__all__ = ["ReleaseConfig", "ModelConfig", "load_config", "config_from_dict", "find_config", "project_root", "PARTITION_KEYS"]
