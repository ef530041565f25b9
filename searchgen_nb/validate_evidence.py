"""The release gate's ``evidence`` check (data contract, § Prompt evidence and thumbnails):
``prompt_evidence.json`` conforms to its schema and matches the manifest's sha256; it has one
entry per prompt of ``prompt_scores.jsonl`` in its order; a model's entry only for a pair that
exists (the judge's scores only for a scored pair, a thumbnail only where an image was); the
judge's scores agree with the pair's components where both give a number; every thumbnail is
a file within its bound, and the thumbnails' count, bytes and sha256 recompute. Written with its
own code (no import of the module that writes the file)."""

from __future__ import annotations

import hashlib
import json
import math
import os
from fractions import Fraction
from pathlib import Path

import jsonschema
import jsonschema_rs

from searchgen_nb.files import ARTIFACT_MAX, read_bytes
from searchgen_nb.schemas import schema_dir
from searchgen_nb.untrusted import excerpt, strict_loads

NAME = "prompt_evidence.json"
CHECK = "evidence"
_GENERIC = ("prompt_faithfulness", "image_quality", "text_rendering", "ai_naturalness",
            "composition_and_aesthetics", "physical_plausibility")
_SCORED, _NO_IMAGE = 0, 3  # status codes of validate_columns


def check_evidence(folder: Path, manifest: dict, cols, report) -> None:
    """Run the check on a release folder whose records were read into ``cols``."""
    path = Path(folder) / NAME
    if not os.path.lexists(path):
        if NAME in (manifest.get("artifacts") or []):
            report.fail(CHECK, f"{NAME} is listed in the manifest but missing", file=NAME)
        else:
            report.skip(CHECK, f"the release has no {NAME}")
        return
    try:
        data = read_bytes(path, ARTIFACT_MAX)
        doc = strict_loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        report.fail(CHECK, f"{NAME}: cannot read: {excerpt(str(exc), 200)}", file=NAME)
        return
    if (manifest.get("artifact_sha256") or {}).get(NAME) != hashlib.sha256(data).hexdigest():
        report.fail(CHECK, f"{NAME}: sha256 differs from the manifest's artifact_sha256", file=NAME)
    schema = json.loads((schema_dir() / "prompt_evidence.schema.json").read_text("utf-8"))
    error = None  # jsonschema-rs decides (70× faster), jsonschema explains
    if not jsonschema_rs.Draft202012Validator(schema).is_valid(doc):
        validator = jsonschema.Draft202012Validator(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        where = "".join(f"/{p}" for p in error.absolute_path)
        report.fail(CHECK, f"{NAME} {where or '(top level)'}: {excerpt(error.message, 200)}",
                    file=NAME)
        return
    _check_prompts(doc["prompts"], manifest, cols, report)
    _check_thumbnails(Path(folder), doc, report)


def _check_prompts(prompts: list, manifest: dict, cols, report) -> None:
    sids = [p["sample_id"] for p in prompts]
    if sids != list(cols.sample_ids):
        report.fail(CHECK, f"{NAME}: its prompts are not those of prompt_scores.jsonl in order "
                           f"({len(sids)} entries, {len(cols.sample_ids)} prompts)", file=NAME)
        return
    index = {c: j for j, c in enumerate(manifest["scoring"]["overall_10_components"])}
    for i, p in enumerate(prompts):
        for m, pair in p["models"].items():
            why = _pair_problem(pair, m, i, cols, index)
            if why:
                report.fail(CHECK, f"{NAME}: sample_id {excerpt(p['sample_id'], 80)}, model "
                                   f"{excerpt(m, 60)}: {why}", file=NAME,
                            sample_id=p["sample_id"], model_id=m)


def _pair_problem(pair: dict, m: str, i: int, cols, index: dict) -> str | None:
    """Why one model's entry of prompt ``i`` contradicts the records, or None."""
    if m not in cols.models:
        return "no such model in prompt_scores.jsonl"
    k = cols.models.index(m)
    status = int(cols.status[k, i])
    if status != _SCORED and ("checklist" in pair or "rubric" in pair):
        return "the judge's scores of a pair that is not scored"
    if status == _NO_IMAGE and "thumbnail" in pair:
        return "a thumbnail of a pair without a generated image"

    def value(c: str) -> float | None:
        v = float(cols.values[k, i, index[c]])
        return None if math.isnan(v) else v

    items = [e["score"] for e in pair.get("checklist", ())]
    if items and None not in items and value("checklist") is not None:
        mean = float(sum(map(Fraction, items), Fraction(0)) / len(items))
        if mean != value("checklist"):
            return f"checklist items average {mean}, the record's checklist is {value('checklist')}"
    for d in _GENERIC:
        said = pair.get("rubric", {}).get(d)
        if said is not None and value(d) is not None and said != value(d):
            return f"rubric {d} is {said}, the record's {d} is {value(d)}"
    return None


def _check_thumbnails(folder: Path, doc: dict, report) -> None:
    """Every named thumbnail a regular file within the bound; nothing else below thumbs/; the
    count, bytes and sha256 as stated."""
    stated = doc["thumbnails"]
    named = sorted({pair["thumbnail"] for p in doc["prompts"] for pair in p["models"].values()
                    if "thumbnail" in pair})
    h, total = hashlib.sha256(), 0
    for rel in named:
        try:
            data = read_bytes(folder / rel, stated["max_bytes"])
        except OSError as exc:
            report.fail(CHECK, f"thumbnail {rel}: {exc.strerror or exc}", file=rel)
            continue
        total += len(data)
        h.update(f"{hashlib.sha256(data).hexdigest()}  {rel}\n".encode())
    found = sorted(str(p.relative_to(folder).as_posix()) for p in (folder / "thumbs").rglob("*")
                   if not p.is_dir()) if (folder / "thumbs").is_dir() else []
    extra = sorted(set(found) - set(named))
    if extra:
        report.fail(CHECK, f"thumbs/ holds {len(extra)} file(s) {NAME} does not name, e.g. "
                           f"{excerpt(extra[0], 80)}", file=extra[0])
    got = {"n_files": len(named), "bytes": total, "sha256": h.hexdigest()}
    for key, value in got.items():
        if stated[key] != value:
            report.fail(CHECK, f"{NAME} /thumbnails/{key} is {excerpt(stated[key], 70)}, the "
                               f"thumbnails give {value}", file=NAME)
