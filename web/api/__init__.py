"""The JSON API: reads that mirror the pages, writes for works and sites, discovery, and the OpenAPI
description (blueprints api, manage_api, discovery_api, openapi). May import fingerprint, tracker,
crawler and web's own modules."""
