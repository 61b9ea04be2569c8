"""Follow-up: re-checks of copies whose takedown was sent, the events they and matching record, who
is told (e-mail digests, webhooks), `fptrack recheck` and `fptrack notify`.

May import: fingerprint, pagetext, ocr, clikit and tracker.
"""
