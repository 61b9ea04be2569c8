"""Image fingerprints (fingerprint.image): transformed covers are found, other covers are not,
and no file makes the reader fail with anything but a clear error."""
from __future__ import annotations

import io
import json
import random

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.images import cover, encode, transforms
from fingerprint.errors import InputError
from fingerprint.image import (
    GRID,
    MAX_PIXELS,
    colour_map,
    fingerprint_image,
    image_distance,
    images_match,
    is_image,
    load_image,
)
from simtool import main


@pytest.fixture(scope="module")
def covers():
    rng = random.Random(21)
    out = []
    for _ in range(6):
        img, palette = cover(rng)
        look, _ = cover(rng, palette=palette)
        out.append((img, look))
    return out


def test_every_transformation_of_a_cover_matches_it(covers):
    rng = random.Random(1)
    for img, _ in covers:
        original = fingerprint_image(encode(img))
        for kind, t in transforms(img, rng).items():
            copy = fingerprint_image(encode(t, "JPEG", quality=85))
            if kind == "half + JPEG 40 + watermark":
                continue  # the hardest, at 0.95 in the benchmark: not asserted one by one
            assert images_match(copy, original), (kind, image_distance(copy, original))


def test_a_look_alike_or_another_cover_does_not_match(covers):
    prints = [(fingerprint_image(encode(img)), fingerprint_image(encode(look))) for img, look in covers]
    for i, (a, look) in enumerate(prints):
        assert not images_match(look, a), image_distance(look, a)
        for j, (b, _) in enumerate(prints):
            if i != j:
                assert not images_match(a, b)


def test_the_colour_map_is_a_letter_per_block_of_the_dominant_colour():
    from PIL import Image

    img = Image.new("RGB", (80, 80), (250, 10, 10))  # red: r above half, g and b below: 0b100
    img.paste((10, 10, 250), (0, 0, 40, 80))  # the left half blue: 0b001
    m = colour_map(img)
    assert len(m) == GRID * GRID
    assert m[0] == "b" and m[GRID - 1] == "e"


def test_transparency_orientation_and_frames_are_read_as_a_reader_sees_them():
    from PIL import Image

    rgba = Image.new("RGBA", (40, 30), (0, 0, 0, 0))
    img = load_image(encode(rgba))
    assert img.mode == "RGB" and img.getpixel((5, 5)) == (255, 255, 255)  # transparent is white, not black
    frames = [Image.new("P", (20, 20), c) for c in (1, 2)]
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:])
    assert load_image(buf.getvalue()).size == (20, 20)


def test_a_huge_or_broken_image_is_a_clear_error():
    import struct
    import zlib

    def png_header(w, h):
        ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"") + chunk(b"IEND", b"")

    with pytest.raises(InputError, match="pixels"):
        load_image(png_header(100_000, 100_000), "huge.png")  # refused before any pixel is decoded
    assert 100_000 * 100_000 > MAX_PIXELS
    with pytest.raises(InputError, match="image"):
        load_image(b"\x89PNG\r\n\x1a\nnot really", "broken.png")
    with pytest.raises(InputError, match="format"):
        load_image(b"plain text", "notes.png")



def test_a_long_screenshot_within_the_bound_opens_without_a_warning():
    """1,100 x 20,000 pixels (a chapter as one screenshot) is within MAX_PIXELS: no bomb warning."""
    import warnings

    from PIL import Image

    out = io.BytesIO()
    Image.new("L", (1_100, 20_000), 255).save(out, "PNG")
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        assert load_image(out.getvalue(), "long.png").size == (1_100, 20_000)

@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2048))
def test_any_bytes_give_a_fingerprint_or_an_input_error(data):
    try:
        fingerprint_image(data)
    except InputError:
        pass
    assert is_image(data) in (True, False)


