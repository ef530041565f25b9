"""Stratified prompt bootstrap: intervals, rank intervals and Holm-corrected pairwise tests
(data contract, § Uncertainty), drawn a chunk of replicates at a time; every decision a float
could get wrong is settled by :meth:`Bootstrap.exact`."""

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, cast

import numpy as np

from searchgen_nb.aggregate import prompt_groups
from searchgen_nb.config import UncertaintyConfig as Settings
from searchgen_nb.constants import ALL_PAIRS_MAX_MODELS, OVERALL_BOARD
from searchgen_nb.declaration import BENCHMARK, PARTITION, SLICES, TAGS, Declaration
from searchgen_nb.table import OVERALL_9, OVERALL_10, SCORED_CODE, ReleaseTable

LEAF_STRATA = ("NoSearch", "VisualSearch", "TextualSearch")  # in draw order
METHOD = "stratified prompt bootstrap"
CHUNK_BYTES = 64 * 2**20  # of one chunk of the prompt × replicate count matrix (float64)
BLOCK_BYTES = 256 * 2**20  # of the replicate values of the groups worked on at once
_U = 2.0**-53  # unit roundoff of float64
_NAMES = ("overall_9", "overall_10")


class Draws:
    """The replicates as chunks of a prompt × replicate count matrix (prompts in the order
    given); ``strata``: each non-empty leaf stratum's prompts in sample_id order."""

    def __init__(
        self,
        leaf: list[str],
        sample_ids: list[str],
        n_bootstrap: int,
        seed: int,
        chunk_bytes: int | None = None,
    ) -> None:
        if unknown := sorted(set(leaf) - set(LEAF_STRATA)):
            raise ValueError(f"bootstrap: unknown leaf strata {unknown}")
        self.n_prompts = len(leaf)
        by_id = sorted(range(len(leaf)), key=lambda i: sample_ids[i])
        strata = [np.array([i for i in by_id if leaf[i] == s], dtype=np.int64) for s in LEAF_STRATA]
        self.strata = [s for s in strata if len(s)]
        rows = max(1, (chunk_bytes or CHUNK_BYTES) // max(8 * len(leaf), 1))
        self.chunks = [(a, min(a + rows, n_bootstrap)) for a in range(0, n_bootstrap, rows)]
        rng = np.random.default_rng(seed)
        self._states = {}  # a chunked ``integers`` call continues the same stream
        for k, members in enumerate(self.strata):
            for c, (a, b) in enumerate(self.chunks):
                self._states[k, c] = rng.bit_generator.state
                rng.integers(0, len(members), size=(b - a, len(members)))
        self._last: tuple[int, np.ndarray] | None = None

    def indices(self, chunk: int, k: int) -> np.ndarray:
        """The chunk's rows of stratum k's ``idx_s`` (the contract's draws)."""
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = self._states[k, chunk]
        a, b = self.chunks[chunk]
        return rng.integers(0, len(self.strata[k]), size=(b - a, len(self.strata[k])))

    def by_prompt(self, chunk: int) -> np.ndarray:
        """float64 (n_prompts, rows): how often each replicate of the chunk drew each prompt,
        laid out by prompt so that a group's prompts are whole rows (the last chunk asked for
        is kept)."""
        if self._last is None or self._last[0] != chunk:
            rows = self.chunks[chunk][1] - self.chunks[chunk][0]
            out = np.zeros((self.n_prompts, rows))
            for k, members in enumerate(self.strata):
                cells = self.indices(chunk, k) * rows + np.arange(rows)[:, None]
                counts = np.bincount(cells.ravel(), minlength=rows * len(members))
                out[members] = counts.reshape(len(members), rows)
            self._last = (chunk, out)
        return self._last[1]

    def count_rows(self, replicates) -> np.ndarray:
        """Counts of the given replicates (any order): int64 (len, n_prompts)."""
        replicates = np.asarray(replicates, dtype=np.int64)
        out = np.empty((len(replicates), self.n_prompts), dtype=np.int64)
        for c, (a, b) in enumerate(self.chunks):
            if len(pick := np.flatnonzero((replicates >= a) & (replicates < b))):
                out[pick] = self.by_prompt(c)[:, replicates[pick] - a].T
        return out


@dataclass
class GroupDef:
    """A group: ``key``, its prompts and, in a rank group, ``{model_id: published Overall-9}``
    of the ranked rows in rank order."""

    key: str
    columns: np.ndarray
    ranked: dict[str, float] | None = None


class Bootstrap:
    """``q[name][g]``: float64 (B, M) replicate values ``mean × 100 / 3`` of Overall-9 / -10
    in group g, NaN where the replicate has no value; models in the table's order."""

    def __init__(
        self,
        table: ReleaseTable,
        zero_fill: np.ndarray,
        groups: list[GroupDef],
        settings: Settings,
        draws: Draws | None = None,
    ) -> None:
        self.groups, self.settings = groups, settings
        leaf, ids = ([p[k] for p in table.prompts] for k in ("search_type", "sample_id"))
        self.draws = draws or Draws(leaf, ids, settings.n_bootstrap, settings.seed)
        scored = table.status == SCORED_CODE
        self.x, self.inc = {}, {}  # (P, M): numerators (0 where not included), inclusion 0/1
        for name, col in zip(_NAMES, (OVERALL_9, OVERALL_10)):
            present = scored & ~np.isnan(table.values[:, :, col])
            self.x[name] = np.where(present, table.values[:, :, col], 0.0).T
            self.inc[name] = (present | (zero_fill[:, None] & ~scored)).T.astype(np.int64)
        y = np.vstack([self.x[name].T for name in _NAMES] + [self.inc[name].T for name in _NAMES])
        m = table.n_models
        self.q = {name: [np.empty((settings.n_bootstrap, m)) for _ in groups] for name in _NAMES}
        for c, (a, b) in enumerate(self.draws.chunks):
            counts = self.draws.by_prompt(c)
            for g, group in enumerate(groups):
                sums = (y[:, group.columns] @ counts[group.columns]).T
                num, den = sums[:, : 2 * m], sums[:, 2 * m :]
                with np.errstate(divide="ignore", invalid="ignore"):
                    q = np.where(den > 0, num / den * 100.0 / 3.0, np.nan)
                self.q["overall_9"][g][a:b], self.q["overall_10"][g][a:b] = q[:, :m], q[:, m:]

    def tolerance(self, g: int, q: np.ndarray) -> np.ndarray:
        """Error bound of float values ``q`` of group g (a sum of k non-negative terms is within
        (k−1)·u of its value, three more roundings follow)."""
        return np.abs(q) * (len(self.groups[g].columns) + 8.0) * (2 * _U)

    def exact(self, name: str, g: int, m: int, replicates) -> list[Fraction | None]:
        """The exact public-scale values (``mean × 100 / 3``) of model m in group g in the given
        replicates, None where one has no value: every decision a float could get wrong."""
        cols = self.groups[g].columns
        counts = self.draws.count_rows(replicates)[:, cols]
        ratios = [v.as_integer_ratio() for v in self.x[name][cols, m].tolist()]
        shift = max((d.bit_length() - 1 for _, d in ratios), default=0)  # d: powers of 2
        ints = np.array([n << (shift - d.bit_length() + 1) for n, d in ratios], dtype=object)
        nums = ((counts.astype(object) @ ints) * 100).tolist()
        dens = (counts @ self.inc[name][cols, m]).tolist()
        return [Fraction(n, (3 * d) << shift) if d else None for n, d in zip(nums, dens)]


def percentile_positions(n: int, alpha: Fraction) -> tuple[int, int]:
    """0-based positions of the interval ends among n sorted values: 1-based ⌈(α/2)·n⌉ and
    ⌈(1−α/2)·n⌉."""
    return max(math.ceil(alpha / 2 * n), 1) - 1, max(math.ceil((1 - alpha / 2) * n), 1) - 1


def half_up_signed(x: Fraction, decimals: int) -> int:
    """Units of ``10**-decimals`` of x rounded half-up, halves away from zero."""
    units = math.floor(abs(x) * 10**decimals + Fraction(1, 2))
    return units if x >= 0 else -units


def interval(values: np.ndarray, tol: np.ndarray, alpha: Fraction, decimals: int, exact):
    """``[lo, hi]`` of the non-NaN ``values`` (B,) half-up to ``decimals``, None without any;
    an end within its error bound ``tol`` of a boundary is settled among the candidates within
    2t of it, sorted by ``exact(replicates) -> list[Fraction]``."""
    valid = np.flatnonzero(~np.isnan(values))
    if len(valid) == 0:
        return None
    v, t, out = values[valid], float(np.max(tol[valid])), []
    ends = percentile_positions(len(v), alpha)
    for pos, e in zip(ends, np.partition(v, ends)[list(ends)].tolist()):
        x = abs(e) * 10**decimals
        if abs(x - math.floor(x) - 0.5) > 2 * t * 10**decimals + x * 4 * _U:
            units = math.floor(x + 0.5) * (1 if e >= 0 else -1)
        else:
            below = int(np.count_nonzero(v < e - 2 * t))
            near = sorted(exact(valid[np.abs(v - e) <= 2 * t]))
            units = half_up_signed(near[pos - below], decimals)
        out.append(units / 10**decimals)
    return out


def intervals(values: np.ndarray, tol: np.ndarray, alpha: Fraction, decimals: int, exact) -> list:
    """:func:`interval` of every column k of ``values`` (B, K) with ``exact(k, replicates)``."""
    return [
        interval(values[:, k], tol[:, k], alpha, decimals, lambda r, k=k: exact(k, r))
        for k in range(values.shape[1])
    ]


def _pair_signs(boot: Bootstrap, g: int, i: int, j: int) -> tuple[np.ndarray, ...]:
    """``(sign, d, t)`` per replicate: the sign of the exact Overall-9 difference of models i
    and j in group g (no value is below any value), the float differences, their error bounds."""
    qi, qj = boot.q["overall_9"][g][:, i], boot.q["overall_9"][g][:, j]
    d = qi - qj
    t = boot.tolerance(g, np.nan_to_num(qi)) + boot.tolerance(g, np.nan_to_num(qj))
    t += np.abs(np.nan_to_num(d)) * 2 * _U
    vi, vj = ~np.isnan(qi), ~np.isnan(qj)
    sign = np.where(vi & vj, np.sign(np.nan_to_num(d)), vi.astype(np.int64) - vj).astype(np.int64)
    close = np.flatnonzero(vi & vj & (np.abs(np.nan_to_num(d)) <= t))
    cols, x, inc = boot.groups[g].columns, boot.x["overall_9"], boot.inc["overall_9"]
    if np.array_equal(x[cols, i], x[cols, j]) and np.array_equal(inc[cols, i], inc[cols, j]):
        sign[close] = 0  # the same inputs (a model listed twice): equal in every replicate
    elif len(close):  # both have a value where close
        exact_i, exact_j = (
            cast(list[Fraction], boot.exact("overall_9", g, k, close)) for k in (i, j)
        )
        sign[close] = [(a > b) - (a < b) for a, b in zip(exact_i, exact_j)]
    return sign, d, t


def _holm(p_nums: list[int], denominator: int) -> list[int]:
    """Holm–Bonferroni adjusted p numerators over ``denominator`` (in input order)."""
    out, running = [0] * len(p_nums), 0
    for step, i in enumerate(sorted(range(len(p_nums)), key=lambda i: p_nums[i])):
        running = max(running, min(denominator, (len(p_nums) - step) * p_nums[i]))
        out[i] = running
    return out


def _p_value(num: int, den: int) -> float:
    """``num / den`` half-up to the 4 decimals of published p-values."""
    return (2 * num * 10**4 + den) // (2 * den) / 10**4


def tested_pairs(n_ranked: int, n_models: int) -> list[tuple[int, int]]:
    """Positions ``(i, j)``, i above j, of the pairs tested among a group's ``n_ranked`` ranked
    models: every pair, or in a release of more than :data:`ALL_PAIRS_MAX_MODELS` configured
    models the models adjacent in rank (data contract, § Uncertainty)."""
    if n_models > ALL_PAIRS_MAX_MODELS:
        return [(i, i + 1) for i in range(n_ranked - 1)]
    return [(i, j) for i in range(n_ranked) for j in range(i + 1, n_ranked)]


def _input_classes(boot: Bootstrap, g: int, models: list[int]) -> np.ndarray:
    """Per model, the first of ``models`` with the same Overall-9 inputs in group g: equal in
    every replicate (a model listed twice)."""
    cols = boot.groups[g].columns
    first: dict[bytes, int] = {}
    x, inc = (
        np.ascontiguousarray(a[cols][:, models].T)
        for a in (boot.x["overall_9"], boot.inc["overall_9"])
    )
    return np.array(
        [first.setdefault(x[k].tobytes() + inc[k].tobytes(), k) for k in range(len(models))]
    )


def replicate_ranks(boot: Bootstrap, g: int, models: list[int], ids: list[str]) -> np.ndarray:
    """int64 (B, R): the rank of each of the ranked ``models`` (ids ``ids``) in every replicate
    of group g, 1 + the models above it: a higher exact Overall-9, or an equal one with a
    smaller model_id; no value is below any value. Sorted by the floats; neighbours within
    their error bounds of each other are settled by :meth:`Bootstrap.exact`."""
    same = _input_classes(boot, g, models)
    q = boot.q["overall_9"][g][:, models][:, same]  # equal inputs: the very same floats
    by_id = np.argsort(np.argsort(np.array(ids, dtype=object)))
    key = np.where(np.isnan(q), np.inf, -q)
    order = np.lexsort((np.broadcast_to(by_id, q.shape), key), axis=1)
    v = np.take_along_axis(q, order, axis=1)
    t = np.take_along_axis(boot.tolerance(g, np.nan_to_num(q)), order, axis=1)
    gap = v[:, :-1] - v[:, 1:]  # NaN where either has no value: never close
    close = gap <= t[:, :-1] + t[:, 1:] + np.abs(gap) * 2 * _U
    _settle(boot, g, models, ids, order, close, same[order[:, :-1]] != same[order[:, 1:]])
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, len(models) + 1)[None, :], axis=1)
    return ranks


