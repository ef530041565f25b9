"""Release configuration: load, validate, resolve paths from the config's folder (data
contract, § Release config). The YAML is also every notebook's papermill parameters file; its
optional key ``release_config`` holds the file's own path from the project root."""

from __future__ import annotations

import os
import re
import string
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from searchgen_nb.constants import (
    DEFAULT_GENERATION_GLOB,
    DEFAULT_RESULT_PATH,
    PARTITION_KEYS,
    TOOLGEN_EXTRACTOR,
)
from searchgen_nb.errors import ConfigError
from searchgen_nb.files import CONFIG_MAX, read_bytes
from searchgen_nb.untrusted import ConfigLoader, excerpt, hidden_char, js_reserved, strings, twins

_VARIABLE = re.compile(r"\$\{(\w+)\}")
_SLICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
Policy = Literal["zero_fill", "exclude"]


def _decimal(value: object, wanted: str) -> Decimal:
    """A config number as the decimal the user wrote (a float as its shortest repr)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise ValueError(f"must be {wanted}, got {excerpt(value)}")
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def exact_decimal(value: object) -> Decimal:
    """A number in [0, 1] as the exact decimal written, ≤ 15 significant digits so the
    manifest's JSON number reads back the same (data contract, § Release config)."""
    d = _decimal(value, "a number between 0 and 1")
    if not d.is_finite():
        raise ValueError(f"must be a finite number, got {value}")
    if not 0 <= d <= 1:
        raise ValueError(f"must be between 0 and 1, got {value}")
    if len(d.normalize().as_tuple().digits) > 15:
        raise ValueError(f"has more than 15 significant digits: {value}")
    return d


def _confidence(v: object) -> Decimal:
    if not 0 < (d := exact_decimal(v)) < 1:
        raise ValueError(f"must be strictly between 0 and 1, got {v}")
    return d


def _width(v: object) -> Decimal:
    d = _decimal(v, "a number of public points (0–100)")
    if not d.is_finite() or not 0 <= d <= 100:
        raise ValueError(f"must be between 0 and 100 public points, got {v}")
    return d


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ModelConfig(_Strict):
    """One configured model (``models``)."""

    display_name: str = Field(min_length=1)
    type: Literal["Open", "Commercial"]
    source_id: str = Field(min_length=1)
    lane: str = "none"
    missing_policy: Policy | None = None
    pending: bool = False  # results not in yet: shown as pending, never ranked
    generator_name: str | None = None  # what result files may say besides source_id, model_id


class ScoringConfig(_Strict):
    """``scoring``; the coverage is compared exactly (data contract, § Coverage and ranking)."""

    missing_policy_default: Policy = "zero_fill"
    min_ranking_coverage: Annotated[Decimal, BeforeValidator(exact_decimal)] = Decimal("0.9")
    rounding_decimals: int = Field(default=1, ge=0, le=6)


class ExpectedConfig(_Strict):
    """``expected``: checked by the release gate (data contract, § The release gate)."""

    n_prompts: int | None = Field(default=None, ge=0)
    partition: dict[Literal[PARTITION_KEYS], int] | None = None  # type: ignore[valid-type]
    n_scored: dict[str, int] | None = None
    #: pairs the previous release scored that this one knowingly does not: model → sample_ids
    lost_results: dict[str, list[str]] | None = None


class UncertaintyConfig(_Strict):
    """``uncertainty`` (data contract, § Uncertainty: the stratified prompt bootstrap);
    ``low_confidence_width`` (public points) marks wide cells in the book."""

    n_bootstrap: int = Field(default=10_000, ge=0, le=100_000)  # capped: replicates are kept
    seed: int = Field(default=0, ge=0, le=2**63 - 1)
    confidence: Annotated[Decimal, BeforeValidator(_confidence)] = Decimal("0.95")
    low_confidence_width: Annotated[Decimal, BeforeValidator(_width)] = Decimal("20")

    @property
    def alpha(self) -> Fraction:
        return 1 - Fraction(self.confidence)


