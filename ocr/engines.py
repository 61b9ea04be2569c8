"""OCR engines behind one small interface: `Engine.read(image) -> list[Line]`.

Two real backends:

- `RapidOcrEngine`: PaddleOCR's PP-OCRv4 detection and recognition models, run by
  onnxruntime (PyPI `rapidocr-onnxruntime`). The three model files ship inside the
  wheel (`rapidocr_onnxruntime/models/*.onnx`), so nothing is downloaded at run time.
- `TesseractEngine`: Debian's `tesseract` with its `chi_sim` data (packages
  `tesseract-ocr` and `tesseract-ocr-chi-sim`), through `pytesseract`, which runs the
  command in a subprocess.

Both are imported only when an engine is made, so importing this module costs nothing
and needs neither package; a missing one raises `EngineMissing`, whose message names
what to install.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Protocol

from fingerprint.errors import FingerprintError

# Box of a line in the picture's pixels: (left, top, right, bottom), right and bottom exclusive.
Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Line:
    """One line of text an engine read: its text, where it is, and how sure the engine is (0..1)."""

    text: str
    box: Box
    confidence: float

    def moved(self, dx: int, dy: int, scale: float = 1.0) -> Line:
        """The same line with its box scaled by `scale` and then shifted by (dx, dy)."""
        x0, y0, x1, y1 = self.box
        box = (round(x0 * scale) + dx, round(y0 * scale) + dy, round(x1 * scale) + dx, round(y1 * scale) + dy)
        return Line(self.text, box, self.confidence)


class EngineMissing(FingerprintError):
    """An OCR engine's package or program is not installed; the message says what to install."""


class Engine(Protocol):
    """What every OCR backend offers."""

    name: str

    def read(self, image) -> list[Line]:
        """The lines of text in `image` (a PIL image), boxes in its pixels."""
        ...


BOX_THRESH = 0.3


def _rgb(image):
    if image.mode != "RGB":
        image = image.convert("RGB")
    return image


class RapidOcrEngine:
    """PP-OCRv4 (Chinese and English) through `rapidocr_onnxruntime`.

    `threads` is onnxruntime's intra-op thread count; 1 makes a worker use one core, the
    way the benchmark counts pictures per second per core.
    """

    name = "rapidocr"

    def __init__(self, threads: int = 1, *, use_angle_classifier: bool = False):
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError as e:  # the package, or onnxruntime / opencv under it
            raise EngineMissing(
                f"RapidOCR is not installed ({e}); install it with: .venv/bin/pip install 'rapidocr-onnxruntime>=1.3'"
            ) from e
        import numpy as np

        self._np = np
        # Text in screenshots is never upside down; the angle classifier only costs time.
        self._ocr = RapidOCR(intra_op_num_threads=threads, inter_op_num_threads=1, use_cls=use_angle_classifier)
        self._use_cls = use_angle_classifier

    def read(self, image) -> list[Line]:
        np = self._np
        rgb = np.asarray(_rgb(image))
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])  # the models were trained on OpenCV's BGR order
        # box_thresh 0.3 (the package's default is 0.5): a line under a site's watermark scores
        # lower in detection and was dropped whole at 0.5 (measured, docs/ocr.md).
        result, _ = self._ocr(bgr, use_cls=self._use_cls, box_thresh=BOX_THRESH)
        lines = []
        for points, text, score in result or ():
            xs = [p[0] for p in points]
            ys = [p[1] for p in points]
            box = (int(min(xs)), int(min(ys)), int(round(max(xs))), int(round(max(ys))))
            lines.append(Line(str(text), box, float(score)))
        return lines


class TesseractEngine:
    """Debian's Tesseract 5 (LSTM) with `chi_sim`, one subprocess per picture.

    `threads` is passed as OMP_THREAD_LIMIT so one reading uses that many cores.
    Tesseract puts a space between the CJK "words" it finds; those spaces are dropped.
    """

    name = "tesseract"

    def __init__(self, lang: str = "chi_sim", threads: int = 1, *, psm: int = 6):
        try:
            import pytesseract
        except ImportError as e:
            raise EngineMissing(
                "pytesseract is not installed; install it with: .venv/bin/pip install 'pytesseract>=0.3.10'"
            ) from e
        if shutil.which("tesseract") is None:
            raise EngineMissing(
                "the tesseract command is not on PATH; install it with: "
                "sudo apt-get install -y tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-chi-tra "
                "(scripts/system-deps test does it)"
            )
        have = set(pytesseract.get_languages(config=""))
        wanted = set(lang.split("+"))
        if not wanted <= have:
            packages = " ".join(f"tesseract-ocr-{code.replace('_', '-').lower()}" for code in sorted(wanted - have))
            raise EngineMissing(f"tesseract has no {'+'.join(sorted(wanted - have))} data; install it with: "
                                f"sudo apt-get install -y {packages}")
        self._tess = pytesseract
        self.lang = lang
        self.psm = psm
        os.environ["OMP_THREAD_LIMIT"] = str(threads)  # read by the tesseract child at its start

    def read(self, image) -> list[Line]:
        data = self._tess.image_to_data(_rgb(image), lang=self.lang, config=f"--psm {self.psm}",
                                        output_type=self._tess.Output.DICT)
        grouped: dict[tuple[int, int, int], list[int]] = {}
        for i, word in enumerate(data["text"]):
            if word and word.strip() and float(data["conf"][i]) >= 0:
                key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
                grouped.setdefault(key, []).append(i)
        lines = []
        for idx in grouped.values():
            text = _join_words([data["text"][i].strip() for i in idx])
            x0 = min(data["left"][i] for i in idx)
            y0 = min(data["top"][i] for i in idx)
            x1 = max(data["left"][i] + data["width"][i] for i in idx)
            y1 = max(data["top"][i] + data["height"][i] for i in idx)
            conf = sum(float(data["conf"][i]) for i in idx) / len(idx) / 100.0
            lines.append(Line(text, (x0, y0, x1, y1), conf))
        return lines


def _join_words(words: list[str]) -> str:
    """Join Tesseract's words: no space next to a CJK character, one space between Latin words.

    ["他", "说", "OK", "go"] -> "他说OK go"
    """
    out = ""
    for w in words:
        if out and not (_wide(out[-1]) or _wide(w[0])):
            out += " "
        out += w
    return out


def _wide(ch: str) -> bool:
    return ord(ch) >= 0x2E80


ENGINES = {"rapidocr": RapidOcrEngine, "tesseract": TesseractEngine}


def make_engine(name: str, **options) -> Engine:
    """The engine called `name` ("rapidocr" or "tesseract"), or a clear error."""
    try:
        cls = ENGINES[name]
    except KeyError:
        raise FingerprintError(f"unknown OCR engine {name!r}; choose one of: {', '.join(ENGINES)}") from None
    return cls(**options)
