"""Spiders of the crawler (the spider file name is the spider name).

May import: fingerprint, tracker and crawler (never web).
"""
