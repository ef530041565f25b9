"""Release configuration (SPEC §1.1): load, validate, resolve paths from the config's folder.

The same YAML file is the papermill parameters file of every notebook
(``papermill notebooks/NN.ipynb out.ipynb -f releases/demo.yml``); its optional key
``release_config`` holds the file's own path from the project root so that a notebook run
that way can find it (papermill injects the keys, not the file name).
"""

from __future__ import annotations

import os
import re
from decimal import Decimal
from fractions import Fraction
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
from searchgen_nb.files import CONFIG_MAX, read_bytes
from searchgen_nb.untrusted import excerpt, hidden_char, is_surrogate, strings, twins

_STRICT = ConfigDict(extra="forbid", strict=True)
#: A variable in a config path: ``${NAME}`` (nothing else).
_VARIABLE = re.compile(r"\$\{(\w+)\}")


class ModelConfig(BaseModel):
    """One configured model (SPEC §1.1 ``models``)."""

    model_config = _STRICT
    display_name: str = Field(min_length=1)
    type: Literal["Open", "Commercial"]
    source_id: str = Field(min_length=1)
    lane: str = "none"
    missing_policy: Literal["zero_fill", "exclude"] | None = None
    #: True = results are not in yet on purpose: listed and shown as pending, never ranked,
    #: and no error when the model has no result file at all (a wrong source_id otherwise).
    pending: bool = False
    #: What the result files' own ``generator_name`` may say besides source_id and model_id.
    generator_name: str | None = None


class ScoringConfig(BaseModel):
    """``scoring`` block (SPEC §1.1)."""

    model_config = _STRICT
    missing_policy_default: Literal["zero_fill", "exclude"] = "zero_fill"
    #: The decimal the user wrote (YAML floats are read as Decimal): 0.9 is nine tenths,
    #: compared exactly with n_scored / n_total (SPEC §5–6).
    min_ranking_coverage: Decimal = Field(default=Decimal("0.9"))
    rounding_decimals: int = Field(default=1, ge=0, le=6)

    @field_validator("min_ranking_coverage", mode="before")
    @classmethod
    def _exact_decimal(cls, v):
        return exact_decimal(v)


class ExpectedConfig(BaseModel):
    """``expected`` block: release expectations checked by the release gate (SPEC §1.1, §7)."""

    model_config = _STRICT
    n_prompts: int | None = Field(default=None, ge=0)
    partition: dict[Literal["NoSearch", "SearchIntensive", "VisualSearch", "TextualSearch"], int] | None = None
    n_scored: dict[str, int] | None = None


class UncertaintyConfig(BaseModel):
    """``uncertainty`` block: the stratified prompt bootstrap (SPEC §8).

    ``n_bootstrap`` replicates B (0 turns the section off), ``seed`` of
    ``numpy.random.default_rng``, ``confidence`` c of every interval as the decimal written
    (0.95 is nineteen twentieths: α = 1 − c is compared exactly with adjusted p-values), and
    ``low_confidence_width``: public 0–100 points; the book marks a domain or failure-mode
    cell whose Overall-9 interval is wider as low-confidence (presentation only).
    """

    model_config = _STRICT
    #: capped: the replicate values of every group are kept for the percentiles
    #: (groups × B × models × 16 bytes)
    n_bootstrap: int = Field(default=10_000, ge=0, le=100_000)
    seed: int = Field(default=0, ge=0, le=2**63 - 1)
    confidence: Decimal = Field(default=Decimal("0.95"))
    low_confidence_width: Decimal = Field(default=Decimal("20"))

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v):
        d = exact_decimal(v)
        if not 0 < d < 1:
            raise ValueError(f"must be strictly between 0 and 1, got {v}")
        return d

    @field_validator("low_confidence_width", mode="before")
    @classmethod
    def _width(cls, v):
        if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
            raise ValueError(f"must be a number of public points (0–100), got {excerpt(v)}")
        d = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
        if not d.is_finite() or not 0 <= d <= 100:
            raise ValueError(f"must be between 0 and 100 public points, got {v}")
        return d

    @property
    def alpha(self) -> Fraction:
        """α = 1 − confidence, exactly."""
        return 1 - Fraction(self.confidence)


#: Prompt fields a slice can select on: the record fields that hold a string or a list.
SLICE_FIELDS = ("subset", "eval_slices", "domains", "failure_modes", "difficulty", "language", "generation_task_type")


