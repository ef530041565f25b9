"""Prompt evidence (data contract, § Prompt evidence and thumbnails): per prompt its text and
checklist, per prompt × model pair the judge's checklist and rubric scores from the result's
``parsed`` answer and a bounded thumbnail; every string bounded, in visible characters."""

from __future__ import annotations

import io
import json
import math
import warnings
from pathlib import Path

from searchgen_nb.artifacts import write_jsonl
from searchgen_nb.constants import GENERIC_RUBRIC
from searchgen_nb.files import DATASET_MAX, read_bytes
from searchgen_nb.numeric import mean_raw
from searchgen_nb.untrusted import shown

EVIDENCE = "prompt_evidence.jsonl"
#: The thumbnails' folder; a thumbnail is named by the first NAME_HEX hex digits of its sha256.
THUMBS, NAME_HEX = "thumbs", 32
#: Bounds of the untrusted text kept: characters of a prompt text, of a checklist item or a
#: rubric dimension's name; items or dimensions per prompt or pair.
TEXT_MAX, ITEM_MAX, NAME_MAX, ITEMS_MAX = 2000, 300, 64, 64
#: A thumbnail: at most this many bytes and pixels a side; an image read at most IMAGE_MAX bytes
#: and PIXELS_MAX pixels (a decompression bomb is skipped, never decoded).
THUMB_BYTES, THUMB_PX, IMAGE_MAX, PIXELS_MAX = 16_384, 160, 64 << 20, 50_000_000
_PROMPT_KEYS = ("user_prompt", "prompt")
_ITEM_KEYS = ("item", "question", "text")


def clip(text: object, limit: int) -> str:
    """``text`` (a string) bounded to ``limit`` characters, in visible characters."""
    text = text if isinstance(text, str) else ""
    return shown(text if len(text) <= limit else text[: limit - 1] + "…")


