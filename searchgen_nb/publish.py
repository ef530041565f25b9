"""Publishing a whole release in one atomic step, and one release at a time (SPEC §7).

A release publishes three folders: ``public/data`` (artifacts), ``_build/html`` (the book)
and ``book/notebooks`` (executed notebooks). Swapping three folders one after the other is
not atomic: a kill between two swaps would show new notebooks beside old data. So each
release is written once, whole, into a version folder, and the three paths are symbolic
links through one ``current`` link that is replaced in a single ``rename``::

    OUT/.releases/<version>/public/data, _build/html, book/notebooks
    OUT/.releases/current  -> <version>          (one atomic switch)
    OUT/.releases/previous -> <older version>    (kept at hand)
    OUT/public/data        -> ../.releases/current/public/data
    OUT/_build/html        -> ../.releases/current/_build/html
    OUT/book/notebooks     -> ../../.releases/current/book/notebooks

A reader opening any of the three paths sees either the old release or the new one, whole,
whatever moment the process is killed at. Only ``current`` and ``previous`` are kept.

A lock file (``OUT/build/release.lock``) lets one release run at a time into an output
root; a second one stops at once naming the first.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import shutil
from pathlib import Path

from searchgen_nb import artifacts
from searchgen_nb.errors import ReleaseError

#: The published paths below the output root, and where each lives inside a version folder.
PUBLISHED = ("public/data", "_build/html", "book/notebooks")
RELEASES = ".releases"
LOCK = "build/release.lock"


def _relative_link(target: Path, link: Path) -> str:
    return os.path.relpath(target, link.parent)


def _replace_link(link: Path, target: str) -> None:
    """Point ``link`` at ``target`` atomically (a new link renamed over the old one)."""
    tmp = link.with_name(f".{link.name}.new-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, link)


def _migrate_real_folder(out: Path, rel: str) -> None:
    """An older layout kept ``rel`` as a real folder: put a link in its place, same content.

    The folder's content goes into a ``legacy`` version that ``current`` points at when there
    is no current release yet; the folder is then exchanged with the link in one step, so a
    reader sees the same files before and after.
    """
    path = out / rel
    releases = out / RELEASES
    current = releases / "current"
    legacy = releases / "legacy"
    if not current.exists():
        tmp = releases / ".legacy.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        for r in PUBLISHED:
            if (out / r).is_dir() and not (out / r).is_symlink():
                shutil.copytree(out / r, tmp / r, symlinks=True)
        tmp.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(legacy, ignore_errors=True)
        os.rename(tmp, legacy)
        _replace_link(current, "legacy")
    link = path.with_name(f".{path.name}.link-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        link.unlink()
    os.symlink(_relative_link(current / rel, path), link)
    if artifacts._exchange(link, path):
        shutil.rmtree(link)  # now the old real folder
    else:  # no renameat2: a short moment without the folder, never a mixed release
        aside = path.with_name(f".{path.name}.old-{os.getpid()}")
        os.rename(path, aside)
        os.rename(link, path)
        shutil.rmtree(aside)


def ensure_links(out: Path) -> None:
    """Make each published path a link through ``OUT/.releases/current`` (idempotent)."""
    current = out / RELEASES / "current"
    for rel in PUBLISHED:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        want = _relative_link(current / rel, path)
        if path.is_symlink():
            if os.readlink(path) != want:
                _replace_link(path, want)
        elif path.exists():
            _migrate_real_folder(out, rel)
        else:
            _replace_link(path, want)


def publish(out: Path, sources: dict[str, Path], version: str) -> Path:
    """Publish ``sources`` (``{published path: folder}``, the keys of :data:`PUBLISHED`) as one release.

    Copies everything into ``OUT/.releases/<version>`` first, then switches ``current`` in
    one ``rename``; the previous release stays as ``previous``, older ones are removed.
    Returns the version folder. A kill at any moment leaves every published path showing the
    old release or the new one, never a mix.
    """
    out = Path(out)
    releases = out / RELEASES
    releases.mkdir(parents=True, exist_ok=True)
    tmp = releases / f".{version}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for rel in PUBLISHED:
        shutil.copytree(sources[rel], tmp / rel)
    final = releases / version
    shutil.rmtree(final, ignore_errors=True)
    os.rename(tmp, final)
    ensure_links(out)
    current = releases / "current"
    old = os.readlink(current) if current.is_symlink() else None
    if old and old != version:
        _replace_link(releases / "previous", old)
    _replace_link(current, version)  # the moment of publication
    keep = {version, old, "current", "previous"}
    for child in releases.iterdir():
        if child.name not in keep and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
    return final


def current_version(out: Path) -> str | None:
    """The version folder name the published paths show now, or None before the first release."""
    link = Path(out) / RELEASES / "current"
    return os.readlink(link) if link.is_symlink() else None


@contextlib.contextmanager
def release_lock(out: Path, what: str):
    """Hold ``OUT/build/release.lock`` for the duration; raise :class:`ReleaseError` at once
    when another release holds it (naming its pid, start time and config)."""
    path = Path(out) / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the whole block
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            try:
                holder = json.loads(fh.read() or "{}")
            except ValueError:
                holder = {}
            raise ReleaseError(
                f"another release is running into {out} (pid {holder.get('pid', '?')}, started {holder.get('started', '?')}, "
                f"config {holder.get('config', '?')}); wait for it to finish or stop it, then run again"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "config": what}))
        fh.flush()
        yield
    finally:
        fh.close()  # releases the lock
