"""Read the text in pictures (chapters posted as screenshots) so it can be matched.

The pieces, each in a module named after it:

- `engines`: the `Engine` interface (`read(image) -> list[Line]`) and its two backends,
  RapidOCR (PP-OCR models shipped inside the wheel, run by onnxruntime) and Tesseract.
- `textness`: a cheap test of whether a picture holds lines of text at all, so photos
  and covers are never read in full.
- `bounds`: the limits a reading keeps to (pixels, tile size, deadline).
- `read`: a picture read within those limits, long pictures in overlapping tiles,
  lines de-duplicated and put in reading order.
- `lookalike`: characters OCR confuses by shape, folded to one representative.
- `score`: character error rate and the substitutions behind it (for measurement).

Pure: no database, network or framework imports; the engines are imported lazily.

May import: fingerprint, pagetext and ocr.
"""
