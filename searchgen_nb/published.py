"""Reading a published (or staged) release folder, strictly: what the book shows, a previous
release, or a folder given to ``searchgen-nb diff`` (data contract, § Changes between releases);
the release gate reads on its own (§ The release gate)."""

import hashlib
import json
import os
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from pathlib import Path
from typing import Any

from searchgen_nb.config import UncertaintyConfig
from searchgen_nb.constants import MANIFEST, OVERALL_BOARD, SCHEMA_VERSION
from searchgen_nb.declaration import BENCHMARK, PARTITION, SLICES, TAGS, Declaration, declared
from searchgen_nb.errors import ConfigError
from searchgen_nb.files import ARTIFACT_MAX, read_bytes, read_lines
from searchgen_nb.records import read_records
from searchgen_nb.schemas import check_document
from searchgen_nb.untrusted import excerpt, no_duplicate_keys, strict_loads

#: Files a previous release's folder must hold.
NEEDED = (
    "manifest.json",
    "prompt_scores.jsonl",
    OVERALL_BOARD,
    *(k.board for k in BENCHMARK.group_kinds if k.source in (PARTITION, TAGS)),
)


class _Object(dict):
    """An object of a release's JSON file: a key it lacks is a :class:`ConfigError` naming the
    file and the key, never a default."""

    __slots__ = ("where",)
    where: str

    def __missing__(self, key: str):
        raise ConfigError(f"{self.where}: no key {shown(key)}, which this version reads")


@dataclass
class Published:
    """A published (or staged) release folder, read lazily and strictly — the one reader of a
    release folder, for the book, ``diff`` and ``previous_release`` (data contract, § Artifacts;
    § Changes between releases): each JSON file read once, within its bound, as strict JSON; a
    key it lacks is never given a default. Each refusal is a :class:`ConfigError` starting
    ``<where>/<file>`` and naming the line or key; ``where`` defaults to the folder.
    ``parsed``: JSON files already read, by name (None: absent)."""

    folder: Path
    where: str = ""
    parsed: dict = field(default_factory=dict)

    @cached_property
    def manifest(self) -> dict:
        return self.document(MANIFEST)

    def document(self, name: str, optional: bool = False):
        """The JSON file ``name`` (:meth:`parse`); None when ``optional`` and absent."""
        if name not in self.parsed:
            absent = optional and not os.path.lexists(self.folder / name)
            self.parsed[name] = None if absent else self.parse(name, self.read(name))
        return self.parsed[name]

    @cached_property
    def records(self) -> list[dict]:
        return read_records(self.folder)

    @cached_property
    def declaration(self) -> Declaration:
        """The manifest's :func:`~searchgen_nb.declaration.declared` declaration (data contract,
        § The declaration of the benchmark)."""
        return declared(self.manifest)

    @cached_property
    def groups(self) -> dict[str, list[dict]]:
        """``{"<kind>:<name>": rows}`` for every group of the declaration's kinds: ``all:All``,
        the strata, the tags, the slices (but the slice of every prompt, which is All again)
        and the breakdowns."""
        out, full = {"all:All": self.document(OVERALL_BOARD)}, self.manifest["output_slice"]
        for kind in self.declaration.group_kinds:
            board = self.document(kind.board, optional=kind.source == SLICES) or {}
            for name, rows in board.items():
                if kind.source == SLICES and name != full:
                    out[kind.uncertainty_prefix + name] = rows["overall"]
                elif kind.source != SLICES and name != "All":
                    out[kind.uncertainty_prefix + name] = rows
        return out

    def fail(self, name: str, why: str) -> ConfigError:
        return ConfigError(f"{self.where or self.folder}/{name}: {why}")

    def read(self, name: str) -> bytes:
        try:
            return read_bytes(self.folder / name, ARTIFACT_MAX)
        except OSError as exc:  # not a regular file, over the bound, a loop of links, …
            raise self.fail(name, f"cannot read: {exc.strerror or exc}") from None

    def parse(self, name: str, data: bytes, line: int | None = None) -> Any:
        """A file's (a line's) strict JSON, its objects :class:`_Object`."""
        at = "" if line is None else f"line {line} "
        where = f"{self.where or self.folder}/{name}" + (f" line {line}" if line else "")

        def made(pairs: list) -> _Object:
            obj = _Object(no_duplicate_keys(pairs))
            obj.where = where
            return obj

        try:
            return strict_loads(data.decode("utf-8"), made)
        except RecursionError:
            raise self.fail(name, f"{at}is not strict JSON (nested too deeply)") from None
        except ValueError as exc:  # not UTF-8 or JSON, NaN, a repeated key, …
            raise self.fail(name, f"{at}is not strict JSON ({excerpt(str(exc), 120)})") from None

    def conform(self, name: str, doc: object, line: int | None = None) -> None:
        """Refuse a document (a line) that does not conform to its published JSON Schema."""
        try:
            problems = [p["message"] for p in check_document(name, doc, line)]
        except RecursionError:
            at = "" if line is None else f" line {line}"
            problems = [f"{name}{at}: nested too deeply to check"]
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise ConfigError(
                f"{self.where or self.folder}/{'; '.join(problems[:3])}{more}: not a release "
                "this version reads"
            )

    def same_kind(self, manifest: object, benchmark: str | None, data_origin: str | None) -> None:
        """Refuse another format, benchmark or data origin by name (before the schema)."""
        if not isinstance(manifest, dict):
            return
        version = manifest.get("schema_version")
        if version != SCHEMA_VERSION:
            why = f"/schema_version is {shown(version)}: this version of searchgen-nb reads "
            raise self.fail("manifest.json", f"{why}releases of schema_version {SCHEMA_VERSION}")
        for key, want in (("benchmark", benchmark), ("data_origin", data_origin)):
            if want is not None and manifest.get(key) != want:
                why = f"/{key} is {shown(manifest.get(key))}, this release's is {shown(want)}"
                raise self.fail("manifest.json", f"{why}: {not_compared(key)}")

    def models_and_settings(self, manifest: dict) -> None:
        """What the schema cannot say: every model of ``model_order`` is described, and
        ``config.uncertainty`` holds settings the paired bootstrap can use."""
        if lacking := [m for m in manifest["model_order"] if m not in manifest["models"]]:
            m = excerpt(lacking[0], 60)
            raise self.fail(
                "manifest.json", f"/model_order names model {m}, which /models does not describe"
            )
        try:
            bootstrap_settings(manifest)
        except (ValueError, TypeError, ArithmeticError) as exc:
            why = f"/config/uncertainty holds no bootstrap settings ({excerpt(str(exc), 160)})"
            raise self.fail("manifest.json", why) from None

    def checked_records(self, manifest: dict) -> tuple[list[dict], str]:
        """The records of ``prompt_scores.jsonl`` (streamed, checked by line) and its sha256."""
        name, models = "prompt_scores.jsonl", manifest["model_order"]
        seen: dict[str, int] = {}
        records, sha = [], hashlib.sha256()
        try:
            for line_no, raw in enumerate(read_lines(self.folder / name), start=1):
                sha.update(raw)
                rec = self.parse(name, raw, line_no)
                self.conform(name, rec, line_no)
                sid = rec["sample_id"]
                if sid in seen:
                    why = f"repeated sample_id {excerpt(sid, 60)} (first on line {seen[sid]})"
                    raise self.fail(name, f"line {line_no}: {why}")
                if lacking := [m for m in models if m not in rec["models"]]:
                    why = f"(sample_id {excerpt(sid, 60)}) has no record of model "
                    raise self.fail(name, f"line {line_no} {why}{excerpt(lacking[0], 60)}")
                seen[sid] = line_no
                records.append(rec)
        except OSError as exc:  # not a regular file, a line over the bound, …
            raise self.fail(name, f"cannot read: {exc.strerror or exc}") from None
        if len(seen) != (n := manifest["dataset"]["n_prompts"]):
            raise self.fail(name, f"{len(seen)} prompts, the manifest says {n}")
        return records, sha.hexdigest()


