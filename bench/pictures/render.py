"""Chinese chapter text drawn as pictures, the way reading apps and forums show it.

    from bench.pictures.render import render_chapter, render_textless
    pictures = render_chapter(text, seed=7)          # 1 to 3 pictures of one chapter
    pictures[0].image, pictures[0].text, pictures[0].style

Everything follows from the seed: the same text and seed give the same pixels. A style
picks a font (Noto Sans/Serif CJK, WenQuanYi Zen Hei and Micro Hei, AR PL UKai and
UMing, from Debian's font packages), a size, a theme (light, dark, sepia, eye-care
green), optionally a phone status bar, a reply box, a diagonal semi-transparent site
watermark, a slight rotation (at most 2 degrees) and a JPEG quality (40-90). A chapter
comes as one long picture, or split over 2-3 pictures at line boundaries.

`render_textless` makes the pictures that hold no body text (photo-like noise and
blobs, smooth gradients, a book cover with a title only), for the textness test.

Fonts come from Debian's packages (fonts-noto-cjk, fonts-wqy-zenhei, fonts-wqy-microhei,
fonts-arphic-ukai, fonts-arphic-uming; scripts/system-deps test installs them);
`available_fonts()` lists the ones found, and `MissingFonts` names the packages when
none is.
"""
from __future__ import annotations

import io
import math
import random
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

