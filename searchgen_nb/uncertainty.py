"""Stratified prompt bootstrap: intervals, rank intervals and Holm-corrected pairwise tests
(SPEC §8; data contract §13), computed on the release table.

The algorithm is fixed by the contract so that any implementation reproduces every figure:

* leaf strata ``NoSearch``, ``VisualSearch``, ``TextualSearch`` in that order; in each, the
  release's prompts in sample_id order are numbered ``0 … n_s − 1``;
* ``rng = numpy.random.default_rng(seed)``; per non-empty leaf stratum in that order
  ``idx_s = rng.integers(0, n_s, size=(B, n_s))``; replicate ``b`` is the multiset of row ``b``
  of every ``idx_s`` (a prompt drawn k times counts k times);
* a replicate's value of model m in group G is SPEC §5's group mean over the replicate's
  prompts in G, with multiplicity, under m's missing policy; a replicate with no value is
  left out (``n_valid`` counts the others);
* interval at confidence c (α = 1 − c): ``v_⌈(α/2)·n⌉`` and ``v_⌈(1−α/2)·n⌉`` of the sorted
  values (1-based, numpy's ``inverted_cdf``), on the public scale, rounded half-up.

How it is computed here (the validator has its own code, :mod:`searchgen_nb.validate_bootstrap`):

* The draws are regenerated chunk by chunk — the bit generator's state is saved at the start
  of every chunk of rows of every stratum (a chunked ``integers`` call continues the same
  stream as one call) — and turned into a replicate × prompt **count matrix** with
  ``numpy.bincount``; the count matrix takes one chunk (≤ :data:`CHUNK_BYTES`) whatever B and
  the size of the release. The replicate values kept for the percentiles take
  groups × B × models × 16 bytes (the demo at B = 10,000: 94 MB), hence the config's cap on B.
* Prompts are laid out leaf-stratum-major, so ``All`` and the strata are contiguous column
  ranges; each group's replicate sums are one matrix product ``counts[:, group] @ Y[group]``
  with ``Y`` = per model the Overall-9 / Overall-10 numerators (0 where not included) and
  inclusion indicators. Denominators are sums of integers: exact.
* Every decision that a float could get wrong is settled exactly: an interval end within its
  error bound of a rounding boundary, and the order of two values within their error bounds
  of each other (ranks, and the sign of a pairwise difference for p-values) — by recomputing
  those replicates' means as exact rationals from their counts. Models whose data in a group
  are identical are tied exactly without arithmetic. So every figure is that of the exact
  means, whatever the summation order of the BLAS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from searchgen_nb.config import UncertaintyConfig as Settings
from searchgen_nb.constants import PARTITION_KEYS
from searchgen_nb.table import OVERALL_9, OVERALL_10, SCORED_CODE, ReleaseTable

#: Leaf strata in draw order (SPEC §8; section 1.2's search types).
LEAF_STRATA = ("NoSearch", "VisualSearch", "TextualSearch")
METHOD = "stratified prompt bootstrap"
#: Bytes of one chunk of the replicate × prompt count matrix (float64).
CHUNK_BYTES = 64 * 2**20
#: Unit roundoff of float64.
_U = 2.0**-53
#: Decimals of published p-values (SPEC §8).
P_DECIMALS = 4


# ---- draws --------------------------------------------------------------------------


class Draws:
    """The replicates of a release as chunks of a replicate × prompt count matrix.

    ``leaf``, ``sample_ids``: each prompt's leaf stratum (its ``search_type``) and sample_id.
    Columns of :meth:`counts` are the prompts in *working order*: leaf-stratum-major
    (:data:`LEAF_STRATA` order), sample_id order inside a stratum; :attr:`column` maps a
    prompt index to its column. Raises ValueError for a leaf outside :data:`LEAF_STRATA`.
    """

    def __init__(self, leaf: list[str], sample_ids: list[str], n_bootstrap: int, seed: int, chunk_bytes: int | None = None) -> None:
        unknown = sorted(set(leaf) - set(LEAF_STRATA))
        if unknown:
            raise ValueError(f"bootstrap: unknown leaf strata {unknown}")
        self.n_bootstrap = n_bootstrap
        self.n_prompts = len(leaf)
        self.order, self.column = working_order(leaf, sample_ids)
        self.blocks: list[tuple[str, int, int]] = []  # (stratum, first column, n_s), non-empty only
        start = 0
        for name in LEAF_STRATA:
            n_s = leaf.count(name)
            if n_s:
                self.blocks.append((name, start, n_s))
            start += n_s
        chunk_bytes = CHUNK_BYTES if chunk_bytes is None else chunk_bytes  # (read at call time)
        self.rows_per_chunk = max(1, min(max(n_bootstrap, 1), chunk_bytes // max(8 * self.n_prompts, 1)))
        self.chunks = [(a, min(a + self.rows_per_chunk, n_bootstrap)) for a in range(0, n_bootstrap, self.rows_per_chunk)]
        rng = np.random.default_rng(seed)
        # the generator's state at the start of every chunk of every stratum: one pass over
        # the stream (skipped when one chunk holds every replicate)
        self._states: list[list[dict]] = []
        for _name, _first, n_s in self.blocks:
            states = []
            for a, b in self.chunks:
                states.append(rng.bit_generator.state)
                _advance(rng, b - a, n_s)
            self._states.append(states)
        self._cache: tuple[int, np.ndarray] | None = None

    def indices(self, chunk: int, block: int) -> np.ndarray:
        """``idx_s`` rows of one chunk of one stratum block: int64 (rows, n_s), SPEC §8's draws."""
        a, b = self.chunks[chunk]
        _name, _first, n_s = self.blocks[block]
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = self._states[block][chunk]
        return rng.integers(0, n_s, size=(b - a, n_s))

    def counts(self, chunk: int) -> np.ndarray:
        """Replicate × prompt counts of one chunk: int64 (rows, n_prompts), working order."""
        if self._cache is not None and self._cache[0] == chunk:
            return self._cache[1]
        a, b = self.chunks[chunk]
        rows = b - a
        # A stratum's draws only land in its own columns (one block of the working order):
        # each block is counted on its own (rows × n_s cells) into its columns.
        out = np.empty((rows, self.n_prompts), dtype=np.int64)
        for k, (_name, first, n_s) in enumerate(self.blocks):
            cells = self.indices(chunk, k)
            cells += (np.arange(rows, dtype=np.int64) * n_s)[:, None]  # cell of (replicate, prompt)
            out[:, first : first + n_s] = np.bincount(cells.ravel(), minlength=rows * n_s).reshape(rows, n_s)
        self._cache = (chunk, out)
        return out

    def drop_cache(self) -> None:
        """Free the chunk kept by :meth:`counts` (regenerated on demand)."""
        self._cache = None

    def count_rows(self, replicates: np.ndarray) -> np.ndarray:
        """Counts of the given replicates (any order): int64 (len, n_prompts), working order."""
        replicates = np.asarray(replicates, dtype=np.int64)
        out = np.empty((len(replicates), self.n_prompts), dtype=np.int64)
        chunk_of = replicates // self.rows_per_chunk
        for c in np.unique(chunk_of).tolist():
            pick = np.flatnonzero(chunk_of == c)
            out[pick] = self.counts(c)[replicates[pick] - self.chunks[c][0]]
        return out


