"""Tenancy: organisations and their API tokens, and `fptrack org` / `fptrack token`.

May import: fingerprint and tracker (never crawler or web).
"""
