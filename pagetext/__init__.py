"""Page reading: bytes to text (encodings and their labels, lone surrogates), HTML to the text a
reader sees (the page's own CSS applied), files and records to documents (`sources`), and the
crawler's extractor of a page's main text, title, kind and links (`extraction/`).

Pure: no database, network or framework; lxml, trafilatura, tinycss2 and charset-normalizer
do the parsing.

May import: fingerprint and pagetext.
"""