def working_order(leaf: list[str], sample_ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(order, column)``: the prompts leaf-stratum-major (:data:`LEAF_STRATA` order,
    sample_id code-point order inside: SPEC §8's numbering), ``order[column] = prompt`` and
    ``column[prompt]``, whatever the order of the prompts given."""
    by_id = sorted(range(len(leaf)), key=lambda i: sample_ids[i])
    order = np.array([i for name in LEAF_STRATA for i in by_id if leaf[i] == name], dtype=np.int64)
    column = np.empty(len(order), dtype=np.int64)
    column[order] = np.arange(len(order))
    return order, column


def _advance(rng: np.random.Generator, rows: int, n_s: int) -> None:
    """Move ``rng`` past the draws of ``(rows, n_s)`` integers below ``n_s``, drawn in slices
    of at most 8 MiB (a sliced draw consumes the stream exactly as one call does)."""
    step = max(1, (8 * 2**20) // max(8 * n_s, 1))
    for a in range(0, rows, step):
        rng.integers(0, n_s, size=(min(step, rows - a), n_s))


# ---- replicate values -----------------------------------------------------------------


@dataclass
class GroupDef:
    """One bootstrap group: ``key`` (``kind:name``), its prompts (columns in working order),
    and, for rank groups, the published rows' ranked model ids in rank order with their
    published Overall-9."""

    key: str
    columns: np.ndarray
    ranked: list[str] | None = None
    published_9: dict[str, float] | None = None


class _Values:
    """Per-model numerator and inclusion columns of Overall-9 and Overall-10 (SPEC §5
    policies), rows in working order, and exact integer versions for settlement."""

    def __init__(self, table: ReleaseTable, zero_fill: np.ndarray, order: np.ndarray) -> None:
        scored = (table.status == SCORED_CODE)[:, order]  # (M, P)
        self.x: dict[str, np.ndarray] = {}
        self.inc: dict[str, np.ndarray] = {}
        for name, col in (("overall_9", OVERALL_9), ("overall_10", OVERALL_10)):
            v = table.values[:, :, col][:, order]
            present = scored & ~np.isnan(v)
            self.x[name] = np.where(present, v, 0.0).T.copy()  # (P, M)
            self.inc[name] = (present | (zero_fill[:, None] & ~scored)).T.astype(np.float64)
        self._ints: dict[tuple[str, int], tuple[np.ndarray, int]] = {}

    def stacked(self) -> np.ndarray:
        """(P, 4M): x9 | inc9 | x10 | inc10."""
        return np.hstack([self.x["overall_9"], self.inc["overall_9"], self.x["overall_10"], self.inc["overall_10"]])

    def integers(self, name: str, m: int) -> tuple[np.ndarray, int]:
        """Model m's numerator column as exact integers ``x · 2**shift`` (object array) and
        ``shift``."""
        key = (name, m)
        if key not in self._ints:
            ratios = [v.as_integer_ratio() for v in self.x[name][:, m].tolist()]
            shift = max(d for _, d in ratios).bit_length() - 1 if ratios else 0
            ints = np.array([n << (shift - (d.bit_length() - 1)) for n, d in ratios] + [0], dtype=object)[:-1]
            self._ints[key] = (ints, shift)
        return self._ints[key]


class Bootstrap:
    """Replicate values of every group on the public scale (unrounded), with what is needed
    to settle any of them exactly.

    ``q[name][g]``: float64 (B, M) replicate values ``mean × 100 / 3`` of Overall-9 / -10
    (``name``), NaN where the replicate has no value; models in the table's order.
    """

    def __init__(self, table: ReleaseTable, zero_fill: np.ndarray, groups: list[GroupDef], settings: Settings, draws: "Draws | None" = None) -> None:
        """``draws``: the table's :class:`Draws` when the caller made them (for the groups'
        columns); else made here."""
        self.table, self.groups, self.settings = table, groups, settings
        self.draws = draws or Draws(*_leaf_and_ids(table), settings.n_bootstrap, settings.seed)
        self.values = _Values(table, zero_fill, self.draws.order)
        n_models, b_total = table.n_models, settings.n_bootstrap
        y = self.values.stacked()
        self.q = {n: [np.empty((b_total, n_models)) for _ in groups] for n in ("overall_9", "overall_10")}
        spans = [_span(g.columns) for g in groups]
        for c, (a, b) in enumerate(self.draws.chunks):
            counts = self.draws.counts(c).astype(np.float64)
            for g, (group, span) in enumerate(zip(groups, spans)):
                if span is not None:
                    sums = counts[:, span[0] : span[1]] @ y[span[0] : span[1]]
                else:
                    sums = counts[:, group.columns] @ y[group.columns]
                for j, name in enumerate(("overall_9", "overall_10")):
                    num = sums[:, 2 * j * n_models : (2 * j + 1) * n_models]
                    den = sums[:, (2 * j + 1) * n_models : (2 * j + 2) * n_models]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        self.q[name][g][a:b] = np.where(den > 0, num / den * 100.0 / 3.0, np.nan)
        self.draws.drop_cache()

    def tolerance(self, g: int, q: np.ndarray) -> np.ndarray:
        """Error bound of float values ``q`` of group g: a sum of k non-negative terms in any
        order is within (k−1)·u of its value, three more roundings follow (SPEC §5's rule,
        as :func:`searchgen_nb.numeric.public_units`)."""
        return np.abs(q) * (len(self.groups[g].columns) + 8.0) * (2 * _U)

    def exact_ratios(self, name: str, g: int, m: int, replicates) -> tuple[np.ndarray, np.ndarray]:
        """Exact public-scale values (``mean × 100 / 3``) of model m in group g in the given
        replicates as integer ratios: object arrays ``(num, den)`` of Python ints, value =
        num / den; den 0 where the replicate has no value."""
        cols = self.groups[g].columns
        counts = self.draws.count_rows(np.asarray(replicates, dtype=np.int64))[:, cols]
        ints, shift = self.values.integers(name, m)
        nums = counts.astype(object) @ ints[cols]
        dens = (counts @ self.values.inc[name][cols, m].astype(np.int64)).astype(object)
        return nums * 100, (dens * 3) << shift

    def exact(self, name: str, g: int, m: int, replicates) -> list[Fraction | None]:
        """:meth:`exact_ratios` as fractions; None where the replicate has no value."""
        nums, dens = self.exact_ratios(name, g, m, replicates)
        return [Fraction(n, d) if d else None for n, d in zip(nums.tolist(), dens.tolist())]

    def identical(self, g: int, i: int, j: int) -> bool:
        """Whether models i and j have the same Overall-9 inputs in group g (then every
        replicate ties them exactly)."""
        cols = self.groups[g].columns
        x, inc = self.values.x["overall_9"], self.values.inc["overall_9"]
        return bool(np.array_equal(x[cols, i], x[cols, j]) and np.array_equal(inc[cols, i], inc[cols, j]))


def _leaf_and_ids(table: ReleaseTable) -> tuple[list[str], list[str]]:
    return [p["search_type"] for p in table.prompts], [p["sample_id"] for p in table.prompts]


def _span(columns: np.ndarray) -> tuple[int, int] | None:
    """``(first, end)`` when the columns are one contiguous ascending run, else None."""
    if len(columns) and int(columns[-1]) - int(columns[0]) + 1 == len(columns) and np.all(np.diff(columns) == 1):
        return int(columns[0]), int(columns[-1]) + 1
    return None


# ---- order statistics with exact settlement ------------------------------------------------


def percentile_positions(n: int, alpha: Fraction) -> tuple[int, int]:
    """0-based positions of the interval ends among n sorted values (SPEC §8:
    ``⌈(α/2)·n⌉`` and ``⌈(1−α/2)·n⌉``, 1-based)."""
    lo = math.ceil(alpha / 2 * n)
    hi = math.ceil((1 - alpha / 2) * n)
    return max(lo, 1) - 1, max(hi, 1) - 1


def half_up_signed(x: Fraction, decimals: int) -> int:
    """Units of ``10**-decimals`` of x rounded half-up, halves away from zero (a difference
    and its negation round to opposite values)."""
    units = (abs(x) * 10**decimals + Fraction(1, 2)).__floor__()
    return units if x >= 0 else -units


def _settle_order_stat(values: np.ndarray, e: float, t: float, pos: int, decimals: int, exact) -> int:
    """Exact half-up units (10**-decimals) of the ``pos``-th smallest (0-based) exact value
    behind the floats ``values`` (each within ``t`` of its exact value; ``e`` the float
    ``pos``-th smallest).

    The k-th smallest of perturbed values is within the largest perturbation of the exact
    k-th smallest: the exact one lies in [e − t, e + t]. Entries whose float is below e − 2t
    are exactly below it, those above e + 2t exactly above, so it is the (pos − below)-th of
    the candidates in between, sorted exactly (``exact(indices) -> list[Fraction]``)."""
    below = int(np.count_nonzero(values < e - 2 * t))
    cand = np.flatnonzero(np.abs(values - e) <= 2 * t)
    return half_up_signed(sorted(exact(cand))[pos - below], decimals)


def _intervals(values: np.ndarray, tol: np.ndarray, alpha: Fraction, decimals: int, exact) -> list[list[float] | None]:
    """``[lo, hi]`` per column of ``values`` (B, K) — public scale, half-up to ``decimals``
    — over the column's non-NaN entries; None for a column without any.

    ``tol`` (B, K): each float's error bound. ``exact(k, replicates) -> list[Fraction]``:
    exact values of column k in those replicates (called only for an end within its error
    bound of a rounding boundary)."""
    if values.shape[1] == 0:
        return []
    n_valid = np.count_nonzero(~np.isnan(values), axis=0)
    ordered = np.sort(values, axis=0)  # NaN last
    # ⌈(α/2)·n⌉ and ⌈(1−α/2)·n⌉ (0-based) in Python integers: α may have a 15-digit denominator
    ends_at = [percentile_positions(int(n), alpha) for n in n_valid.tolist()]
    lo = np.array([a for a, _ in ends_at], dtype=np.int64)
    hi = np.array([b for _, b in ends_at], dtype=np.int64)
    t = np.max(np.where(np.isnan(values), 0.0, tol), axis=0)
    cols = np.arange(values.shape[1])
    scale = float(10**decimals)
    ends = []
    for pos in (lo, hi):
        e = ordered[np.minimum(pos, len(values) - 1), cols]
        x = np.abs(np.nan_to_num(e)) * scale
        units = np.floor(x + 0.5)
        near = np.abs(x - np.floor(x) - 0.5) <= 2 * t * scale + x * 4 * _U
        ends.append((e, np.where(e < 0, -units, units).astype(np.int64), near, pos))
    out: list[list[float] | None] = []
    for k in range(values.shape[1]):
        if n_valid[k] == 0:
            out.append(None)
            continue
        pair = []
        for e, units, near, pos in ends:
            u = int(units[k])
            if near[k]:
                valid = np.flatnonzero(~np.isnan(values[:, k]))
                u = _settle_order_stat(values[valid, k], float(e[k]), float(t[k]), int(pos[k]), decimals,
                                       lambda idx, k=k, valid=valid: exact(k, valid[idx]))
            pair.append(_units_value(u, decimals))
        out.append(pair)
    return out


def _units_value(units: int, decimals: int) -> float:
    """The double nearest ``units / 10**decimals`` (both exact doubles: one correctly
    rounded division)."""
    return units / 10**decimals


# ---- ranks and pairs --------------------------------------------------------------------


def _order_signs(boot: Bootstrap, g: int, models: list[int]) -> np.ndarray:
    """``sign(q_i − q_j)`` of the exact Overall-9 replicate values of ``models`` in group g:
    int8 (B, R, R); NaN (no value) counts as below every value, two NaN as equal. Float
    temporaries are made for blocks of replicates (about 8 MiB each)."""
    q_all = boot.q["overall_9"][g][:, models]  # (B, R)
    n_rep, r = q_all.shape
    sign = np.empty((n_rep, r, r), dtype=np.int8)
    close = np.zeros((n_rep, r, r), dtype=bool)
    step = max(1, (8 * 2**20) // max(8 * r * r, 1))
    for a in range(0, n_rep, step):
        q = q_all[a : a + step]
        tol = boot.tolerance(g, np.nan_to_num(q))
        valid = ~np.isnan(q)
        d = np.nan_to_num(q[:, :, None] - q[:, None, :]) if valid.all() else np.nan_to_num(np.where(valid[:, :, None] & valid[:, None, :], q[:, :, None] - q[:, None, :], 0.0))
        vi, vj = valid[:, :, None], valid[:, None, :]
        sign[a : a + step] = np.where(vi & ~vj, 1, np.where(~vi & vj, -1, np.where(~vi & ~vj, 0, np.sign(d)))).astype(np.int8)
        close[a : a + step] = vi & vj & (np.abs(d) <= tol[:, :, None] + tol[:, None, :] + np.abs(d) * 2 * _U)
    # close pairs of different inputs are settled exactly: each model's exact values are made
    # once, for every replicate it is close to another model in, and compared as integer
    # cross products (num_i · den_j against num_j · den_i; both values exist when close)
    pending = []
    for i in range(r):
        for j in range(i + 1, r):
            reps = np.flatnonzero(close[:, i, j])
            if len(reps) == 0:
                continue
            if boot.identical(g, models[i], models[j]):
                sign[reps, i, j] = sign[reps, j, i] = 0
            else:
                pending.append((i, j, reps))
    needed: dict[int, list[np.ndarray]] = {}
    for i, j, reps in pending:
        needed.setdefault(i, []).append(reps)
        needed.setdefault(j, []).append(reps)
    ratios = {}
    for k, parts in needed.items():
        reps = np.unique(np.concatenate(parts))
        ratios[k] = (reps, *boot.exact_ratios("overall_9", g, models[k], reps))
    for i, j, reps in pending:
        (ri, ni, di), (rj, nj, dj) = ratios[i], ratios[j]
        a, b = np.searchsorted(ri, reps), np.searchsorted(rj, reps)
        lhs, rhs = ni[a] * dj[b], nj[b] * di[a]
        s = (lhs > rhs).astype(np.int8) - (lhs < rhs).astype(np.int8)
        sign[reps, i, j] = s
        sign[reps, j, i] = -s
    return sign


def _rank_intervals(sign: np.ndarray, ids: list[str], alpha: Fraction) -> list[list[int]]:
    """Rank interval of each model (SPEC §8): in each replicate, 1 + the models above it
    (a higher exact value, or an equal one with a smaller model_id)."""
    r = len(ids)
    id_before = np.array([[ids[j] < ids[i] for j in range(r)] for i in range(r)])  # [i, j]: j's id first
    above = (sign < 0) | ((sign == 0) & id_before[None, :, :])  # [b, i, j]: j above i
    ranks = 1 + above.sum(axis=2)
    n = ranks.shape[0]
    lo, hi = percentile_positions(n, alpha)
    s = np.sort(ranks, axis=0)
    return [[int(s[lo, i]), int(s[hi, i])] for i in range(r)]


def _holm(p_nums: list[int], denominator: int) -> list[int]:
    """Holm–Bonferroni step-down adjusted p numerators over ``denominator`` (SPEC §8):
    ``max_{j ≤ k} min(1, (K − j + 1)·p_(j))``, capped at 1, in the input order."""
    k = len(p_nums)
    order = sorted(range(k), key=lambda i: p_nums[i])
    out = [0] * k
    running = 0
    for step, i in enumerate(order):
        running = max(running, min(denominator, (k - step) * p_nums[i]))
        out[i] = running
    return out


def _p_value(num: int, den: int) -> float:
    """``num / den`` half-up to :data:`P_DECIMALS` decimals."""
    units = (2 * num * 10**P_DECIMALS + den) // (2 * den)
    return units / 10**P_DECIMALS


def _pairs(boot: Bootstrap, g: int, models: list[int], ids: list[str], sign: np.ndarray, published: list[float], decimals: int) -> list[dict]:
    """Every pair (a above b in published rank order) of group g (SPEC §8): ``diff`` of the
    published Overall-9, the interval of the replicate differences, the two-sided p and the
    Holm-adjusted p over the group's pairs, ``separable`` = adjusted p ≤ α."""
    s = boot.settings
    alpha, b_total = s.alpha, s.n_bootstrap
    q = boot.q["overall_9"][g][:, models]
    tol = boot.tolerance(g, np.nan_to_num(q))
    pairs = [(i, j) for i in range(len(models)) for j in range(i + 1, len(models))]
    if not pairs:
        return []
    a_idx = np.array([i for i, _ in pairs])
    b_idx = np.array([j for _, j in pairs])
    d = q[:, a_idx] - q[:, b_idx]  # NaN unless both have a value
    t = tol[:, a_idx] + tol[:, b_idx] + np.abs(np.nan_to_num(d)) * 2 * _U
    both = ~np.isnan(d)
    sg = sign[:, a_idx, b_idx]
    n_le = np.count_nonzero(both & (sg <= 0), axis=0)
    n_ge = np.count_nonzero(both & (sg >= 0), axis=0)
    p_nums = [min(b_total + 1, 2 * min(1 + int(x), 1 + int(y))) for x, y in zip(n_le, n_ge)]

    def exact_d(k, reps):
        i, j = pairs[k]
        x = boot.exact("overall_9", g, models[i], reps)
        y = boot.exact("overall_9", g, models[j], reps)
        return [u - v for u, v in zip(x, y)]

    cis = _intervals(d, t, alpha, decimals, exact_d)
    adjusted = _holm(p_nums, b_total + 1)
    return [
        {
            "a": ids[i],
            "b": ids[j],
            "diff": float(Decimal(repr(published[i])) - Decimal(repr(published[j]))),
            "ci": ci,
            "p": _p_value(p, b_total + 1),
            "p_holm": _p_value(adj, b_total + 1),
            "separable": Fraction(adj, b_total + 1) <= alpha,
        }
        for (i, j), ci, p, adj in zip(pairs, cis, p_nums, adjusted)
    ]


# ---- the artifact ---------------------------------------------------------------------


def bootstrap_groups(table: ReleaseTable, boards: dict, slices: dict[str, np.ndarray], column: np.ndarray) -> list[GroupDef]:
    """Every group of SPEC §8 with its columns (working order ``column[prompt]``) and, for
    ``all``, strata and slices, the published ranking (from the leaderboard ``boards``, as
    :func:`searchgen_nb.aggregate.leaderboards` returns them)."""
    from searchgen_nb.aggregate import prompt_groups

    groups = prompt_groups(table.prompts)

    def cols(idx) -> np.ndarray:
        return np.sort(column[np.asarray(idx, dtype=np.int64)])

    def ranked(rows: list[dict]) -> tuple[list[str], dict[str, float]]:
        top = [r for r in rows if r["ranked"]]
        return [r["model_id"] for r in top], {r["model_id"]: r["overall_9"] for r in top}

    out = [GroupDef("all:All", cols(groups["stratum"]["All"]), *ranked(boards["leaderboard_overall.json"]))]
    for name in PARTITION_KEYS:
        out.append(GroupDef(f"stratum:{name}", cols(groups["stratum"][name]), *ranked(boards["leaderboard_by_stratum.json"][name])))
    for kind in ("domain", "failure_mode"):
        out += [GroupDef(f"{kind}:{tag}", cols(idx)) for tag, idx in groups[kind].items()]
    for name, idx in slices.items():
        out.append(GroupDef(f"slice:{name}", cols(idx), *ranked(boards["leaderboard_by_slice.json"][name]["overall"])))
    return out


def uncertainty(table: ReleaseTable, zero_fill: dict[str, bool], boards: dict, slices: dict[str, np.ndarray], settings: Settings, decimals: int) -> dict:
    """``uncertainty.json`` (SPEC §8) of a release table and its published leaderboards.

    ``zero_fill``: ``{model_id: policy is zero_fill}``; ``boards``: the leaderboard artifacts
    (:func:`searchgen_nb.aggregate.leaderboards`); ``slices``: ``{name: prompt indices}``.
    Intervals are on the public 0–100 scale, half-up to ``decimals`` (differences: halves away
    from zero); p-values half-up to 4 decimals. ``n_bootstrap`` 0 gives the header with no
    groups. Nothing depends on the table's prompt or model order.
    """
    head = {
        "method": METHOD,
        "n_bootstrap": settings.n_bootstrap,
        "seed": settings.seed,
        "confidence": float(settings.confidence),
        "strata_order": list(LEAF_STRATA),
        "groups": {},
        "pairs": {},
    }
    if settings.n_bootstrap == 0:
        return head
    draws = Draws(*_leaf_and_ids(table), settings.n_bootstrap, settings.seed)
    groups = bootstrap_groups(table, boards, slices, draws.column)
    policy = np.array([zero_fill[m] for m in table.model_ids])
    boot = Bootstrap(table, policy, groups, settings, draws)
    alpha = settings.alpha
    index = {m: k for k, m in enumerate(table.model_ids)}
    for g, group in enumerate(groups):
        rank_of: dict[str, list[int]] = {}
        if group.ranked:
            models = [index[m] for m in group.ranked]
            sign = _order_signs(boot, g, models)
            rank_of = dict(zip(group.ranked, _rank_intervals(sign, group.ranked, alpha)))
            published = [group.published_9[m] for m in group.ranked]
            head["pairs"][group.key] = _pairs(boot, g, models, group.ranked, sign, published, decimals)
        ends = {}
        for name in ("overall_9", "overall_10"):
            q = boot.q[name][g]
            ends[name] = _intervals(q, boot.tolerance(g, np.nan_to_num(q)), alpha, decimals,
                                    lambda k, reps, name=name: boot.exact(name, g, k, reps))
        n_valid = np.count_nonzero(~np.isnan(boot.q["overall_9"][g]), axis=0)
        head["groups"][group.key] = {
            m: {"overall_9": ends["overall_9"][k], "overall_10": ends["overall_10"][k], "rank": rank_of.get(m), "n_valid": int(n_valid[k])}
            for m, k in sorted(index.items())
        }
    return head
