"""Publication (data contract, § Publication): the one way a command writes a folder it owns —
built in a staging folder beside its place, then put in place in one step (:func:`promote`) —
the one mark of the folders this tool made, and the refusal by name of anything else. ``data
--out`` and ``demo --out`` replace their folder so; a release publishes each version so, one
release at a time (``OUT/build/release.lock``), its published paths links through one
``current``::

    OUT/.releases/<version>/public/data, _build/html, book/notebooks
    OUT/.releases/current  -> <version>          (one atomic switch)
    OUT/.releases/previous -> <older version>
    OUT/public/data        -> ../.releases/current/public/data   (and so on)
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import datetime as dt
import fcntl
import json
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from searchgen_nb.constants import ARTIFACTS, MANIFEST, VALIDATION_REPORT
from searchgen_nb.declaration import BOARD_PATTERN
from searchgen_nb.errors import ReleaseError
from searchgen_nb.evidence import PREVIEWS, THUMBS
from searchgen_nb.files import ARTIFACT_MAX, CONFIG_MAX, read_bytes
from searchgen_nb.schemas import schema_dir
from searchgen_nb.untrusted import excerpt

#: The published paths below the output root, and where each lives inside a version folder.
PUBLISHED = ("public/data", "_build/html", "book/notebooks")
RELEASES = ".releases"
LOCK = "build/release.lock"
#: The one mark of a folder this tool made: a regular file holding what the folder is — a
#: version's or the work folder's own name, ``thumbnail cache``, ``synthetic-demo``. A data
#: release carries none: its ``manifest.json`` (:data:`MANIFEST_KEYS`) says what it is.
MARKER = ".searchgen-nb"
DEMO = "synthetic-demo"
#: The demo's mark as versions before this one wrote it (a file holding ``synthetic-demo``).
OLD_DEMO_MARKER = ".searchgen-nb-demo"
#: The temporary name :func:`_replace_link` gives a new link of ``.releases``.
_LINK_TMP = re.compile(r"\.(current|previous)\.new-[0-9]+")
#: What ``searchgen-nb data`` writes into its output folder (``schemas/`` holds ``*.schema.json``,
#: ``thumbs/`` and ``previews/`` the thumbnails and previews ``<first 32 hex digits of their
#: sha256>.webp``), and the change summary a release publishes beside it.
DATA_NAMES = frozenset(
    {*ARTIFACTS, MANIFEST, VALIDATION_REPORT, "schemas", THUMBS, PREVIEWS, "CHANGES.md"}
)
_THUMB = re.compile(r"[0-9a-f]{32}\.webp")
#: Keys every ``manifest.json`` that ``data`` writes holds.
MANIFEST_KEYS = frozenset({"artifact_sha256", "artifacts", "schema_version"})


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


def mark(folder: Path, name: str | None = None) -> None:
    """Mark ``folder`` as made by this tool: :data:`MARKER` holding ``name`` (default: the
    folder's own name)."""
    (folder / MARKER).write_text(name or folder.name, encoding="utf-8")


def _mark_text(path: Path) -> str | None:
    """What a mark file holds; None unless a regular file (never a FIFO's wait), no link."""
    try:
        return None if path.is_symlink() else read_bytes(path, CONFIG_MAX).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def marked(folder: Path, name: str | None = None) -> bool:
    """Whether ``folder`` is a real folder marked for ``name`` (default: its own name); a demo
    marked as versions before this one did counts as marked for :data:`DEMO`."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    want = name or folder.name
    old = want == DEMO and _mark_text(folder / OLD_DEMO_MARKER) == DEMO + "\n"
    return old or _mark_text(folder / MARKER) == want


def not_ours(folder: Path, name: str | None = None) -> str | None:
    """What is at ``folder`` (:func:`describe`) unless it is absent, an empty folder or marked
    for ``name``: what a command never replaces."""
    if not os.path.lexists(folder) or marked(folder, name):
        return None
    return None if (what := describe(folder)) == "an empty folder" else what


def _ours(folder: Path) -> str | None:
    """What of this tool's ``folder`` is: a data release, a demo, a release's work folder."""
    if folder.is_symlink() or not folder.is_dir():
        return None
    if MANIFEST_KEYS <= _json_keys(folder / MANIFEST):
        return "data release"
    if marked(folder, DEMO):
        return "demo"
    return "release work folder (the next release empties it)" if marked(folder) else None


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


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with Linux ``renameat2(RENAME_EXCHANGE)``; False if unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return True


def staging_dir(dest: Path) -> Path:
    """A fresh empty folder ``.<dest>.staging-<pid>-…`` beside ``dest`` (the final rename is
    atomic) after removing what a killed run left; mode 0777 less the umask, not ``mkdtemp``'s
    0700: what gets published must be readable by others."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    for kind in ("staging", "old"):  # this module's folders of a process that is gone
        prefix = f".{dest.name}.{kind}-"
        for path in dest.parent.glob(f"{prefix}*"):
            pid = path.name[len(prefix) :].split("-", 1)[0]
            if pid.isdigit() and not _pid_alive(int(pid)) and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
    path = Path(tempfile.mkdtemp(prefix=f".{dest.name}.staging-{os.getpid()}-", dir=dest.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o777 & ~umask)
    return path


@contextlib.contextmanager
def held_signals():
    """Hold SIGINT and SIGTERM while the block runs (a publication's few renames), then act on
    the first one that came: a stop lands before the publication or after it, never inside."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    saved = {
        s: signal.signal(s, lambda signum, frame: caught.append(signum))
        for s in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
        if caught:
            signal.raise_signal(caught[0])


def promote(staging: Path, dest: Path) -> None:
    """Replace ``dest`` (checked by the caller) by ``staging`` in one step: exchanged atomically
    with ``renameat2`` where supported, else renamed aside first (data contract, § Publication)."""
    staging, dest = Path(staging), Path(dest)
    if not dest.exists():
        os.rename(staging, dest)
    elif _exchange(staging, dest):
        shutil.rmtree(staging)
    else:
        aside = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-{os.getpid()}-", dir=dest.parent))
        aside.rmdir()
        os.rename(dest, aside)
        os.rename(staging, dest)
        shutil.rmtree(aside)


def check_no_dangling_link(path: str | os.PathLike, option: str) -> None:
    """:class:`ReleaseError` when the output ``path`` as given passes through a link to nothing
    (the link itself, or a folder above it): writing there would make the link's target and its
    missing folders wherever the link points (data contract, § Publication)."""
    given = Path(os.path.abspath(path))
    for link in (*reversed(given.parents), given):
        if link.is_symlink() and not link.exists():
            raise ReleaseError(
                f"{option} {path}: {link} is a link to "
                f"{excerpt(os.readlink(link), 120)}, which does not exist; an "
                "output is never written through a dangling link; nothing was done"
            )


def owned_problem(path: Path, inputs: dict[str, Path]) -> str | None:
    """Why no command may write at ``path`` (resolved; ``inputs``: name → resolved path): it is
    or lies inside a published version, is, contains or lies inside an input, or lies inside a
    data release, a demo or a release's work folder (data contract, § Publication)."""
    version = published_version(path)
    if version is not None:
        root = version.parent.parent if version.name != RELEASES else version.parent
        return (
            f"lies inside the published release {version.name} ({version}): a published "
            "version is never changed; publish a new release with `searchgen-nb release "
            f"CONFIG --output-root {root}`"
        )
    for name, other in inputs.items():
        relation = (
            "is"
            if path == other
            else "contains"
            if other.is_relative_to(path)
            else "lies inside"
            if path.is_relative_to(other)
            else None
        )
        if relation:
            return f"{relation} the {name} {other}: inputs are never written"
    for folder in path.parents:
        if kind := _ours(folder):
            return f"lies inside the {kind} {folder}, which is never written into"
    return None


def _regular(path: Path) -> bool:
    return not path.is_symlink() and path.is_file()


def _foreign_entries(path: Path, names: list[str]) -> list[str]:
    """What of the folder ``path`` ``data`` did not write: not a regular file named as an artifact
    (a breakdown's board too),
    nor in ``thumbs/``, ``previews/`` or ``schemas/`` a regular file named as a thumbnail, a
    preview or one of its schemas."""
    schemas = frozenset(p.name for p in schema_dir().glob("*.schema.json"))
    inner: dict[str, Callable[[str], object]] = {
        THUMBS: _THUMB.fullmatch,
        PREVIEWS: _THUMB.fullmatch,
        "schemas": schemas.__contains__,
    }
    artifact = (n in DATA_NAMES or BOARD_PATTERN.fullmatch(n) for n in names)
    foreign = [
        n for n, ok in zip(names, artifact) if n not in inner and not (ok and _regular(path / n))
    ]
    for sub, own in inner.items():
        if sub in names and ((path / sub).is_symlink() or not (path / sub).is_dir()):
            foreign.append(sub)
        elif sub in names:
            foreign += [
                f"{sub}/{n}"
                for n in sorted(os.listdir(path / sub))
                if not (own(n) and _regular(path / sub / n))
            ]
    return foreign


def _data_folder_problem(path: Path) -> str | None:
    """What is at ``path`` unless absent, an empty folder or a data release ``data`` wrote."""
    if not os.path.lexists(path):
        return None
    if path.is_symlink() or not path.is_dir():
        return f"is {describe(path)}"
    names = sorted(os.listdir(path))
    if not names:
        return None
    if foreign := _foreign_entries(path, names):
        return f"holds {listing(foreign)} this command did not write"
    if not MANIFEST_KEYS <= _json_keys(path / MANIFEST):
        return f"holds {listing(names)} but no {MANIFEST} of a data release"
    return None


def check_data_out(out: Path, inputs: dict[str, Path], again: bool = False) -> None:
    """:class:`ReleaseError` unless ``searchgen-nb data`` may replace ``out`` (resolved;
    ``inputs``: name → resolved path), as data contract, § Publication says; ``again``: the
    same check right before the swap, for what appeared at ``out`` while the command ran."""
    if problem := owned_problem(out, inputs):
        problem = f"{problem}; give --out a new folder"
    elif os.path.ismount(out):
        problem = "is a mount point, which cannot be replaced; give --out a folder inside it"
    elif problem := _data_folder_problem(out):
        problem += (
            ": data replaces only an empty folder or a data release it wrote; give --out "
            "a new folder"
        )
    if problem and again:
        raise ReleaseError(
            f"--out {out} changed while data ran and now {problem}; nothing was published"
        )
    if problem:
        raise ReleaseError(f"--out {out} {problem}")


def _json_keys(path: Path) -> set:
    """The top-level keys of a JSON object file; an empty set for anything else (what is not a
    regular file within its bound is never opened)."""
    try:
        data = json.loads(read_bytes(path, ARTIFACT_MAX))
    except (OSError, ValueError, RecursionError):
        return set()
    return set(data) if isinstance(data, dict) else set()


def check_output_file(path: Path, option: str, keys: set, forbidden: dict[str, Path]) -> None:
    """:class:`ReleaseError` unless a command may write its JSON file (an object with ``keys``)
    at ``path`` when it ends; ``forbidden``: name → resolved path it must not be in."""
    if problem := owned_problem(path, forbidden) or _file_problem(path, keys):
        raise ReleaseError(f"{option} {path} {problem}; nothing was done")


def _file_problem(path: Path, keys: set) -> str | None:
    if os.path.lexists(path) and (
        path.is_symlink() or not path.is_file() or not keys <= _json_keys(path)
    ):
        return f"is {describe(path)} this command did not write"
    if not path.parent.is_dir():
        return f"cannot be written: there is no folder {path.parent}"
    if not os.access(path.parent, os.W_OK):
        return f"cannot be written: folder {path.parent} is not writable"
    return None


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
    return name.startswith(".") and name.endswith(".tmp") and not not_ours(child, name[1:-4])


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
        mark(tmp, version)
        for rel in PUBLISHED:
            shutil.copytree(sources[rel], tmp / rel)
        promote(tmp, final)
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
