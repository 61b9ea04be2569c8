"""Reviewing matches: the list, one match's evidence with its passages and pictures, the status
workflow, and takedown notices (blueprints matches, notices). May import fingerprint, tracker,
crawler and web's own modules."""
