"""Signing in and who may do what: accounts, sessions, sign-in limits, the cookie key, the access
check before every request. May import fingerprint, tracker, crawler and web's own modules."""
