"""The Flask admin: piracy reports with evidence."""
