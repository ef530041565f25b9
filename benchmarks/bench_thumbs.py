"""What the prompt evidence's thumbnails cost (data contract, § Prompt evidence and thumbnails):
``searchgen-nb data`` on a release with the workers' memory of the images they made (``MEMO``
of ``searchgen_nb.thumbs``) and without it, as processes, interleaved, median of the per-round
ratios; then ``thumbnail()`` alone on one of the release's images and on 1024×1024 PNGs.

    .venv/bin/python benchmarks/bench_thumbs.py DEMO/release.yml OUT [--rounds 3]
"""

from __future__ import annotations

import argparse
import glob
import io
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

from searchgen_nb.evidence import thumbnail

RUN = "import sys; from searchgen_nb.cli import main; sys.argv[0] = 'searchgen-nb'; main()"
NO_CACHE = (
    "import searchgen_nb.thumbs as t\n"  # the workers, forked, keep nothing
    "t.MEMO = type('Forget', (dict,), {'__setitem__': lambda *a: None})()\n"
)


def data_seconds(code: str, config: str, out: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code, "data", config, "--out", out, "--no-progress"],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def png(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "PNG")
    return buf.getvalue()


def images(config: str) -> dict[str, bytes]:
    """One image of the release, and 1024×1024 PNGs: smooth, textured (a generated image's
    usual weight, ~2.4 MB) and noise (the worst case)."""
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:1024, 0:1024]
    smooth = np.stack([(x // 4) % 256, (y // 4) % 256, ((x + y) // 8) % 256], -1).astype(np.uint8)
    textured = np.clip(smooth + rng.normal(0, 12, smooth.shape), 0, 255).astype(np.uint8)
    noise = rng.integers(0, 256, (1024, 1024, 3), dtype=np.uint8)
    first = sorted(glob.glob(f"{Path(config).parent}/**/*.png", recursive=True))[0]
    return {
        "release image": Path(first).read_bytes(),
        "1024 smooth": png(smooth),
        "1024 textured": png(textured),
        "1024 noise": png(noise),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    ratios = []
    for r in range(args.rounds):
        on = data_seconds(RUN, args.config, args.out)
        off = data_seconds(NO_CACHE + RUN, args.config, args.out)
        ratios.append(off / on)
        print(f"round {r}: cache {on:.2f} s, no cache {off:.2f} s, ratio {off / on:.3f}")
    print(f"data: median ratio no cache / cache {statistics.median(ratios):.3f}")
    for name, data in images(args.config).items():
        n = 200 if name == "release image" else 10
        times = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(n):
                thumbnail(data)
            times.append((time.perf_counter() - start) / n * 1000)
        print(f"thumbnail, {name} ({len(data):,} bytes): {statistics.median(times):.2f} ms")


if __name__ == "__main__":
    main()
