"""The thumbnail pass and its cache (data contract, § Prompt evidence and thumbnails): the same
published bytes with the cache off, cold or warm; only changed images decoded again; what
invalidates an entry; a cache folder that is not the tool's is refused."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from factory import make_release, model, prompt, read_artifacts, result
from PIL import Image

from searchgen_nb import evidence, thumbs
from searchgen_nb.config import load_config
from searchgen_nb.errors import ReleaseError
from searchgen_nb.pipeline import run_data

SCORES = {"checklist:0": 2, "rubric:image_quality": 1}


def _image(seed: int, fmt: str = "PNG", mode: str = "RGB", size=(300, 200)) -> bytes:
    im = Image.effect_mandelbrot(size, (-2 + seed / 10, -1.2, 1, 1.2), 40).convert(mode)
    buf = io.BytesIO()
    im.save(buf, fmt)
    return buf.getvalue()


def _release(tmp_path: Path) -> Path:
    """Three prompts × two models: a PNG twice, a JPEG, an RGBA PNG, a BMP, a broken PNG."""
    prompts = [prompt(f"p{i}") for i in range(3)]
    models = {"a": model("Model A"), "b": model("Model B")}
    cfg = make_release(
        tmp_path / "src",
        prompts,
        models,
        {(m, p["sample_id"]): result(SCORES) for m in models for p in prompts},
    )
    images = {
        ("a", 0): _image(1),
        ("a", 1): _image(2, "JPEG"),
        ("a", 2): _image(3, mode="RGBA"),
        ("b", 0): _image(1),
        ("b", 1): b"\x89PNG\r\n\x1a\nbroken",
        ("b", 2): _image(4, "BMP"),
    }
    for (m, i), data in images.items():
        _path(tmp_path, m, i).write_bytes(data)
    return cfg


def _path(tmp_path: Path, m: str, i: int) -> Path:
    return tmp_path / "src" / "results" / "rows" / f"p{i}" / "none" / f"model-{m}" / "image.png"


@pytest.fixture
def decodes(monkeypatch, tmp_path):
    """The number of images decoded since the last call (counted across the worker processes)."""
    log, original = tmp_path / "decodes.log", thumbs.renditions

    def counting(data, *sizes):
        with open(log, "a") as fh:
            fh.write("x")
        return original(data, *sizes)

    monkeypatch.setattr(thumbs, "renditions", counting)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")

    def count() -> int:
        n = len(log.read_text()) if log.exists() else 0
        log.unlink(missing_ok=True)
        return n

    return count


def _data(cfg: Path, out: Path, cache: Path | None = None) -> dict[str, bytes]:
    run_data(load_config(cfg), out, progress=False, cache=cache)
    return read_artifacts(out)


def test_the_same_bytes_with_the_cache_off_cold_or_warm(tmp_path, decodes):
    cfg, cache = _release(tmp_path), tmp_path / "cache"
    off = _data(cfg, tmp_path / "off")
    assert 5 <= decodes() <= 6  # five distinct files (one image twice): once each per worker
    assert _data(cfg, tmp_path / "cold", cache) == off
    assert 5 <= decodes() <= 6
    assert _data(cfg, tmp_path / "warm", cache) == off
    assert decodes() == 1  # only the broken image, which gives no thumbnail, is tried again
    assert len([n for n in off if n.startswith("thumbs/")]) == 4
    assert len([n for n in off if n.startswith("previews/")]) == 4
    entries = sorted(n for n in os.listdir(cache) if n.endswith(".webp"))  # thumbnail, preview
    assert len(entries) == 8 and (cache / ".searchgen-nb").read_text() == "thumbnail cache"


def test_a_changed_image_is_decoded_again_even_with_its_size_and_time_kept(tmp_path, decodes):
    cfg, cache = _release(tmp_path), tmp_path / "cache"
    _data(cfg, tmp_path / "first", cache)
    decodes()
    image = _path(tmp_path, "b", 2)
    st, changed = image.stat(), _image(6, "BMP")
    assert len(changed) == st.st_size and changed != image.read_bytes()
    image.write_bytes(changed)
    os.utime(image, ns=(st.st_atime_ns, st.st_mtime_ns))  # the modification time put back
    warm = _data(cfg, tmp_path / "warm", cache)
    assert decodes() == 2  # the changed image and the broken one
    assert warm == _data(cfg, tmp_path / "off")
    assert len([n for n in warm if n.startswith("thumbs/")]) == 4
    assert len([n for n in os.listdir(cache) if n.endswith(".webp")]) == 8  # the old ones went


def test_an_entry_depends_on_the_image_pillow_and_the_targets(monkeypatch, tmp_path):
    import PIL

    cache = thumbs.ThumbCache(tmp_path)
    keys = cache.keys("ab" * 32)
    assert keys != cache.keys("cd" * 32) and len(keys) == len(evidence.TARGETS)
    monkeypatch.setattr(PIL, "__version__", "0.0.1")
    assert thumbs.ThumbCache(tmp_path).keys("ab" * 32) != keys
    monkeypatch.setattr(thumbs, "TARGETS", (("thumbs", 120, 16_384, (75, 50)),))
    assert thumbs.recipe().endswith("; 120 px 16384 B q75/50")


def test_one_decode_makes_every_size():
    data = _image(1, size=(1024, 768))
    sizes = ((512, 65_536), (evidence.THUMB_PX, evidence.THUMB_BYTES))
    big, small = evidence.renditions(data, sizes)
    assert Image.open(io.BytesIO(big)).size == (512, 384)
    assert small == evidence.thumbnail(data)


def _made(im, px: int, gap: float, method: int, qualities=evidence.WEBP_QUALITIES) -> bytes:
    """What the rule of § Prompt evidence and thumbnails makes of ``im``, step by step."""
    im.thumbnail((px, px), reducing_gap=gap)
    buf = io.BytesIO()
    im.save(buf, "WEBP", quality=qualities[0], method=method)
    return buf.getvalue()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_a_large_image_is_reduced_whole_first_and_its_thumbnail_made_from_its_preview(fmt):
    data = _image(1, fmt, size=(2048, 1536))  # a JPEG is drafted at 1/2 for the 512 px preview
    im = Image.open(io.BytesIO(data))
    im.draft("RGB", (512, 512))
    im = im.convert("RGB")
    assert im.size == ((1024, 768) if fmt == "JPEG" else (2048, 1536))
    preview = _made(im, 512, *evidence.LARGE_WAY, evidence.PREVIEW_QUALITIES)
    assert im.size == (512, 384)
    assert evidence.renditions(data) == [_made(im, 160, *evidence.LARGE_WAY), preview]


def test_an_image_within_the_preview_is_its_preview_and_its_thumbnail_is_resampled_whole():
    data = _image(2, size=(400, 300))  # the preview is the image; the thumbnail Lanczos, gap 2
    im = Image.open(io.BytesIO(data)).convert("RGB")
    preview = _made(im.copy(), 512, 2.0, 4, evidence.PREVIEW_QUALITIES)
    assert evidence.renditions(data) == [_made(im, 160, 2.0, 4), preview]
    assert evidence.LARGE_WAY == (1.0, 0) and evidence.SMALL_WAY == (2.0, 4)


@pytest.mark.parametrize("where", ["foreign", "results"])
def test_a_cache_folder_not_the_tools_is_refused(tmp_path, where):
    cfg = _release(tmp_path)
    cache = tmp_path / "notes" if where == "foreign" else tmp_path / "src" / "results" / "cache"
    cache.mkdir()
    (cache / "todo.txt").write_text("mine")
    why = "without this tool's mark" if where == "foreign" else "lies inside the results_root"
    with pytest.raises(ReleaseError, match=why):
        run_data(load_config(cfg), tmp_path / "out", progress=False, cache=cache)
    assert os.listdir(cache) == ["todo.txt"] and not (tmp_path / "out").exists()


def test_a_release_refuses_a_foreign_build_thumbs(tmp_path):
    from searchgen_nb.book.release import output_root_problems

    cfg, site = load_config(_release(tmp_path)), tmp_path / "site"
    assert output_root_problems(site, cfg) == []
    (site / "build" / "thumbs").mkdir(parents=True)
    (site / "build" / "thumbs" / "scan.png").write_bytes(b"mine")
    (problem,) = output_root_problems(site, cfg)
    assert problem.startswith(f"the thumbnail cache {site / 'build' / 'thumbs'} is a folder")


def test_hard_links_to_one_image_are_read_once_and_give_what_copies_give(monkeypatch, tmp_path):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    cfg = _release(tmp_path)
    copies = _data(cfg, tmp_path / "copies")  # ("b", 0) holds a copy of ("a", 0)'s image
    _path(tmp_path, "b", 0).unlink()
    os.link(_path(tmp_path, "a", 0), _path(tmp_path, "b", 0))
    log, original = tmp_path / "reads.log", thumbs.read_file

    def counting(path, limit):
        with open(log, "a") as fh:
            fh.write(f"{path}\n")
        return original(path, limit)

    monkeypatch.setattr(thumbs, "read_file", counting)
    assert _data(cfg, tmp_path / "links") == copies
    assert len(log.read_text().splitlines()) == 5  # six images, two of them one file


def test_real_path_is_realpath_with_each_folder_resolved_once(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    (tmp_path / "a" / "b" / "f.png").write_bytes(b"x")
    (tmp_path / "out" / "g.png").write_bytes(b"x")
    os.symlink("b", tmp_path / "a" / "lb")  # a relative link to a folder beside it
    os.symlink(tmp_path / "out", tmp_path / "a" / "lo")  # an absolute one, outside
    os.symlink("../lo/g.png", tmp_path / "a" / "b" / "up.png")  # a link through a link
    os.symlink("nowhere.png", tmp_path / "a" / "b" / "dangling.png")
    known: dict[str, str] = {}
    for rel in ("a/b/f.png", "a/lb/f.png", "a/lo/g.png", "a/b/up.png", "a/lb/up.png",
                "a/b/dangling.png", "a/missing/x.png", "a/lb"):  # fmt: skip
        path = str(tmp_path / rel)
        assert thumbs.real_path(path, known) == os.path.realpath(path), rel
    assert known[str(tmp_path / "a" / "lb")] == str(tmp_path / "a" / "b")
