"""Publishing a whole release in one atomic step (data contract, § Publication), one release
at a time (``OUT/build/release.lock``). The published paths are links through one ``current``::

    OUT/.releases/<version>/public/data, _build/html, book/notebooks
    OUT/.releases/current  -> <version>          (one atomic switch)
    OUT/.releases/previous -> <older version>
    OUT/public/data        -> ../.releases/current/public/data   (and so on)
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import re
import shutil
from pathlib import Path

from searchgen_nb.artifacts import held_signals
from searchgen_nb.errors import ReleaseError
from searchgen_nb.files import CONFIG_MAX, read_bytes
from searchgen_nb.untrusted import excerpt

#: The published paths below the output root, and where each lives inside a version folder.
PUBLISHED = ("public/data", "_build/html", "book/notebooks")
RELEASES = ".releases"
LOCK = "build/release.lock"
#: The file that marks a folder as made by this tool; it holds the folder's own name.
MARKER = ".searchgen-nb"
#: The temporary name :func:`_replace_link` gives a new link of ``.releases``.
_LINK_TMP = re.compile(r"\.(current|previous)\.new-[0-9]+")


def listing(names: list[str]) -> str:
    """``N entries (a, b, …)``: a count and the first few names, bounded."""
    shown = ", ".join(excerpt(n, 40) for n in names[:5]) + (", …" if len(names) > 5 else "")
    return f"{len(names)} {'entry' if len(names) == 1 else 'entries'} ({shown})"


def describe(path: Path) -> str:
    """What is at ``path``, for a message: a link, a file, or a folder and a few of its names."""
    if path.is_symlink():
        return f"a link to {excerpt(os.readlink(path), 120)}"
    if not path.is_dir():
        return "a file" if path.is_file() else "not a file or folder"
    names = sorted(os.listdir(path))
    return f"a folder holding {listing(names)}" if names else "an empty folder"


def mark(folder: Path) -> None:
    """Mark ``folder`` as made by this tool (:data:`MARKER`, holding the folder's name)."""
    (folder / MARKER).write_text(folder.name, encoding="utf-8")


def marked(folder: Path, name: str | None = None) -> bool:
    """Whether ``folder`` is a real folder marked for ``name`` (default: its own name)."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        text = read_bytes(folder / MARKER, CONFIG_MAX).decode("utf-8")  # never a FIFO's wait
        return text == (name or folder.name)
    except (OSError, UnicodeDecodeError):
        return False


def published_version(path: Path) -> Path | None:
    """The ``.releases`` folder, or the version in it, that ``path`` (resolved) is or lies in."""
    path = Path(os.path.realpath(path))
    return next((f for f in (path, *path.parents) if RELEASES in (f.name, f.parent.name)), None)


def os_failure(step: str, exc: OSError) -> ReleaseError:
    """A :class:`ReleaseError` naming the step, the path and the system's reason, bounded (of a
    tree copy's errors the first is named, the others counted)."""
    errors = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else None
    if isinstance(errors, list) and errors:
        dst, why = (list(errors[0]) + ["?", "?", "?"])[1:3]
        more = f" (and {len(errors) - 1} more files)" if len(errors) > 1 else ""
        where, reason = excerpt(str(dst), 200), excerpt(str(why), 200)
        return ReleaseError(f"{step}: cannot write {where}: {reason}{more}")
    where = excerpt(str(exc.filename), 200) if exc.filename is not None else "?"
    if exc.filename2 is not None:
        where += f" → {excerpt(str(exc.filename2), 200)}"
    return ReleaseError(f"{step}: {where}: {excerpt(exc.strerror or str(exc), 200)}")


@contextlib.contextmanager
def step(name: str):
    """Turn an ``OSError`` in the block (disk full, read-only, …) into a failure naming it."""
    try:
        yield
    except OSError as exc:
        raise os_failure(name, exc) from None


def _want(out: Path, rel: str) -> str:
    """The target of the link at ``out/rel``: relative, through ``.releases/current``."""
    return os.path.relpath(out / RELEASES / "current" / rel, (out / rel).parent)


def _replace_link(link: Path, target: str) -> None:
    """Point ``link`` at ``target`` atomically (a new link renamed over the old one)."""
    tmp = link.with_name(f".{link.name}.new-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, link)


def publication_problems(out: Path) -> list[str]:
    """What stops a release from publishing below ``out`` (each published path absent or the
    link this tool makes; ``.releases`` a folder of links ``current`` and ``previous``)."""
    if published_version(out) is not None:
        return [f"{out} lies inside the published release {published_version(out)} (never changed)"]
    if os.path.lexists(out) and not out.is_dir():
        return [f"{out} is {describe(out)}, not a folder"]
    problems = []
    releases = out / RELEASES
    if os.path.lexists(releases) and not releases.is_dir():
        problems.append(f"{releases} is {describe(releases)}, not a folder")
    for path in (releases / "current", releases / "previous"):
        if os.path.lexists(path) and not path.is_symlink():
            problems.append(f"{path} is {describe(path)}, not a link to a version")
    for rel in PUBLISHED:
        path, want = out / rel, _want(out, rel)
        if os.path.lexists(path.parent) and not path.parent.is_dir():
            problems.append(f"{path.parent} is {describe(path.parent)}, not a folder")
        elif os.path.lexists(path) and not (path.is_symlink() and os.readlink(path) == want):
            problems.append(f"{path} is {describe(path)}, not the link a release makes (to {want})")
    return problems


def _stale_tmp(child: Path) -> bool:
    """A version being written that a killed run left (``.<version>.tmp``, marked or empty)."""
    name = child.name
    if not (name.startswith(".") and name.endswith(".tmp")):
        return False
    return marked(child, name[1:-4]) or (
        not child.is_symlink() and child.is_dir() and not any(child.iterdir())
    )


def publish(
    out: Path,
    sources: dict[str, Path],
    version: str,
    log=lambda msg: None,
    inputs: dict[str, Path] | None = None,
) -> Path:
    """Publish ``sources`` (``{published path: folder}``) as one release, checked first, copied
    into ``OUT/.releases/<version>`` (marked), ``current`` switched in one ``rename``; returns the
    version folder. Older versions are removed as :func:`_remove_old_versions` says."""
    out = Path(out)
    problems = publication_problems(out)
    if problems:
        raise ReleaseError(
            f"cannot publish below {out}: "
            + "; ".join(problems[:6])
            + ". A release publishes only through the links it makes: move what is "
            "there elsewhere (for instance `mv public/data public/data.old`), then "
            "run again; nothing was changed"
        )
    releases = out / RELEASES
    releases.mkdir(parents=True, exist_ok=True)
    for child in list(releases.iterdir()):
        if _stale_tmp(child):
            shutil.rmtree(child)
    tmp, final = releases / f".{version}.tmp", releases / version
    if os.path.lexists(tmp) or os.path.lexists(final):
        raise ReleaseError(f"cannot publish: {final} already exists; nothing was changed")
    try:
        tmp.mkdir()
        (tmp / MARKER).write_text(version, encoding="utf-8")
        for rel in PUBLISHED:
            shutil.copytree(sources[rel], tmp / rel)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = current_version(out)
    with held_signals():  # the switch: before it the old release shows, after it the new one
        for rel in PUBLISHED:  # each published path (absent, or that link already) a link
            if not os.path.lexists(out / rel):
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                _replace_link(out / rel, _want(out, rel))
        if old and old != version:
            _replace_link(releases / "previous", old)
        _replace_link(releases / "current", version)  # the moment of publication
    _remove_old_versions(releases, {version, old, "current", "previous"}, log, inputs or {})
    return final


def _remove_old_versions(releases: Path, keep: set, log, inputs: dict[str, Path]) -> None:
    """Remove the versions this tool made but ``keep`` and those holding an input of the run
    (``inputs``: name → resolved path); say what else was left."""
    left = []
    for child in sorted(releases.iterdir()):
        if child.name in keep:
            continue
        folder = Path(os.path.realpath(child))
        held = next(
            (
                f"the {name} {excerpt(str(path), 200)}"
                for name, path in inputs.items()
                if path.is_relative_to(folder)
            ),
            None,
        )
        if marked(child) and held:
            log(f"kept {excerpt(child.name, 60)} in {releases}: it holds {held} of this run")
        elif marked(child):
            shutil.rmtree(child, ignore_errors=True)
        elif child.is_symlink() and _LINK_TMP.fullmatch(child.name):
            child.unlink()  # a link being replaced when a run was killed
        else:
            left.append(child.name)
    if left:
        names = ", ".join(excerpt(n, 60) for n in left[:10])
        log(f"left {names} in {releases}: not a release version this tool made")


def current_version(out: Path) -> str | None:
    """The version folder name the published paths show now, or None before the first release."""
    link = Path(out) / RELEASES / "current"
    return os.readlink(link) if link.is_symlink() else None


@contextlib.contextmanager
def release_lock(out: Path, what: str):
    """Hold ``OUT/build/release.lock`` for the block; :class:`ReleaseError` at once when
    another release holds it (naming it) or the file is not this tool's."""
    path = Path(out) / LOCK
    with step("release lock"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "a+", encoding="utf-8")  # held for the whole block
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            locked = True
        except BlockingIOError:
            locked = False
        fh.seek(0)
        try:
            holder = json.loads(fh.read() or "{}")
        except (ValueError, UnicodeDecodeError):
            holder = None
        if not locked:
            holder = holder if isinstance(holder, dict) else {}
            pid, started, config = (holder.get(k, "?") for k in ("pid", "started", "config"))
            raise ReleaseError(
                f"another release is running into {out} (pid {pid}, started "
                f"{started}, config {config}); wait for it to finish or stop it, "
                "then run again"
            )
        if not isinstance(holder, dict):
            raise ReleaseError(
                f"{path} holds something this tool did not write; move it elsewhere and run again"
            )
        fh.seek(0)
        fh.truncate()
        started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        fh.write(json.dumps({"pid": os.getpid(), "started": started, "config": what}))
        fh.flush()
        yield
    finally:
        fh.close()  # releases the lock
