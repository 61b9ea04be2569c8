"""Image fingerprints: covers and illustrations that pirate pages carry.

Two fingerprints of one image, both on its pixels as a reader sees them (EXIF
orientation applied, the first frame of an animation, transparency on white):

- the colour-level map of the semantic-fingerprint seed: the image cut into
  GRID x GRID blocks, each block's dominant colour among 8 (red, green and blue
  each above or below half), written as one letter per block;
- perceptual hashes (pHash, from imagehash: the low frequencies of the DCT of a
  32x32 grey image, 64 bits) of the whole image and of its centre (an inset of
  CENTRE_INSET on each side), so that a copy cropped by a few percent still lands
  near one of them.

Two images match when the smallest Hamming distance between their perceptual
hashes (whole against whole, centre against centre, and each against the other)
is at most MAX_DISTANCE and their colour maps agree on at least MIN_COLOURS of
the blocks; a tighter distance (SURE_DISTANCE) is enough alone, since a re-coloured
copy keeps its pHash but not its colours. Decoding is total: a file Pillow cannot
read, or one larger than MAX_PIXELS, is an InputError that says so.
"""
from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import numpy as np

from fingerprint.errors import InputError

__all__ = ["GRID", "MAX_PIXELS", "ImageFingerprint", "fingerprint_image", "image_distance", "images_match",
           "is_image", "load_image", "media_type"]

GRID = 8  # blocks per side of the colour-level map
CENTRE_INSET = 0.08  # share cut from each side for the centre hash
MAX_PIXELS = 40_000_000  # about a 6,300 x 6,300 image; bigger is refused before decoding
MAX_DISTANCE = 12  # of 64 bits: a match when the colour maps agree too
SURE_DISTANCE = 6  # of 64 bits: a match on its own
MIN_COLOURS = 0.6  # share of the colour-map blocks that agree
LETTERS = "abcdefgh"
_TYPES = ((b"\xff\xd8\xff", "image/jpeg"), (b"\x89PNG\r\n\x1a\n", "image/png"), (b"GIF87a", "image/gif"),
          (b"GIF89a", "image/gif"), (b"BM", "image/bmp"))
_MAGIC = tuple(magic for magic, _ in _TYPES)


def is_image(data: bytes) -> bool:
    """Whether the bytes start like an image file (JPEG, PNG, GIF, BMP, WebP)."""
    return data.startswith(_MAGIC) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def media_type(data: bytes) -> str:
    """The image's media type by its first bytes ("image/png"), or "" when it is not an image this reads."""
    for magic, kind in _TYPES:
        if data.startswith(magic):
            return kind
    return "image/webp" if data[:4] == b"RIFF" and data[8:12] == b"WEBP" else ""


def thumbnail(data: bytes, side: int = 480, name: str = "the image") -> bytes:
    """The image drawn anew as a PNG at most `side` pixels on its longer side: what a browser is
    shown of a crawled image, so that no byte of the file as served (a polyglot, a script in
    its metadata) reaches it. InputError when it cannot be read."""
    from PIL import Image

    img = load_image(data, name)
    img.thumbnail((side, side), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    img.save(out, "PNG", optimize=True)
    return out.getvalue()


def pillow_bounds() -> None:
    """Pillow's decompression-bomb limit at MAX_PIXELS, its warning silenced: whoever opens an image
    checks its size against the bound before decoding and refuses it in words, and Pillow still
    refuses outright twice the bound. A picture within the bound (a long screenshot) opens quietly."""
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)


