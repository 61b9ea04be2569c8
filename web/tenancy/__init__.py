"""Organisations, their users and their API tokens, managed in the admin and the API (blueprints
orgs, users, users_api, tokens). May import fingerprint, tracker, crawler and web's own modules."""
