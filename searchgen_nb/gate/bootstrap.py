"""The gate's own recomputation of ``uncertainty.json`` from its columns and the manifest
(data contract, § Uncertainty: the stratified prompt bootstrap): a float within its error bound
of a decision is settled in fractions from that replicate's own draws."""

import json
import math
from collections.abc import Mapping
from fractions import Fraction
from functools import partial
from typing import Any, cast

import numpy as np

from searchgen_nb.constants import ALL_PAIRS_MAX_MODELS, PARTITION_KEYS
from searchgen_nb.gate.columns import PREFIX, breakdown_prompts, breakdowns, half_up, tag_groups

_LEAVES = ("NoSearch", "VisualSearch", "TextualSearch")
_SLICE_BYTES = 32 * 2**20  # draws of one slice of replicates of one stratum (int64)
_BLOCK_BYTES = 512 * 2**20  # replicate sums and values of the groups recomputed at once
_KINDS = ("overall_9", "overall_10")
_O9 = "overall_9"


class SettingsError(ValueError):
    """The manifest's ``config.uncertainty`` cannot say how the intervals were drawn."""


def _settings(manifest: dict) -> tuple[int, int, float]:
    """``(n_bootstrap, seed, confidence)`` of ``config.uncertainty``; :class:`SettingsError`
    naming the key that is missing or not a valid value."""
    config = manifest.get("config")
    cfg = config.get("uncertainty") if isinstance(config, dict) else None
    where = "manifest.json config.uncertainty"
    if not isinstance(cfg, dict):
        raise SettingsError(f"{where} is missing or not an object: the draws cannot be repeated")

    def whole(key: str, top: int) -> int:
        v = cfg.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= top:
            raise SettingsError(
                f"{where}.{key} is {json.dumps(v)}: expected a whole number in 0–{top}"
            )
        return v

    conf = cfg.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 < conf < 1:
        raise SettingsError(
            f"{where}.confidence is {json.dumps(conf)}: expected a number strictly between 0 and 1"
        )
    return whole("n_bootstrap", 100_000), whole("seed", 2**63 - 1), float(conf)


def _nth(frac: Fraction, n: int) -> int:
    """0-based index of the ⌈frac·n⌉-th smallest of n (1-based, at least the first)."""
    return max(math.ceil(frac * n), 1) - 1


def _tally(drawn: np.ndarray, by_prompt: bool = False) -> np.ndarray:
    """(rows, n_s) counts of each of n_s prompts in each row of draws (rows, n_s); ``by_prompt``:
    the same counts as (n_s, rows)."""
    rows, n_s = drawn.shape
    if by_prompt:
        cells = (drawn * rows + np.arange(rows)[:, None]).ravel()
        return np.bincount(cells, minlength=rows * n_s).reshape(n_s, rows)
    cells = (drawn + n_s * np.arange(rows)[:, None]).ravel()
    return np.bincount(cells, minlength=rows * n_s).reshape(rows, n_s)


def _groups(manifest: dict, cols, boards: dict, slice_prompts) -> list[tuple]:
    """``(key, prompt indices, published ranked (model_id, Overall-9) or None)`` per group."""

    def ranked(rows: list[dict]) -> list:
        return [(r["model_id"], r["overall_9"]) for r in rows if r["ranked"]]

    every = {
        key: np.array(idx, dtype=np.int64)
        for key, idx in tag_groups(cols, range(len(cols.prompts))).items()
    }
    by_stratum = boards["leaderboard_by_stratum.json"]
    out: list[tuple[str, np.ndarray, list | None]] = [
        ("all:All", every["strata", "All"], ranked(boards["leaderboard_overall.json"]))
    ]
    out += [(f"stratum:{s}", every["strata", s], ranked(by_stratum[s])) for s in PARTITION_KEYS]
    out += [(f"{PREFIX[key]}{t}", idx, None) for (key, t), idx in every.items() if key != "strata"]
    for name in manifest["published_slices"]:
        spec = manifest["evaluation_slices"]["named"][name]
        inside = np.array(slice_prompts(cols, spec), dtype=np.int64)
        rows = boards["leaderboard_by_slice.json"][name]["overall"]
        out.append((f"slice:{name}", inside, ranked(rows)))
    for kind in breakdowns(manifest):  # ranked like a slice (data contract, § Breakdowns)
        board = boards[kind.board]
        for value, idx in breakdown_prompts(cols, kind.fields[0]).items():
            key = f"{kind.uncertainty_prefix}{value}"
            out.append((key, np.array(idx, dtype=np.int64), ranked(board[value])))
    return out


