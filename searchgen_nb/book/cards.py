"""The prompt card (data contract, § Prompt evidence and thumbnails), ``book/prompt_card.html
?id=<sample_id>``, drawn from ``evidence/index.js`` and ``shard-<n>.js`` (loaded by ``<script
src>``: a book opened from disk may not ``fetch``), the thumbnails and the previews, written at
release time."""

from __future__ import annotations

import functools
import json
import shutil
from fractions import Fraction
from pathlib import Path
from urllib.parse import quote

from searchgen_nb.book.fmt import unscored_cell
from searchgen_nb.book.views import Release
from searchgen_nb.declaration import COMPONENT_LABELS, COMPONENTS
from searchgen_nb.evidence import EVIDENCE, PREVIEWS, THUMBS
from searchgen_nb.files import read_lines
from searchgen_nb.numeric import figure_text, to_public

FOLDER, SHARD = "evidence", 32  # the card's data below the built book's root; prompts per file
CARD = "../prompt_card.html"  # the card's page as seen from an executed notebook
#: The prompt texts (``texts.js``: sample_id → text) for the explorer's search, from its page.
TEXTS_SCRIPT = f'<script src="../../{FOLDER}/texts.js"></script>'


def card_href(sample_id: str) -> str:
    """The card of one prompt, as linked from an executed notebook."""
    return f"{CARD}?id={quote(sample_id, safe='')}"


def card_links(frame) -> dict | None:
    """``row_links`` of a frame with a ``sample_id`` column: each prompt's card (else None)."""
    if "sample_id" not in getattr(frame, "columns", ()):
        return None
    return {"sample_id": [card_href(s) for s in frame["sample_id"]]}


@functools.lru_cache(maxsize=4096)
def _public(raw: float | None, decimals: int) -> str:
    """The text of a raw 0–3 value's public 0–100 figure (N/A for None); a release's cards
    show a few thousand values a hundred thousand times."""
    return figure_text(None if raw is None else to_public(Fraction(raw), decimals), decimals)


def _pair(entry: dict, said: dict, release: Release, model_id: str) -> dict:
    comps, why = entry["components_raw_0to3"], said.get("rubric_reasons", {})
    decimals, status, policy = release.decimals, entry["status"], release.policies[model_id]
    return {
        "status": status,
        "counts": None if status == "scored" else unscored_cell(status, policy, entry.get("error")),
        "reason": entry.get("error"),
        "components": [_public(comps[c], decimals) for c in COMPONENTS],
        "overall_9": _public(entry["overall_9_raw"], decimals),
        "overall_10": _public(entry["overall_10_raw"], decimals),
        "checklist": [
            [e["item"], figure_text(e["score"], decimals), e.get("reason")]
            for e in said.get("checklist", ())
        ],
        "rubric": [
            [d, figure_text(v, decimals), why.get(d)]
            for d, v in sorted(said.get("rubric", {}).items())
        ],
        "references": [
            [r, figure_text(comps.get(r), decimals), text]
            for r, text in sorted(said.get("reference_reasons", {}).items())
        ],
        "thumbnail": said.get("thumbnail"),
        "preview": said.get("preview"),
        "image": said.get("image"),
    }


def _evidence(release: Release) -> dict[str, dict]:
    """``sample_id -> prompt_evidence.jsonl line`` of a release ({} without the file)."""
    path = release.folder / EVIDENCE
    return {p["sample_id"]: p for p in map(json.loads, read_lines(path))} if path.is_file() else {}


def prompt_texts(release: Release) -> dict[str, str | None]:
    """``sample_id -> text`` (bounded, in visible characters; None: none) of the evidence."""
    return {sid: p["text"] for sid, p in _evidence(release).items()}