class SliceConfig(BaseModel):
    """One named evaluation slice (SPEC §9): the prompts whose metadata ``field`` (a string or
    a list of strings) holds ``any`` (or ``all``) of the ``include`` values; an empty
    ``include`` selects every prompt. ``expected_rows``, when given, is checked by the gate."""

    model_config = _STRICT
    field: Literal[SLICE_FIELDS] = "subset"  # type: ignore[valid-type]
    include: list[str] = Field(default_factory=list)
    match: Literal["any", "all"] = "any"
    expected_rows: int | None = Field(default=None, ge=0)


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
    slices: dict[str, SliceConfig] | None = None
    uncertainty: UncertaintyConfig = Field(default_factory=UncertaintyConfig)
    #: Folder of an earlier release's published data (``public/data``); ``changes.json`` and
    #: the book's "What changed" page compare with it (SPEC §10).
    previous_release: str | None = Field(default=None, min_length=1)
    data_origin: Literal["release", "synthetic-demo"] = "release"
    release_config: str | None = None
    # Filled in by load_config, never from the YAML.
    config_path: str = ""

    @field_validator("result_path")
    @classmethod
    def _template_fields(cls, v: str) -> str:
        import string

        allowed = {"release_row", "sample_id", "lane", "source_id"}
        for _, field, spec, conversion in string.Formatter().parse(v):
            if field is not None and field not in allowed:
                raise ValueError(f"unknown field {{{excerpt(field, 40)}}} (allowed: {', '.join(sorted(allowed))})")
            if field is not None and (spec or conversion):
                raise ValueError(f"field {{{field}}} takes no format spec or conversion")
        return v

    @field_validator("slices")
    @classmethod
    def _slice_names(cls, v: dict | None) -> dict | None:
        if v is not None:
            if not v:
                raise ValueError("names no slice (leave the block out for one slice of every prompt)")
            for name in v:
                if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
                    raise ValueError(f"slice name {excerpt(name, 40)!r}: letters, digits, '_', '.', '-' (at most 64, first a letter or digit)")
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
        any other ``$`` is a character of the path (``price$.jsonl``). Raises
        :class:`ConfigError` naming the variable when it is not set.
        """
        missing = sorted({v for v in _VARIABLE.findall(rel) if v not in os.environ})
        if missing:
            raise ConfigError(f"config {self.config_path}: path {rel!r} uses ${{{', '.join(missing)}}}, which is not set in the environment")
        expanded = _VARIABLE.sub(lambda m: os.environ[m.group(1)], rel)
        return Path(os.path.realpath(self.base_dir / expanded))  # a loop of links: no crash

    @property
    def dataset_path(self) -> Path:
        return self.resolve(self.dataset)

    @property
    def results_root_path(self) -> Path:
        return self.resolve(self.results_root)

    @property
    def previous_release_path(self) -> Path | None:
        return None if self.previous_release is None else self.resolve(self.previous_release)

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
        d["scoring"]["min_ranking_coverage"] = float(self.scoring.min_ranking_coverage)  # ≤ 15 digits: reads back exactly
        d["uncertainty"]["confidence"] = float(self.uncertainty.confidence)
        d["uncertainty"]["low_confidence_width"] = float(self.uncertainty.low_confidence_width)
        d["models"] = {m: {**v, "missing_policy": self.policy(m)} for m, v in d["models"].items()}
        return d


def exact_decimal(value: object) -> Decimal:
    """A config number as the exact decimal the user wrote (SPEC §1.1; "0.9 is nine tenths").

    YAML floats arrive as :class:`Decimal` (see :class:`ReleaseLoader`); a Python float given
    by a caller is read as its shortest repr (``0.9`` → ``Decimal('0.9')``), never as its
    binary value. Raises ``ValueError`` unless the value is finite, within [0, 1] and has at
    most 15 significant digits (so that the manifest's JSON number reads back as the same
    decimal).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise ValueError(f"must be a number between 0 and 1, got {excerpt(value)}")
    d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not d.is_finite():
        raise ValueError(f"must be a finite number, got {value}")
    if not 0 <= d <= 1:
        raise ValueError(f"must be between 0 and 1, got {value}")
    if len(d.normalize().as_tuple().digits) > 15:
        raise ValueError(f"has more than 15 significant digits: {value}")
    return d


def _format_pydantic(err: ValidationError) -> list[str]:
    out = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"])
        msg = e["msg"]
        if e["type"] == "missing":
            out.append(f"`{loc}`: required key is missing")
            continue
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        out.append(f"`{loc}`: {msg} (got {excerpt(e.get('input'))})")
    return out


class ReleaseLoader(yaml.SafeLoader):
    """YAML loader for release configs.

    * floats are read as :class:`Decimal` — the number the user wrote, not its binary double;
    * a mapping with a duplicate key is refused (naming the key and both lines) instead of
      the last one silently winning;
    * anchors and aliases are refused: a release config has no use for them, and an alias
      bomb cannot expand (neither in memory nor in an error message).
    Raises :class:`yaml.MarkedYAMLError` subclasses (their message names the line).
    """

    def compose_node(self, parent, index):  # noqa: D102 - see class docstring
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(
                None, None, "anchors and aliases (& and *) are not allowed in a release config", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):  # noqa: D102 - see class docstring
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: let PyYAML report it
                    continue
                if first is not None:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {excerpt(key)!s} (first on line {first.line + 1})", key_node.start_mark
                    )
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def _construct_decimal(loader: ReleaseLoader, node) -> Decimal:
    text = loader.construct_scalar(node).replace("_", "").strip().lower()
    if text in (".nan", ".inf", "+.inf", "-.inf") or ":" in text:
        return Decimal(repr(yaml.SafeLoader.construct_yaml_float(loader, node)))
    return Decimal(text)


