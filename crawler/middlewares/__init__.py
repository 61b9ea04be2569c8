"""Downloader middlewares of the crawler."""
