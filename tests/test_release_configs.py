"""The committed release configs: the real v1.0 roster and the demo config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import FIXTURES

from searchgen_nb.config import load_config
from searchgen_nb.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = FIXTURES / "published" / "v1.0"


def test_v1_0_roster_and_policies(monkeypatch, tmp_path):
    monkeypatch.setenv("TOOLGEN_ROOT", str(tmp_path))
    cfg = load_config(ROOT / "releases" / "searchgen-v1.0.yml")
    assert len(cfg.models) == 13
    assert sorted(m for m in cfg.models if cfg.policy(m) == "exclude") == [
        "qwen_image_2_pro",
        "xai_image",
    ]
    assert cfg.models["qwen2"].source_id == "qwen-image-2.0"
    assert cfg.models["gpt_image"].display_name == "GPT-Image-2"
    assert (
        cfg.dataset_path
        == tmp_path / "phase4d1_generations" / "eval_datasets_548_finalized_v1.jsonl"
    )
    assert cfg.results_root_path == tmp_path / "final_20k_release_v2"
    assert cfg.expected.n_prompts == 751 and cfg.expected.n_scored["imagen3fast"] == 465
    assert cfg.extractor_spec() == "paper_materials.recompute_tables:extract_10comp"
    table = json.loads(cfg.paper_table_path.read_text())
    assert table["gpt_image"] == 71.0 and len(table) == 13
    published = json.loads((PUBLISHED / "manifest.json").read_text())
    assert {m: (c.display_name, c.type, c.source_id) for m, c in cfg.models.items()} == {
        m: (v["display_name"], v["type"], v["source_id"]) for m, v in published["models"].items()
    }
    # The same exceptions to the default policy as the published release.
    assert published["scoring"]["missing_policy_default"] == "zero_fill"
    assert (
        sorted(m for m in cfg.models if cfg.policy(m) != "zero_fill")
        == published["scoring"]["missing_policy_exceptions"]
    )


@pytest.mark.parametrize("version", ["v1.0", "v1.1"])
def test_the_real_configs_lock_what_their_release_published(monkeypatch, tmp_path, version):
    """A removed or damaged result of a real release stops it: each config locks the prompt
    count and partition of its published manifest and every model's published scored count."""
    monkeypatch.setenv("TOOLGEN_ROOT", str(tmp_path))
    cfg = load_config(ROOT / "releases" / f"searchgen-{version}.yml")
    published = FIXTURES / "published" / version
    manifest = json.loads((published / "manifest.json").read_text())
    board = json.loads((published / "leaderboard_overall.json").read_text())
    assert cfg.expected.n_prompts == manifest["dataset"]["n_prompts"] == 751
    assert cfg.expected.partition == manifest["partition"]
    assert cfg.expected.n_scored == {r["model_id"]: r["n_scored"] for r in board}
    assert list(cfg.expected.n_scored) == list(cfg.models)
    assert cfg.expected.n_scored["gpt_image"] == {"v1.0": 719, "v1.1": 718}[version]


def test_unset_variable_is_named(monkeypatch):
    monkeypatch.delenv("TOOLGEN_ROOT", raising=False)
    cfg = load_config(ROOT / "releases" / "searchgen-v1.0.yml")
    with pytest.raises(ConfigError, match=r"uses \$\{TOOLGEN_ROOT\}, which is not set"):
        _ = cfg.dataset_path


PUBLISHED_V1_1 = FIXTURES / "published" / "v1.1"


def test_v1_1_roster_judge_file_and_slices(monkeypatch, tmp_path):
    """releases/searchgen-v1.1.yml is the published v1.1 release: 18 models (ids, display
    names, types, source ids), every one `exclude`, its judge file, its four slices and counts."""
    monkeypatch.setenv("TOOLGEN_ROOT", str(tmp_path))
    cfg = load_config(ROOT / "releases" / "searchgen-v1.1.yml")
    published = json.loads((PUBLISHED_V1_1 / "manifest.json").read_text())
    assert {m: (c.display_name, c.type, c.source_id) for m, c in cfg.models.items()} == {
        m: (v["display_name"], v["type"], v["source_id"]) for m, v in published["models"].items()
    }
    assert len(cfg.models) == 18 and {cfg.policy(m) for m in cfg.model_ids} == {"exclude"}
    assert cfg.result_path.endswith("/" + published["scoring"]["source"])
    named = published["evaluation_slices"]["named"]
    assert {n: (s.include, s.match, s.expected_rows) for n, s in cfg.slices.items()} == {
        n: (v["include_tags"], v["match"], v["expected_rows"]) for n, v in named.items()
    }
    assert {s.field for s in cfg.slices.values() if s.include} == {
        published["evaluation_slices"]["subset_field"]
    }
    assert cfg.expected.n_prompts == 751 and cfg.expected.partition == published["partition"]


