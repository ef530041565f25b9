"""The ways to one image's thumbnail and preview, side by side (data contract, § Prompt evidence
and thumbnails): CPU milliseconds per image on one process, the ways interleaved, the median of
``--rounds`` rounds, on 1024 px PNGs of a release ``make_images.py`` wrote. Each way decodes,
converts to RGB (or not), makes the 512 px preview then the 160 px thumbnail and encodes both as
WebP (first quality only); ``separate`` makes each from the whole image (Lanczos, WebP method
4). Each way runs in a fresh process of its own each round: in one process, what the ways before
left in the memory allocator changes what a copy of an image costs.

    .venv/bin/python benchmarks/bench_image_ways.py build/bench/images [--images 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import multiprocessing
import statistics
import time
from pathlib import Path

from PIL import Image


def _webp(im, quality: int, method: int) -> int:
    buf = io.BytesIO()
    im.save(buf, "WEBP", quality=quality, method=method)
    return buf.tell()


def separate_way(data: bytes) -> None:
    """A copy of the image per size, each by Lanczos from the whole image, WebP method 4."""
    im = Image.open(io.BytesIO(data)).convert("RGB")
    for px, quality in ((160, 75), (512, 80)):
        small = im.copy()
        small.thumbnail((px, px))
        _webp(small, quality, 4)


def chain(gap: float, method: int, convert: bool = True):
    """The preview from the image, the thumbnail from the preview, at ``gap`` and ``method``."""

    def way(data: bytes) -> None:
        im = Image.open(io.BytesIO(data))
        im.load()
        im = im.convert("RGB") if convert else im
        im.thumbnail((512, 512), reducing_gap=gap)
        _webp(im, 80, method)
        im.thumbnail((160, 160), reducing_gap=gap)
        _webp(im, 75, method)

    return way


WAYS = {
    "floor (bare decode)": lambda d: Image.open(io.BytesIO(d)).load(),
    "separate, gap 2, method 4": separate_way,
    "chain, gap 2, method 4": chain(2.0, 4),
    "chain, gap 1, method 4": chain(1.0, 4),
    "chain, gap 2, method 0": chain(2.0, 0),
    "chain, gap 1, method 0, convert's copy": chain(1.0, 0),
    "chain, gap 1, method 0, no copy (the release's way)": chain(1.0, 0, convert=False),
    "sha256 of the file": lambda d: hashlib.sha256(d).digest(),
}


def timed(name: str, paths: list[Path]) -> float:
    """CPU milliseconds per image of way ``name`` over ``paths`` (read before the clock)."""
    datas = [p.read_bytes() for p in paths]
    start = time.process_time()
    for data in datas:
        WAYS[name](data)
    return (time.process_time() - start) / len(datas) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--images", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    paths = sorted(p for p in (args.folder / "src" / "results").rglob("image.png"))
    big = [p for p in paths if p.stat().st_size > 1 << 20]
    chosen = big[:: max(1, len(big) // args.images)][: args.images]
    times: dict[str, list[float]] = {name: [] for name in WAYS}
    spawn = multiprocessing.get_context("spawn")
    for _ in range(args.rounds):
        for name in WAYS:
            with spawn.Pool(1) as pool:
                times[name].append(pool.apply(timed, (name, chosen)))
    floor = statistics.median(times["floor (bare decode)"])
    for name, values in times.items():
        ms = statistics.median(values)
        print(f"{name:52s} {ms:6.1f} ms  {ms / floor:5.2f}× the decode")


if __name__ == "__main__":
    main()