# (name, file, face name inside a .ttc collection or None for the first face, Debian package)
FONT_FILES = [
    ("noto-sans", "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", "Noto Sans CJK SC", "fonts-noto-cjk"),
    ("noto-serif", "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc", "Noto Serif CJK SC", "fonts-noto-cjk"),
    ("wqy-zenhei", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc", "WenQuanYi Zen Hei", "fonts-wqy-zenhei"),
    ("wqy-microhei", "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "WenQuanYi Micro Hei", "fonts-wqy-microhei"),
    ("ukai", "/usr/share/fonts/truetype/arphic/ukai.ttc", "AR PL UKai CN", "fonts-arphic-ukai"),
    ("uming", "/usr/share/fonts/truetype/arphic/uming.ttc", "AR PL UMing CN", "fonts-arphic-uming"),
]

# background, text, secondary (status bar, reply box) colours
THEMES = {
    "light": ((255, 255, 255), (34, 34, 34), (120, 120, 120)),
    "dark": ((28, 28, 30), (170, 170, 170), (110, 110, 110)),
    "sepia": ((244, 236, 216), (91, 70, 54), (150, 130, 110)),
    "green": ((204, 232, 207), (40, 60, 40), (100, 120, 100)),
}

WATERMARKS = ["笔趣阁 www.biquge.la", "顶点小说 x23us.com", "书友群 123456789", "盗版必究 首发站点"]
CARRIERS = ["中国移动", "中国联通", "中国电信"]
REPLY_HINTS = ["说点什么吧…", "发表你的评论", "写回复"]


class MissingFonts(RuntimeError):
    """No Chinese font of the list is installed."""


@cache
def available_fonts() -> tuple[str, ...]:
    """The names in FONT_FILES whose file is installed."""
    return tuple(name for name, path, _, _ in FONT_FILES if Path(path).is_file())


def require_fonts() -> tuple[str, ...]:
    """available_fonts(), or MissingFonts naming the packages to install."""
    fonts = available_fonts()
    if not fonts:
        packages = " ".join(sorted({pkg for *_, pkg in FONT_FILES}))
        raise MissingFonts(f"no Chinese font is installed; install them with: sudo apt-get install -y {packages} "
                           "(scripts/system-deps test does it)")
    return fonts


@lru_cache(maxsize=64)
def font(name: str, size: int) -> ImageFont.FreeTypeFont:
    """The font called `name` (see FONT_FILES) at `size` pixels, the right face of a collection."""
    for n, path, face, _ in FONT_FILES:  # noqa: B007  (the match's path and face, read after the loop)
        if n == name:
            break
    else:
        raise KeyError(f"unknown font {name!r}; known: {', '.join(n for n, *_ in FONT_FILES)}")
    for index in range(12):
        try:
            f = ImageFont.truetype(path, size, index=index)
        except OSError:
            break
        if f.getname()[0] == face:
            return f
    return ImageFont.truetype(path, size, index=0)


@dataclass(frozen=True)
class Style:
    """How a chapter is drawn; `Style.pick(rng)` draws one at random."""

    font: str = "noto-sans"
    size: int = 40  # pixels per character on a 1080-pixel-wide screen
    theme: str = "light"
    width: int = 1080
    line_gap: float = 0.75  # space between lines, in character heights
    margin: int = 60
    status_bar: bool = True
    reply_box: bool = False
    watermark: str | None = None
    watermark_alpha: int = 40  # 0..255
    rotation: float = 0.0  # degrees, |r| <= 2
    jpeg_quality: int | None = 80  # None keeps the picture lossless
    pages: int = 1  # the chapter over this many pictures
    max_height: int | None = None  # split further so no picture is taller than this

    @classmethod
    def pick(cls, rng: random.Random, fonts: tuple[str, ...] | None = None, **fixed) -> Style:
        """A random style; keyword arguments fix fields instead of drawing them."""
        fonts = fonts or require_fonts()
        drawn = dict(
            font=rng.choice(fonts),
            size=rng.choice([32, 36, 40, 44, 48]),
            theme=rng.choice(list(THEMES)),
            line_gap=rng.choice([0.5, 0.75, 1.0]),
            margin=rng.choice([40, 60, 80]),
            status_bar=rng.random() < 0.7,
            reply_box=rng.random() < 0.4,
            watermark=rng.choice(WATERMARKS) if rng.random() < 0.5 else None,
            watermark_alpha=rng.randint(25, 60),
            rotation=round(rng.uniform(-2.0, 2.0), 2) if rng.random() < 0.5 else 0.0,
            jpeg_quality=rng.randint(40, 90),
            pages=rng.choice([1, 1, 2, 3]),
        )
        drawn.update(fixed)
        return cls(**drawn)


@dataclass
class Picture:
    """One rendered picture: the image, the body text drawn on it (the reference for OCR),
    the boxes of its body lines, and the style."""

    image: Image.Image
    text: str
    lines: list[tuple[str, tuple[int, int, int, int]]] = field(default_factory=list)
    style: Style = field(default_factory=Style)
    kind: str = "chapter"  # chapter, noise, gradient, cover


# Punctuation that must not start a line (moved to the end of the previous one, as apps do).
NO_LINE_START = set("，。、；：？！」』）》〉”’…—,.;:?!)")


def wrap(text: str, fnt: ImageFont.FreeTypeFont, width: int) -> list[str]:
    """Lines of `text` no wider than `width` pixels, paragraphs indented by two spaces
    of full width; one pass over the characters."""
    lines: list[str] = []
    for para in text.split("\n"):
        para = para.strip().replace("\u3000", "")
        if not para:
            continue
        line = "\u3000\u3000"
        used = fnt.getlength(line)
        for ch in para:
            w = fnt.getlength(ch)
            if used + w > width and ch not in NO_LINE_START and line.strip():
                lines.append(line)
                line, used = "", 0.0
            line += ch
            used += w
        if line.strip():
            lines.append(line)
    return lines


def render_chapter(text: str, seed: int, style: Style | None = None, **fixed) -> list[Picture]:
    """The chapter `text` as 1-3 pictures (style.pages), deterministic from `seed`."""
    rng = random.Random(seed)
    style = style or Style.pick(rng, **fixed)
    fnt = font(style.font, style.size)
    lines = wrap(text, fnt, style.width - 2 * style.margin)
    if not lines:
        raise ValueError("no text to draw: the chapter is empty")
    step = round(style.size * (1 + style.line_gap))
    per_page = math.ceil(len(lines) / max(1, style.pages))
    if style.max_height:
        per_page = min(per_page, max(1, (style.max_height - 300) // step))
    pictures = []
    for start in range(0, len(lines), per_page):
        pictures.append(_page(lines[start:start + per_page], style, rng, step))
    return pictures


def _page(lines: list[str], style: Style, rng: random.Random, step: int) -> Picture:
    bg, fg, dim = THEMES[style.theme]
    fnt = font(style.font, style.size)
    top = 90 if style.status_bar else 40
    bottom = 150 if style.reply_box else 50
    height = top + 30 + step * len(lines) + bottom
    image = Image.new("RGB", (style.width, height), bg)
    draw = ImageDraw.Draw(image)
    if style.status_bar:
        _status_bar(draw, style.width, dim, rng)
    y = top + 30
    boxes = []
    for line in lines:
        draw.text((style.margin, y), line, font=fnt, fill=fg)
        x0, y0, x1, y1 = draw.textbbox((style.margin, y), line, font=fnt)
        boxes.append((line.strip("\u3000"), (x0, y0, x1, y1)))
        y += step
    if style.reply_box:
        _reply_box(draw, style.width, height, bg, dim, rng)
    if style.watermark:
        image = _watermark(image, style.watermark, style.watermark_alpha, dim, style.font)
    if style.rotation:
        image = image.rotate(style.rotation, resample=Image.BICUBIC, expand=True, fillcolor=bg)
    if style.jpeg_quality:
        image = jpeg(image, style.jpeg_quality)
    body = "\n".join(text for text, _ in boxes)
    return Picture(image, body, boxes, style)


def _status_bar(draw: ImageDraw.ImageDraw, width: int, colour, rng: random.Random) -> None:
    small = font(available_fonts()[0], 30)
    clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    draw.text((40, 25), clock, font=small, fill=colour)
    draw.text((160, 25), rng.choice(CARRIERS) + " 4G", font=small, fill=colour)
    level = rng.randint(10, 100)
    draw.text((width - 230, 25), f"{level}%", font=small, fill=colour)
    draw.rectangle((width - 120, 30, width - 60, 58), outline=colour, width=3)
    draw.rectangle((width - 116, 34, width - 116 + round(52 * level / 100), 54), fill=colour)
    draw.rectangle((width - 58, 38, width - 53, 50), fill=colour)


def _reply_box(draw: ImageDraw.ImageDraw, width: int, height: int, bg, colour, rng: random.Random) -> None:
    small = font(available_fonts()[0], 32)
    y0 = height - 120
    draw.line((0, y0 - 10, width, y0 - 10), fill=colour, width=2)
    draw.rounded_rectangle((40, y0 + 10, width - 220, y0 + 90), radius=40, outline=colour, width=3)
    draw.text((80, y0 + 30), rng.choice(REPLY_HINTS), font=small, fill=colour)
    draw.ellipse((width - 190, y0 + 15, width - 120, y0 + 85), outline=colour, width=3)
    draw.text((width - 100, y0 + 30), "发送", font=small, fill=colour)


def _watermark(image: Image.Image, mark: str, alpha: int, colour, font_name: str) -> Image.Image:
    """`mark` repeated over the picture on a 30-degree diagonal, `alpha`/255 opaque."""
    fnt = font(font_name, 56)
    tile = Image.new("RGBA", (900, 260), (0, 0, 0, 0))
    ImageDraw.Draw(tile).text((20, 90), mark, font=fnt, fill=(*colour, alpha))
    tile = tile.rotate(30, expand=True, resample=Image.BICUBIC)
    layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
    for y in range(-200, image.height, 700):
        for x in range(-300, image.width, 800):
            layer.paste(tile, (x, y), tile)
    return Image.alpha_composite(image.convert("RGBA"), layer).convert("RGB")


def jpeg(image: Image.Image, quality: int) -> Image.Image:
    """`image` saved as JPEG at `quality` and read back (the blocks and ringing of a repost)."""
    buf = io.BytesIO()
    image.save(buf, "JPEG", quality=quality)
    buf.seek(0)
    out = Image.open(buf)
    out.load()
    return out


def render_textless(kind: str, seed: int, size: tuple[int, int] = (1080, 1920)) -> Picture:
    """A picture with no body text: "noise" (photo-like blobs and grain), "gradient", or
    "cover" (a gradient with a big title and an author line, no body text)."""
    rng = random.Random(seed)
    w, h = size
    a = tuple(rng.randint(0, 255) for _ in range(3))
    b = tuple(rng.randint(0, 255) for _ in range(3))
    grad = Image.linear_gradient("L").resize((w, h))
    if rng.random() < 0.5:
        grad = grad.rotate(90, expand=False)
    image = Image.composite(Image.new("RGB", (w, h), a), Image.new("RGB", (w, h), b), grad)
    title = ""
    if kind == "noise":
        draw = ImageDraw.Draw(image)
        for _ in range(rng.randint(30, 120)):
            x, y = rng.randint(-100, w), rng.randint(-100, h)
            r = rng.randint(20, 300)
            colour = tuple(rng.randint(0, 255) for _ in range(3))
            (draw.ellipse if rng.random() < 0.6 else draw.rectangle)((x, y, x + r, y + rng.randint(20, 300)), fill=colour)
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 6)))
        # numpy's generator, seeded from rng: PIL's effect_noise draws from an unseeded C rand()
        noise = np.random.default_rng(rng.getrandbits(32)).normal(128, rng.uniform(10, 60), (h, w))
        grain = Image.fromarray(np.clip(noise, 0, 255).astype(np.uint8), "L").convert("RGB")
        image = Image.blend(image, grain, rng.uniform(0.1, 0.4))
    elif kind == "cover":
        fonts = require_fonts()
        title = "".join(rng.choice("剑龙凤天下江湖风云月影山河长歌") for _ in range(rng.randint(2, 6)))
        draw = ImageDraw.Draw(image)
        big = font(rng.choice(fonts), rng.randint(110, 180))
        tw = draw.textlength(title, font=big)
        draw.text(((w - tw) / 2, h * rng.uniform(0.15, 0.4)), title, font=big, fill=(255, 255, 255),
                  stroke_width=4, stroke_fill=(0, 0, 0))
        small = font(rng.choice(fonts), 48)
        author = "作者：" + "".join(rng.choice("李王张刘陈杨赵黄周吴") for _ in range(2))
        draw.text(((w - draw.textlength(author, font=small)) / 2, h * 0.75), author, font=small, fill=(250, 250, 250))
    elif kind != "gradient":
        raise ValueError(f"unknown textless kind {kind!r}; choose noise, gradient or cover")
    image = jpeg(image, rng.randint(40, 90))
    return Picture(image, title, [], Style(), kind=kind)
