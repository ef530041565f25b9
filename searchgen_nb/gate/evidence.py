"""The release gate's ``evidence`` check (data contract, § Prompt evidence and thumbnails):
``prompt_evidence.jsonl`` against its schema, ``prompt_scores.jsonl`` and the manifest; ``thumbs/``
and ``previews/`` hold exactly the named thumbnails and previews, each named by its sha256. No
import of the writer."""

from __future__ import annotations

import hashlib
import json
import math
import os
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import cast

import jsonschema
import jsonschema_rs

from searchgen_nb.files import read_bytes, read_lines
from searchgen_nb.gate.columns import manifest_declaration
from searchgen_nb.gate.report import Report
from searchgen_nb.schemas import error_text, schema_dir
from searchgen_nb.untrusted import excerpt, strict_loads

NAME = "prompt_evidence.jsonl"
CHECK = "evidence"
_SCORED, _NO_IMAGE = 0, 3  # status codes of gate.columns
#: What only a scored pair carries besides its scores: the judge's reasons.
_REASONS = ("rubric_reasons", "reference_reasons")
#: What only a pair with an image carries; the folder of each made file and its manifest key.
_IMAGES = {"thumbnail": ("thumbs", "thumbnails"), "preview": ("previews", "previews")}


@cache
def _validators():
    """jsonschema-rs decides (70× faster), jsonschema explains."""
    schema = json.loads((schema_dir() / "prompt_evidence.line.schema.json").read_text("utf-8"))
    return jsonschema_rs.Draft202012Validator(schema), jsonschema.Draft202012Validator(schema)


def evidence_entry(
    folder: Path, manifest: dict, cols, stops: tuple[type[Exception], ...]
) -> tuple[dict, Exception | None]:
    """The report's ``evidence`` entry: :func:`check_evidence` on a report of its own (it runs
    in a process beside the other checks), and the exception of ``stops`` it stopped on, if
    any (the entry then holds what it found before)."""
    own = Report()
    try:
        check_evidence(folder, manifest, cols, own)
    except stops as exc:
        return own.checks[CHECK], exc
    return own.checks[CHECK], None


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
    named: dict[str, set[str]] = {key: set() for key in _IMAGES}
    try:
        digest, texts = _check_lines(path, manifest, cols, report, named)
    except (OSError, ValueError) as exc:
        report.fail(CHECK, f"{NAME}: cannot read: {excerpt(str(exc), 200)}", file=NAME)
        return
    if (manifest.get("artifact_sha256") or {}).get(NAME) != digest:
        report.fail(CHECK, f"{NAME}: sha256 differs from the manifest's artifact_sha256", file=NAME)
    if manifest["dataset"].get("texts_sha256") != texts:
        report.fail(
            CHECK,
            f"{NAME}: its prompt texts and checklists are not the ones the metadata "
            "gave (their sha256 differs from manifest.json /dataset/texts_sha256)",
            file=NAME,
        )
    for key, (sub, summary) in _IMAGES.items():
        said = manifest.get(summary)
        if isinstance(said, dict):
            _check_thumbnails(Path(folder), named[key], said, report, sub)
        elif named[key] or os.path.lexists(Path(folder) / sub):
            report.fail(
                CHECK,
                f"manifest.json has no {summary} summary beside {sub}/ or the "
                f"{key} paths of {NAME}",
                file="manifest.json",
            )


def _check_lines(path: Path, manifest: dict, cols, report, named: dict) -> tuple[str, str]:
    """Check every line (collecting the thumbnails and previews it names into ``named``); the
    sha256 of the file and of its texts (one sorted-key JSON line ``{sample_id, text,
    checklist}`` each)."""
    index = {c: j for j, c in enumerate(manifest["scoring"]["overall_10_components"])}
    generic = manifest_declaration(manifest).generic_rubric
    sids, h, in_order, n = list(cols.sample_ids), hashlib.sha256(), True, 0
    texts = hashlib.sha256()
    for n, raw in enumerate(read_lines(path), start=1):
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
            report.fail(
                CHECK,
                f"{NAME} line {n}: sample_id {excerpt(sid, 80)} is not prompt {n} "
                "of prompt_scores.jsonl",
                file=NAME,
                line=n,
                sample_id=sid,
            )
            continue
        for m, pair in p["models"].items():
            if why := _pair_problem(pair, m, n - 1, cols, index, generic):
                report.fail(
                    CHECK,
                    f"{NAME} line {n}: sample_id {excerpt(sid, 80)}, model {excerpt(m, 60)}: {why}",
                    file=NAME,
                    line=n,
                    sample_id=sid,
                    model_id=m,
                )
        for key, files in named.items():
            files.update(pair[key] for pair in p["models"].values() if key in pair)
    if in_order and n != len(sids):
        report.fail(
            CHECK, f"{NAME}: {n} lines, prompt_scores.jsonl has {len(sids)} prompts", file=NAME
        )
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
        return cast(dict, doc)  # the schema's top level is an object
    error = jsonschema.exceptions.best_match(slow.iter_errors(doc))
    path = list(error.absolute_path) if error is not None else []
    sid = doc.get("sample_id") if isinstance(doc, dict) else None
    sid = sid if isinstance(sid, str) else None
    model = path[1] if len(path) > 1 and path[0] == "models" else None
    where = "".join(f"/{p}" for p in path) or "(top level)"
    said = error_text(error) if error is not None else "jsonschema-rs rejects it"
    report.fail(
        CHECK,
        f"{NAME} line {n}"
        + (f", sample_id {excerpt(sid, 80)}" if sid else "")
        + (f", model {excerpt(model, 60)}" if model else "")
        + f" {excerpt(where, 100)}: {excerpt(said, 200)}",
        file=NAME,
        line=n,
        sample_id=sid,
        model_id=model,
    )
    return None