def test_a_small_v1_1_fixture_releases_through_the_v1_1_config(monkeypatch, tmp_path):
    """The v1.1 layout (judge file name, slice tags in a list-valued ``subset``) with the v1.1
    roster: a four-prompt tree passes every release check once the counts fit the fixture."""
    import shutil

    import yaml

    from searchgen_nb.pipeline import run_data

    root = tmp_path / "toolgen"
    shutil.copytree(
        Path(__file__).parent / "toolgen_stub", root
    )  # ToolGen's extractor (a stand-in)
    monkeypatch.setenv("TOOLGEN_ROOT", str(root))
    text = (ROOT / "releases" / "searchgen-v1.1.yml").read_text()
    data = yaml.safe_load(text)
    prompts = [
        {
            "sample_id": "sgb_vis_0001",
            "subset": ["SearchIntensive", "testmini", "testmini_easy"],
            "domains": ["ART"],
            "failure_modes": [],
        },
        {
            "sample_id": "sgb_nosearch_0002",
            "subset": ["NoSearch", "testmini", "testmini_hard"],
            "domains": ["ART"],
            "failure_modes": [],
        },
        {
            "sample_id": "sgb_texthard_0003",
            "subset": ["SearchIntensive"],
            "domains": ["SCI"],
            "failure_modes": ["CS"],
        },
        {
            "sample_id": "sgb_vis_0004",
            "subset": "SearchIntensive",
            "domains": ["SCI"],
            "failure_modes": [],
        },
    ]
    (root / "phase4d1_generations").mkdir(parents=True)
    (root / "phase4d1_generations" / "eval_datasets_548_finalized_v1.jsonl").write_text(
        "".join(json.dumps(p) + "\n" for p in prompts)
    )
    for k, m in enumerate(data["models"].values()):
        for i, p in enumerate(prompts):
            if (i + k) % 5 == 4:
                continue  # a few missing results
            folder = root / "final_20k_release_v2" / p["sample_id"] / "none" / m["source_id"]
            folder.mkdir(parents=True)
            (folder / "augmented_parsed_result_eval_qw3d5_pp.json").write_text(
                json.dumps(
                    {
                        "success": True,
                        "sample_id": p["sample_id"],
                        "scores": {"checklist:0": (i + k) % 4, "rubric:image_quality": 2},
                    }
                )
            )
    counts = {"full_751": 4, "testmini": 2, "testmini_easy": 1, "testmini_hard": 1}
    for name, n in counts.items():
        data["slices"][name]["expected_rows"] = n
    data["expected"] = {
        "n_prompts": 4,
        "partition": {"NoSearch": 1, "SearchIntensive": 3, "VisualSearch": 2, "TextualSearch": 1},
    }
    cfg_path = ROOT / "releases" / "searchgen-v1.1.yml"
    small = tmp_path / "releases" / "searchgen-v1.1.yml"
    small.parent.mkdir()
    small.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "out"
    run_data(load_config(small), out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["published_slices"] == [
        "full_751",
        "testmini",
        "testmini_easy",
        "testmini_hard",
    ]
    assert manifest["evaluation_slices"]["subset_field"] == "subset"
    assert manifest["slice_partitions"]["testmini"] == {
        "NoSearch": 1,
        "SearchIntensive": 1,
        "TextualSearch": 0,
        "VisualSearch": 1,
    }
    by_slice = json.loads((out / "leaderboard_by_slice.json").read_text())
    assert (
        len(by_slice["testmini"]["overall"]) == 18
        and by_slice["testmini_hard"]["overall"][0]["n_total"] == 1
    )
    assert cfg_path.read_text() == text  # the committed config is untouched
