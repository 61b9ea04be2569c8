"""Moved to web.demo_site; this alias stays only until bench/extraction.py imports it from there."""
import sys

from web import demo_site

sys.modules[__name__] = demo_site
