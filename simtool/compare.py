"""`simtool compare`: how much of A is in B, per channel, with the copied passages."""
from __future__ import annotations

from pathlib import Path

import click

from clikit.cells import json_text
from clikit.common import friendly_errors, quiet_option, show
from fingerprint.engine import EngineConfig, judge, prepare, verdict_reason
from fingerprint.errors import InputError
from fingerprint.image import (
    MAX_DISTANCE,
    MIN_COLOURS,
    SURE_DISTANCE,
    colour_agreement,
    fingerprint_image,
    image_distance,
    images_match,
)
from fingerprint.models import Document
from ocr.pictures import PictureReader, fold_for_ocr, ocr_view, picture_posts
from pagetext.sources import IMAGE_SUFFIXES
from simtool.inputs import load_one


def _excerpt(text: str, start: int, end: int, width: int = 60) -> str:
    s = " ".join(text[start:end].split())
    return s if len(s) <= width else s[: width - 1] + "…"


@click.command("compare")
@click.argument("a", type=str)
@click.argument("b", type=str)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--passages", type=click.IntRange(0), default=10, show_default=True,
              help="How many copied passages to list (text format); all are in JSON.")
@quiet_option
@friendly_errors
def command(a, b, fmt, passages, quiet):
    """Compare two texts, or two images: A is the original, B the page that may copy it.

    Prints each channel's score, a verdict and why, and the copied passages
    with their character offsets in both texts. Verdicts: duplicate (B is
    A, in any order or disguise: each carries at least 80% of the other),
    contains (B carries at least 80% of A, and other text), part (at least
    25% of A), excerpt (less), different (not a copy). For two images
    (.jpg, .png, .gif, .webp, .bmp): the perceptual hashes' distance, the
    colour maps' agreement, and whether B is a copy of A. A text and a picture
    of text (a screenshot of a chapter): the picture is read by OCR and its
    text compared with the text; B may be a folder of pictures, or pictures
    named like parts of one post (ch12-1.png, ch12-2.png), read in order as
    one page.

    \b
    Example:
      simtool compare chapter1.txt reposted.html
      simtool compare chapter1.txt reposted.html --format json
      simtool compare chapter1.txt screenshot.jpg
    """
    if _is_image(a) and _is_image(b):
        _compare_images(a, b, fmt)
        return
    config = EngineConfig()
    da = _picture_page(a, "A", quiet) if _is_pictures(a) else load_one(a, what="A", quiet=quiet)
    db = _picture_page(b, "B", quiet) if _is_pictures(b) else load_one(b, what="B", quiet=quiet)
    ocr = db if db.meta.get("ocr") else da
    pa = prepare(da.key, fold_for_ocr(ocr_view(da).text, ocr), config)
    pb = prepare(db.key, fold_for_ocr(ocr_view(db).text, ocr), config)
    m = judge(pb, pa, config).match
    if fmt == "json":
        click.echo(json_text(m.to_record(), indent=2))
        return
    show(f"A (original): {da.key}  {pa.units} units")
    show(f"B (page):     {db.key}  {pb.units} units")
    click.echo(f"verdict:      {m.verdict}")
    click.echo(f"why:          {verdict_reason(m.containment, m.page_share, m.verdict, config)}")
    click.echo(f"similarity {m.similarity:.3f}   containment (A in B) {m.containment:.3f}   "
               f"page share (B from A) {m.page_share:.3f}")
    sc = m.scores
    if "chapter_sentences" in sc:
        _translation(m, da.text, db.text, pa.language, pb.language, passages)
        return
    click.echo("channels:")
    click.echo(f"  simhash   distance {int(sc['simhash_distance'])} of {pa.simhash.bits} bits "
               f"(near-duplicate at <= {config.simhash_distance})")
    click.echo(f"  minhash   jaccard {sc['minhash_jaccard']:.3f}, containment {sc['minhash_containment']:.3f}")
    click.echo(f"  pinyin    {sc['pinyin']:.3f} of A's initial-profile windows found in B")
    click.echo(f"  winnow    {sc['winnow']:.3f} of A's syllables in copied runs, {sc['winnow_page']:.3f} of B's")
    if not m.spans:
        click.echo("no copied passages")
        return
    click.echo(f"copied passages ({len(m.spans)}, A offsets -> B offsets):")
    for s in sorted(m.spans, key=lambda s: -s.length)[:passages]:
        show(f"  A[{s.original_start}:{s.original_end}] -> B[{s.page_start}:{s.page_end}]  "
             f"{_excerpt(da.text, s.original_start, s.original_end)}")
    if len(m.spans) > passages:
        click.echo(f"  ... {len(m.spans) - passages} more (--passages N, or --format json)")


