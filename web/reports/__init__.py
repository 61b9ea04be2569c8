"""What the admin reports: the dashboard, works, sites, images, follow-up, their charts, shared
summaries and CSV/JSON exports (blueprints dashboard, works, sites, images, followup, export). May
import fingerprint, tracker, crawler and web's own modules."""
