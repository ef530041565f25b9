"""The thumbnail pass (data contract, § Prompt evidence and thumbnails): every distinct image of a
release decoded once, on every core, into each of :data:`~searchgen_nb.evidence.TARGETS`; with
a thumbnail cache (:class:`ThumbCache`), a re-release decodes only the images that changed."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from searchgen_nb.artifacts import write_bytes
from searchgen_nb.errors import ReleaseError
from searchgen_nb.evidence import (
    IMAGE_MAX,
    LARGE_WAY,
    NAME_HEX,
    PATH_MAX,
    SMALL_WAY,
    TARGETS,
    THUMBS,
    ThumbnailError,
    clip,
    renditions,
)
from searchgen_nb.files import ARTIFACT_MAX, read_bytes, read_file
from searchgen_nb.publish import MARKER, mark, marked, not_ours, owned_problem
from searchgen_nb.workers import n_workers, on_workers

#: The environment variable naming the thumbnail cache (``searchgen-nb release`` sets it to
#: ``build/thumbs`` below its output root for its notebooks).
CACHE_ENV = "SEARCHGEN_THUMB_CACHE"
#: What marks a folder as a thumbnail cache (the text of its ``.searchgen-nb``); its index.
CACHE_MARK, INDEX = "thumbnail cache", "index.json"
_ENTRY = re.compile(r"[0-9a-f]{64}\.webp")
_TMP = re.compile(r"\.tmp-[0-9]+-[0-9a-f]+")


def recipe() -> str:
    """What a thumbnail depends on besides the image: Pillow's version, the reducing gap and
    WebP method of a small and of a large image, and every target's size, byte bound and WebP
    qualities (a cache entry made otherwise is never used)."""
    import PIL

    ways = "; ".join(
        f"{w} gap {gap} WebP m{m}"
        for w, (gap, m) in zip(("small", "large"), (SMALL_WAY, LARGE_WAY))
    )
    return f"Pillow {PIL.__version__}; {ways}; " + "; ".join(
        f"{px} px {limit} B q{'/'.join(map(str, qs))}" for _, px, limit, qs in TARGETS
    )


def _identity(st: os.stat_result) -> list[int]:
    """What says a file is unchanged: device, inode, size, modification and change times (ns)."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class ThumbCache:
    """A folder of thumbnails keyed by the sha256 of the image's bytes and :func:`recipe`, and
    an index ``path -> (identity, sha256)`` of the images last read (data contract, § Prompt
    evidence and thumbnails). The tool's own: marked, never an input; entries a pass did not use
    are removed when it ends (:meth:`finish`)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.recipe = Path(folder), recipe()
        self.index: dict[str, list] = {}  # path -> identity + [sha256 hex] of the images read

    def open(self) -> ThumbCache:
        """Make or check the folder (:class:`ReleaseError` when it is not this tool's cache) and
        read the index (an unreadable one is an empty one)."""
        if problem := cache_problem(self.folder):
            raise ReleaseError(problem)
        self.folder.mkdir(parents=True, exist_ok=True)
        if not marked(self.folder, CACHE_MARK):
            mark(self.folder, CACHE_MARK)
        try:
            index = json.loads(read_bytes(self.folder / INDEX, ARTIFACT_MAX))
            self.index = index["images"] if index.get("recipe") == self.recipe else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.index = {}
        return self

    def keys(self, sha: str) -> list[str]:
        """The entry names of one image (by its bytes' sha256 hex), one per target."""
        return [
            hashlib.sha256(f"{sha}\n{self.recipe}\n{n}".encode()).hexdigest() + ".webp"
            for n in range(len(TARGETS))
        ]

    def get(self, sha: str) -> list[bytes] | None:
        """The image's renditions when every one is in the cache."""
        try:
            made = [
                read_bytes(self.folder / key, limit)
                for key, (_, _, limit, _) in zip(self.keys(sha), TARGETS)
            ]
        except OSError:
            return None
        return made if all(made) else None

    def put(self, sha: str, made: list[bytes]) -> None:
        """Store the renditions (each written whole, then renamed; a failure only costs time)."""
        for key, data in zip(self.keys(sha), made):
            tmp = self.folder / f".tmp-{os.getpid()}-{os.urandom(4).hex()}"
            try:
                tmp.write_bytes(data)
                os.replace(tmp, self.folder / key)
            except OSError:
                tmp.unlink(missing_ok=True)

    def known(self, path: str) -> tuple[list, str] | None:
        """The identity and sha256 of the image at ``path`` when the index holds that identity."""
        if not isinstance(entry := self.index.get(path), list) or len(entry) != 6:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        same = stat.S_ISREG(st.st_mode) and st.st_size <= IMAGE_MAX
        return (entry[:-1], entry[-1]) if same and _identity(st) == entry[:-1] else None

    def finish(self, index: dict[str, list]) -> None:
        """Write the pass's index; remove every entry (and unfinished write) it did not use."""
        used = {key for *_, sha in index.values() for key in self.keys(sha)}
        for name in os.listdir(self.folder):
            if (_ENTRY.fullmatch(name) and name not in used) or _TMP.fullmatch(name):
                (self.folder / name).unlink(missing_ok=True)
        tmp = self.folder / f".tmp-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            tmp.write_text(json.dumps({"recipe": self.recipe, "images": index}), encoding="utf-8")
            os.replace(tmp, self.folder / INDEX)
        except OSError:
            tmp.unlink(missing_ok=True)


def cache_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be the thumbnail cache: something there that is neither an empty
    folder nor a folder marked as this tool's thumbnail cache."""
    if (what := not_ours(folder, CACHE_MARK)) is None:
        return None
    return (
        f"the thumbnail cache {folder} is {what} without this tool's mark {MARKER} "
        f'("{CACHE_MARK}"): a cache replaces only what it wrote; move it away or name '
        "another cache folder"
    )


def check_cache(folder: Path | None, forbidden: dict[str, Path]) -> None:
    """:class:`ReleaseError` unless ``folder`` (resolved) may be the thumbnail cache: not in or
    around ``forbidden`` (name -> resolved path), a published version or a release folder, and
    absent, empty or this tool's cache."""
    if folder is not None:
        problem = owned_problem(folder, forbidden)
        if problem:
            raise ReleaseError(f"thumbnail cache {folder} {problem}; nothing was done")
        if problem := cache_problem(folder):
            raise ReleaseError(problem)


def cache_folder(given: str | os.PathLike | None) -> Path | None:
    """The thumbnail cache to use: ``given``, else ``$SEARCHGEN_THUMB_CACHE``, else none."""
    given = given or os.environ.get(CACHE_ENV)
    return Path(os.path.realpath(given)) if given else None


_CACHE: ThumbCache | None = None  # a worker's cache
#: A worker's renditions of the first 256 images it made, by sha256 (the demo's images repeat).
MEMO: dict[str, list[bytes]] = {}


def _open_cache(folder: Path | None) -> None:
    """A worker's start: its handle on the thumbnail cache, if any."""
    global _CACHE
    _CACHE = ThumbCache(folder) if folder is not None else None


def _render(path: str) -> tuple[str, list | None, str | None, list[bytes] | None, str | None]:
    """In a worker: the path, the image's identity, sha256, renditions, or why it has none."""
    try:
        data, st = read_file(path, IMAGE_MAX)
    except OSError as exc:
        return path, None, None, None, exc.strerror or str(exc)
    sha = hashlib.sha256(data).hexdigest()
    made = MEMO.get(sha) or (_CACHE.get(sha) if _CACHE else None)
    if made is None:
        try:
            made = renditions(data)
        except ThumbnailError as exc:
            return path, _identity(st), sha, None, str(exc)
        if _CACHE:
            _CACHE.put(sha, made)
    if len(MEMO) < 256:
        MEMO[sha] = made
    return path, _identity(st), sha, made, None


def _on_workers(paths: list[str], cache: ThumbCache | None):
    """:func:`_render` of every path on a worker process per core (:func:`on_workers`)."""
    return on_workers(
        _render,
        paths,
        "thumbnails: a worker process ended before its images were made (killed, or out of "
        "memory?); nothing was published",
        _open_cache,
        (cache.folder if cache else None,),
        chunksize=max(1, min(64, len(paths) // (64 * n_workers(len(paths))))),
    )


def _same_files(paths: list[str]) -> list[list[str]]:
    """``paths`` in groups that name one file (hard links: the same device and inode), each in
    the order given; a path that cannot be read is a group of its own."""
    groups: dict[object, list[str]] = {}
    for path in paths:
        try:
            st = os.stat(path)
            key: object = (st.st_dev, st.st_ino)
        except OSError:
            key = path
        groups.setdefault(key, []).append(path)
    return list(groups.values())


def render_all(paths: list[str], cache: ThumbCache | None):
    """``(paths, renditions or None, why none)`` of every image, each file read once (``paths``:
    its hard links, in the order given) on a worker process per core unless the cache's index
    knows it; the cache then holds exactly these images."""
    index, todo = {}, []
    for path in paths:
        hit = cache.known(path) if cache else None
        made = cache.get(hit[1]) if cache and hit else None
        if made and hit:
            index[path] = [*hit[0], hit[1]]
            yield [path], made, None
        else:
            todo.append(path)
    groups = _same_files(todo)
    with _on_workers([g[0] for g in groups], cache) as done:
        for (_, ident, sha, made, why), group in zip(done, groups):  # the workers' end first
            if made is not None:
                index.update((path, [*ident, sha]) for path in group)
            yield group, made, why
    if cache:
        cache.finish(index)


@dataclass
class Thumbnails:
    """What the pass made: per pair ``(model index, prompt index)`` its ``thumbnail`` and
    ``preview`` paths (and ``image``, its path below the results' root, when linked), the files
    written (path -> (sha256, bytes)) and a warning per pair whose image gave none."""

    paths: dict[tuple[int, int], dict] = field(default_factory=dict)
    files: dict[str, tuple[str, int]] = field(default_factory=dict)
    warnings: list[dict] = field(default_factory=list)

    def write(self, folder: Path, target: str, data: bytes) -> str:
        """Write ``data`` once into ``folder/target``, named by its content; its path there."""
        digest = hashlib.sha256(data).hexdigest()
        path = f"{target}/{digest[:NAME_HEX]}.webp"
        if path not in self.files:
            (folder / target).mkdir(exist_ok=True)
            write_bytes(folder / path, data)
            self.files[path] = (digest, len(data))
        return path

    def put(self, folder: Path, made: list[bytes]) -> dict[str, str]:
        """Write an image's renditions (:data:`TARGETS` order) into ``folder``: the paths of its
        ``thumbnail`` and ``preview``."""
        pieces = zip(("thumbnail", "preview"), TARGETS, made)
        return {name: self.write(Path(folder), t[0], data) for name, t, data in pieces}

    def summary(self, enabled: bool, target: str = THUMBS) -> dict:
        """``manifest.json``'s ``thumbnails`` (``target`` thumbs) or ``previews``: whether made,
        count, bytes, sha256 and bounds."""
        h, mine = hashlib.sha256(), sorted(p for p in self.files if p.startswith(target + "/"))
        for path in mine:
            h.update(f"{self.files[path][0]}  {path}\n".encode())
        _, px, limit, _ = next(t for t in TARGETS if t[0] == target)
        return {
            "enabled": enabled,
            "n_files": len(mine),
            "bytes": sum(self.files[p][1] for p in mine),
            "sha256": h.hexdigest(),
            "max_bytes": limit,
            "max_px": px,
        }


def real_path(path: str, known: dict[str, str]) -> str:
    """``os.path.realpath`` of a normalised absolute ``path``, each folder above it resolved once
    into ``known`` (path -> real path)."""
    if (real := known.get(path)) is None:
        head, tail = os.path.split(path)
        if not tail or head == path:
            real = os.path.realpath(path)
        else:
            real = os.path.join(real_path(head, known), tail)
            real = os.path.realpath(real) if os.path.islink(real) else real
        known[path] = real
    return real


def leaves_root(path: str, root: str, known: dict[str, str]) -> bool:
    """Whether ``path`` (absolute, normalised, below the resolved ``root``) is, once its links
    are followed, outside ``root`` (:func:`real_path` with ``known``)."""
    real = real_path(path, known)
    return real != root and not real.startswith(root.rstrip("/") + "/")


def make_thumbnails(
    cfg,
    table,
    images: dict[tuple[int, int], tuple[str, bool]],
    folder: Path,
    cache: Path | None = None,
) -> Thumbnails:
    """The thumbnail and preview of every pair of ``table`` with an image (``images``: (model
    index, prompt index) -> its path below the results' root and whether it :func:`leaves_root`,
    as extraction found them), written into ``folder`` (data contract, § Prompt evidence and
    thumbnails); ``cache``: the thumbnail cache folder, or None. An image that gives none, or
    that links to a file outside ``results_root``, is a warning naming its file, never a
    failure."""
    root, out = str(cfg.results_root_path), Thumbnails()
    link = cfg.evidence.image_base_url is not None
    # path -> ({"thumbnail", "preview": their paths}, None) or (None, why none)
    names: dict[str, tuple[dict[str, str] | None, str | None]] = {}
    inside = set()
    for rel, leaves in images.values():
        if leaves:
            names[os.path.join(root, rel)] = None, "a link to a file outside results_root"
        else:
            inside.add(os.path.join(root, rel))
    for paths, made, why in render_all(sorted(inside), ThumbCache(cache).open() if cache else None):
        got = (None, why) if made is None else (out.put(folder, made), None)
        names |= dict.fromkeys(paths, got)
    for k, i in sorted(images, key=lambda pair: pair[::-1]):  # warnings by prompt, then model
        rel = images[k, i][0]
        made, why = names[os.path.join(root, rel)]
        if made is not None:
            out.paths[k, i] = {**made, "image": clip(rel, PATH_MAX)} if link else made
        else:
            out.warnings.append(
                {
                    "check": "thumbnail",
                    "sample_id": table.prompts[i]["sample_id"],
                    "model_id": table.model_ids[k],
                    "file": rel,
                    "message": clip(f"image skipped: {why}", 300),
                }
            )
    return out
