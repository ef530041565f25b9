"""The validator's own recomputation of ``uncertainty.json`` (SPEC §8; data contract §13).

Part of the independent validator (:mod:`searchgen_nb.validate`): it reads only what the
validator read from ``prompt_scores.jsonl`` and the manifest, and shares no code with the
pipeline's :mod:`searchgen_nb.uncertainty`. The draws are the contract's (the same
generator, seed and draw order — they must be); everything after them is done another way:

* counts per replicate and prompt in sample_id order, one ``bincount`` over every draw's
  (replicate, prompt) cell (the pipeline counts in its stratum-major layout);
* model-major sums: for each model, counts × (prompt × group membership × the model's
  values) — every group in one product (the pipeline gathers each group's prompts);
* ranks by sorting each replicate (``lexsort`` on value, then model_id) and re-ranking a
  replicate exactly when two neighbours are within float error (the pipeline compares every
  pair of models);
* exact values as sums of :class:`fractions.Fraction` (the pipeline: scaled integers), Holm
  adjustment and p-value rounding in fractions.
"""

from __future__ import annotations

import functools
import json
import math
from fractions import Fraction

import numpy as np

_LEAVES = ("NoSearch", "VisualSearch", "TextualSearch")
_STRATA = ("NoSearch", "SearchIntensive", "VisualSearch", "TextualSearch")
_BYTES = 48 * 2**20  # per chunk of counts / per block of the model-major matrix
_UNSET = object()
_PATTERN_PROMPTS = 256  # groups up to this many prompts keep exact values by count pattern
# Groups up to this many prompts settle close replicates once per count pattern (a few
# prompts' patterns repeat across replicates; a dozen prompts' hardly do, and finding them
# would cost more than it saves), when their (B, prompts) int32 counts fit _PATTERN_BYTES
_SETTLE_PATTERN_PROMPTS = 12
_PATTERN_BYTES = 48 * 2**20


