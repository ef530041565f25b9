"""Small hand-made releases for the tests: prompts, result files and a config on disk."""

from __future__ import annotations

import contextlib
import io
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

IMAGE = object()  # a generated image but no evaluation file → missing_evaluation
CANONICAL = "{release_row}/{lane}/{source_id}/augmented_parsed_result_ffjudge_pp.json"
EVALUATOR = "{source_id}/{sample_id}/augmented_parsed_result_evaluation_protocol.json"
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f00050001ff89993d1d0000000049454e44ae426082"
)  # 1×1, readable


def result(scores: dict, **extra) -> dict:
    """A successful evaluator result with a flat ``scores`` map."""
    return {"success": True, "error": None, "parsed": {}, "scores": scores, **extra}


def prompt(
    sample_id: str, subset: str = "SearchIntensive", domains=None, failure_modes=None, **extra
) -> dict:
    return {
        "sample_id": sample_id,
        "release_row": f"rows/{sample_id}",
        "subset": subset,
        "domains": domains if domains is not None else ["ART"],
        "failure_modes": failure_modes if failure_modes is not None else [],
        **extra,
    }


def model(
    display_name: str,
    policy: str | None = None,
    type_: str = "Open",
    source_id: str | None = None,
    **extra,
) -> dict:
    m = {
        "display_name": display_name,
        "type": type_,
        "source_id": source_id or display_name.lower().replace(" ", "-"),
        **extra,
    }
    if policy:
        m["missing_policy"] = policy
    return m


def make_release(
    root: Path,
    prompts: list[dict],
    models: dict[str, dict],
    results: dict[tuple[str, str], object],
    layout: str = CANONICAL,
    prompt_lines: list[str] | None = None,
    file_order: list[tuple[str, str]] | None = None,
    **config,
) -> Path:
    """Write prompts.jsonl, the result tree and release.yml under ``root``; return the config path.

    ``results[(model_id, sample_id)]``: a dict (written as JSON), a str (written verbatim),
    :data:`IMAGE` (only a generated image) — absent pairs get nothing (missing_generation).
    """
    root.mkdir(parents=True, exist_ok=True)
    lines = prompt_lines if prompt_lines is not None else [json.dumps(p) for p in prompts]
    (root / "prompts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    by_id = {p.get("sample_id", p.get("bench_id")): p for p in prompts}
    for key in file_order or list(results):
        model_id, sid = key
        value = results[key]
        p = by_id[sid]
        m = models[model_id]
        rel = layout.format(
            release_row=p.get("release_row", sid),
            sample_id=sid,
            lane=m.get("lane", "none"),
            source_id=m["source_id"],
        )
        path = root / "results" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if value is IMAGE:
            (path.parent / "image.png").write_bytes(PNG)
            continue
        (path.parent / "image.png").write_bytes(PNG)
        path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    cfg = {
        "benchmark": "Fixture-Bench",
        "dataset": "prompts.jsonl",
        "results_root": "results",
        "result_path": layout,
        "models": models,
        **config,
    }
    path = root / "release.yml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def read_artifacts(folder: Path) -> dict[str, bytes]:
    """Every file of an artifact folder (``schemas/`` included) as bytes, by relative path."""
    folder = Path(folder)
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def row(board: list[dict], model_id: str) -> dict:
    return next(r for r in board if r["model_id"] == model_id)


@contextlib.contextmanager
def terminal_sigint():
    """SIGINT as a terminal's Ctrl-C delivers it, for the block: a test run started with ``&``
    from a script inherits SIGINT ignored, and a command keeps an ignored SIGINT ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_cli(*args, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``searchgen-nb ARGS`` through its entry point (``searchgen_nb.cli.main``: click, then the
    last line of defence) in this process, ``env`` set over the environment (``SEARCHGEN_DEBUG``
    never), from ``cwd``: its exit code as the interpreter would give it (``sys.exit``: None 0,
    an int itself, anything else 1), stdout and stderr."""
    from searchgen_nb.cli import main

    out, err, code = io.StringIO(), io.StringIO(), 0
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SEARCHGEN_DEBUG", raising=False)
        for key, value in (env or {}).items():
            mp.setenv(key, value)
        if cwd is not None:
            mp.chdir(cwd)
        mp.setattr(sys, "argv", ["searchgen-nb", *map(str, args)])
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return subprocess.CompletedProcess([str(a) for a in args], code, out.getvalue(), err.getvalue())
