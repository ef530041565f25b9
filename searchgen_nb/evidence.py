"""Prompt evidence (data contract, § Prompt evidence and thumbnails): per prompt its text and
checklist, per prompt × model pair the judge's checklist and rubric scores and reasons from the
result's ``parsed`` answer, a bounded thumbnail and preview; every string bounded, in visible
characters."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import pickle
import tempfile
import warnings
from pathlib import Path

import numpy as np

from searchgen_nb.artifacts import write_jsonl
from searchgen_nb.declaration import GENERIC_RUBRIC
from searchgen_nb.numeric import mean_raw
from searchgen_nb.untrusted import shown

EVIDENCE = "prompt_evidence.jsonl"
#: The thumbnails' and previews' folders; each file is named by the first NAME_HEX hex digits of
#: its sha256.
THUMBS, PREVIEWS, NAME_HEX = "thumbs", "previews", 32
#: Bounds of the untrusted text kept: characters of a prompt text, of a checklist item or a
#: rubric dimension's name; items or dimensions per prompt or pair.
TEXT_MAX, ITEM_MAX, NAME_MAX, ITEMS_MAX = 2000, 300, 64, 64
#: Characters of one of the judge's reasons (a checklist item's, a dimension's, a reference's).
REASON_MAX = 1000
#: The judge's reference evaluations whose reasons are kept.
REFERENCES = ("visual_reference_evaluation", "text_reference_evaluation")
#: A thumbnail: at most this many bytes and pixels a side; an image read at most IMAGE_MAX bytes
#: and PIXELS_MAX pixels (a decompression bomb is skipped, never decoded).
THUMB_BYTES, THUMB_PX, IMAGE_MAX, PIXELS_MAX = 16_384, 160, 64 << 20, 50_000_000
#: A preview, the image at a size one can judge: at most this many bytes and pixels a side.
PREVIEW_BYTES, PREVIEW_PX = 131_072, 512
#: Characters of an image's path below the results' root (evidence.image_base_url).
PATH_MAX = 1024
_PROMPT_KEYS = ("user_prompt", "prompt")
_ITEM_KEYS = ("item", "question", "text")


def clip(text: object, limit: int) -> str:
    """``text`` (a string) in visible characters, at most ``limit`` characters as stored: a
    longer one is cut before the character or escape (``\\n``, ``\\u200b``) that would pass
    ``limit - 1`` and ends with "…" (data contract, § Prompt evidence and thumbnails)."""
    text = text if isinstance(text, str) else ""
    if text[:limit].isprintable():  # the common case: every character is one piece
        return text if len(text) <= limit else text[: limit - 1] + "…"
    pieces = [shown(c) for c in text[:limit]]  # each piece at least one character
    if len(text) <= limit and sum(map(len, pieces)) <= limit:
        return "".join(pieces)
    kept, n = [], 0
    for piece in pieces:
        if n + len(piece) > limit - 1:
            break
        kept.append(piece)
        n += len(piece)
    return "".join(kept) + "…"


def _score(value: object) -> float | None:
    """A judge's score as a float in 0–3, None when not a number there ("", "N/A", null)."""
    if (type(value) is float or type(value) is int) and 0 <= value <= 3:  # the common case
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and 0 <= value <= 3 else None


def _item_text(entry: object) -> str:
    if isinstance(entry, dict):
        for k in _ITEM_KEYS:
            if isinstance(text := entry.get(k), str):
                return clip(text, ITEM_MAX)
        return ""
    return clip(entry, ITEM_MAX)  # a string, else ""


def _reason(entry: object) -> dict:
    """``{"reason": text}`` of a judged entry whose ``reason`` is a string (bounded), else {}."""
    said = entry.get("reason") if isinstance(entry, dict) else None
    return {"reason": clip(said, REASON_MAX)} if isinstance(said, str) else {}


def _item(entry: object) -> dict:
    """One judged checklist item: its text, score (None unless a number in 0–3) and reason."""
    if not isinstance(entry, dict):
        return {"item": _item_text(entry), "score": None}
    out = {"item": _item_text(entry), "score": _score(entry.get("score"))}
    if isinstance(reason := entry.get("reason"), str):
        out["reason"] = clip(reason, REASON_MAX)
    return out


