"""The work a release config asks for (what grows with B, models, prompts, tags and slices, not
seconds), estimated before any result file is read and refused above the bounds of the data
contract (§ Release config); ``benchmarks/bench_bounds.py`` measures what they cost."""

from dataclasses import dataclass, replace

from searchgen_nb.config import ReleaseConfig
from searchgen_nb.constants import (
    ALL_PAIRS_MAX_MODELS,
    CELL_BYTES,
    MAX_COMPARISONS,
    MAX_DRAW_SUMS,
    MAX_PAIRS,
    MAX_PUBLISHED_BYTES,
    MAX_ROW_PROMPTS,
    MAX_ROWS,
    MAX_VALUES,
    PAIR_BYTES,
    PARTITION_KEYS,
    ROW_BYTES,
)
from searchgen_nb.declaration import BREAKDOWN
from searchgen_nb.errors import ConfigError

# The bounds (MAX_*) are those of :mod:`searchgen_nb.constants`, which the gate reads too.
_GROW_WITH_B = ("values", "comparisons", "draw_sums")


@dataclass(frozen=True)
class Work:
    """The size of a release: prompts, models, tags, slices and bootstrap replicates."""

    n_prompts: int
    n_models: int
    n_tags: int  # distinct domain and failure-mode tags: one group each
    n_slices: int  # published slices (with the slice of every prompt)
    memberships: int  # prompts summed over every group (All, strata, tags, slices, breakdowns)
    n_bootstrap: int
    n_breakdown_groups: int = 0  # the values of every breakdown: one group and board row each

    #: bootstrap groups: All, the four strata, every tag, slice and breakdown group; those ranked
    #: (with ranks and pairwise tests): All, strata, slices, breakdown groups
    groups = property(
        lambda self: 1 + len(PARTITION_KEYS) + self.n_tags + self.n_slices + self.n_breakdown_groups
    )
    ranked_groups = property(
        lambda self: 1 + len(PARTITION_KEYS) + self.n_slices + self.n_breakdown_groups
    )
    values = property(lambda self: self.n_bootstrap * self.groups * self.n_models)
    comparisons = property(lambda self: self.n_bootstrap * self.ranked_groups * self.tested)
    draw_sums = property(
        lambda self: (
            self.n_bootstrap * self.n_models * (self.memberships + self.n_prompts * self.groups)
        )
    )
    rows = property(
        lambda self: (
            (
                (1 + self.n_slices) * (1 + len(PARTITION_KEYS) + self.n_tags)
                + self.n_breakdown_groups
            )
            * self.n_models
        )
    )
    pairs = property(lambda self: self.n_prompts * self.n_models)
    row_prompts = property(lambda self: self.rows * self.n_prompts)

    @property
    def tested(self) -> int:
        """Pairs tested in a ranked group at most: every pair of the models, or above
        ALL_PAIRS_MAX_MODELS models the neighbours in rank."""
        m = self.n_models
        return m - 1 if m > ALL_PAIRS_MAX_MODELS else m * (m - 1) // 2

    @property
    def published_bytes(self) -> int:  # rough size of the leaderboards and uncertainty.json
        pairs = self.ranked_groups * self.tested
        bootstrap = self.groups * self.n_models * CELL_BYTES + pairs * PAIR_BYTES
        return self.rows * ROW_BYTES + (bootstrap if self.n_bootstrap else 0)

    def _more(self, m: str) -> str:
        """The breakdowns' rows, when there are any."""
        return f" + {self.n_breakdown_groups:,} breakdown groups × {m} models" * bool(
            self.n_breakdown_groups
        )

    def problems(self) -> list[str]:
        """What exceeds its bound: the figure, how it is made, the bound and what to change."""
        b, m, g = f"n_bootstrap {self.n_bootstrap:,}", f"{self.n_models:,}", self.groups
        board, p = 1 + len(PARTITION_KEYS) + self.n_tags, f"{self.n_prompts:,}"
        fewer, publish = "fewer slices, tags or models", "publish fewer slices, tags or models"
        figures = [
            ("values", MAX_VALUES, fewer, f"the bootstrap would keep {self.values:,} replicate "
             f"values ({b} × {g:,} groups × {m} models)"),
            ("comparisons", MAX_COMPARISONS, "fewer models or slices", "the pairwise tests would "
             f"compare {self.comparisons:,} replicate pairs ({b} × {self.ranked_groups:,} ranked "
             f"groups × {self.tested:,} pairs of {m} models)"),
            ("draw_sums", MAX_DRAW_SUMS, fewer, f"the bootstrap would sum {self.draw_sums:,} "
             f"prompt draws ({b} × {m} models × {self.memberships + self.n_prompts * g:,} prompt "
             "memberships)"),
            ("rows", MAX_ROWS, publish, f"the leaderboards would hold {self.rows:,} rows "
             f"({1 + self.n_slices:,} boards × {board:,} groups × {m} models{self._more(m)})"),
            ("pairs", MAX_PAIRS, "configure fewer models (or prompts)", "the release would "
             f"read and check {self.pairs:,} prompt × model pairs ({p} prompts × {m} models)"),
            ("row_prompts", MAX_ROW_PROMPTS, publish, "the aggregation would sum "
             f"{self.row_prompts:,} leaderboard row × prompt cells ({self.rows:,} rows × {p} "
             "prompts)"),
            ("published_bytes", MAX_PUBLISHED_BYTES, publish, "the leaderboards and "
             f"uncertainty.json would take about {self.published_bytes / 2**20:,.0f} MiB"),
        ]  # fmt: skip
        out, one = [], replace(self, n_bootstrap=1)  # the figures that grow with B: linear in it
        largest = min(
            bound // max(getattr(one, name), 1)
            for name, bound, _, _ in figures
            if name in _GROW_WITH_B
        )
        for name, bound, other, said in figures:  # other: the change besides a smaller B
            if getattr(self, name) > bound:
                shown = f"{bound / 2**20:,.0f} MiB" if name == "published_bytes" else f"{bound:,}"
                smaller = f"set uncertainty.n_bootstrap ≤ {largest:,}"
                change = f"{smaller}, or {other}" if name in _GROW_WITH_B else other
                out.append(f"{said}; bound {shown}: {change}")
        return out


