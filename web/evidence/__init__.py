"""Evidence packages: made for a page or a work on a site, downloaded, sealed with the
organisation's key, `fptrack evidence` (blueprints packages, evidence_keys). May import fingerprint,
tracker, crawler and web's own modules."""
