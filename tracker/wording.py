"""What a match is, in words for people: the kind of copy and one sentence on how much was
copied, the same in the admin, the evidence report and the takedown notice; and a line on
what each channel score measures, for the technical details.

A translated copy (a page in the other language, fingerprint.engine.judge_translation) is
told in aligned sentences rather than copied characters: its scores carry "chapter_sentences",
and its evidence spans are sentence pairs (the original's beside the page's)."""
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
    # a translated copy (fingerprint.engine.judge_translation)
    "aligned_sentences": "sentences of the chapter aligned with a sentence of the page in the other language",
    "chapter_sentences": "sentences in the chapter",
    "page_sentences_aligned": "sentences of the page aligned with a sentence of the chapter",
    "page_sentences": "sentences on the page",
    "anchor_pairs": "sentence pairs that share names, numbers or dictionary words: the fixed points of the alignment",
    "translation": "share of the chapter's text in aligned sentences; the coverage above",
    "translation_page": "share of the page's text in aligned sentences; the page share above",
    "alignment_score": "strength of the chain of aligned sentences (higher is surer); a copy needs a chain, not "
                       "scattered pairs",
}

# Languages in words: a translated copy names them, never by code.
LANGUAGES = {"zh": "Chinese", "en": "English"}


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


def is_translation(scores: Mapping[str, Any] | None) -> bool:
    """Whether a match's scores are those of a translated copy (they count the chapter's sentences)."""
    return bool(scores) and "chapter_sentences" in scores


def language_name(code: str) -> str:
    """"en" -> "English", "zh" -> "Chinese"; "" for a language not known."""
    return LANGUAGES.get(code, "")


def other_language(code: str) -> str:
    """The language a translated copy is in, given the original's: "zh" -> "en", "en" -> "zh"."""
    return {"zh": "en", "en": "zh"}.get(code, "")


def page_language(page_text: str | None, original_text: str | None = None) -> str:
    """The code of the language a translated page is in: the page's own, or else the other of the
    original's (a page too short to tell, or no longer stored); "" when neither text tells."""
    from fingerprint.normalize import normalize
    from fingerprint.translation import language_of

    if page_text:
        found = language_of(normalize(page_text))
        if found:
            return found
    return other_language(language_of(normalize(original_text))) if original_text else ""


def _with_article(words: str) -> str:
    """"English translation" -> "an English translation"."""
    return ("an " if words[:1].lower() in "aeiou" else "a ") + words


def _translation(language: str) -> str:
    name = language_name(language)
    return f"{name} translation" if name else "translation"


def aligned_count(scores: Mapping[str, Any]) -> str:
    """"212 of 230 sentences aligned" from a translated match's scores."""
    aligned, total = int(scores.get("aligned_sentences", 0)), int(scores.get("chapter_sentences", 0))
    return f"{aligned:,} of {count(total, 'sentence')} aligned"


def translation_sentence(scores: Mapping[str, Any], containment: float, page_share: float, language: str = "",
                         place: str = "page") -> str:
    """A translated copy in one sentence, e.g. "English translation of this chapter, 212 of 230
    sentences aligned (92% of the chapter); the page is 97% this chapter." (language: the page's, a code)."""
    what = _translation(language)
    return (f"{what[:1].upper()}{what[1:]} of this chapter, {aligned_count(scores)} "
            f"({share(containment)} of the chapter); the {place} is {share(page_share)} this chapter.")


def notice_translation(scores: Mapping[str, Any], containment: float, page_share: float, language: str,
                       chapter: str, work: str) -> str:
    """What a notice says of a translated copy: "the page is an English translation of 第3章
    (《title》): 212 of 230 sentences aligned (92% of the chapter); 97% of the page is this chapter"."""
    return (f"the page is {_with_article(_translation(language))} of {chapter} (《{work}》): "
            f"{aligned_count(scores)} ({share(containment)} of the chapter); "
            f"{share(page_share)} of the page is this chapter.")


def more_pairs(shown: int, total: int) -> str:
    """The line under a cut table of aligned sentences: how many rows are not shown, and where they are."""
    rest = total - shown
    return (f"The first {shown:,} of {count(total, 'aligned pair')} are shown; the other {rest:,} "
            f"{'is' if rest == 1 else 'are'} in the evidence report of the downloadable evidence package.")


def copy_sentence(containment: float, page_share: float, spans: Iterable[Mapping[str, Any]] = (),
                  place: str = "page", *, scores: Mapping[str, Any] | None = None, language: str = "") -> str:
    """How much of the chapter is on the page and how much of the page it is, e.g.
    "97% of the chapter appears on this page, in 1 passage of 4,760 characters; the page is 100% this chapter."
    place="text" says it of a pasted text ("appears in this text ...; the text is ...").
    With a translated copy's scores, in aligned sentences instead (translation_sentence).
    """
    if is_translation(scores):
        return translation_sentence(scores, containment, page_share, language, place)
    spans = list(spans)
    where = f"{share(containment)} of the chapter appears {'on' if place == 'page' else 'in'} this {place}"
    if spans:
        chars = count(copied_chars(spans), "character")
        where += f", in 1 passage of {chars}" if len(spans) == 1 else f", in {len(spans):,} passages of {chars} in all"
    return f"{where}; the {place} is {share(page_share)} this chapter."


def copy_summary(verdict: str, containment: float, page_share: float, spans: Iterable[Mapping[str, Any]] = (),
                 place: str = "page", *, scores: Mapping[str, Any] | None = None, language: str = "") -> str:
    """The kind of copy and the sentence: "Full copy: 97% of the chapter appears on this page, ...",
    or of a translated copy "Part: English translation of this chapter, 29 of 37 sentences aligned ..."."""
    kind = copy_kind(verdict)
    sentence = copy_sentence(containment, page_share, spans, place, scores=scores, language=language)
    return f"{kind[:1].upper()}{kind[1:]}: {sentence}"


def score_lines(scores: Mapping[str, float]) -> list[dict[str, Any]]:
    """The scores for "Technical details": name, value and what it measures, known ones first."""
    known = [k for k in SCORE_HELP if k in scores]
    rest = sorted(k for k in scores if k not in SCORE_HELP)
    return [{"name": k, "value": scores[k], "help": SCORE_HELP.get(k, "")} for k in known + rest]
