"""The Markdown summary of a ``changes.json``: the text of ``searchgen-nb diff`` and of the
book's "What changed" page (data contract, § Changes between releases)."""

from __future__ import annotations

from decimal import Decimal

from searchgen_nb.declaration import BENCHMARK, PARTITION
from searchgen_nb.numeric import RAW_DECIMALS, figure_text
from searchgen_nb.untrusted import md_code, md_text

TITLE = "## What changed"
#: Kinds whose groups are named alone ("NoSearch"): the partition's, whose names say their kind.
_NAMED_ALONE = frozenset(k.kind for k in BENCHMARK.group_kinds if k.source == PARTITION)
#: At most this many groups of a model, prompts of a fact, are named (then "and N more").
MAX_GROUPS, MAX_PROMPTS = 8, 10


def score_changed(cell: dict) -> bool:
    """Whether a ``groups`` cell of ``changes.json`` is a change of Overall-9."""
    if cell["delta"] is None:
        return cell["overall_9_before"] != cell["overall_9_after"]
    return cell["delta"] != 0


def _raw(x: float | None) -> str:
    """A raw 0–3 Overall-9 at :data:`RAW_DECIMALS` places, trailing zeros dropped ("2.0")."""
    if x is None:
        return "null"
    text = figure_text(x, RAW_DECIMALS).rstrip("0")
    return text + "0" if text.endswith(".") else text


def _group_label(key: str, table: bool = False) -> str:
    """The group's name as Markdown text (its tag, slice or breakdown value escaped) after its
    kind's words (``failure mode text``, ``difficulty hard``); a stratum's alone (``NoSearch``)."""
    kind, _, name = key.partition(":")
    if kind == "all":
        return "All"
    words = "" if kind in _NAMED_ALONE else md_text(kind.replace("_", " "), table) + " "
    return words + md_text(name, table)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _listed(texts: list[str], limit: int = MAX_PROMPTS) -> str:
    """The first ``limit`` texts, then how many more."""
    more = f" and {len(texts) - limit} more" if len(texts) > limit else ""
    return ", ".join(texts[:limit]) + more


def _by_size(item: tuple[str, dict]) -> tuple:
    """A group's change: largest first, then by group."""
    return -abs(item[1]["delta"] or 0), item[0]


def _has(cells: dict, side: str) -> bool:
    """Whether a group has a value or a rank on one side (``before``/``after``)."""
    return any(c[f"overall_9_{side}"] is not None or c[f"rank_{side}"] is not None
               for c in cells.values())  # fmt: skip


def _arrow(c: dict) -> str:
    b, a = c["rank_before"], c["rank_after"]
    if b is None or a is None:
        return f"{md_text(b or 'unranked')} → {md_text(a or 'unranked')}"
    return f"{md_text(b)} → {md_text(a)} {'↑' if a < b else '↓'}"


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def markdown(
    ch: dict, names: dict | None = None, policies: dict | None = None, decimals: int = 1
) -> str:
    """The change as Markdown for a pull-request description: the headline facts first, then
    tables; nothing is said about what did not change. ``policies``: each model's missing
    policy, to say how a result without a score counts; ``decimals``: the new release's
    ``rounding_decimals``, the places of every 0–100 figure."""
    names = names or {}

    def fmt(x: float | None, signed: bool = False) -> str:
        return figure_text(x, decimals, sign=signed)

    def who(m: str) -> str:
        return f"**{md_text(names[m])}** ({md_code(m)})" if names.get(m, m) != m else md_code(m)

    if ch["first_release"]:
        first = "This is the first release: there is no previous release to compare with."
        return f"{TITLE}\n\n{first}\n"
    both = {k for k, c in ch["groups"].items() if _has(c, "before") and _has(c, "after")}
    changed: dict[str, list[tuple[str, dict]]] = {}
    for key, cells in ch["groups"].items():
        for m, c in cells.items():
            if key in both and score_changed(c):
                changed.setdefault(m, []).append((key, c))
    facts = [
        *_roster_facts(ch, who),
        *_score_facts(ch, changed, who, fmt),
        *_rank_facts(ch, both, changed, who),
        *_pair_facts(ch, who, policies or {}),
    ]
    nothing = ["- Nothing changed: same models, prompts, statuses and scores."]
    return "\n".join([TITLE, "", *(facts or nothing), *_tables(ch, changed, names, fmt)]) + "\n"


