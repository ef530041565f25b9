"""Writing artifacts: canonical JSON (UTF-8, sorted keys, no NaN, a final newline: reruns are
byte-identical), timestamps, and a staged folder swapped into place in one step
(data contract, § Artifacts; § Publication)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import datetime as dt
import hashlib
import json
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from searchgen_nb.errors import ConfigError
from searchgen_nb.untrusted import excerpt


def dumps(obj: object) -> str:
    """Canonical JSON text of an artifact; raises ValueError on NaN/Infinity. A negative zero
    (a score written ``-0.0``) is written ``0.0``: one number, one text."""

    def plain(o):
        if isinstance(o, float):
            return float(o) + 0.0  # -0.0 + 0.0 is 0.0; every other float is itself
        if isinstance(o, dict):
            return {k: plain(v) for k, v in o.items()}
        return [plain(v) for v in o] if isinstance(o, (list, tuple)) else o

    return (
        json.dumps(plain(obj), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    )


@contextlib.contextmanager
def writing(path: Path):
    """An ``OSError`` of the block that names no file (a write or close on a full disk) names
    ``path``, so that the failure says where (data contract, § Publication)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None


def write_jsonl(path: Path, rows) -> str:
    """Write rows (any iterable) as compact canonical JSON, one per line, streaming; return the
    sha256."""
    h = hashlib.sha256()
    with writing(path), open(path, "wb") as fh:
        for r in rows:
            data = (
                json.dumps(
                    r, allow_nan=False, separators=(",", ":"), sort_keys=True, ensure_ascii=False
                ).encode("utf-8")
                + b"\n"
            )
            h.update(data)
            fh.write(data)
    return h.hexdigest()


def write_bytes(path: Path, data: bytes) -> str:
    """Write ``data``; return its sha256."""
    with writing(path):
        path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def write_text(path: Path, text: str) -> str:
    """Write UTF-8 text; return its sha256."""
    return write_bytes(path, text.encode("utf-8"))


def source_date_epoch() -> int | None:
    """``SOURCE_DATE_EPOCH`` (reproducible builds) as seconds, None when unset or empty;
    :class:`ConfigError` naming it unless whole seconds between 1970 and 9999."""
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()) or int(raw) > 253402300799:
        raise ConfigError(
            f"environment: SOURCE_DATE_EPOCH={excerpt(raw, 40)!s} is not a Unix "
            "timestamp (whole seconds since 1970, at most year 9999)"
        )
    return int(raw)


def generated_at() -> str:
    """ISO-8601 UTC timestamp: ``SOURCE_DATE_EPOCH`` when set (reproducible builds), else now."""
    epoch = source_date_epoch()
    if epoch is None:
        return dt.datetime.now(tz=dt.UTC).replace(microsecond=0).isoformat()
    return dt.datetime.fromtimestamp(epoch, tz=dt.UTC).isoformat()


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
