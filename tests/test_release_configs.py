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
    assert sorted(m for m in cfg.models if cfg.policy(m) == "exclude") == ["qwen_image_2_pro", "xai_image"]
    assert cfg.models["qwen2"].source_id == "qwen-image-2.0"
    assert cfg.models["gpt_image"].display_name == "GPT-Image-2"
    assert cfg.dataset_path == tmp_path / "phase4d1_generations" / "eval_datasets_548_finalized_v1.jsonl"
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
    assert sorted(m for m in cfg.models if cfg.policy(m) != "zero_fill") == published["scoring"]["missing_policy_exceptions"]


def test_unset_variable_is_named(monkeypatch):
    monkeypatch.delenv("TOOLGEN_ROOT", raising=False)
    cfg = load_config(ROOT / "releases" / "searchgen-v1.0.yml")
    with pytest.raises(ConfigError, match=r"uses \$\{TOOLGEN_ROOT\}, which is not set"):
        cfg.dataset_path