def _roster_facts(ch: dict, who) -> list[str]:
    """Models and prompts added or removed, model and prompt metadata changed."""
    mo, pr = ch["models"], ch["prompts"]
    lines = []
    if mo["added"]:
        lines.append(f"- Models added: {', '.join(who(m) for m in mo['added'])}")
    if mo["removed"]:
        lines.append(f"- Models removed: {', '.join(md_code(m) for m in mo['removed'])}")
    for c in mo.get("changed", []):
        fields = (f"{md_text(f.replace('_', ' '))} {md_text(a)} → {md_text(b)}"
                  for f, (a, b) in c["fields"].items())  # fmt: skip
        lines.append(f"- {who(c['model_id'])}: " + "; ".join(fields))
    for label in ("added", "removed"):
        if pr[label]:
            shown = _listed([md_code(s) for s in pr[label]])
            lines.append(f"- {_plural(len(pr[label]), 'prompt')} {label}: {shown}")
    retagged = [f"{md_code(c['sample_id'])} ({', '.join(map(md_text, c['fields']))})"
                for c in pr["metadata_changed"]]  # fmt: skip
    if retagged:
        lines.append(f"- {len(retagged)} prompt(s) with changed metadata: {_listed(retagged)}")
    return lines


def _score_facts(ch: dict, changed: dict, who, fmt) -> list[str]:
    """Per model with a changed Overall-9: in how many groups, All with its paired interval,
    then the largest changes."""
    boot = ch.get("paired_bootstrap") or {}
    lines = []
    for m in sorted(changed):
        cells = dict(changed[m])
        head = f"- {who(m)}: Overall-9 changed in {_plural(len(cells), 'group')}"
        if c := cells.pop("all:All", None):
            ci = (boot.get("models", {}).get(m) or {}).get("ci")
            if ci:
                conf = f"{Decimal(repr(boot['confidence'])) * 100:f}".rstrip("0").rstrip(".")
                ci = f"; paired {conf}% interval {fmt(ci[0], True)} to {fmt(ci[1], True)} on the "
                ci += f"{boot['n_common_prompts']} common prompts"
            before, after = fmt(c["overall_9_before"]), fmt(c["overall_9_after"])
            head += f"; All {before} → {after} ({fmt(c['delta'], True)}{ci or ''})"
        if others := sorted(cells.items(), key=_by_size):
            shown = [f"{_group_label(k)} {fmt(c['delta'], True)}" for k, c in others]
            head += ": " + _listed(shown, MAX_GROUPS)
        lines.append(head)
    return lines


def _rank_facts(ch: dict, both: set, changed: dict, who) -> list[str]:
    """Per group, the rank moves of the models whose score changed there, then the models that
    only moved with them (nothing of theirs changed), each named with its move."""
    lines, changed_in = [], {m: {k for k, _ in cells} for m, cells in changed.items()}
    for key in [k for k in ch["groups"] if k in both]:
        moves = [(m, c) for m, c in ch["groups"][key].items()
                 if c["rank_before"] != c["rank_after"]]  # fmt: skip
        named = [(m, c) for m, c in moves if key in changed_in.get(m, ())]
        if named:
            named.sort(key=lambda mc: mc[1]["rank_after"] or 1e9)
            shown = ", ".join(f"{who(m)} {_arrow(c)}" for m, c in named)
            others = sorted(
                (mc for mc in moves if mc not in named),
                key=lambda mc: (mc[1]["rank_after"] or 1e9, mc[0]),
            )
            more = "; moved with it: " + ", ".join(f"{who(m)} {_arrow(c)}" for m, c in others)
            more = more if others else ""
            lines.append(f"- Rank change in {_group_label(key)}: {shown}{more}")
    return lines