#: Prompt fields a slice can select on: the record fields that hold a string or a list.
SLICE_FIELDS = (
    "subset",
    "eval_slices",
    "domains",
    "failure_modes",
    "difficulty",
    "language",
    "generation_task_type",
)


class EvidenceConfig(_Strict):
    """``evidence`` (data contract, § Prompt evidence and thumbnails)."""

    thumbnails: bool = True
    image_base_url: str | None = Field(
        default=None, pattern=r"^https?://[^\s\"'<>]+/$", max_length=1024
    )


class SliceConfig(_Strict):
    """One named evaluation slice (data contract, § Named evaluation slices)."""

    field: Literal[SLICE_FIELDS] = "subset"  # type: ignore[valid-type]
    include: list[str] = Field(default_factory=list)
    match: Literal["any", "all"] = "any"
    expected_rows: int | None = Field(default=None, ge=0)


class ReleaseConfig(_Strict):
    """A release config; ``config_path`` is the YAML file, which paths are relative to."""

    benchmark: str = Field(min_length=1)
    dataset: str
    results_root: str
    result_path: str = DEFAULT_RESULT_PATH
    #: bounded: each pattern is tried on every file name of every pair's folder
    generation_glob: list[Annotated[str, Field(max_length=256)]] = Field(
        default_factory=lambda: list(DEFAULT_GENERATION_GLOB), max_length=64
    )
    models: dict[str, ModelConfig] = Field(min_length=1)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    extractor: str | None = None
    paper_table: str | None = None
    expected: ExpectedConfig | None = None
    slices: dict[str, SliceConfig] | None = None
    uncertainty: UncertaintyConfig = Field(default_factory=UncertaintyConfig)
    evidence: EvidenceConfig = Field(default_factory=EvidenceConfig)
    previous_release: str | None = Field(default=None, min_length=1)
    data_origin: Literal["release", "synthetic-demo"] = "release"
    release_config: str | None = None
    config_path: str = ""  # filled in by load_config, never from the YAML

    @field_validator("result_path")
    @classmethod
    def _template_fields(cls, v: str) -> str:
        allowed = {"release_row", "sample_id", "lane", "source_id"}
        for _, name, spec, conversion in string.Formatter().parse(v):
            if name is not None and name not in allowed:
                known = ", ".join(sorted(allowed))
                raise ValueError(f"unknown field {{{excerpt(name, 40)}}} (allowed: {known})")
            if name is not None and (spec or conversion):
                raise ValueError(f"field {{{name}}} takes no format spec or conversion")
        return v

    @field_validator("slices")
    @classmethod
    def _slice_names(cls, v: dict | None) -> dict | None:
        if v is not None and not v:
            raise ValueError("names no slice (leave the block out for one slice of every prompt)")
        for name in v or ():
            if not _SLICE_NAME.fullmatch(name):
                raise ValueError(
                    f"slice name {excerpt(name, 40)!r}: letters, digits, '_', '.', "
                    "'-' (at most 64, first a letter or digit)"
                )
        return v

    @field_validator("extractor")
    @classmethod
    def _module_function(cls, v: str | None) -> str | None:
        if v is not None and (v.count(":") != 1 or not all(v.split(":"))):
            raise ValueError("must be 'module:function'")
        return v

    def resolve(self, rel: str) -> Path:
        """A config path made absolute against the config's folder (never the cwd), ``${VAR}``
        taken from the environment (any other ``$`` is a character of the path)."""
        if missing := sorted({v for v in _VARIABLE.findall(rel) if v not in os.environ}):
            raise ConfigError(
                f"config {self.config_path}: path {rel!r} uses "
                f"${{{', '.join(missing)}}}, which is not set in the environment"
            )
        expanded = _VARIABLE.sub(lambda m: os.environ[m.group(1)], rel)
        return Path(os.path.realpath(Path(self.config_path).parent / expanded))  # loops: no crash

    dataset_path = property(lambda self: self.resolve(self.dataset))
    results_root_path = property(lambda self: self.resolve(self.results_root))
    previous_release_path = property(  # min_length=1: None or a path
        lambda self: self.previous_release and self.resolve(self.previous_release)
    )
    paper_table_path = property(
        lambda self: self.resolve(self.paper_table) if self.paper_table else None
    )

    def policy(self, model_id: str) -> str:
        return self.models[model_id].missing_policy or self.scoring.missing_policy_default

    model_ids = property(lambda self: list(self.models))  # config order: the order of ties

    def extractor_spec(self) -> str | None:
        """``TOOLGEN_ROOT`` set wins (data contract, § Release config), then the config's."""
        return TOOLGEN_EXTRACTOR if os.environ.get("TOOLGEN_ROOT") else self.extractor

    def public_dict(self) -> dict:
        """The config as recorded in the manifest: paths as written, no absolute paths."""
        d = self.model_dump(mode="json", exclude={"config_path", "release_config"})
        d["scoring"]["min_ranking_coverage"] = float(self.scoring.min_ranking_coverage)
        for key in ("confidence", "low_confidence_width"):
            d["uncertainty"][key] = float(getattr(self.uncertainty, key))
        d["models"] = {m: {**v, "missing_policy": self.policy(m)} for m, v in d["models"].items()}
        return d