def _score(value: object) -> float | None:
    """A judge's score as a float in 0–3, None when not a number there ("", "N/A", null)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and 0 <= value <= 3 else None


def _item_text(entry: object) -> str:
    if isinstance(entry, str):
        return clip(entry, ITEM_MAX)
    entry = entry if isinstance(entry, dict) else {}
    return clip(next((entry[k] for k in _ITEM_KEYS if isinstance(entry.get(k), str)), ""), ITEM_MAX)


def _item(entry: object) -> dict:
    """One judged checklist item: its text and score (None unless a number in 0–3)."""
    score = entry.get("score") if isinstance(entry, dict) else None
    return {"item": _item_text(entry), "score": _score(score)}


def pair_evidence(result: dict) -> dict | None:
    """The judge's ``checklist`` (``[{item, score}]``) and ``rubric`` (``{dimension: score}``)
    of one parsed result file, from its ``parsed`` answer; None without one."""
    parsed = result.get("parsed")
    if not isinstance(parsed, dict):
        return None
    out: dict = {}
    if isinstance(items := parsed.get("checklist_scores"), list):
        out["checklist"] = [_item(e) for e in items[:ITEMS_MAX]]
    if isinstance(rubric := parsed.get("rubric_scores"), dict):
        out["rubric"] = {clip(k, NAME_MAX): _score(v.get("score") if isinstance(v, dict) else v)
                         for k, v in list(rubric.items())[:ITEMS_MAX]}  # fmt: skip
    return out or None


def agrees(evidence: dict, components: dict) -> bool:
    """Whether the judge's answer gives the pair's components where both say a number: the
    mean of the checklist items (every item scored), each generic rubric dimension."""
    scores = [e["score"] for e in evidence.get("checklist", ())]
    if scores and None not in scores and components.get("checklist") is not None:
        if mean_raw(scores) != components["checklist"]:
            return False
    rubric = evidence.get("rubric", {})
    return all(rubric.get(d) is None or components.get(d) is None or rubric[d] == components[d]
               for d in GENERIC_RUBRIC)


def prompt_texts(path: Path) -> dict[str, dict]:
    """``sample_id -> {"text", "checklist"}`` of the metadata (already checked by
    :func:`~searchgen_nb.prompts.read_prompts`): ``user_prompt`` (or ``prompt``) and the
    ``checklist`` item texts, bounded; a line without them gives ``text`` None, ``[]``."""
    out = {}
    for raw in read_bytes(path, DATASET_MAX).split(b"\n"):
        if not isinstance(row := json.loads(raw) if raw.strip() else None, dict):
            continue
        text = next((row[k] for k in _PROMPT_KEYS if isinstance(row.get(k), str)), None)
        items = row.get("checklist")
        items = [_item_text(e) for e in items[:ITEMS_MAX]] if isinstance(items, list) else []
        out[row.get("sample_id", row.get("bench_id"))] = {
            "text": None if text is None else clip(text, TEXT_MAX), "checklist": items}
    return out


class ThumbnailError(ValueError):
    """An image that gives no thumbnail within the bounds (the reason names what)."""


#: What each distinct image is made into, in one decode: ``(folder, pixels a side, bytes at
#: most)``; the first is the pair's thumbnail. The WebP settings, tried in order of quality.
TARGETS = ((THUMBS, THUMB_PX, THUMB_BYTES),)
WEBP_QUALITIES, WEBP_METHOD = (75, 50, 25), 4


def renditions(data: bytes, sizes=tuple(t[1:] for t in TARGETS)) -> list[bytes]:
    """One image's bytes decoded once into a WebP per ``(pixels a side, bytes at most)`` of
    ``sizes``: a JPEG at the smallest scale that covers the largest size (Pillow's ``draft``),
    then Pillow's ``thumbnail`` per size (it reduces before resampling). Raises
    :class:`ThumbnailError` for what cannot be read or bounded (data contract, § Prompt evidence
    and thumbnails)."""
    from PIL import Image

    largest = max(px for px, _ in sizes)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                if im.width * im.height > PIXELS_MAX:
                    raise ThumbnailError(f"{im.width}×{im.height} pixels, at most {PIXELS_MAX}")
                im.draft("RGB", (largest, largest))
                rgb = im.convert("RGB")
            smalls = [rgb if n == len(sizes) - 1 else rgb.copy() for n in range(len(sizes))]
            for small, (px, _) in zip(smalls, sizes):
                small.thumbnail((px, px))
    except ThumbnailError:
        raise
    except Exception as exc:  # noqa: BLE001 - Pillow's many ways to refuse a file
        raise ThumbnailError(f"not a readable image ({type(exc).__name__})") from None
    return [_webp(small, limit) for small, (_, limit) in zip(smalls, sizes)]


def _webp(small, limit: int) -> bytes:
    for quality in WEBP_QUALITIES:
        buf = io.BytesIO()
        small.save(buf, "WEBP", quality=quality, method=WEBP_METHOD)
        if buf.tell() <= limit:
            return buf.getvalue()
    raise ThumbnailError(f"no WebP within {limit} bytes")


def thumbnail(data: bytes) -> bytes:
    """A WebP of at most :data:`THUMB_PX` a side and :data:`THUMB_BYTES` bytes of one image's
    bytes; :class:`ThumbnailError` for what cannot be read or bounded."""
    return renditions(data, ((THUMB_PX, THUMB_BYTES),))[0]


def write_evidence(dataset: Path, table, pairs: dict, folder: Path, thumbs: dict) -> str:
    """Write ``prompt_evidence.jsonl`` (a line per prompt of ``table``; ``pairs``: ``(model
    index, prompt index) ->`` :func:`pair_evidence`; ``thumbs``: the same key -> the pair's
    thumbnail path) into ``folder``; return its sha256."""
    texts = prompt_texts(dataset)

    def lines():
        for i, prompt in enumerate(table.prompts):
            sid, models = prompt["sample_id"], {}
            for k, m in enumerate(table.model_ids):
                entry = dict(pairs.get((k, i)) or {})
                entry.update({"thumbnail": thumbs[k, i]} if (k, i) in thumbs else {})
                if entry:
                    models[m] = entry
            text = texts.get(sid, {"text": None, "checklist": []})
            yield {"sample_id": sid, **text, "models": models}

    return write_jsonl(Path(folder) / EVIDENCE, lines())
