"""A deterministic, synthetic SearchGen-Bench release in the real file formats.

``write_demo`` writes ``prompts.jsonl`` (751 prompts, shuffled lines), ``results/`` (one judge
result per prompt × model in the canonical layout, an ``image.png`` beside every generation),
``paper_table.json`` (Overall-10 per model, recomputed) and ``release.yml`` (data origin
``synthetic-demo``, an ``expected`` block locking every count), so that the book builds and the
release gate passes without the real data. Sizes and tag counts are the published v1.0 ones
(``searchgen_nb/data/taxonomy.json``); models, ids and scores are invented. Every tuned number
is data beside this module, explained by its ``about``: ``roster.json`` (the fictional models
and their profiles) and ``profile.json`` (prompt set, score model, tag effects, broken files,
the changed release). Every random choice comes from a ``random.Random`` seeded by a string,
one stream per concern and model; noise is a sum of uniforms; JSON has sorted keys: two runs
give byte-identical trees, and regenerating an unchanged demo rewrites nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

from searchgen_nb.artifacts import held_signals, staging_dir
from searchgen_nb.config import project_root
from searchgen_nb.demo.generate import (
    CHANGED, IMAGINATIVE, KNOWLEDGE, LANE, LOOKS, META_KEYS, N_PROMPTS, PNG_BYTES, PROFILE,
    PROMPTS, REFS, RESULT_FILE, ROSTER, SCORES, SETS, STATUSES, TAG_COUNTS, TAGS, TEXT,
    DemoPrompt, _dump, _result_folder, build_demo, build_prompts, committed_config_text,
    demo_config_text, paper_overall_10,
)
from searchgen_nb.errors import ReleaseInterrupted
from searchgen_nb.out_checks import DEMO_MARKER, DEMO_MARKER_TEXT, is_demo, owned_problem
from searchgen_nb.untrusted import excerpt

__all__ = [
    "CHANGED", "IMAGINATIVE", "KNOWLEDGE", "LANE", "LOOKS", "MARKER", "MARKER_TEXT", "META_KEYS",
    "N_PROMPTS", "PNG_BYTES", "PROFILE", "PROMPTS", "REFS", "RESULT_FILE", "ROSTER", "SCORES",
    "SETS", "STATUSES", "TAG_COUNTS", "TAGS", "TEXT", "TOP_FILES", "DemoPrompt", "build_demo",
    "build_prompts", "committed_config_text", "demo_config_text", "paper_overall_10", "write_demo",
]  # fmt: skip


#: The file that marks a folder as a demo (it holds :data:`MARKER_TEXT`): only such a folder,
#: holding nothing but what a demo writes, is brought up to date in place.
MARKER, MARKER_TEXT = DEMO_MARKER, DEMO_MARKER_TEXT
_UNTOUCHED = "interrupted; nothing was written, {} is as it was"
TOP_FILES = ("release.yml", "prompts.jsonl", "paper_table.json", MARKER)


def _names(names: list[str]) -> str:
    """``N entries (a, b, …)``: a count and the first few names, bounded."""
    shown = ", ".join(excerpt(n, 60) for n in sorted(names)[:3])
    noun = "entry" if len(names) == 1 else "entries"
    return f"{len(names)} {noun} ({shown}{', …' if len(names) > 3 else ''})"


def _is_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _out_problem(out_dir: Path, previous: Path | None) -> str | None:
    """Why the demo may not write ``out_dir``: None when absent, empty or a demo (its marker,
    the demo's files as regular files and ``results/`` a real folder; no link) and not where
    nothing is written (:func:`out_checks.owned_problem`; ``previous`` is an input)."""
    if problem := owned_problem(out_dir, {} if previous is None else {"--previous": previous}):
        return problem
    if not os.path.lexists(out_dir):
        return None
    if out_dir.is_symlink() or not out_dir.is_dir():
        return "is not a folder"
    names = os.listdir(out_dir)
    if not names:
        return None
    if not is_demo(out_dir):
        return f"is not empty and holds no demo (no {MARKER} file a demo writes)"
    odd = [n for n in names if not (
        _is_file(out_dir / n) if n in TOP_FILES
        else n == "results" and (out_dir / n).is_dir() and not (out_dir / n).is_symlink()
    )]  # fmt: skip
    if odd:
        return f"holds {_names(odd)} that are links or not what a demo writes"
    return None


def _write(path: Path, data: bytes) -> None:
    """Write ``path`` by atomic replace (a temporary file renamed over it): a link there is
    replaced, never followed; an interrupted write leaves the old file whole."""
    tmp = path.with_name(f".{path.name}.demo-tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _sync_tree(root: Path, files: dict[str, bytes], known: set[str]) -> int:
    """Make ``root`` hold exactly ``files`` (relative POSIX path -> bytes); return files written.
    A stale file goes only when it is one a demo writes (``known``), with the folders it leaves
    empty; any other file or any link stops it before a change (FileExistsError naming it). A
    file with the right bytes stays."""
    existing, stale, unknown = set(), [], []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        for name in dirnames + filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if os.path.islink(os.path.join(dirpath, name)):
                unknown.append(f"{rel} (a link)")
            elif name in dirnames:
                continue
            elif rel in files:
                existing.add(rel)
            else:
                (stale if rel in known else unknown).append(rel)
    if unknown:
        raise FileExistsError(
            f"demo: {root} holds {len(unknown)} file(s) the demo does not write, such as "
            f"{', '.join(excerpt(u, 80) for u in sorted(unknown)[:3])}; move them elsewhere "
            "(nothing was changed)")
    for rel in stale:
        (root / rel).unlink()
        for parent in list(Path(rel).parents)[:-1]:  # its folders below root, deepest first
            if any((root / parent).iterdir()):
                break
            (root / parent).rmdir()
    written, made = 0, set()
    for rel in sorted(files):  # prompt-major: one folder's files are written together
        path = root / rel
        if rel in existing and path.read_bytes() == files[rel]:
            continue
        if (folder := rel.rpartition("/")[0]) not in made:
            (root / folder).mkdir(parents=True, exist_ok=True)
            made.add(folder)
        _write(path, files[rel])
        written += 1
    return written


def write_demo(out_dir: Path, changed: bool = False, previous: Path | None = None) -> dict:
    """Write the demo into ``out_dir`` and return a summary: ``n_prompts``, ``partition``,
    ``n_files``, ``n_result_files_written`` and per model ``n_scored``, ``statuses`` and
    ``overall_10``. A new (absent or empty) folder is written as a staging folder beside it,
    renamed at the end; a demo there (:func:`_out_problem`) is brought up to date file by file,
    each replaced atomically; anything else is refused (FileExistsError naming it). Ctrl-C or
    SIGTERM: :class:`ReleaseInterrupted` saying what was left. ``changed``: the second release
    (its coverage lock counts the lost results); ``previous``: the first release's published
    data folder, written into ``release.yml`` as ``previous_release`` as given (relative to
    ``out_dir``, links not resolved: a ``public/data`` link stays one); ``release_config`` is set
    inside the project."""
    given = None if previous is None else os.path.relpath(os.path.abspath(previous),
                                                          os.path.abspath(out_dir))
    out_dir, root = Path(out_dir).resolve(), project_root().resolve()
    previous = None if previous is None else Path(previous).resolve()
    if problem := _out_problem(out_dir, previous):
        raise FileExistsError(f"demo: {out_dir} {problem}; nothing was changed")
    try:
        prompts, files, statuses, paper_table = build_demo(changed)
    except KeyboardInterrupt:
        raise ReleaseInterrupted(_UNTOUCHED.format(out_dir)) from None
    config = out_dir / "release.yml"
    rel_config = config.relative_to(root).as_posix() if config.is_relative_to(root) else None
    counts = {m: {s: list(by.values()).count(s) for s in STATUSES} for m, by in statuses.items()}
    n_scored = {m: c["scored"] for m, c in counts.items()}
    texts = {
        "prompts.jsonl": "".join(_dump(p.metadata()) for p in prompts),
        "paper_table.json": json.dumps(paper_table, indent=2, sort_keys=True) + "\n",
        "release.yml": demo_config_text("", rel_config, n_scored, given and Path(given).as_posix()),
        MARKER: MARKER_TEXT,
    }  # fmt: skip
    known = {f"{_result_folder(p, m)}/{name}" for p in prompts for m in ROSTER
             for name in ("image.png", RESULT_FILE)}  # what either demo release may write
    n_written = _write_all(out_dir, files, known, texts)
    partition = {k: sum(p.partition == k for p in prompts) for k in PROMPTS["expected_partition"]}
    partition["SearchIntensive"] = len(prompts) - partition["NoSearch"]
    return {
        "n_prompts": len(prompts), "partition": partition, "n_files": len(files) + len(texts),
        "n_result_files_written": n_written,
        "models": {m: {"n_scored": n_scored[m], "statuses": c, "overall_10": paper_table[m]}
                   for m, c in counts.items()},
    }  # fmt: skip


def _write_all(out_dir: Path, files: dict[str, bytes], known: set[str], texts: dict) -> int:
    """Write the result tree and ``texts`` (name → text) into ``out_dir``: a new folder through
    a staging folder renamed at the end, a demo in place; return the result files written."""
    new = not os.path.lexists(out_dir) or not any(out_dir.iterdir())
    target = staging_dir(out_dir) if new else out_dir
    try:
        n_written = _sync_tree(target / "results", files, known)  # first: it may refuse
        for name, text in texts.items():
            data = text.encode("utf-8")
            if not (target / name).exists() or (target / name).read_bytes() != data:
                _write(target / name, data)
        if new:
            with held_signals():
                os.rename(target, out_dir)
    except KeyboardInterrupt:
        if new:
            shutil.rmtree(target, ignore_errors=True)
            raise ReleaseInterrupted(_UNTOUCHED.format(out_dir)) from None
        raise ReleaseInterrupted(f"interrupted while updating the demo in {out_dir} (each file "
                                 "whole); run again to finish it") from None
    except BaseException:
        if new:
            shutil.rmtree(target, ignore_errors=True)
        raise
    return n_written
