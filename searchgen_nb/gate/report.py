"""The release gate's report: its fifteen checks, one line describing each, the pass/fail
record of every check with the offending items, and the named warnings (data contract, § The
release gate)."""

#: The checks in report order, one line each for reports and the book's Validation and Audit pages.
CHECK_DESCRIPTIONS = {
    "schema": "every artifact (each line of prompt_scores.jsonl) conforms to its JSON Schema"
    " (draft 2020-12, searchgen_nb/schemas/)",
    "expected_counts": "prompt count and partition counts equal the config's expected values;"
    " every prompt's stratum follows the partition rule",
    "unique_records": "unique sample_id; no duplicate prompt × model record; every configured"
    " model present for every prompt",
    "tag_fields": "every domain and failure-mode field is a list of strings without duplicates",
    "component_values": "scored values finite and within 0–3; statuses from the four allowed;"
    " non-scored records carry no values",
    "null_zero_distinct": "null, missing, invalid and 0.0 stay distinguishable in records and in"
    " every aggregate row",
    "prompt_overalls": "every per-prompt Overall-9 and Overall-10 recomputes exactly from its"
    " components",
    "aggregates": "every aggregate row (counts, coverage, components, overalls, rank) reproduces"
    " under the declared policy",
    "paper_table": "Overall-10 within half a rounding unit of the canonical recomputation"
    " (paper table)",
    "coverage_lock": "no model has fewer scored prompts than its locked n_scored",
    "lost_results": "every pair the previous release scored is scored again, or acknowledged in"
    " expected.lost_results",
    "order_invariance": "the pipeline's aggregation of the release with prompts and models"
    " permuted equals the independent reconstruction",
    "uncertainty": "every bootstrap interval, rank interval and (Holm-adjusted) p-value in"
    " uncertainty.json recomputes from prompt_scores.jsonl with the validator's own code"
    " (data contract, § Uncertainty: the stratified prompt bootstrap)",
    "strict_json": "artifacts parse with NaN/Infinity rejected and match the sha256 recorded in"
    " the manifest; a folder's validation_report.json says every check passed",
    "evidence": "prompt_evidence.jsonl conforms to its schema, holds one entry per prompt and only"
    " pairs that exist, agrees with the records' scores and with the prompt texts the manifest"
    " records, and every thumbnail and preview is within its bound",
}
CHECKS = tuple(CHECK_DESCRIPTIONS)
_MAX_LISTED = 50  # failures listed per check; the count is always complete
MAX_MESSAGE = 500  # characters of one failure's message


class Report:
    """Validation report: one entry per check with pass/fail and the offending items."""

    def __init__(self) -> None:
        self.checks: dict[str, dict] = {
            name: {"name": name, "passed": True, "n_failures": 0, "failures": [], "skipped": None}
            for name in CHECKS
        }
        self.warnings: list[dict] = []

    def fail(self, check: str, message: str, **where) -> None:
        entry = self.checks[check]
        entry["passed"] = False
        entry["n_failures"] += 1
        if len(entry["failures"]) < _MAX_LISTED:
            if len(message) > MAX_MESSAGE:
                message = message[: MAX_MESSAGE - 1] + "…"
            places = {k: v for k, v in where.items() if v is not None}
            entry["failures"].append({"message": message, **places})

    def warn(self, name: str, message: str) -> None:
        """A named warning: said by the command, kept in the report, shown on the Audit page."""
        self.warnings.append({"name": name, "message": message})

    def skip(self, check: str, why: str) -> None:
        self.checks[check]["skipped"] = why

    @property
    def passed(self) -> bool:
        return all(c["passed"] for c in self.checks.values())

    def as_dict(self) -> dict:
        return {
            "passed": self.passed,
            "checks": list(self.checks.values()),
            "warnings": self.warnings,
        }

    def summary(self) -> str:
        """Human-readable lines: every failed check with its first offending items."""
        lines = []
        for c in self.checks.values():
            if not c["passed"]:
                lines.append(f"check {c['name']} failed ({c['n_failures']} problem(s)):")
            for f in c["failures"][:10]:
                where = ", ".join(f"{k} {v}" for k, v in f.items() if k not in ("message", "pairs"))
                lines.append(f"  - {f['message']}" + (f" [{where}]" if where else ""))
        return "\n".join(lines) if lines else "all release checks passed"

    def warning_lines(self) -> list[str]:
        """One line per named warning: ``warning <name>: <message>``."""
        return [f"warning {w['name']}: {w['message']}" for w in self.warnings]
