"""`simtool track`: which originals do these pages copy?"""
from __future__ import annotations

import time

import click

from clikit.common import friendly_errors, note, progress, quiet_option, write_records
from clikit.plural import counted
from fingerprint.engine import EngineConfig
from fingerprint.image_index import match_images
from fingerprint.track import Tracker
from ocr.pictures import folded_tracker, ocr_view
from simtool.inputs import join_pictures_option, load_pictures, load_with_images, separate_pictures_option, split_book

COLUMNS = ["page", "original", "verdict", "similarity", "containment", "page_share",
           "simhash_distance", "minhash_jaccard", "pinyin", "spans"]


@click.command("track")
@click.argument("originals", type=str)
@click.argument("pages", type=str, nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "table"]), default="jsonl", show_default=True)
@click.option("--min-containment", type=click.FloatRange(0, 1), default=EngineConfig.min_containment,
              show_default=True, help="Least share of an original a page must hold to count as a copy.")
@click.option("--min-page-share", type=click.FloatRange(0, 1), default=EngineConfig.min_page_share,
              show_default=True, help="...or least share of the page that must come from the original.")
@click.option("--min-copied", type=click.IntRange(1), default=EngineConfig.min_copied, show_default=True,
              help="Least number of copied characters (syllables) for any verdict of copy.")
@click.option("--min-long-run", type=click.IntRange(1), default=EngineConfig.min_long_run, show_default=True,
              help="...or one copied passage at least this long (characters/syllables), whatever its share.")
@join_pictures_option
@separate_pictures_option
@click.option("-v", "--verbose", is_flag=True,
              help="List every skipped input with its reason, and every input with bad characters replaced.")
@quiet_option
@friendly_errors
def command(originals, pages, fmt, min_containment, min_page_share, min_copied, min_long_run, join_pictures, verbose,
            quiet):
    """Find the pages that copy registered originals, with scores and evidence.

    ORIGINALS holds the registered texts: a folder with one chapter per file,
    a JSON Lines file of {"id", "text"} records, or one file; the name of each
    file (without extension) or record id is its key. One file holding a whole
    book is split at its chapter headings (第X章/回/卷, Chapter N) as `fptrack
    add-work` splits it, each chapter keyed BOOK/HEADING. PAGES are the texts that
    may copy them (.txt, .html in any common Chinese encoding, .jsonl, folders,
    or - for standard input). Images (.jpg, .png, .gif, .webp, .bmp) among
    them are matched against the images among the originals (covers and
    illustrations): resized, re-compressed, cropped by a few percent,
    watermarked or re-coloured copies are found, other images are not
    (verdict "image", with the hashes' distance and the colour agreement).
    A picture among the PAGES that holds text (a screenshot of a chapter) is
    also read by OCR (RapidOCR, about 3 s a picture) and its text matched like
    a page's; pictures named like parts of one post (ch12-1.png, ch12-2.png)
    are read in order as one page (see --join-pictures); pictures with no text
    are skipped and counted.

    One record per (page, original) pair judged a copy: similarity,
    containment (share of the original found in the page), page_share (share
    of the page copied), per-channel scores, and the copied spans as
    character offsets into both texts.

    \b
    Example:
      simtool track samples/originals samples/pages --format table
      simtool track chapters.jsonl crawl/ --format jsonl > matches.jsonl
      simtool track chapters/ screenshots/ --format table
    """
    t0 = time.perf_counter()
    config = EngineConfig(min_containment=min_containment, min_page_share=min_page_share, min_copied=min_copied,
                          min_long_run=min_long_run)
    tracker = Tracker(config)
    original_docs, original_images = load_with_images([originals], what="originals", quiet=quiet, verbose=verbose)
    original_docs = split_book(originals, original_docs, quiet=quiet)
    for doc in progress(original_docs, quiet=quiet, desc="indexing originals"):
        tracker.add(doc)
    page_docs, page_images = load_with_images(list(pages), what="pages", quiet=quiet, verbose=verbose)
    picture_docs, _ = load_pictures(list(pages), what="pictures", quiet=quiet, verbose=verbose, join=join_pictures)
    page_docs += picture_docs
    ocr_tracker = folded_tracker(tracker, original_docs) if picture_docs else tracker

    def records():
        for page in progress(page_docs, quiet=quiet, desc="matching pages"):
            matches = ocr_tracker.match(ocr_view(page)) if page.meta.get("ocr") else tracker.match(page)
            for m in matches:
                rec = m.to_record()
                rec.update({k: rec["scores"][k] for k in ("simhash_distance", "minhash_jaccard", "pinyin")})
                if fmt != "jsonl":
                    rec["spans"] = len(m.spans)
                yield rec
        for page, original, distance, colours in match_images(original_images, page_images):
            # An image copy: how near the perceptual hashes are (of 64 bits) and how many colour blocks agree.
            yield {"page": page, "original": original, "verdict": "image", "similarity": round(1 - distance / 64, 4),
                   "channel": "image", "image_distance": distance, "colour_agreement": colours}

    columns = COLUMNS if fmt != "jsonl" else []
    n = write_records(records(), fmt, columns)
    s = tracker.stats
    if ocr_tracker is not tracker:
        s.pages += ocr_tracker.stats.pages
        s.candidates += ocr_tracker.stats.candidates
        s.empty += [k for k in ocr_tracker.stats.empty if k not in s.empty]
    empty = f", {len(s.empty)} empty after removing boilerplate" if s.empty else ""
    images = (f" (and {counted(len(original_images), 'original image')} and "
              f"{counted(len(page_images), 'page image')})") if original_images or page_images else ""
    note(f"{counted(s.originals, 'original')}, {counted(s.pages, 'page')}{empty}{images}: "
         f"{counted(s.candidates, 'candidate pair')} verified, {counted(n, 'copy')} found "
         f"in {time.perf_counter() - t0:.1f} s", quiet=quiet)
