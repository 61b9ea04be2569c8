"""Evidence of copies: the HTTP exchange of a page as served, kept as a WARC file (warc.py),
removed some days after the page is (retention.py), and packed with the report and the
takedown notice into a zip anyone can check (package.py)."""