def pair_evidence(result: dict) -> dict | None:
    """The judge's ``checklist`` (``[{item, score, reason}]``), ``rubric`` (``{dimension:
    score}``) and reasons (``rubric_reasons``: ``{dimension: text}``, ``reference_reasons``:
    ``{visual_reference_evaluation|text_reference_evaluation: text}``) of one parsed result
    file, from its ``parsed`` answer; None without one."""
    parsed = result.get("parsed")
    if not isinstance(parsed, dict):
        return None
    out: dict = {}
    if isinstance(items := parsed.get("checklist_scores"), list):
        out["checklist"] = [_item(e) for e in items[:ITEMS_MAX]]
    if isinstance(rubric := parsed.get("rubric_scores"), dict):
        out["rubric"], said = {}, {}
        for k, v in list(rubric.items())[:ITEMS_MAX]:
            name, judged = clip(k, NAME_MAX), isinstance(v, dict)
            out["rubric"][name] = _score(v.get("score") if judged else v)
            if judged and isinstance(reason := v.get("reason"), str):
                said[name] = clip(reason, REASON_MAX)
        out.update({"rubric_reasons": said} if said else {})
    said = {r: t for r in REFERENCES if (t := _reason(parsed.get(r)).get("reason")) is not None}
    out.update({"reference_reasons": said} if said else {})
    return out or None


def agrees(evidence: dict, components: dict) -> bool:
    """Whether the judge's answer gives the pair's components where both say a number: the
    mean of the checklist items (every item scored), each generic rubric dimension."""
    scores = [e["score"] for e in evidence.get("checklist", ())]
    if scores and None not in scores and components.get("checklist") is not None:
        if mean_raw(scores) != components["checklist"]:
            return False
    rubric = evidence.get("rubric", {})
    return all(
        rubric.get(d) is None or components.get(d) is None or rubric[d] == components[d]
        for d in GENERIC_RUBRIC
    )


def prompt_text(row: dict) -> dict:
    """A metadata line's ``{"text", "checklist"}``: ``user_prompt`` (else ``prompt``; None when
    neither is a string) and the ``checklist`` item texts (``[]`` without a list), bounded."""
    text = next((row[k] for k in _PROMPT_KEYS if isinstance(row.get(k), str)), None)
    items = row.get("checklist")
    items = [_item_text(e) for e in items[:ITEMS_MAX]] if isinstance(items, list) else []
    return {"text": None if text is None else clip(text, TEXT_MAX), "checklist": items}


