"""The book's total size (data contract, § Prompt evidence and thumbnails): a built book's bytes
by part, then the thumbnail and preview of photo-like 1024×1024 images (size and time), and from
both an estimate of the book of a release of PAIRS pairs with real images, each distinct.

    .venv/bin/python benchmarks/bench_book_size.py BOOK_HTML_DIR [--pairs 10000] [--images 12]

The photo-like images are made here (smooth colour fields, shapes with soft edges, fine texture
and sensor noise), not real generated images: their PNGs weigh what a generated 1024 px image
usually does (1.5–2.5 MB), and WebP compresses them as it does photographs.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from searchgen_nb.evidence import preview, thumbnail

#: The book's parts: the first folder prefix that matches names a file's part.
PARTS = (
    ("evidence/previews/", "previews"),
    ("evidence/thumbs/", "thumbnails"),
    ("evidence/", "card data (shards, index, texts)"),
    ("book/", "pages"),
    ("_static/", "theme and vendored scripts"),
    ("downloads/", "downloads"),
    ("", "other"),
)


def book_parts(html: Path) -> dict[str, int]:
    """Bytes of the built book by part (:data:`PARTS`)."""
    sizes = dict.fromkeys((name for _, name in PARTS), 0)
    for dirpath, _, files in os.walk(html):
        for f in files:
            rel = (Path(dirpath) / f).relative_to(html).as_posix()
            part = next(name for prefix, name in PARTS if rel.startswith(prefix))
            sizes[part] += (Path(dirpath) / f).stat().st_size
    return sizes


def photo_like(seed: int) -> bytes:
    """A 1024×1024 PNG that compresses like a photograph."""
    rng = np.random.default_rng(seed)

    def field(cells: int) -> np.ndarray:
        small = Image.fromarray(rng.integers(0, 256, (cells, cells, 3), dtype=np.uint8))
        return np.asarray(small.resize((1024, 1024), Image.BICUBIC), dtype=float)

    base = 0.55 * field(3) + 0.3 * field(12) + 0.15 * field(48)
    im = Image.fromarray(np.clip(base, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(im)
    for _ in range(25):
        x, y, w, h = (int(v) for v in rng.integers(0, 1024, 4))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        draw.ellipse([x - w // 4, y - h // 4, x + w // 4, y + h // 4], fill=colour)
    im = im.filter(ImageFilter.GaussianBlur(2))
    grain = field(256) * 0.08 - 10 + rng.normal(0, 3, (1024, 1024, 3))  # texture, sensor noise
    pixels = np.asarray(im, dtype=float) + grain
    buf = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def timed(fn, data: bytes, n: int = 3) -> tuple[bytes, float]:
    """``fn(data)`` and its median time in ms over ``n`` runs."""
    times, out = [], b""
    for _ in range(n):
        start = time.perf_counter()
        out = fn(data)
        times.append((time.perf_counter() - start) * 1000)
    return out, statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("html", type=Path)
    ap.add_argument("--pairs", type=int, default=10_000)
    ap.add_argument("--images", type=int, default=12)
    args = ap.parse_args()
    parts = book_parts(args.html)
    total = sum(parts.values())
    for name, n in parts.items():
        print(f"book: {name}: {n:,} bytes")
    print(f"book: total {total:,} bytes")
    rows = []
    for seed in range(args.images):
        png = photo_like(seed)
        small, t_ms = timed(thumbnail, png)
        big, p_ms = timed(preview, png)
        rows.append((len(png), len(small), t_ms, len(big), p_ms))
    png, thumb, t_ms, prev, p_ms = (statistics.mean(col) for col in zip(*rows))
    print(f"photo-like 1024 px PNG: {png:,.0f} bytes on average ({args.images} images)")
    print(
        f"thumbnail: {thumb:,.0f} bytes, {t_ms:.0f} ms; preview: {prev:,.0f} bytes "
        f"(largest {max(r[3] for r in rows):,}), {p_ms:.0f} ms"
    )
    fixed = total - parts["previews"] - parts["thumbnails"]
    images = args.pairs * (thumb + prev)
    print(
        f"estimate for {args.pairs:,} pairs with distinct real images: the demo's book without "
        f"its images {fixed / 1e6:.1f} MB + {args.pairs:,} × (thumbnail + preview) "
        f"{images / 1e6:.0f} MB = {(fixed + images) / 1e6:.0f} MB"
    )


if __name__ == "__main__":
    main()