class _Replicates:
    """Counts of the contract's draws, chunk by chunk (generator states saved per chunk)."""

    def __init__(self, leaf: list[str], n_boot: int, seed: int) -> None:
        n = len(leaf)
        self.n, self.n_boot = n, n_boot
        self.blocks = [(np.flatnonzero(np.array([s == name for s in leaf], dtype=bool)), name) for name in _LEAVES]
        self.blocks = [(pos, name) for pos, name in self.blocks if len(pos)]
        self.step = max(1, min(n_boot, _BYTES // max(4 * n, 1)))
        self.starts = list(range(0, n_boot, self.step))
        rng = np.random.default_rng(seed)
        self.states: dict[tuple[int, int], dict] = {}
        for k, (pos, _) in enumerate(self.blocks):
            for start in self.starts:
                self.states[(k, start)] = rng.bit_generator.state
                rows = min(self.step, n_boot - start)
                for a in range(0, rows, max(1, 2**20 // len(pos))):  # small slices: same stream
                    rng.integers(0, len(pos), size=(min(max(1, 2**20 // len(pos)), rows - a), len(pos)))
        self._last: tuple[int, np.ndarray] | None = None

    def chunk(self, start: int) -> np.ndarray:
        """int32 counts (rows, n) of replicates start … start + rows − 1, prompts in sample_id order."""
        if self._last is not None and self._last[0] == start:
            return self._last[1]
        rows = min(self.step, self.n_boot - start)
        counts = np.zeros((rows, self.n), dtype=np.int32)
        row_ids = np.arange(rows, dtype=np.int64)
        for k, (pos, _) in enumerate(self.blocks):
            gen = np.random.Generator(np.random.PCG64())
            gen.bit_generator.state = self.states[(k, start)]
            drawn = gen.integers(0, len(pos), size=(rows, len(pos)))
            # the cell (replicate, prompt) of every draw, in this module's sample_id layout
            cells = (row_ids[:, None] * self.n + pos[drawn]).ravel()
            counts += np.bincount(cells, minlength=rows * self.n).reshape(rows, self.n).astype(np.int32)
        self._last = (start, counts)
        return counts

    def row(self, b: int) -> np.ndarray:
        start = (b // self.step) * self.step
        return self.chunk(start)[b - start]


def _ceil_pos(frac: Fraction, n: int) -> int:
    """0-based index of the ⌈frac·n⌉-th smallest (1-based, at least the first)."""
    return max(math.ceil(frac * n), 1) - 1


def _round(x: Fraction, dec: int) -> float:
    """Half-up to ``dec`` decimals, halves away from zero for negatives."""
    u = math.floor(abs(x) * 10**dec + Fraction(1, 2))
    return float(Fraction(u if x >= 0 else -u, 10**dec))


class SettingsError(ValueError):
    """The manifest's ``config.uncertainty`` cannot say how the intervals were drawn."""


def _settings(manifest: dict) -> tuple[int, int, float]:
    """``(n_bootstrap, seed, confidence)`` from ``manifest.json``'s ``config.uncertainty``;
    :class:`SettingsError` naming the key when one is missing or not a valid value."""
    cfg = (manifest.get("config") or {}).get("uncertainty") if isinstance(manifest.get("config"), dict) else None
    where = "manifest.json config.uncertainty"
    if not isinstance(cfg, dict):
        raise SettingsError(f"{where} is missing or not an object: the draws cannot be repeated")

    def whole(key: str, top: int) -> int:
        v = cfg.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= top:
            raise SettingsError(f"{where}.{key} is {json.dumps(v)}: expected a whole number in 0–{top}")
        return v

    conf = cfg.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 < conf < 1:
        raise SettingsError(f"{where}.confidence is {json.dumps(conf)}: expected a number strictly between 0 and 1")
    return whole("n_bootstrap", 100_000), whole("seed", 2**63 - 1), float(conf)


class Recompute:
    """Every figure of ``uncertainty.json`` from the validator's columns."""

    def __init__(self, manifest: dict, cols, boards: dict, slice_prompts) -> None:
        self.n_boot, self.seed, self.confidence = _settings(manifest)
        self.alpha = 1 - Fraction(repr(self.confidence))
        self.dec = int(manifest["scoring"]["public_rounding_decimals"])
        self.models = list(manifest["model_order"])
        self.ids = sorted(self.models)
        self.manifest, self.cols, self.boards = manifest, cols, boards
        n = len(cols.sample_ids)
        strata = [p[0] for p in cols.prompts]
        leaf = [p[1] for p in cols.prompts]
        # groups: (key, membership mask, published ranked rows or None)
        self.keys: list[str] = ["all:All"]
        masks = [np.ones(n, dtype=bool)]
        ranked = [boards["leaderboard_overall.json"]]
        for s in _STRATA:
            self.keys.append(f"stratum:{s}")
            masks.append(np.array([a == s or b == s for a, b in zip(strata, leaf)], dtype=bool))
            ranked.append(boards["leaderboard_by_stratum.json"][s])
        for kind, j in (("domain", 2), ("failure_mode", 3)):
            for tag in sorted({t for p in cols.prompts for t in p[j]}):
                self.keys.append(f"{kind}:{tag}")
                masks.append(np.array([tag in p[j] for p in cols.prompts], dtype=bool))
                ranked.append(None)
        named = manifest["evaluation_slices"]["named"]
        for name in manifest["published_slices"]:
            mask = np.zeros(n, dtype=bool)
            mask[slice_prompts(cols, named[name])] = True
            self.keys.append(f"slice:{name}")
            masks.append(mask)
            ranked.append(boards["leaderboard_by_slice.json"][name]["overall"])
        self.masks = np.array(masks).T  # (n, G)
        self.ranked = [None if rows is None else [(r["model_id"], r["overall_9"]) for r in rows if r["ranked"]] for rows in ranked]
        # per model: Overall-9 / Overall-10 value (0 where not included) and weight 0/1
        scored = cols.status == 0  # (M, n)
        zero = np.array([manifest["models"][m]["missing_policy"] == "zero_fill" for m in self.models])
        self.x, self.w = {}, {}
        for kind, c in (("o9", 11), ("o10", 10)):
            v = cols.values[:, :, c]
            has = scored & ~np.isnan(v)
            self.x[kind] = np.where(has, v, 0.0)  # (M, n)
            self.w[kind] = (has | (zero[:, None] & ~scored)).astype(np.float64)
        self.reps = _Replicates(leaf, self.n_boot, self.seed) if self.n_boot else None
        self._inside = [np.flatnonzero(self.masks[:, g]) for g in range(self.masks.shape[1])]  # each group's prompts
        self._exact: dict = {}
        self._by_pattern: dict = {}
        self._same: dict = {}
        self._pattern_of: tuple[int, np.ndarray | None] | None = None

    # -- replicate values ----------------------------------------------------------------

    def values(self) -> dict[str, np.ndarray]:
        """``{"o9", "o10"}`` → float (G, B, M) public-scale replicate values, NaN = none."""
        n_groups, n_models = self.masks.shape[1], len(self.models)
        out = {k: np.empty((n_groups, self.n_boot, n_models)) for k in ("o9", "o10")}
        per_block = max(1, _BYTES // max(8 * self.masks.shape[0] * n_groups, 1))
        for start in self.reps.starts:
            counts = self.reps.chunk(start).astype(np.float64)
            rows = counts.shape[0]
            for m0 in range(0, n_models, per_block):
                ms = range(m0, min(n_models, m0 + per_block))
                # A model's replicate weights (denominators) depend only on which prompts it
                # includes: every zero-fill model includes them all, and Overall-10 mostly
                # includes what Overall-9 does, so each distinct weight vector is multiplied once
                # (the demo: 4 for 26 model × kind pairs, a third of the products)
                key = {kind: [self.w[kind][m].tobytes() for m in ms] for kind in ("o9", "o10")}
                distinct = {}
                for kind in ("o9", "o10"):
                    for m, k in zip(ms, key[kind]):
                        distinct.setdefault(k, self.w[kind][m])
                slot = {k: i for i, k in enumerate(distinct)}
                dens = (counts @ np.hstack([self.masks * w[:, None] for w in distinct.values()])).reshape(rows, len(distinct), n_groups)
                for kind in ("o9", "o10"):
                    num = counts @ np.hstack([self.masks * self.x[kind][m][:, None] for m in ms])  # (rows, G·k)
                    num = num.reshape(rows, len(ms), n_groups)
                    den = dens[:, [slot[k] for k in key[kind]], :]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        q = np.where(den > 0, num / den * 100 / 3, np.nan)
                    out[kind][:, start : start + rows, m0 : m0 + len(ms)] = q.transpose(2, 0, 1)
        return out

    def _scaled(self, kind: str, m: int) -> tuple[np.ndarray, int]:
        """Model m's values of ``kind`` as exact integers ``x · 2**shift`` (Python ints)."""
        key = ("ints", kind, m)
        if key not in self._exact:
            fr = [Fraction(v) for v in self.x[kind][m].tolist()]
            shift = max((f.denominator.bit_length() - 1 for f in fr), default=0)
            self._exact[key] = (np.array([f.numerator * ((1 << shift) // f.denominator) for f in fr] + [None], dtype=object)[:-1], shift)
        return self._exact[key]

    def exact(self, kind: str, g: int, m: int, b: int) -> Fraction | None:
        """The exact public-scale value (mean × 100 / 3) of model m in group g, replicate b.

        It depends only on how often replicate b drew each prompt of the group, so values are
        kept by that count pattern too (groups of up to :data:`_PATTERN_PROMPTS` prompts): a
        small group (a tag with a few prompts) has few patterns, however many of its replicates
        need settling."""
        key = (kind, g, m, b)
        value = self._exact.get(key, _UNSET)
        if value is _UNSET:
            inside = self._inside[g]
            counts = self.reps.row(b)[inside]
            # (a large group's patterns hardly repeat: not kept, so memory stays small)
            pattern = (kind, g, m, counts.tobytes()) if len(inside) <= _PATTERN_PROMPTS else None
            value = self._by_pattern.get(pattern, _UNSET)
            if value is _UNSET:
                drawn = np.flatnonzero((counts > 0) & (self.w[kind][m][inside] > 0))
                ints, shift = self._scaled(kind, m)
                den = int(counts[drawn].sum())
                num = int(np.dot(counts[drawn].astype(object), ints[inside[drawn]])) if len(drawn) else 0
                value = None if den == 0 else Fraction(num * 100, (3 * den) << shift)
                if pattern is not None:
                    self._by_pattern[pattern] = value
            self._exact[key] = value
        return value

    def _bound(self, g: int, v) -> float:
        return float(np.nanmax(np.abs(v))) * (int(self.masks[:, g].sum()) + 16) * 2.0**-50 if np.size(v) else 0.0

    def _ends(self, v: np.ndarray, tol: float, exact_of) -> list | None:
        """[lo, hi] of the non-NaN entries of one replicate vector (exact when near a boundary)."""
        ok = np.flatnonzero(~np.isnan(v))
        if len(ok) == 0:
            return None
        vals = np.sort(v[ok])
        out = []
        for frac in (self.alpha / 2, 1 - self.alpha / 2):
            k = _ceil_pos(frac, len(ok))
            e = float(vals[k])
            x = abs(e) * 10**self.dec
            if abs(x - math.floor(x) - 0.5) > 3 * tol * 10**self.dec:
                u = math.floor(x + 0.5)
                out.append(float(Fraction(u if e >= 0 else -u, 10**self.dec)))
                continue
            low = int(np.sum(v[ok] < e - 2 * tol))
            near = [int(ok[i]) for i in np.flatnonzero(np.abs(v[ok] - e) <= 2 * tol)]
            exact_sorted = sorted(exact_of(b) for b in near)
            out.append(_round(exact_sorted[k - low], self.dec))
        return out

    def _same_inputs(self, g: int, i: int, j: int) -> bool:
        """Whether models i and j have the same Overall-9 inputs in group g (then they tie in
        every replicate, without arithmetic); kept per group and pair."""
        key = (g, min(i, j), max(i, j))
        same = self._same.get(key)
        if same is None:
            m = self.masks[:, g]
            same = bool(np.array_equal(self.x["o9"][i][m], self.x["o9"][j][m]) and np.array_equal(self.w["o9"][i][m], self.w["o9"][j][m]))
            self._same[key] = same
        return same

    def _cmp(self, g: int, i: int, j: int, b: int) -> int:
        """Exact sign of value(i) − value(j) in replicate b (None ranks below any value)."""
        if self._same_inputs(g, i, j):
            return 0
        x, y = self.exact("o9", g, i, b), self.exact("o9", g, j, b)
        if x is None or y is None:
            return (x is not None) - (y is not None)
        return (x > y) - (x < y)

    def _patterns(self, g: int) -> np.ndarray | None:
        """(B,) index of each replicate's count pattern on group g's prompts (equal index, equal
        counts on every prompt of the group, so equal exact values), for groups of up to
        :data:`_SETTLE_PATTERN_PROMPTS` prompts whose (B, prompts) counts fit
        :data:`_PATTERN_BYTES`; else None. The last group's answer is kept (groups are settled
        one after the other)."""
        if self._pattern_of is not None and self._pattern_of[0] == g:
            return self._pattern_of[1]
        inside = self._inside[g]
        ids = None
        if 0 < len(inside) <= _SETTLE_PATTERN_PROMPTS and 4 * len(inside) * self.n_boot <= _PATTERN_BYTES:
            rows = np.concatenate([self.reps.chunk(start)[:, inside] for start in self.reps.starts])
            ids = np.unique(np.ascontiguousarray(rows).view(np.dtype((np.void, 4 * len(inside)))).ravel(), return_inverse=True)[1].ravel()
        self._pattern_of = (g, ids)
        return ids

    def _pattern_classes(self, g: int, reps: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """For replicates ``reps`` (ascending) of group g: ``(first, back)`` — the positions in
        ``reps`` of the first replicate of each count pattern, in replicate order (so each chunk
        of counts is made once when they are settled in turn), and for each of ``reps`` the
        index in ``first`` of its pattern. None when the group keeps no patterns."""
        pattern = self._patterns(g)
        if pattern is None:
            return None
        _, first, back = np.unique(pattern[reps], return_index=True, return_inverse=True)
        order = np.argsort(first)
        position = np.empty_like(order)
        position[order] = np.arange(len(order))
        return first[order], position[back.ravel()]

    def _signs(self, g: int, i: int, j: int, reps: np.ndarray) -> np.ndarray:
        """Exact signs of value(i) − value(j) in replicates ``reps`` (int array), as
        :meth:`_cmp`: compared once per count pattern when the group keeps patterns."""
        if len(reps) == 0 or self._same_inputs(g, i, j):
            return np.zeros(len(reps), dtype=np.int8)
        classes = self._pattern_classes(g, reps)
        if classes is None:
            return np.array([self._cmp(g, i, j, b) for b in reps.tolist()], dtype=np.int8)
        first, back = classes
        return np.array([self._cmp(g, i, j, b) for b in reps[first].tolist()], dtype=np.int8)[back]

    def _ranks(self, g: int, q: np.ndarray, members: list[int]) -> np.ndarray:
        """(B, R) rank of each member in each replicate: by value descending, then model_id."""
        v = np.where(np.isnan(q[:, members]), -np.inf, q[:, members])
        id_rank = np.array([self.ids.index(self.models[k]) for k in members])
        order = np.lexsort((np.broadcast_to(id_rank, v.shape), -v), axis=1)
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.arange(1, len(members) + 1)[None, :], axis=1)
        sv = np.take_along_axis(v, order, axis=1)
        tol = self._bound(g, q[:, members][~np.isnan(q[:, members])]) * 2
        with np.errstate(invalid="ignore"):
            close = np.abs(np.diff(sv, axis=1)) <= tol  # -inf − -inf is NaN: not close (both none: tied by id)
        # Neighbours farther apart than the error bound are in their exact order already; each
        # run of close neighbours of a replicate is sorted exactly (higher value first, no value
        # last, then model_id). Replicates of one count pattern have the same exact values, so
        # the same exact ranks: in a group that keeps patterns, the first replicate of each
        # pattern is settled and the others take its ranks.
        unsure = np.flatnonzero(close.any(axis=1))
        classes = self._pattern_classes(g, unsure) if len(unsure) else None
        for b in (unsure if classes is None else unsure[classes[0]]).tolist():

            def before(i, j, b=b):  # i before j: higher exact value, then smaller model_id
                s = self._cmp(g, members[i], members[j], b)
                return -s if s else (-1 if id_rank[i] < id_rank[j] else 1)

            row = order[b].tolist()
            start = 0
            for t in range(1, len(members) + 1):
                if t < len(members) and close[b, t - 1]:
                    continue
                if t - start > 1:
                    row[start:t] = sorted(row[start:t], key=functools.cmp_to_key(before))
                start = t
            ranks[b, row] = np.arange(1, len(members) + 1)
        if classes is not None:
            first, back = classes
            ranks[unsure] = ranks[unsure[first]][back]
        return ranks

    # -- the artifact --------------------------------------------------------------------

    def artifact(self) -> dict:
        head = {
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
        q = self.values()
        col = {m: k for k, m in enumerate(self.models)}
        for g, key in enumerate(self.keys):
            cells = {}
            for m in self.ids:
                k = col[m]
                cell = {}
                for kind, name in (("o9", "overall_9"), ("o10", "overall_10")):
                    v = q[kind][g][:, k]
                    tol = self._bound(g, v[~np.isnan(v)])
                    cell[name] = self._ends(v, tol, lambda b, kind=kind, k=k: self.exact(kind, g, k, b))
                cell["rank"] = None
                cell["n_valid"] = int(np.count_nonzero(~np.isnan(q["o9"][g][:, k])))
                cells[m] = cell
            if self.ranked[g]:
                members = [col[m] for m, _ in self.ranked[g]]
                ranks = self._ranks(g, q["o9"][g], members)
                for i, (m, _) in enumerate(self.ranked[g]):
                    r = np.sort(ranks[:, i])
                    cells[m]["rank"] = [int(r[_ceil_pos(self.alpha / 2, len(r))]), int(r[_ceil_pos(1 - self.alpha / 2, len(r))])]
                head["pairs"][key] = self._pairs(g, q["o9"][g], members)
            head["groups"][key] = cells
        return head

    def _pairs(self, g: int, q: np.ndarray, members: list[int]) -> list[dict]:
        rows, raw = [], []
        published = self.ranked[g]
        tol = self._bound(g, q[~np.isnan(q)]) * 2
        for i in range(len(members)):
            for j in range(i + 1, len(members)):
                a, b = members[i], members[j]
                d = q[:, a] - q[:, b]
                ok = ~np.isnan(d)
                le = int(np.sum(ok & (d < -tol)))
                ge = int(np.sum(ok & (d > tol)))
                s = self._signs(g, a, b, np.flatnonzero(ok & (np.abs(d) <= tol)))
                le += int(np.count_nonzero(s <= 0))
                ge += int(np.count_nonzero(s >= 0))
                p = min(Fraction(1), Fraction(2 * min(1 + le, 1 + ge), self.n_boot + 1))
                raw.append(p)

                def exact_d(r, a=a, b=b):
                    return self.exact("o9", g, a, r) - self.exact("o9", g, b, r)

                rows.append({
                    "a": published[i][0],
                    "b": published[j][0],
                    "diff": float(Fraction(str(published[i][1])) - Fraction(str(published[j][1]))),
                    "ci": self._ends(d, tol * 1.5, exact_d),
                })
        # Holm: ascending p; adjusted = running max of min(1, (K − i)·p_(i))
        k = len(raw)
        adjusted: list[Fraction] = [Fraction(0)] * k
        best = Fraction(0)
        for i, idx in enumerate(sorted(range(k), key=lambda t: raw[t])):
            best = max(best, min(Fraction(1), (k - i) * raw[idx]))
            adjusted[idx] = best
        for row, p, adj in zip(rows, raw, adjusted):
            row["p"] = _round(p, 4)
            row["p_holm"] = _round(adj, 4)
            row["separable"] = adj <= self.alpha
        return rows


def reconstruct_uncertainty(manifest: dict, cols, boards: dict, slice_prompts) -> dict:
    """``uncertainty.json`` as the validator recomputes it (see the module docstring).

    ``cols``: the validator's columns (prompts in sample_id order); ``boards``: the published
    leaderboards (already checked against the validator's own reconstruction);
    ``slice_prompts(cols, spec) -> prompt indices`` of a manifest slice."""
    return Recompute(manifest, cols, boards, slice_prompts).artifact()