def texts_sha256(texts: list[dict]) -> str:
    """``manifest.json``'s ``dataset.texts_sha256``: sha256 over one sorted-key JSON line
    ``{sample_id, text, checklist}`` per prompt (``texts``, in ``prompt_scores.jsonl``'s order)
    as the evidence stores them (data contract, § Prompt evidence and thumbnails)."""
    h = hashlib.sha256()
    for t in texts:
        doc = {"sample_id": t["sample_id"], "text": t["text"], "checklist": t["checklist"]}
        h.update(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


class ThumbnailError(ValueError):
    """An image that gives no thumbnail within the bounds (the reason names what)."""


#: What each distinct image is made into, in one decode: ``(folder, pixels a side, bytes at
#: most, WebP qualities tried in order)``; the first is the pair's thumbnail, the second its
#: preview.
WEBP_QUALITIES, PREVIEW_QUALITIES = (75, 50, 25), (80, 60, 40)
TARGETS = (
    (THUMBS, THUMB_PX, THUMB_BYTES, WEBP_QUALITIES),
    (PREVIEWS, PREVIEW_PX, PREVIEW_BYTES, PREVIEW_QUALITIES),
)
#: Pillow's reducing gap and the WebP method of an image that fits the largest size (the
#: demo's) and of one that is larger (a generated image): reduced by the whole factor that keeps
#: it at least that size, then resampled, and encoded at WebP's quickest method.
SMALL_WAY, LARGE_WAY = (2.0, 4), (1.0, 0)

#: What :func:`renditions` makes by default: every target but its folder.
SIZES = tuple(t[1:] for t in TARGETS)


def renditions(data: bytes, sizes=SIZES) -> list[bytes]:
    """One image's bytes decoded once into a WebP per ``(pixels a side, bytes at most[, WebP
    qualities])`` of ``sizes`` (qualities: :data:`WEBP_QUALITIES` unless given), in the order of
    ``sizes``. The image is decoded for the largest size (a JPEG at the smallest scale that
    covers it: Pillow's ``draft``), in RGB; each size is made by Pillow's ``thumbnail`` from the
    next larger one's result, the largest from the image; the reducing gap and WebP method are
    :data:`SMALL_WAY`'s, or :data:`LARGE_WAY`'s when the image is larger than the largest size.
    Raises :class:`ThumbnailError` for what cannot be read or bounded (data contract, § Prompt
    evidence and thumbnails)."""
    order = sorted(range(len(sizes)), key=lambda n: -sizes[n][0])
    image = _readable(_decoded, data, sizes[order[0]][0])
    gap, method = LARGE_WAY if max(image.size) > sizes[order[0]][0] else SMALL_WAY
    made: dict[int, bytes] = {}
    for n in order:
        px, limit, *qualities = sizes[n]
        _readable(image.thumbnail, (px, px), reducing_gap=gap)
        made[n] = _webp(image, limit, qualities[0] if qualities else WEBP_QUALITIES, method)
    return [made[n] for n in range(len(sizes))]


def _readable(step, *args, **kwargs):
    """``step(*args, **kwargs)`` with Pillow's refusals (a decompression bomb's warning among
    them) as :class:`ThumbnailError`."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            return step(*args, **kwargs)
    except ThumbnailError:
        raise
    except Exception as exc:  # Pillow's many ways to refuse a file
        raise ThumbnailError(f"not a readable image ({type(exc).__name__})") from None


def _decoded(data: bytes, px: int):
    """The image of ``data`` drafted for ``px`` a side, decoded in RGB (an RGB image as it was
    decoded: a copy of its pixels would cost about a fifth of the image's work)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        if im.width * im.height > PIXELS_MAX:
            raise ThumbnailError(f"{im.width}×{im.height} pixels, at most {PIXELS_MAX}")
        im.draft("RGB", (px, px))
        im.load()
        return im if im.mode == "RGB" else im.convert("RGB")


def _webp(small, limit: int, qualities: tuple[int, ...], method: int) -> bytes:
    for quality in qualities:
        buf = io.BytesIO()
        small.save(buf, "WEBP", quality=quality, method=method)
        if buf.tell() <= limit:
            return buf.getvalue()
    raise ThumbnailError(f"no WebP within {limit} bytes")


def thumbnail(data: bytes) -> bytes:
    """A WebP of at most :data:`THUMB_PX` a side and :data:`THUMB_BYTES` bytes of one image's
    bytes, as :func:`renditions` makes it; :class:`ThumbnailError` for what cannot be read or
    bounded."""
    return renditions(data)[0]


def preview(data: bytes) -> bytes:
    """A WebP of at most :data:`PREVIEW_PX` a side and :data:`PREVIEW_BYTES` bytes of one
    image's bytes (the size one can judge it at), as :func:`renditions` makes it;
    :class:`ThumbnailError` as :func:`thumbnail`."""
    return renditions(data)[1]


class PairEvidenceStore:
    """The judge's answers (:func:`pair_evidence`) of the pairs read, held in an anonymous
    temporary file until ``prompt_evidence.jsonl`` is written: at a million pairs they are
    gigabytes as Python objects. ``shape``: (models, prompts); :meth:`add` an answer as
    :meth:`pack` made it (a worker process packs, the command stores), :meth:`get` by ``(model
    index, prompt index)``, None for a pair without one; :meth:`close` frees the file."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self.file = tempfile.TemporaryFile()
        self.at = np.zeros((*shape, 2), dtype=np.int64)  # (offset, length); length 0: none
        self.end, self.flushed = 0, True

    @staticmethod
    def pack(evidence: dict) -> bytes:
        """An answer as bytes for :meth:`add`."""
        return pickle.dumps(evidence, protocol=pickle.HIGHEST_PROTOCOL)

    def add(self, key: tuple[int, int], packed: bytes) -> None:
        """Store the answer of pair ``key`` (:meth:`pack`'s bytes)."""
        self.file.write(packed)
        self.flushed = False
        self.at[key] = self.end, len(packed)
        self.end += len(packed)

    def get(self, key: tuple[int, int]) -> dict | None:
        """The answer of pair ``key``, or None."""
        offset, length = self.at[key].tolist()
        if not length:
            return None
        if not self.flushed:
            self.file.flush()
            self.flushed = True
        # written by add() in this run; read in place (a get moves no file position)
        return pickle.loads(os.pread(self.file.fileno(), length, offset))

    def close(self) -> None:
        self.file.close()


def write_evidence(texts: dict, table, pairs: PairEvidenceStore, folder: Path, images: dict) -> str:
    """Write ``prompt_evidence.jsonl`` (a line per prompt of ``table``; ``texts``: ``sample_id
    ->`` :func:`prompt_text`, from the one read of the metadata; ``pairs``: the
    :class:`PairEvidenceStore` of the pairs' :func:`pair_evidence`; ``images``: ``(model index,
    prompt index) ->`` the pair's ``thumbnail``, ``preview`` and ``image`` paths) into
    ``folder``; return its sha256."""

    def lines():
        for i, prompt in enumerate(table.prompts):
            sid, models = prompt["sample_id"], {}
            for k, m in enumerate(table.model_ids):
                entry = {**(pairs.get((k, i)) or {}), **images.get((k, i), {})}
                if entry:
                    models[m] = entry
            text = texts.get(sid, {"text": None, "checklist": []})
            yield {"sample_id": sid, **text, "models": models}

    return write_jsonl(Path(folder) / EVIDENCE, lines())
