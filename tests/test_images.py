"""Finding a pair's generated image."""

from __future__ import annotations

from searchgen_nb.files import image_name


def test_image_name_is_the_first_sorted_match_case_insensitive(tmp_path):
    for name in ("b.PNG", "a.Png", "c.txt", "0.jpg.bak"):
        (tmp_path / name).write_bytes(b"")
    assert image_name(str(tmp_path), ["*.png"]) == "a.Png"
    assert image_name(str(tmp_path), ["*.TXT", "*.png"]) == "a.Png"
    assert image_name(str(tmp_path), ["*.txt"]) == "c.txt"
    assert image_name(str(tmp_path), ["*.jpg"]) is None
    assert image_name(str(tmp_path), []) is None
    assert image_name(str(tmp_path / "absent"), ["*"]) is None