def _string_problems(raw: dict, models: dict) -> list[str]:
    """Strings (keys too) that do not show as themselves on one line; model ids and slices'
    values: any invisible character (:func:`hidden_char`)."""
    problems = []
    strict = {f"key {excerpt(m, 40)} of models" for m in models if isinstance(m, str)}
    for where, s in strings(raw):
        selects = where.startswith("slices.") and ".include[" in where
        bad = hidden_char(s, strict=where in strict or selects)
        if bad is not None:
            problems.append(f"`{where}`: {excerpt(s, 60)} holds {bad}")
    return problems


def _reserved_names(raw: dict, models: dict) -> list[str]:
    """Model ids, display names and slice names the book cannot show (:func:`js_reserved`)."""
    slices = raw.get("slices") if isinstance(raw.get("slices"), dict) else {}
    named = [(f"models.{m}", m) for m in models]
    named += [
        (f"models.{excerpt(m, 40)}.display_name", v.get("display_name"))
        for m, v in models.items()
        if isinstance(v, dict)
    ]
    named += [(f"slices.{n}", n) for n in slices]
    return [
        f"`{where}`: {why}" for where, s in named if isinstance(s, str) and (why := js_reserved(s))
    ]


def _twin_problems(models: dict) -> list[str]:
    """Model ids, or display names, that look the same (:func:`twins`)."""
    ids = [m for m in models if isinstance(m, str)]
    names = [
        v["display_name"]
        for v in models.values()
        if isinstance(v, dict) and isinstance(v.get("display_name"), str)
    ]

    def ascii_(s: str) -> str:  # each twin written so that their difference shows
        return excerpt(s.encode("ascii", "backslashreplace").decode("ascii"), 60)

    return [
        f"`models`: {what} {ascii_(a)} and {ascii_(b)} look the same (they differ only by "
        "invisible characters or Unicode normalisation, or not at all)"
        for what, values in (("model ids", ids), ("display names", names))
        for a, b in twins(values)
    ]


