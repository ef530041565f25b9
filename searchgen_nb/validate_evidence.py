"""The release gate's ``evidence`` check (data contract, § Prompt evidence and thumbnails):
``prompt_evidence.jsonl`` against its schema, ``prompt_scores.jsonl`` and the manifest; ``thumbs/``
holds exactly the named thumbnails, each named by its sha256. No import of the writer."""

from __future__ import annotations

import hashlib
import json
import math
import os
from fractions import Fraction
from functools import cache
from pathlib import Path

import jsonschema
import jsonschema_rs

from searchgen_nb.files import ARTIFACT_MAX, read_bytes, read_lines
from searchgen_nb.schemas import error_text, schema_dir
from searchgen_nb.untrusted import excerpt, strict_loads

NAME = "prompt_evidence.jsonl"
CHECK = "evidence"
_GENERIC = ("prompt_faithfulness", "image_quality", "text_rendering", "ai_naturalness",
            "composition_and_aesthetics", "physical_plausibility")
_SCORED, _NO_IMAGE = 0, 3  # status codes of validate_columns


@cache
def _validators():
    """jsonschema-rs decides (70× faster), jsonschema explains."""
    schema = json.loads((schema_dir() / "prompt_evidence.line.schema.json").read_text("utf-8"))
    return jsonschema_rs.Draft202012Validator(schema), jsonschema.Draft202012Validator(schema)


def check_evidence(folder: Path, manifest: dict, cols, report) -> None:
    """Run the check on a release folder whose records were read into ``cols``."""
    path = Path(folder) / NAME
    if not os.path.lexists(path):
        if NAME in (manifest.get("artifacts") or []):
            report.fail(CHECK, f"{NAME} is listed in the manifest but missing", file=NAME)
        else:
            report.skip(CHECK, f"the release has no {NAME}")
        return
    stated = manifest.get("thumbnails")
    if not isinstance(stated, dict):
        report.fail(CHECK, f"manifest.json has no thumbnails summary beside {NAME}", file=NAME)
        return
    named: set[str] = set()
    try:
        digest, texts = _check_lines(path, manifest, cols, report, named)
    except (OSError, ValueError) as exc:
        report.fail(CHECK, f"{NAME}: cannot read: {excerpt(str(exc), 200)}", file=NAME)
        return
    if (manifest.get("artifact_sha256") or {}).get(NAME) != digest:
        report.fail(CHECK, f"{NAME}: sha256 differs from the manifest's artifact_sha256", file=NAME)
    if manifest["dataset"].get("texts_sha256") != texts:
        report.fail(CHECK, f"{NAME}: its prompt texts and checklists are not the ones the metadata "
                    "gave (their sha256 differs from manifest.json /dataset/texts_sha256)",
                    file=NAME)
    _check_thumbnails(Path(folder), named, stated, report)


def _check_lines(path: Path, manifest: dict, cols, report, named: set) -> tuple[str, str]:
    """Check every line (collecting the thumbnails it names into ``named``); the sha256 of the
    file and of its texts (one sorted-key JSON line ``{sample_id, text, checklist}`` each)."""
    index = {c: j for j, c in enumerate(manifest["scoring"]["overall_10_components"])}
    sids, h, in_order, n = list(cols.sample_ids), hashlib.sha256(), True, 0
    texts = hashlib.sha256()
    for n, raw in enumerate(read_lines(path, ARTIFACT_MAX), start=1):
        h.update(raw)
        p = _line(raw, n, report)
        if p is None:
            continue
        said = {k: p[k] for k in ("checklist", "sample_id", "text")}
        texts.update(json.dumps(said, sort_keys=True, ensure_ascii=False).encode() + b"\n")
        if not in_order:
            continue
        sid = p["sample_id"]
        if n > len(sids) or sid != sids[n - 1]:
            in_order = False
            report.fail(CHECK, f"{NAME} line {n}: sample_id {excerpt(sid, 80)} is not prompt {n} "
                        "of prompt_scores.jsonl", file=NAME, line=n, sample_id=sid)
            continue
        for m, pair in p["models"].items():
            if why := _pair_problem(pair, m, n - 1, cols, index):
                report.fail(CHECK, f"{NAME} line {n}: sample_id {excerpt(sid, 80)}, model "
                            f"{excerpt(m, 60)}: {why}", file=NAME, line=n, sample_id=sid,
                            model_id=m)
        named.update(pair["thumbnail"] for pair in p["models"].values() if "thumbnail" in pair)
    if in_order and n != len(sids):
        report.fail(CHECK, f"{NAME}: {n} lines, prompt_scores.jsonl has {len(sids)} prompts",
                    file=NAME)
    return h.hexdigest(), texts.hexdigest()