def test_simtool_track_and_compare_take_images(tmp_path, covers):
    (tmp_path / "covers").mkdir()
    (tmp_path / "pages").mkdir()
    rng = random.Random(5)
    for i, (img, look) in enumerate(covers[:3]):
        (tmp_path / "covers" / f"c{i}.png").write_bytes(encode(img))
        t = transforms(img, rng)
        (tmp_path / "pages" / f"c{i}-cropped.jpg").write_bytes(encode(t["cropped 4% on every side"], "JPEG"))
        (tmp_path / "pages" / f"look{i}.png").write_bytes(encode(look))
    (tmp_path / "pages" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    r = CliRunner().invoke(main, ["track", str(tmp_path / "covers"), str(tmp_path / "pages"), "-q"])
    assert r.exit_code == 0, r.output
    found = {(rec["page"], rec["original"]) for rec in map(json.loads, r.output.splitlines())}
    assert found == {(f"c{i}-cropped", f"c{i}") for i in range(3)}
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "covers" / "c0.png"),
                                  str(tmp_path / "pages" / "c0-cropped.jpg"), "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.output)["verdict"] == "image"
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "covers" / "c0.png"), str(tmp_path / "pages" / "look0.png")])
    assert r.exit_code == 0 and "verdict:      different" in r.output


# ---- the index of registered images ---------------------------------------------------

def test_the_index_finds_each_copy_nearest_first_and_forgets_removed_images(covers):
    from fingerprint.image import ImageFingerprint
    from fingerprint.image_index import ImageIndex

    prints = {f"c{i}": fingerprint_image(encode(img)) for i, (img, _) in enumerate(covers)}
    index = ImageIndex(prints.items())
    assert len(index) == len(covers) and "c0" in index
    rng = random.Random(4)
    img = covers[2][0]
    copy = fingerprint_image(encode(transforms(img, rng)["text watermark"], "JPEG", quality=80))
    hits = index.query(copy)
    assert [h.key for h in hits] == ["c2"] and hits[0].distance == image_distance(copy, prints["c2"])
    assert 0 < hits[0].colour_agreement <= 1
    assert index.query(fingerprint_image(encode(covers[2][1]))) == []  # its look-alike: nothing
    index.add("c2-again", prints["c2"])  # two registered images the copy is near: both, nearest first
    assert [h.key for h in index.query(prints["c2"])] == ["c2", "c2-again"]
    index.remove("c2")
    index.remove("never-there")
    assert [h.key for h in index.query(copy)] == ["c2-again"]
    index.clear()
    assert len(index) == 0 and index.query(copy) == [] and len(index.distances(copy)) == 0
    again = ImageFingerprint.from_dict(json.loads(json.dumps(prints["c1"].to_dict())))
    assert again == prints["c1"]


def test_a_fingerprint_of_another_grid_refuses_to_load():
    from fingerprint.image import ImageFingerprint

    d = {"phash": "0" * 16, "centre": "0" * 16, "colours": "a" * 16, "width": 1, "height": 1, "grid": 4}
    with pytest.raises(ValueError, match="fingerprint the image again"):
        ImageFingerprint.from_dict(d)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=20), st.integers(0, 2**64 - 1))
def test_index_distances_are_the_pairwise_minimum(hashes, query):
    from fingerprint.image import ImageFingerprint, image_distance
    from fingerprint.image_index import ImageIndex

    def fp(h):
        return ImageFingerprint(phash=h, centre=h ^ 0xFF, colours="a" * 64, width=1, height=1)

    index = ImageIndex((str(i), fp(h)) for i, h in enumerate(hashes))
    assert index.distances(fp(query)).tolist() == [image_distance(fp(query), fp(h)) for h in hashes]


def test_thumbnails_are_drawn_anew_as_png(covers):
    from fingerprint.image import media_type, thumbnail

    data = encode(covers[0][0], "JPEG", quality=90) + b"<script>alert(1)</script>"  # trailing bytes a browser might read
    small = thumbnail(data, side=120)
    assert media_type(small) == "image/png" and b"<script>" not in small
    from PIL import Image

    assert max(Image.open(io.BytesIO(small)).size) == 120
    with pytest.raises(InputError):
        thumbnail(b"<html>not an image</html>")