def _settle(
    boot: Bootstrap,
    g: int,
    models: list[int],
    ids: list[str],
    order: np.ndarray,
    close: np.ndarray,
    differ: np.ndarray,
) -> None:
    """Reorder in place, by exact value then model_id, each run of ``order`` (B, R) linked by
    ``close`` (B, R − 1) that holds a link between models of different inputs (``differ``)."""
    runs = []  # (replicate, start, end) of every such run of close neighbours
    for b in np.flatnonzero((close & differ).any(axis=1)).tolist():
        links = np.flatnonzero(close[b]).tolist()
        start = prev = links[0]
        for k in links[1:] + [-1]:  # -1: the end of the last run
            if k != prev + 1:
                if differ[b, start : prev + 1].any():
                    runs.append((b, start, prev + 2))
                start = k
            prev = k
    need: dict[int, list[int]] = {}
    for b, lo, hi in runs:
        for k in order[b, lo:hi].tolist():
            need.setdefault(k, []).append(b)
    exact: dict[tuple[int, int], Fraction] = {}  # every model of a run has a value there
    for k, reps in need.items():
        values = cast(list[Fraction], boot.exact("overall_9", g, models[k], reps))
        exact.update(zip(((k, b) for b in reps), values))
    for b, lo, hi in runs:
        order[b, lo:hi] = sorted(order[b, lo:hi].tolist(), key=lambda k: (-exact[k, b], ids[k]))


