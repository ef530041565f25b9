"""A real-image release for ``bench_images.py``: the synthetic demo with 1024×1024 PNG images.

Usage::

    .venv/bin/python benchmarks/make_images.py --out build/bench/images --models 3
    rm -rf build/bench/images      # ~1.7 MB per image

The demo is written with ``searchgen-nb demo --out OUT/src``; its ``release.yml`` keeps the
first ``--models`` models of the roster (their ``expected`` counts and paper-table values) and
every image of theirs is replaced by a 1024×1024 RGB PNG of about 1.7 MB: one of ``--bases``
pictures made by :func:`picture` (numpy's PCG64 with a fixed seed: sine fields and noise,
saved by Pillow at its default PNG settings), made distinct file by file by a ``tEXt`` chunk
naming the file's number, so that every file has its own sha256 and is decoded in full.
Besides ``release.yml``: ``release-again.yml`` (the same release, ``previous_release`` the
first release's data in ``RUNS/first``; ``--runs``, outside the project, which ``data`` never
writes into) and ``release-off.yml`` (that one with ``evidence: {thumbnails: false}``).
Nothing of the package is imported.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import struct
import subprocess
import sys
import zlib
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import yaml
from PIL import Image

SIZE = 1024


def picture(seed: int) -> bytes:
    """A 1024×1024 RGB PNG of smooth fields and noise (about 1.7 MB), the same for a seed."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    channels = []
    for _ in range(3):
        f = rng.uniform(0.003, 0.03, 3).astype(np.float32)
        phase = rng.uniform(0, 6.28, 2).astype(np.float32)
        centre = rng.uniform(0, SIZE, 2).astype(np.float32)
        channels.append(
            128
            + 70 * np.sin(f[0] * x + phase[0]) * np.cos(f[1] * y + phase[1])
            + 40 * np.sin(f[2] * np.hypot(x - centre[0], y - centre[1]))
        )
    pixels = np.stack(channels, -1) + rng.normal(0, 3.5, (SIZE, SIZE, 3)).astype(np.float32)
    buf = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def distinct(png: bytes, number: int) -> bytes:
    """``png`` with a ``tEXt`` chunk naming ``number`` before its ``IEND``: other bytes, the
    same pixels."""
    data = b"bench-image\x00" + str(number).encode()
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data
    chunk += struct.pack(">I", zlib.crc32(b"tEXt" + data))
    return png[:-12] + chunk + png[-12:]


def image_paths(src: Path, source_ids: list[str]) -> list[Path]:
    """Every image of the kept models, sorted."""
    return sorted(p for p in (src / "results").rglob("image.png") if p.parent.name in source_ids)


def make(out: Path, runs: Path, n_models: int, n_bases: int) -> dict:
    src = out / "src"
    if out.exists():
        shutil.rmtree(out)
    exe = Path(sys.executable).with_name("searchgen-nb")
    subprocess.run([str(exe), "demo", "--out", str(src)], check=True, capture_output=True)
    cfg = yaml.safe_load((src / "release.yml").read_text(encoding="utf-8"))
    kept = list(cfg["models"])[:n_models]
    cfg["models"] = {m: cfg["models"][m] for m in kept}
    cfg["expected"]["n_scored"] = {m: cfg["expected"]["n_scored"][m] for m in kept}
    paper = json.loads((src / "paper_table.json").read_text(encoding="utf-8"))
    (src / "paper_table.json").write_text(json.dumps({m: paper[m] for m in kept}, indent=2))
    (src / "release.yml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    again = {**cfg, "previous_release": str(runs.resolve() / "first")}
    (src / "release-again.yml").write_text(yaml.safe_dump(again, sort_keys=False))
    off = {**again, "evidence": {"thumbnails": False}}
    (src / "release-off.yml").write_text(yaml.safe_dump(off, sort_keys=False))
    with Pool() as pool:
        bases = pool.map(picture, range(n_bases))
    paths = image_paths(src, [cfg["models"][m]["source_id"] for m in kept])
    for n, path in enumerate(paths):
        path.write_bytes(distinct(bases[n % n_bases], n))
    sizes = [p.stat().st_size for p in paths]
    return {
        "images": len(paths),
        "models": kept,
        "bytes": sum(sizes),
        "min_bytes": min(sizes),
        "max_bytes": max(sizes),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("build/bench/images"))
    ap.add_argument("--runs", type=Path, default=Path("/tmp/sgbench/image-runs"))
    ap.add_argument("--models", type=int, default=3, help="the first N models of the demo")
    ap.add_argument("--bases", type=int, default=64, help="distinct pictures")
    args = ap.parse_args()
    print(json.dumps(make(args.out, args.runs, args.models, args.bases)))


if __name__ == "__main__":
    main()
