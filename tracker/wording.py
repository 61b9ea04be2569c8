"""What a match is, in words for people: the kind of copy and one sentence on how much was
copied, the same in the admin, the evidence report and the takedown notice; and a line on
what each channel score measures, for the technical details."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# The stored verdicts (fingerprint.engine.VERDICTS) as people name them.
FULL_COPY, PART, EXCERPT = "full copy", "part", "excerpt"
KINDS = {"duplicate": FULL_COPY, "contains": FULL_COPY, "part": PART, "excerpt": EXCERPT}

# One line per channel score (fingerprint.engine.judge, fingerprint.track); counts first.
SCORE_HELP = {
    "longest_run": "the longest stretch of the chapter found unbroken on the page, in characters after normalising",
    "candidate_channels": "how many fingerprint indexes proposed this chapter for the page",
    "simhash_distance": "bits that differ between the two Simhash fingerprints (of 64); 3 or fewer is a near-duplicate",
    "simhash": "Simhash agreement, 1 minus the differing bits over 64",
    "minhash_jaccard": "estimated share of word shingles the two texts have in common (MinHash)",
    "minhash_containment": "estimated share of the chapter's word shingles found on the page (MinHash)",
    "pinyin": "share of the chapter's pinyin-initial windows found on the page; survives homophones",
    "winnow": "share of the chapter covered by shared passages (winnowing); the coverage above",
    "winnow_page": "share of the page covered by shared passages (winnowing); the page share above",
}


def copy_kind(verdict: str) -> str:
    """duplicate/contains -> "full copy", part -> "part", excerpt -> "excerpt"; else the verdict."""
    return KINDS.get(verdict, verdict)


def share(value: float) -> str:
    """0.973 -> "97%"; a trace stays visible (0.004 -> "under 1%") and only a whole is "100%"."""
    if value <= 0:
        return "0%"
    if value < 0.005:
        return "under 1%"
    p = round(value * 100)
    return f"{min(p, 99) if value < 1 else p}%"


def count(n: int, one: str, many: str | None = None) -> str:
    """4760, "character" -> "4,760 characters"."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def copied_chars(spans: Iterable[Mapping[str, Any]]) -> int:
    """Characters of the original inside the passages, overlaps counted once."""
    covered, end = 0, -1
    for start, stop in sorted((int(s.get("original_start", 0)), int(s.get("original_end", 0))) for s in spans):
        start = max(start, end)
        if stop > start:
            covered += stop - start
            end = stop
    return covered


def copy_sentence(containment: float, page_share: float, spans: Iterable[Mapping[str, Any]] = (),
                  place: str = "page") -> str:
    """How much of the chapter is on the page and how much of the page it is, e.g.
    "97% of the chapter appears on this page, in 1 passage of 4,760 characters; the page is 100% this chapter."
    place="text" says it of a pasted text ("appears in this text ...; the text is ...").
    """
    spans = list(spans)
    where = f"{share(containment)} of the chapter appears {'on' if place == 'page' else 'in'} this {place}"
    if spans:
        chars = count(copied_chars(spans), "character")
        where += f", in 1 passage of {chars}" if len(spans) == 1 else f", in {len(spans):,} passages of {chars} in all"
    return f"{where}; the {place} is {share(page_share)} this chapter."


def copy_summary(verdict: str, containment: float, page_share: float, spans: Iterable[Mapping[str, Any]] = (),
                 place: str = "page") -> str:
    """The kind of copy and the sentence: "Full copy: 97% of the chapter appears on this page, ..."."""
    kind = copy_kind(verdict)
    return f"{kind[:1].upper()}{kind[1:]}: {copy_sentence(containment, page_share, spans, place)}"


def score_lines(scores: Mapping[str, float]) -> list[dict[str, Any]]:
    """The scores for "Technical details": name, value and what it measures, known ones first."""
    known = [k for k in SCORE_HELP if k in scores]
    rest = sorted(k for k in scores if k not in SCORE_HELP)
    return [{"name": k, "value": scores[k], "help": SCORE_HELP.get(k, "")} for k in known + rest]