def _ranked(
    boot: Bootstrap, g: int, models: list[int], decimals: int, n_models: int
) -> tuple[dict, list]:
    """Rank interval of each ranked model of group g and its tested pairs (a above b in rank
    order; :func:`tested_pairs` of ``n_models`` configured models)."""
    published = boot.groups[g].ranked or {}  # a rank group's: never None here
    n_boot, alpha = boot.settings.n_bootstrap, boot.settings.alpha
    ids, pairs, p_nums = list(published), [], []
    for i, j in tested_pairs(len(ids), n_models):
        sign, d, t = _pair_signs(boot, g, models[i], models[j])
        n_le, n_ge = (int(np.count_nonzero(~np.isnan(d) & c)) for c in (sign <= 0, sign >= 0))
        p_nums.append(min(n_boot + 1, 2 * min(1 + n_le, 1 + n_ge)))
        ci = interval(
            d,
            t,
            alpha,
            decimals,
            lambda reps, pair=(i, j): [
                x - y for x, y in zip(*(boot.exact("overall_9", g, models[k], reps) for k in pair))
            ],
        )
        diff = Decimal(repr(published[ids[i]])) - Decimal(repr(published[ids[j]]))
        pairs.append({"a": ids[i], "b": ids[j], "diff": float(diff), "ci": ci})
    for row, p, adj in zip(pairs, p_nums, _holm(p_nums, n_boot + 1)):
        row.update(
            p=_p_value(p, n_boot + 1),
            p_holm=_p_value(adj, n_boot + 1),
            separable=Fraction(adj, n_boot + 1) <= alpha,
        )
    lo, hi = percentile_positions(n_boot, alpha)
    ranks = np.sort(replicate_ranks(boot, g, models, ids), axis=0)
    return {m: [int(ranks[lo, k]), int(ranks[hi, k])] for k, m in enumerate(ids)}, pairs


