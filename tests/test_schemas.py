"""JSON Schemas of the artifacts (searchgen_nb/schemas/, searchgen_nb/schemas.py).

A small release made here validates (the manifest once the four v1.1 slice keys are added,
which the pipeline does not write yet); each schema rejects a wrong type, a missing required
key and an extra key, naming the file and the JSON pointer; the published v1.1 slice rows
differ from ours in exactly the keys stated below.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
import referencing.exceptions
from factory import IMAGE, make_release, model, prompt, result

from searchgen_nb import schemas
from searchgen_nb.config import load_config
from searchgen_nb.declaration import COMPONENTS
from searchgen_nb.gate.checks import Report
from searchgen_nb.pipeline import run_data

PUBLISHED = Path(__file__).parent / "fixtures" / "reference" / "published"
BOARDS = (
    "leaderboard_overall.json",
    "leaderboard_by_stratum.json",
    "leaderboard_by_domain.json",
    "leaderboard_by_failure_mode.json",
)
SCHEMA_FILE_NAMES = {
    "definitions.schema.json",
    "prompt_evidence.line.schema.json",  # checked by the gate's evidence check (gate.evidence)
    "prompt_scores.line.schema.json",
    "leaderboard_overall.schema.json",
    "leaderboard_by_stratum.schema.json",
    "leaderboard_by_domain.schema.json",
    "leaderboard_by_failure_mode.schema.json",
    "leaderboard_by_breakdown.schema.json",  # every breakdown's board
    "uncertainty.schema.json",
    "changes.schema.json",
    "leaderboard_by_slice.schema.json",
    "manifest.schema.json",
    "validation_report.schema.json",
}

PROMPTS = [
    prompt(
        "p01_vis",
        domains=["ART", "HIS"],
        failure_modes=["EIK"],
        difficulty="easy",
        is_miniset=True,
        eval_slices=["testmini"],
    ),
    prompt("p02_texthard", domains=["ART"], failure_modes=["THG"]),
    prompt("p03_ns", subset="NoSearch", domains=["HIS"], failure_modes=[]),
    prompt("p04_text_rendering", domains=["SCI"], failure_modes=["EIK", "THG"]),
]
MODELS = {
    "a": model("Model A", "zero_fill"),
    "b": model("Model B", "exclude", type_="Commercial"),
    "c": model("Model C", pending=True),  # no results: listed, never ranked (rank null)
}
RESULTS = {
    ("a", "p01_vis"): result(
        {"checklist:0": 3, "rubric:prompt_faithfulness": 0.0, "visual_reference_evaluation": 2.0}
    ),
    ("a", "p02_texthard"): result(
        {"text_reference_evaluation": 3.0}
    ),  # Overall-10 but no Overall-9
    ("a", "p03_ns"): {"success": False, "error": "judge timed out"},  # invalid_evaluation
    ("a", "p04_text_rendering"): IMAGE,  # missing_evaluation
    ("b", "p01_vis"): result({"checklist:0": 2, "text_reference_evaluation": 1}),
    ("b", "p02_texthard"): result({"rubric:image_quality": 3}),
    ("b", "p04_text_rendering"): "{not json",
}


def slice_keys(n: int) -> dict:
    """The four v1.1 manifest keys, in the published v1.1 shape, for one slice ``full_<n>``."""
    name = f"full_{n}"
    return {
        "evaluation_slices": {
            "named": {
                name: {
                    "deduplicate_by": "release_row",
                    "expected_rows": n,
                    "include_tags": [],
                    "match": "all",
                }
            },
            "subset_field": "subset",
        },
        "published_slices": [name],
        "output_slice": name,
        "slice_partitions": {
            name: {"NoSearch": 1, "SearchIntensive": 3, "TextualSearch": 2, "VisualSearch": 1}
        },
    }


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("schemas")
    cfg_path = make_release(root, PROMPTS, MODELS, RESULTS, scoring={"min_ranking_coverage": 0.5})
    out = root / "out"
    run_data(load_config(cfg_path), out, progress=False)
    return out


@pytest.fixture(scope="module")
def docs(release) -> dict[str, object]:
    """Every artifact of the release as parsed JSON (prompt_scores.jsonl: list of records), plus
    a v1.1-ready manifest and a leaderboard_by_slice.json built from our own boards."""
    out = {
        n: json.loads((release / n).read_text(encoding="utf-8"))
        for n in (
            *BOARDS,
            "uncertainty.json",
            "changes.json",
            "manifest.json",
            "validation_report.json",
        )
    }
    out["prompt_scores.jsonl"] = [
        json.loads(line)
        for line in (release / "prompt_scores.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    manifest = copy.deepcopy(out["manifest.json"])
    manifest.update(slice_keys(len(PROMPTS)), schema_version="1.1.0")  # the published v1.1 shape
    if "leaderboard_by_slice.json" not in manifest["artifacts"]:
        manifest["artifacts"] = [*manifest["artifacts"], "leaderboard_by_slice.json"]
    out["manifest.json"] = manifest
    out["leaderboard_by_slice.json"] = {
        f"full_{len(PROMPTS)}": {
            "overall": out["leaderboard_overall.json"],
            "strata": out["leaderboard_by_stratum.json"],
            "domains": out["leaderboard_by_domain.json"],
            "failure_modes": out["leaderboard_by_failure_mode.json"],
        }
    }
    return out


def write_folder(folder: Path, docs: dict[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, doc in docs.items():
        if name.endswith(".jsonl"):
            (folder / name).write_text("".join(json.dumps(r) + "\n" for r in doc), encoding="utf-8")
        else:
            (folder / name).write_text(json.dumps(doc), encoding="utf-8")
    return folder


def errors(name: str, doc: object) -> list[jsonschema.ValidationError]:
    return list(schemas.validator_for(name).iter_errors(doc))


# ---- (a) the schemas themselves ------------------------------------------------------------


def test_every_schema_file_is_valid_draft_2020_12():
    files = {p.name for p in schemas.schema_dir().glob("*.json")}
    assert files == SCHEMA_FILE_NAMES
    for name in sorted(files):
        schema = json.loads((schemas.schema_dir() / name).read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert (
            schema["$id"] == f"https://searchgen-bench.org/schemas/{schemas.SCHEMA_VERSION}/{name}"
        )
        assert schema["title"] and schema["description"]


def test_load_schemas_keys_are_artifact_names():
    loaded = schemas.load_schemas()
    assert set(loaded) == {
        *BOARDS,
        "prompt_scores.jsonl",
        "leaderboard_by_slice.json",
        "uncertainty.json",
        "changes.json",
        "manifest.json",
        "validation_report.json",
    }
    assert loaded["prompt_scores.jsonl"]["$id"].endswith("/prompt_scores.line.schema.json")
    with pytest.raises(KeyError):
        schemas.validator_for("results.csv")


def test_refs_resolve_offline_only():
    reg = schemas.registry()
    row = reg.resolver().lookup(
        f"https://searchgen-bench.org/schemas/{schemas.SCHEMA_VERSION}/definitions.schema.json#/$defs/leaderboardRow"
    )
    assert "status_counts" in row.contents["required"]
    with pytest.raises(referencing.exceptions.Unresolvable):
        reg.resolver().lookup("https://example.invalid/never-fetched.json")


# ---- (b) our release validates -------------------------------------------------------------


@pytest.mark.parametrize(
    "name", [*BOARDS, "uncertainty.json", "changes.json", "validation_report.json"]
)
def test_release_artifacts_validate(release, name):
    doc = json.loads((release / name).read_text(encoding="utf-8"))
    assert [e.message for e in errors(name, doc)] == []


def test_every_prompt_scores_line_validates(release):
    statuses = set()
    with open(release / "prompt_scores.jsonl", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            assert [e.message for e in errors("prompt_scores.jsonl", record)] == [], record[
                "sample_id"
            ]
            statuses |= {e["status"] for e in record["models"].values()}
    assert statuses == {
        "scored",
        "invalid_evaluation",
        "missing_evaluation",
        "missing_generation",
    }  # every branch exercised


SLICE_KEYS = ("evaluation_slices", "published_slices", "output_slice", "slice_partitions")


def test_check_folder_of_the_release(release, docs, tmp_path):
    """Every artifact the pipeline writes validates (the v1.1 slice keys included), and so does
    a folder with the published v1.1 slice keys."""
    assert (release / "leaderboard_by_slice.json").exists()
    assert schemas.check_folder(release) == []
    assert schemas.check_folder(write_folder(tmp_path / "v11", docs)) == []


def test_both_validators_agree_on_every_artifact_and_mutation(docs):
    """The gate decides with jsonschema-rs and explains with jsonschema: they must agree."""
    cases = [(name, doc) for name, doc in docs.items() if name != "prompt_scores.jsonl"]
    cases += [("prompt_scores.jsonl", r) for r in docs["prompt_scores.jsonl"]]
    for name, kinds in MUTATIONS.items():
        for _kind, path, value, _ in kinds:
            doc = copy.deepcopy(docs[name])
            _del(doc, path) if value is None else _set(doc, path, value)
            cases.append((name, doc[path[0]] if name == "prompt_scores.jsonl" else doc))
    verdicts = [
        (schemas.validator_for(n).is_valid(d), schemas.fast_validator_for(n).is_valid(d))
        for n, d in cases
    ]
    assert all(a == b for a, b in verdicts)
    assert sum(not a for a, _ in verdicts) == sum(
        len(k) for k in MUTATIONS.values()
    )  # every mutation rejected by both


def test_manifest_with_slice_keys_validates(docs):
    assert [e.message for e in errors("manifest.json", docs["manifest.json"])] == []


def test_published_v1_1_slice_keys_fit_the_manifest_schema(docs):
    published = json.loads((PUBLISHED / "v1.1" / "manifest.json").read_text(encoding="utf-8"))
    manifest = copy.deepcopy(docs["manifest.json"])
    for key in ("evaluation_slices", "published_slices", "output_slice", "slice_partitions"):
        manifest[key] = published[key]
    assert [e.message for e in errors("manifest.json", manifest)] == []


def test_our_slice_file_validates(docs):
    assert [
        e.message for e in errors("leaderboard_by_slice.json", docs["leaderboard_by_slice.json"])
    ] == []


def test_failed_report_validates():
    report = Report()
    report.fail(
        "aggregates",
        "overall_9 is 50.0, recomputed 50.1",
        file="leaderboard_overall.json",
        group="All",
        model_id="a",
    )
    report.skip("paper_table", "no paper_table in the config")
    assert [e.message for e in errors("validation_report.json", report.as_dict())] == []


def test_null_zero_and_missing_stay_distinct(docs):
    row = copy.deepcopy(docs["leaderboard_overall.json"][0])
    row["components"]["checklist"] = None  # N/A: allowed
    row["component_counts"]["checklist"] = 0  # a real count of 0: allowed
    assert errors("leaderboard_overall.json", [row]) == []
    for mutate in (
        lambda r: r["component_counts"].__setitem__("checklist", None),  # a count is never null
        lambda r: r["components"].pop("checklist"),  # a missing component is neither null nor 0
        lambda r: r.__setitem__("n_total", True),  # a boolean is not a count
        lambda r: r.__setitem__("n_scored", 1.5),  # nor a fraction
        lambda r: r.__setitem__("rank", 0),  # ranks start at 1
        lambda r: r.__setitem__("overall_9", 100.1),  # public scale is 0–100
    ):
        bad = copy.deepcopy(row)
        mutate(bad)
        assert errors("leaderboard_overall.json", [bad]), bad


def test_record_status_rules(docs):
    """Non-scored entries carry no value; invalid_evaluation carries its reason; raw scale 0–3."""
    record = next(r for r in docs["prompt_scores.jsonl"] if r["sample_id"] == "p03_ns")
    assert record["models"]["a"]["status"] == "invalid_evaluation"
    for path, value in (
        (("a", "error"), None),
        (("a", "overall_10_raw"), 1.0),
        (("b", "error"), "why"),
    ):
        bad = copy.deepcopy(record)
        bad["models"][path[0]][path[1]] = value
        assert errors("prompt_scores.jsonl", bad), path
    scored = next(r for r in docs["prompt_scores.jsonl"] if r["sample_id"] == "p01_vis")
    bad = copy.deepcopy(scored)
    bad["models"]["a"]["components_raw_0to3"]["checklist"] = 3.5
    assert [schemas.json_pointer(e.absolute_path) for e in errors("prompt_scores.jsonl", bad)] == [
        "/models/a/components_raw_0to3/checklist"
    ]
    bad = copy.deepcopy(scored)
    bad["search_type"] = "NoSearch"  # only a NoSearch stratum has the NoSearch search type
    assert errors("prompt_scores.jsonl", bad)


def test_the_schemas_list_the_declared_components_in_order():
    """The component lists of the schemas are the declaration's (data contract, § The
    declaration of the benchmark): a component added there and not here fails."""
    defs = json.loads((schemas.schema_dir() / "definitions.schema.json").read_text())["$defs"]
    assert defs["componentName"]["enum"] == list(COMPONENTS)
    for name in ("rawComponents", "publicComponents", "componentCounts"):
        assert list(defs[name]["properties"]) == defs[name]["required"] == list(COMPONENTS), name


def test_optional_prompt_metadata_may_be_absent_but_nothing_else(docs):
    record = copy.deepcopy(docs["prompt_scores.jsonl"][0])
    assert record["difficulty"] == "easy" and record["is_miniset"] is True
    for key in ("difficulty", "language", "generation_task_type", "is_miniset", "eval_slices"):
        record.pop(key, None)
    assert errors("prompt_scores.jsonl", record) == []
    record["theme"] = "x"  # a breakdown's field: a string, number, boolean, strings or null
    assert errors("prompt_scores.jsonl", record) == []
    record["theme"] = {"x": 1}
    assert [e.validator for e in errors("prompt_scores.jsonl", record)] == ["oneOf"]


# ---- (c) the published v1.1 slice rows differ from ours --------------------------------------


def test_published_v1_1_slice_rows_lack_rank_ranked_and_status_counts(docs):
    """The site's published v1.1 rows (in every board, slices included) have no ``rank``,
    ``ranked`` nor ``status_counts``; with those three keys added they fit our row exactly:
    no other key differs, and their component maps have all ten components."""
    ours = set(docs["leaderboard_overall.json"][0])
    published = json.loads(
        (PUBLISHED / "v1.1" / "leaderboard_by_slice.json").read_text(encoding="utf-8")
    )

    def rows(board):
        yield from board["overall"]
        for group in ("strata", "domains", "failure_modes"):
            for group_rows in board[group].values():
                yield from group_rows

    n = 0
    for slice_name, board in published.items():
        for row in rows(board):
            n += 1
            assert ours - set(row) == {"rank", "ranked", "status_counts"}, slice_name
            assert set(row) - ours == set()
    assert n > 0
    one = {
        "testmini_easy": published["testmini_easy"]
    }  # one slice through the validator keeps this test fast
    problems = {(e.validator, e.message) for e in errors("leaderboard_by_slice.json", one)}
    assert problems == {
        ("required", f"'{k}' is a required property") for k in ("rank", "ranked", "status_counts")
    }
    filled = copy.deepcopy(one)
    for board in filled.values():
        for row in rows(board):
            row.update(
                rank=None,
                ranked=False,
                status_counts=dict.fromkeys(
                    ("scored", "invalid_evaluation", "missing_evaluation", "missing_generation"), 0
                ),
            )
    assert errors("leaderboard_by_slice.json", filled) == []


def test_published_v1_0_rows_have_nine_components():
    """v1.0 (published) also lacks text_reference_evaluation in its component maps; ours has ten."""
    row = json.loads((PUBLISHED / "v1.0" / "leaderboard_overall.json").read_text(encoding="utf-8"))[
        0
    ]
    assert "text_reference_evaluation" not in row["components"] and len(row["components"]) == 9


# ---- (d) mutations: wrong type, missing key, extra key ---------------------------------------


def _set(doc, path, value):
    *head, last = path
    for p in head:
        doc = doc[p]
    doc[last] = value


def _del(doc, path):
    *head, last = path
    for p in head:
        doc = doc[p]
    del doc[last]


SLICE = f"full_{len(PROMPTS)}"
#: artifact → [(kind, document path to change, new value or None to delete,
#:              expected pointer of the problem)].
#: prompt_scores.jsonl paths start with the line number (1 = sample_id p01_vis, scored for model a).
MUTATIONS = {
    "prompt_scores.jsonl": [
        (
            "wrong type",
            (0, "models", "a", "components_raw_0to3", "checklist"),
            "3",
            "/models/a/components_raw_0to3/checklist",
        ),
        ("missing key", (0, "stratum"), None, ""),
        ("extra key", (0, "models", "a", "score"), 1.0, "/models/a"),
    ],
    "leaderboard_overall.json": [
        ("wrong type", (0, "n_total"), "4", "/0/n_total"),
        ("missing key", (1, "rank"), None, "/1"),
        ("extra key", (0, "note"), "x", "/0"),
    ],
    "leaderboard_by_stratum.json": [
        (
            "wrong type",
            ("NoSearch", 0, "component_counts", "checklist"),
            "1",
            "/NoSearch/0/component_counts/checklist",
        ),
        ("missing key", ("TextualSearch",), None, ""),
        ("extra key", ("Other",), [], ""),
    ],
    "leaderboard_by_domain.json": [
        ("wrong type", ("ART", 0, "coverage"), "0.5", "/ART/0/coverage"),
        ("missing key", ("ART", 0, "components", "checklist"), None, "/ART/0/components"),
        ("extra key", ("ART", 0, "components", "sharpness"), 1.0, "/ART/0/components"),
    ],
    "leaderboard_by_failure_mode.json": [
        ("wrong type", ("EIK", 0, "status_counts", "scored"), "1", "/EIK/0/status_counts/scored"),
        ("missing key", ("EIK", 0, "status_counts"), None, "/EIK/0"),
        ("extra key", ("EIK", 0, "status_counts", "pending"), 0, "/EIK/0/status_counts"),
    ],
    "leaderboard_by_slice.json": [
        ("wrong type", (SLICE, "overall", 0, "overall_9"), "50", f"/{SLICE}/overall/0/overall_9"),
        ("missing key", (SLICE, "domains"), None, f"/{SLICE}"),
        ("extra key", (SLICE, "uncertainty"), {}, f"/{SLICE}"),
    ],
    "manifest.json": [
        ("wrong type", ("dataset", "n_prompts"), "4", "/dataset/n_prompts"),
        ("missing key", ("scoring", "primary_metric"), None, "/scoring"),
        ("extra key", ("build_host",), "ci-7", ""),
    ],
    "uncertainty.json": [
        ("wrong type", ("n_bootstrap",), "10000", "/n_bootstrap"),
        ("missing key", ("groups", "all:All", "a", "n_valid"), None, "/groups/all:All/a"),
        ("extra key", ("groups", "all:All", "a", "width"), 2.5, "/groups/all:All/a"),
    ],
    "changes.json": [
        ("wrong type", ("first_release",), "yes", "/first_release"),
        ("missing key", ("prompts", "added"), None, "/prompts"),
        ("extra key", ("models", "renamed"), [], "/models"),
    ],
    "validation_report.json": [
        ("wrong type", ("passed",), "true", "/passed"),
        ("missing key", ("checks", 3, "skipped"), None, "/checks/3"),
        ("extra key", ("checks", 0, "duration_s"), 0.1, "/checks/0"),
    ],
}


def test_mutations_cover_every_schema():
    assert set(MUTATIONS) == set(schemas.SCHEMA_FILES)
    for name, cases in MUTATIONS.items():
        assert [c[0] for c in cases] == ["wrong type", "missing key", "extra key"], name


@pytest.mark.parametrize(
    "name,kind,path,value,pointer",
    [(name, *case) for name, cases in MUTATIONS.items() for case in cases],
    ids=[f"{name}-{case[0]}" for name, cases in MUTATIONS.items() for case in cases],
)
def test_mutation_is_rejected_naming_file_and_path(
    docs, tmp_path, name, kind, path, value, pointer
):
    doc = copy.deepcopy(docs[name])
    if name == "prompt_scores.jsonl":
        assert doc[path[0]]["models"]["a"]["status"] == "scored"
    if value is None:
        _del(doc, path)
    else:
        _set(doc, path, value)
    folder = write_folder(tmp_path / "release", {name: doc})
    problems = schemas.check_folder(folder)
    assert problems, f"{kind} in {name} was accepted"
    assert {p["file"] for p in problems} == {name}
    line = path[0] + 1 if name == "prompt_scores.jsonl" else None
    where = f"{name} line {line}" if line else name
    hit = [p for p in problems if p["path"] == pointer and p["line"] == line]
    assert hit, problems
    assert hit[0]["message"].startswith(f"{where} {pointer or '(top level)'}: ")
    if kind == "missing key":
        assert any("is a required property" in p["message"] for p in hit)
    if kind == "extra key":
        assert any("Additional properties are not allowed" in p["message"] for p in hit)


def test_message_names_file_and_pointer(docs, tmp_path):
    board = copy.deepcopy(docs["leaderboard_overall.json"])
    board[2]["coverage"] = 1.5
    problems = schemas.check_folder(
        write_folder(tmp_path / "r", {"leaderboard_overall.json": board})
    )
    assert problems == [
        {
            "file": "leaderboard_overall.json",
            "line": None,
            "path": "/2/coverage",
            "message": "leaderboard_overall.json /2/coverage: 1.5 is greater than the maximum of 1",
        }
    ]


def test_check_folder_caps_listed_problems_and_counts_the_rest(docs, tmp_path):
    record = copy.deepcopy(docs["prompt_scores.jsonl"][0])
    record["prompt_index"] = "0"
    folder = write_folder(tmp_path / "r", {"prompt_scores.jsonl": [record] * 60})
    with open(folder / "prompt_scores.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"sample_id": NaN}\n')
    problems = schemas.check_folder(folder)
    assert len(problems) == schemas.MAX_LISTED + 1
    assert (
        problems[0]["message"]
        == "prompt_scores.jsonl line 1 /prompt_index: '0' is not of type 'integer'"
    )
    assert problems[-1] == {
        "file": "prompt_scores.jsonl",
        "line": None,
        "path": "",
        "message": "prompt_scores.jsonl: 11 more problem(s) not listed (61 in all)",
    }


def test_check_folder_reports_non_strict_json_and_skips_missing_files(tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "leaderboard_overall.json").write_text('[{"coverage": NaN}]', encoding="utf-8")
    (folder / "manifest.json").write_text('{"benchmark": "a", "benchmark": "b"}', encoding="utf-8")
    problems = schemas.check_folder(folder)
    assert [(p["file"], p["path"]) for p in problems] == [
        ("leaderboard_overall.json", ""),
        ("manifest.json", ""),
    ]
    assert (
        "NaN" in problems[0]["message"]
        and "duplicate key 'benchmark' in one JSON object" in problems[1]["message"]
    )
    with pytest.raises(NotADirectoryError):
        schemas.check_folder(folder / "manifest.json")