def counts_as(status: str, policy: str | None) -> str:
    """How a pair enters the means (data contract, § Aggregation over a group of prompts):
    ``value`` (scored), ``0`` (``zero_fill``), ``excluded`` (``exclude``), ``""`` (unknown)."""
    if status == "scored":
        return "value"
    return {"zero_fill": "0", "exclude": "excluded"}.get(policy or "", "")


def status_text(status: str, policy: str | None) -> str:
    """A status by name; not scored: "(counts 0)" or "(excluded)" by the missing policy."""
    how = {"0": " (counts 0)", "excluded": " (excluded)"}.get(counts_as(status, policy), "")
    return status.replace("_", " ") + how


def _pair_facts(ch: dict, who, policies: dict) -> list[str]:
    """Status transitions with their prompts, then per model the scored prompts that moved."""
    transitions: dict[tuple[str, str, str], list[str]] = {}
    score_only: dict[str, list[dict]] = {}
    for p in ch["pairs"]:
        if p["status_before"] != p["status_after"]:
            key = (p["model_id"], p["status_before"], p["status_after"])
            transitions.setdefault(key, []).append(p["sample_id"])
        else:
            score_only.setdefault(p["model_id"], []).append(p)
    lines = []
    for (m, a, b), sids in sorted(transitions.items()):
        a, b = (md_text(status_text(s, policies.get(m))) for s in (a, b))
        shown = _listed([md_code(s) for s in sids])
        lines.append(f"- {who(m)}: {_plural(len(sids), 'result')} {a} → {b}: {shown}")
    for m, ps in sorted(score_only.items()):
        lower = sum(1 for p in ps if (p["overall_9_after"] or 0) < (p["overall_9_before"] or 0))
        moved = f"{_plural(len(ps), 'scored prompt')} changed ({lower} lower, {len(ps) - lower}"
        lines.append(f"- {who(m)}: Overall-9 of {moved} higher)")
    return lines


def _tables(ch: dict, changed: dict, names: dict, fmt) -> list[str]:
    """The tables of score changes and of prompt × model changes."""
    lines = []
    if changed:
        head: tuple[str, ...] = (
            "group",
            "model",
            "Overall-9 before (0–100)",
            "after (0–100)",
            "Δ (0–100)",
            "rank before",
            "rank after",
        )
        lines += ["", "### Score changes", "", _row(*head), "|---|---|---:|---:|---:|---:|---:|"]
        for m in sorted(changed):
            for key, c in sorted(changed[m], key=lambda kc: (kc[0] != "all:All", *_by_size(kc))):
                values = (fmt(c["overall_9_before"]), fmt(c["overall_9_after"]))
                ranks = [c["rank_before"], c["rank_after"]]
                ranks = ["–" if r is None else md_text(r) for r in ranks]
                group, name = _group_label(key, True), md_text(names.get(m, m), True)
                lines.append(_row(group, name, *values, fmt(c["delta"], True), *ranks))
    if ch["pairs"]:
        head = (
            "model",
            "sample_id",
            "status before",
            "status after",
            "raw Overall-9 before (0–3)",
            "after (0–3)",
        )
        lines += ["", "### Prompt × model changes", "", _row(*head), "|---|---|---|---|---:|---:|"]
        for p in ch["pairs"]:
            name = names.get(p["model_id"], p["model_id"])
            who = (md_text(name, True), md_code(p["sample_id"], True))
            statuses = (md_text(p["status_before"], True), md_text(p["status_after"], True))
            scores = (_raw(p["overall_9_before"]), _raw(p["overall_9_after"]))
            lines.append(_row(*who, *statuses, *scores))
    return lines
