"""Writing artifacts: canonical JSON (UTF-8, sorted keys, no NaN, a final newline: reruns are
byte-identical) and timestamps (data contract, § Artifacts); a folder is published by
:mod:`searchgen_nb.publish`."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
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
