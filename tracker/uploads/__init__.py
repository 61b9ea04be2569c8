"""Novels uploaded through the admin or the API: read whole (text, HTML, EPUB), split into chapters,
registered. May import fingerprint and the rest of tracker; never crawler or web."""