class Recompute:
    """Every figure of ``uncertainty.json`` from the validator's columns."""

    def __init__(self, manifest: dict, cols, boards: dict, slice_prompts) -> None:
        self.n_boot, self.seed, self.confidence = _settings(manifest)
        self.alpha = 1 - Fraction(repr(self.confidence))
        self.ends_at = (self.alpha / 2, 1 - self.alpha / 2)
        self.dec = int(manifest["scoring"]["public_rounding_decimals"])
        self.models = list(manifest["model_order"])
        self.groups = _groups(manifest, cols, boards, slice_prompts)
        # per kind: each model's value (0 where not included) and inclusion 0/1, (M, n)
        scored = cols.status == 0
        zero = np.array(
            [manifest["models"][m]["missing_policy"] == "zero_fill" for m in self.models]
        )
        self.x, self.w = {}, {}
        for kind in _KINDS:
            c = cols.column[kind]
            has = scored & ~np.isnan(cols.values[:, :, c])
            self.x[kind] = np.where(has, cols.values[:, :, c], 0.0)
            self.w[kind] = (has | (zero[:, None] & ~scored)).astype(np.int64)
        # each leaf stratum's prompts, numbered in sample_id order (the columns' order)
        leaves = [[i for i, p in enumerate(cols.prompts) if p[1] == s] for s in _LEAVES]
        self.leaves = [np.array(members, dtype=np.int64) for members in leaves if members]
        self.states: dict[tuple[int, int], Mapping[str, Any]] = {}
        self._drawn: dict[int, tuple[int, np.ndarray]] = {}

    def _step(self, k: int) -> int:
        return max(1, _SLICE_BYTES // (8 * len(self.leaves[k])))

    def _sets(self, members: np.ndarray, block: range, rows: np.ndarray) -> list[tuple]:
        """``(positions or None, weights, groups)``: each distinct set of a stratum's prompts
        (``members``) that groups of ``block`` hold (their indices in it), by positions in the
        stratum (None: every prompt), with its columns of ``rows`` (columns, prompts)."""
        shared: dict[bytes, tuple[np.ndarray | None, list[int]]] = {}
        for g in block:
            pos = np.flatnonzero(np.isin(members, self.groups[g][1]))
            if len(pos):
                whole = None if len(pos) == len(members) else pos
                shared.setdefault(pos.tobytes(), (whole, []))[1].append(g - block.start)
        return [
            (pick, rows[:, members if pick is None else members[pick]], gs)
            for pick, gs in shared.values()
        ]

    def replicate_values(self, block: range | None = None) -> dict[str, np.ndarray]:
        """``{kind: float (len(block), B, M)}`` public-scale replicate values of the groups of
        ``block`` (default: every group), NaN where none; saves the generator's state at the
        start of every slice of every stratum."""
        m, block = len(self.models), range(len(self.groups)) if block is None else block
        yw = np.hstack([self.x[kind].T for kind in _KINDS] + [self.w[k].T for k in _KINDS])
        # each distinct column once (the inclusions of zero-fill models are alike), as a row
        distinct, slot = np.unique(yw, axis=1, return_inverse=True)
        rows = np.ascontiguousarray(distinct.T)  # (columns, prompts)
        sums = np.zeros((len(block), len(rows), self.n_boot))  # (groups, columns, B)
        rng = np.random.default_rng(self.seed)
        for k, members in enumerate(self.leaves):
            sets = self._sets(members, block, rows)
            for a in range(0, self.n_boot, self._step(k)):
                self.states[k, a] = rng.bit_generator.state
                size = (min(self._step(k), self.n_boot - a), len(members))
                drawn = rng.integers(0, len(members), size=size)
                counts = _tally(drawn, by_prompt=True).astype(np.float64)  # (prompts, replicates)
                for pick, w, gs in sets:
                    part = w @ (counts if pick is None else counts[pick])
                    for g in gs:
                        sums[g, :, a : a + size[0]] += part
        q = np.empty((len(block), self.n_boot, 2 * m))
        for g, s in enumerate(sums):
            s = s[slot.ravel()].T  # (B, 4m)
            with np.errstate(divide="ignore", invalid="ignore"):
                q[g] = np.where(s[:, 2 * m :] > 0, s[:, : 2 * m] / s[:, 2 * m :] * 100 / 3, np.nan)
        return {"overall_9": q[..., :m], "overall_10": q[..., m:]}

    def counts(self, reps: np.ndarray) -> np.ndarray:
        """int (len(reps), n): how often each of the replicates ``reps`` drew each prompt,
        drawn again from the saved states (the last slice of each stratum is kept)."""
        out = np.zeros((len(reps), self.x["overall_9"].shape[1]), dtype=np.int64)
        for k, members in enumerate(self.leaves):
            start = reps - reps % self._step(k)
            for a in np.unique(start).tolist():
                if self._drawn.get(k, (None,))[0] != a:
                    gen = np.random.Generator(np.random.PCG64())
                    gen.bit_generator.state = self.states[k, a]
                    size = (min(self._step(k), self.n_boot - a), len(members))
                    self._drawn[k] = (a, gen.integers(0, len(members), size=size))
                pick = np.flatnonzero(start == a)
                out[np.ix_(pick, members)] = _tally(self._drawn[k][1][reps[pick] - a])
        return out

    def exact(self, kind: str, g: int, m: int, pattern: tuple) -> Fraction | None:
        """The exact public-scale value of model m in group g in a replicate that drew the
        group's prompts ``pattern`` times each."""
        drawn = [
            (c, p) for c, p in zip(pattern, self.groups[g][1].tolist()) if c and self.w[kind][m, p]
        ]
        den = sum(c for c, _ in drawn)
        total = sum(c * Fraction(float(self.x[kind][m, p])) for c, p in drawn)
        return Fraction(total * 100, 3 * den) if den else None

    def exact_difference(self, g: int, i: int, j: int, pattern: tuple) -> Fraction:
        a, b = (self.exact(_O9, g, k, pattern) for k in (i, j))
        return cast(Fraction, a) - cast(Fraction, b)  # asked where both have a value

    def by_pattern(self, g: int, reps: np.ndarray, f) -> list:
        """``f(pattern)`` for each replicate of ``reps``: how often it drew each of group g's
        prompts."""
        return [f(tuple(row)) for row in self.counts(reps)[:, self.groups[g][1]].tolist()]

    def bounds(self, g: int, q: np.ndarray) -> np.ndarray:
        """Error bound of each model's float replicate values ``q`` (B, M) of group g (generous)."""
        return np.nan_to_num(np.abs(q)).max(axis=0) * (len(self.groups[g][1]) + 16) * 2.0**-50

    def ends(self, g: int, v: np.ndarray, tol: float, exact) -> list | None:
        """[lo, hi] of the non-NaN entries of ``v`` (replicate values of group g); an end within
        ``3·tol`` of a rounding boundary is settled with ``exact(pattern) -> Fraction``."""
        ok = np.flatnonzero(~np.isnan(v))
        if len(ok) == 0:
            return None
        at = [_nth(f, len(ok)) for f in self.ends_at]
        part, out = np.partition(v[ok], at), []
        for k in at:
            e = float(part[k])
            x = abs(e) * 10**self.dec
            if abs(x - math.floor(x) - 0.5) > 3 * tol * 10**self.dec:
                out.append(math.floor(x + 0.5) * (1 if e >= 0 else -1) / 10**self.dec)
                continue
            below = int(np.sum(v[ok] < e - 2 * tol))
            near = ok[np.abs(v[ok] - e) <= 2 * tol]
            out.append(half_up(sorted(self.by_pattern(g, near, exact))[k - below], self.dec))
        return out

    def pair(self, g: int, q: np.ndarray, tol: float, i: int, j: int) -> tuple[np.ndarray, ...]:
        """Exact sign of value(i) − value(j) per replicate (a missing value is below any
        value, two missing are equal) and the float differences (error bound ``tol``)."""
        d = q[:, i] - q[:, j]
        has_i, has_j = ~np.isnan(q[:, i]), ~np.isnan(q[:, j])
        sign = np.where(np.isnan(d), has_i.astype(int) - has_j, np.sign(d))
        close = np.flatnonzero(np.abs(d) <= tol)  # NaN is never close
        inside = self.groups[g][1]
        if all(np.array_equal(a[i, inside], a[j, inside]) for a in (self.x[_O9], self.w[_O9])):
            sign[close] = 0  # the same inputs: equal in every replicate, without arithmetic
        elif len(close):  # exact values: none is missing where the float difference is close
            diffs = self.by_pattern(g, close, partial(self.exact_difference, g, i, j))
            sign[close] = [(x > 0) - (x < 0) for x in diffs]
        return sign.astype(int), d

    def artifact(self) -> dict:
        head: dict[str, Any] = {
            "method": "stratified prompt bootstrap",
            "n_bootstrap": self.n_boot,
            "seed": self.seed,
            "confidence": self.confidence,
            "strata_order": list(_LEAVES),
            "groups": {},
            "pairs": {},
        }
        if not self.n_boot:
            return head
        per = max(1, _BLOCK_BYTES // (48 * self.n_boot * len(self.models)))
        for start in range(0, len(self.groups), per):
            block = range(start, min(start + per, len(self.groups)))
            values = self.replicate_values(block)
            for g in block:
                q = {kind: values[kind][g - start] for kind in _KINDS}
                head["groups"][self.groups[g][0]] = self.cells(g, q, head["pairs"])
        return head

    def cells(self, g: int, q: dict[str, np.ndarray], pairs: dict) -> dict:
        """Every model's figures in group g from its replicate values ``q`` ``{kind: (B, M)}``;
        a rank group's pairs go into ``pairs``."""
        key, _, ranked = self.groups[g]
        cells: dict[str, dict[str, Any]] = {}
        tol = {kind: self.bounds(g, q[kind]) for kind in _KINDS}
        for k, m in enumerate(self.models):
            cells[m] = {"rank": None, "n_valid": int(np.sum(~np.isnan(q[_O9][:, k])))}
            for kind in _KINDS:
                exact = partial(self.exact, kind, g, k)
                cells[m][kind] = self.ends(g, q[kind][:, k], tol[kind][k], exact)
        if ranked:
            rank, pairs[key] = self.ranked(g, q[_O9], ranked)
            for i, (m, _) in enumerate(ranked):
                r = np.sort(rank[:, i])
                cells[m]["rank"] = [int(r[_nth(f, len(r))]) for f in self.ends_at]
        return cells

    def ranked(self, g: int, q: np.ndarray, ranked: list) -> tuple[np.ndarray, list[dict]]:
        """Group g's ranked models: their rank (B, R) in every replicate (by exact value, higher
        first, then model_id) and their pairs: every pair, or the neighbours in rank above
        ALL_PAIRS_MAX_MODELS models."""
        ids, col = [m for m, _ in ranked], [self.models.index(m) for m, _ in ranked]
        rows, raw, tol = [], [], self.bounds(g, q)
        if len(self.models) > ALL_PAIRS_MAX_MODELS:
            tested = [(a, a + 1) for a in range(len(ids) - 1)]
        else:
            tested = [(a, b) for a in range(len(ids)) for b in range(a + 1, len(ids))]
        for a, b in tested:
            i, j = col[a], col[b]
            sign, d = self.pair(g, q, tol[i] + tol[j], i, j)
            le, ge = (int(np.sum(~np.isnan(d) & s)) for s in (sign <= 0, sign >= 0))
            raw.append(min(Fraction(1), Fraction(2 * min(1 + le, 1 + ge), self.n_boot + 1)))
            ci = self.ends(g, d, tol[i] + tol[j], partial(self.exact_difference, g, i, j))
            diff = Fraction(str(ranked[a][1])) - Fraction(str(ranked[b][1]))
            rows.append({"a": ids[a], "b": ids[b], "diff": float(diff), "ci": ci})
        best = Fraction(0)  # Holm: ascending p; adjusted = running max of min(1, (K − i)·p_(i))
        for i, t in enumerate(sorted(range(len(raw)), key=lambda t: raw[t])):
            best = max(best, min(Fraction(1), (len(raw) - i) * raw[t]))
            rows[t].update(
                p=half_up(raw[t], 4), p_holm=half_up(best, 4), separable=best <= self.alpha
            )
        return self.ranks(g, q, col, ids), rows

    def ranks(self, g: int, q: np.ndarray, col: list[int], ids: list[str]) -> np.ndarray:
        """int (B, R): 1 + how many of the ranked models (columns ``col`` of ``q``, ids ``ids``)
        stand above each in every replicate; sorted by the floats (no value last, then by
        model_id), then every run of neighbours within their bounds of each other that holds
        models of different inputs put in exact order."""
        inside = self.groups[g][1]
        first: dict[bytes, int] = {}
        twin = [
            first.setdefault(self.x[_O9][c, inside].tobytes() + self.w[_O9][c, inside].tobytes(), c)
            for c in col
        ]
        v, tol = q[:, twin], self.bounds(g, q)[twin]
        by_name = {m: k for k, m in enumerate(sorted(ids))}
        by_id = np.array([by_name[m] for m in ids])
        order = np.lexsort(
            (np.tile(by_id, (len(v), 1)), -np.nan_to_num(v, nan=0.0), np.isnan(v)), axis=-1
        )
        s_val, s_tol = np.take_along_axis(v, order, -1), tol[order]
        near = np.abs(s_val[:, 1:] - s_val[:, :-1]) <= s_tol[:, 1:] + s_tol[:, :-1]
        twins = np.array(twin)[order]
        mixed = near & (twins[:, 1:] != twins[:, :-1])
        for b in np.flatnonzero(mixed.any(axis=1)).tolist():
            pattern = tuple(self.counts(np.array([b]))[0, inside].tolist())
            edges = np.diff(np.concatenate(([0], near[b].astype(np.int8), [0])))
            for lo, hi in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
                if mixed[b, lo:hi].any():  # the run of positions lo … hi
                    run = order[b, lo : hi + 1].tolist()
                    # close neighbours: every one has a value
                    value = {r: cast(Fraction, self.exact(_O9, g, col[r], pattern)) for r in run}
                    order[b, lo : hi + 1] = sorted(run, key=lambda r: (-value[r], ids[r]))
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(1, len(ids) + 1), axis=-1)
        return rank


def reconstruct_uncertainty(manifest: dict, cols, boards: dict, slice_prompts) -> dict:
    """``uncertainty.json`` as the validator recomputes it from its ``cols`` (sample_id order),
    the published ``boards`` (already checked) and ``slice_prompts(cols, spec) -> indices``."""
    return Recompute(manifest, cols, boards, slice_prompts).artifact()
