"""Image benchmark: are transformed covers found, and look-alike covers not?

    .venv/bin/python bench/images.py [--covers 60] [--seed 3] [--no-write]

Covers are generated (a seeded mix of gradients, shapes, noise texture and a title in
DejaVu Sans), since the machine has no image corpus. Each cover is registered; the
queries are, per cover, its transformations (resized to half, JPEG at quality 30, cropped
by 4% on one side, cropped by 4% on every side, a text watermark, colours shifted,
contrast raised, and resize + JPEG + watermark together), which must match that cover,
and two negatives: a look-alike (the same background and palette, other shapes and
another title) and an unrelated cover, which must match nothing.

fptrack: fingerprint.image (pHash of the whole image and of its centre, with the
colour-level map). Peer, in the same run: imagehash's plain pHash of the whole image,
a match at Hamming distance <= 10 (the threshold its users commonly take). The table
gives recall per transformation and false matches on the negatives, and images/s of
fingerprinting. Written to bench/out/images-<date>.md.
"""
from __future__ import annotations

import argparse
import io
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import run_cli, write_report
from fingerprint.image import fingerprint_image, images_match

PEER_DISTANCE = 10
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
WORDS = ["Jade", "Moon", "River", "Sword", "Empire", "Ghost", "Dragon", "Silent", "Crimson", "Autumn", "Star",
         "Lotus", "Iron", "Mist", "Phoenix", "Winter", "Shadow", "Golden", "Night", "Storm"]


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.truetype(FONT, size)
    except OSError:
        return ImageFont.load_default()


def cover(rng: random.Random, palette=None, title: str | None = None, shapes_seed: int | None = None):
    """A made-up book cover, 360 x 540."""
    import numpy as np
    from PIL import Image, ImageDraw

    w, h = 360, 540
    palette = palette or [tuple(rng.randrange(256) for _ in range(3)) for _ in range(3)]
    top, bottom, accent = palette
    t = np.linspace(0, 1, h)[:, None, None]
    grad = (np.array(top)[None, None, :] * (1 - t) + np.array(bottom)[None, None, :] * t) * np.ones((1, w, 1))
    noise = np.random.default_rng(rng.randrange(1 << 30)).normal(0, 12, (h, w, 1))
    img = Image.fromarray(np.clip(grad + noise, 0, 255).astype("uint8"))
    draw = ImageDraw.Draw(img)
    srng = random.Random(shapes_seed if shapes_seed is not None else rng.randrange(1 << 30))
    for _ in range(srng.randint(3, 7)):
        x0, y0 = srng.randrange(w), srng.randrange(h)
        x1, y1 = x0 + srng.randint(30, 200), y0 + srng.randint(30, 200)
        colour = tuple(min(255, max(0, c + srng.randint(-60, 60))) for c in accent)
        (draw.ellipse if srng.random() < 0.5 else draw.rectangle)((x0, y0, x1, y1), fill=colour)
    title = title or " ".join(rng.sample(WORDS, 2))
    draw.text((24, 40), title, fill=(255, 255, 255), font=_font(40), stroke_width=2, stroke_fill=(0, 0, 0))
    draw.text((24, h - 60), "A NOVEL", fill=(240, 240, 240), font=_font(22))
    return img, palette


def encode(img, fmt: str = "PNG", **kw) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


