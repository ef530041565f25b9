"""Names fixed by the data contract: components, statuses, strata, policies, schema version."""

SCHEMA_VERSION = "1.1.0"

#: The ten components in the contract's order (data contract, § The ten components, Overall-9
#: and Overall-10); Overall-10 uses all of them.
COMPONENTS = (
    "checklist",
    "rubric_adaptive",
    "prompt_faithfulness",
    "image_quality",
    "text_rendering",
    "ai_naturalness",
    "composition_and_aesthetics",
    "physical_plausibility",
    "visual_reference_evaluation",
    "text_reference_evaluation",
)
#: Excluded from Overall-9 only ("text fidelity" = text reference, never text rendering).
EXCLUDED_PUBLIC_COMPONENT = "text_reference_evaluation"
#: The nine public components of Overall-9.
OVERALL_9_COMPONENTS = tuple(c for c in COMPONENTS if c != EXCLUDED_PUBLIC_COMPONENT)

#: The six generic rubric dimensions; every other ``rubric:*`` key is adaptive.
GENERIC_RUBRIC = COMPONENTS[2:8]

COMPONENT_LABELS = dict(
    zip(
        COMPONENTS,
        (
            "Checklist",
            "Rubric Adaptive",
            "Prompt Faithfulness",
            "Image Quality",
            "Text Rendering",
            "AI Naturalness",
            "Composition & Aesthetics",
            "Physical Plausibility",
            "Visual Reference",
            "Text Reference",
        ),
    )
)

#: Status of a prompt × model pair (data contract, § Status of a prompt × model pair).
SCORED = "scored"
INVALID = "invalid_evaluation"
MISSING_EVALUATION = "missing_evaluation"
MISSING_GENERATION = "missing_generation"
STATUSES = (SCORED, INVALID, MISSING_EVALUATION, MISSING_GENERATION)

#: Missing-result policies (data contract, § Aggregation over a group of prompts).
ZERO_FILL = "zero_fill"
EXCLUDE = "exclude"

#: Stratum groups in the order of ``leaderboard_by_stratum.json`` (data contract, § Artifacts).
STRATUM_GROUPS = ("All", "NoSearch", "SearchIntensive", "VisualSearch", "TextualSearch")
PARTITION_KEYS = ("NoSearch", "SearchIntensive", "VisualSearch", "TextualSearch")

SCALE_RAW = (0, 3)
SCALE_PUBLIC = (0, 100)

ARTIFACTS = (
    "prompt_scores.jsonl",
    "leaderboard_overall.json",
    "leaderboard_by_stratum.json",
    "leaderboard_by_domain.json",
    "leaderboard_by_failure_mode.json",
    "leaderboard_by_slice.json",
    "uncertainty.json",
    "changes.json",
    "prompt_evidence.jsonl",
)
MANIFEST = "manifest.json"
UNCERTAINTY = "uncertainty.json"
CHANGES = "changes.json"
VALIDATION_REPORT = "validation_report.json"

DEFAULT_RESULT_PATH = "{release_row}/{lane}/{source_id}/augmented_parsed_result_ffjudge_pp.json"
DEFAULT_GENERATION_GLOB = ("*.png", "*.jpg", "*.jpeg", "*.webp")
TOOLGEN_EXTRACTOR = "paper_materials.recompute_tables:extract_10comp"
BUILTIN_EXTRACTOR = "searchgen_nb.extract:extract_components"

#: In a release of more than this many configured models, each ranked group tests the pairs of
#: models adjacent in its rank order, not every pair (data contract, § Uncertainty).
ALL_PAIRS_MAX_MODELS = 40

#: Bounds of the work a release asks for (data contract, § Release config, "Bounded work"), read
#: by ``data``'s preflight and by the gate, each counting with its own code; what a config at each
#: one costs on a 2-core machine is measured in benchmarks/README.md (Bounded work) and stated in
#: the contract. Prompt × model pairs: result files read and checked; leaderboard row × prompt
#: cells: the aggregation's membership products.
MAX_VALUES = 150_000_000
MAX_COMPARISONS = 150_000_000
MAX_DRAW_SUMS = 600_000_000_000
MAX_ROWS = 60_000
MAX_PAIRS = 1_100_000
MAX_ROW_PROMPTS = 250_000_000
MAX_PUBLISHED_BYTES = 128 * 2**20
#: Bytes of the published files per leaderboard row, bootstrap cell and tested pair, rounded up
#: from the largest measured (a row about 1,700, a tested pair about 200: benchmarks/README.md).
ROW_BYTES, CELL_BYTES, PAIR_BYTES = 1_800, 100, 220