def load_config(path: str | os.PathLike) -> ReleaseConfig:
    """Read and validate a release config; :class:`ConfigError` names the file and every
    offending key (data contract, § Release config)."""
    p = Path(os.path.realpath(path))  # realpath: a loop of links is no crash
    try:
        data = read_bytes(p, CONFIG_MAX)
    except FileNotFoundError:
        raise ConfigError(f"config: file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"config {path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        where = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
        raise ConfigError(f"config {path}: line {line}: not UTF-8 text ({where})") from None
    bad = f"config {path}: not a valid release config YAML"
    try:
        raw = yaml.load(text, Loader=ConfigLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(f"{bad}: {excerpt(str(exc), 400, newlines=True)}") from None
    except RecursionError:
        raise ConfigError(f"{bad}: nested too deeply") from None
    except (ValueError, ArithmeticError) as exc:
        raise ConfigError(f"{bad}: {excerpt(str(exc), 200)}") from None
    return config_from_dict(raw, p)


def _problem(e: dict) -> str:
    """One pydantic error as the key and what is wrong with it."""
    loc = ".".join(str(p) for p in e["loc"])
    if e["type"] == "missing":
        return f"`{loc}`: required key is missing"
    msg = "unknown key" if e["type"] == "extra_forbidden" else e["msg"]
    return f"`{loc}`: {msg} (got {excerpt(e.get('input'))})"


def config_from_dict(raw: object, config_path: Path) -> ReleaseConfig:
    """Validate an already-parsed config mapping; ``config_path`` anchors relative paths."""
    where = f"config {config_path}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: top level must be a mapping, got {type(raw).__name__}")
    models = raw.get("models") if isinstance(raw.get("models"), dict) else {}
    problems = _twin_problems(models) + _string_problems(raw, models) + _reserved_names(raw, models)
    if problems:
        raise ConfigError(f"{where}: " + "; ".join(problems[:5]))
    try:
        cfg = ReleaseConfig.model_validate({**raw, "config_path": str(config_path)})
    except ValidationError as exc:
        raise ConfigError(f"{where}: " + "; ".join(map(_problem, exc.errors()))) from None
    for key in ("n_scored", "lost_results"):
        if unknown := sorted(set(getattr(cfg.expected, key, None) or ()) - set(cfg.models)):
            names = ", ".join(excerpt(m, 60) for m in unknown[:5])
            raise ConfigError(f"{where}: `expected.{key}` names unknown model(s): {names}")
    if problem := _lost_results_problem(cfg):
        raise ConfigError(f"{where}: `expected.lost_results`: {problem}")
    return cfg


def _lost_results_problem(cfg: ReleaseConfig) -> str | None:
    """What is wrong with the acknowledged lost results: given without ``previous_release``
    (there is nothing to lose against), or one pair named twice."""
    lost = cfg.expected and cfg.expected.lost_results
    if lost and not cfg.previous_release:
        return (
            "acknowledges results lost since the previous release, but `previous_release` is"
            " not set"
        )
    for m, sample_ids in (lost or {}).items():
        if twice := sorted(s for s, n in Counter(sample_ids).items() if n > 1):
            return f"model {excerpt(m, 60)} names sample_id {excerpt(twice[0], 60)} twice"
    return None


def project_root() -> Path:
    """The folder holding ``searchgen_nb/``: to find things, never to write (:func:`work_root`)."""
    return Path(__file__).resolve().parent.parent


#: Set by ``searchgen-nb release`` for its notebooks: the root of relative notebook parameters
#: (``release_config``, ``staging``), and the project whose git commit is ``pipeline_commit``.
WORK_ROOT_ENV, PROJECT_ENV = "SEARCHGEN_ROOT", "SEARCHGEN_PROJECT"


def work_root() -> Path:
    """Where relative notebook parameters point: ``$SEARCHGEN_ROOT``, else the project root."""
    env = os.environ.get(WORK_ROOT_ENV)
    return Path(env) if env else project_root()


def find_config(release_config: str | os.PathLike) -> Path:
    """A config given as absolute, cwd-, work-root- or project-root-relative path."""
    p = Path(release_config)
    if p.is_absolute() or p.exists():
        return p.resolve()
    for base in dict.fromkeys((work_root(), project_root())):
        if (base / p).exists():
            return (base / p).resolve()
    raise ConfigError(
        f"config: file not found: {release_config} (looked in the cwd and in {work_root()})"
    )
