"""Characters OCR confuses by shape, folded to one representative per group.

    fold("他己经走了") == fold("他已经走了") == "他己经走了"

A misread look-alike (已 read as 己, 末 as 未) would otherwise break every k-gram it
is in, and a copied passage would look less copied than it is. Folding both sides, the
registered text and the text read from a picture, with the same table makes such a
misreading cost nothing. The table is `lookalike.txt` beside this module: each line a
group whose first character is the representative, and where the group comes from
(well-known shape confusions, and the substitutions the engines made on rendered text
in bench/ocr_engines.py). Folding is one `str.translate`: linear in the text.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

from fingerprint.errors import InputError

TABLE = "lookalike.txt"


def parse(text: str, where: str = TABLE) -> dict[str, str]:
    """{character: representative} from the table's text; a character in two groups is an error."""
    mapping: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        group = line.split("\t", 1)[0].strip()
        if len(group) < 2:
            raise InputError(f"{where}:{number}: a group needs at least two characters, got {group!r}")
        for ch in group:
            if ch in mapping:
                raise InputError(f"{where}:{number}: {ch!r} is already in the group of {mapping[ch]!r}; "
                                 "merge the two groups into one line")
            mapping[ch] = group[0]
    return mapping


@lru_cache(maxsize=1)
def table() -> dict[str, str]:
    """The shipped table, {character: representative}."""
    return parse(resources.files(__package__).joinpath(TABLE).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _translation() -> dict[int, int]:
    return {ord(k): ord(v) for k, v in table().items() if k != v}


def canonical(ch: str) -> str:
    """The representative of `ch`'s look-alike group (`ch` itself when it has none)."""
    return table().get(ch, ch)


def fold(text: str) -> str:
    """`text` with every look-alike character replaced by its group's representative."""
    return text.translate(_translation())
