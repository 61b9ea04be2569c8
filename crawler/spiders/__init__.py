"""Spiders of the crawler (the spider file name is the spider name)."""
