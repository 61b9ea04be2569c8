"""Egress: which addresses the system may reach when it fetches for someone, and one small
HTTP client that keeps to that policy with a total deadline per request.

    addresses.py  parse every spelling of an IP address; say what kind of address it is
    policy.py     EgressPolicy: the refusals, and what an operator allows anyway (FPT_FETCH_ALLOW)
    fetch.py      resolve once, check, connect to the checked address; deadline; redirects checked

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
from .addresses import classify, parse_ip
from .fetch import FetchError, Response, fetch
from .policy import EgressPolicy, Refused

__all__ = ["EgressPolicy", "FetchError", "Refused", "Response", "classify", "fetch", "parse_ip"]