def card_data(release: Release) -> list[dict]:
    """One dict per prompt (sample_id order): what its card shows (text, ``tags``: its groups
    of each :attr:`Release.tag_columns`, in the declaration's order), and per model
    status, how a pair not scored counts and is shown (:func:`fmt.unscored_cell`), reason,
    public 0–100 components, Overall-9/10, checklist and rubric as
    ``[name, raw 0–3 score, the judge's reason]``, the reference evaluations' reasons (with the
    raw score), thumbnail, preview, image path)."""
    shown, columns = _evidence(release), release.tag_columns
    out = []
    for r in release.all_records:
        ev, tags = shown.get(r["sample_id"], {}), release.prompt_tags(r)
        out.append(
            {
                "id": r["sample_id"],
                "tags": [tags[c.values] for c in columns],
                "text": ev.get("text"),
                "checklist": ev.get("checklist", []),
                "models": {
                    m: _pair(r["models"][m], ev.get("models", {}).get(m, {}), release, m)
                    for m in release.model_order
                },
            }
        )
    return out


def _size(n: int) -> str:
    """A file size: "1.3 MB" from a million bytes, else whole KB rounded up."""
    return f"{figure_text(Fraction(n, 10**6), 1)} MB" if n >= 10**6 else f"{-(-n // 1000)} KB"


def _each(meta: dict) -> str:
    kb = (Fraction(meta["max_bytes"], 1024) + Fraction(1, 2)).__floor__()
    return f"each at most {kb} KB, {meta['max_px']} px a side"


def weight_text(thumbnails: dict | None, previews: dict | None) -> str:
    """What the thumbnails and previews of a release weigh, as the card says it."""
    t, v = thumbnails, previews
    if not t or not t.get("enabled"):
        return "This release has no thumbnails (evidence: thumbnails: false)."
    text = f"Thumbnails of this release: {t['n_files']} files, {_size(t['bytes'])} in all"
    text += f" ({_each(t)})."
    if v and v.get("enabled"):
        text += f" Previews: {v['n_files']} files, {_size(v['bytes'])} in all ({_each(v)})."
    return text


def _script(key: object, value: object) -> str:
    """A data file: ``value`` as JSON (ASCII: nothing read can end the script) under ``key``."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return f"(window.SGEvidence=window.SGEvidence||{{}})[{json.dumps(key)}]={text};\n"


def write_card_assets(data_dir: Path, dest: Path) -> None:
    """Write into ``dest`` the card's ``index.js`` (each prompt's shard, the models, the
    components' names, the headings of its rows of tags, the manifest's thumbnails and
    previews and :func:`weight_text`), ``shard-<n>.js``, ``texts.js`` (the first 300 characters
    of each prompt) and a copy of the thumbnails and previews."""
    dest, release = Path(dest), Release(Path(data_dir))
    dest.mkdir(parents=True, exist_ok=True)
    cards = card_data(release)
    for n in range(0, len(cards), SHARD):
        (dest / f"shard-{n // SHARD}.js").write_text(
            _script(n // SHARD, cards[n : n + SHARD]), encoding="utf-8"
        )
    index = {
        "shards": {c["id"]: i // SHARD for i, c in enumerate(cards)},
        "models": [[m, release.display_name(m)] for m in release.model_order],
        "weight": weight_text(release.manifest.get("thumbnails"), release.manifest.get("previews")),
        "components": [COMPONENT_LABELS[c] for c in COMPONENTS],
        "tags": [c.label for c in release.tag_columns],
        "thumbnails": release.manifest.get("thumbnails"),
        "previews": release.manifest.get("previews"),
    }
    (dest / "index.js").write_text(_script("index", index), encoding="utf-8")
    texts = {c["id"]: c["text"][:300] for c in cards if c["text"]}
    (dest / "texts.js").write_text(_script("texts", texts), encoding="utf-8")
    for sub in (THUMBS, PREVIEWS):
        if (Path(data_dir) / sub).is_dir():
            shutil.copytree(Path(data_dir) / sub, dest / sub, dirs_exist_ok=True)