def transforms(img, rng: random.Random) -> dict[str, object]:
    from PIL import Image, ImageDraw, ImageEnhance

    w, h = img.size

    def watermark(im):
        im = im.copy()
        d = ImageDraw.Draw(im)
        d.text((im.size[0] // 6, im.size[1] // 2), "www.pirate-books.cc", fill=(255, 255, 255), font=_font(24))
        return im

    def jpeg(im, q):
        return Image.open(io.BytesIO(encode(im, "JPEG", quality=q))).convert("RGB")

    c = int(w * 0.04), int(h * 0.04)
    half = img.resize((w // 2, h // 2), Image.Resampling.LANCZOS)
    return {
        "resized to half": half,
        "JPEG quality 30": jpeg(img, 30),
        "cropped 4% on one side": img.crop((0, 0, w - c[0], h)),
        "cropped 4% on every side": img.crop((c[0], c[1], w - c[0], h - c[1])),
        "text watermark": watermark(img),
        "colours shifted": Image.merge("RGB", [ch.point(lambda v, s=s: min(255, v + s)) for ch, s in
                                               zip(img.split(), (40, -10, 25))]),
        "contrast raised": ImageEnhance.Contrast(img).enhance(1.5),
        "half + JPEG 40 + watermark": jpeg(watermark(half), 40),
    }


def _peer_hash(data: bytes):
    import imagehash
    from PIL import Image

    return imagehash.phash(Image.open(io.BytesIO(data)).convert("RGB"))


def index_table(sizes: list[int], ours_o, peer_o, ours_q, peer_q, rng: random.Random) -> list[str]:
    """Look-up time with n registered images: the real covers among n - covers random fingerprints.
    fptrack: ImageIndex.query (a vectorised popcount over the hashes, then the match rule on the
    near ones). Peer: what imagehash offers, `query_hash - registered_hash` over a list (a Python
    loop), timed on the smallest size only and scaled, since it grows linearly. Each query must
    find the same covers as the brute-force match, at every size."""
    import statistics

    import imagehash
    import numpy as np

    from fingerprint.image import ImageFingerprint
    from fingerprint.image_index import ImageIndex

    out = ["| registered images | fptrack ImageIndex query p50 | p99 | build | imagehash list scan p50 | found as brute force |",
           "|---:|---:|---:|---:|---:|---:|"]
    peer_p50 = None
    for n in sizes:
        filler = max(0, n - len(ours_o))
        nrng = np.random.default_rng(rng.randrange(1 << 30))
        full, centre = (nrng.integers(0, 2**63, size=filler, dtype=np.int64).astype(np.uint64) for _ in range(2))
        t0 = time.perf_counter()
        index = ImageIndex((f"r{i}", ImageFingerprint(phash=int(a), centre=int(b), colours="a" * 64, width=1, height=1))
                           for i, (a, b) in enumerate(zip(full.tolist(), centre.tolist())))
        for i, fp in enumerate(ours_o):
            index.add(f"cover{i}", fp)
        index.query(ours_q[0])  # the arrays are built on the first query
        build = time.perf_counter() - t0
        times, same = [], 0
        for q in ours_q[:200]:
            t0 = time.perf_counter()
            hits = index.query(q)
            times.append(time.perf_counter() - t0)
            want = {f"cover{i}" for i, fo in enumerate(ours_o) if images_match(q, fo)}
            same += {h.key for h in hits if h.key.startswith("cover")} == want
        times.sort()
        p50, p99 = statistics.median(times), times[int(len(times) * 0.99) - 1]
        if peer_p50 is None:  # imagehash: a Python loop over ImageHash objects, timed once at this size
            hashes = [imagehash.hex_to_hash(format(int(h), "016x")) for h in full[:n].tolist()] + list(peer_o)
            ptimes = []
            for q in peer_q[:20]:
                t0 = time.perf_counter()
                [h for h in hashes if q - h <= PEER_DISTANCE]
                ptimes.append(time.perf_counter() - t0)
            peer_p50, peer_n = statistics.median(ptimes), len(hashes)
        peer = peer_p50 * n / peer_n
        out.append(f"| {n:,} | {p50 * 1e3:.2f} ms | {p99 * 1e3:.2f} ms | {build:.1f} s | "
                   f"{peer * 1e3:,.0f} ms{'' if n == peer_n else ' (scaled)'} | {same}/{min(200, len(ours_q))} |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--covers", type=int, default=60)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--index-sizes", default="10000,100000,1000000",
                    help="registered images for the look-up timing (comma-separated; empty: skip it)")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    originals, queries = [], []  # queries: (kind, bytes, index of the cover it copies or None)
    for i in range(args.covers):
        img, palette = cover(rng)
        originals.append(encode(img))
        for kind, t in transforms(img, rng).items():
            queries.append((kind, encode(t), i))
        look, _ = cover(rng, palette=palette, title=" ".join(rng.sample(WORDS, 2)))
        queries.append(("look-alike (same palette, other shapes and title)", encode(look), None))
        other, _ = cover(rng)
        queries.append(("unrelated cover", encode(other), None))

    t0 = time.perf_counter()
    ours_o = [fingerprint_image(b) for b in originals]
    ours_q = [fingerprint_image(b) for _, b, _ in queries]
    ours_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    peer_o = [_peer_hash(b) for b in originals]
    peer_q = [_peer_hash(b) for _, b, _ in queries]
    peer_s = time.perf_counter() - t0
    n_images = len(originals) + len(queries)

    rows: dict[str, list[int]] = {}
    for (kind, _, want), fq, pq in zip(queries, ours_q, peer_q):
        ours = {i for i, fo in enumerate(ours_o) if images_match(fq, fo)}
        peer = {i for i, po in enumerate(peer_o) if pq - po <= PEER_DISTANCE}
        r = rows.setdefault(kind, [0, 0, 0, 0, 0])  # n, ours found, peer found, ours false, peer false
        r[0] += 1
        if want is not None:
            r[1] += want in ours
            r[2] += want in peer
        r[3] += len(ours - {want})
        r[4] += len(peer - {want})
    lines = [f"{len(originals)} generated covers registered, {len(queries)} queries ({n_images} images); "
             f"seed {args.seed}; {time.strftime('%Y-%m-%d')}", "",
             "| query | n | fptrack found | imagehash pHash found | fptrack false matches | pHash false matches |",
             "|---|---:|---:|---:|---:|---:|"]
    tot = [0, 0, 0, 0, 0, 0]
    for kind, (n, of, pf, ofa, pfa) in rows.items():
        positive = not kind.startswith(("look-alike", "unrelated"))
        lines.append(f"| {kind} | {n} | {of / n:.3f} | {pf / n:.3f} | {ofa} | {pfa} |" if positive else
                     f"| {kind} | {n} | – | – | {ofa} | {pfa} |")
        if positive:
            tot[0] += n
            tot[1] += of
            tot[2] += pf
        tot[3] += ofa
        tot[4] += pfa
    lines.append(f"| **all transformed copies** | {tot[0]} | {tot[1] / tot[0]:.3f} | {tot[2] / tot[0]:.3f} | "
                 f"{tot[3]} | {tot[4]} |")
    lines += ["", f"fingerprinting: fptrack {n_images / ours_s:.0f} images/s (two pHashes and the colour map), "
                  f"imagehash pHash {n_images / peer_s:.0f} images/s (one pHash)"]
    if args.index_sizes:
        lines += ["", *index_table([int(n) for n in args.index_sizes.split(",")], ours_o, peer_o, ours_q, peer_q,
                                   random.Random(args.seed))]
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        write_report("images", table)
    return 0


if __name__ == "__main__":
    run_cli(main)