LANGUAGES = {"zh": "Chinese", "en": "English"}


def _translation(m, a_text: str, b_text: str, a_lang: str, b_lang: str, passages: int) -> None:
    """A and B in different languages: the sentence alignment, and the aligned pairs."""
    sc = m.scores
    a_name, b_name = LANGUAGES.get(a_lang, a_lang), LANGUAGES.get(b_lang, b_lang)
    if m.verdict == "different":
        click.echo(f"translation: B ({b_name}) does not translate A ({a_name}): "
                   f"{int(sc['anchor_pairs'])} sentence pairs share words, too few or out of order")
        return
    click.echo(f"translation: B is {'an' if b_name[0] in 'AEIOU' else 'a'} {b_name} translation of A ({a_name}): "
               f"{int(sc['aligned_sentences'])} of {int(sc['chapter_sentences'])} sentences of A aligned, "
               f"{int(sc['page_sentences_aligned'])} of {int(sc['page_sentences'])} of B")
    click.echo(f"aligned sentences ({len(m.spans)} pairs, A offsets -> B offsets):")
    for s in m.spans[:passages]:
        show(f"  A[{s.original_start}:{s.original_end}] {_excerpt(a_text, s.original_start, s.original_end, 30)}")
        show(f"    -> B[{s.page_start}:{s.page_end}] {_excerpt(b_text, s.page_start, s.page_end, 70)}")
    if len(m.spans) > passages:
        click.echo(f"  ... {len(m.spans) - passages} more (--passages N, or --format json)")


def _is_pictures(path: str) -> bool:
    """A picture file, or a folder holding pictures and no text files."""
    p = Path(path)
    if p.is_dir():
        files = [f for f in p.rglob("*") if f.is_file() and not f.name.startswith(".")]
        return bool(files) and all(f.suffix.lower() in IMAGE_SUFFIXES for f in files)
    return _is_image(path)


def _picture_page(path: str, label: str, quiet: bool) -> Document:
    """The picture(s) at `path` read by OCR as one page, or an error saying why they give no text."""
    posts = picture_posts([path], join="all")
    if not Path(path).exists():
        raise InputError(f"no such file or directory: {path}; check the path")
    got = PictureReader().read(posts[0])
    if isinstance(got, str):
        raise InputError(f"{label} ({path}): {got}; compare a picture that shows text, or two images")
    if not quiet:
        click.echo(f"{label}: {path} read by OCR ({got.meta['ocr']}): {got.meta['characters']} characters "
                   f"in {got.meta['seconds']:.1f} s", err=True)
    return got


def _is_image(path: str) -> bool:
    p = Path(path)
    return p.suffix.lower() in IMAGE_SUFFIXES


def _compare_images(a: str, b: str, fmt: str) -> None:
    """Two images: their perceptual hashes' distance, their colour maps' agreement, and whether B copies A."""
    prints = []
    for label, path in (("A", a), ("B", b)):
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise InputError(f"cannot read {label} ({path}): {e.strerror}") from None
        prints.append(fingerprint_image(data, name=f"{label} ({path})"))
    fa, fb = prints
    d, colours, same = image_distance(fa, fb), colour_agreement(fa, fb), images_match(fb, fa)
    if fmt == "json":
        click.echo(json_text({"a": a, "b": b, "verdict": "image" if same else "different", "image_distance": d,
                              "colour_agreement": round(colours, 4), "a_fingerprint": fa.to_dict(),
                              "b_fingerprint": fb.to_dict()}, indent=2))
        return
    show(f"A (original): {a}  {fa.width} x {fa.height}")
    show(f"B (page):     {b}  {fb.width} x {fb.height}")
    click.echo(f"verdict:      {'image copy' if same else 'different'}")
    click.echo(f"perceptual hash distance {d} of 64 bits (a copy at <= {SURE_DISTANCE}, or <= {MAX_DISTANCE} "
               f"with the colours agreeing)")
    click.echo(f"colour map   {colours:.0%} of the {len(fa.colours)} blocks agree (at least {MIN_COLOURS:.0%})")