def _line(raw: bytes, n: int, report) -> dict | None:
    """One line parsed and schema-checked; None (and a failure naming it) when it is not."""
    try:
        doc = strict_loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else excerpt(str(exc), 200)
        report.fail(CHECK, f"{NAME} line {n}: not strict JSON: {why}", file=NAME, line=n)
        return None
    fast, slow = _validators()
    if fast.is_valid(doc):
        return doc
    error = jsonschema.exceptions.best_match(slow.iter_errors(doc))
    path = list(error.absolute_path) if error is not None else []
    sid = doc.get("sample_id") if isinstance(doc, dict) else None
    sid = sid if isinstance(sid, str) else None
    model = path[1] if len(path) > 1 and path[0] == "models" else None
    where = "".join(f"/{p}" for p in path) or "(top level)"
    said = error_text(error) if error is not None else "jsonschema-rs rejects it"
    report.fail(CHECK, f"{NAME} line {n}" + (f", sample_id {excerpt(sid, 80)}" if sid else "")
                + (f", model {excerpt(model, 60)}" if model else "")
                + f" {excerpt(where, 100)}: {excerpt(said, 200)}",
                file=NAME, line=n, sample_id=sid, model_id=model)
    return None


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
    value = {c: None if math.isnan(v) else v for c, v in
             ((c, float(cols.values[k, i, j])) for c, j in index.items())}
    items = [e["score"] for e in pair.get("checklist", ())]
    if items and None not in items and value["checklist"] is not None:
        mean = float(sum(map(Fraction, items), Fraction(0)) / len(items))
        if mean != value["checklist"]:
            return f"checklist items average {mean}, the record's checklist is {value['checklist']}"
    for d in _GENERIC:
        said = pair.get("rubric", {}).get(d)
        if said is not None and value[d] is not None and said != value[d]:
            return f"rubric {d} is {said}, the record's {d} is {value[d]}"
    return None


def _check_thumbnails(folder: Path, named: set, stated: dict, report) -> None:
    """Every named thumbnail a regular file within the bound, named by its sha256; nothing
    else in thumbs/; the count, bytes and sha256 as the manifest states."""
    h, total = hashlib.sha256(), 0
    for rel in sorted(named):
        try:
            data = read_bytes(folder / rel, stated["max_bytes"])
        except OSError as exc:
            report.fail(CHECK, f"thumbnail {rel}: {exc.strerror or exc}", file=rel)
            continue
        digest = hashlib.sha256(data).hexdigest()
        if not rel.endswith(f"/{digest[:32]}.webp"):
            report.fail(CHECK, f"thumbnail {rel}: its name is not its sha256's first 32 hex "
                               f"digits ({digest[:32]})", file=rel)
        total += len(data)
        h.update(f"{digest}  {rel}\n".encode())
    thumbs = folder / "thumbs"
    extra = sorted({f"thumbs/{n}" for n in os.listdir(thumbs)} - named) if thumbs.is_dir() else []
    if extra:
        report.fail(CHECK, f"thumbs/ holds {len(extra)} file(s) {NAME} does not name, e.g. "
                           f"{excerpt(extra[0], 80)}", file=extra[0])
    got = {"n_files": len(named), "bytes": total, "sha256": h.hexdigest()}
    for key, value in got.items():
        if stated[key] != value:
            report.fail(CHECK, f"manifest.json /thumbnails/{key} is {excerpt(stated[key], 70)}, "
                               f"the thumbnails give {value}", file="manifest.json")