def _pair_problem(
    pair: dict, m: str, i: int, cols, index: dict, generic: tuple[str, ...]
) -> str | None:
    """Why one model's entry of prompt ``i`` contradicts the records, or None."""
    if m not in cols.models:
        return "no such model in prompt_scores.jsonl"
    k = cols.models.index(m)
    status = int(cols.status[k, i])
    if status != _SCORED and ("checklist" in pair or "rubric" in pair):
        return "the judge's scores of a pair that is not scored"
    if status != _SCORED and any(key in pair for key in _REASONS):
        return "the judge's reasons of a pair that is not scored"
    if status == _NO_IMAGE and "thumbnail" in pair:
        return "a thumbnail of a pair without a generated image"
    if status == _NO_IMAGE and ("preview" in pair or "image" in pair):
        return "a preview or image of a pair without a generated image"
    if ("thumbnail" in pair) != ("preview" in pair):
        return "a thumbnail without its preview, or a preview without its thumbnail"
    value = {
        c: None if math.isnan(v) else v
        for c, v in ((c, float(cols.values[k, i, j])) for c, j in index.items())
    }
    items = [e["score"] for e in pair.get("checklist", ())]
    if items and None not in items and value["checklist"] is not None:
        mean = float(sum(map(Fraction, items), Fraction(0)) / len(items))
        if mean != value["checklist"]:
            return f"checklist items average {mean}, the record's checklist is {value['checklist']}"
    for d in generic:
        said = pair.get("rubric", {}).get(d)
        if said is not None and value[d] is not None and said != value[d]:
            return f"rubric {d} is {said}, the record's {d} is {value[d]}"
    return None


def _check_thumbnails(folder: Path, named: set, stated: dict, report, sub: str = "thumbs") -> None:
    """Every named thumbnail (``sub`` previews: preview) a regular file within the bound, named
    by its sha256; nothing else in ``sub/``; the count, bytes and sha256 as the manifest
    states."""
    what = "thumbnail" if sub == "thumbs" else "preview"
    h, total = hashlib.sha256(), 0
    for rel in sorted(named):
        try:
            data = read_bytes(folder / rel, stated["max_bytes"])
        except OSError as exc:
            report.fail(CHECK, f"{what} {rel}: {exc.strerror or exc}", file=rel)
            continue
        digest = hashlib.sha256(data).hexdigest()
        if not rel.endswith(f"/{digest[:32]}.webp"):
            report.fail(
                CHECK,
                f"{what} {rel}: its name is not its sha256's first 32 hex digits ({digest[:32]})",
                file=rel,
            )
        total += len(data)
        h.update(f"{digest}  {rel}\n".encode())
    thumbs = folder / sub
    extra = sorted({f"{sub}/{n}" for n in os.listdir(thumbs)} - named) if thumbs.is_dir() else []
    if extra:
        report.fail(
            CHECK,
            f"{sub}/ holds {len(extra)} file(s) {NAME} does not name, e.g. {excerpt(extra[0], 80)}",
            file=extra[0],
        )
    got = {"n_files": len(named), "bytes": total, "sha256": h.hexdigest()}
    for key, value in got.items():
        if stated[key] != value:
            key_path = f"/{'thumbnails' if sub == 'thumbs' else sub}/{key}"
            report.fail(
                CHECK,
                f"manifest.json {key_path} is {excerpt(stated[key], 70)}, the {what}s give {value}",
                file="manifest.json",
            )