def bootstrap_groups(
    table: ReleaseTable, boards: dict, slices: dict, declaration: Declaration | None = None
) -> list[GroupDef]:
    """Every group with its prompts and, for ``all``, strata, slices and breakdowns, the
    published ranking (from the leaderboard artifacts ``boards``); ``declaration``: the group
    kinds (default: the package's)."""
    kinds = (declaration or BENCHMARK).group_kinds
    groups = prompt_groups(table.prompts, kinds)

    def group(key: str, idx, rows: list[dict] | None = None) -> GroupDef:
        top = None if rows is None else {r["model_id"]: r["overall_9"] for r in rows if r["ranked"]}
        return GroupDef(key, np.asarray(idx, dtype=np.int64), top)

    whole_kind, whole = (declaration or BENCHMARK).whole
    out = [group("all:All", groups[whole_kind][whole], boards[OVERALL_BOARD])]
    for kind in kinds:
        board, prefix = boards[kind.board], kind.uncertainty_prefix
        if kind.source == PARTITION:
            out += [
                group(prefix + s, groups[kind.kind][s], board[s]) for s in (kind.groups or ())[1:]
            ]
        elif kind.source == TAGS:
            out += [group(prefix + t, idx) for t, idx in groups[kind.kind].items()]
        elif kind.source == SLICES:
            out += [group(prefix + s, idx, board[s]["overall"]) for s, idx in slices.items()]
        else:
            out += [group(prefix + v, idx, board[v]) for v, idx in groups[kind.kind].items()]
    return out


