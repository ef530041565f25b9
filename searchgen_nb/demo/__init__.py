"""A deterministic, synthetic SearchGen-Bench release in the real file formats: ``prompts.jsonl``,
``results/`` (a judge result and an ``image.png`` per prompt × model), ``paper_table.json`` and
``release.yml``, so the book builds and the gate passes without the real data. Sizes and tag
counts are the published v1.0 ones; models and scores are invented, tuned by ``roster.json`` and
``profile.json`` beside this module (each number explained by its ``about``). Every draw comes
from a string-seeded ``random.Random``: reruns are byte-identical and rewrite nothing."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

from searchgen_nb.artifacts import write_bytes
from searchgen_nb.config import project_root
from searchgen_nb.demo.generate import (  # noqa: F401 - re-exported
    PNG_BYTES,
    PROFILE,
    PROMPTS,
    RESULT_FILE,
    ROSTER,
    STATUSES,
    build_demo,
    build_prompts,
    committed_config_text,
    demo_config_text,
    dump_line,
    lost_in_changed,
    result_folder,
)
from searchgen_nb.errors import ReleaseInterrupted
from searchgen_nb.publish import (
    DEMO,
    MARKER,
    OLD_DEMO_MARKER,
    held_signals,
    marked,
    owned_problem,
    promote,
    staging_dir,
)
from searchgen_nb.untrusted import excerpt

_UNTOUCHED = "interrupted; nothing was written, {} is as it was"
#: The demo's top-level files; only a folder holding these (one its mark names a demo) and
#: ``results/`` is brought up to date in place.
TOP_FILES = ("release.yml", "prompts.jsonl", "paper_table.json", MARKER, OLD_DEMO_MARKER)


def _out_problem(out_dir: Path, previous: Path | None) -> str | None:
    """Why the demo may not write ``out_dir``; None when absent, empty or a demo (its marker,
    its files as regular files, ``results/`` a real folder) not where nothing is written."""
    if problem := owned_problem(out_dir, {} if previous is None else {"--previous": previous}):
        return problem
    if not os.path.lexists(out_dir):
        return None
    if out_dir.is_symlink() or not out_dir.is_dir():
        return "is not a folder"
    if not (names := os.listdir(out_dir)):
        return None
    if not marked(out_dir, DEMO):
        return f"is not empty and holds no demo (no {MARKER} file a demo writes)"
    odd = sorted(
        n
        for n in names
        if _linked(out_dir / n)
        or not (
            (out_dir / n).is_file() if n in TOP_FILES else n == "results" and (out_dir / n).is_dir()
        )
    )
    if not odd:
        return None
    shown = ", ".join(excerpt(n, 60) for n in odd[:3]) + (", …" if len(odd) > 3 else "")
    noun = "entry" if len(odd) == 1 else "entries"
    return f"holds {len(odd)} {noun} ({shown}) that are links or not what a demo writes"


def _linked(path: Path) -> bool:
    """Whether ``path`` is a link: a symbolic one, or a file with another name (a hard link),
    which a demo never writes."""
    return path.is_symlink() or (path.is_file() and os.lstat(path).st_nlink > 1)


def _write(path: Path, data: bytes) -> None:
    """Write ``path`` by atomic replace: a link there is replaced, never followed; an
    interrupted write leaves the old file whole."""
    tmp = path.with_name(f".{path.name}.demo-tmp")
    try:
        write_bytes(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _sync_tree(root: Path, files: dict[str, bytes], known: set[str]) -> int:
    """Make ``root`` hold exactly ``files`` (relative POSIX path -> bytes; one with the right
    bytes stays); return files written. A stale file goes (with the folders it empties) only when
    a demo writes it (``known``); any other file or link: FileExistsError naming it, no change."""
    existing: set[str] = set()
    stale: list[str] = []
    unknown: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        for name in dirnames + filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if _linked(Path(dirpath, name)):
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
            "(nothing was changed)"
        )
    for rel in stale:
        (root / rel).unlink()
        for parent in list(Path(rel).parents)[:-1]:  # its folders below root, deepest first
            if any((root / parent).iterdir()):
                break
            (root / parent).rmdir()
    written = 0
    for rel in sorted(files):  # prompt-major: one folder's files are written together
        if rel not in existing or (root / rel).read_bytes() != files[rel]:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            _write(root / rel, files[rel])
            written += 1
    return written


def write_demo(out_dir: Path, changed: bool = False, previous: Path | None = None) -> dict:
    """Write the demo into ``out_dir`` (a new folder through a staging folder, a demo there file
    by file, else FileExistsError); return ``n_prompts``, ``partition`` and per model
    ``n_scored``, ``statuses`` and ``overall_10``. ``changed``: the second
    release; ``previous``: written into ``release.yml`` as given, relative to ``out_dir`` (links
    not resolved). Ctrl-C or SIGTERM: :class:`ReleaseInterrupted` saying what was left."""
    given = (
        None
        if previous is None
        else os.path.relpath(os.path.abspath(previous), os.path.abspath(out_dir))
    )
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
        "prompts.jsonl": "".join(dump_line(p.metadata()) for p in prompts),
        "paper_table.json": json.dumps(paper_table, indent=2, sort_keys=True) + "\n",
        "release.yml": demo_config_text("", rel_config, n_scored, given and Path(given).as_posix(),
                                        lost_in_changed() if changed and given else None),
        MARKER: DEMO,
    }  # fmt: skip
    known = {
        f"{result_folder(p, m)}/{name}"
        for p in prompts
        for m in ROSTER
        for name in ("image.png", RESULT_FILE)
    }  # what either demo release may write
    _write_all(out_dir, files, known, texts)
    partition = {k: sum(p.partition == k for p in prompts) for k in PROMPTS["expected_partition"]}
    partition["SearchIntensive"] = len(prompts) - partition["NoSearch"]
    models = {m: {"n_scored": n_scored[m], "statuses": c, "overall_10": paper_table[m]}
              for m, c in counts.items()}  # fmt: skip
    return {"n_prompts": len(prompts), "partition": partition, "models": models}


def _write_all(out_dir: Path, files: dict[str, bytes], known: set[str], texts: dict) -> None:
    """Write the result tree and ``texts`` (name → text) into ``out_dir``: a new folder through
    a staging folder renamed at the end, a demo in place."""
    new = not os.path.lexists(out_dir) or not any(out_dir.iterdir())
    target = staging_dir(out_dir) if new else out_dir
    try:
        _sync_tree(target / "results", files, known)  # first: it may refuse
        for name, text in texts.items():
            data = text.encode("utf-8")
            if not (target / name).exists() or (target / name).read_bytes() != data:
                _write(target / name, data)
        if new:
            with held_signals():
                promote(target, out_dir)
    except KeyboardInterrupt:
        if new:
            shutil.rmtree(target, ignore_errors=True)
            raise ReleaseInterrupted(_UNTOUCHED.format(out_dir)) from None
        raise ReleaseInterrupted(
            f"interrupted while updating the demo in {out_dir} (each file "
            "whole); run again to finish it"
        ) from None
    except BaseException:
        if new:
            shutil.rmtree(target, ignore_errors=True)
        raise
