"""Evidence of copies: the HTTP exchange of a page as served, kept as a WARC file (warc.py),
removed some days after the page is (retention.py), and packed with the report and the
takedown notice into a zip anyone can check (package.py); the report's PDF is printed by
headless chromium (pdf.py). The crawler captures (crawler.capture); the admin and
`fptrack evidence` make the packages (web.evidence.package).

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