def load_image(data: bytes, name: str = "the image"):
    """The image as RGB pixels; InputError naming the problem when it cannot be read."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    pillow_bounds()
    try:
        img = Image.open(io.BytesIO(data))
        w, h = img.size
        if w * h > MAX_PIXELS:
            raise InputError(f"{name} is {w} x {h}: more than {MAX_PIXELS:,} pixels; scale it down first")
        img.seek(0)  # the first frame of an animation
        img = ImageOps.exif_transpose(img)
        if img.mode in ("RGBA", "LA", "P", "PA"):
            rgba = img.convert("RGBA")
            white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
            img = Image.alpha_composite(white, rgba)
        return img.convert("RGB")
    except InputError:
        raise
    except Image.DecompressionBombError:  # Pillow's own check, on the size in the header
        raise InputError(f"{name} has more than {MAX_PIXELS:,} pixels: scale it down first") from None
    except UnidentifiedImageError:
        raise InputError(f"{name} is not in an image format that can be read; "
                         "give a JPEG, PNG, GIF, WebP or BMP file") from None
    except (OSError, ValueError, SyntaxError, EOFError) as e:
        raise InputError(f"{name} is a damaged or truncated image ({type(e).__name__}: {str(e)[:120]}); "
                         "give a JPEG, PNG, GIF, WebP or BMP file that opens") from None


@dataclass(frozen=True)
class ImageFingerprint:
    phash: int  # 64-bit pHash of the whole image
    centre: int  # 64-bit pHash of its centre
    colours: str  # GRID * GRID letters, one per block
    width: int
    height: int

    def to_dict(self) -> dict:
        return {"phash": format(self.phash, "016x"), "centre": format(self.centre, "016x"),
                "colours": self.colours, "width": self.width, "height": self.height, "grid": GRID}

    @classmethod
    def from_dict(cls, d: dict) -> ImageFingerprint:
        """The fingerprint `to_dict` wrote; ValueError when it was made another way (another grid)."""
        if int(d.get("grid", GRID)) != GRID or len(d.get("colours", "")) != GRID * GRID:
            raise ValueError(f"an image fingerprint made with a {d.get('grid')}-block grid cannot be compared "
                             f"with this one's {GRID}; fingerprint the image again")
        return cls(phash=int(d["phash"], 16), centre=int(d["centre"], 16), colours=str(d["colours"]),
                   width=int(d["width"]), height=int(d["height"]))


def _phash(img) -> int:
    import imagehash

    bits = imagehash.phash(img).hash.flatten()
    return int("".join("1" if b else "0" for b in bits), 2)


def colour_map(img, grid: int = GRID) -> str:
    """The seed's colour-level map: each block's most frequent colour among 8, a letter per block."""
    from PIL import Image

    side = grid * 8
    a = np.asarray(img.resize((side, side), Image.Resampling.BILINEAR), dtype=np.uint8)
    q = ((a[..., 0] >= 128).astype(np.int64) << 2) | ((a[..., 1] >= 128) << 1) | (a[..., 2] >= 128)
    counts = np.eye(8, dtype=np.int64)[q].reshape(grid, 8, grid, 8, 8).sum(axis=(1, 3))
    return "".join(LETTERS[i] for i in counts.argmax(axis=2).ravel().tolist())


def fingerprint_image(data: bytes, name: str = "the image") -> ImageFingerprint:
    img = load_image(data, name)
    w, h = img.size
    dx, dy = int(w * CENTRE_INSET), int(h * CENTRE_INSET)
    centre = img.crop((dx, dy, max(dx + 1, w - dx), max(dy + 1, h - dy)))
    return ImageFingerprint(phash=_phash(img), centre=_phash(centre), colours=colour_map(img), width=w, height=h)


def image_distance(a: ImageFingerprint, b: ImageFingerprint) -> int:
    """The smallest Hamming distance among the pairs of their perceptual hashes."""
    return min(bin(x ^ y).count("1") for x in (a.phash, a.centre) for y in (b.phash, b.centre))


def colour_agreement(a: ImageFingerprint, b: ImageFingerprint) -> float:
    return sum(x == y for x, y in zip(a.colours, b.colours)) / max(1, len(a.colours))


def images_match(a: ImageFingerprint, b: ImageFingerprint) -> bool:
    d = image_distance(a, b)
    return d <= SURE_DISTANCE or (d <= MAX_DISTANCE and colour_agreement(a, b) >= MIN_COLOURS)

