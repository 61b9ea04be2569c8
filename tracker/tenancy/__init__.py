"""Tenancy: organisations and their API tokens, and `fptrack org` / `fptrack token`. May import
fingerprint and the rest of tracker; never crawler or web."""
