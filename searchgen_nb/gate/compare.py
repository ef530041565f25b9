"""The published leaderboards and ``uncertainty.json`` against the gate's recomputation, exactly:
each difference a failure naming the file, the group, the model (or pair) and the key."""

import json
from typing import Any

from searchgen_nb.constants import OVERALL_BOARD, UNCERTAINTY
from searchgen_nb.declaration import BOARD_PATTERN
from searchgen_nb.gate.columns import manifest_declaration
from searchgen_nb.gate.report import Report
from searchgen_nb.untrusted import excerpt

_SLICE_KINDS = ("overall", "strata", "domains", "failure_modes")


def board_names(manifest: Any) -> tuple[str, ...]:
    """``leaderboard_overall.json`` and the board of every group kind of the manifest's
    ``declaration`` (data contract, § The release gate); ``ValueError`` as
    :func:`manifest_declaration` raises it, or for a board's file name that is not one."""
    names = manifest_declaration(manifest).boards
    if bad := [n for n in names if not isinstance(n, str) or not BOARD_PATTERN.fullmatch(n)]:
        raise ValueError(f"declaration: {excerpt(bad[0], 80)} is not a board's file name")
    return (OVERALL_BOARD, *names)


def same(a, b) -> bool:
    """Equality that keeps null, 0, 0.0, -0.0 and False apart: the same JSON text."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _flat_slices(data: object) -> Any:
    """``leaderboard_by_slice.json`` as one mapping ``{"<slice> <kind> <group>": rows}`` (the
    overall list under ``"<slice> overall"``); anything that is not that shape unchanged."""
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        return data
    flat: dict[str, object] = {}
    for name, board in data.items():
        for kind in sorted(set(board) | set(_SLICE_KINDS)):
            part = board.get(kind, "<missing>")
            if kind == "overall" or not isinstance(part, dict):
                flat[f"{name} {kind}"] = part
            else:
                flat.update({f"{name} {kind} {g}": rows for g, rows in part.items()})
    return flat


def compare_board(name: str, want: Any, got: object, report: Report, check: str) -> None:
    """One leaderboard file, group by group, row by row, key by key."""
    if name == "leaderboard_overall.json":
        want, got = {"All": want}, {"All": got}
    elif name == "leaderboard_by_slice.json":
        want, got = _flat_slices(want), _flat_slices(got)
    if not isinstance(got, dict):
        report.fail(check, f"{name}: not a mapping of groups", file=name)
        return
    for g in sorted(set(want) | set(got)):
        where = {"file": name, "group": g}
        if g not in got:
            report.fail(check, f"{name}: group missing", **where)
        elif g not in want:
            report.fail(check, f"{name}: group has no prompt in prompt_scores.jsonl", **where)
        elif not isinstance(got[g], list):
            report.fail(check, f"{name}: group is not a list of rows", **where)
        else:
            _compare_rows(name, g, want[g], got[g], report, check)


def _compare_fields(want: dict, got: dict, prefix: str, report: Report, check: str, **where):
    """Fail ``check`` for every key of ``want`` whose value ``got`` does not hold."""
    for key, wv in want.items():
        gv = got.get(key, "<missing>")
        if not same(wv, gv):
            report.fail(
                check, f"{prefix}{key} is {json.dumps(gv)}, recomputed {json.dumps(wv)}", **where
            )


def _compare_rows(name: str, g: str, wrows: list, grows: list, report: Report, check: str) -> None:
    gby = {r.get("model_id"): r for r in grows if isinstance(r, dict)}
    wanted = [r["model_id"] for r in wrows]
    if wanted != [r.get("model_id") if isinstance(r, dict) else None for r in grows]:
        order = [r.get("model_id") for r in grows if isinstance(r, dict)]
        text = f"{name}: row order {order} differs from the recomputed ranking {wanted}"
        report.fail(check, text, file=name, group=g)
    for w in wrows:
        where = {"file": name, "group": g, "model_id": w["model_id"]}
        if w["model_id"] not in gby:
            report.fail(check, f"{name}: row missing", **where)
        else:
            _compare_fields(w, gby[w["model_id"]], f"{name}: ", report, check, **where)


def check_rows_null_vs_zero(boards: dict, report: Report) -> None:
    """In every row a component is null exactly when no value went into it (count 0), in every
    board of ``boards`` (``uncertainty.json`` aside)."""
    for name in (n for n in boards if n != UNCERTAINTY):
        groups = boards[name]
        if isinstance(groups, list):
            groups = {"All": groups}
        elif name == "leaderboard_by_slice.json":
            groups = _flat_slices(groups)
        for g, rows in groups.items():
            for r in rows:
                comps, counts = r.get("components", {}), r.get("component_counts", {})
                for c in sorted(set(comps) | set(counts)):
                    if (comps.get(c) is None) != (counts.get(c, 0) == 0):
                        text = (
                            f"{name}: {c} is {json.dumps(comps.get(c))} with component_counts"
                            f" {counts.get(c)} (null must mean no value, and only that)"
                        )
                        report.fail(
                            "null_zero_distinct",
                            text,
                            file=name,
                            group=g,
                            model_id=r.get("model_id"),
                        )


def compare_uncertainty(want: dict, got: object, report: Report) -> None:
    """Every figure of ``uncertainty.json`` against the recomputation, named by group, model
    (or pair) and key."""
    name, check = UNCERTAINTY, "uncertainty"
    if not isinstance(got, dict):
        report.fail(check, f"{name}: not a JSON object", file=name)
        return
    keys = sorted((set(want) | set(got)) - {"groups", "pairs"})
    top = {key: want.get(key, "<missing>") for key in keys}
    _compare_fields(top, got, f"{name}: ", report, check, file=name)
    groups, pairs = got.get("groups"), got.get("pairs")
    if not isinstance(groups, dict) or not isinstance(pairs, dict):
        report.fail(check, f"{name}: groups and pairs must be JSON objects", file=name)
        return
    for g in sorted(set(want["groups"]) | set(groups)):
        _compare_group(g, want["groups"].get(g), groups.get(g), report)
    for g in sorted(set(want["pairs"]) | set(pairs)):
        _compare_pairs(g, want["pairs"].get(g), pairs.get(g), report)


def _compare_group(g: str, w: dict | None, h: object, report: Report) -> None:
    name, check = UNCERTAINTY, "uncertainty"
    if w is None or not isinstance(h, dict):
        why = (
            "missing"
            if h is None
            else "is not an object"
            if w is not None
            else "not recomputed (no such group in prompt_scores.jsonl)"
        )
        report.fail(check, f"{name}: group {why}", file=name, group=g)
        return
    for m in sorted(set(w) | set(h)):
        where = {"file": name, "group": g, "model_id": m}
        if m not in w or not isinstance(h.get(m), dict):
            why = "missing" if m not in h else "unknown" if m not in w else "not an object"
            report.fail(check, f"{name}: model {why}", **where)
        else:
            _compare_fields(w[m], h[m], f"{name}: ", report, check, **where)


def _compare_pairs(g: str, w: list | None, h: object, report: Report) -> None:
    name, check = UNCERTAINTY, "uncertainty"
    if w is None or not isinstance(h, list):
        why = "missing" if h is None else "not expected" if w is None else "not a list"
        report.fail(check, f"{name}: pairs of the group {why}", file=name, group=g)
        return
    order = [(r.get("a"), r.get("b")) if isinstance(r, dict) else None for r in h]
    expected = [(r["a"], r["b"]) for r in w]
    if order != expected:
        first = next(
            (i for i, (x, y) in enumerate(zip(order, expected)) if x != y),
            min(len(order), len(expected)),
        )
        got_pair, want_pair = (order + ["nothing"])[first], (expected + ["nothing"])[first]
        report.fail(
            check,
            f"{name}: pairs must be the tested pairs of ranked models (data"
            " contract, § Uncertainty) in published rank order"
            f" ({len(expected)} pairs): entry {first + 1} is"
            f" {json.dumps(got_pair)}, expected {json.dumps(want_pair)}",
            file=name,
            group=g,
        )
        return
    for wr, hr in zip(w, h):
        pair = f"{wr['a']} vs {wr['b']}"
        _compare_fields(
            wr, hr, f"{name}: pair {pair}: ", report, check, file=name, group=g, model_id=pair
        )
