"""The crawler's extractor in modules: general rules it applies to real pages (furniture in the
tree, site lines, chapters, a site's lines repeated across its pages) and its own steps
(density, titles, parts, links, sitelines, selection, letters, sitememory), which
fingerprint.extraction.page puts together.

May import: fingerprint only (never tracker, crawler or web).
"""
