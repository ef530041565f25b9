"""Opening input files: regular files only (after following links), each read within a bound
(data contract, § Input files); anything else is refused at once with :class:`UnreadableFile`."""

import fnmatch
import functools
import io
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

MiB = 1 << 20
#: Bounds: the release config and the paper table, one result file, the prompt metadata and a
#: JSON artifact of a release folder (each read whole); ``prompt_scores.jsonl`` of a release
#: folder, streamed: the file, and one line of it.
CONFIG_MAX, RESULT_MAX, DATASET_MAX, ARTIFACT_MAX = 16 * MiB, 16 * MiB, 256 * MiB, 1024 * MiB
STREAM_MAX, LINE_MAX = 64 * 1024 * MiB, 64 * MiB

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UnreadableFile(OSError):
    """A file not read: not a regular file, or over its bound (``strerror`` says which)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.strerror = why


def _size(n: int) -> str:
    for unit, name in ((1024 * MiB, "GiB"), (MiB, "MiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n} bytes"


def open_regular(path: str | os.PathLike, limit: int) -> io.BufferedReader:
    """``path`` opened for binary reading when a regular file of at most ``limit`` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a file")
            raise UnreadableFile(f"{kind}, not a regular file")
        if st.st_size > limit:
            raise UnreadableFile(f"{st.st_size} bytes, larger than the bound of {_size(limit)}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_file(path: str | os.PathLike, limit: int) -> tuple[bytes, os.stat_result]:
    """The content and ``fstat`` of a regular file of at most ``limit`` bytes (even if growing)."""
    with open_regular(path, limit) as fh:
        st = os.fstat(fh.fileno())
        # the size it has (a buffer of ``limit`` would cost), never more than the bound
        data = fh.read(min(st.st_size, limit) + 1)
        if len(data) > st.st_size:  # it grew since
            data += fh.read(limit + 1 - len(data))
    if len(data) > limit:
        raise UnreadableFile(f"grew beyond the bound of {_size(limit)} while being read")
    return data, st


def read_bytes(path: str | os.PathLike, limit: int) -> bytes:
    """The content of a regular file of at most ``limit`` bytes (see :func:`read_file`)."""
    return read_file(path, limit)[0]


def read_lines(
    path: str | os.PathLike, limit: int = STREAM_MAX, line_limit: int = LINE_MAX
) -> Iterator[bytes]:
    """The lines of a regular file (with ``\\n``), streamed: ``line_limit`` bytes each at most,
    ``limit`` in all."""
    with open_regular(path, limit) as fh:
        total, line_no = 0, 0
        while line := fh.readline(line_limit + 1):
            line_no, total = line_no + 1, total + len(line)
            if len(line) > line_limit:
                why = f"line {line_no} is longer than the bound of {_size(line_limit)}"
                raise UnreadableFile(why)
            if total > limit:
                raise UnreadableFile(f"grew beyond the bound of {_size(limit)} while being read")
            yield line


def find_image(folder: str | Path, globs) -> Path | None:
    """A pair's generated image: the first file name of ``folder`` (sorted) that one of
    ``generation_glob`` matches, case-insensitively (data contract, § Status of a prompt ×
    model pair); None when there is none or the folder cannot be listed."""
    name = image_name(str(folder), globs)
    return None if name is None else Path(folder) / name


def image_name(folder: str, globs) -> str | None:
    """The name of :func:`find_image`'s file in ``folder``, or None."""
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    match = _matcher(tuple(globs))
    return min((n for n in names if match(n.lower())), default=None)


@functools.lru_cache(maxsize=16)
def _matcher(globs: tuple[str, ...]):
    """Whether a lower-case name matches one of ``globs`` (lower-cased), as ``fnmatchcase``."""
    if not globs:
        return lambda name: False
    either = "|".join(f"(?:{fnmatch.translate(g.lower())})" for g in globs)
    return re.compile(either).match
