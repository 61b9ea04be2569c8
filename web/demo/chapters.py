"""`chapters_from_folder`: the (title, text) chapters of a folder of .txt files, which the sample
pirate site is built from."""
from __future__ import annotations

from pathlib import Path


def chapters_from_folder(path: str | Path) -> list[tuple[str, str]]:
    """Read the chapter .txt files of a folder as (title, text), in the order of the number in their names.

    The title is the first line when it is short enough to be a heading (else the file name);
    the text is the rest of the file.
    """
    from pagetext.encoding import decode_bytes
    from tracker.registry import number_in_name

    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder of chapter .txt files")
    files = [f for f in folder.iterdir() if f.is_file() and f.suffix.lower() == ".txt"]
    if not files:
        raise ValueError(f"no .txt chapter files in {folder}")

    def order(f: Path) -> tuple[bool, int, str]:
        k = number_in_name(f.stem)
        return (k is None, k or 0, f.name)

    out = []
    for f in sorted(files, key=order):
        text, _ = decode_bytes(f.read_bytes())
        text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
        first, _, rest = text.partition("\n")
        if first.strip() and len(first.strip()) <= 40 and rest.strip():
            out.append((first.strip(), rest.strip()))
        else:
            out.append((f.stem, text))
    return out