def check_previous(
    folder: Path, where: str, benchmark: str | None = None, data_origin: str | None = None
) -> Published:
    """The release in ``folder``, read and checked once (data contract, § Changes between
    releases); :class:`ConfigError` naming ``where``, the folder, the file and the line or pointer
    when it is not a release of this schema version, benchmark and data origin."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{where}: {folder} is not a folder")
    missing = ", ".join(n for n in NEEDED if not os.path.lexists(folder / n))
    if missing:
        raise ConfigError(f"{where}: {folder} is not a published release (missing {missing})")
    release, digests = Published(folder, f"{where}: {folder}"), {}
    for name in ("manifest.json", *NEEDED[2:], "leaderboard_by_slice.json"):
        if name in NEEDED or os.path.lexists(folder / name):
            data = release.read(name)
            doc, digests[name] = release.parse(name, data), hashlib.sha256(data).hexdigest()
            if name == "manifest.json":
                release.same_kind(doc, benchmark, data_origin)
            release.conform(name, doc)
            release.parsed[name] = doc  # what was just read and checked: nothing is read twice
    manifest = release.manifest
    release.models_and_settings(manifest)
    release.__dict__["records"], digests["prompt_scores.jsonl"] = release.checked_records(manifest)
    hashes = manifest["artifact_sha256"]
    for name in sorted(set(hashes) - set(digests)):  # hashed but not read above
        if os.path.lexists(folder / name):
            digests[name] = hashlib.sha256(release.read(name)).hexdigest()
    for name in sorted(set(digests) - {"manifest.json"}):  # the manifest holds the others'
        if name not in hashes:
            raise release.fail("manifest.json", f"/artifact_sha256 holds no sha256 of {name}")
        if digests[name] != hashes[name]:
            why = "sha256 differs from the manifest's artifact_sha256 (edited or damaged)"
            raise release.fail(name, why)
    return release


def shown(value: object) -> str:
    return excerpt(json.dumps(value), 80)


def not_compared(key: str) -> str:
    return f"releases of another {key} are not compared"


def bootstrap_settings(manifest: dict) -> UncertaintyConfig:
    """The paired bootstrap's settings: the manifest's ``config.uncertainty`` (defaults where
    absent); ``ValueError``, ``TypeError`` or ``ArithmeticError`` when they are not settings."""
    given = manifest.get("config", {}).get("uncertainty") or {}
    if not isinstance(given, dict):
        raise TypeError(f"expected a mapping, got {type(given).__name__}")
    kept = {k: v for k, v in given.items() if k in ("n_bootstrap", "seed", "confidence")}
    if "confidence" in kept:  # else the config's default
        kept["confidence"] = Decimal(repr(kept["confidence"]))
    return UncertaintyConfig(**kept)
