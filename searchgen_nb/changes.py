"""What changed between two releases (SPEC §10; data contract §14): ``changes.json`` and the
Markdown summary of ``searchgen-nb diff``.

Both releases are read from their published folders (``manifest.json``,
``prompt_scores.jsonl``, the leaderboard files): the pipeline compares the staged release with
the config's ``previous_release``, ``searchgen-nb diff OLD NEW`` any two folders. Figures are
the published ones (public 0–100 scale); differences are exact decimal subtractions of the
published values. The paired bootstrap of each model's change runs SPEC §8's draws on the
prompts common to both releases (the new release's strata, ``sample_id`` order) with the new
release's ``n_bootstrap``, ``seed`` and ``confidence``, through
:class:`searchgen_nb.uncertainty.Bootstrap`: each replicate's change is the model's new
Overall-9 minus its old Overall-9 on the same multiset of prompts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from pathlib import Path

import numpy as np

from searchgen_nb.config import UncertaintyConfig
from searchgen_nb.constants import PARTITION_KEYS, SCHEMA_VERSION
from searchgen_nb.errors import ConfigError
from searchgen_nb.files import ARTIFACT_MAX, read_bytes, read_lines
from searchgen_nb.numeric import exact_mean
from searchgen_nb.schemas import check_document
from searchgen_nb.table import OVERALL_9, ReleaseTable
from searchgen_nb.uncertainty import Bootstrap, GroupDef, _intervals, half_up_signed
from searchgen_nb.untrusted import md_code as _code
from searchgen_nb.untrusted import md_text as _esc
from searchgen_nb.untrusted import excerpt, strict_loads

#: Files a previous release's folder must hold.
NEEDED = ("manifest.json", "prompt_scores.jsonl", "leaderboard_overall.json", "leaderboard_by_stratum.json",
          "leaderboard_by_domain.json", "leaderboard_by_failure_mode.json")
#: Prompt fields that are not metadata (never reported as a metadata change).
_NOT_METADATA = ("models", "prompt_index")


@dataclass
class Published:
    """A published (or staged) release folder, read lazily."""

    folder: Path
    #: JSON artifacts already parsed (by :func:`check_previous`), by file name; None = absent.
    parsed: dict = field(default_factory=dict)

    @cached_property
    def manifest(self) -> dict:
        return self.board("manifest.json")

    def board(self, name: str):
        if name not in self.parsed:
            p = self.folder / name
            text = read_bytes(p, ARTIFACT_MAX).decode("utf-8") if os.path.lexists(p) else None
            self.parsed[name] = None if text is None else strict_loads(text)
        return self.parsed[name]

    @cached_property
    def records(self) -> list[dict]:
        from searchgen_nb.pipeline import read_records  # the pipeline imports this module

        return read_records(self.folder)

    @cached_property
    def groups(self) -> dict[str, list[dict]]:
        """``{"<kind>:<name>": rows}``: all, strata, domains, failure modes, slices."""
        out = {"all:All": self.board("leaderboard_overall.json")}
        strata = self.board("leaderboard_by_stratum.json")
        out.update({f"stratum:{s}": strata[s] for s in PARTITION_KEYS if s in strata})
        for kind, name in (("domain", "leaderboard_by_domain.json"), ("failure_mode", "leaderboard_by_failure_mode.json")):
            out.update({f"{kind}:{t}": rows for t, rows in sorted(self.board(name).items())})
        full = self.manifest.get("output_slice")
        for s, boards in (self.board("leaderboard_by_slice.json") or {}).items():
            if s != full:  # the slice of every prompt is group All again (and its name holds the prompt count)
                out[f"slice:{s}"] = boards["overall"]
        return out


def check_previous(folder: Path, where: str, benchmark: str | None = None,
                   data_origin: str | None = None) -> Published:
    """The release in ``folder``, read once (its manifest and records kept for
    :func:`compare`), when it is a readable published release; else :class:`ConfigError`
    naming ``where`` (the config key or the argument), the folder, the file and the line or
    JSON pointer (data contract, § Changes between releases).

    Checked before any work: every file is a regular file within its bound
    (:mod:`searchgen_nb.files`) and parses as strict JSON (no NaN/Infinity, no repeated key,
    not nested too deeply); the manifest's ``schema_version`` is one this version reads and its
    ``benchmark`` / ``data_origin`` are the given ones (when given); every artifact read (every
    line of ``prompt_scores.jsonl``) conforms to its published JSON Schema; every model of
    ``model_order`` is described in ``models`` and the bootstrap settings are settings; every
    artifact read has the sha256 the manifest records; ``prompt_scores.jsonl`` has
    ``n_prompts`` records with unique sample_ids, each holding every model of ``model_order``."""
    folder = Path(folder)
    shown = str(folder)
    if not folder.is_dir():
        raise ConfigError(f"{where}: {shown} is not a folder")
    missing = [n for n in NEEDED if not os.path.lexists(folder / n)]
    if missing:
        raise ConfigError(f"{where}: {shown} is not a published release (missing {', '.join(missing)})")
    reader = _ReleaseReader(folder, f"{where}: {shown}")
    parsed, digests = {}, {}
    for name in ("manifest.json", *NEEDED[2:], "leaderboard_by_slice.json"):
        if name in NEEDED or os.path.lexists(folder / name):
            parsed[name], digests[name] = reader.document(name)
            if name == "manifest.json":
                reader.same_kind(parsed[name], benchmark, data_origin)
            reader.conform(name, parsed[name])
    manifest = parsed["manifest.json"]
    reader.models_and_settings(manifest)
    records, digests["prompt_scores.jsonl"] = reader.records(manifest)
    hashes = manifest["artifact_sha256"]
    for name in sorted(set(hashes) - set(digests)):  # hashed but not read above
        if os.path.lexists(folder / name):
            digests[name] = hashlib.sha256(reader.read(name)).hexdigest()
    for name in sorted(set(digests) - {"manifest.json"}):  # the manifest holds the others' sha256
        if name not in hashes:
            raise reader.fail("manifest.json", f"/artifact_sha256 holds no sha256 of {name}")
        if digests[name] != hashes[name]:
            why = "sha256 differs from the manifest's artifact_sha256 (edited or damaged)"
            raise reader.fail(name, why)
    release = Published(folder, parsed)  # what was just read and checked: nothing is read twice
    release.__dict__["records"] = records
    return release


class _ReleaseReader:
    """Reads the files of one release folder for :func:`check_previous`; every refusal is a
    :class:`ConfigError` starting with ``where`` (the key or argument and the folder)."""

    def __init__(self, folder: Path, where: str) -> None:
        self.folder, self.where = folder, where

    def fail(self, name: str, why: str) -> ConfigError:
        return ConfigError(f"{self.where}/{name}: {why}")

    def read(self, name: str) -> bytes:
        try:
            return read_bytes(self.folder / name, ARTIFACT_MAX)
        except OSError as exc:  # not a regular file, over the bound, a loop of links, …
            raise self.fail(name, f"cannot read: {exc.strerror or exc}") from None

    def parse(self, name: str, data: bytes, line: int | None = None) -> object:
        at = "" if line is None else f"line {line} "
        try:
            return strict_loads(data.decode("utf-8"))
        except RecursionError:
            raise self.fail(name, f"{at}is not strict JSON (nested too deeply)") from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, NaN, a repeated key, …
            raise self.fail(name, f"{at}is not strict JSON ({excerpt(str(exc), 120)})") from None

    def document(self, name: str) -> tuple[object, str]:
        data = self.read(name)
        return self.parse(name, data), hashlib.sha256(data).hexdigest()

    def conform(self, name: str, doc: object, line: int | None = None) -> None:
        """Refuse a document (a line) that does not conform to its published JSON Schema."""
        try:
            problems = [p["message"] for p in check_document(name, doc, line)]
        except RecursionError:
            at = "" if line is None else f" line {line}"
            problems = [f"{name}{at}: nested too deeply to check"]
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            shown = "; ".join(problems[:3]) + more
            raise ConfigError(f"{self.where}/{shown}: not a release this version reads")

    def same_kind(self, manifest: object, benchmark: str | None, data_origin: str | None) -> None:
        """Refuse a release of a format this version cannot read, of another benchmark or of
        another data origin, by name (before its schema: another format fails it everywhere)."""
        if not isinstance(manifest, dict):
            return  # the schema names it
        version = manifest.get("schema_version")
        if version != SCHEMA_VERSION:
            raise self.fail("manifest.json", f"/schema_version is {_shown(version)}: this version "
                            f"of searchgen-nb reads releases of schema_version {SCHEMA_VERSION}")
        for key, want in (("benchmark", benchmark), ("data_origin", data_origin)):
            if want is not None and manifest.get(key) != want:
                why = f"/{key} is {_shown(manifest.get(key))}, this release's is {_shown(want)}"
                why += f": releases of another {key} are not compared"
                raise self.fail("manifest.json", why)

    def models_and_settings(self, manifest: dict) -> None:
        """What the schema cannot say: every model of ``model_order`` has its entry in
        ``models``, and ``config.uncertainty`` holds settings the paired bootstrap can use."""
        for m in manifest["model_order"]:
            if m not in manifest["models"]:
                why = f"/model_order names model {excerpt(m, 60)}, which /models does not describe"
                raise self.fail("manifest.json", why)
        try:
            bootstrap_settings(manifest)
        except (ValueError, TypeError, ArithmeticError) as exc:
            why = f"/config/uncertainty holds no bootstrap settings ({excerpt(str(exc), 160)})"
            raise self.fail("manifest.json", why) from None

    def records(self, manifest: dict) -> tuple[list[dict], str]:
        """The records of ``prompt_scores.jsonl`` (streamed, checked by line) and its sha256."""
        name, models = "prompt_scores.jsonl", manifest["model_order"]
        seen: dict[str, int] = {}
        records = []
        sha = hashlib.sha256()
        try:
            for line_no, raw in enumerate(read_lines(self.folder / name), start=1):
                sha.update(raw)
                rec = self.parse(name, raw, line_no)
                self.conform(name, rec, line_no)
                sid = rec["sample_id"]
                if sid in seen:
                    why = f"repeated sample_id {excerpt(sid, 60)} (first on line {seen[sid]})"
                    raise self.fail(name, f"line {line_no}: {why}")
                lacking = [m for m in models if m not in rec["models"]]
                if lacking:
                    m = excerpt(lacking[0], 60)
                    why = f"(sample_id {excerpt(sid, 60)}) has no record of model {m}"
                    raise self.fail(name, f"line {line_no} {why}")
                seen[sid] = line_no
                records.append(rec)
        except OSError as exc:  # not a regular file, a line over the bound, …
            raise self.fail(name, f"cannot read: {exc.strerror or exc}") from None
        if len(seen) != manifest["dataset"]["n_prompts"]:
            n = manifest["dataset"]["n_prompts"]
            raise self.fail(name, f"{len(seen)} prompts, the manifest says {n}")
        return records, sha.hexdigest()


def _shown(value: object) -> str:
    return excerpt(json.dumps(value), 80)


def bootstrap_settings(manifest: dict) -> UncertaintyConfig:
    """The paired bootstrap's ``n_bootstrap``, ``seed`` and ``confidence``: a release's own
    (its manifest's ``config.uncertainty``; the defaults where absent). Raises ``ValueError``,
    ``TypeError`` or ``ArithmeticError`` when they are not settings."""
    given = manifest.get("config", {}).get("uncertainty") or {}
    if not isinstance(given, dict):
        raise TypeError(f"expected a mapping, got {type(given).__name__}")
    kept = {k: v for k, v in given.items() if k in ("n_bootstrap", "seed")}
    return UncertaintyConfig(**kept, confidence=Decimal(repr(given.get("confidence", 0.95))))


def _delta(after: float | None, before: float | None, decimals: tuple[int, int]) -> float | None:
    """after − before, exact decimal; None when either is None. When the releases round to
    different ``decimals`` (before, after), 0 where both published values can be the same
    score rounded at each one's precision: they differ by at most half a unit of the coarser."""
    if after is None or before is None:
        return None
    d = Decimal(repr(after)) - Decimal(repr(before))
    if decimals[0] != decimals[1] and abs(d) <= Decimal(5).scaleb(-min(decimals) - 1):
        return 0.0
    return float(d)


def score_changed(cell: dict) -> bool:
    """Whether a ``groups`` cell of ``changes.json`` is a change of Overall-9 (its ``delta``
    is not 0, or one side has no value)."""
    if cell["delta"] is None:
        return cell["overall_9_before"] != cell["overall_9_after"]
    return cell["delta"] != 0


#: Model metadata whose change is reported (a new display name, type or missing policy).
_MODEL_FIELDS = ("display_name", "type", "missing_policy")


def _model_changes(old_manifest: dict, new_manifest: dict, models: list[str]) -> list[dict]:
    """``[{model_id, fields: {field: [before, after]}}]`` for models of both releases whose
    display name, type or missing policy changed (a policy change moves scores and ranks)."""
    out = []
    for m in sorted(models):
        a, b = old_manifest["models"].get(m) or {}, new_manifest["models"].get(m) or {}
        fields = {f: [a.get(f), b.get(f)] for f in _MODEL_FIELDS if a.get(f) != b.get(f)}
        if fields:
            out.append({"model_id": m, "fields": fields})
    return out


def first_release() -> dict:
    """``changes.json`` of a release without ``previous_release``."""
    return {"first_release": True, "previous": None, "models": {"added": [], "removed": [], "changed": []},
            "prompts": {"added": [], "removed": [], "metadata_changed": []}, "groups": {}, "pairs": [], "paired_bootstrap": None}


def compare(old_folder: Path | Published, new_folder: Path | Published) -> dict:
    """``changes.json`` (SPEC §10) from a previous release's folder to a new one.

    ``groups[key][model_id]`` for every group of either release and every model of both:
    ``overall_9_before``, ``overall_9_after``, ``delta`` (after − before, exact decimal; null
    when one is null), ``rank_before``, ``rank_after``. ``pairs``: every prompt × model of
    both releases whose status or raw Overall-9 differs (sorted by model_id, sample_id).
    ``paired_bootstrap``: per model the change of Overall-9 on the common prompts with its
    interval. Raises :class:`ConfigError` for releases of two benchmarks or data origins, and
    ``KeyError``/``ValueError`` only for folders that are not releases (callers check with
    :func:`check_previous`)."""
    old, new = (r if isinstance(r, Published) else Published(Path(r)) for r in (old_folder, new_folder))
    om, nm = old.manifest, new.manifest
    for key in ("benchmark", "data_origin"):
        if om.get(key) != nm.get(key):
            a, b = (excerpt(json.dumps(m.get(key)), 80) for m in (om, nm))
            raise ConfigError(f"{old.folder} is a release of {key} {a}, {new.folder} of {key} {b}: "
                              f"releases of another {key} are not compared")
    old_models, new_models = list(om["model_order"]), list(nm["model_order"])
    common = [m for m in new_models if m in set(old_models)]
    orec = {r["sample_id"]: r for r in old.records}
    nrec = {r["sample_id"]: r for r in new.records}
    shared = sorted(set(orec) & set(nrec))
    retagged = []
    for sid in shared:
        a, b = orec[sid], nrec[sid]
        fields = sorted(k for k in set(a) | set(b) if k not in _NOT_METADATA and a.get(k) != b.get(k))
        if fields:
            retagged.append({"sample_id": sid, "fields": fields})
    pairs = []
    for m in sorted(common):
        for sid in shared:
            a, b = orec[sid]["models"][m], nrec[sid]["models"][m]
            if a["status"] != b["status"] or a["overall_9_raw"] != b["overall_9_raw"]:
                pairs.append({"model_id": m, "sample_id": sid, "status_before": a["status"], "status_after": b["status"],
                              "overall_9_before": a["overall_9_raw"], "overall_9_after": b["overall_9_raw"]})
    groups: dict[str, dict] = {}
    og, ng = old.groups, new.groups
    decimals = tuple(m.get("scoring", {}).get("public_rounding_decimals") for m in (om, nm))
    for key in sorted(set(og) | set(ng)):
        before = {r["model_id"]: r for r in og.get(key, [])}
        after = {r["model_id"]: r for r in ng.get(key, [])}
        cells = {}
        for m in sorted(common):
            b, a = before.get(m) or {}, after.get(m) or {}
            cells[m] = {"overall_9_before": b.get("overall_9"), "overall_9_after": a.get("overall_9"),
                        "delta": _delta(a.get("overall_9"), b.get("overall_9"), decimals),
                        "rank_before": b.get("rank"), "rank_after": a.get("rank")}
        groups[key] = cells
    return {
        "first_release": False,
        "previous": {"generated_at": om.get("generated_at"), "schema_version": om.get("schema_version"),
                     "n_prompts": om["dataset"]["n_prompts"], "results_sha256": om.get("inputs", {}).get("results_sha256")},
        "models": {"added": [m for m in new_models if m not in set(old_models)], "removed": [m for m in old_models if m not in set(new_models)],
                   "changed": _model_changes(om, nm, common)},
        "prompts": {"added": sorted(set(nrec) - set(orec)), "removed": sorted(set(orec) - set(nrec)), "metadata_changed": retagged},
        "groups": groups,
        "pairs": pairs,
        "paired_bootstrap": paired_bootstrap(old, new, common, shared),
    }


def paired_bootstrap(old: Published, new: Published, models: list[str], shared: list[str]) -> dict:
    """Each model's Overall-9 change (new − old) on the prompts common to both releases: the
    point change and its interval over SPEC §8's replicates of those prompts (public scale,
    halves away from zero). Settings from the new release's ``uncertainty`` config."""
    cfg = bootstrap_settings(new.manifest)
    decimals = new.manifest["scoring"]["public_rounding_decimals"]
    head = {"n_bootstrap": cfg.n_bootstrap, "seed": cfg.seed, "confidence": float(cfg.confidence), "n_common_prompts": len(shared), "models": {}}
    if not models or not shared:
        return head
    orec = {r["sample_id"]: r for r in old.records}
    nrec = {r["sample_id"]: r for r in new.records}
    # both releases' columns of the common prompts side by side: models m\0old, then m\0new
    before = ReleaseTable.from_records([orec[s] for s in shared], models)
    after = ReleaseTable.from_records([nrec[s] for s in shared], models)
    ids = [f"{m}\u0000old" for m in models] + [f"{m}\u0000new" for m in models]
    prompts = after.prompts
    table = ReleaseTable(prompts, ids, before.lanes + after.lanes, ids, np.concatenate([before.status, after.status]),
                         np.concatenate([before.values, after.values]), before.result_files + after.result_files)
    zero_fill = np.array([old.manifest["models"][m]["missing_policy"] == "zero_fill" for m in models]
                         + [new.manifest["models"][m]["missing_policy"] == "zero_fill" for m in models])
    if cfg.n_bootstrap:
        boot = Bootstrap(table, zero_fill, [GroupDef("all:All", np.arange(len(shared)))], cfg)  # every common prompt
        q = boot.q["overall_9"][0]
        n = len(models)
        d = q[:, n:] - q[:, :n]
        tol = boot.tolerance(0, np.nan_to_num(q[:, n:])) + boot.tolerance(0, np.nan_to_num(q[:, :n])) + np.abs(np.nan_to_num(d)) * 2.0**-52

        def exact_d(k, reps):
            return [a - b for a, b in zip(boot.exact("overall_9", 0, n + k, reps), boot.exact("overall_9", 0, k, reps))]

        cis = _intervals(d, tol, cfg.alpha, decimals, exact_d)
    else:
        cis = [None] * len(models)
    for k, m in enumerate(models):
        means = []
        for row in (k, len(models) + k):
            scored = table.status[row] == 0
            vals = table.values[row, :, OVERALL_9]
            has = scored & ~np.isnan(vals)
            n_inc = int(has.sum()) + (int((~scored).sum()) if zero_fill[row] else 0)
            means.append(None if n_inc == 0 else exact_mean(vals[has].tolist(), n_inc) * 100 / 3)
        delta = None if None in means else half_up_signed(means[1] - means[0], decimals) / 10**decimals
        head["models"][m] = {"delta": delta, "ci": cis[k]}
    return head


# ---- the Markdown summary -------------------------------------------------------------


def _fmt(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "N/A"
    text = f"{Decimal(repr(x)):f}"
    return ("+" + text if signed and x > 0 else text.replace("-", "−"))


def _rank(r: object) -> str:
    return "–" if r is None else _esc(r)


def _group_label(key: str) -> str:
    """The group's name as Markdown text (its tag or slice name escaped)."""
    kind, _, name = key.partition(":")
    prefix = {"stratum": "", "domain": "domain ", "failure_mode": "failure mode ",
              "slice": "slice "}.get(kind)
    return "All" if kind == "all" or prefix is None else prefix + _esc(name)


def markdown(ch: dict, names: dict[str, str] | None = None, max_groups: int = 8, max_prompts: int = 10) -> str:
    """The change as Markdown for a pull-request description: the headline facts first (models
    and prompts added or removed, each changed model's score changes, rank changes, status
    transitions with their prompts), then tables. Nothing is said about what did not change."""
    names = names or {}

    def who(m: str) -> str:
        return f"**{_esc(names.get(m, m))}** ({_code(m)})" if names.get(m, m) != m else _code(m)

    if ch["first_release"]:
        return "## What changed\n\nThis is the first release: there is no previous release to compare with.\n"
    lines = ["## What changed", ""]
    mo, pr = ch["models"], ch["prompts"]
    if mo["added"]:
        lines.append(f"- Models added: {', '.join(who(m) for m in mo['added'])}")
    if mo["removed"]:
        lines.append(f"- Models removed: {', '.join(_code(m) for m in mo['removed'])}")
    for c in mo.get("changed", []):
        fields = (f"{_esc(f.replace('_', ' '))} {_esc(a)} → {_esc(b)}"
                  for f, (a, b) in c["fields"].items())
        lines.append(f"- {who(c['model_id'])}: " + "; ".join(fields))
    for label, items in (("added", pr["added"]), ("removed", pr["removed"])):
        if items:
            shown = ", ".join(_code(s) for s in items[:max_prompts]) + (f" and {len(items) - max_prompts} more" if len(items) > max_prompts else "")
            lines.append(f"- {len(items)} prompt{'s' if len(items) != 1 else ''} {label}: {shown}")
    if pr["metadata_changed"]:
        shown = ", ".join(f"{_code(c['sample_id'])} ({', '.join(_esc(f) for f in c['fields'])})"
                          for c in pr["metadata_changed"][:max_prompts])
        more = len(pr["metadata_changed"]) - max_prompts
        lines.append(f"- {len(pr['metadata_changed'])} prompt(s) with changed metadata: {shown}" + (f" and {more} more" if more > 0 else ""))
    changed: dict[str, list[tuple[str, dict]]] = {}
    both = {k for k, cells in ch["groups"].items() if any(c["overall_9_before"] is not None or c["rank_before"] is not None for c in cells.values())
            and any(c["overall_9_after"] is not None or c["rank_after"] is not None for c in cells.values())}
    for key, cells in ch["groups"].items():
        for m, c in cells.items():
            if key in both and score_changed(c):
                changed.setdefault(m, []).append((key, c))
    boot = (ch.get("paired_bootstrap") or {}).get("models", {})
    conf = f"{Decimal(repr((ch.get('paired_bootstrap') or {}).get('confidence', 0.95))) * 100:f}".rstrip("0").rstrip(".") + "%"
    for m in sorted(changed):
        cells = dict(changed[m])
        head = f"- {who(m)}: Overall-9 changed in {len(cells)} group{'s' if len(cells) != 1 else ''}"
        if "all:All" in cells:
            c = cells["all:All"]
            b = boot.get(m) or {}
            ci = f"; paired {conf} interval {_fmt(b['ci'][0], True)} to {_fmt(b['ci'][1], True)} on the {ch['paired_bootstrap']['n_common_prompts']} common prompts" if b.get("ci") else ""
            head += f"; All {_fmt(c['overall_9_before'])} → {_fmt(c['overall_9_after'])} ({_fmt(c['delta'], True)}{ci})"
        others = sorted(((k, c) for k, c in cells.items() if k != "all:All"), key=lambda kc: (-abs(kc[1]["delta"] or 0), kc[0]))
        if others:
            shown = ", ".join(f"{_group_label(k)} {_fmt(c['delta'], True)}" for k, c in others[:max_groups])
            head += f": {shown}" + (f" and {len(others) - max_groups} more" if len(others) > max_groups else "")
        lines.append(head)
    for key, cells in ch["groups"].items():
        moves = [(m, c) for m, c in cells.items() if key in both and c["rank_before"] != c["rank_after"]]
        if moves:
            def arrow(c):
                b, a = c["rank_before"], c["rank_after"]
                if b is None or a is None:
                    return f"{_esc(b or 'unranked')} → {_esc(a or 'unranked')}"
                return f"{_esc(b)} → {_esc(a)} {'↑' if a < b else '↓'}"
            lines.append(f"- Rank change in {_group_label(key)}: " + ", ".join(f"{who(m)} {arrow(c)}" for m, c in sorted(moves, key=lambda mc: (mc[1]['rank_after'] or 1e9))))
    transitions: dict[tuple[str, str, str], list[str]] = {}
    score_only: dict[str, list[dict]] = {}
    for p in ch["pairs"]:
        if p["status_before"] != p["status_after"]:
            transitions.setdefault((p["model_id"], p["status_before"], p["status_after"]), []).append(p["sample_id"])
        else:
            score_only.setdefault(p["model_id"], []).append(p)
    for (m, a, b), sids in sorted(transitions.items()):
        shown = ", ".join(_code(s) for s in sids[:max_prompts]) + (f" and {len(sids) - max_prompts} more" if len(sids) > max_prompts else "")
        results = f"{len(sids)} result{'s' if len(sids) != 1 else ''}"
        lines.append(f"- {who(m)}: {results} {_esc(a)} → {_esc(b)}: {shown}")
    for m, ps in sorted(score_only.items()):
        lower = sum(1 for p in ps if (p["overall_9_after"] or 0) < (p["overall_9_before"] or 0))
        lines.append(f"- {who(m)}: Overall-9 of {len(ps)} scored prompt{'s' if len(ps) != 1 else ''} changed ({lower} lower, {len(ps) - lower} higher)")
    if len(lines) == 2:
        lines.append("- Nothing changed: same models, prompts, statuses and scores.")
    if changed:
        lines += ["", "### Score changes", "", "| group | model | Overall-9 before | after | Δ | rank before | rank after |", "|---|---|---:|---:|---:|---:|---:|"]
        for m in sorted(changed):
            for key, c in sorted(changed[m], key=lambda kc: (kc[0] != "all:All", -abs(kc[1]["delta"] or 0), kc[0])):
                lines.append(f"| {_group_label(key)} | {_esc(names.get(m, m))} | "
                             f"{_fmt(c['overall_9_before'])} | {_fmt(c['overall_9_after'])} | "
                             f"{_fmt(c['delta'], True)} | {_rank(c['rank_before'])} | "
                             f"{_rank(c['rank_after'])} |")
    if ch["pairs"]:
        lines += ["", "### Prompt × model changes", "", "| model | sample_id | status before | status after | raw Overall-9 before | after |", "|---|---|---|---|---:|---:|"]
        for p in ch["pairs"]:
            lines.append(f"| {_esc(names.get(p['model_id'], p['model_id']))} | "
                         f"{_code(p['sample_id'])} | "
                         f"{_esc(p['status_before'])} | {_esc(p['status_after'])} | "
                         f"{_raw(p['overall_9_before'])} | {_raw(p['overall_9_after'])} |")
    return "\n".join(lines) + "\n"


def _raw(x: float | None) -> str:
    if x is None:
        return "null"
    return f"{x:.4f}".rstrip("0").rstrip(".") if x != int(x) else f"{x:.1f}"
