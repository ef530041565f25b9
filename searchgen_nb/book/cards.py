"""The prompt card (data contract, § Prompt evidence and thumbnails): one page,
``book/prompt_card.html?id=<sample_id>[&tag=<tag>]``, drawn by the book's script from data files
written beside the book at release time (``_build/html/evidence/``): ``shard-<n>.js`` holding
:data:`SHARD` prompts each (what a card shows: text, tags, per model status and reason, the ten
components, Overall-9/10, the judge's checklist and rubric, the thumbnail) and the thumbnails.
A page loads one shard by ``<script src>`` (no ``fetch``: a book opened from disk may not), and
the script writes every string with ``textContent``: nothing read is markup."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path
from urllib.parse import quote

from searchgen_nb.book.views import Release
from searchgen_nb.constants import COMPONENT_LABELS, COMPONENTS
from searchgen_nb.evidence import EVIDENCE, THUMBS
from searchgen_nb.files import read_lines
from searchgen_nb.numeric import to_public

#: Folder of the card's data below the built book's root, and prompts per data file.
FOLDER, SHARD = "evidence", 32
#: The card's page as seen from an executed notebook.
CARD = "../prompt_card.html"
#: The prompt texts (``texts.js``: sample_id → text) for the explorer's search, from its page.
TEXTS_SCRIPT = f'<script src="../../{FOLDER}/texts.js"></script>'


def card_href(sample_id: str, page: str = CARD) -> str:
    """The card of one prompt (``page``: the card's address from the linking page)."""
    return f"{page}?id={quote(sample_id, safe='')}"


def card_links(frame) -> dict | None:
    """``row_links`` of a prompt list (a frame with a ``sample_id`` column): each prompt's card."""
    if "sample_id" not in getattr(frame, "columns", ()):
        return None
    return {"sample_id": [card_href(s) for s in frame["sample_id"]]}


def evidence(release: Release) -> dict[str, dict]:
    """The release's ``prompt_evidence.jsonl`` by sample_id (empty in a release without it)."""
    path = release.folder / EVIDENCE
    lines = map(json.loads, read_lines(path)) if path.is_file() else ()
    return {p["sample_id"]: p for p in lines}


def _public(raw: float | None, decimals: int) -> float | None:
    return None if raw is None else to_public(Fraction(raw), decimals)


def _pair(entry: dict, said: dict, decimals: int) -> dict:
    comps = entry["components_raw_0to3"]
    return {
        "status": entry["status"], "reason": entry.get("error"),
        "components": [_public(comps[c], decimals) for c in COMPONENTS],
        "overall_9": _public(entry["overall_9_raw"], decimals),
        "overall_10": _public(entry["overall_10_raw"], decimals),
        "checklist": [[e["item"], e["score"]] for e in said.get("checklist", ())],
        "rubric": sorted(said.get("rubric", {}).items()),
        "thumbnail": said.get("thumbnail"),
    }  # fmt: skip


def card_data(release: Release) -> list[dict]:
    """One dict per prompt (sample_id order): what its card shows."""
    shown = evidence(release)
    tests = {name: release.in_slice(name) for name in release.slices}
    out = []
    for r in release.all_records:
        ev = shown.get(r["sample_id"], {})
        models = ev.get("models", {})
        out.append({
            "id": r["sample_id"], "stratum": r["search_type"], "domains": r["domains"],
            "failure_modes": r["failure_modes"],
            "slices": [n for n, test in tests.items() if test(r)],
            "text": ev.get("text"), "checklist": ev.get("checklist", []),
            "models": {m: _pair(r["models"][m], models.get(m, {}), release.decimals)
                       for m in release.model_order},
        })  # fmt: skip
    return out


def _script(key: object, value: object) -> str:
    """A data file: ``value`` as JSON (ASCII: nothing read can end the script) under ``key``."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return f"(window.SGEvidence=window.SGEvidence||{{}})[{json.dumps(key)}]={text};\n"


def write_card_assets(data_dir: Path, dest: Path) -> None:
    """Write the card's data files into ``dest`` (the built book's :data:`FOLDER`): ``index.js``
    (which file holds each prompt, the models, the ten components' names, the manifest's
    thumbnails summary), ``shard-<n>.js``, and a copy of the thumbnails."""
    dest, release = Path(dest), Release(Path(data_dir))
    dest.mkdir(parents=True, exist_ok=True)
    cards = card_data(release)
    for n in range(0, len(cards), SHARD):
        (dest / f"shard-{n // SHARD}.js").write_text(_script(n // SHARD, cards[n : n + SHARD]),
                                                     encoding="utf-8")
    index = {
        "shards": {c["id"]: i // SHARD for i, c in enumerate(cards)},
        "models": [[m, release.display_name(m)] for m in release.model_order],
        "policies": release.policies,  # how a pair without a score counts (statuses as they count)
        "decimals": release.decimals,
        "components": [COMPONENT_LABELS[c] for c in COMPONENTS],
        "thumbnails": release.manifest.get("thumbnails"),
    }  # fmt: skip
    (dest / "index.js").write_text(_script("index", index), encoding="utf-8")
    texts = {c["id"]: c["text"][:300] for c in cards if c["text"]}
    (dest / "texts.js").write_text(_script("texts", texts), encoding="utf-8")
    if (Path(data_dir) / THUMBS).is_dir():
        shutil.copytree(Path(data_dir) / THUMBS, dest / THUMBS, dirs_exist_ok=True)
