"""The in-memory release: prompt × model columns filled by one extraction pass (SPEC §3–4).

A :class:`ReleaseTable` holds, for every configured model and every prompt (sorted by
sample_id), the pair's status code and its twelve raw 0–3 values — the ten components,
Overall-10 and Overall-9 — as one ``float64`` array, NaN meaning null (not applicable, or
not scored). Aggregation (:mod:`searchgen_nb.aggregate`) reads these arrays directly; the
records of ``prompt_scores.jsonl`` are written *from* the table (:meth:`ReleaseTable.records`),
and a staged ``prompt_scores.jsonl`` reads back into the same table
(:meth:`ReleaseTable.from_records`).

Why numpy arrays (and not pandas or pyarrow): the aggregation is a handful of matrix
products of a prompt × group membership matrix with these values, plus exact settlement
of the few cells near a rounding boundary; plain contiguous ``float64``/``int8`` arrays
keep that simple, their memory exact (12 × 8 + 1 bytes of numbers per pair) and the
doubles bit-identical to what was read — there is no index or dtype inference to audit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from searchgen_nb.constants import COMPONENTS, STATUSES

#: Columns of :attr:`ReleaseTable.values`: the ten components (SPEC §2 order), then the
#: prompt's Overall-10 and Overall-9 (SPEC §4). Raw 0–3; NaN = null.
VALUE_COLUMNS = (*COMPONENTS, "overall_10", "overall_9")
OVERALL_10 = len(COMPONENTS)
OVERALL_9 = OVERALL_10 + 1
#: Status codes: index into :data:`~searchgen_nb.constants.STATUSES` (0 = scored).
STATUS_CODE = {s: i for i, s in enumerate(STATUSES)}
SCORED_CODE = STATUS_CODE["scored"]


@dataclass
class ReleaseTable:
    """Every prompt × model pair of a release, column-wise.

    ``prompts``: the prompt part of each record (sample_id, prompt_index, release_row, subset,
    stratum, search_type, domains, failure_modes and optional metadata), sorted by sample_id.
    ``status``: ``int8`` of shape (n_models, n_prompts), codes of :data:`STATUS_CODE`.
    ``values``: ``float64`` of shape (n_models, n_prompts, 12), columns :data:`VALUE_COLUMNS`,
    raw 0–3, NaN = null. ``result_files[m][p]``: the pair's result file below results_root.
    ``errors``: ``{(model index, prompt index): reason}`` of the invalid evaluations.
    """

    prompts: list[dict]
    model_ids: list[str]
    lanes: list[str]
    source_ids: list[str]
    status: np.ndarray
    values: np.ndarray
    result_files: list[list[str]]
    errors: dict[tuple[int, int], str] = field(default_factory=dict)

    @property
    def n_prompts(self) -> int:
        return len(self.prompts)

    @property
    def n_models(self) -> int:
        return len(self.model_ids)

    @classmethod
    def empty(cls, prompts: list[dict], model_ids: list[str], lanes: list[str], source_ids: list[str], result_files: list[list[str]]) -> "ReleaseTable":
        """A table with every pair ``missing_generation`` and every value null, to be filled."""
        shape = (len(model_ids), len(prompts))
        return cls(
            prompts, list(model_ids), list(lanes), list(source_ids),
            np.full(shape, STATUS_CODE["missing_generation"], dtype=np.int8),
            np.full((*shape, len(VALUE_COLUMNS)), np.nan),
            result_files,
        )

    def status_counts(self) -> dict[str, dict[str, int]]:
        """``{model_id: {status: count}}`` over all prompts, every status present (0 when none)."""
        counts = np.stack([(self.status == i).sum(axis=1) for i in range(len(STATUSES))], axis=1)
        return {m: {s: int(counts[k, i]) for i, s in enumerate(STATUSES)} for k, m in enumerate(self.model_ids)}

    def entry(self, k: int, p: int) -> dict:
        """The ``models[model_id]`` part of record ``p`` for model index ``k`` (SPEC §4)."""
        row = self.values[k, p].tolist()
        nulls = [None if v != v else v for v in row]  # NaN → null
        return {
            "status": STATUSES[self.status[k, p]],
            "lane": self.lanes[k],
            "source_id": self.source_ids[k],
            "result_file": self.result_files[k][p],
            "error": self.errors.get((k, p)),
            "components_raw_0to3": dict(zip(COMPONENTS, nulls[:OVERALL_10])),
            "overall_10_raw": nulls[OVERALL_10],
            "overall_9_raw": nulls[OVERALL_9],
        }

    def records(self):
        """Yield the records of ``prompt_scores.jsonl`` in sample_id order (SPEC §6): the
        prompt fields plus ``models`` with every configured model in config order."""
        for p, prompt in enumerate(self.prompts):
            yield {**prompt, "models": {m: self.entry(k, p) for k, m in enumerate(self.model_ids)}}

    @classmethod
    def from_records(cls, records: list[dict], model_ids: list[str]) -> "ReleaseTable":
        """The table of a staged ``prompt_scores.jsonl`` (records as written by :meth:`records`).

        Raises ``KeyError`` when a record lacks a configured model (the validator reports
        such files by name; this reader is for artifacts this package wrote)."""
        prompts = [{k: v for k, v in r.items() if k != "models"} for r in records]
        first = records[0]["models"] if records else {}
        lanes = [first[m]["lane"] if m in first else "" for m in model_ids]
        sources = [first[m]["source_id"] if m in first else "" for m in model_ids]
        files = [[r["models"][m]["result_file"] for r in records] for m in model_ids]
        table = cls.empty(prompts, model_ids, lanes, sources, files)
        for p, r in enumerate(records):
            for k, m in enumerate(model_ids):
                e = r["models"][m]
                table.status[k, p] = STATUS_CODE[e["status"]]
                comps = e["components_raw_0to3"]
                table.values[k, p] = [
                    *(np.nan if comps[c] is None else comps[c] for c in COMPONENTS),
                    np.nan if e["overall_10_raw"] is None else e["overall_10_raw"],
                    np.nan if e["overall_9_raw"] is None else e["overall_9_raw"],
                ]
                if e.get("error") is not None:
                    table.errors[(k, p)] = e["error"]
        return table

    def permuted(self, prompt_order: np.ndarray, model_order: np.ndarray) -> "ReleaseTable":
        """The same pairs with prompts and models in another order (the gate's order check)."""
        new_p, new_m = np.argsort(prompt_order), np.argsort(model_order)  # old index → new index
        return ReleaseTable(
            [self.prompts[p] for p in prompt_order],
            [self.model_ids[k] for k in model_order],
            [self.lanes[k] for k in model_order],
            [self.source_ids[k] for k in model_order],
            self.status[np.ix_(model_order, prompt_order)],
            self.values[np.ix_(model_order, prompt_order)],
            [[self.result_files[k][p] for p in prompt_order] for k in model_order],
            {(int(new_m[k]), int(new_p[p])): reason for (k, p), reason in self.errors.items()},
        )