ReleaseLoader.add_constructor("tag:yaml.org,2002:float", _construct_decimal)


def _string_problems(raw: object) -> list[str]:
    """Every string of a loaded config (keys too) that does not show as itself on one line
    (:func:`hidden_char`: a control character, line break, tab, lone surrogate or
    bidirectional control); model ids and the values slices select: any invisible character."""
    problems = []
    models = raw.get("models") if isinstance(raw.get("models"), dict) else {}
    strict = {f"key {excerpt(m, 40)} of models" for m in models if isinstance(m, str)}
    for where, s in strings(raw):
        selects = where.startswith("slices.") and ".include[" in where
        bad = hidden_char(s, strict=where in strict or selects)
        if bad is not None:
            problems.append(f"`{where}`: {excerpt(s, 60)} holds {bad}")
    return problems


def _twin_problems(raw: dict) -> list[str]:
    """Model ids, or display names, of a loaded config that look the same (:func:`twins`: they
    differ only by invisible characters or Unicode normalisation, or not at all)."""
    models = raw.get("models") if isinstance(raw.get("models"), dict) else {}
    ids = [m for m in models if isinstance(m, str)]
    names = [v["display_name"] for v in models.values()
             if isinstance(v, dict) and isinstance(v.get("display_name"), str)]

    def ascii_(s: str) -> str:  # each twin written so that their difference shows
        return excerpt(s.encode("ascii", "backslashreplace").decode("ascii"), 60)

    return [f"`models`: {what} {ascii_(a)} and {ascii_(b)} look the same (they differ only by "
            "invisible characters or Unicode normalisation, or not at all)"
            for what, values in (("model ids", ids), ("display names", names))
            for a, b in twins(values)]


def load_config(path: str | os.PathLike) -> ReleaseConfig:
    """Read and validate a release config (SPEC §1.1).

    Paths in the file are relative to the file's folder. Raises :class:`ConfigError` that
    names the file and every offending key (missing, wrong type, unknown policy, duplicate
    key, alias, non-UTF-8 byte, control character, …).
    """
    p = Path(os.path.realpath(path))  # realpath: a loop of links is no crash
    try:
        data = read_bytes(p, CONFIG_MAX)  # a regular file, bounded (searchgen_nb.files)
    except FileNotFoundError:
        raise ConfigError(f"config: file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"config {path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"config {path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    try:
        raw = yaml.load(text, Loader=ReleaseLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {path}: not a valid release config YAML: {excerpt(str(exc), 400, newlines=True)}") from None
    except (ValueError, ArithmeticError, RecursionError) as exc:
        raise ConfigError(f"config {path}: not a valid release config YAML: {excerpt(str(exc), 200)}") from None
    return config_from_dict(raw, p)


def config_from_dict(raw: object, config_path: Path) -> ReleaseConfig:
    """Validate an already-parsed config mapping; ``config_path`` anchors relative paths."""
    if not isinstance(raw, dict):
        raise ConfigError(f"config {config_path}: top level must be a mapping, got {type(raw).__name__}")
    problems = _twin_problems(raw) + _string_problems(raw)
    if problems:
        raise ConfigError(f"config {config_path}: " + "; ".join(problems[:5]))
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
    """The repository root (the folder holding ``searchgen_nb/``), independent of the cwd.

    For an installed (non-editable) package this is ``site-packages``: use it to *find*
    things, never to write; see :func:`work_root`.
    """
    return Path(__file__).resolve().parent.parent


#: Set by ``searchgen-nb release`` for its notebooks: the output root that relative notebook
#: parameters (``release_config``, ``staging``) are taken from.
WORK_ROOT_ENV = "SEARCHGEN_ROOT"

#: Set by ``searchgen-nb release`` for its notebooks: the project folder the notebooks and book
#: sources come from (``--project``); the manifest's ``pipeline_commit`` is its git commit.
PROJECT_ENV = "SEARCHGEN_PROJECT"


def work_root() -> Path:
    """Where relative notebook parameters point: ``$SEARCHGEN_ROOT`` during a release (its
    output root), else the project root. Keeps machine paths out of executed notebooks."""
    env = os.environ.get(WORK_ROOT_ENV)
    return Path(env) if env else project_root()


def find_config(release_config: str | os.PathLike) -> Path:
    """Locate a config given as absolute, cwd-relative, work-root- or project-root-relative path."""
    p = Path(release_config)
    if p.is_absolute() or p.exists():
        return p.resolve()
    for base in dict.fromkeys((work_root(), project_root())):
        q = base / p
        if q.exists():
            return q.resolve()
    raise ConfigError(f"config: file not found: {release_config} (looked in the cwd and in {work_root()})")


__all__ = ["ReleaseConfig", "ModelConfig", "load_config", "config_from_dict", "find_config", "project_root", "PARTITION_KEYS"]