def measure(cfg: ReleaseConfig, prompts: list[dict], members: dict) -> Work:
    """The :class:`Work` of a release's prompt records and ``{slice: prompt indices}``."""
    from searchgen_nb.aggregate import prompt_groups

    declaration = cfg.declaration()
    groups = prompt_groups(prompts, declaration.group_kinds)
    kinds = {k.kind: k.source for k in declaration.group_kinds}
    n_tags = sum(len(gs) for kind, gs in groups.items() if kinds[kind] == "tags")
    n_breakdown = sum(len(gs) for kind, gs in groups.items() if kinds[kind] == BREAKDOWN)
    in_groups = [len(idx) for kind in (*groups.values(), members) for idx in kind.values()]
    return Work(
        len(prompts),
        len(cfg.models),
        n_tags,
        len(members),
        sum(in_groups),
        cfg.uncertainty.n_bootstrap,
        n_breakdown,
    )


def preflight(cfg: ReleaseConfig, prompt_set) -> Work:
    """The :func:`measure` of a release (``prompt_set``: its ``PromptSet``) before any result file
    is read; :class:`ConfigError` naming the config for an empty slice or a figure over its bound
    (:func:`searchgen_nb.slices.refuse_empty`; each figure named, with the setting to change)."""
    from searchgen_nb.records import prompt_record
    from searchgen_nb.slices import refuse_empty, refuse_unknown_fields, slice_members, slice_specs

    prompts = [prompt_record(p, i) for i, p in enumerate(prompt_set.prompts)]
    specs = slice_specs(cfg.slices, len(prompts))
    members = slice_members(prompts, specs)
    refuse_empty(specs, members, cfg.config_path)
    refuse_unknown_fields(cfg.declaration().breakdowns, prompts, cfg.config_path)
    work = measure(cfg, prompts, members)
    if work.problems():
        raise ConfigError(
            f"config {cfg.config_path}: the release asks for more work than this "
            "version bounds (data contract, § Release config): " + "; ".join(work.problems())
        )
    return work
