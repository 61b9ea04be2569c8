"""The crawler's extractor in modules: general rules it applies to real pages (furniture in the
tree, site lines, chapters, a site's lines repeated across its pages) and its own steps
(density, titles, parts, links, sitelines, selection, letters, sitememory), which
pagetext.extraction.page puts together.

May import: fingerprint and pagetext.
"""
