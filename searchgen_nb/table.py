"""The in-memory release: every prompt × model pair's status code and twelve raw 0–3 values
(ten components, Overall-10, Overall-9; NaN = null) as numpy arrays (data contract, § Status of
a prompt × model pair; § Per-prompt values), the doubles bit-identical to what was read."""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from searchgen_nb.constants import STATUSES
from searchgen_nb.declaration import COMPONENTS

#: Columns of :attr:`ReleaseTable.values`: the ten components, then the prompt's Overall-10 and
#: Overall-9 (data contract, § Per-prompt values). Raw 0–3; NaN = null.
VALUE_COLUMNS = (*COMPONENTS, "overall_10", "overall_9")
OVERALL_10 = len(COMPONENTS)
OVERALL_9 = OVERALL_10 + 1
#: Status codes: index into :data:`~searchgen_nb.constants.STATUSES` (0 = scored).
STATUS_CODE = {s: i for i, s in enumerate(STATUSES)}
SCORED_CODE = STATUS_CODE["scored"]


@dataclass
class ReleaseTable:
    """Every prompt × model pair, column-wise: ``status`` (int8 codes, models × prompts),
    ``values`` (models × prompts × :data:`VALUE_COLUMNS`), ``errors[(m, p)]`` of the invalid."""

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
    def empty(
        cls,
        prompts: list[dict],
        model_ids: list[str],
        lanes: list[str],
        source_ids: list[str],
        result_files: list[list[str]],
    ) -> "ReleaseTable":
        """A table with every pair ``missing_generation`` and every value null, to be filled."""
        shape = (len(model_ids), len(prompts))
        return cls(
            prompts,
            list(model_ids),
            list(lanes),
            list(source_ids),
            np.full(shape, STATUS_CODE["missing_generation"], dtype=np.int8),
            np.full((*shape, len(VALUE_COLUMNS)), np.nan),
            result_files,
        )

    def status_counts(self) -> dict[str, dict[str, int]]:
        """``{model_id: {status: count}}`` over all prompts, every status present (0 when none)."""
        return {
            m: {s: int(np.count_nonzero(self.status[k] == i)) for i, s in enumerate(STATUSES)}
            for k, m in enumerate(self.model_ids)
        }

    def entry(self, k: int, p: int) -> dict:
        """The ``models[model_id]`` part of record ``p`` for model index ``k``."""
        nulls = [None if v != v else v for v in self.values[k, p].tolist()]  # NaN → null
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
        """The records of ``prompt_scores.jsonl`` (§ Artifacts), models in config order."""
        for p, prompt in enumerate(self.prompts):
            yield {**prompt, "models": {m: self.entry(k, p) for k, m in enumerate(self.model_ids)}}

    @classmethod
    def from_records(cls, records: list[dict], model_ids: list[str]) -> "ReleaseTable":
        """The table of records :meth:`records` wrote (``KeyError`` for a missing model)."""
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
                row = (*(comps[c] for c in COMPONENTS), e["overall_10_raw"], e["overall_9_raw"])
                table.values[k, p] = [np.nan if v is None else v for v in row]
                if e.get("error") is not None:
                    table.errors[(k, p)] = e["error"]
        return table

    def permuted(self, prompt_order: Sequence[int], model_order: Sequence[int]) -> "ReleaseTable":
        """The same pairs with prompts and models in another order (the gate's order check)."""
        new_p, new_m = np.argsort(prompt_order), np.argsort(model_order)  # old index → new index
        model_ids, lanes, source_ids = (
            [x[k] for k in model_order] for x in (self.model_ids, self.lanes, self.source_ids)
        )
        cells = np.ix_(np.asarray(model_order), np.asarray(prompt_order))
        return ReleaseTable(
            [self.prompts[p] for p in prompt_order],
            model_ids,
            lanes,
            source_ids,
            self.status[cells],
            self.values[cells],
            [[self.result_files[k][p] for p in prompt_order] for k in model_order],
            {(int(new_m[k]), int(new_p[p])): reason for (k, p), reason in self.errors.items()},
        )
