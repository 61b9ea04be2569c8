"""The tracking system: stores, Redis indexes, matching and workers (built on `fingerprint`).

May import: fingerprint and tracker (never crawler or web).
"""

from fingerprint.moved import keep_old_names

#: Modules that moved when tracker/ was laid out by concern: the old names still import, with a
#: DeprecationWarning, until the next release (docs/architecture.md).
MOVED = {
    "tracker.backlog": "tracker.workers.backlog",
    "tracker.celery_app": "tracker.workers.app",
    "tracker.digest": "tracker.followup.digest",
    "tracker.discovery_cli": "tracker.discovery.cli",
    "tracker.discovery_runs": "tracker.discovery.child_runs",
    "tracker.followup_cli": "tracker.followup.cli",
    "tracker.images": "tracker.media.images",
    "tracker.notify": "tracker.followup.notify",
    "tracker.pictures": "tracker.media.pictures",
    "tracker.queue": "tracker.workers.queue",
    "tracker.redis_index": "tracker.redisindex",
    "tracker.schedule": "tracker.sites.schedule",
    "tracker.search_providers": "tracker.discovery.providers",
    "tracker.search_queries": "tracker.discovery.queries",
    "tracker.site_scope": "tracker.sites.scope",
    "tracker.tally": "tracker.workers.tally",
    "tracker.task_names": "tracker.workers.names",
    "tracker.tasks": "tracker.workers.tasks",
    "tracker.tenancy_cli": "tracker.tenancy.cli",
    "tracker.tokens": "tracker.tenancy.tokens",
    "tracker.webhooks": "tracker.followup.webhooks",
}
keep_old_names(MOVED)
