"""Watched sites: which site a URL belongs to, and when each is crawled. May import fingerprint and
the rest of tracker; never crawler or web."""
