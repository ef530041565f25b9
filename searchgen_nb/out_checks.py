"""What a command may write where it is told to (data contract, § Publication): ``data --out``
replaces only an empty folder or a data release it wrote, an option's JSON file (``--timings``)
goes only where nothing else is; no output touches an input or what :func:`owned_problem` names."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from searchgen_nb.constants import ARTIFACTS, MANIFEST, VALIDATION_REPORT
from searchgen_nb.declaration import BOARD_PATTERN
from searchgen_nb.errors import ReleaseError
from searchgen_nb.evidence import PREVIEWS, THUMBS
from searchgen_nb.files import ARTIFACT_MAX, CONFIG_MAX, read_bytes
from searchgen_nb.publish import RELEASES, describe, listing, marked, published_version
from searchgen_nb.schemas import schema_dir
from searchgen_nb.untrusted import excerpt

#: What ``searchgen-nb data`` writes into its output folder (``schemas/`` holds ``*.schema.json``,
#: ``thumbs/`` and ``previews/`` the thumbnails and previews ``<first 32 hex digits of their
#: sha256>.webp``), and the change summary a release publishes beside it.
DATA_NAMES = frozenset(
    {*ARTIFACTS, MANIFEST, VALIDATION_REPORT, "schemas", THUMBS, PREVIEWS, "CHANGES.md"}
)
_THUMB = re.compile(r"[0-9a-f]{32}\.webp")
#: Keys every ``manifest.json`` that ``data`` writes holds.
MANIFEST_KEYS = frozenset({"artifact_sha256", "artifacts", "schema_version"})
#: The file that marks a folder as a demo, and what it holds.
DEMO_MARKER, DEMO_MARKER_TEXT = ".searchgen-nb-demo", "synthetic-demo\n"


def is_demo(folder: Path) -> bool:
    """Whether ``folder`` holds the demo's marker (a regular file with its text)."""
    try:
        text = read_bytes(folder / DEMO_MARKER, CONFIG_MAX)
    except OSError:  # absent, not a regular file, too large
        return False
    return not (folder / DEMO_MARKER).is_symlink() and text == DEMO_MARKER_TEXT.encode()


def _ours(folder: Path) -> str | None:
    """What of this tool's ``folder`` is: a data release, a demo, a release's work folder."""
    if folder.is_symlink() or not folder.is_dir():
        return None
    if MANIFEST_KEYS <= _json_keys(folder / MANIFEST):
        return "data release"
    if is_demo(folder):
        return "demo"
    return "release work folder (the next release empties it)" if marked(folder) else None


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