def uncertainty(
    table: ReleaseTable,
    zero_fill: dict[str, bool],
    boards: dict,
    slices: dict[str, np.ndarray],
    settings: Settings,
    decimals: int,
    declaration: Declaration | None = None,
) -> dict:
    """``uncertainty.json`` of a release table and its leaderboard artifacts ``boards``;
    ``zero_fill``: ``{model_id: policy is zero_fill}``, ``slices``: ``{name: prompt indices}``,
    ``declaration``: the group kinds (default: the package's). Intervals half-up to
    ``decimals``; ``n_bootstrap`` 0: the header, no groups."""
    head: dict[str, Any] = {
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
    groups = bootstrap_groups(table, boards, slices, declaration)
    zero = np.array([zero_fill[m] for m in table.model_ids])
    index = {m: k for k, m in enumerate(table.model_ids)}
    per_block = max(1, BLOCK_BYTES // (16 * settings.n_bootstrap * table.n_models))
    draws = None
    for start in range(0, len(groups), per_block):  # the replicate values of a block at a time
        boot = Bootstrap(table, zero, groups[start : start + per_block], settings, draws)
        draws = boot.draws
        for g, group in enumerate(boot.groups):
            head["groups"][group.key] = _group_cells(boot, g, index, decimals, head["pairs"])
    return head


def _group_cells(
    boot: Bootstrap, g: int, index: dict[str, int], decimals: int, pairs: dict
) -> dict:
    """``groups[key]`` of group g of ``boot`` (``index``: ``{model_id: column}``); a rank group's
    pairs go into ``pairs``."""
    group, settings = boot.groups[g], boot.settings
    rank_of: dict = {}
    if group.ranked:
        models = [index[m] for m in group.ranked]
        rank_of, pairs[group.key] = _ranked(boot, g, models, decimals, len(index))
    ends = {
        name: intervals(
            q[g],
            boot.tolerance(g, np.nan_to_num(q[g])),
            settings.alpha,
            decimals,
            lambda k, r, name=name: boot.exact(name, g, k, r),
        )
        for name, q in boot.q.items()
    }
    n_valid = np.count_nonzero(~np.isnan(boot.q["overall_9"][g]), axis=0)
    return {
        m: {
            **{name: ends[name][k] for name in _NAMES},
            "rank": rank_of.get(m),
            "n_valid": int(n_valid[k]),
        }
        for m, k in index.items()
    }
